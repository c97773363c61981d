"""The world of a controller that syncs on events, instant by instant: the executable spec.

A controller that defines ``settle`` (:mod:`reconsim.model.controllers.definition`) does
not decide once a round: its key is queued by events, and each sync it runs happens at a
millisecond instant. :func:`run_events` runs such a cell; :func:`reconsim.run_reference`
hands it these cells. The rules, numbered as docs/model.md states them:

E1. Time is a whole number of milliseconds; second t holds 1000 t … 1000 t + 999. A
    command and a sync take no time.
E2. At each instant, in this order: (a) copies due to become ready do, and copies whose
    grace period ends leave; (b) at the first instant of a second, its scripted deaths
    (the oldest ready copies, terminating ones too, leave at once), its change of desired
    (``scale``: one that changes the count queues the key, as a spec update's event reaches
    a controller at once), its restarts and, at
    the periodic round times (``U``, ``U_jitter``, as in rounds), a resync queues the key;
    (c) the events due now reach the cache; (d) the retries due now queue the key; (e)
    if the key is queued, one sync runs. (a) to (e) repeat at the same instant until
    nothing is due and the key is not queued: what a sync causes at its own instant
    reaches the cache before the next sync. An instant runs at most ``SYNCS_AT_ONCE`` +
    2 x (``desired`` + the copies created before it, initial ones included) syncs: a cell
    whose key is queued once more is refused (a ``RunawayError``), as one whose syncs
    never let time pass; so is a cell that would create a copy beyond ``MAX_COPIES``.
E3. Every change of a copy (created, ready, terminating, gone) is an event that reaches
    the cache ``g`` ms later, ``g`` the copy's ledger delay (``G`` + its spread) in ms, in
    order; each calls ``observe`` and, with ``trigger = "watch"``, queues the key
    (``periodic``: only resyncs, status writes and retries queue it). An event of a copy
    the last acting sync deleted is ``marked`` the first time its deletion is seen (a
    terminating update, its removal, or a delete command that found it gone).
E4. The queue: adding the queued key does nothing; adding it while its sync runs marks it
    dirty, and it is queued again when that sync ends. One sync at a time.
E5. A sync at instant x: the cache's active entries (not terminating; Pending ones too:
    ``observe`` does not apply) in creation order are ``seen`` (inside a ``lag`` window, the
    cache as it stood at the end of second t - extra); ``decide`` gives the correction,
    damped by ``gain`` and capped by ``max_per_round``. Creates go in slow-start batches
    (or all at once), each command's outcome the first scripted fault event of its second
    with count left, else the ``fail_rate`` and ``lost_rate`` draws of command j; a created
    copy is ready ``B`` (+ its spread) s later. Deletes go to the entries ``less`` puts
    first under Go's ``sort.Sort`` when it deletes fewer than all active entries (else,
    and without ``less``, in ``delete_order``); a command to a copy not terminating makes
    it terminate (it leaves ``grace`` s later, at once with 0); to a terminating one, it
    changes nothing; to a gone one, it is ``not_found``. The deletes' targets become the
    marked entries (none after creates). ``settle`` gets the :class:`Outcome`.
E6. The status a sync writes is (the active entries it read, those of them ready, whether
    it returned an error, the desired it acted on: a change of desired is observed once,
    as a ReplicaSet's observedGeneration is); when it differs from the last written, the
    write queues the key. A sync with an error is retried ``settle``'s delay later; each
    retry fires on its own.
E7. A restart (``restart_at``) resets the memory, the marks and the pending retries, and
    queues the key; the cache stays. A controller that remembers nothing has no restart
    (the parameter does not apply to it).

Metrics as in rounds, where a round is a second in which the controller synced (as the
Kubernetes data set counts them): ``rounds`` counts those seconds, ``reads`` the entries
every sync read plus ``ledger_base`` once a round; ``deleted`` counts the delete commands
that made a copy terminate.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from reconsim.model import rules
from reconsim.model.controllers import ADDED, DELETED, UPDATED, Controller, registry
from reconsim.model.controllers.definition import (
    DecisionError,
    Event,
    Item,
    Outcome,
    Sync,
    call_hook,
    reference_params,
)
from reconsim.model.copies import BEFORE_RUN, Account, Copy, Second, copy_times, shown_time
from reconsim.model.gosort import go_sort
from reconsim.model.kinds import MAX_COPIES
from reconsim.model.params import Cell, damped, permille

#: What may happen at an instant, in the order E2 takes them when due together.
_READY, _LEAVE, _SECOND, _DELIVER, _RETRY = range(5)


@dataclass
class Pod:
    """One copy, in milliseconds: created at ``born``, ready at ``ready_at`` (if still in
    the API then), terminating from ``deleting``, gone at ``gone`` (each
    :data:`~reconsim.model.rules.NEVER` until then); ``g`` its cache delay."""

    uid: int
    born: int
    ready_at: int
    g: int
    ready: bool = False
    deleting: int = rules.NEVER
    gone: int = rules.NEVER
    marked: bool = False


@dataclass(frozen=True)
class Cached:
    """A copy as the cache holds it: as the API showed it when the event left."""

    uid: int
    created: int  # second
    ready: int  # second, -1 when not ready
    deleting: bool


def _snapshot(pod: Pod) -> Cached:
    """The copy as the API shows it now (an initial copy's times before the run as 0)."""
    return Cached(pod.uid, shown_time(pod.born // 1000),
                  shown_time(pod.ready_at // 1000) if pod.ready else -1,
                  pod.deleting != rules.NEVER)


class _Hooks:
    """The controller's hooks as Python calls: an exception, or a value a hook may not
    return, becomes one DecisionError naming the hook and the second."""

    def __init__(self, controller: Controller, p: Any) -> None:
        self.c, self.p = controller, p

    def decide(self, v: Sync, m: np.ndarray) -> int:
        return self.c.check_correction(
            call_hook(self.c, "decide", v.t, self.c.decide, v, self.p, m), v.t)

    def settle(self, o: Outcome, m: np.ndarray) -> int:
        assert self.c.settle is not None
        t = o.now // _MS
        delay = call_hook(self.c, "settle", t, self.c.settle, o, self.p, m)
        if isinstance(delay, bool) or not isinstance(delay, (int, np.integer)) or delay < 0:
            raise DecisionError(f"controller {self.c.name!r}: settle returned {delay!r} "
                                f"at t = {t}, not 0 or a delay in ms")
        return int(delay)

    def observe(self, e: Event, m: np.ndarray) -> None:
        if self.c.observe is not None:
            call_hook(self.c, "observe", e.now // _MS, self.c.observe, e, self.p, m)

    def less(self, a: Item, b: Item) -> bool:
        assert self.c.less is not None
        t = a.now // _MS
        value = call_hook(self.c, "less", t, self.c.less, a, b, self.p)
        if not isinstance(value, (bool, int, np.bool_, np.integer)):
            raise DecisionError(f"controller {self.c.name!r}: less returned {value!r} at "
                                f"t = {t}, not a bool")
        return bool(value)


#: The observer of :func:`run_events`: it gets each second's record.
SecondObserver = Callable[[Second], None]

_MS: Final = 1000


def run_events(  # noqa: PLR0912, PLR0915 — the spec, in order
        cell: Cell, on_second: SecondObserver | None = None) -> dict[str, Any]:
    """Run one cell of an event-driven controller and return its metrics (as
    :func:`reconsim.run_reference` does); ``on_second`` sees each second's
    :class:`~reconsim.model.copies.Second`.

    >>> run_events(Cell(controller="replicaset", G=1, B=1, desired=3, deaths=()))["created"]
    3
    """
    controller = registry.get(cell.controller)
    hooks = _Hooks(controller, reference_params(
        controller, {name: cell.value(name) for name in controller.params}))
    seed = cell.seed
    # The per-second figures, the events' windows and the changes of desired (rules.account).
    account = Account(cell)
    desired = cell.desired
    fail_pm, lost_pm = permille(cell.fail_rate), permille(cell.lost_rate)
    faults, faults_left = rules.fault_table(cell.create_faults)
    lag = rules.lag_table(cell.lag)
    ready_at, ledger_delay = copy_times(cell)  # copy k's ready second and its g

    watch = cell.trigger == "watch"
    # A controller that remembers nothing has no restarts (``restart_at`` does not apply:
    # the kernels are never given it), so none queues its key either.
    restarts = cell.restart_at if controller.remembers else ()
    memory = controller.initial_memory()

    pods: list[Pod] = []
    copies: list[Copy] = []  # the same copies in seconds, for the observer
    cache: dict[int, Cached] = {}
    # Each copy's versions as the cache received them, for stale reads: (instant, version
    # or None once gone).
    history: dict[int, list[tuple[int, Cached | None]]] = {}
    due: list[tuple[int, int, int, int, Any]] = []  # (instant, what, order, epoch, data)
    order = [0]
    epoch = [0]  # a restart drops the retries scheduled before it

    # The initial copies: created, ready and in the cache before the run, their events
    # long delivered (no hook sees them); numbered first on the ledger delay's stream.
    for k in range(cell.initial_copies()):
        g = ledger_delay(k)
        pod = Pod(k, BEFORE_RUN * _MS, BEFORE_RUN * _MS, g * _MS, ready=True)
        pods.append(pod)
        copies.append(Copy.initial(g))
        cache[k] = _snapshot(pod)
        if cell.lag:
            history[k] = [(BEFORE_RUN * _MS, cache[k])]

    def at(instant: int, what: int, data: Any = None) -> None:
        order[0] += 1
        heapq.heappush(due, (instant, what, order[0], epoch[0], data))

    queue = {"queued": True, "dirty": True, "running": False}  # E4; queued at 0 (its add)
    status: tuple[int, int, bool, int] = (0, 0, False, desired)

    def enqueue() -> None:
        if queue["dirty"]:
            return
        queue["dirty"] = True
        if not queue["running"]:
            queue["queued"] = True

    totals = dict.fromkeys(("rounds", "created", "create_commands", "failed_creates",
                            "delete_commands", "deleted", "reads", "killed"), 0)

    def change(pod: Pod, now: int, kind: int = UPDATED) -> None:  # E3: an event leaves
        at(now + pod.g, _DELIVER, (pod.uid, _snapshot(pod), kind))

    def leave(pod: Pod, now: int) -> None:
        pod.gone = now
        copies[pod.uid].death = now // _MS
        change(pod, now, DELETED)

    def create(now: int) -> int:
        """A create command: its outcome (:func:`reconsim.model.rules.create_outcome`)."""
        t = now // _MS
        result = rules.create_outcome(t, totals["create_commands"], seed, fail_pm, lost_pm,
                                      faults, faults_left, 0, len(cell.create_faults))
        totals["create_commands"] += 1
        if result == rules.FAIL:
            totals["failed_creates"] += 1
            return result
        k = len(pods)
        if k >= MAX_COPIES:
            raise controller.too_many_copies(t)
        ready = ready_at(t, k)
        g = ledger_delay(k)
        pod = Pod(k, now, now + (ready - t) * _MS, g * _MS)
        pods.append(pod)
        # (the cache hears of a copy as it is created: listed g after its creation)
        copies.append(Copy(birth=t, ready=ready, g=g, listed=rules.listed_at(t, ready, g, True)))
        totals["created"] += 1
        change(pod, now, ADDED)
        at(pod.ready_at, _READY, k)
        return result

    def delete(uid: int, now: int) -> bool:
        """A delete command; False when its copy was gone (NotFound)."""
        pod = pods[uid]
        totals["delete_commands"] += 1
        if pod.gone != rules.NEVER:
            return False
        pod.marked = True
        if pod.deleting == rules.NEVER:  # terminating from now; a terminating one stays so
            totals["deleted"] += 1
            pod.deleting = now
            death = rules.dies_at(now, cell.grace * _MS)
            copy = copies[uid]
            copy.removed = now // _MS
            copy.death = death // _MS
            if death == now:
                leave(pod, now)
            else:
                change(pod, now)
                at(death, _LEAVE, uid)
        return True

    def targets(active: list[Cached], k: int, now: int) -> list[int]:
        if k < len(active) and controller.less is not None:
            items = [Item(c.uid, c.created, c.ready, now) for c in active]
            go_sort(items, hooks.less)
            return [item.uid for item in items[:k]]
        listed = active if cell.delete_order == "oldest" else active[::-1]
        return [c.uid for c in listed[:k]]

    last_read: list[Cached] | None = None

    def read(now: int) -> list[Cached]:
        """The cache's entries in creation order: now, or inside a lag window as it stood
        at the end of second t - extra."""
        t = now // _MS
        extra = rules.stale_by(t, lag, 0, len(cell.lag))
        if extra == 0:
            return [cache[u] for u in sorted(cache)]
        end = (t - extra) * _MS + _MS - 1
        listed = []
        for uid in sorted(history):
            versions = [v for instant, v in history[uid] if instant <= end]
            if versions and versions[-1] is not None:
                listed.append(versions[-1])
        return listed

    def sync(now: int) -> None:  # E5, E6
        nonlocal status, last_read
        active = [c for c in read(now) if not c.deleting]
        if last_read is None:  # the second's first sync: a round
            totals["rounds"] += 1
            totals["reads"] += cell.ledger_base
            last_read = []
        last_read += active
        totals["reads"] += len(active)
        diff = hooks.decide(Sync(now // _MS, now, desired, len(active)), memory)
        diff = rules.capped(damped(diff, permille(cell.gain)), cell.max_per_round or 0)
        issued = ok = failed = lost = not_found = 0
        if diff != 0:
            for pod in pods:
                pod.marked = False
        if diff > 0:
            remaining, batch = diff, 1 if cell.slow_start else diff
            while remaining > 0:
                batch = min(batch, remaining)
                errors = 0
                for _ in range(batch):
                    result = create(now)
                    issued += 1
                    ok += result == rules.OK
                    failed += result == rules.FAIL
                    lost += result == rules.LOST_REPLY
                    errors += result != rules.OK
                remaining -= batch
                if errors and cell.slow_start:
                    break
                batch *= 2
        elif diff < 0:
            for uid in targets(active, -diff, now):
                issued += 1
                if not delete(uid, now):
                    not_found += 1
        delay = hooks.settle(Outcome(now, diff, issued, ok, failed, lost, not_found), memory)
        ready = sum(1 for c in active if c.ready >= 0)
        written = (len(active), ready, delay > 0, desired)
        if written != status:
            status = written
            enqueue()
        if delay > 0:
            at(now + delay, _RETRY)

    def work(now: int) -> None:
        if not queue["queued"]:
            return
        queue["queued"], queue["running"], queue["dirty"] = False, True, False
        sync(now)
        queue["running"] = False
        if queue["dirty"]:
            queue["queued"] = True

    def deliver(uid: int, seen: Cached, kind: int, now: int) -> None:  # E3
        if kind == DELETED:
            cache.pop(uid, None)
        else:
            cache[uid] = seen
        if cell.lag:
            history.setdefault(uid, []).append((now, None if kind == DELETED else seen))
        pod = pods[uid]
        if kind == DELETED or seen.deleting:  # a terminating copy's event is its deletion
            marked = pod.marked
            pod.marked = False
            hooks.observe(Event(DELETED, now, int(marked)), memory)
        else:
            hooks.observe(Event(kind, now, 0), memory)
        if watch:
            enqueue()

    next_periodic, periodic_i = 0, 0
    for t in range(cell.duration + 1):
        start = t * _MS
        if t == next_periodic:  # a resync: the periodic schedule of rounds
            next_periodic = rules.next_round(t, cell.U, cell.U_jitter, seed, periodic_i)
            periodic_i += 1
            at(start, _SECOND, True)
        else:
            at(start, _SECOND, False)
        while due and due[0][0] < start + _MS:
            now = due[0][0]
            syncs, most = 0, rules.most_syncs(desired, len(pods))  # E2's bound
            while (due and due[0][0] == now) or queue["queued"]:
                while due and due[0][0] == now:
                    _, what, _, when, data = heapq.heappop(due)
                    if what == _READY:
                        pod = pods[data]
                        if pod.gone == rules.NEVER:
                            pod.ready = True
                            change(pod, now)
                    elif what == _LEAVE:
                        pod = pods[data]
                        if pod.gone == rules.NEVER:
                            leave(pod, now)
                    elif what == _SECOND:
                        for moment, count in cell.deaths:
                            if moment != t:
                                continue
                            for pod in [p for p in pods if rules.runs(
                                    p.ready_at, p.gone, now)][:count]:
                                totals["killed"] += 1
                                copy = copies[pod.uid]
                                if copy.removed is None:
                                    copy.removed = t
                                leave(pod, now)
                        if account.begin(t) != desired:  # a change of desired
                            desired = account.desired
                            enqueue()
                        if t in restarts:
                            memory = controller.initial_memory()
                            for pod in pods:
                                pod.marked = False
                            epoch[0] += 1
                            enqueue()
                        if data:
                            enqueue()
                    elif what == _DELIVER:
                        uid, seen, kind = data
                        deliver(uid, seen, kind, now)
                    elif what == _RETRY and when == epoch[0]:
                        enqueue()
                if queue["queued"]:
                    syncs += 1
                    if syncs > most:
                        raise controller.endless_instant(now, most)
                work(now)
        live = sum(1 for p in pods if rules.runs(p.ready_at, p.gone, start + _MS - 1))
        if on_second is not None:
            on_second(Second(t, live, None if last_read is None else [
                copies[c.uid] for c in last_read], copies, dict(totals), desired))
        last_read = None
        account.sample(t, live)
    return account.metrics({name: totals[name] for name in (
        "rounds", "created", "delete_commands", "deleted", "reads", "create_commands",
        "failed_creates")})

