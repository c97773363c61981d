"""Where the report reads a sweep from: a local path, a ``file://`` URL, object storage;
anything else refused in one line (exit 2 from ``reconsim report``), nothing written."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from reconsim.cli import main
from reconsim.report import ReportError, build_report
from reconsim.report.source import SweepSource
from tests.helpers.tables import HAND_ROWS, hand_table, write_table


def test_a_file_url_reads_and_writes_the_local_folder(tmp_path: Path) -> None:
    folder = write_table(tmp_path / "by path", hand_table(HAND_ROWS))
    by_path = build_report(folder).data
    (folder / "summary.json").unlink()
    # A space in the folder's name arrives percent-encoded, as in any file URL.
    report = build_report(folder.resolve().as_uri())
    assert report.summary == folder.resolve() / "summary.json"
    assert json.loads(report.summary.read_text(encoding="utf-8"))["law"] == by_path["law"]
    assert report.data["sweep"]["cells"] == len(HAND_ROWS)


def test_the_cli_reports_a_file_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_table(tmp_path / "s", hand_table(HAND_ROWS))
    out = tmp_path / "elsewhere"
    assert main(["report", folder.as_uri(), "--out", str(out)]) == 0
    assert (out / "report.html").is_file()
    assert (out / "summary.json").is_file()
    assert not (folder / "report.html").exists()


@pytest.mark.parametrize(("url", "words"), [
    ("ftp://example.org/sweep", "unsupported URL scheme 'ftp'"),
    ("http://example.org/sweep", "unsupported URL scheme 'http'"),
    ("file://otherhost/sweep", "must name a local path"),
    ("s3://bucket/sweep", "name a local folder for the report's files"),
])
def test_unsupported_urls_are_one_line_and_exit_2(tmp_path: Path, url: str, words: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert words in err
    assert url in err
    assert list(tmp_path.iterdir()) == []


def test_object_storage_without_its_package_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed: the missing-package message cannot occur")
    out = tmp_path / "out"
    assert main(["report", "s3://bucket/sweep", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install fsspec s3fs" in err
    assert not out.exists()


def test_parse_keeps_local_paths_and_object_store_urls() -> None:
    assert SweepSource.parse("results/x").path == Path("results/x")
    assert SweepSource.parse("file:///tmp/a%20b").path == Path("/tmp/a b")
    remote = SweepSource.parse("gs://bucket/sweep/")
    assert remote.remote
    assert remote.name("data") == "gs://bucket/sweep/data"
    with pytest.raises(ReportError, match="unsupported URL scheme 'ftp'"):
        SweepSource.parse("ftp://x")


def test_a_missing_directory_is_named_whole(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nonexistent"
    assert main(["report", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"(is {missing} a sweep's output?)" in err
