"""Index helpers shared by the engine's vectorized kernels (pure numpy, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[0] - 1, 0, 1, ..., counts[1] - 1, ...: every item's rank in its group."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if ends.shape[0] else 0, dtype=np.int64) - np.repeat(ends - counts, counts)


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges starts[i], ..., starts[i] + counts[i] - 1, without a loop per range."""
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + ranks(counts)


def distinct(values: np.ndarray) -> np.ndarray:
    """np.unique(values) (flattened, sorted) by one sort: numpy 2.3 and later take a hashing path for
    np.unique without return_* arguments that is 5x slower on 1,000 int64s, 15x on 20,000 and 70x on
    8,000,000 (11 s) than sorting them here."""
    ordered = np.sort(values, axis=None)
    if ordered.shape[0] < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """np.isin(values, sorted_set) for a set already sorted: one binary search a value, where np.isin would
    sort the set again at every call."""
    if sorted_set.shape[0] == 0:
        return np.zeros(values.shape[0], dtype=bool)
    slots = np.minimum(np.searchsorted(sorted_set, values), sorted_set.shape[0] - 1)
    return sorted_set[slots] == values


def outside(values: np.ndarray, sorted_set: np.ndarray | None) -> np.ndarray:
    """The values not in a sorted set (all of them when it is None or empty), in their order."""
    if sorted_set is None or sorted_set.shape[0] == 0 or values.shape[0] == 0:
        return values
    return values[~in_sorted(values, sorted_set)]


def difference(values: np.ndarray, others: np.ndarray) -> np.ndarray:
    """np.setdiff1d(values, others) (the sorted distinct values not among `others`) by sorts: np.setdiff1d
    takes np.unique's hashing path (`distinct`), ~1 s for a million document ids, and imports numpy.ma."""
    kept = distinct(values)
    return kept[~in_sorted(kept, distinct(others))]


def run_lengths_of_sorted(values: np.ndarray) -> np.ndarray:
    """For each item of a sorted array, how many items equal it: np.unique's counts spread back over the
    items, without np.unique's sort of an array already sorted."""
    n = values.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    same = values[1:] == values[:-1]
    if not same.any():  # each once (most texts' fingerprints): 4x faster than counting runs of one
        return np.ones(n, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    counts = np.diff(np.append(starts, n))
    return np.repeat(counts, counts)


@dataclass(frozen=True)
class SortedLookup:
    """An array's values sorted once, to find again and again which of them a sorted set holds: one binary
    search per item of the set, in order, where `in_sorted` would search every value of the array."""

    order: np.ndarray  # int64 positions that sort the array
    values: np.ndarray  # the array's values in that order

    @classmethod
    def of(cls, values: np.ndarray) -> "SortedLookup":
        order = np.argsort(values, kind="stable")
        return cls(order.astype(np.int64), values[order])

    def positions_in(self, sorted_set: np.ndarray) -> np.ndarray:
        """Positions in the array of the values `sorted_set` (sorted, distinct) holds, in no useful order.
        Whichever of the two is shorter is searched in the other (a 10-word query's lookup against a
        100,000-shingle document: 10 searches, not 200,000)."""
        if sorted_set.shape[0] > self.values.shape[0]:
            return self.order[in_sorted(self.values, sorted_set)]
        return self.matches(sorted_set)[0]

    def matches(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions in the array of the items equal to each of `values` (any order, repeats allowed), value
        after value, and how many each value matched: a binary search a value."""
        lo = np.searchsorted(self.values, values, side="left")
        found = np.searchsorted(self.values, values, side="right") - lo
        return self.order[expand_ranges(lo, found)], found


def covered_by_group(group: np.ndarray, first: np.ndarray, stop: np.ndarray, groups: int) -> np.ndarray:
    """For each group 0..groups-1, the length of the union of its [first, stop) ranges (overlaps counted
    once): one sort for all groups, where a loop would sort each group's ranges apart."""
    out = np.zeros(groups, dtype=np.int64)
    if group.shape[0] == 0:
        return out
    order = np.lexsort((first, group))
    group, first, stop = group[order], first[order], stop[order]
    # the farthest stop so far within each group: stops lifted by their group, so no group sees the last one's
    lift = group * (int(stop.max()) + 1)
    reach = np.maximum.accumulate(stop + lift) - lift
    before = np.concatenate(([0], reach[:-1]))
    opens = np.concatenate(([True], group[1:] != group[:-1]))
    start = np.where(opens, first, np.maximum(first, before))
    np.add.at(out, group, np.maximum(stop - start, 0))
    return out


def contiguous(values: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """`values` as the compiled loops read them: C-contiguous, of `dtype` (no copy when they already are)."""
    return np.ascontiguousarray(values, dtype=dtype)


def joined_parts(parts: Sequence[np.ndarray], dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """The parts one after the other (`contiguous`), and where each starts (and the end): how the compiled
    loops take one array per text of many texts."""
    sizes = np.fromiter((part.shape[0] for part in parts), dtype=np.int64, count=len(parts))
    return contiguous(np.concatenate(parts), dtype), np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
