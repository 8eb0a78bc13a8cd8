"""Canonicalization: text -> word (or character) tokens with their offsets.

Two texts get the same token hashes when their words are equal after Unicode
NFKC normalization and case folding, punctuation and markup aside (Broder's
"canonical sequence of tokens"). Each token keeps its [start, end) character
offsets in the *original* text, so passages can be shown later.

Everything is vectorized over a numpy array of code points:

* each distinct non-ASCII code point is expanded once to its NFKD form of its
  case fold (NFKD is applied char by char, NFKC's equality classes are those of
  NFKD, so hashing the decomposed stream identifies exactly the strings NFKC
  identifies, up to the ordering of stacked combining marks);
* characters are classed as word (letters, digits, combining marks), isolated
  (CJK ideographs and kana, one token each since those scripts do not use
  spaces) or separator; format characters such as soft hyphens vanish;
* token hashes come from polynomial prefix sums modulo 2**64, then a 64-bit
  mixer, so no Python loop runs per token.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import numpy as np

from scanner.fingerprint import _mix64_inplace

_SEPARATOR, _WORD, _ISOLATED = 0, 1, 2
_BASE = np.uint64(0x100000001B3)  # odd, hence invertible modulo 2**64
_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
_LENGTH_SALT = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class Tokens:
    """Canonical tokens of a text: stable 64-bit hashes and original offsets."""

    hashes: np.ndarray  # uint64, one per token
    starts: np.ndarray  # int64 character offsets into the original text
    ends: np.ndarray  # int64, exclusive

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    @classmethod
    def empty(cls) -> "Tokens":
        return cls(np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.int64))


def _ascii_tables() -> tuple[np.ndarray, np.ndarray]:
    lower = np.arange(128, dtype=np.uint8)
    classes = np.zeros(128, dtype=np.uint8)
    for code in range(128):
        ch = chr(code)
        if ch.isalnum():
            classes[code] = _WORD
        lower[code] = ord(ch.lower())
    return lower, classes


_ASCII_LOWER, _ASCII_CLASS = _ascii_tables()
_ASCII_CODE = np.where(_ASCII_CLASS == _SEPARATOR, 0, _ASCII_LOWER).astype(np.uint8)  # lower case, separators 0
for _table in (_ASCII_LOWER, _ASCII_CLASS, _ASCII_CODE):
    _table.flags.writeable = False


def _power_tables(base: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """base**i mod 2**64 as LOW[i & 0xFFFF] * HIGH[i >> 16]: read-only constants,
    so most texts slice their powers instead of running a serial cumprod."""
    low = np.empty(_POW_SPLIT, dtype=np.uint64)
    low[0] = 1
    np.cumprod(np.full(_POW_SPLIT - 1, base, dtype=np.uint64), out=low[1:])
    step = np.uint64(pow(int(base), _POW_SPLIT, 2**64))
    high = np.empty(_POW_SPLIT, dtype=np.uint64)
    high[0] = 1
    np.cumprod(np.full(_POW_SPLIT - 1, step, dtype=np.uint64), out=high[1:])
    low.flags.writeable = False
    high.flags.writeable = False
    return low, high


_POW_SPLIT = 1 << 16
_POW_LOW, _POW_HIGH = _power_tables(_BASE)
_INV_LOW, _INV_HIGH = _power_tables(_BASE_INV)


_POW_CACHED = 1 << 18  # a batch (BATCH_CHARS below) slices its powers from a cached table


@functools.lru_cache(maxsize=2)
def _cached_powers(inverse: bool) -> np.ndarray:
    low, high = (_INV_LOW, _INV_HIGH) if inverse else (_POW_LOW, _POW_HIGH)
    table = (high[: _POW_CACHED // _POW_SPLIT, None] * low[None, :]).ravel()
    table.flags.writeable = False
    return table


def _powers(low: np.ndarray, high: np.ndarray, count: int) -> np.ndarray:
    """The first `count` powers (texts up to 2**32 characters)."""
    if count <= _POW_SPLIT:
        return low[:count]
    if count <= _POW_CACHED:
        return _cached_powers(low is _INV_LOW)[:count]
    blocks = -(-count // _POW_SPLIT)
    return (high[:blocks, None] * low[None, :]).ravel()[:count]  # one sequential outer product


def _is_isolated(code: int) -> bool:
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= code <= 0x3134F  # CJK extensions B..G
    )


def _class_of(ch: str) -> int:
    code = ord(ch)
    if _is_isolated(code):
        return _ISOLATED
    category = unicodedata.category(ch)
    if category[0] in "LNM":
        return _WORD
    return _SEPARATOR


@functools.lru_cache(maxsize=1 << 16)
def _expand_char(code: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Canonical code points and classes of one character (pure, hence memoized)."""
    ch = chr(code)
    if unicodedata.category(ch) == "Cf":  # soft hyphen, zero-width joiner...
        return (), ()
    expanded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
    return tuple(ord(part) for part in expanded), tuple(_class_of(part) for part in expanded)


