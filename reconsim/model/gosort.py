"""Go's ``sort.Sort`` (Go 1.19 and later: pattern-defeating quicksort, unstable), step for
step, so that entries a ``Less`` ties come out in the order Go leaves them.

The Kubernetes controllers sort with it; which of several tied pods a deletion takes is
the order this algorithm leaves them in, which no stable sort reproduces. It follows
``src/sort/zsortinterface.go``: insertion sort below 13 elements, heapsort when the depth
limit is reached, Tukey's ninther for the pivot, the partial insertion sort of an
already-sorted run, the equal-pivot partition, and the xorshift pattern breaker. Go
recurses into the smaller part and loops on the larger; here the smaller parts wait on a
stack of ranges instead — the parts are disjoint, so each is sorted the same way, in
another order.

Written once, for both worlds: the event reference model sorts a list with a Python
``Less`` (:func:`go_sort`); the event kernel compiles these very functions with numba
(:mod:`reconsim.model.kernels.specialise`), :func:`less_at` and :func:`swap_at` bound
there to its own, which compare and swap the columns of an array with the controller's
compiled ``less``. Both pass the algorithm ``data``, ``now`` and ``p`` through untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

import numpy as np

T = TypeVar("T")

#: Ranges of at most this many elements are insertion-sorted.
INSERTION_MAX: Final = 12
#: From this length on, the pivot is Tukey's ninther (a median of three medians).
NINTHER_MIN: Final = 50
#: Below this length, the partial insertion sort gives up at its first misplaced element.
SHIFTING_MIN: Final = 50
#: The swaps the pivot's medians take on a strictly decreasing range.
MAX_SWAPS: Final = 12


@dataclass
class Listed(Generic[T]):
    """A list and its ``Less``: the data :func:`go_sort` sorts with the Python bindings."""

    items: list[T]
    less: Callable[[T, T], bool]


def go_sort(data: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place as Go's ``sort.Sort`` does with this ``Less``."""
    sort_range(Listed(data, less), len(data), 0, None)


def less_at(data: Any, i: int, j: int, now: int, p: Any) -> bool:
    """``Less(i, j)`` of ``data`` (here a :class:`Listed`; the kernel binds its own)."""
    return bool(data.less(data.items[i], data.items[j]))


def swap_at(data: Any, i: int, j: int) -> None:
    """``Swap(i, j)`` of ``data`` (here a :class:`Listed`; the kernel binds its own)."""
    data.items[i], data.items[j] = data.items[j], data.items[i]


def insertion_sort(data: Any, a: int, b: int, now: int, p: Any) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less_at(data, j, j - 1, now, p):
            swap_at(data, j, j - 1)
            j -= 1


def sift_down(data: Any, lo: int, hi: int, first: int, now: int,  # noqa: PLR0913, PLR0917
              p: Any) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and less_at(data, first + child, first + child + 1, now, p):
            child += 1
        if not less_at(data, first + root, first + child, now, p):
            return
        swap_at(data, first + root, first + child)
        root = child


def median(data: Any, a: int, b: int, c: int,  # noqa: PLR0913, PLR0917
           swaps: Any, now: int, p: Any) -> int:
    """The position of the median of positions a, b, c; each exchange counted in
    ``swaps[0]``."""
    if less_at(data, b, a, now, p):
        swaps[0] += 1
        a, b = b, a
    if less_at(data, c, b, now, p):
        swaps[0] += 1
        b, c = c, b
    if less_at(data, b, a, now, p):
        swaps[0] += 1
        a, b = b, a
    return b


def partial_insertion_sort(data: Any, a: int, b: int, now: int, p: Any) -> bool:
    """Whether ``[a, b)`` is sorted after moving at most five misplaced elements."""
    i = a + 1
    for _ in range(5):
        while i < b and not less_at(data, i, i - 1, now, p):
            i += 1
        if i == b:
            return True
        if b - a < SHIFTING_MIN:
            return False
        swap_at(data, i, i - 1)
        if i - a >= 2:  # the smaller one to the left (Go's loop runs down to 1, not a)
            for j in range(i - 1, 0, -1):
                if not less_at(data, j, j - 1, now, p):
                    break
                swap_at(data, j, j - 1)
        if b - i >= 2:  # the greater one to the right
            for j in range(i + 1, b):
                if not less_at(data, j, j - 1, now, p):
                    break
                swap_at(data, j, j - 1)
    return False


