"""client-go's rate-limited work queue on a simulated clock, as Kubernetes v1.23's
controllers use it: the queue, its delaying layer and ``DefaultControllerRateLimiter``.

Time is an integer number of nanoseconds (``now``); nothing here reads a clock. The rules,
each with its Go source (client-go ``util/workqueue/`` and ``golang.org/x/time/rate`` as
vendored by Kubernetes v1.23, version v0.0.0-20210723032227-1f47c861a9ac):

Q1. The queue (``queue.go: Add, Get, Done``): FIFO; adding a key that is queued and not yet
    taken does nothing; adding it while it is being processed marks it dirty, and ``Done``
    queues it again. One sync of a key at a time.
Q2. The delaying layer (``delaying_queue.go: AddAfter, insert``): a delay of 0 or less adds
    at once; otherwise the key waits until ``now + delay``. A key already waiting keeps
    the earlier of its two times (and, when its own time is the earlier or equal one, its
    place among keys due at the same instant). Keys due at one instant are added in the
    order of the calls that set their times.
Q3. ``ItemExponentialFailureRateLimiter(5 ms, 1000 s)``
    (``default_rate_limiters.go: When, Forget``): the n-th ``When`` since the last
    ``Forget`` of a key (n from 0) gives ``5 ms x 2^n``, at most 1000 s, in float64 as Go
    computes it.
Q4. ``BucketRateLimiter`` over ``rate.NewLimiter(10, 100)`` (``rate.go: reserveN,
    advance, durationFromTokens, tokensFromDuration``): tokens are float64; each ``When``
    reserves one token at ``now`` and waits ``durationFromTokens(-tokens)`` when the
    bucket went below 0. The bucket starts full (a new limiter's first ``advance`` fills it).
Q5. ``MaxOf`` (``default_rate_limiters.go: MaxOfRateLimiter``): ``When`` asks every limiter
    (each counts the call) and waits the longest; ``Forget`` forgets in each;
    ``AddRateLimited`` is ``AddAfter(key, When(key))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

#: Nanoseconds in a millisecond and in a second.
MS: Final = 1_000_000
SECOND: Final = 1_000_000_000
#: Q3's base and largest delays (client-go's defaults).
BASE_DELAY: Final = 5 * MS
MAX_DELAY: Final = 1000 * SECOND
#: Q4's bucket: 10 tokens a second, 100 at most.
QPS: Final = 10.0
BURST: Final = 100
_MAX_INT64: Final = 2**63 - 1


def exponential_delay(failures: int) -> int:
    """Q3: the delay (ns) of the ``failures``-th retry since the last ``Forget``.

    >>> exponential_delay(0), exponential_delay(3)
    (5000000, 40000000)
    >>> exponential_delay(40) == MAX_DELAY
    True
    """
    if failures >= 64:  # Go's float64 goes to +Inf, or past int64: the largest delay
        return MAX_DELAY
    backoff = float(BASE_DELAY) * math.pow(2, failures)
    if backoff > _MAX_INT64:
        return MAX_DELAY
    return min(int(backoff), MAX_DELAY)


def duration_from_tokens(tokens: float) -> int:
    """``Limit.durationFromTokens``: the nanoseconds ``tokens`` take to accumulate."""
    seconds = tokens / QPS
    return int(1e9 * seconds)  # Go's float-to-int conversion truncates toward zero


def tokens_from_duration(d: int) -> float:
    """``Limit.tokensFromDuration``: the tokens that accumulate in ``d`` ns (whole seconds
    and the rest apart, as Go splits them)."""
    sec = float(d // SECOND) * QPS
    nsec = float(d % SECOND) * QPS
    return sec + nsec / 1e9


def reserve(tokens: float, last: int, now: int) -> tuple[int, float]:
    """Q4: reserve one token at ``now`` from a bucket holding ``tokens`` as of instant
    ``last``: the wait (ns) until it may be used, and the tokens left (below 0 while in
    debt). Numbers only: the Deployment kernel compiles this very function.

    >>> reserve(100.0, 0, 0), reserve(0.0, 0, 0), reserve(-1.0, 0, 50 * MS)
    ((0, 99.0), (100000000, -1.0), (150000000, -1.5))
    """
    last = min(last, now)
    max_elapsed = duration_from_tokens(float(BURST) - tokens)
    elapsed = min(now - last, max_elapsed)
    tokens = min(tokens + tokens_from_duration(elapsed), float(BURST)) - 1.0
    wait = duration_from_tokens(-tokens) if tokens < 0 else 0
    return wait, tokens


@dataclass
class Bucket:
    """Q4: golang.org/x/time/rate's limiter, 10 qps, burst 100, starting full."""

    tokens: float = float(BURST)
    last: int = 0

    def delay(self, now: int) -> int:
        """Reserve one token at ``now``: the wait (ns) until it may be used."""
        wait, self.tokens = reserve(self.tokens, self.last, now)
        self.last = now
        return wait


@dataclass
class WorkQueue:
    """Q1, Q2 and Q5: one controller's rate-limited queue of keys."""

    queue: list[str] = field(default_factory=list)
    dirty: set[str] = field(default_factory=set)
    processing: set[str] = field(default_factory=set)
    #: Q2: key -> (due instant, order of the call that set it).
    waiting: dict[str, tuple[int, int]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    bucket: Bucket = field(default_factory=Bucket)
    calls: int = 0

    def add(self, key: str) -> None:
        """Q1: ``Add``."""
        if key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.queue.append(key)

    def get(self) -> str:
        """Q1: ``Get``: the first queued key, now being processed."""
        key = self.queue.pop(0)
        self.processing.add(key)
        self.dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        """Q1: ``Done``: a key marked dirty meanwhile is queued again."""
        self.processing.discard(key)
        if key in self.dirty:
            self.queue.append(key)

    def add_after(self, key: str, delay: int, now: int) -> None:
        """Q2: ``AddAfter``."""
        if delay <= 0:
            self.add(key)
            return
        self.calls += 1
        due = now + delay
        held = self.waiting.get(key)
        if held is None or due < held[0]:
            self.waiting[key] = (due, self.calls)

    def when(self, key: str, now: int) -> int:
        """Q5: ``MaxOf(...).When``: both limiters count the call; the longer wait."""
        n = self.failures.get(key, 0)
        self.failures[key] = n + 1
        return max(exponential_delay(n), self.bucket.delay(now))

    def add_rate_limited(self, key: str, now: int) -> None:
        """Q5: ``AddRateLimited``."""
        self.add_after(key, self.when(key, now), now)

    def forget(self, key: str) -> None:
        """Q5: ``Forget`` (the bucket forgets nothing)."""
        self.failures.pop(key, None)

    def next_due(self) -> int | None:
        """The earliest instant a waiting key is due, if any."""
        return min((due for due, _ in self.waiting.values()), default=None)

    def release(self, now: int) -> None:
        """Q2: add the keys due by ``now``, in the order their times were set."""
        due = sorted((order, key) for key, (at, order) in self.waiting.items() if at <= now)
        for _, key in due:
            del self.waiting[key]
            self.add(key)