def _expand_unique(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Canonical expansion of each distinct code point (a loop over the alphabet, not the text).

    Returns per-unique lengths and offsets into flat arrays of expanded code
    points and their classes.
    """
    lengths = np.zeros(codes.shape[0], dtype=np.int64)
    flat_codes: list[int] = []
    flat_classes: list[int] = []
    for i, code in enumerate(codes.tolist()):
        expanded_codes, expanded_classes = _expand_char(code)
        lengths[i] = len(expanded_codes)
        flat_codes.extend(expanded_codes)
        flat_classes.extend(expanded_classes)
    offsets = np.zeros(codes.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return (
        lengths,
        offsets,
        np.asarray(flat_codes, dtype=np.uint32),
        np.asarray(flat_classes, dtype=np.uint8),
    )


_ASCII_LOWER16 = _ASCII_LOWER.astype(np.uint16)
_ASCII_LOWER32 = _ASCII_LOWER.astype(np.uint32)
_ASCII_LOWER16.flags.writeable = False
_ASCII_LOWER32.flags.writeable = False


@dataclass(frozen=True)
class _Expansion:
    """Where the stream is not one point per character: the characters whose
    expansion has 0 or 2+ points (`pos`, ascending), the stream index of their
    first point (`first`) and their point counts (`length`)."""

    pos: np.ndarray
    first: np.ndarray
    length: np.ndarray

    def owner(self, stream_index: np.ndarray) -> np.ndarray:
        """The original character of each stream point (`stream_index` ascending).

        The few special characters are searched in the many points, not the
        reverse: the points between two specials share one stream-to-text
        shift, so one repeat gives every point its shift.
        """
        cuts = np.searchsorted(stream_index, self.first)
        counts = np.diff(cuts, prepend=0, append=stream_index.shape[0])
        shift = np.concatenate(([0], self.pos + 1 - self.first - self.length))
        owned = stream_index + np.repeat(shift, counts)
        # points inside a multi-point expansion belong to its character
        many = self.length > 1
        inner_lo = cuts[many]
        inner_hi = np.searchsorted(stream_index, (self.first + self.length)[many])
        sizes = inner_hi - inner_lo
        if sizes.any():
            total = int(sizes.sum())
            at = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes - inner_lo, sizes)
            owned[at] = np.repeat(self.pos[many], sizes)
        return owned


def _code_points(text: str) -> np.ndarray:
    """Code points of a non-ASCII text: uint16 when it has no astral character
    (UTF-16 then has one unit per character; half the bytes of UTF-32), else uint32."""
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) == 2 * len(text):
        return np.frombuffer(data, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _canonical_stream(text: str) -> tuple[np.ndarray, np.ndarray, _Expansion | None, np.ndarray]:
    """Expanded canonical code points, their classes, the expansion map, and the raw code points.

    The expansion map is None when the expansion is one-to-one, the common case;
    raw code points are uint8 for ASCII text, else uint16 or uint32.
    """
    if text.isascii():
        # one gather: separators map to 0 and letters/digits never do, so the
        # codes double as classes (_token_bounds only asks "!= _SEPARATOR" of ASCII)
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        codes = np.take(_ASCII_CODE, raw)
        return codes, codes, None, raw
    cps = _code_points(text)
    high_pos = np.flatnonzero(cps >= 128)
    uniq, inverse = np.unique(cps[high_pos], return_inverse=True)
    u_len, u_off, u_codes, u_classes = _expand_unique(uniq)
    # every character mapped to its first expanded code point (one-to-one part);
    # clip mode maps every high code point to entry 127, then they are patched
    narrow = u_codes.shape[0] == 0 or int(u_codes.max()) <= 0xFFFF  # usual: 16-bit codes, half the bytes
    mapped = np.take(_ASCII_LOWER16 if narrow else _ASCII_LOWER32, cps, mode="clip")
    mapped_classes = np.take(_ASCII_CLASS, cps, mode="clip")
    if u_codes.shape[0]:
        head = np.minimum(u_off, u_codes.shape[0] - 1)
        mapped[high_pos] = u_codes[head][inverse]
        mapped_classes[high_pos] = u_classes[head][inverse]
    if (u_len == 1).all():  # e.g. only quotes, dashes, no-break spaces
        return mapped, mapped_classes, None, cps
    # only the special characters (0 or 2+ points) move anything: work on them alone
    char_len = u_len[inverse]
    special = np.flatnonzero(char_len != 1)
    sp_pos, sp_len, sp_u = high_pos[special], char_len[special], inverse[special]
    delta = sp_len - 1
    shift = np.zeros(special.shape[0], dtype=np.int64)
    np.cumsum(delta[:-1], out=shift[1:])
    sp_first = sp_pos + shift
    total = cps.shape[0] + int(delta.sum())
    many = sp_len > 1
    extra = sp_len[many] - 1  # points after the first of each multi-point expansion
    rank = np.arange(int(extra.sum()), dtype=np.int64) - np.repeat(np.cumsum(extra) - extra, extra) + 1
    extra_at = np.repeat(sp_first[many], extra) + rank
    extra_src = np.repeat(u_off[sp_u[many]], extra) + rank
    vanished = sp_len == 0
    if vanished.any():
        keep = np.ones(cps.shape[0], dtype=np.bool_)
        keep[sp_pos[vanished]] = False
        mapped, mapped_classes = mapped[keep], mapped_classes[keep]
    codes = np.empty(total, dtype=mapped.dtype)
    classes = np.empty(total, dtype=np.uint8)
    if extra_at.shape[0]:
        own = np.ones(total, dtype=np.bool_)
        own[extra_at] = False
        codes[own] = mapped
        classes[own] = mapped_classes
        codes[extra_at] = u_codes[extra_src]
        classes[extra_at] = u_classes[extra_src]
    else:
        codes[:] = mapped
        classes[:] = mapped_classes
    return codes, classes, _Expansion(sp_pos, sp_first, sp_len), cps


def _token_bounds(classes: np.ndarray, unit: str, ascii_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """[start, end) of each token in stream coordinates."""
    if unit == "char":
        starts = np.flatnonzero(classes != _SEPARATOR)
        return starts, starts + 1
    if ascii_only or not (classes == _ISOLATED).any():
        # no CJK: tokens are the maximal runs of word characters, and the
        # changes of a zero-padded in-token flag alternate start, end, start...
        padded = np.zeros(classes.shape[0] + 2, dtype=np.bool_)
        np.not_equal(classes, _SEPARATOR, out=padded[1:-1])
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        return edges[0::2], edges[1::2]
    in_token = classes != _SEPARATOR
    isolated = classes == _ISOLATED
    prev_in = np.concatenate(([False], in_token[:-1]))
    prev_isolated = np.concatenate(([False], isolated[:-1]))
    begins = in_token & (~prev_in | isolated | prev_isolated)
    next_in = np.concatenate((in_token[1:], [False]))
    next_isolated = np.concatenate((isolated[1:], [False]))
    finishes = in_token & (~next_in | isolated | next_isolated)
    return np.flatnonzero(begins), np.flatnonzero(finishes) + 1


def _span_hashes(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Polynomial hash of codes[start:end] for every span, modulo 2**64, then mixed.

    The hash of a span of length L is sum_j (code_j + 1) * B**(end - 1 - j)
    = sum_j code_j * B**(end - 1 - j) + G(L), with G(L) = B**0 + ... + B**(L-1).
    With prefix[i] = sum_{j < i} code_j * B**-j, the first part is
    (prefix[end] - prefix[start]) * B**(end - 1): independent of where the span
    sits, so spans of many texts joined together hash as they would alone.
    """
    n = codes.shape[0]
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    body = prefix[1:]
    np.copyto(body, codes, casting="unsafe")  # widen in place (a mixed-type multiply is slower)
    body *= _powers(_INV_LOW, _INV_HIGH, n)
    np.cumsum(body, out=body)
    lengths = ends - starts
    geometric = np.empty(int(lengths.max()) + 1, dtype=np.uint64)
    geometric[0] = 0
    np.cumsum(_powers(_POW_LOW, _POW_HIGH, geometric.shape[0] - 1), out=geometric[1:])
    raw = prefix[ends]
    raw -= prefix[starts]
    raw *= _powers(_POW_LOW, _POW_HIGH, n)[ends - 1]
    raw += geometric[lengths]
    raw ^= lengths.astype(np.uint64) * _LENGTH_SALT
    return _mix64_inplace(raw)


def _tokens_of(text: str, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token hashes, [start, end) character offsets, and the text's raw code points.

    The one tokenizer of both `canonicalize` and the batch path (which runs it on
    the texts joined by a separator). Raw code points are uint8 for ASCII text,
    else uint16 (no astral characters) or uint32; `coates` sums either exactly.
    """
    codes, classes, expansion, raw = _canonical_stream(text)
    starts, ends = _token_bounds(classes, unit, ascii_only=raw.dtype == np.uint8)
    if starts.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), empty, empty, raw
    hashes = _span_hashes(codes, starts, ends)
    if expansion is None:
        return hashes, starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False), raw
    # the original character of each token's first and last point
    return hashes, expansion.owner(starts), expansion.owner(ends - 1) + 1, raw


def _check_unit(unit: str) -> None:
    if unit not in ("word", "char"):
        raise ValueError(f"unknown token unit {unit!r}")


def canonicalize(text: str, unit: str = "word") -> Tokens:
    """Tokens of `text` after NFKC + casefold, without punctuation or markup.

    Args:
        text: the extracted text; offsets refer to its characters.
        unit: "word" (default) or "char" (each letter or digit is a token).
    """
    _check_unit(unit)
    if not text:
        return Tokens.empty()
    hashes, starts, ends, _ = _tokens_of(text, unit)
    if hashes.shape[0] == 0:
        return Tokens.empty()
    return Tokens(hashes, starts, ends)


# --------------------------------------------------------------------------
# batches: many texts in one set of numpy passes

# Joins the texts of a batch. A control character is a separator in every
# unit, never vanishes (it is not a format character) and expands to itself,
# so no token and no Coates window of one text can reach into another.
BATCH_SEPARATOR = "\n"


@dataclass(frozen=True)
class TokenBatch:
    """Tokens of many texts, concatenated: text i owns tokens offsets[i]:offsets[i + 1].

    `starts`/`ends` are offsets into each text's own characters (as `canonicalize`
    gives them). `char_starts[i]` is where text i begins in the joined text
    (texts joined by BATCH_SEPARATOR; char_starts[-1] is the joined length + 1),
    and `code_points` are the joined text's raw code points (uint8 when it is
    ASCII, else uint16 or uint32), for the Coates signatures.
    """

    hashes: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    offsets: np.ndarray  # int64, len(texts) + 1
    char_starts: np.ndarray  # int64, len(texts) + 1
    code_points: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def tokens(self, i: int) -> Tokens:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if a == b:
            return Tokens.empty()
        return Tokens(self.hashes[a:b], self.starts[a:b], self.ends[a:b])

    def split(self) -> list[Tokens]:
        bounds = self.offsets.tolist()
        h, s, e = self.hashes, self.starts, self.ends
        empty = Tokens.empty()
        return [Tokens(h[a:b], s[a:b], e[a:b]) if a != b else empty for a, b in zip(bounds[:-1], bounds[1:])]


def canonicalize_batch(texts: list[str], unit: str = "word") -> TokenBatch:
    """`canonicalize` of every text at once (bit-identical results, one tokenizer pass).

    All texts go through one path: the ASCII one only when every text is ASCII,
    so callers with mixed batches should group them (see `ascii_groups`).
    """
    _check_unit(unit)
    count = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=count)
    char_starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=char_starts[1:])
    joined = BATCH_SEPARATOR.join(texts)
    if not joined:
        empty = np.empty(0, dtype=np.int64)
        return TokenBatch(np.empty(0, dtype=np.uint64), empty, empty, np.zeros(count + 1, dtype=np.int64),
                          char_starts, np.empty(0, dtype=np.uint8))
    hashes, starts, ends, raw = _tokens_of(joined, unit)
    if count == 1:
        return TokenBatch(hashes, starts, ends, np.array([0, hashes.shape[0]], dtype=np.int64), char_starts, raw)
    offsets = np.searchsorted(starts, char_starts).astype(np.int64, copy=False)
    shift = np.repeat(char_starts[:-1], offsets[1:] - offsets[:-1])
    return TokenBatch(hashes, starts - shift, ends - shift, offsets, char_starts, raw)


# Characters per batch: the arrays of a batch then stay in cache, the allocator
# reuses their memory, and the power tables are sliced from a cached one.
BATCH_CHARS = _POW_CACHED


def ascii_groups(texts: list[str], limit: int | None = None) -> list[list[int]]:
    """Indices of texts to process together, in order: ASCII texts and the others
    apart, cut into batches of about `limit` characters (BATCH_CHARS by default).

    ASCII texts take the uint8 fast path; one non-ASCII text would otherwise put
    the whole batch on the general path. A text longer than `limit` is a batch alone.
    """
    limit = BATCH_CHARS if limit is None else limit
    batches: list[list[int]] = []
    for want_ascii in (True, False):
        current: list[int] = []
        size = 0
        for i, text in enumerate(texts):
            if text.isascii() != want_ascii:
                continue
            if current and size + len(text) > limit:
                batches.append(current)
                current, size = [], 0
            current.append(i)
            size += len(text) + 1
        if current:
            batches.append(current)
    return batches


def canonicalize_many(texts: list[str], unit: str = "word") -> list[Tokens]:
    """`[canonicalize(t, unit) for t in texts]`, computed in a few numpy passes."""
    _check_unit(unit)
    out: list[Tokens] = [Tokens.empty()] * len(texts)
    for group in ascii_groups(texts):
        for i, tokens in zip(group, canonicalize_batch([texts[i] for i in group], unit).split()):
            out[i] = tokens
    return out


def canonical_words(text: str, unit: str = "word") -> list[str]:
    """The canonical form of each token, for display and tests (not a hot path)."""
    tokens = canonicalize(text, unit)
    return [
        unicodedata.normalize("NFKC", text[s:e].casefold())
        for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())
    ]
