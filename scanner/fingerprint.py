"""Stable 64-bit fingerprints of shingles, and whole-document digests.

Fingerprints are computed with numpy uint64 arithmetic that wraps modulo
2**64 identically on every platform; Python's salted `hash()` is never used.

Collision bound (after Broder 1997, section 4.1). A shingle's fingerprint is
f(shingle) with l = 64 bits. For a set of n shingles the expected number of
colliding pairs is about C(n, 2) / 2**64, and with probability above 99.9 %
the resemblance computed on fingerprints differs from the true one by less
than |S(A) u S(B)| / 2**(l - 11) = |S(A) u S(B)| / 2**53. For two documents of
a million shingles each that is below 2.3e-10, far under any reported digit.
The mixer below is not collision-resistant against an adversary (no 64-bit
value can be: a birthday search costs 2**32), which is why identity of
evidence is established by SHA-256 of the raw bytes, never by these values.

The random permutation pi of Theorem 1 is a keyed bijection of the 64-bit
space: x -> mix64(x XOR key), where mix64 (the SplitMix64 finalizer) is
invertible, so pi permutes {0, ..., 2**64 - 1} as Theorem 1 requires.
"""

from __future__ import annotations

import hashlib

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SHINGLE_BASE = np.uint64(0xF1357AEA2E62A9C5)
_LABEL_SALT = np.uint64(0xD6E8FEB86659FD93)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer, element-wise: a bijection of uint64 with full avalanche."""
    return _mix64_inplace(np.array(values, dtype=np.uint64, copy=True))


def _mix64_inplace(z: np.ndarray) -> np.ndarray:
    """mix64 overwriting a uint64 array the caller owns (one copy fewer)."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def _mix64_int(value: int) -> int:
    """mix64 of one Python int (same result as the array version, without numpy overhead)."""
    mask = (1 << 64) - 1
    z = value & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def permute(values: np.ndarray, seed: int) -> np.ndarray:
    """The random permutation pi of the fingerprint space, keyed by `seed`."""
    return _mix64_inplace(np.asarray(values, dtype=np.uint64) ^ np.uint64(_mix64_int(seed)))


def shingle_fingerprints(token_hashes: np.ndarray, w: int, option: str = "set", seed: int = 0) -> np.ndarray:
    """pi(f(shingle)) for each of the n - w + 1 shingles of w consecutive tokens.

    A text shorter than w tokens (but not empty) is one shingle of all its
    tokens, so that two identical short texts still match.

    Option "bag" (Broder's option A) labels each shingle with its occurrence
    number before fingerprinting, so repeated shingles stay distinct; option
    "set" (option B) leaves repeats equal, and set semantics come from the
    consumers taking unique values.
    """
    tokens = np.asarray(token_hashes, dtype=np.uint64)
    n = tokens.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    width = min(w, n)
    count = n - width + 1
    acc = np.zeros(count, dtype=np.uint64)
    for j in range(width):  # w vector operations, never a loop per token
        acc *= _SHINGLE_BASE
        acc += tokens[j : j + count]
    acc ^= np.uint64(width)
    if option == "bag":
        acc = mix64(acc)
        acc = acc + _occurrence_numbers(acc) * _LABEL_SALT
    elif option != "set":
        raise ValueError(f"unknown shingle option {option!r}")
    # f(shingle) is the polynomial value above (token hashes are already mixed,
    # so distinct shingles collide with probability about 2**-64), and pi mixes
    # it under the key: one mix per shingle instead of two
    return permute(acc, seed)


def _occurrence_numbers(values: np.ndarray) -> np.ndarray:
    """For each element, how many equal elements precede it (0 for the first)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    group_start = np.empty(ordered.shape[0], dtype=bool)
    group_start[:1] = True
    group_start[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(ordered.shape[0])
    first_of_group = np.maximum.accumulate(np.where(group_start, positions, 0))
    occurrences = np.empty(values.shape[0], dtype=np.uint64)
    occurrences[order] = (positions - first_of_group).astype(np.uint64)
    return occurrences


def sha256_bytes(data: bytes) -> str:
    """Identity of the raw bytes: Broder's 'identical documents'."""
    return hashlib.sha256(data).hexdigest()


def digest_array(values: np.ndarray) -> str:
    """128-bit digest of a uint64 array, little-endian, for equivalence classes."""
    data = np.ascontiguousarray(values, dtype="<u8").tobytes()
    return hashlib.blake2b(data, digest_size=16).hexdigest()
