"""The engine's index helpers against the plain numpy they stand in for, on random arrays with repeats."""

from __future__ import annotations

import numpy as np
import pytest

from scanner.engine.arrays import (
    SortedLookup,
    covered_by_group,
    difference,
    distinct,
    expand_ranges,
    in_sorted,
    ranks,
    run_lengths_of_sorted,
)
from scanner.index.passages import covered_count


@pytest.mark.parametrize("seed", range(5))
def test_run_lengths_of_sorted_are_numpys_counts(seed: int) -> None:
    values = np.sort(np.random.default_rng(seed).integers(0, 40, 300).astype(np.uint64))
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    assert run_lengths_of_sorted(values).tolist() == counts[inverse].tolist()
    assert run_lengths_of_sorted(values[:0]).tolist() == []
    assert run_lengths_of_sorted(values[:1]).tolist() == [1]
    each_once = np.unique(values)  # no repeat at all: the common case, answered without counting runs
    assert run_lengths_of_sorted(each_once).tolist() == [1] * each_once.shape[0]
    assert run_lengths_of_sorted(each_once).dtype == run_lengths_of_sorted(values).dtype == np.int64


@pytest.mark.parametrize("seed", range(5))
def test_difference_is_numpys_setdiff1d(seed: int) -> None:
    """Unsorted values with repeats, against others with repeats, some shared, none shared, all shared, and
    either side empty: what np.setdiff1d gives, dtype and all."""
    rng = np.random.default_rng(seed)
    values, others = rng.integers(0, 60, 200), rng.integers(30, 90, 150)
    for a, b in ((values, others), (values, others + 1000), (values, values[::-1]), (values[:0], others),
                 (values, others[:0])):
        got, expected = difference(a, b), np.setdiff1d(a, b)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    assert 0 < difference(values, others).shape[0] < np.unique(values).shape[0]


@pytest.mark.parametrize("seed", range(5))
def test_distinct_is_numpys_unique(seed: int) -> None:
    """Sorted, flattened, repeats dropped, the dtype kept: int64 rows of pairs, uint64 fingerprints
    spanning the whole range, and the empty and one-item corners."""
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, 30, (200, 2))
    fingerprints = rng.integers(0, 2**64 - 1, 500, dtype=np.uint64)
    fingerprints = np.concatenate((fingerprints, fingerprints[:100]))
    for values in (pairs, fingerprints, fingerprints[:0], fingerprints[:1]):
        got, expected = distinct(values), np.unique(values)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


@pytest.mark.parametrize("seed", range(5))
def test_sorted_lookup_finds_every_position_isin_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 200, 500).astype(np.uint64)  # repeated values: each of their positions counts
    wanted = np.unique(rng.integers(0, 300, 80).astype(np.uint64))
    expected = np.flatnonzero(np.isin(values, wanted))
    found = SortedLookup.of(values).positions_in(wanted)
    assert np.sort(found).tolist() == expected.tolist()
    assert found.shape[0] == expected.shape[0]  # no position twice
    assert SortedLookup.of(values).positions_in(wanted[:0]).tolist() == []
    assert in_sorted(values, wanted).tolist() == np.isin(values, wanted).tolist()
    # a set longer than the array: the array's values are searched in the set instead, the same positions
    few = values[:20]
    longer = np.unique(rng.integers(0, 300, 150).astype(np.uint64))
    found = SortedLookup.of(few).positions_in(longer)
    assert np.sort(found).tolist() == np.flatnonzero(np.isin(few, longer)).tolist()
    assert SortedLookup.of(few[:0]).positions_in(longer).tolist() == []


def test_expand_ranges_and_ranks() -> None:
    assert ranks(np.array([3, 0, 2])).tolist() == [0, 1, 2, 0, 1]
    assert expand_ranges(np.array([10, 5, 7]), np.array([2, 0, 3])).tolist() == [10, 11, 7, 8, 9]


@pytest.mark.parametrize("seed", range(5))
def test_covered_by_group_is_each_groups_union(seed: int) -> None:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 7, 60)  # group 6 may hold none, group 7 never does
    first = rng.integers(0, 500, 60)
    stop = first + rng.integers(0, 60, 60)  # empty, nested, overlapping and touching ranges
    expected = [covered_count(zip(first[group == g].tolist(), stop[group == g].tolist())) for g in range(8)]
    assert covered_by_group(group, first, stop, 8).tolist() == expected
    assert covered_by_group(group[:0], first[:0], stop[:0], 3).tolist() == [0, 0, 0]
