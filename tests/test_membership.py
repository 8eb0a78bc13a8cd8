"""The Bloom filter of an index's fingerprints (engine/membership.py): never a false 'absent', false
positives at the rate it states, and a stored form that reads back the same or is refused."""

from __future__ import annotations

import numpy as np
import pytest

from scanner.core.errors import FormatError
from scanner.engine.membership import (
    BITS_PER_KEY,
    MAX_BITS_LOG2,
    MIN_BITS_LOG2,
    MIN_BITS_PER_KEY,
    FingerprintFilter,
)


def test_every_key_added_is_held_and_absent_ones_pass_at_the_stated_rate() -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**63), 2**63 - 1, 200_000, dtype=np.int64)
    made = FingerprintFilter.sized_for(keys.shape[0])
    assert made is not None and (1 << made.bits_log2) >= BITS_PER_KEY * keys.shape[0]
    made.add([keys[:50_000], keys[50_000:]])
    assert made.keys == keys.shape[0] and made.may_hold(keys).all()
    assert made.may_hold(keys.view(np.uint64)).all()  # as stored (int64) or as computed (uint64)
    absent = rng.integers(-(2**63), 2**63 - 1, 200_000, dtype=np.int64)
    rate = made.may_hold(absent).mean()
    assert 0.3 * made.false_positive_rate < rate < 2.0 * made.false_positive_rate < 0.05


def test_a_stored_filter_reads_back_the_same_or_is_refused() -> None:
    keys = np.arange(1, 5_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    made = FingerprintFilter.sized_for(5_000)
    made.add([keys])
    data = made.to_bytes()
    back = FingerprintFilter.from_bytes(data)
    probe = np.arange(0, 20_000, dtype=np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    assert back.keys == made.keys and (back.may_hold(probe) == made.may_hold(probe)).all()
    back.add([probe[:10]])  # a filter read from storage is copied before it is changed
    assert back.may_hold(probe[:10]).all() and FingerprintFilter.from_bytes(data).keys == made.keys
    with pytest.raises(FormatError, match="format 2"):
        FingerprintFilter.from_bytes(b"\x02" + data[1:])
    with pytest.raises(FormatError, match="bytes for"):
        FingerprintFilter.from_bytes(data[:-1])
    with pytest.raises(FormatError, match="truncated"):
        FingerprintFilter.from_bytes(data[:5])


def test_no_filter_is_made_past_the_largest_size() -> None:
    """Past the largest size at BITS_PER_KEY, a filter takes the largest size while keys keep MIN_BITS_PER_KEY
    bits each; past that, none."""
    largest = 1 << MAX_BITS_LOG2
    assert FingerprintFilter.sized_for(largest // BITS_PER_KEY).bits_log2 == MAX_BITS_LOG2
    assert FingerprintFilter.sized_for(largest // MIN_BITS_PER_KEY).bits_log2 == MAX_BITS_LOG2
    assert FingerprintFilter.sized_for(largest // MIN_BITS_PER_KEY + 1) is None
    assert FingerprintFilter.sized_for(10).bits_log2 == MIN_BITS_LOG2


def test_a_large_filter_sets_the_same_bits_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past _SPREAD_BITS_LOG2 bits are set in place (no byte a bit: 1 GiB for the largest filter): the same
    bits as the spread way."""
    import scanner.engine.membership as membership

    keys = np.random.default_rng(3).integers(0, 2**63, 50_000, dtype=np.int64)
    spread = FingerprintFilter.sized_for(keys.shape[0])
    spread.add([keys[:20_000], keys[20_000:]])
    monkeypatch.setattr(membership, "_SPREAD_BITS_LOG2", spread.bits_log2 - 1)
    in_place = FingerprintFilter.from_bytes(FingerprintFilter.sized_for(keys.shape[0]).to_bytes())  # read-only
    in_place.add([keys[:20_000], keys[20_000:]])
    assert in_place.keys == spread.keys and np.array_equal(in_place.bits, spread.bits)
