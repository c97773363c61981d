"""Sweeps: the table, determinism across backends, resume after a kill, refusals, Dask."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import joblib
import polars as pl
import pytest

from reconsim import simulate
from reconsim.cli import main
from reconsim.io import write_atomic
from reconsim.model.laws import law_overshoot
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.model.version import MODEL_VERSION
from reconsim.sweep import runner, store
from reconsim.sweep.grid import PARAM_COLUMNS, expand
from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import load_spec, parse_spec
from tests.helpers.child import child_env

ROOT = Path(__file__).resolve().parent.parent

SMALL = """
name = "small"
chunk_size = 500
[grid]
controller = ["ledger", "intent"]
G = [0, 10, 30, 60]
U = { from = 1, to = 40, step = 3 }
B = [0, 5, 20]
desired = [0, 6]
duration = [300, 900]
schedule = ["seed", "every"]
[schedule.seed]
events = [[300, 2]]
[schedule.every]
every = 100
count = 1
"""

# The sweep the tests interrupt: twelve chunks of 1,000 cells, U = 1 or 2 over 3,000 s. It
# need not be slow: its chunks from the third on wait for the signal (tests/helpers/gate.py).
SLOW = """
name = "slow"
chunk_size = 1000
[grid]
controller = ["ledger", "intent"]
G = { from = 0, to = 95, step = 5 }
U = [1, 2]
B = [0, 5, 10]
desired = { from = 1, to = 50 }
duration = 3000
"""


def write_spec(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cli(*args: str | Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reconsim", *map(str, args)],
                          capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]


def table(out: Path) -> pl.DataFrame:
    return store.scan(out).collect()


def parts(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "data").iterdir())}


def test_table_layout_and_law_columns(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    result = run_sweep(spec, tmp_path / "out", backend="sequential", progress=False)
    assert result.computed == result.cells == spec.n_cells == 2 * 4 * 14 * 3 * 2 * 2 * 2
    got = table(tmp_path / "out")
    assert got.columns == [*PARAM_COLUMNS, *OUTPUT_NAMES, "law_overshoot", "law_holds",
                           "above_boundary", "law_overshoot_worst", "above_boundary_worst"]
    assert got.height == spec.n_cells
    assert got.select(PARAM_COLUMNS).equals(expand(spec))  # chunk files come back in order
    assert got.select(OUTPUT_NAMES).equals(simulate(expand(spec)).select(OUTPUT_NAMES))
    for r in got.sample(200, seed=1).iter_rows(named=True):
        assert r["above_boundary"] == (r["U"] >= r["G"] + r["B"])
        if r["controller"] == "ledger":
            law = law_overshoot(r["desired"], r["G"], r["U"], r["B"])
            assert (r["law_overshoot"], r["law_holds"]) == (law, r["overshoot"] == law)
        else:
            assert (r["law_overshoot"], r["law_holds"]) == (None, None)
    manifest = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert manifest["spec_hash"] == spec.hash
    assert manifest["cells"] == spec.n_cells
    assert manifest["status"] == "complete"
    assert manifest["spec"]["grid"]["G"] == [0, 10, 30, 60]
    assert {"version", "started", "finished", "cells_per_second"} <= set(manifest)


def test_same_bytes_whatever_the_backend_jobs_and_writer(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    run_sweep(spec, tmp_path / "seq", backend="sequential", progress=False)
    want = parts(tmp_path / "seq")
    assert len(want) == spec.n_chunks
    for backend, jobs, write_from in [("sequential", 1, "parent"), ("loky", 2, None),
                                      ("loky", 2, "parent"), ("loky", 1, "workers")]:
        out = tmp_path / f"{backend}-{jobs}-{write_from}"
        run_sweep(spec, out, backend=backend, jobs=jobs, write_from=write_from, progress=False)
        assert parts(out) == want, out.name
        manifest = json.loads((out / "sweep.json").read_text())
        assert manifest["write_from"] == (write_from or "workers")


def test_failed_chunk_is_recorded_and_named_on_rerun(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = parse_spec(SMALL)
    out = tmp_path / "out"
    calls = []

    def simulate_then_fail(cells: pl.DataFrame, **options: bool) -> pl.DataFrame:
        calls.append(cells.height)
        if len(calls) == 3:
            raise RuntimeError("the kernel fell over")
        return simulate(cells, **options)

    monkeypatch.setattr(runner, "simulate", simulate_then_fail)
    with pytest.raises(RuntimeError, match="the kernel fell over"):
        run_sweep(spec, out, backend="sequential", progress=False)
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["status"] == "failed"
    assert manifest["error"] == "RuntimeError: the kernel fell over"
    assert store.done_chunks(out) == {0, 1}
    capsys.readouterr()

    monkeypatch.undo()
    result = run_sweep(spec, out, backend="sequential", progress=False)
    assert result.previous == "failed (RuntimeError: the kernel fell over)"
    # Logged (the reconsim command prints it), never printed by the library.
    assert capsys.readouterr().err == ""
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [(
        "reconsim.sweep.runner", "WARNING",
        f"{out}: the last run failed (RuntimeError: the kernel fell over); resuming")]
    assert result.computed == spec.n_cells - 2 * spec.chunk_size
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["status"] == "complete"
    assert "error" not in manifest
    assert table(out).select(PARAM_COLUMNS).equals(expand(spec))
    again = run_sweep(spec, out, backend="sequential", progress=False)
    assert (again.previous, again.computed) == (None, 0)


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "sweep.json: not valid JSON (Expecting property name enclosed in double "
                  "quotes at line 1, column 2); use --force to start over"),
    ("[1, 2]", "sweep.json: expected a JSON object, got a list; use --force to start over"),
])
def test_corrupt_manifest_is_one_line_then_forced(tmp_path: Path, content: str,
                                                  message: str) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    (out / "data").mkdir(parents=True)
    (out / "sweep.json").write_text(content)
    proc = cli("sweep", spec_path, "--out", out, "--backend", "sequential")
    assert proc.returncode == 2
    assert proc.stderr == f"error: reconsim sweep: {out}/{message}\n"
    assert (out / "sweep.json").read_text() == content
    forced = cli("sweep", spec_path, "--out", out, "--backend", "sequential", "--force")
    assert forced.returncode == 0, forced.stderr
    assert table(out).height == load_spec(spec_path).n_cells


def test_rerun_of_a_complete_sweep_does_nothing(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    first = cli("sweep", spec_path, "--out", tmp_path / "out", "--backend", "sequential")
    assert first.returncode == 0, first.stderr
    before = parts(tmp_path / "out")
    again = cli("sweep", spec_path, "--out", tmp_path / "out")
    assert again.returncode == 0
    assert "already complete" in again.stdout
    assert parts(tmp_path / "out") == before


#: Chunks the interrupted sweep finishes before its next chunk is held (tests/helpers/gate.py).
DONE_BEFORE_SIGNAL = 2


def _wait_until_held(out: Path, held: Path, proc: subprocess.Popen[str]) -> None:
    """Until the sweep has written its first chunks and holds a later one: the state the
    signal is sent in, whatever the machine's load."""
    deadline = time.monotonic() + 120  # a sweep that hangs fails, it does not stall the run
    while not (list(held.glob("held-*")) and len(list(out.glob("data/part-*.parquet")))
               == DONE_BEFORE_SIGNAL):
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        assert time.monotonic() < deadline, "the sweep never reached the held chunk"
        time.sleep(0.02)


