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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scanner.engine.fingerprint import mix64

_TABLE_ALPHABET = 256  # sigma for the explicit lookup table: Latin-1 text


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


def code_points(text: str) -> np.ndarray:
    """uint8 code points for ASCII text (the fast path), else uint32."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _rolling_sums(codes: np.ndarray, n: int, modulo_256: bool = False) -> np.ndarray:
    """Sum of each n consecutive code points (with `modulo_256`, of uint8 codes, modulo 256).

    n - 1 vector adds in a narrow type for small n (SIMD, no serial cumsum):
    uint8 input sums exactly in uint16, code points (< 2**21) in uint32.
    """
    count = codes.shape[0] - n + 1
    if modulo_256:
        wide = codes  # uint8 adds wrap modulo 256
    elif n > 16:
        prefix = np.zeros(codes.shape[0] + 1, dtype=np.int64)
        np.cumsum(codes, out=prefix[1:])
        return prefix[n:] - prefix[:-n]
    elif codes.dtype == np.uint8:
        wide = codes.astype(np.uint16)  # one widening, then same-type adds
    elif codes.shape[0] and int(codes.max()) * n <= 0xFFFF:  # e.g. Western text: sums fit 16 bits
        wide = codes.astype(np.uint16, copy=False)
    else:
        wide = codes.astype(np.uint32, copy=False)
    sums = wide[:count].copy()
    for j in range(1, n):
        sums += wide[j : j + count]
    return sums


def emissions(text: str, c: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Window start of every emitted bit, and the bits (0/1)."""
    return _emissions_of_codes(code_points(text), c, n, k, seed)


