"""Sketches of documents and the estimators of Broder's Theorem 1.

A document's shingle fingerprints (already permuted by pi, see
`fingerprint.py`) are reduced to:

* MIN_s: the s smallest distinct fingerprints (fixed size; resemblance only);
* L_i = MOD_{2**i}: the fingerprints that are 0 mod 2**i, with i picked from the
  document's size so that 50-100 samples are expected (section 3); resemblance
  *and* containment;
* supershingles: the sorted MIN_s shingled again (Broder et al. 1997), where one
  shared value is enough evidence of high resemblance;
* digests for lexically-equivalent and shingle-equivalent documents;
* a Coates signature for the edit-distance estimate.

Winnowing (Schleimer, Wilkerson, Aiken 2003) selects, from every window of
`winnow_window` consecutive shingles, the smallest fingerprint; a shared run of
w + window - 1 tokens therefore always shares one selected fingerprint, which
is the detection guarantee the query layer relies on.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field

import numpy as np

from scanner.core import config
from scanner.core.config import Params
from scanner.core.errors import FormatError, ParameterMismatchError
from scanner.engine import arrays, coates
from scanner.engine.arrays import expand_ranges, in_sorted
from scanner.engine.canon import TokenBatch, Tokens, ascii_groups, canonicalize, canonicalize_batch
from scanner.engine.fingerprint import (
    digest_array,
    mix64,
    shingle_fingerprints,
    shingle_fingerprints_batch,
    window_polynomials,
    windows_inside,
)

SKETCH_FORMAT_VERSION = 1
_MAGIC = b"SCSK"
_HEADER = struct.Struct("<4sH8sQQQB16s16sIIII")
_SUPER_BASE = np.uint64(0xA0761D6478BD642F)

# --------------------------------------------------------------------------
# samples


def distinct(fingerprints: np.ndarray) -> np.ndarray:
    """S(D, w) as a sorted array of distinct fingerprints."""
    return arrays.distinct(np.asarray(fingerprints, dtype=np.uint64))


def min_s(distinct_fps: np.ndarray, s: int) -> np.ndarray:
    """MIN_s: the s smallest elements (all of them when fewer than s)."""
    return distinct_fps[:s]


def mod_sample(distinct_fps: np.ndarray, modulus: int) -> np.ndarray:
    """MOD_m: the elements that are 0 mod m (order is kept)."""
    if modulus <= 1:
        return distinct_fps
    if modulus & (modulus - 1) == 0:  # the size classes: a mask, not a 64-bit division
        return distinct_fps[(distinct_fps & np.uint64(modulus - 1)) == 0]
    return distinct_fps[distinct_fps % np.uint64(modulus) == 0]


def size_class(n_shingles: int, base: int = 50) -> int:
    """i such that n / 2**i lies in [base, 2 * base): 50-100 expected samples by default."""
    if n_shingles < 2 * base:
        return 0
    # floor(log2(n / base)) == floor(log2(n // base)) exactly, in integers
    return (n_shingles // base).bit_length() - 1


def supershingles(sketch_values: np.ndarray, k: int) -> np.ndarray:
    """Fingerprints of every k consecutive values of the sorted sketch (distinct, sorted)."""
    return _supershingles_sorted(np.sort(np.asarray(sketch_values, dtype=np.uint64)), k)


def _supershingles_sorted(values: np.ndarray, k: int) -> np.ndarray:
    if values.shape[0] == 0:
        return np.empty(0, dtype=np.uint64)
    acc, _ = window_polynomials(values, np.array([0, values.shape[0]], dtype=np.int64), k, _SUPER_BASE)
    return distinct(mix64(acc))


def winnow(fingerprints: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Robust winnowing: (selected fingerprints, their shingle positions), by position.

    In each window of `window` consecutive fingerprints the minimum is selected
    (the rightmost one on ties); each position is reported once.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    if fps.shape[0] == 0:
        return fps, np.empty(0, dtype=np.int64)
    selected, positions, _ = winnow_batch(fps, np.array([0, fps.shape[0]], dtype=np.int64), window)
    return selected, positions


def _window_argmin(fps: np.ndarray, width: int) -> np.ndarray:
    """For every `width` consecutive values, the offset of the rightmost minimum in the window.

    Doubling: windows of 2h from two windows of h (log2(width) steps of a few
    vector operations); a window that is not a power of two is the union of two
    overlapping ones. Where the right part's minimum is <= the left one's, the
    right part holds the rightmost minimum. Offsets are uint8 (wider past 255).
    """
    kind = np.uint8 if width <= 0xFF else np.uint16 if width <= 0xFFFF else np.uint32
    steps = []
    h = 1
    while 2 * h <= width:
        steps.append(h)
        h *= 2
    if h < width:
        steps.append(width - h)  # [i, i + h) and [i + width - h, i + width)
    minima = fps
    offset: np.ndarray | None = None  # all zeros before the first step
    for n_step, shift in enumerate(steps):
        count = minima.shape[0] - shift
        take_right = minima[shift:] <= minima[:count]
        if offset is None:
            offset = take_right.view(np.uint8).astype(kind, copy=False)  # 0/1 == shift 1
            if shift != 1:
                offset = offset * kind(shift)
        else:
            offset = np.where(take_right, offset[shift:] + kind(shift), offset[:count])
        if n_step + 1 < len(steps):  # the last minima are not needed
            minima = np.minimum(minima[:count], minima[shift:])
    if offset is None:  # width 1: every value is its own window
        offset = np.zeros(fps.shape[0], dtype=kind)
    return offset


def winnow_batch(fingerprints: np.ndarray, offsets: np.ndarray,
                 window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`winnow` of many fingerprint sequences (fingerprints[offsets[i]:offsets[i + 1]]) at once.

    Returns (selected fingerprints, their positions within their own sequence,
    per-sequence offsets into both); windows straddling two sequences are
    dropped, and a non-empty sequence shorter than `window` is one window.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if window < 1:
        raise ValueError("winnow window must be >= 1")
    lo, hi = int(offsets[0]), int(offsets[-1])
    lengths = offsets[1:] - offsets[:-1]
    long_groups = lengths >= window
    chosen: list[np.ndarray] = []
    if long_groups.any():
        rel = _window_argmin(fps[lo:hi], window)
        # window i selects i + rel[i]; it repeats window i - 1's choice when
        # rel[i] + 1 == rel[i - 1] (positions never decrease within a sequence)
        keep = windows_inside(offsets, window) if offsets.shape[0] > 2 else np.ones(rel.shape[0], dtype=np.bool_)
        keep[1:] &= (rel[1:] + rel.dtype.type(1)) != rel[:-1]
        keep[offsets[:-1][long_groups] - lo] = True  # a sequence's first window always counts
        at = np.flatnonzero(keep)
        pos = at + rel[at]
        if lo:
            pos += lo
        chosen.append(pos)
    short = np.flatnonzero((lengths > 0) & ~long_groups)
    for width in range(1, window):  # short sequences: one window of all their values
        groups = short[lengths[short] == width]
        if groups.shape[0] == 0:
            continue
        best = fps[offsets[groups]]
        best_at = offsets[groups].copy()
        for j in range(1, width):
            value = fps[offsets[groups] + j]
            better = value <= best
            best = np.where(better, value, best)
            best_at = np.where(better, offsets[groups] + j, best_at)
        chosen.append(best_at)
    if not chosen:
        empty = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), empty, np.zeros(offsets.shape[0], dtype=np.int64)
    pos = chosen[0] if len(chosen) == 1 else np.sort(np.concatenate(chosen))
    if offsets.shape[0] == 2:
        return fps[pos], pos - lo, np.array([0, pos.shape[0]], dtype=np.int64)
    cuts = np.searchsorted(pos, offsets).astype(np.int64, copy=False)
    local = pos - np.repeat(offsets[:-1], cuts[1:] - cuts[:-1])
    return fps[pos], local, cuts - cuts[0]


def winnow_many(fingerprints: list[np.ndarray], window: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`[winnow(f, window) for f in fingerprints]` in a few vector passes."""
    if not fingerprints:
        return []
    lengths = np.fromiter((f.shape[0] for f in fingerprints), dtype=np.int64, count=len(fingerprints))
    offsets = np.zeros(len(fingerprints) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    joined = np.concatenate(fingerprints).astype(np.uint64, copy=False) if offsets[-1] else np.empty(0, np.uint64)
    selected, positions, cuts = winnow_batch(joined, offsets, window)
    bounds = cuts.tolist()
    return [(selected[a:b], positions[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


# --------------------------------------------------------------------------
# estimators (Theorem 1) and exact values


def resemblance_min_s(ma: np.ndarray, mb: np.ndarray, s: int) -> float:
    """|MIN_s(M(A) u M(B)) n M(A) n M(B)| / |MIN_s(M(A) u M(B))|."""
    return resemblance_evidence(ma, mb, s, whole=False).value


def resemblance_evidence(ma: np.ndarray, mb: np.ndarray, s: int, whole: bool) -> "ContainmentEstimate":
    """`resemblance_min_s` with what it rests on: the union's bottom-s sample is a random sample of A u B, so
    its share held by both has a binomial error over the sample's size; `whole`: both samples hold their
    whole sets (fewer shingles than s), and the value is exact."""
    union = np.union1d(ma, mb)[:s]
    if union.shape[0] == 0:
        return ContainmentEstimate(0.0, 0, "exact")
    both = np.intersect1d(ma, mb, assume_unique=True)
    value = float(np.isin(union, both, assume_unique=True).sum()) / union.shape[0]
    return ContainmentEstimate(value, 0, "exact") if whole else ContainmentEstimate(value, int(union.shape[0]),
                                                                                     "sketch")


def resemblance_mod(la: np.ndarray, lb: np.ndarray) -> float:
    """|L(A) n L(B)| / |L(A) u L(B)|."""
    union = np.union1d(la, lb).shape[0]
    if union == 0:
        return 0.0
    return np.intersect1d(la, lb, assume_unique=True).shape[0] / union


def containment_mod(la: np.ndarray, lb: np.ndarray) -> float:
    """|L(A) n L(B)| / |L(A)|: containment of A in B."""
    if la.shape[0] == 0:
        return 0.0
    return np.intersect1d(la, lb, assume_unique=True).shape[0] / la.shape[0]


def exact_resemblance(sa: np.ndarray, sb: np.ndarray) -> float:
    union = np.union1d(sa, sb).shape[0]
    return np.intersect1d(sa, sb).shape[0] / union if union else 0.0


def exact_containment(sa: np.ndarray, sb: np.ndarray) -> float:
    sa = arrays.distinct(sa)
    return np.intersect1d(sa, sb).shape[0] / sa.shape[0] if sa.shape[0] else 0.0


def measures_of_shared(shared: int, size_a: int, size_b: int) -> tuple[float, float, float]:
    """(resemblance, containment of A in B, of B in A) of two sets of these sizes sharing `shared` values."""
    if size_a == 0 or size_b == 0:
        return 0.0, 0.0, 0.0
    return shared / (size_a + size_b - shared), shared / size_a, shared / size_b


def exact_measures(sa: np.ndarray, sb: np.ndarray) -> tuple[float, float, float]:
    """`exact_resemblance` and both `exact_containment`s of two sorted distinct sets (`Shingled.distinct`),
    from one search of the smaller in the larger: the three set operations sorted both sets three times,
    minutes over a report of a hundred thousand pairs of long documents."""
    small, large = (sa, sb) if sa.shape[0] <= sb.shape[0] else (sb, sa)
    return measures_of_shared(int(in_sorted(small, large).sum()), int(sa.shape[0]), int(sb.shape[0]))


# --------------------------------------------------------------------------
# the sketch record


@dataclass(frozen=True)
class Sketch:
    """Everything stored about a document's content, apart from its text."""

    params_key: bytes
    n_tokens: int
    n_shingles: int
    text_length: int
    size_class: int
    lexical_digest: str  # lexically-equivalent documents share it
    shingle_digest: str  # shingle-equivalent documents share it
    minhash: np.ndarray = field(repr=False)  # MIN_s, sorted
    mod_sample: np.ndarray = field(repr=False)  # L_i, sorted
    supershingles: np.ndarray = field(repr=False)
    coates: coates.CoatesSignature = field(repr=False)

    def to_bytes(self) -> bytes:
        """Versioned little-endian serialization."""
        bits = np.frombuffer(self.coates.bits.encode("ascii"), dtype=np.uint8) - ord("0")
        packed = np.packbits(bits).tobytes()
        header = _HEADER.pack(
            _MAGIC,
            SKETCH_FORMAT_VERSION,
            self.params_key,
            self.n_tokens,
            self.n_shingles,
            self.text_length,
            self.size_class,
            bytes.fromhex(self.lexical_digest),
            bytes.fromhex(self.shingle_digest),
            self.minhash.shape[0],
            self.mod_sample.shape[0],
            self.supershingles.shape[0],
            len(self.coates.bits),
        )
        coates_params = struct.pack("<III", self.coates.c, self.coates.n, self.coates.k)
        arrays = b"".join(
            np.ascontiguousarray(a, dtype="<u8").tobytes()
            for a in (self.minhash, self.mod_sample, self.supershingles)
        )
        return header + coates_params + arrays + packed

    @classmethod
    def from_bytes(cls, data: bytes) -> "Sketch":
        if len(data) < _HEADER.size + 12 or data[:4] != _MAGIC:
            raise FormatError("not a scanner sketch")
        (magic, version, key, n_tokens, n_shingles, text_length, size_cls, lexical, shingle,
         n_min, n_mod, n_super, n_bits) = _HEADER.unpack_from(data)
        if version != SKETCH_FORMAT_VERSION:
            raise FormatError(f"sketch format version {version} is not supported "
                              f"(this build reads {SKETCH_FORMAT_VERSION})")
        c, n, k = struct.unpack_from("<III", data, _HEADER.size)
        offset = _HEADER.size + 12
        arrays = []
        for count in (n_min, n_mod, n_super):
            end = offset + 8 * count
            if end > len(data):
                raise FormatError("truncated sketch")
            arrays.append(np.frombuffer(data[offset:end], dtype="<u8").astype(np.uint64))
            offset = end
        packed = np.frombuffer(data[offset:], dtype=np.uint8)
        if packed.shape[0] * 8 < n_bits:
            raise FormatError("truncated sketch signature")
        bits = np.unpackbits(packed)[:n_bits] + ord("0")
        signature = coates.CoatesSignature(bits.tobytes().decode("ascii"), text_length, c, n, k)
        return cls(key, n_tokens, n_shingles, text_length, size_cls, lexical.hex(), shingle.hex(),
                   arrays[0], arrays[1], arrays[2], signature)


@dataclass(frozen=True)
class Shingled:
    """A text's tokens and shingle fingerprints, kept for passages and exact values."""

    tokens: Tokens
    fingerprints: np.ndarray  # pi(f(shingle)) in text order; shingle i starts at token i

    @functools.cached_property
    def distinct(self) -> np.ndarray:
        """Made once: a text aligned with many others is looked up in many times."""
        return distinct(self.fingerprints)


def shingle_text(text: str, params: Params) -> Shingled:
    """Tokens and shingle fingerprints of one text (`shingle_texts` batches many, same values)."""
    tokens = canonicalize(text, params.token_unit)
    fps = shingle_fingerprints(tokens.hashes, params.shingle_size, params.shingle_option, params.seed)
    return Shingled(tokens, fps)


def _sketch_key(params: Params) -> bytes:
    """Params.sketch_key() memoized: Params is frozen, and the JSON + BLAKE2 per document showed in profiles.
    The algorithm version is part of the memo's key, as it is of the sketch key."""
    return _memo_sketch_key(params, config.ALGORITHM_VERSION)


@functools.lru_cache(maxsize=64)
def _memo_sketch_key(params: Params, _version: int) -> bytes:
    return params.sketch_key()


def build_sketch(text: str, params: Params, shingled: Shingled | None = None) -> Sketch:
    """The sketch of one text (`build_sketches` batches many with the same kernels and values).

    Kept as its own short driver: for one document the batch bookkeeping
    (offsets, joins) would cost more numpy calls than it saves.
    """
    shingled = shingled or shingle_text(text, params)
    uniq = shingled.distinct
    cls = size_class(uniq.shape[0], params.size_class_base)
    minhash = min_s(uniq, params.sample_size)
    return Sketch(
        params_key=_sketch_key(params),
        n_tokens=len(shingled.tokens),
        n_shingles=int(uniq.shape[0]),
        text_length=len(text),
        size_class=cls,
        lexical_digest=digest_array(shingled.tokens.hashes),
        shingle_digest=digest_array(minhash),
        minhash=minhash,
        mod_sample=mod_sample(uniq, 2**cls),
        supershingles=_supershingles_sorted(minhash, params.supershingle_size),  # MIN_s is sorted
        coates=coates.signature(text, params.coates_c, params.coates_n, params.coates_k, params.seed),
    )


# --------------------------------------------------------------------------
# batches: many documents in one set of numpy passes
#
# Texts are grouped (ASCII / other, see canon.ascii_groups), each group is
# joined by a separator that no token or Coates window crosses, and every
# stage runs once over the group's concatenated arrays with per-document
# offsets; only sorting (one in-place sort per document's slice) and the
# digests (one hashlib call per document) remain per document. Results are
# bit-identical to the single-document functions, which run the same kernels
# (window_polynomials, winnow_batch, the tokenizer) with one group.


@dataclass(frozen=True)
class ShingledBatch:
    """Tokens and shingle fingerprints of many texts: text i owns fingerprints offsets[i]:offsets[i + 1]."""

    tokens: TokenBatch
    fingerprints: np.ndarray
    offsets: np.ndarray  # int64, len(texts) + 1

    def __len__(self) -> int:
        return len(self.tokens)

    def split(self) -> list[Shingled]:
        bounds = self.offsets.tolist()
        fps = self.fingerprints
        return [Shingled(tokens, fps[a:b]) for tokens, a, b in zip(self.tokens.split(), bounds[:-1], bounds[1:])]


def shingle_batch(texts: list[str], params: Params) -> ShingledBatch:
    """Canonicalize and shingle every text in one pass (use on ASCII-homogeneous groups for speed)."""
    tokens = canonicalize_batch(texts, params.token_unit)
    fps, offsets = shingle_fingerprints_batch(
        tokens.hashes, tokens.offsets, params.shingle_size, params.shingle_option, params.seed
    )
    return ShingledBatch(tokens, fps, offsets)


def _by_group(texts: list[str], run) -> list:
    """run(indices) on each batch of texts (see canon.ascii_groups), results in text order."""
    out: list = [None] * len(texts)
    for group in ascii_groups(texts):
        for i, item in zip(group, run(group)):
            out[i] = item
    return out


def shingle_texts(texts: list[str], params: Params) -> list[Shingled]:
    """`[shingle_text(t, params) for t in texts]`, bit-identical, in a few numpy passes."""
    return _by_group(texts, lambda group: shingle_batch([texts[i] for i in group], params).split())


def build_sketches(texts: list[str], params: Params, shingled: list[Shingled] | None = None) -> list[Sketch]:
    """`[build_sketch(t, params, s) for t, s in zip(texts, shingled)]`, bit-identical, batched."""
    if shingled is not None and len(shingled) != len(texts):
        raise ValueError("texts and shingled differ in length")

    def run(group: list[int]) -> list[Sketch]:
        group_texts = [texts[i] for i in group]
        if shingled is None:
            return sketch_batch(group_texts, params, shingle_batch(group_texts, params))
        return sketch_batch(group_texts, params, None, [shingled[i] for i in group])

    return _by_group(texts, run)


def sketch_and_winnow(texts: list[str], params: Params) -> list[tuple[Sketch, tuple[np.ndarray, np.ndarray]]]:
    """What a scan stores of each text: its sketch and winnow(fingerprints, params.winnow_window), batched.

    No per-text token offsets are made: a scan keeps none (`shingle_texts` gives them).
    """

    def run(group: list[int]) -> list[tuple[Sketch, tuple[np.ndarray, np.ndarray]]]:
        group_texts = [texts[i] for i in group]
        batch = shingle_batch(group_texts, params)
        selected, positions, cuts = winnow_batch(batch.fingerprints, batch.offsets, params.winnow_window)
        bounds = cuts.tolist()
        winnowed = [(selected[a:b], positions[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        return list(zip(sketch_batch(group_texts, params, batch), winnowed))

    return _by_group(texts, run)


def _joined(arrays: list[np.ndarray], dtype) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays)), out=offsets[1:])
    if not offsets[-1]:
        return np.empty(0, dtype=dtype), offsets
    return np.concatenate(arrays).astype(dtype, copy=False), offsets


def _sorted_groups(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A copy of values with each group sorted in place (one sort call per group).

    Tried and dropped: two stable 16-bit radix passes (top bits, then group)
    plus a fix-up of tied runs; real texts' repeated shingles make long tied
    runs common, and it measured 1.6x slower than these per-group sorts.
    """
    out = values.copy()
    bounds = offsets.tolist()
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a > 1:
            out[a:b].sort()
    return out


def _distinct_groups(values: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`distinct` of every group: sorted distinct values and their offsets."""
    ordered = _sorted_groups(values, offsets)
    n = ordered.shape[0]
    keep = np.empty(n, dtype=np.bool_)
    if n:
        keep[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
        keep[offsets[:-1][(offsets[1:] - offsets[:-1]) > 0]] = True  # every group's first value
    kept = np.flatnonzero(keep)
    return ordered[kept], np.searchsorted(kept, offsets)


def _size_classes(n_shingles: np.ndarray, base: int) -> np.ndarray:
    """`size_class` of every count: bit_length(n // base) - 1 (exact via frexp below 2**53)."""
    quotient = n_shingles // base
    exponent = np.frexp(np.maximum(quotient, 1).astype(np.float64))[1].astype(np.int64)
    return np.where(n_shingles < 2 * base, 0, exponent - 1)


def sketch_batch(texts: list[str], params: Params, shingled: ShingledBatch | None = None,
                 shingled_list: list[Shingled] | None = None) -> list[Sketch]:
    """Sketches of many texts from their shingled batch (or list), in one set of numpy passes."""
    if shingled is not None:
        fps, f_off = shingled.fingerprints, shingled.offsets
        hashes, t_off = shingled.tokens.hashes, shingled.tokens.offsets
        tokens: TokenBatch | None = shingled.tokens  # its code points give the Coates signatures in one pass
    else:
        if shingled_list is None:
            shingled_list = shingle_texts(texts, params)
        fps, f_off = _joined([s.fingerprints for s in shingled_list], np.uint64)
        hashes, t_off = _joined([s.tokens.hashes for s in shingled_list], np.uint64)
        tokens = None
    s = params.sample_size
    uniq, u_off = _distinct_groups(fps, f_off)
    n_uniq = u_off[1:] - u_off[:-1]
    classes = _size_classes(n_uniq, params.size_class_base)
    n_min = np.minimum(n_uniq, s)
    minhash = uniq[expand_ranges(u_off[:-1], n_min)]  # the first s of each group
    m_off = np.zeros(n_min.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_min, out=m_off[1:])
    masks = np.repeat((np.left_shift(np.uint64(1), classes.astype(np.uint64)) - np.uint64(1)), n_uniq)
    in_mod = np.flatnonzero((uniq & masks) == 0)
    mod = uniq[in_mod]
    mod_off = np.searchsorted(in_mod, u_off)
    # supershingles: windows of sorted MIN_s, then distinct per document
    sup, sup_off = window_polynomials(minhash, m_off, params.supershingle_size, _SUPER_BASE)
    sup, sup_off = _distinct_groups(mix64(sup), sup_off)
    if tokens is None:
        signatures = coates.signatures_many(texts, params.coates_c, params.coates_n, params.coates_k, params.seed)
    else:
        signatures = coates.signatures_batch(tokens.code_points, tokens.char_starts, params.coates_c,
                                             params.coates_n, params.coates_k, params.seed)
    key = _sketch_key(params)
    t_b, u_b, m_b, mod_b, sup_b = (a.tolist() for a in (t_off, u_off, m_off, mod_off, sup_off))
    cls_list = classes.tolist()
    hashes = np.ascontiguousarray(hashes)
    out = []
    for i, text in enumerate(texts):
        mins = minhash[m_b[i] : m_b[i + 1]]
        out.append(Sketch(
            params_key=key,
            n_tokens=t_b[i + 1] - t_b[i],
            n_shingles=u_b[i + 1] - u_b[i],
            text_length=len(text),
            size_class=cls_list[i],
            lexical_digest=digest_array(hashes[t_b[i] : t_b[i + 1]]),
            shingle_digest=digest_array(mins),
            minhash=mins,
            mod_sample=mod[mod_b[i] : mod_b[i + 1]],
            supershingles=sup[sup_b[i] : sup_b[i + 1]],
            coates=signatures[i],
        ))
    return out


# A share estimated from n samples has a 95 % half-width of at most 1.96 * 0.5 / sqrt(n): 0.1 at 96 samples.
# Broder's size classes keep 50-100 samples per document, so two documents of the same or adjacent size
# classes share enough of them; beyond that the smaller document keeps a handful at the common modulus
# (a 2 KB part of a 100 KB host: about one), and its containment is taken from the winnowed fingerprints
# both documents keep (hundreds), or from the exact shingle sets where the texts are at hand.
MIN_SKETCH_SAMPLES = 48
_Z95 = 1.96


@dataclass(frozen=True)
class ContainmentEstimate:
    """A containment (or a resemblance: `resemblance_evidence`) and the evidence behind it: how many samples,
    drawn how."""

    value: float
    samples: int  # elements of the sample it rests on, the contained document's or the union's (0: exact)
    method: str  # "sketch" (Theorem 1 on L_i), "winnowed" (shared winnowed fingerprints) or "exact"

    @property
    def interval(self) -> tuple[float, float]:
        """95 % Wilson score interval of the share (the value itself when exact)."""
        if self.method == "exact" or self.samples <= 0:
            return self.value, self.value
        n, p, z2 = self.samples, self.value, _Z95 * _Z95
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = _Z95 * float(np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))) / (1 + z2 / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    @property
    def error(self) -> float:
        """Half the width of the 95 % interval: what the value may be off by."""
        low, high = self.interval
        return (high - low) / 2

    def to_json(self) -> dict[str, object]:
        low, high = self.interval
        return {"value": round(self.value, 6), "low": round(low, 6), "high": round(high, 6),
                "samples": self.samples, "method": self.method}


def containment_estimate(l_contained: np.ndarray, l_container: np.ndarray, shared_winnowed: int | None = None,
                         n_winnowed: int = 0) -> ContainmentEstimate:
    """Containment of one document in another from the better-supported sample.

    Theorem 1 on the size-class samples at the common modulus when the contained document keeps at
    least MIN_SKETCH_SAMPLES of them; otherwise, when the caller knows how many of the document's
    `n_winnowed` distinct winnowed fingerprints the other document also keeps (`shared_winnowed`, the
    postings count), their share.
    """
    samples = int(l_contained.shape[0])
    if samples < MIN_SKETCH_SAMPLES and shared_winnowed is not None and n_winnowed > samples:
        return ContainmentEstimate(min(1.0, shared_winnowed / n_winnowed), n_winnowed, "winnowed")
    return ContainmentEstimate(containment_mod(l_contained, l_container), samples, "sketch")


@dataclass(frozen=True)
class PairEstimate:
    """Theorem 1 estimates for one pair of sketches."""

    resemblance: float  # from MIN_s
    resemblance_mod: float  # from L_i
    containment_a_in_b: float
    containment_b_in_a: float
    samples: int  # |L(A) u L(B)| at the common modulus: the evidence behind the values
    edit_distance_estimate: int
    shared_supershingle: bool
    containment_a: ContainmentEstimate | None = None  # the evidence behind containment_a_in_b
    containment_b: ContainmentEstimate | None = None
    resemblance_of: ContainmentEstimate | None = None  # the evidence behind resemblance (its interval)

    @property
    def errors(self) -> tuple[float, float, float]:
        """The 95 % half-widths of (resemblance, a in b, b in a): what each printed value may be off by."""
        r, a, b = (e.error if e is not None else 0.0 for e in (self.resemblance_of, self.containment_a,
                                                                self.containment_b))
        return r, a, b


def _common_mod_samples(a: Sketch, b: Sketch) -> tuple[np.ndarray, np.ndarray]:
    if a.params_key != b.params_key:
        raise ParameterMismatchError("sketches were made with different parameters (params keys differ)")
    common = max(a.size_class, b.size_class)
    # L_{i+1} is computed from L_i by keeping the elements 0 mod 2**(i+1)
    return mod_sample(a.mod_sample, 2**common), mod_sample(b.mod_sample, 2**common)


def estimated_edit_distance(a: Sketch, b: Sketch) -> int:
    """Coates' estimate, never below the difference of the lengths (a lower bound of the true distance)."""
    return max(coates.estimated_edit_distance(a.coates, b.coates), abs(a.text_length - b.text_length))


# the most work (signature bits of the longer x 64-bit words of the shorter: the bit-parallel Levenshtein's)
# one estimate may take, ~1 s; a pair of multi-megabyte changelogs took minutes
EDIT_ESTIMATE_WORK = 1_000_000_000


def estimated_edit_distances(pairs: list[tuple[Sketch, Sketch]], workers: int = 1,
                             max_work: int = EDIT_ESTIMATE_WORK) -> list[int | None]:
    """`estimated_edit_distance` of many pairs in one call (`coates.estimated_edit_distances`: no Python work
    a pair; a report of 50,000 pairs spent 7.6 s on them one at a time). None for a pair whose estimate
    would cost more than `max_work` (say "not computed", never a guess)."""
    sizes = [sorted((len(a.coates.bits), len(b.coates.bits))) for a, b in pairs]
    within = [k for k, (short, long) in enumerate(sizes) if long * (short // 64 + 1) <= max_work]
    chosen = [pairs[k] for k in within]
    coates_estimates = coates.estimated_edit_distances([(a.coates, b.coates) for a, b in chosen], workers)
    lengths = np.abs(np.asarray([a.text_length - b.text_length for a, b in chosen], dtype=np.int64))
    out: list[int | None] = [None] * len(pairs)
    for k, estimate in zip(within, np.maximum(coates_estimates, lengths).tolist() if chosen else []):
        out[k] = int(estimate)
    return out


def _samples_without(a: Sketch, b: Sketch, sample_size: int, excluded: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Both MIN_s samples, both L_i samples at the common modulus, and the s to estimate with, without the
    `excluded` shingles (see `theorem1_estimates`)."""
    la, lb = _common_mod_samples(a, b)
    ma, mb = a.minhash, b.minhash
    if excluded is not None and excluded.shape[0]:
        ma, mb, la, lb = (arrays.outside(v, excluded) for v in (ma, mb, la, lb))
        for kept, whole in ((ma, a.minhash), (mb, b.minhash)):
            if whole.shape[0] >= sample_size:  # a bottom-s sample of a larger set: only `kept` are known
                sample_size = min(sample_size, kept.shape[0])
    return ma, mb, la, lb, sample_size


def _estimates(a: Sketch, b: Sketch, sample_size: int, shared_winnowed: int | None,
               n_winnowed: tuple[int, int], excluded: np.ndarray | None
               ) -> tuple[ContainmentEstimate, ContainmentEstimate, ContainmentEstimate, np.ndarray, np.ndarray]:
    """`theorem1_estimates`, and the two L_i samples at the common modulus they were made from."""
    whole = a.minhash.shape[0] < sample_size and b.minhash.shape[0] < sample_size  # both sets, not samples
    ma, mb, la, lb, sample_size = _samples_without(a, b, sample_size, excluded)
    return (resemblance_evidence(ma, mb, sample_size, whole),
            containment_estimate(la, lb, shared_winnowed, n_winnowed[0]),
            containment_estimate(lb, la, shared_winnowed, n_winnowed[1]), la, lb)


def theorem1_estimates(a: Sketch, b: Sketch, sample_size: int, shared_winnowed: int | None = None,
                       n_winnowed: tuple[int, int] = (0, 0), excluded: np.ndarray | None = None,
                       ) -> tuple[ContainmentEstimate, ContainmentEstimate, ContainmentEstimate]:
    """(resemblance, containment of a in b, of b in a), each with what it rests on (its interval): what
    all-pairs scoring needs, without the edit-distance estimate that `compare_sketches` adds for one pair.
    Given the pair's shared winnowed fingerprints, containment of a much smaller document comes from them
    (`containment_estimate`).

    `excluded`: sorted uint64 shingles that count in neither document (base text, `engine/base.py`), left
    out of the samples: what stays of a bottom-s sample is a bottom sample of the rest, so the resemblance
    is estimated from the smaller of the two that stay (a sample that held the whole set stays whole), and
    L_i(A) without them is L_i of the rest. `shared_winnowed` and `n_winnowed` must then leave them out too.
    """
    return _estimates(a, b, sample_size, shared_winnowed, n_winnowed, excluded)[:3]


def compare_sketches(a: Sketch, b: Sketch, sample_size: int, shared_winnowed: int | None = None,
                     n_winnowed: tuple[int, int] = (0, 0), excluded: np.ndarray | None = None) -> PairEstimate:
    """Every estimate for one pair (`excluded`: as `theorem1_estimates`)."""
    resemblance, in_b, in_a, la, lb = _estimates(a, b, sample_size, shared_winnowed, n_winnowed, excluded)
    return PairEstimate(
        resemblance=resemblance.value,
        resemblance_mod=resemblance_mod(la, lb),
        containment_a_in_b=in_b.value,
        containment_b_in_a=in_a.value,
        samples=int(np.union1d(la, lb).shape[0]),
        edit_distance_estimate=estimated_edit_distance(a, b),
        shared_supershingle=bool(np.intersect1d(a.supershingles, b.supershingles).shape[0]),
        containment_a=in_b,
        containment_b=in_a,
        resemblance_of=resemblance,
    )
