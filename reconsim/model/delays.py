"""Delays as measured distributions: exact integer inverse-CDF tables.

A copy's ledger delay is ``G + Y`` and its startup ``B + X``. ``X`` and ``Y`` are drawn
from a *delay table*: integer weights ``w_0 … w_m`` (each ≥ 1, total ``T``) over seconds
``v_0 < … < v_m``. Draw ``k`` of a stream takes ``r = splitmix64(counter) % T`` — the
same number :func:`reconsim.model.rng.uniform` gives with ``n = T``, on the same stream
(:data:`~reconsim.model.rng.STARTUP` or :data:`~reconsim.model.rng.LEDGER_DELAY`) and
counter (copy k) — and gives ``v_i`` for the smallest ``i`` whose cumulative weight
``w_0 + … + w_i`` is above ``r``. A uniform spread ``G_spread = s`` is the table of
``0 … s`` with weight 1 each (T = s + 1, ``v_r = r``): the same draw, the same numbers.

A spec writes a table (``[delays.NAME]``) in one of four forms, every second an integer:

* ``samples = [5, 7, 12, …]`` — each sample weighs 1: a value's weight is its count;
* ``csv = "file.csv"`` — the same, the samples read from a file of one column, a sample a
  line (relative to the spec's folder; a first line with a letter in it is a header);
* ``histogram = [[seconds, weight], …]`` — the weights as given (positive integers, each
  second once, in any order);
* ``quantiles = {p50 = 12, p90 = 25, p99 = 40, max = 60}`` — see :func:`from_quantiles`
  (``max`` optional).

A cell takes the same forms as a mapping of one of them (``{"quantiles": {"p50": 12}}``,
:func:`from_spec_table`, a ``csv`` path relative to the current folder) or the compiled
table itself.

Readings of a table, exact: :func:`lowest`, :func:`worst`, :func:`mean` (a
:class:`~fractions.Fraction`), :func:`quantile` (at a level in parts per million).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path, PurePath
from typing import Any, Final

from reconsim.model import rng
from reconsim.model.kinds import MAX_DELAY_WEIGHT, MAX_EVENTS, MAX_SECONDS, shown

#: A delay table: (seconds, weight) pairs, seconds strictly increasing, weights >= 1.
Table = tuple[tuple[int, int], ...]
#: Parts per million: the resolution of a quantile level, and a quantile table's total.
PPM: Final = 10**6
#: The forms a ``[delays.NAME]`` table may take (exactly one of them).
FORMS: Final = ("samples", "csv", "quantiles", "histogram")
_LEVEL = re.compile(r"p(\d{1,2})(?:\.(\d{1,4}))?")


def spread_table(spread: int) -> Table:
    """The table of a uniform spread: ``0 … spread``, weight 1 each.

    >>> spread_table(3)
    ((0, 1), (1, 1), (2, 1), (3, 1))
    """
    return tuple((v, 1) for v in range(spread + 1))


def total(table: Table) -> int:
    """The table's total weight ``T``."""
    return sum(w for _, w in table)


def pick(table: Table, r: int) -> int:
    """The value ``v_i`` for the smallest ``i`` whose cumulative weight is above ``r``
    (``0 <= r < T``).

    >>> [pick(((2, 1), (5, 3)), r) for r in range(4)]
    [2, 5, 5, 5]
    """
    cumulative = 0
    for value, weight in table:
        cumulative += weight
        if cumulative > r:
            return value
    raise ValueError(f"r = {r} is not below the table's total {cumulative}")


def draw(table: Table, seed: int, stream: int, k: int) -> int:
    """Draw ``k`` of ``stream`` from ``table``: :func:`pick` of ``splitmix64(counter) % T``.

    >>> chain = from_quantiles({"p50": 12, "p90": 25, "p99": 40, "max": 60})
    >>> [draw(chain, 7, rng.LEDGER_DELAY, k) for k in range(8)]
    [9, 0, 12, 1, 9, 0, 25, 3]
    >>> all(draw(spread_table(5), 7, rng.STARTUP, k) == rng.uniform(7, rng.STARTUP, k, 6)
    ...     for k in range(100))
    True
    """
    return pick(table, rng.uniform(seed, stream, k, total(table)))


def extra(table: Table, spread: int, seed: int, stream: int, k: int) -> int:
    """Copy k's extra delay: drawn from ``table`` when it has entries, else uniform in
    ``0 … spread`` (:func:`reconsim.model.rng.uniform`)."""
    if table:
        return draw(table, seed, stream, k)
    return rng.uniform(seed, stream, k, spread + 1)


def lowest(table: Table) -> int:
    """The table's smallest value."""
    return table[0][0]


def worst(table: Table) -> int:
    """The table's largest value."""
    return table[-1][0]


