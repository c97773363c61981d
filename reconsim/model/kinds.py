"""The kinds of parameter a cell is made of, and the bounds that keep every figure exact.

A :class:`Kind` says in one place what a value of it may be: the dtype of its column, its
value check, its column check, its command-line flag and the integer arrays the kernels
read (:class:`Int`, :class:`IntOrParam`, :class:`Cap`, :class:`Choice`, :class:`Thousandths`,
:class:`Flag`, :class:`Times`, and the record lists :class:`Events`, :class:`Windows`,
:class:`Faults`, :class:`Delays`).
The parameters themselves are declared in :mod:`reconsim.model.params` (the world's) and
by each controller (:mod:`reconsim.model.controllers`).
"""

from __future__ import annotations

import argparse
import itertools
import math
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, NoReturn

import numpy as np
import polars as pl

from reconsim.words import plural

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: Spelling of "no cap" for ``max_per_round`` in specs and on the command line.
UNLIMITED: Final = "unlimited"
#: A death schedule: (at, count) events; at second ``at`` the ``count`` oldest live copies die.
Deaths = tuple[tuple[int, int], ...]
#: The polars dtype of a death schedule column.
DEATHS_DTYPE: Final = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64}))
#: Kinds of scripted create faults: nothing is created, or the reply is lost.
FAULT_KINDS: Final = ("fail", "lost")

#: How far from a whole number of thousandths a float may be and still count as one.
THOUSANDTHS_TOLERANCE: Final = 1e-9

# Upper bounds that keep every figure exact (docs/model.md, "Bounds"). A cell runs R <= duration + 1
# rounds and creates at most `desired` copies a round, so at most C = R x desired copies exist,
# are live or are listed; the largest metrics are sums of such counts over rounds or seconds:
# reads <= R x (C + ledger_base), delete commands <= R x C, excess copy-seconds
# <= (duration + 1) x C. With every duration at most MAX_SECONDS and every count at most
# MAX_COPIES they stay below (10**6 + 1)**2 x (10**6 + 2) ~ 1.0e18, a ninth of int64's
# 9.2e18; the kernel's scratch for one cell is 32 bytes a round: 32 MB at most.
# New parameters take the bound of what they are: seconds, copies, or list entries.
#: Bound of every parameter counted in seconds: durations, periods, delays, ttl, event times.
MAX_SECONDS: Final = 10**6
#: Bound of every parameter counted in copies: desired, ledger_base, caps, a death's count.
MAX_COPIES: Final = 10**6
#: Bound of one cell's list: death events, restart times. The kernel sorts each cell's list by
#: insertion (quadratic in the worst order): 10**4 entries in reverse take ~50 ms.
MAX_EVENTS: Final = 10**4
#: Bound of a delay table's total weight (reconsim.model.delays): a draw is a number mod the
#: total, and the law's mean reads sums of value x weight in 128-bit integers.
MAX_DELAY_WEIGHT: Final = 10**9


class _Shown(reprlib.Repr):
    """reprlib with integers of any size (``repr`` refuses beyond 4,300 digits)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() <= 200:
            return repr(x)
        digits = int(x.bit_length() * math.log10(2)) + 1
        return f"{'-' if x < 0 else ''}<an integer of about {digits:,} digits>"


_SHOWN = _Shown()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxtuple, _SHOWN.maxdict = 3, 8, 8, 6
_SHOWN.maxstring, _SHOWN.maxother = 80, 80


def shown(value: Any) -> str:
    """A value as an error message shows it: its repr, shortened, on one line.

    >>> shown(10**5000), shown(list(range(20)))
    ('<an integer of about 5,001 digits>', '[0, 1, 2, 3, 4, 5, 6, 7, ...]')
    """
    return _SHOWN.repr(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Kind(ABC):
    """What a kind of parameter is, in one place: the dtype of its column, its value check,
    its column check, its command-line flag, and the integer arrays the kernel reads.

    Column checks run in one pass over a frame: :meth:`stats` gives expressions (aliased
    ``NAME:...``) whose values :meth:`check_stats` then judges.
    """

    #: A null is a value of this kind (a cap's "unlimited"), not a missing one.
    null_is_value: ClassVar[bool] = False
    #: What a null stands in for, in the message about one, and what to write instead.
    null_noun: ClassVar[str] = "value"
    null_hint: ClassVar[str] = ""

    @property
    @abstractmethod
    def dtype(self) -> pl.DataType:
        """The polars dtype of the column."""

    @abstractmethod
    def check(self, name: str, value: Any) -> Any:
        """Return ``value`` normalised; raise ``ValueError`` naming ``name`` and the value."""

    @abstractmethod
    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        """Raise ``ValueError`` when a column of ``dtype`` cannot hold this kind."""

    @abstractmethod
    def stats(self, name: str) -> list[pl.Expr]:
        """One-pass statistics of column ``name`` that :meth:`check_stats` judges."""

    @abstractmethod
    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        """Raise ``ValueError`` naming ``name`` and a bad value the statistics reveal."""

    @abstractmethod
    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        """The checked column as the kernel's flat arrays, keyed by keyword."""

    #: The kernel reads one integer a cell (:meth:`code`), not a list.
    scalar: ClassVar[bool] = False

    def code(self, value: Any) -> int:
        """A scalar kind's checked ``value`` (None: null) as the integer the kernel reads,
        the one value of :meth:`arrays` of a one-row column holding it."""
        raise TypeError(f"{type(self).__name__} is not a scalar kind")

    def value_arrays(self, name: str, value: Any) -> dict[str, NDArray[Any]]:
        """One cell's checked ``value`` (None: null, where the parameter does not apply) as
        the kernel's arrays, equal to :meth:`arrays` of a one-row column holding it. This
        builds that column; the kinds below build the arrays straight from the value."""
        if self.scalar:
            return {name: np.array([self.code(value)], np.int64)}
        column = pl.Series(name, [None if value is None else self.to_column(value)],
                           dtype=self.dtype)
        return self.arrays(name, column)

    @abstractmethod
    def argument(self, help: str, default: Any) -> dict[str, Any]:
        """Keyword arguments of ``argparse``'s ``add_argument`` for this parameter's flag."""

    def from_flag(self, given: Any, default: Any) -> Any:
        """The value of a parsed flag (repeatable flags arrive as lists of parsed lists)."""
        return given

    def to_column(self, value: Any) -> Any:
        """A checked value as the column holds it."""
        return value

    def from_column(self, value: Any) -> Any:
        """A value of the column as a cell takes it (the inverse of :meth:`to_column`)."""
        return value


