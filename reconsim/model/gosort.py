"""Go's ``sort.Sort`` (Go 1.19 and later: pattern-defeating quicksort, unstable), step for
step, so that entries a ``Less`` ties come out in the order Go leaves them.

The Kubernetes controllers sort with it; which of several tied pods a deletion takes is
the order this algorithm leaves them in, which no stable sort reproduces. It follows
``src/sort/zsortinterface.go``: insertion sort below 13 elements, heapsort when the depth
limit is reached, Tukey's ninther for the pivot, the partial insertion sort of an
already-sorted run, the equal-pivot partition, and the xorshift pattern breaker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

T = TypeVar("T")

_MASK64: Final = (1 << 64) - 1
_INSERTION_MAX: Final = 12
_NINTHER_MIN: Final = 50
_SHIFTING_MIN: Final = 50
_MAX_SWAPS: Final = 4 * 3


def go_sort(data: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place as Go's ``sort.Sort`` does with this ``Less``."""
    _Sorter(data, less).run()


class _Sorter:
    """One call of ``sort.Sort``: the data, its ``Less`` on positions, and ``Swap``."""

    def __init__(self, data: list[T], less: Callable[[T, T], bool]) -> None:
        self.data: list[object] = data  # type: ignore[assignment]
        self.compare: Callable[[object, object], bool] = less  # type: ignore[assignment]

    def less(self, i: int, j: int) -> bool:
        return self.compare(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        self.data[i], self.data[j] = self.data[j], self.data[i]

    def run(self) -> None:
        n = len(self.data)
        if n > 1:
            self.pdqsort(0, n, n.bit_length())

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, hi = a, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(0, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= _INSERTION_MAX:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, swaps = self.choose_pivot(a, b)
            increasing = swaps == 0
            if swaps == _MAX_SWAPS:  # decreasing: reverse it, it is increasing now
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                increasing = True
            if balanced and partitioned and increasing and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):  # many equal to the one before a
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(5):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHIFTING_MIN:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:  # the smaller one to the left (Go's loop runs down to 1, not a)
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:  # the greater one to the right
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        """The pivot's position and the swaps its medians took (0: increasing)."""
        length = b - a
        swaps = [0]
        i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
        if length >= 8:
            if length >= _NINTHER_MIN:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        return j, swaps[0]

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