def mean(table: Table) -> Fraction:
    """The table's mean, exactly: ``sum(v_i w_i) / T``.

    >>> mean(((0, 1), (3, 1))), mean(spread_table(27))
    (Fraction(3, 2), Fraction(27, 2))
    """
    return Fraction(sum(v * w for v, w in table), total(table))


def quantile(table: Table, level_ppm: int) -> int:
    """The table's quantile at ``level_ppm`` parts per million (0 < level <= 10⁶): the
    smallest ``v_i`` with ``cumulative_i x 10⁶ >= level x T``, in integers.

    >>> chain = from_quantiles({"p50": 12, "p90": 25, "p99": 40, "max": 60})
    >>> [quantile(chain, p) for p in (500_000, 900_000, 990_000, 1_000_000)]
    [12, 25, 40, 60]
    >>> quantile(spread_table(27), 990_000)
    27
    """
    whole, cumulative = total(table), 0
    for value, weight in table:
        cumulative += weight
        if cumulative * PPM >= level_ppm * whole:
            return value
    return worst(table)


def level_ppm(key: str) -> int | None:
    """A quantile key's level in parts per million: ``pNN`` or ``pNN.DDDD`` with
    0 < NN.DDDD < 100, read from its digits (no float); None for any other key.

    >>> level_ppm("p50"), level_ppm("p99.9"), level_ppm("p0"), level_ppm("median")
    (500000, 999000, None, None)
    """
    match = _LEVEL.fullmatch(key)
    if match is None:
        return None
    ppm = int(match.group(1)) * 10**4 + int((match.group(2) or "").ljust(4, "0"))
    return ppm if 0 < ppm < PPM else None


def _seconds(where: str, value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: {what} {shown(value)} is not a whole number of seconds "
                         "(integers only)")
    if not 0 <= value <= MAX_SECONDS:
        raise ValueError(f"{where}: {what} {shown(value)} is not in [0, {MAX_SECONDS}] seconds")
    return value


def _checked(where: str, table: Table) -> Table:
    """``table``, refused when it has more entries or weight than a table may hold."""
    if len(table) > MAX_EVENTS:
        raise ValueError(f"{where}: {len(table):,} distinct seconds, more than the "
                         f"{MAX_EVENTS:,} a delay table may hold")
    if total(table) > MAX_DELAY_WEIGHT:
        raise ValueError(f"{where}: total weight {total(table):,} is more than the "
                         f"{MAX_DELAY_WEIGHT:,} a delay table may hold")
    return table


def from_samples(samples: Any, where: str = "samples") -> Table:
    """The table of measured samples: each distinct second weighs its count.

    >>> from_samples([12, 5, 12, 40])
    ((5, 1), (12, 2), (40, 1))
    """
    if isinstance(samples, (str, bytes)) or not isinstance(samples, Iterable):
        raise ValueError(f"{where}: must be a list of seconds, got {shown(samples)}")
    values = [_seconds(where, s, "sample") for s in samples]
    if not values:
        raise ValueError(f"{where}: empty list (a distribution needs a sample at least)")
    return _checked(where, tuple(sorted(Counter(values).items())))


def from_csv(path: Path, where: str = "csv") -> Table:
    """The table of the samples in a file of one column (see the module)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ValueError(f"{where}: no such file {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: cannot read {str(path)!r}: {exc}") from None
    samples: list[int] = []
    for number, line in enumerate(lines, 1):
        text = line.strip().strip('"').strip()
        if not text or (number == 1 and any(c.isalpha() for c in text)):
            continue  # a blank line, or the header
        if "," in text:
            raise ValueError(f"{where}: {path.name} line {number}: {shown(line)} has more "
                             "than one column")
        if not re.fullmatch(r"\+?\d+", text):
            raise ValueError(f"{where}: {path.name} line {number}: {shown(text)} is not a "
                             "whole number of seconds (integers only)")
        samples.append(_seconds(f"{where}: {path.name} line {number}", int(text), "sample"))
    if not samples:
        raise ValueError(f"{where}: {path.name} holds no samples")
    return from_samples(samples, where)


def from_histogram(pairs: Any, where: str = "histogram") -> Table:
    """The table of ``[seconds, weight]`` pairs: the weights as given.

    >>> from_histogram([[12, 3], [5, 1]])
    ((5, 1), (12, 3))
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ValueError(f"{where}: must be a list of [seconds, weight] pairs, "
                         f"got {shown(pairs)}")
    weights: dict[int, int] = {}
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"{where}: each entry must be [seconds, weight], got {shown(pair)}")
        value = _seconds(where, pair[0], "second")
        weight = pair[1]
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ValueError(f"{where}: weight {shown(weight)} of second {value} is not a "
                             "positive integer")
        if value in weights:
            raise ValueError(f"{where}: second {value} is listed twice")
        weights[value] = weight
    if not weights:
        raise ValueError(f"{where}: empty list (a distribution needs an entry at least)")
    return _checked(where, tuple(sorted(weights.items())))