@dataclass(frozen=True)
class Int(Kind):
    """An integer in [minimum, maximum] (no maximum: unbounded above); Int64."""

    minimum: int = 0
    maximum: int | None = None

    @property
    def dtype(self) -> pl.DataType:
        return pl.Int64()

    def range(self) -> str:
        """The allowed values, in words."""
        if self.maximum is None:
            return f">= {self.minimum}"
        return f"in [{self.minimum}, {self.maximum}]"

    def _fail(self, name: str, value: Any, extra: str = "") -> NoReturn:
        raise ValueError(f"{name} must be an integer {self.range()}{extra}, got {shown(value)}")

    def check(self, name: str, value: Any) -> Any:
        if not _is_int(value) or value < self.minimum or (
                self.maximum is not None and value > self.maximum):
            self._fail(name, value)
        return int(value)

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not dtype.is_integer():
            raise ValueError(f"{name}: column must hold integers, got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        return [col.min().alias(f"{name}:min"), col.max().alias(f"{name}:max")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series,
                    extra: str = "") -> None:
        lowest, highest = row[f"{name}:min"], row[f"{name}:max"]
        if lowest is not None and lowest < self.minimum:
            self._fail(name, lowest, extra)
        if highest is not None and self.maximum is not None and highest > self.maximum:
            self._fail(name, highest, extra)

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        return {name: column.fill_null(0).to_numpy()}

    scalar: ClassVar[bool] = True

    def code(self, value: Any) -> int:
        return 0 if value is None else int(self.to_column(value))

    def outside(self, values: pl.Expr) -> pl.Expr:
        """Which of ``values`` (integers) lie outside the allowed range."""
        if self.maximum is None:
            return values < self.minimum
        return (values < self.minimum) | (values > self.maximum)

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"type": int, "metavar": "N", "default": default,
                "help": f"{help} (default {default}; {self.range()})"}


#: How the column of an :class:`IntOrParam` holds the parameter's name: an integer no value
#: of the kind can be, so that the column stays Int64.
NAMED: Final = -1


@dataclass(frozen=True)
class IntOrParam(Int):
    """An :class:`Int`, or the literal name of another parameter of the cell (``param``),
    whose value it then takes: ``initial = "desired"``. A cell keeps the name; its column
    holds :data:`NAMED` (-1) for it, and the kernels' arrays hold the other parameter's
    value in those rows (:func:`reconsim.model.simulate.kernel_inputs` resolves it)."""

    param: str = ""

    def range(self) -> str:
        return f"{super().range()} or {self.param!r}"

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, str) and value == self.param:
            return value
        return super().check(name, value)

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        values = col.filter(col != NAMED)
        return [values.min().alias(f"{name}:min"), values.max().alias(f"{name}:max"),
                col.filter(col < NAMED).min().alias(f"{name}:below")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series,
                    extra: str = "") -> None:
        if row[f"{name}:below"] is not None:
            self._fail(name, row[f"{name}:below"], f" ({NAMED} in a column)")
        super().check_stats(name, row, column, f" ({NAMED} in a column)")

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"type": self.parse, "metavar": "N", "default": default,
                "help": f"{help} (default {default}; {self.range()})"}

    def parse(self, text: str) -> int | str:
        """Parse the flag: an integer, or the other parameter's name (checked later).

        >>> IntOrParam(param="desired").parse("desired"), IntOrParam().parse("3")
        ('desired', 3)
        """
        word = text.strip()
        if word == self.param:
            return word
        try:
            return int(word)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer or {self.param!r}, got {shown(text)}") from None

    def to_column(self, value: Any) -> Any:
        return NAMED if value == self.param else value

    def from_column(self, value: Any) -> Any:
        return self.param if value == NAMED else value

    def resolve(self, values: NDArray[Any], other: NDArray[Any]) -> NDArray[Any]:
        """The kernel's array: ``values``, with the other parameter's (``other``) where
        they hold :data:`NAMED`."""
        return np.where(values == NAMED, other, values)


