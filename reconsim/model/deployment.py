"""One Kubernetes Deployment rolled out by the real controllers: the executable spec of the
world of the Deployment data set (Kubernetes v1.23.13, docs/deployment.md).

:func:`run` plays one :class:`Scenario`: a Deployment (RollingUpdate) whose template
changes at scripted seconds, maybe scaled, its pods dying on a schedule, driven by the
Deployment controller's ``syncDeployment`` and the ReplicaSet controller's
``syncReplicaSet`` against a fake API server, instant by instant on one simulated clock.
It returns the per-second trace (:data:`TRACE_COLUMNS`, the data set's columns) and
:func:`metrics` turns a trace into the data set's ``metrics.csv`` row. The queues are
client-go's (:mod:`reconsim.model.workqueue`); the rules on numbers (the fenceposts,
``NewRSNewReplicas``, ``maxScaledDown``, ``GetProportion``, the deletion ranking, the
metrics) are :mod:`reconsim.model.deployment_rules`' functions, which the kernel compiles;
the ranking runs under Go's ``sort.Sort`` (:mod:`reconsim.model.gosort`). The rules,
numbered as docs/deployment.md states them with their Go sources:

The world

D1. Time is an integer number of nanoseconds; second t holds ``t x 10^9 ... (t+1) x 10^9
    - 1``. API calls and syncs take no time. Stored times (creation, deletion, condition
    times, a pod's ready time) are whole seconds: the instant's second.
D2. At one instant, in this order: (1) pods turning Ready and pods leaving after their
    grace period, in the order scheduled; (2) deaths; (3) the user's Deployment writes
    (create, template v2, template v3, scale); (4) cache deliveries and their handlers;
    (5) delayed queue adds now due. Then the controllers sync one item at a time, the
    Deployment controller first at each instant, the turn passing to the other after
    each sync (an empty queue is skipped); after each sync the events it caused at that
    instant run, in the same order, before the next sync.
D3. The caches: pod events reach the pod cache exactly G s after the API event, in
    order; ReplicaSet and Deployment events at once (right after the writing sync).
    Handlers: the ReplicaSet controller's ``addPod``, ``updatePod``, ``deletePod``,
    ``addRS``, ``updateRS``; the Deployment controller's ``addDeployment``,
    ``updateDeployment``, ``addReplicaSet``, ``updateReplicaSet`` (its ``deletePod``
    acts for Recreate only).
D4. The fake API: each write that changes something bumps the resourceVersion and sends
    an event; one that changes nothing is a no-op. ``Update`` keeps the stored status and
    bumps the generation when the spec changes; ``UpdateStatus`` keeps the stored spec
    and takes the status (and, for a Deployment, its annotations). A Deployment status
    write carrying an outdated resourceVersion is a Conflict.
D5. Pods: created Pending; Ready (Running, ready time the instant's second) B s after
    creation if still in the API (also when terminating; with B = 0 a separate event at
    the creation instant); a delete sets the deletionTimestamp and the pod leaves grace s
    later (at once with grace 0); a delete of a terminating pod changes nothing, of a gone
    one is NotFound. Deaths at the first instant of their second: the oldest live pods
    (Ready, in the API, terminating ones too) leave at once.
D6. Start: ``settled`` constructs the objects a G = 0, B = 0 pre-history from t = -1000
    leaves (:func:`settled_objects`), and the fresh caches list them at t = 0 (Deployment,
    ReplicaSet, pods); ``cold`` creates the Deployment at t = 0.

The ReplicaSet controller (``replica_set.go``, ``controller_utils.go``)

R1. Expectations per ReplicaSet: satisfied with no record, with both counters <= 0, or
    when the record is more than 300 s old. A pod's add lowers the add counter; a pod's
    deletion seen (its terminating update or its removal) lowers the delete counter if
    the pod is one the last delete sync named (once).
R2. ``syncReplicaSet``: list the ReplicaSet's non-terminating cached pods (name order);
    when satisfied, ``manageReplicas``: too few: set the record (add = n) and create n
    pods (``slowStartBatch``, at most 500); too many: rank the pods (``less`` under Go's
    ``sort.Sort``, when deleting fewer than all), set the record (del = k, the pods'
    keys) and delete the first k, in name order; a NotFound lowers the record at once.
R3. The status (``calculateStatus``): replicas and fully labelled = the pods listed, ready,
    available = ready with ``readyTime + minReadySeconds`` strictly before now (all ready
    ones when minReadySeconds = 0); written (``updateReplicaSetStatus``) when a count
    changed or ``observedGeneration`` is behind the generation.
R4. minReadySeconds > 0: a pod update turning it Ready (no deletionTimestamp) also calls
    ``AddAfter(minReadySeconds + 1 s)``; a sync whose resulting status has ready =
    spec.replicas != available calls ``AddAfter(minReadySeconds)``.

The Deployment controller (``deployment_controller.go``, ``sync.go``, ``rolling.go``,
``progress.go``, ``util/deployment_util.go``)

C1. ``syncDeployment``: a copy of the cached Deployment and its ReplicaSets (cache, name
    order); ``isScalingEvent`` (an active ReplicaSet whose desired-replicas annotation is
    not spec.replicas) chooses ``sync`` (scale, then ``syncDeploymentStatus``) over
    ``rolloutRolling``.
C2. ``getAllReplicaSetsAndSyncRevision`` / ``getNewReplicaSet``: the new ReplicaSet is the
    oldest with the Deployment's template; absent and asked to, it is created (revision
    max old + 1, replicas ``NewRSNewReplicas``, desired and max-replicas annotations), the
    Deployment's revision annotation and Progressing ``NewReplicaSetCreated`` are written
    with ``UpdateStatus`` and the reply is discarded: the sync's next status write
    conflicts.
C3. ``reconcileNewReplicaSet``: scale the new ReplicaSet down to spec.replicas, or up to
    ``NewRSNewReplicas`` (replicas + surge, less all ReplicaSets' spec.replicas, at most
    spec.replicas). A scale writes spec.replicas and both replica annotations.
C4. ``reconcileOldReplicaSets``: ``maxScaledDown = all replicas - (replicas -
    maxUnavailable) - (new replicas - new available)``; if positive,
    ``cleanupUnhealthyReplicas`` (old ones by creation, down by their unavailable ones),
    then ``scaleDownOldReplicaSetsForRollingUpdate`` (available - minAvailable, oldest
    first).
C5. ``scale`` (proportional): the only active (or the latest) ReplicaSet takes
    spec.replicas; a saturated new one sends the old ones to 0; otherwise each active one
    gets ``round(replicas x (desired + surge) / max-replicas annotation)`` (``GetProportion``,
    sorted by ``ReplicaSetsBySizeNewer`` up, ``BySizeOlder`` down), the leftover to the first.
C6. ``calculateStatus`` and conditions: the counts from the ReplicaSets' status; Available
    True when available >= replicas - maxUnavailable; ``SetDeploymentCondition`` keeps a
    condition of the same status and reason, and the transition time of the same status.
C7. ``syncRolloutStatus``: unless complete already (replicas = updated and the reason is
    NewReplicaSetAvailable), Progressing becomes NewReplicaSetAvailable when complete,
    ReplicaSetUpdated (a new update time) on progress, ProgressDeadlineExceeded after 600
    s without; written if the status changed, else ``requeueStuckDeployment``.
C8. ``requeueStuckDeployment``: with a Progressing condition, not complete and not timed
    out: ``after = lastUpdateTime + 600 s - now``; ``AddAfter(after + 1 s)``, or
    ``AddRateLimited`` when ``after < 1 s``.
C9. ``handleErr``: a sync that returned an error (a Conflict) is added rate-limited
    (fewer than 15 requeues), else forgotten; success forgets.
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple

from reconsim.errors import ReconsimError
from reconsim.model import deployment_rules
from reconsim.model.controllers import expectations
from reconsim.model.gosort import go_sort
from reconsim.model.workqueue import SECOND, WorkQueue

#: The data set's fixed settings.
PROGRESS_DEADLINE: Final = 600
REVISION_HISTORY_LIMIT: Final = 10
BURST_REPLICAS: Final = 500
#: client-go's ExpectationsTimeout, ns
#: (:data:`reconsim.model.controllers.expectations.EXPECTATIONS_TIMEOUT` seconds).
EXPECTATIONS_TIMEOUT: Final = expectations.EXPECTATIONS_TIMEOUT * SECOND
MAX_RETRIES: Final = 15
#: The settled pre-history's start, seconds.
PRE_HISTORY: Final = -1000
#: The Deployment's queue key.
DEPLOYMENT_KEY: Final = "default/web"

#: The per-second trace's columns, in the data set's order.
TRACE_COLUMNS: Final = (
    "t", "desired", "new_spec", "old_spec", "new_live", "old_live", "new_available",
    "old_available", "available", "new_true_available", "live", "api_pods", "terminating",
    "nonterminating", "new_pods", "old_pods", "rs_count", "rs_syncs", "deploy_syncs",
    "create_commands", "created", "delete_commands", "deleted", "deaths", "d_updated",
    "d_available", "status_complete", "max_surge_r", "max_unavailable_r",
    "new_scale_writes", "old_scale_writes")
#: The metrics row's columns, in the data set's order.
METRIC_COLUMNS: Final = (
    "id", "max_pods", "max_api_pods", "max_live", "max_surge", "surge_violation_seconds",
    "api_surge_violation_seconds", "min_available", "min_available_after_rollout",
    "unavailable_seconds", "unavailable_seconds_after_rollout", "rollout_done_at",
    "status_complete_at", "complete_at_end", "created", "deleted", "create_commands",
    "delete_commands", "rs_syncs", "deploy_syncs", "excess_copy_seconds",
    "missing_copy_seconds", "deaths_landed", "final_rs_count", "max_surge_r",
    "max_unavailable_r")

IntOrPercent = int | str


class ScenarioError(ReconsimError):
    """A Deployment scenario that cannot be run: one line naming the field and value."""


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scenario of the Deployment data set (its ``scenarios.json`` fields), or of a
    cell: ``rollouts``, the seconds the template changes (version 2, 3, ... in turn; one
    during a rollout starts a rollover), and ``scale``, the changes of ``spec.replicas``
    (``(at, desired)``, increasing ``at``), default to the data set's ``rollout_at`` and
    ``rollout2_at``, ``scale_at`` and ``desired2``."""

    id: str = "deployment"
    desired: int
    G: int = 0
    B: int = 0
    min_ready_seconds: int = 0
    grace: int = 0
    max_surge: IntOrPercent = "25%"
    max_unavailable: IntOrPercent = "25%"
    start: str = "settled"
    rollout_at: int = 10
    rollout2_at: int | None = None
    scale_at: int | None = None
    desired2: int | None = None
    deaths: tuple[tuple[int, int], ...] = ()
    duration: int = 600
    rollouts: tuple[int, ...] = ()
    scale: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        for name in ("desired", "G", "B", "min_ready_seconds", "grace", "rollout_at",
                     "duration"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ScenarioError(f"scenario {self.id}: {name} = {value!r}, not an "
                                    "integer >= 0")
        if self.start not in ("settled", "cold"):
            raise ScenarioError(f"scenario {self.id}: start = {self.start!r}, not "
                                "'settled' or 'cold'")
        for name in ("max_surge", "max_unavailable"):
            scaled_value(getattr(self, name), 1, round_up=True, name=name)
        if (self.scale_at is None) != (self.desired2 is None):
            raise ScenarioError(f"scenario {self.id}: scale_at and desired2 go together "
                                f"(got {self.scale_at!r}, {self.desired2!r})")
        if not self.rollouts:
            object.__setattr__(self, "rollouts", (self.rollout_at,) if self.rollout2_at is None
                               else (self.rollout_at, self.rollout2_at))
        if not self.scale and self.scale_at is not None and self.desired2 is not None:
            object.__setattr__(self, "scale", ((self.scale_at, self.desired2),))
        if list(self.rollouts) != sorted(set(self.rollouts)):
            raise ScenarioError(f"scenario {self.id}: rollouts = {self.rollouts!r}, not "
                                "increasing seconds")


#: The parameters of a cell the Deployment world reads (a cell's ``controller`` is
#: ``deployment``); ``U`` and ``ledger_base`` mean nothing here (no periodic resync, no
#: ledger read) and are let be. Every other parameter of a cell is a rule of another world:
#: a cell that sets one off its default is refused rather than run without it.
CELL_PARAMS: Final = ("controller", "desired", "G", "B", "duration", "deaths", "grace",
                      "initial", "scale", "max_surge", "max_unavailable", "min_ready",
                      "rollout", "U", "ledger_base")
#: The most template changes a cell may script: past 10 old ReplicaSets the real
#: controller's revision-history cleanup (``revisionHistoryLimit`` 10) would delete some,
#: which this model leaves out.
MAX_ROLLOUTS: Final = REVISION_HISTORY_LIMIT
#: The most pod-seconds (the largest desired count x the run's seconds) a cell may take:
#: the reference model visits every pod every second (5,000 pods over 601 s take about
#: 2 s), so a larger cell is refused rather than left running for hours.
MAX_POD_SECONDS: Final = 50_000_000


def scenario_of(cell: Any) -> Scenario:
    """The :class:`Scenario` of a cell (a :class:`reconsim.model.params.Cell` whose
    controller is ``deployment``): ``initial`` = ``"desired"`` is a settled start, 0 a
    cold one; ``rollout`` the template changes, ``scale`` the changes of replicas,
    ``min_ready`` minReadySeconds. Raises ``ValueError`` (one line naming the parameter)
    for a cell this world cannot run."""
    if cell.initial not in ("desired", 0):
        raise ValueError(f"initial must be 'desired' (a settled Deployment) or 0 (a cold "
                         f"start) in the Deployment world, got {cell.initial!r}")
    if not cell.rollout:
        raise ValueError("rollout: the Deployment world needs at least one template change")
    if len(cell.rollout) > MAX_ROLLOUTS:
        raise ValueError(f"rollout: at most {MAX_ROLLOUTS} template changes (past that the "
                         f"real controller's revision-history cleanup would start, which "
                         f"this model leaves out), got {len(cell.rollout)}")
    if list(cell.rollout) != sorted(set(cell.rollout)):
        raise ValueError(f"rollout must list increasing seconds, got {list(cell.rollout)}")
    largest = max([cell.desired, *(d for _, d in cell.scale)])
    if largest * (cell.duration + 1) > MAX_POD_SECONDS:
        raise ValueError(f"desired {largest:,} over {cell.duration + 1:,} s: the Deployment "
                         f"world runs at most {MAX_POD_SECONDS:,} pod-seconds (desired x "
                         "(duration + 1)), as its model visits every pod every second")
    surge, unavailable = (scaled_value(v, 100, round_up=True) for v in (
        cell.max_surge, cell.max_unavailable))
    if surge == 0 and unavailable == 0:
        raise ValueError("max_surge and max_unavailable are both 0: a rolling update could "
                         "never move (the API refuses it: maxUnavailable may not be 0 when "
                         "maxSurge is 0)")
    return Scenario(id="cell", desired=cell.desired, G=cell.G, B=cell.B,
                    min_ready_seconds=cell.min_ready, grace=cell.grace,
                    max_surge=cell.max_surge, max_unavailable=cell.max_unavailable,
                    start="settled" if cell.initial == "desired" else "cold",
                    rollout_at=cell.rollout[0], rollouts=tuple(cell.rollout),
                    scale=tuple(cell.scale), deaths=tuple(cell.deaths),
                    duration=cell.duration)


def check_cell(cell: Any, defaults: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` (one line) for a cell of the Deployment world that sets a
    parameter of another world off its default (``defaults``: each parameter's), or that
    :func:`scenario_of` refuses."""
    for name, default in defaults.items():
        if name not in CELL_PARAMS and getattr(cell, name) != default:
            raise ValueError(f"{name} = {getattr(cell, name)!r}: not a rule of the "
                             f"Deployment world (it reads {', '.join(CELL_PARAMS[1:-2])}); "
                             f"leave it at its default ({default!r})")
    scenario_of(cell)


# --- Rules on numbers -----------------------------------------------------------------


def int_or_percent(value: IntOrPercent, name: str = "value") -> tuple[int, int]:
    """An ``IntOrString`` as the rules on numbers take it: ``(value, is_percent)``.

    >>> int_or_percent("25%"), int_or_percent(2)
    ((25, 1), (2, 0))
    """
    if isinstance(value, bool):
        raise ScenarioError(f"{name} = {value!r}: an integer or a percentage like '25%'")
    if isinstance(value, int):
        return value, 0
    if not isinstance(value, str) or not value.endswith("%") or not value[:-1].isdigit():
        raise ScenarioError(f"{name} = {value!r}: an integer or a percentage like '25%'")
    return int(value[:-1]), 1


def scaled_value(value: IntOrPercent, total: int, *, round_up: bool,
                 name: str = "value") -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` (:func:`deployment_rules.scaled
    <reconsim.model.deployment_rules.scaled>`) of ``value`` as the scenario spells it.

    >>> scaled_value("25%", 3, round_up=True), scaled_value("25%", 3, round_up=False)
    (1, 0)
    """
    return deployment_rules.scaled(*int_or_percent(value, name), total, round_up)


def resolve_fenceposts(max_surge: IntOrPercent, max_unavailable: IntOrPercent,
                       desired: int) -> tuple[int, int]:
    """``ResolveFenceposts`` (:func:`deployment_rules.fencepost_surge
    <reconsim.model.deployment_rules.fencepost_surge>` and
    :func:`~reconsim.model.deployment_rules.fencepost_unavailable`) of the strategy as the
    scenario spells it.

    >>> resolve_fenceposts("25%", "25%", 3), resolve_fenceposts(0, "25%", 1)
    ((1, 0), (0, 1))
    """
    strategy = (*int_or_percent(max_surge, "max_surge"),
                *int_or_percent(max_unavailable, "max_unavailable"))
    return (deployment_rules.fencepost_surge(*strategy, desired),
            deployment_rules.fencepost_unavailable(*strategy, desired))


#: Go's ``math.Round`` (half away from zero), the rule the kernel compiles.
go_round = deployment_rules.go_round


# --- The API's objects ----------------------------------------------------------------

AVAILABLE: Final = "Available"
PROGRESSING: Final = "Progressing"
NEW_RS_CREATED: Final = "NewReplicaSetCreated"
FOUND_NEW_RS: Final = "FoundNewReplicaSet"
NEW_RS_AVAILABLE: Final = "NewReplicaSetAvailable"
RS_UPDATED: Final = "ReplicaSetUpdated"
TIMED_OUT: Final = "ProgressDeadlineExceeded"
MIN_AVAILABLE: Final = "MinimumReplicasAvailable"
MIN_UNAVAILABLE: Final = "MinimumReplicasUnavailable"


class Condition(NamedTuple):
    """A Deployment condition; times in ns (whole seconds once stored)."""

    type: str
    status: bool
    reason: str
    last_update: int
    last_transition: int


class DeploymentStatus(NamedTuple):
    """``DeploymentStatus`` (no collisionCount: no hash collides here)."""

    observed_generation: int = 0
    replicas: int = 0
    updated: int = 0
    ready: int = 0
    available: int = 0
    unavailable: int = 0
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Deployment:
    """``default/web``: spec (replicas, template version, the strategy from the scenario),
    metadata (resourceVersion, generation, revision annotation) and status."""

    rv: int
    generation: int
    replicas: int
    template: int
    revision: str | None = None
    status: DeploymentStatus = field(default_factory=DeploymentStatus)


class ReplicaSetStatus(NamedTuple):
    """``ReplicaSetStatus`` (no ReplicaFailure condition: no sync fails here)."""

    replicas: int = 0
    fully_labeled: int = 0
    ready: int = 0
    available: int = 0
    observed_generation: int = 0


@dataclass(frozen=True)
class ReplicaSet:
    """A ReplicaSet of the Deployment: its name, template version, creation second,
    revision and replica annotations (None when absent), spec and status."""

    name: str
    template: int
    created: int  # seconds
    rv: int
    generation: int
    replicas: int
    revision: int
    desired_annotation: int | None
    max_annotation: int | None
    min_ready_seconds: int
    status: ReplicaSetStatus = field(default_factory=ReplicaSetStatus)


@dataclass
class Pod:
    """A pod in the API: its global creation number (name and UID), owner, creation
    instant, ready second (None until Ready), deletion instant and whether it is gone."""

    uid: int
    owner: str
    born: int
    ready: int | None = None
    deleting: int | None = None
    gone: bool = False

    def view(self) -> PodView:
        return PodView(self.uid, self.owner, self.born // SECOND, self.ready,
                       self.deleting is not None)


class PodView(NamedTuple):
    """A pod as an event carries it and the cache holds it."""

    uid: int
    owner: str
    created: int  # second
    ready: int | None  # second
    deleting: bool


class Conflict(Exception):  # noqa: N818 — the API's own word
    """A write carrying an outdated resourceVersion."""


def by_creation(rs: ReplicaSet) -> tuple[int, str]:
    """``ReplicaSetsByCreationTimestamp``: creation second, then name."""
    return rs.created, rs.name


def rs_name(template: int) -> str:
    """A ReplicaSet's name, ``web-`` and its template (the real one hashes the template;
    nothing here depends on the hash)."""
    return f"web-v{template}"


# --- The world ------------------------------------------------------------------------

# What may happen at an instant, in D2's order.
_POD, _DEATHS, _USER, _DELIVER = range(4)
_READY, _LEAVE = "ready", "leave"
ADDED, UPDATED, DELETED = "added", "updated", "deleted"
DEP, RS = 0, 1


@dataclass
class Expectations:
    """R1: one ReplicaSet's record: the creations and deletions still to see, the instant
    it was set, the pods its deletions named."""

    add: int
    dele: int
    at: int
    keys: set[int] = field(default_factory=set)

    def satisfied(self, now: int) -> bool:
        """Both counters at or below 0, or the record too old."""
        return (self.add <= 0 and self.dele <= 0) or now - self.at > EXPECTATIONS_TIMEOUT

    def deletion_observed(self, uid: int) -> None:
        """A named pod's deletion seen, or its delete NotFound: the delete counter
        lowered, once a pod."""
        if uid in self.keys:
            self.keys.discard(uid)
            self.dele -= 1


@dataclass
class Counts:
    """One second's counts."""

    rs_syncs: int = 0
    deploy_syncs: int = 0
    create_commands: int = 0
    created: int = 0
    delete_commands: int = 0
    deleted: int = 0
    deaths: int = 0
    new_scale_writes: int = 0
    old_scale_writes: int = 0


class World:
    """One scenario's world: the API's objects, the caches, both controllers and their
    queues, the events still to come."""

    def __init__(self, s: Scenario) -> None:
        self.s = s
        self.rv = 0
        self.deployment: Deployment | None = None
        self.replicasets: dict[str, ReplicaSet] = {}
        self.pods: dict[int, Pod] = {}
        self.pod_counter = 0
        # The caches (D3).
        self.d_cache: Deployment | None = None
        self.rs_cache: dict[str, ReplicaSet] = {}
        self.pod_cache: dict[int, PodView] = {}
        self.queues = (WorkQueue(), WorkQueue())
        self.expectations: dict[str, Expectations] = {}
        self.due: list[tuple[int, int, int, str, Any]] = []
        self.order = 0
        self.counts = Counts()
        self.now = 0
        self.resolved: dict[int, tuple[int, int]] = {}

    def fenceposts(self, desired: int) -> tuple[int, int]:
        """:func:`resolve_fenceposts` of the scenario's strategy at ``desired`` (each count
        resolved once: the trace asks every second)."""
        known = self.resolved.get(desired)
        if known is None:
            known = self.resolved[desired] = resolve_fenceposts(
                self.s.max_surge, self.s.max_unavailable, desired)
        return known

    # -- events (D2) --

    def at(self, instant: int, kind: int, what: str, data: Any = None) -> None:
        self.order += 1
        heapq.heappush(self.due, (instant, kind, self.order, what, data))

    def next_instant(self) -> int | None:
        """The next instant anything happens (now, while a queue holds a key)."""
        if any(q.queue for q in self.queues):
            return self.now
        candidates = [self.due[0][0]] if self.due else []
        candidates += [d for q in self.queues if (d := q.next_due()) is not None]
        return min(candidates, default=None)

    def run_due(self, now: int) -> None:
        """Everything due at ``now``, in D2's order: then the delayed adds."""
        while self.due and self.due[0][0] == now:
            _, kind, _, what, data = heapq.heappop(self.due)
            if kind == _POD:
                self.pod_due(what, data, now)
            elif kind == _DEATHS:
                self.die(data, now)
            elif kind == _USER:
                self.user_write(what, data, now)
            else:
                self.deliver(what, data, now)
        for q in self.queues:
            q.release(now)

    def instant(self, now: int) -> None:
        """D2: one instant."""
        self.now = now
        self.run_due(now)
        turn = DEP
        while True:
            first, other = self.queues[turn], self.queues[1 - turn]
            if first.queue:
                ran = turn
            elif other.queue:
                ran = 1 - turn
            else:
                return
            if ran == DEP:
                self.work_deployment(now)
            else:
                self.work_replicaset(now)
            self.run_due(now)
            turn = 1 - ran

    # -- the API (D4, D5) --

    def bump(self) -> int:
        self.rv += 1
        return self.rv

    def event(self, cache: str, kind: str, obj: Any, delay: int = 0) -> None:
        self.at(self.now + delay, _DELIVER, cache, (kind, obj))

    def update_deployment_status(self, d: Deployment) -> None:
        """``UpdateStatus``: a Conflict on an outdated resourceVersion; else the status
        (times stored as whole seconds) and the revision annotation, if they changed."""
        stored = self.deployment
        assert stored is not None
        if d.rv != stored.rv:
            raise Conflict
        status = d.status._replace(conditions=tuple(
            c._replace(last_update=_second(c.last_update),
                       last_transition=_second(c.last_transition))
            for c in d.status.conditions))
        if status == stored.status and d.revision == stored.revision:
            return
        self.deployment = replace(stored, rv=self.bump(), status=status, revision=d.revision)
        self.event("deployment", UPDATED, self.deployment)

    def is_new(self, rs: ReplicaSet) -> bool:
        """The trace's judgement: the ReplicaSet has the Deployment's current template."""
        d = self.deployment
        return d is not None and d.template == rs.template

    def count_scale(self, rs: ReplicaSet, before: int) -> None:
        if rs.replicas != before:
            if self.is_new(rs):
                self.counts.new_scale_writes += 1
            else:
                self.counts.old_scale_writes += 1

    def create_replicaset(self, rs: ReplicaSet) -> ReplicaSet:
        rs = replace(rs, rv=self.bump(), generation=1)
        self.replicasets[rs.name] = rs
        self.count_scale(rs, 0)
        self.event("replicaset", ADDED, rs)
        return rs

    def update_replicaset(self, rs: ReplicaSet) -> ReplicaSet:
        """``Update``: spec and annotations; the stored status stays; a spec change bumps
        the generation; no change, no write."""
        stored = self.replicasets[rs.name]
        spec_changed = (rs.replicas, rs.min_ready_seconds) != (
            stored.replicas, stored.min_ready_seconds)
        new = replace(stored, replicas=rs.replicas, min_ready_seconds=rs.min_ready_seconds,
                      revision=rs.revision, desired_annotation=rs.desired_annotation,
                      max_annotation=rs.max_annotation)
        if new == stored:
            return stored
        new = replace(new, rv=self.bump(),
                      generation=stored.generation + (1 if spec_changed else 0))
        self.replicasets[rs.name] = new
        self.count_scale(new, stored.replicas)
        self.event("replicaset", UPDATED, new)
        return new

    def update_replicaset_status(self, rs: ReplicaSet, status: ReplicaSetStatus) -> ReplicaSet:
        stored = self.replicasets[rs.name]
        if stored.status == status:
            return stored
        new = replace(stored, rv=self.bump(), status=status)
        self.replicasets[rs.name] = new
        self.event("replicaset", UPDATED, new)
        return new

    def create_pod(self, owner: str, now: int) -> None:
        self.pod_counter += 1
        pod = Pod(self.pod_counter, owner, now)
        self.pods[pod.uid] = pod
        self.counts.create_commands += 1
        self.counts.created += 1
        self.event("pod", ADDED, pod.view(), self.s.G * SECOND)
        self.at(now + self.s.B * SECOND, _POD, _READY, pod.uid)

    def delete_pod(self, uid: int, now: int) -> bool:
        """A delete command; False on NotFound."""
        pod = self.pods[uid]
        self.counts.delete_commands += 1
        if pod.gone:
            return False
        if pod.deleting is None:
            self.counts.deleted += 1
            pod.deleting = now
            if self.s.grace == 0:
                self.remove_pod(pod)
            else:
                self.event("pod", UPDATED, pod.view(), self.s.G * SECOND)
                self.at(now + self.s.grace * SECOND, _POD, _LEAVE, uid)
        return True

    def remove_pod(self, pod: Pod) -> None:
        pod.gone = True
        self.event("pod", DELETED, pod.view(), self.s.G * SECOND)

    def pod_due(self, what: str, uid: int, now: int) -> None:
        pod = self.pods[uid]
        if pod.gone:
            return
        if what == _READY:
            pod.ready = now // SECOND
            self.event("pod", UPDATED, pod.view(), self.s.G * SECOND)
        else:
            self.remove_pod(pod)

    def die(self, count: int, now: int) -> None:
        """D5: the ``count`` oldest live pods leave at once."""
        live = [p for p in sorted(self.pods.values(), key=lambda p: p.uid)
                if not p.gone and p.ready is not None]
        for pod in live[:count]:
            self.counts.deaths += 1
            self.remove_pod(pod)

    def user_write(self, what: str, value: int, now: int) -> None:
        """D2 (3): the user's writes to the Deployment."""
        if what == "create":
            self.deployment = Deployment(self.bump(), 1, self.s.desired, 1)
            self.event("deployment", ADDED, self.deployment)
            return
        d = self.deployment
        assert d is not None
        d = replace(d, template=value) if what == "template" else replace(d, replicas=value)
        self.deployment = replace(d, rv=self.bump(), generation=d.generation + 1)
        self.event("deployment", UPDATED, self.deployment)

    # -- the caches and their handlers (D3) --

    def deliver(self, cache: str, data: tuple[str, Any], now: int) -> None:
        kind, obj = data
        if cache == "deployment":
            self.d_cache = obj
            self.queues[DEP].add(DEPLOYMENT_KEY)  # addDeployment, updateDeployment
        elif cache == "replicaset":
            self.rs_cache[obj.name] = obj
            self.queues[DEP].add(DEPLOYMENT_KEY)  # addReplicaSet, updateReplicaSet
            self.queues[RS].add(obj.name)  # addRS, updateRS
        else:
            old = self.pod_cache.get(obj.uid)
            if kind == DELETED:
                self.pod_cache.pop(obj.uid, None)
            else:
                self.pod_cache[obj.uid] = obj
            self.pod_event(kind, old, obj, now)

    def pod_event(self, kind: str, old: PodView | None, pod: PodView, now: int) -> None:
        """The ReplicaSet controller's ``addPod``, ``updatePod``, ``deletePod`` (R1, R4)."""
        rs = self.rs_cache.get(pod.owner)
        if rs is None:
            return
        key = rs.name
        if kind == DELETED or pod.deleting:
            exp = self.expectations.get(key)
            if exp is not None:
                exp.deletion_observed(pod.uid)
            self.queues[RS].add(key)
            return
        if kind == ADDED:
            exp = self.expectations.get(key)
            if exp is not None:
                exp.add -= 1
            self.queues[RS].add(key)
            return
        self.queues[RS].add(key)
        was_ready = old is not None and old.ready is not None
        if not was_ready and pod.ready is not None and rs.min_ready_seconds > 0:
            self.queues[RS].add_after(key, (rs.min_ready_seconds + 1) * SECOND, now)

    # -- the ReplicaSet controller (R1-R4) --

    def work_replicaset(self, now: int) -> None:
        q = self.queues[RS]
        key = q.get()
        self.counts.rs_syncs += 1
        self.sync_replicaset(key, now)
        q.forget(key)
        q.done(key)

    def sync_replicaset(self, key: str, now: int) -> None:
        rs = self.rs_cache[key]
        exp = self.expectations.get(key)
        needs_sync = exp is None or exp.satisfied(now)
        pods = [p for uid, p in sorted(self.pod_cache.items())
                if p.owner == key and not p.deleting]
        if needs_sync:
            self.manage_replicas(rs, pods, now)
        status = self.replicaset_status(rs, pods, now)
        if status[:4] != rs.status[:4] or rs.generation != rs.status.observed_generation:
            rs = self.update_replicaset_status(rs, status._replace(
                observed_generation=rs.generation))
        if rs.min_ready_seconds > 0 and rs.status.ready == rs.replicas \
                and rs.status.available != rs.replicas:
            self.queues[RS].add_after(key, rs.min_ready_seconds * SECOND, now)

    def replicaset_status(self, rs: ReplicaSet, pods: list[PodView],
                          now: int) -> ReplicaSetStatus:
        """R3: ``calculateStatus`` (``IsPodAvailable`` at the exact instant)."""
        ready = [p for p in pods if p.ready is not None]
        available = [p for p in ready if rs.min_ready_seconds == 0
                     or (p.ready + rs.min_ready_seconds) * SECOND < now]  # type: ignore[operator]
        return ReplicaSetStatus(len(pods), len(pods), len(ready), len(available),
                                rs.status.observed_generation)

    def manage_replicas(self, rs: ReplicaSet, pods: list[PodView], now: int) -> None:
        """R2."""
        diff = len(pods) - rs.replicas
        if diff < 0:
            n = min(-diff, BURST_REPLICAS)
            old = self.expectations.get(rs.name)
            self.expectations[rs.name] = Expectations(n, 0, now, old.keys if old else set())
            for _ in range(n):  # slowStartBatch: every batch succeeds here
                self.create_pod(rs.name, now)
        elif diff > 0:
            k = min(diff, BURST_REPLICAS)
            chosen = [p.uid for p in pods]
            if k < len(pods):
                chosen = [ranked[0] for ranked in deletion_order(pods, now)]
            targets = sorted(chosen[:k])
            exp = self.expectations[rs.name] = Expectations(0, k, now, set(targets))
            for uid in targets:
                if not self.delete_pod(uid, now):  # NotFound: observed at once
                    exp.deletion_observed(uid)

    # -- the Deployment controller (C1-C9) --

    def work_deployment(self, now: int) -> None:
        q = self.queues[DEP]
        key = q.get()
        self.counts.deploy_syncs += 1
        try:
            DeploymentSync(self, now).run()
        except Conflict:  # C9
            if q.failures.get(key, 0) < MAX_RETRIES:
                q.add_rate_limited(key, now)
            else:
                q.forget(key)
        else:
            q.forget(key)
        q.done(key)


def deletion_order(pods: list[PodView], now: int) -> list[tuple[int, int, int, int, int]]:
    """R2: ``pods`` as ``ActivePodsWithRanks`` under Go's ``sort.Sort`` leaves them at
    instant ``now``, deleted first first: each as ``ranked_less`` takes it (uid, creation
    and ready second, their :func:`~reconsim.model.deployment_rules.age_rank`)."""
    ranked = []
    for p in pods:
        ready = deployment_rules.NOT_READY if p.ready is None else p.ready
        ranked.append((p.uid, p.created, ready, deployment_rules.age_rank(p.created, now),
                       deployment_rules.age_rank(ready, now)))
    go_sort(ranked, lambda a, b: deployment_rules.ranked_less(*a, *b))
    return ranked


def _second(instant: int) -> int:
    """D1: a stored time, the instant's whole second (in ns)."""
    return instant // SECOND * SECOND


# --- The Deployment controller's sync -------------------------------------------------


class DeploymentSync:
    """One ``syncDeployment`` (C1-C8): ``d`` is the sync's copy of the cached Deployment,
    changed as the Go code changes it (its resourceVersion stays the cached one)."""

    def __init__(self, world: World, now: int) -> None:
        self.w, self.now, self.s = world, now, world.s
        assert world.d_cache is not None
        self.d = world.d_cache
        self.rs_list = sorted(world.rs_cache.values(), key=lambda rs: rs.name)

    # -- numbers --

    @property
    def max_surge(self) -> int:
        return self.w.fenceposts(self.d.replicas)[0]

    @property
    def max_unavailable(self) -> int:
        """``MaxUnavailable``: at most spec.replicas; 0 when it is 0."""
        if self.d.replicas == 0:
            return 0
        return min(self.w.fenceposts(self.d.replicas)[1], self.d.replicas)

    def condition(self, type_: str, status: bool, reason: str) -> Condition:
        """``NewDeploymentCondition``: both times now."""
        return Condition(type_, status, reason, self.now, self.now)

    def progressing(self, status: DeploymentStatus) -> Condition | None:
        return next((c for c in status.conditions if c.type == PROGRESSING), None)

    # -- C1 --

    def run(self) -> None:
        if self.is_scaling_event():
            self.sync()
        else:
            self.rollout_rolling()

    def is_scaling_event(self) -> bool:
        new, old = self.all_replicasets(create=False)
        return any(rs.desired_annotation is not None
                   and rs.desired_annotation != self.d.replicas
                   for rs in _active([*old, new]))

    # -- C2 --

    def find_new(self) -> ReplicaSet | None:
        self.rs_list.sort(key=by_creation)
        return next((rs for rs in self.rs_list if rs.template == self.d.template), None)

    def all_replicasets(self, *, create: bool) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        new = self.find_new()
        old = [rs for rs in self.rs_list if new is None or rs.name != new.name]
        return self.new_replicaset(old, create=create), old

    def set_revision(self, revision: str) -> bool:
        if self.d.revision == revision:
            return False
        self.d = replace(self.d, revision=revision)
        return True

    def set_condition(self, status: DeploymentStatus, c: Condition) -> DeploymentStatus:
        """``SetDeploymentCondition`` (C6)."""
        current = next((x for x in status.conditions if x.type == c.type), None)
        if current is not None and current.status == c.status and current.reason == c.reason:
            return status
        if current is not None and current.status == c.status:
            c = c._replace(last_transition=current.last_transition)
        kept = tuple(x for x in status.conditions if x.type != c.type)
        return status._replace(conditions=(*kept, c))

    def new_replicaset(self, old: list[ReplicaSet], *, create: bool) -> ReplicaSet | None:
        existing = self.find_new()
        new_revision = max((rs.revision for rs in old), default=0) + 1
        if existing is not None:
            if existing.revision < new_revision:  # SetNewReplicaSetAnnotations
                return self.w.update_replicaset(replace(existing, revision=new_revision))
            needs_update = self.set_revision(str(existing.revision))
            if self.progressing(self.d.status) is None:
                self.d = replace(self.d, status=self.set_condition(
                    self.d.status, self.condition(PROGRESSING, True, FOUND_NEW_RS)))
                needs_update = True
            if needs_update:
                self.w.update_deployment_status(self.d)
            return existing
        if not create:
            return None
        blank = ReplicaSet(rs_name(self.d.template), self.d.template, self.now // SECOND,
                           0, 0, 0, new_revision, self.d.replicas,
                           self.d.replicas + self.max_surge, self.s.min_ready_seconds)
        replicas = self.new_rs_new_replicas([*old, blank], blank)
        created = self.w.create_replicaset(replace(blank, replicas=replicas))
        self.set_revision(str(new_revision))
        self.d = replace(self.d, status=self.set_condition(
            self.d.status, self.condition(PROGRESSING, True, NEW_RS_CREATED)))
        self.w.update_deployment_status(self.d)  # the reply is discarded (C2)
        return created

    def new_rs_new_replicas(self, all_rs: list[ReplicaSet], new: ReplicaSet) -> int:
        """C3: ``NewRSNewReplicas`` of ``new`` among ``all_rs``."""
        return deployment_rules.new_rs_new_replicas(
            self.d.replicas, self.max_surge, sum(rs.replicas for rs in all_rs), new.replicas)

    # -- scaling a ReplicaSet --

    def scale_and_record(self, rs: ReplicaSet, replicas: int) -> tuple[bool, ReplicaSet]:
        """``scaleReplicaSetAndRecordEvent``: nothing when the size is right."""
        if rs.replicas == replicas:
            return False, rs
        return self.scale_replicaset(rs, replicas)

    def scale_replicaset(self, rs: ReplicaSet, replicas: int) -> tuple[bool, ReplicaSet]:
        """``scaleReplicaSet``: writes the size and both replica annotations if either
        is off; "scaled" when the size changed."""
        desired, most = self.d.replicas, self.d.replicas + self.max_surge
        size = rs.replicas != replicas
        notes = (rs.desired_annotation, rs.max_annotation) != (desired, most)
        if not (size or notes):
            return False, rs
        updated = self.w.update_replicaset(replace(
            rs, replicas=replicas, desired_annotation=desired, max_annotation=most))
        return size, updated

    # -- C3, C4 --

    def rollout_rolling(self) -> None:
        new, old = self.all_replicasets(create=True)
        assert new is not None
        all_rs = [*old, new]
        # Scale up if it can, else down if it can (the revision history never needs a
        # cleanup here: at most 3 ReplicaSets); then the status, whichever happened.
        if not self.reconcile_new(all_rs, new):
            self.reconcile_old(all_rs, _active(old), new)
        self.sync_rollout_status(all_rs, new)

    def reconcile_new(self, all_rs: list[ReplicaSet], new: ReplicaSet) -> bool:
        if new.replicas == self.d.replicas:
            return False
        if new.replicas > self.d.replicas:
            return self.scale_and_record(new, self.d.replicas)[0]
        return self.scale_and_record(new, self.new_rs_new_replicas(all_rs, new))[0]

    def reconcile_old(self, all_rs: list[ReplicaSet], old: list[ReplicaSet],
                      new: ReplicaSet) -> bool:
        if sum(rs.replicas for rs in old) == 0:
            return False
        max_scaled_down = deployment_rules.max_scaled_down(
            sum(rs.replicas for rs in all_rs), self.d.replicas, self.max_unavailable,
            new.replicas, new.status.available)
        if max_scaled_down <= 0:
            return False
        cleaned = self.cleanup_unhealthy(old, max_scaled_down)
        if cleaned is None:  # its error is swallowed: no scale-down in this sync
            return False
        scaled = self.scale_down_old([*old, new], old)
        return cleaned + scaled > 0

    def cleanup_unhealthy(self, old: list[ReplicaSet], most: int) -> int | None:
        """``cleanupUnhealthyReplicas``: scale the old ReplicaSets (sorted by creation, in
        place) down by their unavailable pods, at most ``most`` in all; None for its
        error, an old ReplicaSet with more available pods than spec.replicas (a
        "scale down" that would scale up)."""
        old.sort(key=by_creation)
        total = 0
        for i, rs in enumerate(old):
            if total >= most:
                break
            if rs.replicas in (0, rs.status.available):
                continue
            down = min(most - total, rs.replicas - rs.status.available)
            if down < 0:
                return None
            _, old[i] = self.scale_and_record(rs, rs.replicas - down)
            total += down
        return total

    def scale_down_old(self, all_rs: list[ReplicaSet], old: list[ReplicaSet]) -> int:
        min_available = self.d.replicas - self.max_unavailable
        available = sum(rs.status.available for rs in all_rs)
        if available <= min_available:
            return 0
        old.sort(key=by_creation)
        total, target = 0, available - min_available
        for rs in old:
            if total >= target:
                break
            if rs.replicas == 0:
                continue
            down = min(rs.replicas, target - total)
            self.scale_and_record(rs, rs.replicas - down)
            total += down
        return total

    # -- C5 --

    def sync(self) -> None:
        new, old = self.all_replicasets(create=False)
        self.scale(new, old)
        self.sync_status([*old, new], new)

    def scale(self, new: ReplicaSet | None, old: list[ReplicaSet]) -> None:
        d = self.d
        old.sort(key=by_creation, reverse=True)
        active = _active([*old, new])
        only = self.active_or_latest(new, old, active)
        if only is not None:
            if only.replicas != d.replicas:
                self.scale_and_record(only, d.replicas)
            return
        if new is not None and new.desired_annotation == d.replicas \
                and new.replicas == d.replicas and new.status.available == d.replicas:
            for rs in _active(old):  # IsSaturated
                self.scale_and_record(rs, 0)
            return
        allowed = d.replicas + self.max_surge if d.replicas > 0 else 0
        to_add = allowed - sum(rs.replicas for rs in active)
        if to_add > 0:  # ReplicaSetsBySizeNewer
            go_sort(active, lambda a, b: by_creation(b) < by_creation(a)
                    if a.replicas == b.replicas else a.replicas > b.replicas)
        elif to_add < 0:  # ReplicaSetsBySizeOlder
            go_sort(active, lambda a, b: by_creation(a) < by_creation(b)
                    if a.replicas == b.replicas else a.replicas > b.replicas)
        added = 0
        sizes: dict[str, int] = {}
        for rs in active:
            if to_add != 0:
                annotated = (rs.max_annotation if rs.max_annotation is not None
                             else d.status.replicas)
                proportion = deployment_rules.proportion(
                    rs.replicas, d.replicas, self.max_surge, annotated, to_add, added)
                sizes[rs.name] = rs.replicas + proportion
                added += proportion
            else:
                sizes[rs.name] = rs.replicas
        for i, rs in enumerate(active):
            if i == 0 and to_add != 0:
                sizes[rs.name] = max(0, sizes[rs.name] + to_add - added)
            self.scale_replicaset(rs, sizes[rs.name])

    @staticmethod
    def active_or_latest(new: ReplicaSet | None, old: list[ReplicaSet],
                         active: list[ReplicaSet]) -> ReplicaSet | None:
        """``FindActiveOrLatest``: the only active ReplicaSet; with none, the new one or
        else the newest old one; with several, none."""
        if len(active) == 1:
            return active[0]
        if active or (new is None and not old):
            return None
        return new if new is not None else old[0]

    # -- C6, C7, C8 --

    def calculate_status(self, all_rs: list[ReplicaSet | None],
                         new: ReplicaSet | None) -> DeploymentStatus:
        listed = [rs for rs in all_rs if rs is not None]
        available = sum(rs.status.available for rs in listed)
        total = sum(rs.replicas for rs in listed)
        status = DeploymentStatus(
            self.d.generation, sum(rs.status.replicas for rs in listed),
            new.status.replicas if new is not None else 0,
            sum(rs.status.ready for rs in listed), available, max(0, total - available),
            self.d.status.conditions)
        if available >= self.d.replicas - self.max_unavailable:
            c = self.condition(AVAILABLE, True, MIN_AVAILABLE)
        else:
            c = self.condition(AVAILABLE, False, MIN_UNAVAILABLE)
        return self.set_condition(status, c)

    def sync_status(self, all_rs: list[ReplicaSet | None], new: ReplicaSet | None) -> None:
        """``syncDeploymentStatus``."""
        status = self.calculate_status(all_rs, new)
        if status != self.d.status:
            self.d = replace(self.d, status=status)
            self.w.update_deployment_status(self.d)

    def complete(self, status: DeploymentStatus) -> bool:
        """``DeploymentComplete``."""
        r = self.d.replicas
        return (status.updated == r and status.replicas == r and status.available == r
                and status.observed_generation >= self.d.generation)

    def sync_rollout_status(self, all_rs: list[ReplicaSet], new: ReplicaSet) -> None:
        d = self.d
        status = self.calculate_status([*all_rs], new)
        current = self.progressing(d.status)
        done = (status.replicas == status.updated and current is not None
                and current.reason == NEW_RS_AVAILABLE)
        if not done:
            old = d.status
            if self.complete(status):
                status = self.set_condition(
                    status, self.condition(PROGRESSING, True, NEW_RS_AVAILABLE))
            elif (status.updated > old.updated
                  or status.replicas - status.updated < old.replicas - old.updated
                  or status.ready > old.ready or status.available > old.available):
                c = self.condition(PROGRESSING, True, RS_UPDATED)
                if current is not None:
                    if current.status:
                        c = c._replace(last_transition=current.last_transition)
                    status = status._replace(conditions=tuple(
                        x for x in status.conditions if x.type != PROGRESSING))
                status = self.set_condition(status, c)
            elif self.timed_out(status):
                status = self.set_condition(
                    status, self.condition(PROGRESSING, False, TIMED_OUT))
        if status == d.status:
            self.requeue_stuck(status)
            return
        self.d = replace(d, status=status)
        self.w.update_deployment_status(self.d)

    def timed_out(self, status: DeploymentStatus) -> bool:
        """``DeploymentTimedOut``."""
        c = self.progressing(status)
        if c is None or c.reason == NEW_RS_AVAILABLE:
            return False
        if c.reason == TIMED_OUT:
            return True
        return c.last_update + PROGRESS_DEADLINE * SECOND < self.now

    def requeue_stuck(self, status: DeploymentStatus) -> None:
        """C8."""
        current = self.progressing(self.d.status)
        if current is None or self.complete(status) or current.reason == TIMED_OUT:
            return
        after = current.last_update + PROGRESS_DEADLINE * SECOND - self.now
        q = self.w.queues[DEP]
        if after < SECOND:
            q.add_rate_limited(DEPLOYMENT_KEY, self.now)
        else:
            q.add_after(DEPLOYMENT_KEY, after + SECOND, self.now)


def _active(replicasets: list[ReplicaSet | None] | list[ReplicaSet]) -> list[ReplicaSet]:
    """``FilterActiveReplicaSets``: those with spec.replicas > 0."""
    return [rs for rs in replicasets if rs is not None and rs.replicas > 0]


# --- Starting, running, sampling ------------------------------------------------------


def settled_objects(s: Scenario) -> tuple[Deployment, ReplicaSet, list[Pod], int]:
    """D6: what the settled pre-history leaves in the API at t = 0: the Deployment with its
    status, conditions and revision, its ReplicaSet (revision 1) with ``desired`` pods,
    all created and Ready at -1000 and available; and the resourceVersion counter (a
    count of writes; only its order matters)."""
    d0 = s.desired
    surge = resolve_fenceposts(s.max_surge, s.max_unavailable, d0)[0]
    start = PRE_HISTORY * SECOND
    settled = (PRE_HISTORY + 2 * s.min_ready_seconds) * SECOND
    rs = ReplicaSet(rs_name(1), 1, PRE_HISTORY, 2, 1, d0, 1, d0, d0 + surge,
                    s.min_ready_seconds, ReplicaSetStatus(d0, d0, d0, d0, 1))
    conditions = (Condition(AVAILABLE, True, MIN_AVAILABLE, settled, settled),
                  Condition(PROGRESSING, True, NEW_RS_AVAILABLE, settled, start))
    d = Deployment(3, 1, d0, 1, "1", DeploymentStatus(1, d0, d0, d0, d0, 0, conditions))
    pods = [Pod(k, rs.name, start, PRE_HISTORY) for k in range(1, d0 + 1)]
    return d, rs, pods, 3 + d0


def run(s: Scenario) -> list[dict[str, int]]:
    """Play scenario ``s``: its trace, one row per second (:data:`TRACE_COLUMNS`).

    >>> trace = run(Scenario(desired=3, max_surge="25%", max_unavailable="25%", G=1, B=2))
    >>> [(r["new_spec"], r["old_spec"]) for r in trace[9:16]]
    [(3, 0), (1, 3), (1, 3), (1, 3), (2, 2), (2, 2), (2, 2)]
    """
    w = World(s)
    if s.start == "settled":
        d, rs, pods, w.rv = settled_objects(s)
        w.deployment, w.replicasets[rs.name] = d, rs
        for pod in pods:
            w.pods[pod.uid] = pod
        w.pod_counter = len(pods)
        # The fresh caches' initial list: Deployment, ReplicaSets, pods, by name.
        w.deliver("deployment", (ADDED, d), 0)
        w.deliver("replicaset", (ADDED, rs), 0)
        for pod in pods:
            w.deliver("pod", (ADDED, pod.view()), 0)
    else:
        w.at(0, _USER, "create", s.desired)
    # The user's writes at one instant: the template changes first, then a scale (the data
    # set's order; no two of its writes coincide).
    for k, moment in enumerate(s.rollouts):
        w.at(moment * SECOND, _USER, "template", k + 2)
    for moment, replicas in s.scale:
        w.at(moment * SECOND, _USER, "scale", replicas)
    for moment, count in s.deaths:
        w.at(moment * SECOND, _DEATHS, "deaths", count)
    rows = []
    for t in range(s.duration + 1):
        end = (t + 1) * SECOND
        while (now := w.next_instant()) is not None and now < end:
            w.instant(now)
        rows.append(sample(w, t))
        w.counts = Counts()
    return rows


def sample(w: World, t: int) -> dict[str, int]:
    """The trace's row of second ``t``: the state now, the second's counts."""
    s, d = w.s, w.deployment
    assert d is not None
    new_name = min((rs for rs in w.replicasets.values() if rs.template == d.template),
                   key=by_creation, default=None)
    new = new_name.name if new_name is not None else None
    in_api = [p for p in w.pods.values() if not p.gone]
    live = [p for p in in_api if p.ready is not None]
    true_available = [p for p in in_api if p.deleting is None and p.ready is not None
                      and p.ready + s.min_ready_seconds <= t]
    surge, unavailable = w.fenceposts(d.replicas)
    progressing = next((c for c in d.status.conditions if c.type == PROGRESSING), None)
    row = {
        "t": t, "desired": d.replicas,
        "new_spec": sum(rs.replicas for rs in w.replicasets.values() if rs.name == new),
        "old_spec": sum(rs.replicas for rs in w.replicasets.values() if rs.name != new),
        "new_live": sum(1 for p in live if p.owner == new),
        "old_live": sum(1 for p in live if p.owner != new),
        "new_available": sum(rs.status.available for rs in w.replicasets.values()
                             if rs.name == new),
        "old_available": sum(rs.status.available for rs in w.replicasets.values()
                             if rs.name != new),
        "available": len(true_available),
        "new_true_available": sum(1 for p in true_available if p.owner == new),
        "live": len(live), "api_pods": len(in_api),
        "terminating": sum(1 for p in in_api if p.deleting is not None),
        "nonterminating": sum(1 for p in in_api if p.deleting is None),
        "new_pods": sum(1 for p in in_api if p.owner == new),
        "old_pods": sum(1 for p in in_api if p.owner != new),
        "rs_count": len(w.replicasets),
        "d_updated": d.status.updated, "d_available": d.status.available,
        "status_complete": int(progressing is not None and progressing.status
                               and progressing.reason == NEW_RS_AVAILABLE
                               and d.status.observed_generation >= d.generation),
        "max_surge_r": surge, "max_unavailable_r": min(unavailable, d.replicas),
    }
    counts = w.counts
    for name in ("rs_syncs", "deploy_syncs", "create_commands", "created",
                 "delete_commands", "deleted", "deaths", "new_scale_writes",
                 "old_scale_writes"):
        row[name] = getattr(counts, name)
    return {c: row[c] for c in TRACE_COLUMNS}


#: A trace row's values in :data:`TRACE_COLUMNS`' order, as the rules on numbers read it.
_columns: Final = operator.itemgetter(*TRACE_COLUMNS)


def metrics(s: Scenario, trace: list[dict[str, int]]) -> dict[str, Any]:
    """The data set's ``metrics.csv`` row of a trace: its seconds folded in
    (:func:`~reconsim.model.deployment_rules.add_seconds`, the data set's definitions
    column by column; seconds in a row that repeat their row but for ``t`` at once, as the
    kernel folds them), closed with the last row and the fenceposts at the first desired
    count; a second that never came (none done, none complete, no second from the first
    template change on) is None."""
    m = [0] * deployment_rules.N_METRICS
    deployment_rules.start_metrics(m)
    after, last_change = s.rollouts[0], s.rollouts[-1]
    rows = [_columns(r) for r in trace]
    first, n = rows[0], 1
    for row in rows[1:]:
        if row[0] == first[0] + n and row[1:] == first[1:]:
            n += 1
        else:
            deployment_rules.add_seconds(m, first, n, after, last_change)
            first, n = row, 1
    deployment_rules.add_seconds(m, first, n, after, last_change)
    surge, unavailable = resolve_fenceposts(s.max_surge, s.max_unavailable, s.desired)
    deployment_rules.end_metrics(m, rows[-1], surge, min(unavailable, s.desired))
    values: dict[str, Any] = {"id": s.id, **dict(zip(METRIC_COLUMNS[1:], m, strict=True))}
    for name in ("rollout_done_at", "status_complete_at"):
        if values[name] == deployment_rules.NULL:
            values[name] = None
    if after > trace[-1]["t"]:
        values["min_available_after_rollout"] = None
    return values