def from_quantiles(points: Any, where: str = "quantiles") -> Table:
    """The table of quantile points, piecewise uniform between them, in parts per million.

    Keys: levels ``pNN`` or ``pNN.DDDD`` (:func:`level_ppm`), ``min`` (optional, default 0:
    the smallest delay, added to ``G`` or ``B`` as every table is) and ``max`` (optional:
    the largest delay), each a whole number of seconds, non-decreasing with the level; a
    level or ``max`` at least. Two keys of one level (``p50`` and ``p50.0``) are refused,
    naming both.
    With the points sorted, ``(P_0 = 0, min), (P_1, q_1), …, (10⁶, max)``, segment j
    carries the mass ``m = P_{j+1} - P_j`` ppm over its seconds: ``min … q_1`` for the
    first (both ends), ``q_j + 1 … q_{j+1}`` for the others, ``n`` seconds; the i-th of
    them (i = 1 … n) weighs ``floor(m·i / n) - floor(m·(i-1) / n)``, so the segment sums to
    m exactly; a segment of no width (``q_j = q_{j+1}``) puts m on ``q_j``. Seconds of
    weight 0 are left out. The total is 10⁶, and ``P(delay <= q_j)`` is exactly ``P_j``.

    Without ``max`` the tail follows the last segment: the quantile function goes on along
    the straight line through the highest level ``(P_k, q_k)`` and the point before it
    (``min`` at level 0), to ``max = q_k + ceil((q_k - q_{k-1}) · (10⁶ - P_k) / (P_k - P_{k-1}))``
    at 10⁶ ppm, rounded up to a whole second (``q_k`` itself when that segment has no
    width). A measured tail longer than that needs its ``max``.

    A segment weighs ``min(n, m)`` of its seconds, and a table holds at most
    :data:`~reconsim.model.kinds.MAX_EVENTS` (10,000): points further apart are refused
    before the table is built, naming the widest segment (a histogram on fewer seconds
    stands in for them); so is a tail that would reach beyond
    :data:`~reconsim.model.kinds.MAX_SECONDS`.

    >>> from_quantiles({"p50": 2, "max": 4})
    ((0, 166666), (1, 166667), (2, 166667), (3, 250000), (4, 250000))
    >>> from_quantiles({"p50": 2}) == from_quantiles({"p50": 2, "max": 4})
    True
    >>> worst(from_quantiles({"p50": 5, "p90": 20, "p99": 60}))  # 60 + ceil(40 x 1/9)
    65
    >>> from_quantiles({"min": 3, "p90": 3, "max": 5})
    ((3, 900000), (4, 50000), (5, 50000))
    """
    if not isinstance(points, Mapping):
        raise ValueError(f"{where}: must be a table of levels and seconds "
                         f"({{p50 = 12, p99 = 40, max = 60}}), got {shown(points)}")
    levels = _levels(points, where)
    if not levels and "max" not in points:
        raise ValueError(f"{where}: no level and no max (give p50 = … at least; max is "
                         "optional)")
    low = _seconds(f"{where}.min", points.get("min", 0), "quantile")
    # (level in ppm, seconds, the point as a message names it)
    chain = [(0, low, f"min = {low}"),
             *((p, v, f"p{_shown_level(p)} = {v}") for p, v in sorted(levels))]
    if "max" in points:
        high = _seconds(f"{where}.max", points["max"], "quantile")
        chain.append((PPM, high, f"max = {high}"))
    for (_, v0, point0), (_, v1, point1) in itertools.pairwise(chain):
        if v1 < v0:
            raise ValueError(f"{where}: quantiles must not decrease, got {point0} above "
                             f"{point1}")
    if "max" not in points:
        chain.append(_tail(where, chain))
    segments = [(p1 - p0, v0 if j == 0 else v0 + 1, v0, v1, f"{point0} … {point1}")
                for j, ((p0, v0, point0), (p1, v1, point1))
                in enumerate(itertools.pairwise(chain))]
    _refuse_wide(where, segments)
    weights: dict[int, int] = {}
    for mass, first, v0, v1, _ in segments:
        if v1 < first:  # no width: an atom at v0
            weights[v0] = weights.get(v0, 0) + mass
            continue
        n = v1 - first + 1
        for i in range(1, n + 1):
            weights[first + i - 1] = weights.get(first + i - 1, 0) + (
                mass * i // n - mass * (i - 1) // n)
    return tuple((v, w) for v, w in sorted(weights.items()) if w > 0)


def _levels(points: Mapping[Any, Any], where: str) -> list[tuple[int, int]]:
    """The quantile points' levels, (ppm, seconds) in the order given, checked."""
    levels: list[tuple[int, int]] = []
    keys: dict[int, str] = {}  # the key that gave each level
    for key, value in points.items():
        if key in ("min", "max"):
            continue
        ppm = level_ppm(key) if isinstance(key, str) else None
        if ppm is None:
            raise ValueError(f"{where}.{key}: unknown key (levels are p1 … p99.9999, besides "
                             "min and max)")
        if ppm in keys:
            raise ValueError(f"{where}: {keys[ppm]} and {key} are the same level "
                             f"({ppm:,} ppm); give it once")
        if isinstance(value, Mapping):  # TOML reads a bare p99.9 = 40 as {p99 = {9 = 40}}
            quoted = next((f'"{key}.{k}" = {shown(v)}' for k, v in value.items()),
                          f'"{key}.9" = 40')
            raise ValueError(f"{where}.{key}: {shown(value)} is a table, not seconds: a level "
                             f"with a decimal point goes in quotes ({quoted})")
        keys[ppm] = key
        levels.append((ppm, _seconds(f"{where}.{key}", value, "quantile")))
    return levels


def _tail(where: str, chain: list[tuple[int, int, str]]) -> tuple[int, int, str]:
    """The point ``max`` at 10⁶ ppm on the line through the chain's last two points, rounded
    up (:func:`from_quantiles`)."""
    (p0, v0, point0), (p1, v1, point1) = chain[-2:]
    high = v1 - (v0 - v1) * (PPM - p1) // (p1 - p0)
    if high > MAX_SECONDS:
        raise ValueError(f"{where}: max not given, and the line through {point0} and "
                         f"{point1} reaches {high:,} s at p100, beyond the {MAX_SECONDS:,} a "
                         "delay may be; give max")
    return PPM, high, f"max = {high} (extrapolated)"


def _refuse_wide(where: str, segments: list[tuple[int, int, int, int, str]]) -> None:
    """Refuse quantile segments ``(mass, first, v0, v1, points)`` that would weigh more
    distinct seconds than a table holds: a segment of width weighs ``min(n, mass)`` of its
    ``n`` seconds (every one when its mass is at least n, else ``mass`` of them), and a
    segment of no width the second its neighbour below already weighs."""
    weighed = [min(v1 - first + 1, mass) if v1 >= first else 0
               for mass, first, _, v1, _ in segments]
    if sum(weighed) <= MAX_EVENTS:
        return
    widest = max(range(len(segments)), key=weighed.__getitem__)
    raise ValueError(f"{where}: {sum(weighed):,} distinct seconds, more than the "
                     f"{MAX_EVENTS:,} a delay table may hold: quantiles weigh every second "
                     f"between their points, and {segments[widest][4]} alone weighs "
                     f"{weighed[widest]:,}; give a histogram on at most {MAX_EVENTS:,} "
                     "seconds for delays this wide")


def _shown_level(ppm: int) -> str:
    whole, part = divmod(ppm, 10**4)
    return f"{whole}" if not part else f"{whole}.{str(part).rjust(4, '0').rstrip('0')}"


def from_spec_table(table: Any, where: str, base: Path) -> Table:
    """A ``[delays.NAME]`` table of a spec, compiled; ``csv`` paths relative to ``base``.
    Raises ``ValueError`` naming the field and the value.

    The one reading of a table's forms: a cell's mapping (``Cell(G_delays={"samples":
    [3, 5, 8]})``, ``base`` the current folder) and ``reconsim run``'s ``--G_delays
    p50=5,p90=20`` (as that mapping) come here too.

    >>> from_spec_table({"histogram": [[9, 1], [0, 3]]}, "G_delays", Path())
    ((0, 3), (9, 1))
    """
    if not isinstance(table, Mapping):
        raise ValueError(f"{where} must be a table, got {shown(table)}")
    forms = [f for f in FORMS if f in table]
    unknown = [k for k in table if k not in FORMS]
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(FORMS)})")
    if len(forms) != 1:
        raise ValueError(f"{where} needs exactly one of {', '.join(FORMS)}, got keys "
                         f"{sorted(table)}")
    form = forms[0]
    value = table[form]
    inner = f"{where}.{form}"
    if form == "samples":
        return from_samples(value, inner)
    if form == "histogram":
        return from_histogram(value, inner)
    if form == "quantiles":
        return from_quantiles(value, inner)
    if not isinstance(value, (str, PurePath)) or not str(value):
        raise ValueError(f"{inner}: must be a file name, got {shown(value)}")
    return from_csv(base / value, inner)