@pytest.mark.parametrize(("sig", "backend"), [
    pytest.param(signal.SIGKILL, "sequential", id="SIGKILL-sequential"),
    pytest.param(signal.SIGKILL, "loky", id="SIGKILL-loky"),
    pytest.param(signal.SIGINT, "sequential", id="Ctrl-C-sequential"),
])
def test_interrupted_sweep_resumes_to_the_same_table(tmp_path: Path, sig: int,
                                                     backend: str) -> None:
    spec_path = write_spec(tmp_path, SLOW)
    spec = load_spec(spec_path)
    out, held = tmp_path / "out", tmp_path / "held"
    held.mkdir()
    # The sweep's chunks from DONE_BEFORE_SIGNAL on wait for the signal instead of running.
    env = child_env(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                             os.environ.get("PYTHONPATH")])),
                    RECONSIM_TEST_HOLD_FROM=str(DONE_BEFORE_SIGNAL),
                    RECONSIM_TEST_HOLD_DIR=str(held))
    proc = subprocess.Popen([sys.executable, "-c", "import tests.helpers.gate as g; g.main()",
                             "sweep", str(spec_path), "--out", str(out), "--backend", backend,
                             "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path, env=env)
    _wait_until_held(out, held, proc)
    if sig == signal.SIGKILL:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, all at once
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    done_at_kill = len(list((out / "data").glob("part-*.parquet")))
    assert done_at_kill < spec.n_chunks, "the sweep finished before the signal"
    assert done_at_kill == DONE_BEFORE_SIGNAL
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err  # once, in CI: 1 (its stderr was not shown)
        assert "run the same command again to resume" in err
        assert "Traceback" not in err
    status = json.loads((out / "sweep.json").read_text())["status"]
    assert status == ("interrupted" if sig == signal.SIGINT else "running")

    resumed = cli("sweep", spec_path, "--out", out, "--backend", "sequential")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr == f"{out}: the last run " + (
        "was interrupted" if sig == signal.SIGINT else "stopped before it finished (killed?)"
    ) + "; resuming\n"
    plan, done = resumed.stdout.splitlines()  # the grid's size, then what this run did
    assert plan == f"{spec.name}: {spec.n_cells:,} cells in {spec.n_chunks} chunks of up to " \
        f"{spec.chunk_size:,}"
    computed = int(done.split(": ")[1].split(" cells")[0].replace(",", ""))
    assert computed < spec.n_cells  # only the missing chunks were simulated
    got = table(out)
    reference = simulate(expand(spec))
    assert got.height == spec.n_cells
    assert got.select(reference.columns).equals(reference)
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        f"part-{i:05d}.parquet" for i in range(spec.n_chunks)]  # no strays, no duplicates
    assert not list(out.rglob(".tmp-*"))


def test_another_spec_is_refused_then_forced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    a = write_spec(tmp_path, SMALL, "a.toml")
    b = write_spec(tmp_path, SMALL.replace("G = [0, 10, 30, 60]", "G = [0, 10]"), "b.toml")
    assert cli("sweep", a, "--out", out, "--backend", "sequential").returncode == 0
    before = parts(out)
    refused = cli("sweep", b, "--out", out, "--backend", "sequential")
    assert refused.returncode == 2
    assert "holds results of another spec" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert parts(out) == before
    forced = cli("sweep", b, "--out", out, "--backend", "sequential", "--force")
    assert forced.returncode == 0, forced.stderr
    assert table(out).height == load_spec(b).n_cells


@pytest.fixture(scope="module")
def small_done(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SMALL swept to the end by the command line, once a module: the DIR that each
    :func:`_half_done` copies (no test writes into this one)."""
    tmp = tmp_path_factory.mktemp("small")
    spec_path = write_spec(tmp, SMALL)
    out = tmp / "out"
    assert cli("sweep", spec_path, "--out", out, "--backend", "sequential").returncode == 0
    return out


def _half_done(tmp_path: Path, small_done: Path) -> tuple[Path, Path]:
    """A sweep of SMALL into tmp_path/out stopped after two chunks: (spec file, DIR)."""
    spec_path = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    shutil.copytree(small_done, out)
    for p in sorted((out / "data").iterdir())[2:]:
        p.unlink()
    return spec_path, out


def _refused_then_forced(spec_path: Path, out: Path, message: str) -> None:
    """Resuming into ``out`` is refused with ``message`` (exit 2, nothing written); with
    --force the sweep starts over and its table is this model's."""
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    refused = cli("sweep", spec_path, "--out", out, "--backend", "sequential")
    assert refused.returncode == 2
    assert refused.stderr == f"error: reconsim sweep: {message}\n"
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    forced = cli("sweep", spec_path, "--out", out, "--backend", "sequential", "--force")
    assert forced.returncode == 0, forced.stderr
    spec = load_spec(spec_path)
    assert table(out).equals(pl.concat(runner.run_chunk(spec, i)[1]
                                       for i in range(spec.n_chunks)))
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["model"] == runner.model().to_manifest()


def test_table_schema_is_the_chunks_and_recorded(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    _, frame = runner.run_chunk(spec, 0)
    assert frame.schema == runner.table_schema()
    run_sweep(spec, tmp_path / "out", backend="sequential", progress=False)
    ours = runner.model()
    assert ours.version == MODEL_VERSION
    assert ours.columns == tuple((n, str(t)) for n, t in frame.schema.items())
    manifest = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert manifest["model"] == {"version": MODEL_VERSION, "schema": ours.fingerprint,
                                 "columns": {n: str(t) for n, t in frame.schema.items()}}
    for p in (tmp_path / "out" / "data").iterdir():
        assert pl.read_parquet_metadata(p)[store.MODEL_KEY] == str(MODEL_VERSION)
        assert store.chunk_model(p) == ours


def _ours() -> str:
    return f"model {MODEL_VERSION}, schema {runner.model().fingerprint}"


def _without(column: str) -> store.Model:
    columns = runner.model().columns
    assert columns is not None
    return store.Model(MODEL_VERSION, tuple(c for c in columns if c[0] != column))


@pytest.mark.parametrize("edit", ["version", "columns", "dtype", "missing"])
def test_a_manifest_of_another_model_is_refused_then_forced(tmp_path: Path, edit: str,
                                                            small_done: Path) -> None:
    spec_path, out = _half_done(tmp_path, small_done)
    manifest = json.loads((out / "sweep.json").read_text())
    model = manifest["model"]
    if edit == "version":
        model["version"] = MODEL_VERSION + 1
        theirs = store.Model(MODEL_VERSION + 1, runner.model().columns)
        what = f"another model ({theirs}; "
    elif edit == "columns":  # another set of columns: one gone, one new
        del model["columns"]["failed_creates"]
        model["columns"]["retries"] = "Int64"
        columns = (*_without("failed_creates").columns, ("retries", "Int64"))  # type: ignore[misc]
        theirs = store.Model(MODEL_VERSION, columns)
        what = (f"another model ({theirs}; columns only there: retries; only here: "
                "failed_creates; ")
    elif edit == "dtype":
        model["columns"]["overshoot"] = "Float64"
        what = (f"another model (model {MODEL_VERSION}, schema "
                f"{store.Model.from_manifest(manifest).fingerprint}; other dtypes: overshoot "
                "(Float64 there, Int64 here); ")
    else:  # written before sweeps recorded their model
        del manifest["model"]
        what = "an unrecorded model (its sweep.json predates model identities; "
    (out / "sweep.json").write_text(json.dumps(manifest))
    verb = "holds results of"
    _refused_then_forced(spec_path, out, f"{out}: {verb} {what}this reconsim's is {_ours()}); "
                         "use --force to start over or --out for another directory")


@pytest.mark.parametrize("chunk", ["columns", "version", "unstamped"])
def test_a_chunk_of_another_model_is_refused_then_forced(tmp_path: Path, chunk: str,
                                                         small_done: Path) -> None:
    spec_path, out = _half_done(tmp_path, small_done)
    path = out / "data" / "part-00001.parquet"
    frame = pl.read_parquet(path)
    if chunk == "columns":  # this model's version, another set of columns
        frame.drop("failed_creates").write_parquet(
            path, metadata={store.MODEL_KEY: str(MODEL_VERSION)})
        what = (f"written by another model ({_without('failed_creates')}; columns only here: "
                "failed_creates; ")
    elif chunk == "version":
        frame.write_parquet(path, metadata={store.MODEL_KEY: str(MODEL_VERSION + 1)})
        what = f"written by another model (model {MODEL_VERSION + 1}, schema " \
            f"{runner.model().fingerprint}; "
    else:  # same columns, no version: written by a reconsim that did not stamp its chunks
        frame.write_parquet(path)
        what = (f"written by an unrecorded model (no {store.MODEL_KEY} in its metadata; "
                f"schema {runner.model().fingerprint}; ")
    _refused_then_forced(spec_path, out, f"{path}: {what}this reconsim's is {_ours()}); use "
                         "--force to start over or --out for another directory")


def test_chunks_of_another_size_are_refused_then_forced(tmp_path: Path,
                                                        small_done: Path) -> None:
    # as another reconsim's default chunk size made
    spec_path, out = _half_done(tmp_path, small_done)
    manifest = json.loads((out / "sweep.json").read_text())
    manifest["chunk_size"] = 400
    (out / "sweep.json").write_text(json.dumps(manifest))
    _refused_then_forced(spec_path, out, f"{out}: holds chunks of 400 cells; this reconsim "
                         "makes chunks of 500; use --force to start over or --out for "
                         "another directory")


def test_a_worker_of_another_model_refuses_its_chunk(tmp_path: Path) -> None:
    spec = parse_spec(SMALL)
    other = store.Model(MODEL_VERSION + 1, runner.model().columns)
    with pytest.raises(store.StoreError, match=(
            rf"a worker runs another model \({_ours()}; the sweep's is {other}\): every "
            "worker needs the same reconsim")):
        runner.run_and_write_chunk(spec, tmp_path, 0, None, other)
    assert not list(tmp_path.rglob("*.parquet"))


def test_second_sweep_into_a_running_directory_is_refused(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    out.mkdir()
    with store.locked(out):  # as a running sweep holds it
        refused = cli("sweep", spec_path, "--out", out)
    assert refused.returncode == 2
    assert "another sweep is running into this directory" in refused.stderr
    assert not (out / "data").exists()


def test_foreign_directory_is_refused_even_with_force(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for extra in ([], ["--force"]):
        refused = cli("sweep", spec_path, "--out", out, *extra)
        assert refused.returncode == 2
        assert "not a reconsim sweep directory" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(("text", "message"), [
    (None, "no such spec file"),
    ('name = "t"\n[grid\n', "TOML syntax error"),
    ('name = "t"\n[grid]\nGg = [1]\n', "grid.Gg: unknown key"),
    ('name = "t"\n[grid]\nG = []\n', "grid.G: empty axis"),
    ('name = "t"\n[grid]\nU = [0]\n', "grid.U: U must be an integer in [1, 1000000], got 0"),
    ('name = "t"\n[grid]\nG = ["x"]\n', "grid.G: G must be an integer in [0, 1000000], got 'x'"),
    ('name = "t"\n[grid]\nU = { from = 1, to = 5, step = -1 }\n', "step must be a positive"),
    ('name = "t"\n[grid]\ncontroller = ["pid"]\n', "controller 'pid': not a built-in"),
    ('name = "t"\n[grid]\nschedule = ["x"]\n', "unknown schedule 'x'"),
    ('name = "t/../x"\n', "name must be a plain slug"),
])
def test_bad_spec_exits_2_and_writes_nothing(tmp_path: Path, text: str | None,
                                             message: str) -> None:
    spec_path = tmp_path / "spec.toml"
    if text is not None:
        spec_path.write_text(text)
    proc = cli("sweep", spec_path, cwd=tmp_path)  # default --out results/<name>
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == (["spec.toml"] if text else [])


@pytest.mark.parametrize(("flags", "message"), [
    (["--jobs", "0"], "--jobs must be a positive integer or -1"),
    (["--jobs", "two"], "argument --jobs: invalid int value: 'two'"),
    (["--backend", "ray"], "argument --backend: invalid choice: 'ray'"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --backend dask"),
    (["--write-from", "disk"], "argument --write-from: invalid choice: 'disk'"),
])
def test_bad_flags_exit_2_and_write_nothing(tmp_path: Path, flags: list[str],
                                            message: str) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    proc = cli("sweep", spec_path, "--out", tmp_path / "out", *flags)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "out").exists()


# --- Dask: a real scheduler and workers on loopback ------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[str]:
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.fail("the 'dask' command is missing: install reconsim[dask]")
    address = f"tcp://127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads",
                                   "1", "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_dask_cluster_gives_the_identical_table(tmp_path: Path, dask_cluster: str) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    local = cli("sweep", spec_path, "--out", tmp_path / "seq", "--backend", "sequential")
    assert local.returncode == 0, local.stderr
    remote = cli("sweep", spec_path, "--out", tmp_path / "dask", "--backend", "dask",
                 "--scheduler", dask_cluster)
    assert remote.returncode == 0, remote.stderr
    assert parts(tmp_path / "dask") == parts(tmp_path / "seq")
    assert json.loads((tmp_path / "dask" / "sweep.json").read_text())["write_from"] == "parent"
    # These workers share the disk: they may write their own chunks.
    shared = cli("sweep", spec_path, "--out", tmp_path / "shared", "--backend", "dask",
                 "--scheduler", dask_cluster, "--write-from", "workers")
    assert shared.returncode == 0, shared.stderr
    assert parts(tmp_path / "shared") == parts(tmp_path / "seq")


def test_unreachable_scheduler_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT", "1s")  # 10 s of retries, shortened
    spec_path = write_spec(tmp_path, SMALL)
    port = _free_port()
    assert main(["sweep", str(spec_path), "--out", str(tmp_path / "out"), "--backend", "dask",
                 "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: reconsim sweep: --scheduler tcp://127.0.0.1:{port}: "
                          "cannot connect (")
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_sweep_then_report_then_publish(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path, SMALL)
    out = tmp_path / "results" / "small"
    proc = cli("sweep", spec_path, "--out", out, "--backend", "sequential", "--report")
    assert proc.returncode == 0, proc.stderr
    assert (out / "report.html").stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["law"]["cells"] == table(out).filter(pl.col("law_holds").is_not_null()).height
    published = cli("publish", tmp_path / "results")
    assert published.returncode == 0, published.stderr
    assert 'href="small/report.html"' in (tmp_path / "results" / "index.html").read_text()


@pytest.mark.parametrize("argv", [["report", "nowhere"], ["publish", "nowhere"]])
def test_report_commands_on_a_missing_directory_exit_2(tmp_path: Path, argv: list[str]) -> None:
    proc = cli(*argv, cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "nowhere" in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_atomic_writes_get_the_mode_a_new_file_would(tmp_path: Path, umask: int) -> None:
    """A report or chunk written atomically is readable as any file the user makes (the
    temporary file's private 0600 must not leak into results/ served by a web server)."""
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "report.html", b"<p>ok</p>")
    finally:
        os.umask(old)
    assert (tmp_path / "report.html").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "report.html").read_bytes() == b"<p>ok</p>"


def worker_settings() -> tuple[str | None, str | None, int]:
    """In a worker: its allocator setting, POLARS_MAX_THREADS and polars' pool size."""
    return (os.environ.get("_RJEM_MALLOC_CONF"), os.environ.get("POLARS_MAX_THREADS"),
            pl.thread_pool_size())


def test_loky_workers_set_their_polars_pool_and_this_process_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker sizes its polars pool as it starts (cores // jobs); the calling process's
    environment is never written, during the sweep or after."""
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    before = dict(os.environ)
    with runner._backend("loky", 2, None) as (n_jobs, _):
        assert dict(os.environ) == before
        got = set(joblib.Parallel(n_jobs=n_jobs)(
            joblib.delayed(worker_settings)() for _ in range(4)))
    assert dict(os.environ) == before
    threads = max(1, joblib.cpu_count() // 2)
    assert {(g[1], g[2]) for g in got} == {(str(threads), threads)}
    # A worker inherits this process's allocator setting (polars' own here, once polars is
    # imported) and adds none over it.
    assert all(g[0] and g[0].startswith(os.environ["_RJEM_MALLOC_CONF"])
               and "muzzy_decay_ms:0" not in g[0] for g in got)


def test_loky_workers_keep_the_users_polars_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARS_MAX_THREADS", "1")
    assert runner.worker_polars_threads(1) is None  # the workers inherit the user's


def test_a_worker_started_afresh_takes_the_settings_before_polars() -> None:
    code = ("from reconsim.process import start_worker; start_worker(3); "
            "import os, polars as pl; "
            "print(pl.thread_pool_size(), os.environ['_RJEM_MALLOC_CONF'].split(',')[-1])")
    env = {k: v for k, v in os.environ.items()
           if k not in ("_RJEM_MALLOC_CONF", "POLARS_MAX_THREADS")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    assert proc.stdout.split() == ["3", "muzzy_decay_ms:0"]