@dataclass(frozen=True)
class IntOrPercent(Kind):
    """A count, or a percentage of a count the world resolves it against (Kubernetes'
    ``IntOrString``, as a rolling update's ``maxSurge`` and ``maxUnavailable``): an
    integer in [0, ``maximum``], or ``"P%"`` with an integer P in [0, ``max_percent``].
    String column, ``"3"`` or ``"25%"``; the kernel reads the number (``NAME``) and
    whether it is a percentage (``NAME_percent``, 0 or 1)."""

    maximum: int = MAX_COPIES
    max_percent: int = 100

    @property
    def dtype(self) -> pl.DataType:
        return pl.String()

    def range(self) -> str:
        """The allowed values, in words."""
        return (f"an integer in [0, {self.maximum}] or a percentage 'P%', P in "
                f"[0, {self.max_percent}]")

    def _fail(self, name: str, value: Any) -> NoReturn:
        raise ValueError(f"{name} must be {self.range()}, got {shown(value)}")

    def check(self, name: str, value: Any) -> Any:
        if _is_int(value):
            if not 0 <= value <= self.maximum:
                self._fail(name, value)
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            number = text[:-1] if text.endswith("%") else text
            if number.isascii() and number.isdigit():
                if not text.endswith("%"):
                    return self.check(name, int(number))
                if int(number) <= self.max_percent:
                    return f"{int(number)}%"
        return self._fail(name, value)

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
            raise ValueError(f"{name}: column must be strings ('3', '25%'), got dtype {dtype}")

    @staticmethod
    def parts(col: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
        """Whether each value of a column of this kind has the form, its number (null where
        it has not), whether it is a percentage."""
        text = col.cast(pl.String)
        return (text.str.contains(r"^[0-9]{1,12}%?$"),
                text.str.strip_chars_end("%").cast(pl.Int64, strict=False),
                text.str.ends_with("%"))

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        well_formed, number, percent = self.parts(col)
        bad = ~well_formed | (percent & (number > self.max_percent)) | (
            ~percent & (number > self.maximum))
        return [col.filter(bad.fill_null(False)).first().alias(f"{name}:bad")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:bad"] is not None:
            self._fail(name, row[f"{name}:bad"])

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        _, number, percent = self.parts(pl.col("v"))
        frame = column.to_frame("v").select(number.fill_null(0).alias("n"),
                                            percent.fill_null(False).cast(pl.Int64).alias("p"))
        return {name: frame["n"].to_numpy(), f"{name}_percent": frame["p"].to_numpy()}

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        # (argparse formats a help with %: a percent sign is written %%)
        return {"type": self.parse, "metavar": "N|P%", "default": default,
                "help": f"{help} (default {default}; {self.range()})".replace("%", "%%")}

    def parse(self, text: str) -> int | str:
        """Parse the flag: ``3`` or ``25%``.

        >>> IntOrPercent().parse("25%"), IntOrPercent().parse("3")
        ('25%', 3)
        """
        try:
            return self.check("value", text)  # type: ignore[no-any-return]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {self.range()}, got {shown(text)}") from None

    def to_column(self, value: Any) -> Any:
        return str(value)

    def from_column(self, value: Any) -> Any:
        return value if value is None or value.endswith("%") else int(value)


@dataclass(frozen=True)
class Cap(Int):
    """A limit: an integer >= minimum (at least 1), or no limit (None, ``"unlimited"``,
    null in a column, 0 for the kernel)."""

    minimum: int = 1
    null_is_value: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.minimum < 1:  # the kernel reads 0 as "no limit"
            raise ValueError(f"a cap's minimum must be >= 1, got {self.minimum}")

    def check(self, name: str, value: Any) -> Any:
        if value is None or value == UNLIMITED:
            return None
        if not _is_int(value) or value < self.minimum or (
                self.maximum is not None and value > self.maximum):
            self._fail(name, value, f" or {UNLIMITED!r}")
        return int(value)

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series,
                    extra: str = "") -> None:
        super().check_stats(name, row, column, f" or null ({UNLIMITED})")

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"type": self.parse, "metavar": "N", "default": default,
                "help": f"{help} (default {UNLIMITED})"}

    def parse(self, text: str) -> int | None:
        """Parse a cap from the command line: a positive integer, or ``unlimited``.

        >>> Cap().parse("3"), Cap().parse("unlimited")
        (3, None)
        """
        if text.strip().lower() == UNLIMITED:
            return None
        if not text.strip().isdigit() or int(text) < self.minimum:
            raise argparse.ArgumentTypeError(f"expected a positive integer or {UNLIMITED!r}, "
                                             f"got {shown(text)}")
        return int(text)


@dataclass(frozen=True)
class Choice(Kind):
    """One of a fixed list of names; String. The kernel reads its index in the list."""

    choices: tuple[str, ...]

    @property
    def dtype(self) -> pl.DataType:
        return pl.String()

    def _fail(self, name: str, value: Any) -> NoReturn:
        raise ValueError(f"{name} must be one of {', '.join(self.choices)}; got {shown(value)}")

    def check(self, name: str, value: Any) -> Any:
        if value not in self.choices:
            self._fail(name, value)
        return str(value)

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
            raise ValueError(f"{name}: column must be strings, got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        return [col.filter(~col.cast(pl.String).is_in(list(self.choices)))
                .first().alias(f"{name}:bad_choice")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:bad_choice"] is not None:
            self._fail(name, row[f"{name}:bad_choice"])

    def outside(self, values: pl.Expr) -> pl.Expr:
        """Which of ``values`` (names) are not among the choices."""
        return ~values.cast(pl.String).is_in(list(self.choices))

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        # (an enum's codes are the choices' indices: a cast, not a lookup per value)
        codes = column.cast(pl.String).cast(pl.Enum(self.choices)).to_physical()
        return {name: codes.cast(pl.Int64).fill_null(0).to_numpy()}

    scalar: ClassVar[bool] = True

    def code(self, value: Any) -> int:
        return 0 if value is None else self.choices.index(value)

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"choices": self.choices, "default": default,
                "help": f"{help} (default {default})"}


