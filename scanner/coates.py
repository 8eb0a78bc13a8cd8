"""Coates (2011) signatures: a lossy compression whose edit distance, times c,
estimates the Levenshtein distance of the original texts.

A rolling sum s over n consecutive characters is taken at every position; where
s = k (mod c) a bit is emitted, looked up for s in a pseudo-random table,
otherwise nothing. On average one bit per c characters survives, and a change
to the text only affects the bits of the n windows that cover it, so a text
compresses to the same bits whether alone or embedded in a larger one (section
3.1 properties 2 and 3). That is what lets the signatures also tell whether one
text embeds another and where along two texts their differences lie.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

from scanner.fingerprint import mix64

_TABLE_ALPHABET = 256  # sigma for the explicit lookup table: Latin-1 text
_ZERO_ONE = np.frombuffer(b"01", dtype=np.uint8)


@dataclass(frozen=True)
class CoatesSignature:
    """The emitted bits as a '0'/'1' string (rapidfuzz compares it natively)."""

    bits: str
    text_length: int
    c: int
    n: int
    k: int

    def __len__(self) -> int:
        return len(self.bits)


def lookup_table(c: int, n: int, k: int, seed: int = 0) -> np.ndarray:
    """Bit for each window sum i = k (mod c) below sigma * n, indexed by i // c.

    Coates maps the sigma*n/c emitting sums to 0 or 1 with a table; sums beyond
    it (characters past Latin-1) use the same pseudo-random function the table
    was filled from, so the table is only a cache of that function.
    """
    size = (_TABLE_ALPHABET * n) // c + 1
    return _bit_of(np.arange(size, dtype=np.uint64), seed)


def _bit_of(quotients: np.ndarray, seed: int) -> np.ndarray:
    key = mix64(np.array([seed ^ 0xC0A7E5], dtype=np.uint64))[0]
    return (mix64(quotients.astype(np.uint64) ^ key) & np.uint64(1)).astype(np.uint8)


_NO_BIT = 2


@functools.lru_cache(maxsize=32)
def _by_sum(c: int, n: int, k: int, seed: int) -> np.ndarray:
    """For every window sum below sigma * n: the emitted bit, or _NO_BIT.

    A pure function of its arguments, memoized (read-only result) because the
    per-document cost of rebuilding it would rival the signature itself.
    """
    sums = np.arange(_TABLE_ALPHABET * n, dtype=np.int64)
    out = np.full(sums.shape[0], _NO_BIT, dtype=np.uint8)
    emit = sums % c == k
    out[emit] = lookup_table(c, n, k, seed)[sums[emit] // c]
    out.flags.writeable = False
    return out


def code_points(text: str) -> np.ndarray:
    """uint8 code points for ASCII text (the fast path), else uint32."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _rolling_sums(codes: np.ndarray, n: int) -> np.ndarray:
    """Sum of each n consecutive code points.

    n - 1 vector adds in a narrow type for small n (SIMD, no serial cumsum):
    uint8 input sums exactly in uint16, code points (< 2**21) in uint32.
    """
    count = codes.shape[0] - n + 1
    if n > 16:
        prefix = np.zeros(codes.shape[0] + 1, dtype=np.int64)
        np.cumsum(codes, out=prefix[1:])
        return prefix[n:] - prefix[:-n]
    sums = codes[:count].astype(np.uint16 if codes.dtype == np.uint8 else np.uint32)
    for j in range(1, n):
        sums += codes[j : j + count]
    return sums