def sort_range(data: Any, n: int, now: int, p: Any) -> None:  # noqa: PLR0912, PLR0915
    """Go's ``sort.Sort`` of the positions ``0 … n - 1`` of ``data``."""
    if n <= INSERTION_MAX:  # the loop's first step, without its stack
        insertion_sort(data, 0, n, now, p)
        return
    limit0 = 0
    while (1 << limit0) <= n:
        limit0 += 1
    stack = np.empty((3, 64 + n), np.int64)  # the ranges still to sort: a, b, depth limit
    stack[0, 0], stack[1, 0], stack[2, 0] = 0, n, limit0
    top = 1
    swaps = np.zeros(1, np.int64)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF)
    while top > 0:
        top -= 1
        a, b, limit = int(stack[0, top]), int(stack[1, top]), int(stack[2, top])
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= INSERTION_MAX:
                insertion_sort(data, a, b, now, p)
                break
            if limit == 0:  # heapsort
                hi = b - a
                for i in range((hi - 1) // 2, -1, -1):
                    sift_down(data, i, hi, a, now, p)
                for i in range(hi - 1, -1, -1):
                    swap_at(data, a, a + i)
                    sift_down(data, 0, i, a, now, p)
                break
            if not balanced:  # break patterns: a xorshift of the length
                state = np.uint64(length)
                bits = 0
                while (1 << bits) <= length:
                    bits += 1
                modulus = 1 << bits
                middle = a + (length // 4) * 2
                for idx in range(middle - 1, middle + 2):
                    state ^= (state << np.uint64(13)) & mask  # Go's xorshift: 13, 17, 5
                    state ^= state >> np.uint64(17)
                    state ^= (state << np.uint64(5)) & mask
                    # (a signed integer: numba makes one mixed with an unsigned a float)
                    other: int = np.int64(state & np.uint64(modulus - 1))  # type: ignore[assignment]
                    if other >= length:
                        other -= length
                    swap_at(data, idx, a + other)
                limit -= 1
            swaps[0] = 0  # the pivot, and whether the range looked increasing
            i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
            if length >= 8:
                if length >= NINTHER_MIN:
                    i = median(data, i - 1, i, i + 1, swaps, now, p)
                    j = median(data, j - 1, j, j + 1, swaps, now, p)
                    k = median(data, k - 1, k, k + 1, swaps, now, p)
                j = median(data, i, j, k, swaps, now, p)
            pivot = j
            increasing = swaps[0] == 0
            if swaps[0] == MAX_SWAPS:  # decreasing: reverse it, it is increasing now
                x, y = a, b - 1
                while x < y:
                    swap_at(data, x, y)
                    x += 1
                    y -= 1
                pivot = (b - 1) - (pivot - a)
                increasing = True
            if balanced and partitioned and increasing and partial_insertion_sort(
                    data, a, b, now, p):
                break
            if a > 0 and not less_at(data, a - 1, pivot, now, p):  # many equal to a - 1
                swap_at(data, a, pivot)
                x, y = a + 1, b - 1
                while True:
                    while x <= y and not less_at(data, a, x, now, p):
                        x += 1
                    while x <= y and less_at(data, a, y, now, p):
                        y -= 1
                    if x > y:
                        break
                    swap_at(data, x, y)
                    x += 1
                    y -= 1
                a = x
                continue
            # partition around the pivot, moved to a
            swap_at(data, a, pivot)
            x, y = a + 1, b - 1
            while x <= y and less_at(data, x, a, now, p):
                x += 1
            while x <= y and not less_at(data, y, a, now, p):
                y -= 1
            if x > y:
                swap_at(data, y, a)
                mid, partitioned = y, True
            else:
                swap_at(data, x, y)
                x += 1
                y -= 1
                while True:
                    while x <= y and less_at(data, x, a, now, p):
                        x += 1
                    while x <= y and not less_at(data, y, a, now, p):
                        y -= 1
                    if x > y:
                        break
                    swap_at(data, x, y)
                    x += 1
                    y -= 1
                swap_at(data, y, a)
                mid, partitioned = y, False
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:  # the smaller part waits; the larger one goes on here
                balanced = left >= threshold
                stack[0, top], stack[1, top], stack[2, top] = a, mid, limit
                top += 1
                a = mid + 1
            else:
                balanced = right >= threshold
                stack[0, top], stack[1, top], stack[2, top] = mid + 1, b, limit
                top += 1
                b = mid