@dataclass(frozen=True)
class Thousandths(Kind):
    """A number in a range, a multiple of 0.001, computed as an exact integer count of
    thousandths (the kernel reads that count); Float64. ``open_below`` excludes the minimum.
    """

    minimum: float = 0.0
    maximum: float = 1.0
    open_below: bool = False

    @property
    def dtype(self) -> pl.DataType:
        return pl.Float64()

    def _fail(self, name: str, value: Any) -> NoReturn:
        low = "(" if self.open_below else "["
        raise ValueError(f"{name} must be a multiple of 0.001 in {low}{self.minimum:g}, "
                         f"{self.maximum:g}], got {shown(value)}")

    def check(self, name: str, value: Any) -> Any:
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (isinstance(value, float) and not math.isfinite(value))
                or (value <= self.minimum if self.open_below else value < self.minimum)
                or value > self.maximum
                or abs(value * 1000 - round(value * 1000)) > THOUSANDTHS_TOLERANCE):
            self._fail(name, value)
        return permille(value) / 1000

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not dtype.is_numeric():
            raise ValueError(f"{name}: column must hold numbers, got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        thousandths = col.cast(pl.Float64) * 1000
        off_grid = (thousandths - thousandths.round(0)).abs() > THOUSANDTHS_TOLERANCE
        below = col <= self.minimum if self.open_below else col < self.minimum
        return [col.filter(below | (col > self.maximum) | off_grid | col.cast(pl.Float64).is_nan())
                .first().alias(f"{name}:bad")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:bad"] is not None:
            self._fail(name, row[f"{name}:bad"])

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        thousandths = (column.cast(pl.Float64) * 1000).round(0).cast(pl.Int64)
        return {name: thousandths.fill_null(0).to_numpy()}

    scalar: ClassVar[bool] = True

    def code(self, value: Any) -> int:
        return 0 if value is None else permille(value)

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"type": float, "metavar": "X", "default": default,
                "help": f"{help} (default {default:g})"}


def _csr(lists: pl.Series) -> tuple[NDArray[Any], pl.Series]:
    """Offsets (one per row + 1) and the flattened elements of a list column without null
    elements; a null list counts as empty."""
    lengths = lists.list.len().fill_null(0).to_numpy()
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if not offsets[-1]:  # every list empty (no scale schedule, say): nothing to flatten
        return offsets, pl.Series(lists.name, [], dtype=lists.dtype.inner)  # type: ignore[attr-defined]
    return offsets, lists.fill_null([]).explode(empty_as_null=False)


def _offsets(n: int) -> NDArray[np.int64]:
    """The offsets of one cell's list of ``n`` entries."""
    return np.array([0, n], np.int64)


def _read_only(array: NDArray[np.int64]) -> NDArray[np.int64]:
    array.flags.writeable = False
    return array


#: One cell's empty list, as the kernel reads it: its offsets, and no values (shared, so
#: read-only).
_NO_OFFSETS: Final = _read_only(np.zeros(2, np.int64))
_NOTHING: Final = _read_only(np.zeros(0, np.int64))


def _check_length(name: str, n: int, maximum: int, what: str) -> None:
    if n > maximum:
        raise ValueError(f"{name}: {n} {what}, more than the {maximum} a cell may hold")


def _check_item(name: str, value: Any, maximum: int) -> int:
    """An integer in [0, maximum] of a list, or ``ValueError`` naming the range."""
    if not _is_int(value) or not 0 <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [0, {maximum}], got {shown(value)}")
    return int(value)


@dataclass(frozen=True)
class Times(Kind):
    """A list of at most ``max_len`` seconds, integers in [0, maximum]; list[Int64]."""

    maximum: int = MAX_SECONDS
    max_len: int = MAX_EVENTS

    @property
    def dtype(self) -> pl.DataType:
        return pl.List(pl.Int64)

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError(f"{name} must be a list of seconds, got {shown(value)}")
        times = tuple(value)
        _check_length(name, len(times), self.max_len, "times")
        for v in times:
            if not _is_int(v) or not 0 <= v <= self.maximum:
                raise ValueError(f"{name} must hold integers in [0, {self.maximum}], "
                                 f"got {shown(v)}")
        return times

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not (isinstance(dtype, pl.List) and dtype.inner.is_integer()):
            raise ValueError(f"{name}: column must be a list of integers, got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        col = pl.col(name)
        values = col.explode(empty_as_null=False)
        # an empty list explodes to nothing (empty_as_null=False), a null list to a null
        return [values.min().alias(f"{name}:min"), values.max().alias(f"{name}:max"),
                col.list.len().max().alias(f"{name}:len"),
                (values.is_null().sum() - col.is_null().sum()).alias(f"{name}:null_time")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:null_time"]:
            raise ValueError(f"{name}: null time in a list")
        if row[f"{name}:len"] is not None:
            _check_length(name, row[f"{name}:len"], self.max_len, "times")
        for extreme in ("min", "max"):
            value = row[f"{name}:{extreme}"]
            if value is not None and not 0 <= value <= self.maximum:
                raise ValueError(f"{name} must hold integers in [0, {self.maximum}], "
                                 f"got {shown(value)}")

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        offsets, values = _csr(column.cast(pl.List(pl.Int64)))
        return {f"{name}_offsets": offsets, name: values.to_numpy()}

    def value_arrays(self, name: str, value: Any) -> dict[str, NDArray[Any]]:
        if not value:
            return {f"{name}_offsets": _NO_OFFSETS, name: _NOTHING}
        return {f"{name}_offsets": _offsets(len(value)), name: np.array(value, np.int64)}

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        shown_default = ",".join(str(t) for t in default) if default else "none"
        return {"type": self.parse, "action": "extend", "nargs": "*", "metavar": "T",
                "help": f"{help}; repeat or comma-separate (default {shown_default})"}

    def from_flag(self, given: Any, default: Any) -> Any:
        return default if given is None else tuple(t for part in given for t in part)

    def to_column(self, value: Any) -> Any:
        return list(value)

    @staticmethod
    def parse(text: str) -> tuple[int, ...]:
        """Parse ``T[,T...]`` seconds; an empty string or ``none`` is no times.

        >>> Times.parse("310,620")
        (310, 620)
        """
        if text.strip().lower() in ("", "none"):
            return ()
        parts = [p.strip() for p in text.split(",")]
        bad = [p for p in parts if not p.isdigit()]
        if bad:
            raise argparse.ArgumentTypeError(
                f"expected non-negative integer seconds, got {bad[0]!r}")
        return tuple(int(p) for p in parts)


@dataclass(frozen=True)
class Events(Kind):
    """A death schedule: at most ``max_len`` (at, count) events, ``at`` in [0, max_at] and
    ``count`` in [0, max_count], kept in listed order; list[struct{at, count}]. A sweep
    names schedules (its ``schedule`` axis) and stores the name beside the events."""

    max_at: int = MAX_SECONDS
    max_count: int = MAX_COPIES
    max_len: int = MAX_EVENTS
    null_noun: ClassVar[str] = "schedule"
    null_hint: ClassVar[str] = " (use an empty list for none)"

    @property
    def dtype(self) -> pl.DataType:
        return DEATHS_DTYPE

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError(f"{name} must be a list of (at, count) pairs, got {shown(value)}")
        events = tuple(value)
        _check_length(name, len(events), self.max_len, "events")
        out: list[tuple[int, int]] = []
        for event in events:
            pair = (event.get("at"), event.get("count")) if isinstance(event, Mapping) else event
            try:
                at, count = pair
            except (TypeError, ValueError):
                raise ValueError(f"{name} event must be an (at, count) pair, "
                                 f"got {shown(event)}") from None
            out.append((_check_item(f"{name} event at", at, self.max_at),
                        _check_item(f"{name} event count", count, self.max_count)))
        return tuple(out)

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
                and {fld.name: fld.dtype.is_integer() for fld in dtype.inner.fields}
                == {"at": True, "count": True}):
            raise ValueError(f"{name}: column must be list[struct{{at, count}}] of integers, "
                             f"got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        events = pl.col(name).explode(empty_as_null=False)
        return [events.is_null().sum().alias(f"{name}:null_event"),
                pl.col(name).list.len().max().alias(f"{name}:len"),
                *(expr for part in ("at", "count") for expr in (
                    events.struct.field(part).min().alias(f"{name}:{part}:min"),
                    events.struct.field(part).max().alias(f"{name}:{part}:max"),
                    events.struct.field(part).is_null().sum().alias(f"{name}:{part}:nulls")))]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:null_event"]:
            bad = column.list.eval(pl.element().is_null()).list.any().arg_true()[0]
            raise ValueError(f"{name}: null event in row {bad}")
        if row[f"{name}:len"] is not None:
            _check_length(name, row[f"{name}:len"], self.max_len, "events")
        for part, maximum in (("at", self.max_at), ("count", self.max_count)):
            if row[f"{name}:{part}:nulls"]:  # no null events by now: a null field
                raise ValueError(f"{name} event {part}: null value")
            for extreme in ("min", "max"):
                if row[f"{name}:{part}:{extreme}"] is not None:
                    _check_item(f"{name} event {part}", row[f"{name}:{part}:{extreme}"], maximum)

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        offsets, events = _csr(column.cast(DEATHS_DTYPE))
        fields = events.struct.unnest()
        return {f"{name}_offsets": offsets, f"{name}_at": fields["at"].to_numpy(),
                f"{name}_count": fields["count"].to_numpy()}

    def value_arrays(self, name: str, value: Any) -> dict[str, NDArray[Any]]:
        if not value:
            return {f"{name}_offsets": _NO_OFFSETS, f"{name}_at": _NOTHING,
                    f"{name}_count": _NOTHING}
        return {f"{name}_offsets": _offsets(len(value)),
                f"{name}_at": np.array([at for at, _ in value], np.int64),
                f"{name}_count": np.array([count for _, count in value], np.int64)}

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        shown = ",".join(f"{a}:{c}" for a, c in default) or "none"
        return {"type": self.parse, "action": "extend", "nargs": "*", "metavar": "AT:COUNT",
                "help": f"{help}; repeat or comma-separate events, 'none' for no deaths "
                        f"(default {shown})"}

    def from_flag(self, given: Any, default: Any) -> Any:
        return default if given is None else tuple(e for part in given for e in part)

    def to_column(self, value: Any) -> Any:
        return [{"at": a, "count": n} for a, n in value]

    @staticmethod
    def parse(text: str) -> Deaths:
        """Parse ``AT:COUNT[,AT:COUNT...]``; an empty string or ``none`` is no deaths.

        >>> Events.parse("300:2,600:1")
        ((300, 2), (600, 1))
        """
        if text.strip().lower() in ("", "none"):
            return ()
        events = []
        for part in text.split(","):
            at, sep, count = part.strip().partition(":")
            if not sep or not at.strip().isdigit() or not count.strip().isdigit():
                raise argparse.ArgumentTypeError(
                    f"expected AT:COUNT with non-negative integers, got {part.strip()!r}")
            events.append((int(at), int(count)))
        return tuple(events)


@dataclass(frozen=True)
class Flag(Kind):
    """True or false; Boolean. The kernel reads 1 or 0."""

    @property
    def dtype(self) -> pl.DataType:
        return pl.Boolean()

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {shown(value)}")
        return value

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        if not isinstance(dtype, pl.Boolean):
            raise ValueError(f"{name}: column must hold booleans, got dtype {dtype}")

    def stats(self, name: str) -> list[pl.Expr]:
        return []  # every non-null boolean is a value; nulls are judged apart

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        return

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        return {name: column.fill_null(value=False).cast(pl.Int64).to_numpy()}

    scalar: ClassVar[bool] = True

    def code(self, value: Any) -> int:
        return int(bool(value))

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"action": argparse.BooleanOptionalAction, "default": default,
                "help": f"{help} (default {'on' if default else 'off'})"}


@dataclass(frozen=True)
class Records(Kind):
    """A schedule: a list of records kept in listed order, each field of its own kind
    (an :class:`Int` or a :class:`Choice`); list[struct]. ``increasing`` names two fields a
    record must hold in strictly increasing order; ``ascending`` a field whose values must
    increase strictly from record to record. The kernel reads offsets (one per row
    + 1) and one flat array per field, ``NAME_FIELD`` (a choice as its code). A sweep spec
    names schedules in tables ``[TABLE.NAME]`` holding their records under ``key``; its
    axis lists names (``none``, no records, is built in)."""

    noun: str
    fields: tuple[tuple[str, Int | Choice], ...]
    increasing: tuple[str, str] | None = None
    ascending: str = ""
    table: str = ""
    key: str = ""
    max_len: int = MAX_EVENTS
    #: The noun's plural where it is not the noun and an s (``entries``).
    nouns: str = ""
    null_noun: ClassVar[str] = "schedule"
    null_hint: ClassVar[str] = " (use an empty list for none)"

    @property
    def many(self) -> str:
        """The noun's plural: ``windows``, ``events``, ``entries``."""
        return plural(2, self.noun, self.nouns or None)

    @property
    def names(self) -> tuple[str, ...]:
        """The record's field names, in order."""
        return tuple(f for f, _ in self.fields)

    @property
    def dtype(self) -> pl.DataType:
        return pl.List(pl.Struct({f: kind.dtype for f, kind in self.fields}))

    def check(self, name: str, value: Any) -> Any:
        shape = "(" + ", ".join(self.names) + ")"
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError(f"{name} must be a list of {shape} records, got {shown(value)}")
        records = tuple(value)
        _check_length(name, len(records), self.max_len, self.many)
        out: list[tuple[Any, ...]] = []
        for record in records:
            raw = (tuple(record.get(f) for f in self.names) if isinstance(record, Mapping)
                   else record)
            try:
                values = tuple(raw)
            except TypeError:
                values = ()
            if len(values) != len(self.fields):
                raise ValueError(f"{name} {self.noun} must be {shape}, got {shown(record)}")
            checked = tuple(kind.check(f"{name} {self.noun} {f}", v)
                            for (f, kind), v in zip(self.fields, values, strict=True))
            if self.increasing is not None:
                low, high = (checked[self.names.index(f)] for f in self.increasing)
                if high <= low:
                    raise ValueError(f"{name} {self.noun} must have {self.increasing[0]} < "
                                     f"{self.increasing[1]}, got ({low}, {high})")
            if self.ascending and out:
                k = self.names.index(self.ascending)
                if checked[k] <= out[-1][k]:
                    raise ValueError(
                        f"{name} {self.noun} {self.ascending}: {self.many} must be listed "
                        f"in increasing {self.ascending}, got {out[-1][k]} then {checked[k]}")
            out.append(checked)
        return tuple(out)

    def check_dtype(self, name: str, dtype: pl.DataType) -> None:
        want = {f: isinstance(kind, Int) for f, kind in self.fields}
        if not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
                and {fld.name: fld.dtype.is_integer() for fld in dtype.inner.fields} == want
                and all(isinstance(fld.dtype, (pl.String, pl.Categorical, pl.Enum))
                        for fld in dtype.inner.fields if not want[fld.name])):
            raise ValueError(f"{name}: column must be list[struct{{{', '.join(self.names)}}}] "
                             f"of {self._field_types()}, got dtype {dtype}")

    def _field_types(self) -> str:
        return ", ".join(f"{f} {'integer' if isinstance(kind, Int) else 'string'}"
                         for f, kind in self.fields)

    def stats(self, name: str) -> list[pl.Expr]:
        records = pl.col(name).explode(empty_as_null=False)
        bad = records.is_null()
        for f, kind in self.fields:
            bad = bad | records.struct.field(f).is_null() | kind.outside(records.struct.field(f))
        if self.increasing is not None:
            low, high = self.increasing
            bad = bad | (records.struct.field(high) <= records.struct.field(low))
        # a null list explodes to a null record: the null check names it first
        out = [bad.fill_null(value=True).arg_true().first().alias(f"{name}:bad_record"),
               pl.col(name).list.len().max().alias(f"{name}:len")]
        if self.ascending:
            # Records in one run, each beside its row: a record not above the one before it
            # in the same row is out of order (flat expressions: a list.eval per row costs
            # ~1 us a row).
            lengths = pl.col(name).list.len().fill_null(0)
            row = pl.int_range(pl.len()).repeat_by(lengths).explode()
            value = pl.col(name).explode(empty_as_null=False).drop_nulls().struct.field(
                self.ascending)
            out.append(row.filter((value <= value.shift(1)) & (row == row.shift(1)))
                       .first().alias(f"{name}:unordered"))
        return out

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        if row[f"{name}:len"] is not None:
            _check_length(name, row[f"{name}:len"], self.max_len, self.many)
        index = row[f"{name}:bad_record"]
        if index is None:
            unordered = row.get(f"{name}:unordered")
            if unordered is not None:
                self.check(f"{name} (row {unordered})", column[unordered])  # raises
            return
        lengths = column.list.len().fill_null(1).to_numpy()  # a null list: one null record
        where = int(np.searchsorted(np.cumsum(lengths), index, side="right"))
        record = column.explode(empty_as_null=False)[index]
        if record is None:
            raise ValueError(f"{name}: null {self.noun} in row {where}")
        self.check(name, [record])  # raises, naming the field and the value
        raise ValueError(  # pragma: no cover
            f"{name}: bad {self.noun} {shown(record)} in row {where}")

    def arrays(self, name: str, column: pl.Series) -> dict[str, NDArray[Any]]:
        offsets, records = _csr(column.cast(self.dtype))
        if not offsets[-1]:  # every list empty (a delay table unused): no values to unpack
            return {f"{name}_offsets": offsets, **{f"{name}_{f}": np.zeros(0, np.int64)
                                                  for f in self.names}}
        flat = records.struct.unnest()
        out = {f"{name}_offsets": offsets}
        for f, kind in self.fields:
            out.update(kind.arrays(f"{name}_{f}", flat[f]))
        return out

    def value_arrays(self, name: str, value: Any) -> dict[str, NDArray[Any]]:
        if not value:
            return {f"{name}_offsets": _NO_OFFSETS, **{f"{name}_{f}": _NOTHING
                                                      for f in self.names}}
        out = {f"{name}_offsets": _offsets(len(value))}
        for k, (f, kind) in enumerate(self.fields):
            column = [r[k] for r in value]
            out[f"{name}_{f}"] = np.array(
                column if isinstance(kind, Int) else [kind.choices.index(v) for v in column],
                np.int64)
        return out

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        shown = ",".join(":".join(str(v) for v in r) for r in default) or "none"
        return {"type": self.parse, "action": "extend", "nargs": "*",
                "metavar": ":".join(f.upper() for f in self.names),
                "help": f"{help}; repeat or comma-separate, 'none' for no {self.many} "
                        f"(default {shown})"}

    def from_flag(self, given: Any, default: Any) -> Any:
        return default if given is None else tuple(r for part in given for r in part)

    def to_column(self, value: Any) -> Any:
        return [dict(zip(self.names, record, strict=True)) for record in value]

    def parse(self, text: str) -> tuple[tuple[Any, ...], ...]:
        """Parse ``A:B:C[,A:B:C...]`` records (integers as digits, choices as names); an
        empty string or ``none`` is no records. Values are checked by :meth:`check`.

        >>> Windows().parse("100:200:30,400:500:10")
        ((100, 200, 30), (400, 500, 10))
        >>> Faults().parse("0:3:lost")
        ((0, 3, 'lost'),)
        """
        if text.strip().lower() in ("", "none"):
            return ()
        shape = ":".join(f.upper() for f in self.names)
        out = []
        for part in text.split(","):
            values = [v.strip() for v in part.strip().split(":")]
            if len(values) != len(self.fields) or not all(
                    v.isdigit() for v, (_, kind) in zip(values, self.fields, strict=True)
                    if isinstance(kind, Int)):
                raise argparse.ArgumentTypeError(
                    f"expected {shape} ({self._field_types()}), got {shown(part.strip())}")
            out.append(tuple(int(v) if isinstance(kind, Int) else v
                             for v, (_, kind) in zip(values, self.fields, strict=True)))
        return tuple(out)


@dataclass(frozen=True)
class Windows(Records):
    """A lag schedule: (from, to, extra) windows, ``from < to``, ``extra >= 1``."""

    noun: str = "window"
    fields: tuple[tuple[str, Int | Choice], ...] = (
        ("from", Int(0, MAX_SECONDS)), ("to", Int(0, MAX_SECONDS)),
        ("extra", Int(1, MAX_SECONDS)))
    increasing: tuple[str, str] | None = ("from", "to")
    table: str = "lag"
    key: str = "windows"


@dataclass(frozen=True)
class Faults(Records):
    """A create-fault schedule: (at, count, kind) events, kind one of :data:`FAULT_KINDS`."""

    noun: str = "event"
    fields: tuple[tuple[str, Int | Choice], ...] = (
        ("at", Int(0, MAX_SECONDS)), ("count", Int(0, MAX_COPIES)),
        ("kind", Choice(FAULT_KINDS)))
    table: str = "faults"
    key: str = "events"

@dataclass(frozen=True)
class Scale(Records):
    """A scale schedule: (at, desired) changes, ``at`` from 1 on and increasing from change
    to change; from second ``at`` on, ``desired`` copies should run."""

    noun: str = "change"
    fields: tuple[tuple[str, Int | Choice], ...] = (
        ("at", Int(1, MAX_SECONDS)), ("desired", Int(0, MAX_COPIES)))
    ascending: str = "at"
    table: str = "scale"
    key: str = "changes"


@dataclass(frozen=True)
class Delays(Records):
    """A delay table (:mod:`reconsim.model.delays`): (value, weight) entries, values in
    seconds strictly increasing, weights >= 1, their total at most
    :data:`MAX_DELAY_WEIGHT`; empty for none (the uniform ``spread`` applies). A sweep
    spec names tables ``[delays.NAME]``, and its table stores the name beside them. The
    flag takes the entries or one form of such a table (:meth:`parse_flag`), which the cell
    compiles; a column holds the compiled entries only."""

    noun: str = "entry"
    nouns: str = "entries"
    fields: tuple[tuple[str, Int | Choice], ...] = (
        ("value", Int(0, MAX_SECONDS)), ("weight", Int(1, MAX_DELAY_WEIGHT)))
    table: str = "delays"
    key: str = ""  # a [delays.NAME] table has forms of its own: delays.from_spec_table
    #: The uniform spread this table replaces: a cell gives one of the two.
    spread: str = ""

    def check(self, name: str, value: Any) -> Any:
        entries: tuple[tuple[int, int], ...] = super().check(name, value)
        for (low, _), (high, _) in itertools.pairwise(entries):
            if high <= low:
                raise ValueError(f"{name} values must increase, got {low} then {high}")
        weight = sum(w for _, w in entries)
        if weight > MAX_DELAY_WEIGHT:
            raise ValueError(f"{name} total weight must be at most {MAX_DELAY_WEIGHT:,}, "
                             f"got {weight:,}")
        return entries

    def stats(self, name: str) -> list[pl.Expr]:
        # Over the entries of every row in turn (a null list is one null entry), beside
        # each entry's row: a reduction inside list.eval costs ~1 us a row (290 ms on
        # 316,800 rows), these a few ms.
        entries = pl.col(name).explode(empty_as_null=False)
        row = pl.int_range(pl.len(), dtype=pl.Int64).repeat_by(
            pl.col(name).list.len().fill_null(1)).explode(empty_as_null=False)
        unordered = (row == row.shift(1)) & (entries.struct.field("value").diff() <= 0)
        weights = pl.col(name).list.eval(pl.element().struct.field("weight").cast(pl.Int64))
        return [*super().stats(name),
                row.filter(unordered).first().alias(f"{name}:unordered"),
                weights.list.sum().max().alias(f"{name}:weight")]

    def check_stats(self, name: str, row: Mapping[str, Any], column: pl.Series) -> None:
        super().check_stats(name, row, column)
        bad = row[f"{name}:unordered"]
        if bad is not None:
            self.check(f"{name} (row {bad})", column.to_list()[bad])
        weight = row[f"{name}:weight"]
        if weight is not None and weight > MAX_DELAY_WEIGHT:
            raise ValueError(f"{name} total weight must be at most {MAX_DELAY_WEIGHT:,}, "
                             f"got {weight:,}")

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"type": self.parse_flag, "action": _OneForm, "nargs": "*",
                "metavar": "VALUE:WEIGHT|FORM",
                "help": f"{help}; one form of a [delays.NAME] table, p50=S,p90=S,…"
                        "[,max=S][,min=S] (quantiles), samples=S,S,…, histogram=S:W,… or "
                        "csv=FILE, or the table's VALUE:WEIGHT entries: repeat or "
                        f"comma-separate, 'none' for no {self.many} (default none)"}

    def from_flag(self, given: Any, default: Any) -> Any:
        if given is not None and len(given) == 1 and isinstance(given[0], dict):
            return given[0]  # one form, compiled by the cell (delays.from_spec_table)
        return super().from_flag(given, default)

    def parse_flag(self, text: str) -> Any:
        """Parse one argument of the flag: ``VALUE:WEIGHT[,…]`` entries of the compiled
        table (:meth:`Records.parse`; ``none``: no table), or one form as the mapping a
        ``[delays.NAME]`` table is — ``p50=S,…[,max=S][,min=S]`` quantiles (a level's key
        as in a spec, ``p99.9`` without quotes), ``samples=S,…``, ``histogram=S:W,…``
        (seconds and weight, in any order) or ``csv=FILE`` (the rest of the argument, a
        path relative to the current folder). Integers must be digits; the rest is
        checked where the form is compiled (:func:`reconsim.model.delays.from_spec_table`).

        >>> Delays().parse_flag("5:1,12:2")
        ((5, 1), (12, 2))
        >>> Delays().parse_flag("p50=5,p90=20,p99=60")
        {'quantiles': {'p50': 5, 'p90': 20, 'p99': 60}}
        >>> Delays().parse_flag("samples=3,5,8"), Delays().parse_flag("histogram=9:1,0:3")
        ({'samples': [3, 5, 8]}, {'histogram': [[9, 1], [0, 3]]})
        """
        key, sep, rest = text.strip().partition("=")
        key = key.strip()
        if not sep:
            return self.parse(text)
        if key == "csv":
            return {"csv": rest.strip()}
        if key == "samples":
            return {"samples": [int(v) for v in _digits(rest.split(","), "samples", "S,S,…")]}
        if key == "histogram":
            pairs = [p.split(":") for p in rest.split(",")]
            if any(len(p) != 2 for p in pairs):
                raise argparse.ArgumentTypeError(
                    f"histogram: expected SECONDS:WEIGHT pairs, got {shown(rest.strip())}")
            return {"histogram": [[int(v) for v in _digits(p, "histogram", "SECONDS:WEIGHT")]
                                  for p in pairs]}
        if key in ("min", "max") or key.startswith("p"):
            points: dict[str, int] = {}
            for part in text.split(","):
                level, sep, value = (v.strip() for v in part.partition("="))
                if not sep:
                    raise argparse.ArgumentTypeError(
                        f"quantiles: expected KEY=SECONDS (p50=12), got {shown(part.strip())}")
                if level in points:
                    raise argparse.ArgumentTypeError(f"quantiles: {level} given twice")
                points[level] = int(_digits([value], "quantiles", "KEY=SECONDS")[0])
            return {"quantiles": points}
        raise argparse.ArgumentTypeError(
            f"unknown form {shown(key)}: expected VALUE:WEIGHT entries, or p50=S,…[,max=S] "
            f"(quantiles), samples=S,…, histogram=S:W,… or csv=FILE")


def _digits(values: Iterable[str], form: str, shape: str) -> list[str]:
    """``values`` stripped, each the ASCII digits of a non-negative integer; else the flag's
    error naming the form and the value."""
    out = [v.strip() for v in values]
    for v in out:
        if not (v.isascii() and v.isdigit()):
            raise argparse.ArgumentTypeError(
                f"{form}: expected {shape} with non-negative integers, got {shown(v)}")
    return out


class _OneForm(argparse.Action):
    """A delay table's flag: its arguments collected as ``action="extend"`` does, but a form
    (``p50=5,…``, ``samples=…``) is the flag's one argument: beside anything else it is
    refused, naming it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        given = [*(getattr(namespace, self.dest) or ()), *values]
        form = next((g for g in given if isinstance(g, dict)), None)
        if form is not None and len(given) > 1:
            raise argparse.ArgumentError(
                self, f"a form ({', '.join(form)}) is the flag's only argument, its values "
                      f"separated by commas; got {len(given)} arguments")
        setattr(namespace, self.dest, given)


def permille(gain: float) -> int:
    """A checked gain as an exact integer count of thousandths.

    >>> permille(0.7), permille(1.0)
    (700, 1000)
    """
    return round(gain * 1000)