def _emissions_of_codes(codes: np.ndarray, c: int, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Emission test by one remainder per window (one byte per window when c
    divides 256, else a mask when c is a power of two, else one division by the
    constant c, which numpy's `//` vectorizes with libdivide, and a multiply and
    subtract: its `%` does not, 10x slower; a table gather per character is
    2-3x slower), then the bits of the few emitting windows (about
    1 in c) from the table of their quotients (`lookup_table`).
    """
    if codes.shape[0] < n or not 0 <= k < c:  # no window, or a sum mod c is never k
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint8)
    if 256 % c == 0 and n <= 16:
        # c divides 256: sums modulo 256 decide the emissions, so one byte per
        # window does the test; exact sums are taken for the emitting windows only
        low = codes if codes.dtype == np.uint8 else codes.astype(np.uint8)  # code point mod 256
        sums = _rolling_sums(low, n, modulo_256=True)
        sums &= np.uint8(c - 1)
        positions = np.flatnonzero(sums == np.uint8(k))
        exact = codes[positions].astype(np.int64)
        for j in range(1, n):
            exact += codes[positions + j]
        return positions, _bits_for(exact // c, _table(c, n, k, seed), seed)
    sums = _rolling_sums(codes, n)
    if c > np.iinfo(sums.dtype).max:
        sums = sums.astype(np.int64)
    divisor = sums.dtype.type(c)
    if c & (c - 1) == 0:
        positions = np.flatnonzero(sums & sums.dtype.type(c - 1) == sums.dtype.type(k))
        return positions, _bits_for(sums[positions] // divisor, _table(c, n, k, seed), seed)
    quotients = sums // divisor  # libdivide: numpy's `%` by a constant is many times slower than `//`
    remainders = quotients * divisor
    np.subtract(sums, remainders, out=remainders)
    positions = np.flatnonzero(remainders == sums.dtype.type(k))
    return positions, _bits_for(quotients[positions], _table(c, n, k, seed), seed)


@functools.lru_cache(maxsize=32)
def _table(c: int, n: int, k: int, seed: int) -> np.ndarray:
    table = lookup_table(c, n, k, seed)
    table.flags.writeable = False
    return table


def signatures_batch(codes: np.ndarray, starts: np.ndarray, c: int = 100, n: int = 4, k: int = 0,
                     seed: int = 0) -> list[CoatesSignature]:
    """Signatures of many texts joined by one separator character, in one pass.

    `codes` are the joined text's code points; text i is codes[starts[i]:starts[i + 1] - 1]
    (`starts[-1]` is the joined length + 1). Rolling sums run over the whole
    join and the windows reaching past a text's end are dropped, so each
    signature equals `signature` of the text alone.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = (starts[1:] - starts[:-1] - 1).tolist()
    positions, bits = _emissions_of_codes(codes, c, n, k, seed)
    if len(lengths) > 1 and positions.shape[0]:
        # the windows that reach a separator start at most n - 1 points before it
        reaching = ((starts[1:-1] - 1)[:, None] - np.arange(n)[None, :]).ravel()
        at = np.minimum(np.searchsorted(positions, reaching), positions.shape[0] - 1)
        at = at[positions[at] == reaching]
        if at.shape[0]:
            positions, bits = np.delete(positions, at), np.delete(bits, at)
    cuts = np.searchsorted(positions, starts).tolist()
    chars = np.bitwise_or(bits, ord("0"), out=bits).tobytes()  # 0/1 -> "0"/"1"
    return [CoatesSignature(chars[a:b].decode("ascii"), length, c, n, k)
            for a, b, length in zip(cuts[:-1], cuts[1:], lengths)]


def signatures_many(texts: list[str], c: int = 100, n: int = 4, k: int = 0, seed: int = 0) -> list[CoatesSignature]:
    """`[signature(t, c, n, k, seed) for t in texts]` in one pass over the joined texts."""
    from scanner.engine.canon import BATCH_SEPARATOR, ascii_groups

    out: list[CoatesSignature] = [CoatesSignature("", 0, c, n, k)] * len(texts)
    for group in ascii_groups(texts):  # uint8 sums for ASCII batches, cache-sized batches
        batch = [texts[i] for i in group]
        lengths = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
        starts = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum(lengths + 1, out=starts[1:])
        for i, sig in zip(group, signatures_batch(code_points(BATCH_SEPARATOR.join(batch)), starts, c, n, k, seed)):
            out[i] = sig
    return out


def _bits_for(quotients: np.ndarray, table: np.ndarray, seed: int) -> np.ndarray:
    in_table = quotients < table.shape[0]
    bits = np.empty(quotients.shape[0], dtype=np.uint8)
    bits[in_table] = table[quotients[in_table]]
    bits[~in_table] = _bit_of(quotients[~in_table], seed)
    return bits


def signature(text: str, c: int = 100, n: int = 4, k: int = 0, seed: int = 0) -> CoatesSignature:
    _, bits = emissions(text, c, n, k, seed)
    return CoatesSignature(np.bitwise_or(bits, ord("0"), out=bits).tobytes().decode("ascii"), len(text), c, n, k)


def _check_pair(a: CoatesSignature, b: CoatesSignature) -> None:
    if (a.c, a.n, a.k) != (b.c, b.n, b.k):
        from scanner.core.errors import ParameterMismatchError

        raise ParameterMismatchError(
            f"Coates signatures made with different parameters: (c, n, k) = {(a.c, a.n, a.k)} vs {(b.c, b.n, b.k)}"
        )


def estimated_edit_distance(a: CoatesSignature, b: CoatesSignature) -> int:
    """LD(signature A, signature B) x c, Coates' estimate of LD(A, B)."""
    # rapidfuzz (~12 ms to import) where distances are taken, not in every process that makes signatures
    from rapidfuzz.distance import Levenshtein

    _check_pair(a, b)
    return Levenshtein.distance(a.bits, b.bits) * a.c


def estimated_edit_distances(pairs: Sequence[tuple[CoatesSignature, CoatesSignature]],
                             workers: int = 1) -> np.ndarray:
    """`estimated_edit_distance` of many pairs in one call (rapidfuzz cpdist, `workers` threads; -1: all
    cores): no Python work per pair, and the threads run without the GIL."""
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    for a, b in pairs:
        _check_pair(a, b)
    if not pairs:
        return np.empty(0, dtype=np.int64)
    distances = cpdist([a.bits for a, _ in pairs], [b.bits for _, b in pairs], scorer=Levenshtein.distance,
                       workers=workers, dtype=np.int64)
    return distances * np.asarray([a.c for a, _ in pairs], dtype=np.int64)


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
    from rapidfuzz.distance import Levenshtein

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
