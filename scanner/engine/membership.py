"""A Bloom filter of the fingerprints an index holds: most of a query's anchors are in no document.

`check` looks each winnowed anchor of a query up in the postings (about 2,000 for a 10 KB text read in
its three word orders); on a 100,000-document index about 90 % of them are held by no document, and each
miss still costs a B-tree descent (2-4 us). A filter answers "certainly absent" for those in
microseconds, so only the anchors it cannot rule out are looked up. It never says absent for a
fingerprint it was given (no candidate is lost); it may say present for one it was not (a wasted look-up,
with probability `false_positive_rate`). Removing a document leaves its bits set: stale bits cost
look-ups, never candidates.

Bits are addressed by `HASHES` independent 64-bit mixes of the fingerprint (SplitMix64 of the value
XOR a salt), never by Python's `hash()`, so a stored filter reads the same on every platform.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from scanner.core.errors import FormatError
from scanner.engine.fingerprint import mix64_inplace

FILTER_FORMAT = 1
HASHES = 3
BITS_PER_KEY = 6  # when a filter is sized: 6-12 bits a key (a power of 2), 0.5-3 % false positives with 3 hashes
MIN_BITS_PER_KEY = 4  # below this it is rebuilt larger (about 15 % false positives)
MIN_BITS_LOG2 = 16  # 8 KiB
MAX_BITS_LOG2 = 30  # 128 MiB: past ~270 M postings (4 bits each; ~1.3 M documents) an index keeps none
_SPREAD_BITS_LOG2 = 27  # up to 16 MiB, bits are set through a byte a bit (128 MiB for the time it takes)
_SALTS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)
_HEADER = struct.Struct("<HBBQ")  # format, bits_log2, hashes, keys
HEADER_BYTES = _HEADER.size


@dataclass
class FingerprintFilter:
    """`bits`: 2**bits_log2 bits, little-endian within each byte; `keys`: fingerprints added (repeats
    included, so at least the distinct ones: what sizing and `has_room_for` go by)."""

    bits_log2: int
    keys: int
    bits: np.ndarray

    @classmethod
    def sized_for(cls, keys: int) -> "FingerprintFilter | None":
        """An empty filter with room for `keys` (None when even MIN_BITS_PER_KEY bits each would need more than
        2**MAX_BITS_LOG2 bits)."""
        log2 = max(MIN_BITS_LOG2, int(max(keys, 1) * BITS_PER_KEY - 1).bit_length())
        if log2 > MAX_BITS_LOG2:
            if keys * MIN_BITS_PER_KEY > 1 << MAX_BITS_LOG2:
                return None
            log2 = MAX_BITS_LOG2  # fewer bits a key, as a filter filling up would have before its rebuild
        return cls(log2, 0, np.zeros(1 << (log2 - 3), dtype=np.uint8))

    def _positions(self, fps: np.ndarray) -> np.ndarray:
        """(HASHES, n) bit positions of these fingerprints."""
        values = np.asarray(fps).view(np.uint64) if np.asarray(fps).dtype == np.int64 else np.asarray(
            fps, dtype=np.uint64)
        mixed = np.bitwise_xor(values[None, :], _SALTS[:, None])
        mix64_inplace(mixed)
        return mixed >> np.uint64(64 - self.bits_log2)

    def add(self, parts: Iterable[np.ndarray]) -> None:
        """Add the fingerprints of every part (parts bound the memory: 3 positions of 8 bytes a key)."""
        if self.bits_log2 <= _SPREAD_BITS_LOG2:
            # one bool a bit while adding: a scattered write a position (`bitwise_or.at` took 3.6 s for
            # 11.5 M keys, this 2.0 s), at a byte a bit of memory for the time it takes
            spread = np.unpackbits(self.bits, bitorder="little").view(bool)
            for fps in parts:
                spread[self._positions(fps).ravel()] = True
                self.keys += int(np.asarray(fps).shape[0])
            self.bits = np.packbits(spread, bitorder="little")
            return
        bits = self.bits if self.bits.flags.writeable else self.bits.copy()
        for fps in parts:  # a larger filter in place: no copy a byte a bit (1 GiB for 128 MiB)
            positions = self._positions(fps).ravel()
            np.bitwise_or.at(bits, positions >> np.uint64(3),
                             np.left_shift(np.uint8(1), (positions & np.uint64(7)).astype(np.uint8)))
            self.keys += int(np.asarray(fps).shape[0])
        self.bits = bits

    def has_room_for(self, keys: int) -> bool:
        """Whether `keys` more keep it above MIN_BITS_PER_KEY (else a larger one is due)."""
        return (self.keys + keys) * MIN_BITS_PER_KEY <= 1 << self.bits_log2

    def may_hold(self, fps: np.ndarray) -> np.ndarray:
        """False where the fingerprint is certainly in no document this filter was given."""
        positions = self._positions(fps)
        held = (self.bits[positions >> np.uint64(3)] >> (positions & np.uint64(7)).astype(np.uint8)) & 1
        return held.all(axis=0).astype(bool)

    @property
    def false_positive_rate(self) -> float:
        """Expected share of absent fingerprints it lets through, at its current load."""
        return false_positive_rate(self.bits_log2, self.keys)

    def header(self) -> bytes:
        """What the stored form starts with (its bits follow)."""
        return _HEADER.pack(FILTER_FORMAT, self.bits_log2, HASHES, self.keys)

    def to_bytes(self) -> bytes:
        return self.header() + self.bits.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> "FingerprintFilter":
        log2, keys = header_of(data)
        cls.check_size(log2, len(data))
        bits = np.frombuffer(data, dtype=np.uint8, offset=_HEADER.size)  # read-only until `add` copies it
        return cls(log2, keys, bits)

    @staticmethod
    def check_size(bits_log2: int, stored_bytes: int) -> None:
        """A stored filter of 2**bits_log2 bits is its header and that many bits, no more, no less."""
        if not 3 <= bits_log2 <= 62 or stored_bytes != _HEADER.size + (1 << (bits_log2 - 3)):
            raise FormatError(f"fingerprint filter: {stored_bytes - _HEADER.size} bytes for 2**{bits_log2} bits")


def header_of(data: bytes) -> tuple[int, int]:
    """(bits_log2, keys) of a stored filter, whose format and hashes must be these."""
    if len(data) < _HEADER.size:
        raise FormatError("fingerprint filter: truncated header")
    fmt, log2, hashes, keys = _HEADER.unpack_from(data)
    if fmt != FILTER_FORMAT or hashes != HASHES:
        raise FormatError(f"fingerprint filter: format {fmt} with {hashes} hashes, expected {FILTER_FORMAT} with "
                          f"{HASHES}")
    return log2, keys


def false_positive_rate(bits_log2: int, keys: int) -> float:
    """Expected share of absent fingerprints a filter of 2**bits_log2 bits holding `keys` lets through."""
    return float((1.0 - np.exp(-HASHES * keys / (1 << bits_log2))) ** HASHES)