def emissions(text: str, c: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Window start of every emitted bit, and the bits (0/1).

    Window sums below sigma * n go through one table that says both whether a
    bit is emitted and which (a gather instead of a division per character);
    larger sums (characters past Latin-1) are computed directly. Same bits.
    """
    codes = code_points(text)
    if codes.shape[0] < n:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint8)
    sums = _rolling_sums(codes, n)
    by_sum = _by_sum(c, n, k, seed)
    limit = by_sum.shape[0]
    if codes.dtype == np.uint8 and n <= 16:  # sums < 128 * n: all in the table
        out = by_sum[sums]
    else:
        big = np.flatnonzero(sums >= limit)
        out = by_sum[np.minimum(sums, limit - 1)]
        if big.shape[0]:
            big_sums = sums[big].astype(np.int64)
            emit = big_sums % c == k
            patch = np.full(big.shape[0], _NO_BIT, dtype=np.uint8)
            patch[emit] = _bits_for(big_sums[emit] // c, lookup_table(c, n, k, seed), seed)
            out[big] = patch
    positions = np.flatnonzero(out != _NO_BIT)
    return positions, out[positions]


def _bits_for(quotients: np.ndarray, table: np.ndarray, seed: int) -> np.ndarray:
    in_table = quotients < table.shape[0]
    bits = np.empty(quotients.shape[0], dtype=np.uint8)
    bits[in_table] = table[quotients[in_table]]
    bits[~in_table] = _bit_of(quotients[~in_table], seed)
    return bits


def signature(text: str, c: int = 100, n: int = 4, k: int = 0, seed: int = 0) -> CoatesSignature:
    _, bits = emissions(text, c, n, k, seed)
    return CoatesSignature(_ZERO_ONE[bits].tobytes().decode("ascii"), len(text), c, n, k)


def _check_pair(a: CoatesSignature, b: CoatesSignature) -> None:
    if (a.c, a.n, a.k) != (b.c, b.n, b.k):
        from scanner.errors import ParameterMismatchError

        raise ParameterMismatchError(
            f"Coates signatures made with different parameters: (c, n, k) = {(a.c, a.n, a.k)} vs {(b.c, b.n, b.k)}"
        )


def estimated_edit_distance(a: CoatesSignature, b: CoatesSignature) -> int:
    """LD(signature A, signature B) x c, Coates' estimate of LD(A, B)."""
    _check_pair(a, b)
    return Levenshtein.distance(a.bits, b.bits) * a.c


def embedding_distance(inner: CoatesSignature, outer: CoatesSignature) -> int:
    """Estimated edits to make `inner` a substring of `outer` (free gaps at outer's ends), x c.

    Near 0 when `outer` embeds `inner` (Coates section 6, "one text embeds
    another"); near len(inner) x c when they are unrelated. Semi-global edit
    distance, one numpy row per bit of `inner`.
    """
    _check_pair(inner, outer)
    a = np.frombuffer(inner.bits.encode("ascii"), dtype=np.uint8)
    b = np.frombuffer(outer.bits.encode("ascii"), dtype=np.uint8)
    if a.shape[0] == 0:
        return 0
    if b.shape[0] == 0:
        return a.shape[0] * inner.c
    row = np.zeros(b.shape[0] + 1, dtype=np.int64)  # free start anywhere in outer
    columns = np.arange(b.shape[0] + 1, dtype=np.int64)
    for i in range(1, a.shape[0] + 1):
        diagonal = row[:-1] + (b != a[i - 1])
        vertical = row[1:] + 1
        best = np.empty_like(row)
        best[0] = i
        best[1:] = np.minimum(diagonal, vertical)
        # horizontal moves: best[j] = min over j' <= j of best[j'] + (j - j')
        row = np.minimum.accumulate(best - columns) + columns
    return int(row.min()) * inner.c


def embeds(inner: CoatesSignature, outer: CoatesSignature, tolerance: float = 0.25) -> bool:
    """True when the embedding distance is within `tolerance` of inner's length."""
    if len(inner) == 0:
        return False
    return embedding_distance(inner, outer) <= tolerance * len(inner) * inner.c


def difference_profile(a: CoatesSignature, b: CoatesSignature, bins: int = 40) -> np.ndarray:
    """Share of signature edits falling in each of `bins` equal slices of A (0..1 each).

    A coarse map of where along the documents the differences lie, for a UI to
    draw as a strip; edits that insert text of B are counted at their place in A.
    """
    _check_pair(a, b)
    profile = np.zeros(bins, dtype=np.float64)
    length = max(len(a), 1)
    positions = [op.src_pos for op in Levenshtein.editops(a.bits, b.bits)]
    if not positions:
        return profile
    slots = np.minimum((np.asarray(positions) * bins) // length, bins - 1)
    counts = np.bincount(slots, minlength=bins).astype(np.float64)
    expected_per_slot = max(length / bins, 1.0)
    return np.minimum(counts / expected_per_slot, 1.0)
