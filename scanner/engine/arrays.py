"""Index helpers shared by the engine's vectorized kernels (pure numpy, no I/O)."""

from __future__ import annotations

import numpy as np


def ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[0] - 1, 0, 1, ..., counts[1] - 1, ...: every item's rank in its group."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if ends.shape[0] else 0, dtype=np.int64) - np.repeat(ends - counts, counts)


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges starts[i], ..., starts[i] + counts[i] - 1, without a loop per range."""
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + ranks(counts)


def in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """np.isin(values, sorted_set) for a set already sorted: one binary search a value, where np.isin would
    sort the set again at every call."""
    if sorted_set.shape[0] == 0:
        return np.zeros(values.shape[0], dtype=bool)
    slots = np.minimum(np.searchsorted(sorted_set, values), sorted_set.shape[0] - 1)
    return sorted_set[slots] == values
