"""Canonicalization: text -> word (or character) tokens with their offsets.

Two texts get the same token hashes when their words are equal after Unicode
NFKC normalization and case folding, punctuation and markup aside (Broder's
"canonical sequence of tokens"). Each token keeps its [start, end) character
offsets in the *original* text, so passages can be shown later.

Everything is vectorized over numpy arrays; no Python loop runs per character
or per token:

* each distinct non-ASCII code point is expanded once to the NFKD form of its
  case fold (NFKD is applied char by char, NFKC's equality classes are those of
  NFKD, so hashing the decomposed stream identifies exactly the strings NFKC
  identifies, up to the ordering of stacked combining marks);
* characters are classed as word (letters, digits, combining marks), isolated
  (CJK ideographs and kana, one token each since those scripts do not use
  spaces) or separator; format characters such as soft hyphens vanish;
* the canonical stream is kept as one byte per point (the point itself below
  256, 0 for a separator, a marker for a wider word point), so ASCII text is
  lower-cased by one `bytes.translate`, and the few wider points are listed apart;
* a token's hash is its points packed into 64-bit chunks (8 bytes, or two
  32-bit units once a point is 256 or more), read at the token's start through
  an unaligned view, then mixed: a token of up to 8 narrow points costs a
  gather, a mask and a mixer, whatever its length in characters.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import numpy as np

from scanner.engine.arrays import expand_ranges, ranks
from scanner.engine.fingerprint import mix64_inplace

_SEPARATOR, _WORD, _ISOLATED = 0, 1, 2
_BASE = np.uint64(0x100000001B3)  # odd, hence invertible modulo 2**64
_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
# Domain of a token's chunks: bytes (every point below 256) or 32-bit units.
_NARROW_DOMAIN = np.uint64(0x9E3779B97F4A7C15)
_WIDE_DOMAIN = np.uint64(0xC2B2AE3D27D4EB4F)
_WIDE_MARK = 1  # stream byte of a word point >= 256 (no word point is 1: it is a control)
_SPECIAL_MARK = 2  # while building the stream: a character of 0 or 2+ points (2 is a control too)
_PAD = 8  # zero bytes after a byte stream, so an 8-byte read at any point stays inside
_FEW_SPECIALS = 64  # up to this many expanding or vanishing characters, a stream is spliced by slices
_BYTE_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)
_UNIT_MASKS = np.array([0, 0xFFFFFFFF, (1 << 64) - 1], dtype=np.uint64)
_BYTE_MASKS.flags.writeable = False
_UNIT_MASKS.flags.writeable = False


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


def _ascii_translation() -> bytes:
    """The byte map of the stream: ASCII letters and digits lower-cased, every other byte 0."""
    table = bytearray(256)
    for code in range(128):
        ch = chr(code)
        if ch.isalnum():
            table[code] = ord(ch.lower())
    return bytes(table)


_ASCII_TRANSLATION = _ascii_translation()


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


def _powers(low: np.ndarray, high: np.ndarray, count: int) -> np.ndarray:
    """The first `count` powers (up to 2**32 of them)."""
    if count <= _POW_SPLIT:
        return low[:count]
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
            at = expand_ranges(inner_lo, sizes)
            owned[at] = np.repeat(self.pos[many], sizes)
        return owned


@dataclass(frozen=True)
class _Stream:
    """The canonical points of a text, one byte each (see the module docstring).

    `framed` is a zero byte, the stream's `length` points, then _PAD zero bytes;
    `wide_at`/`wide_codes` list the word points >= 256 (ascending), and
    `isolated_at` the CJK points among them, each a token alone.
    """

    framed: np.ndarray  # uint8, 1 + length + _PAD
    length: int
    wide_at: np.ndarray  # int64
    wide_codes: np.ndarray  # uint32
    isolated_at: np.ndarray  # int64
    expansion: _Expansion | None  # None: one point per character

    @property
    def points(self) -> np.ndarray:
        """The stream, followed by its padding."""
        return self.framed[1:]


_NO_POSITIONS = np.empty(0, dtype=np.int64)
_NO_POSITIONS.flags.writeable = False


def _translated(data: bytes | np.ndarray) -> np.ndarray:
    """The ASCII byte map applied to `data`, framed by zeros (see _Stream): a writable uint8 array."""
    buffer = bytearray(1 + len(data) + _PAD)
    buffer[1 : 1 + len(data)] = data if isinstance(data, bytes) else data.data  # .data: the array's buffer
    return np.frombuffer(buffer.translate(_ASCII_TRANSLATION), dtype=np.uint8)


def _spliced(framed: np.ndarray, at: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """`framed` with the point of each character at stream position `at` replaced by
    `lengths` zero points (filled in later): a few slices, for a few such characters."""
    pieces = []
    previous = 0
    for position, length in zip((at + 1).tolist(), lengths.tolist()):
        pieces.append(framed[previous:position])
        pieces.append(np.zeros(length, dtype=np.uint8))
        previous = position + 1
    pieces.append(framed[previous:])
    return np.concatenate(pieces)


def _code_points(text: str) -> np.ndarray:
    """Code points of a non-ASCII text: uint16 when it has no astral character
    (UTF-16 then has one unit per character; half the bytes of UTF-32), else uint32."""
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) == 2 * len(text):
        return np.frombuffer(data, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


_ASCII_BYTES = np.frombuffer(_ASCII_TRANSLATION[:128], dtype=np.uint8)
_NO_CODES = np.empty(0, dtype=np.uint32)
_NO_FLAGS = np.empty(0, dtype=np.bool_)
for _constant in (_NO_CODES, _NO_FLAGS):
    _constant.flags.writeable = False


@dataclass(frozen=True)
class _Alphabet:
    """The distinct non-ASCII characters of a text, each expanded once: its points (`offsets`,
    `lengths` into `codes`), their stream bytes and whether they are wide."""

    chars: np.ndarray
    lengths: np.ndarray
    offsets: np.ndarray
    codes: np.ndarray
    classes: np.ndarray
    point_byte: np.ndarray
    point_wide: np.ndarray

    @classmethod
    def of(cls, chars: np.ndarray) -> "_Alphabet":
        lengths, offsets, codes, classes = _expand_unique(chars)
        point_byte = np.where(classes == _SEPARATOR, 0, np.where(codes < 256, codes, _WIDE_MARK)).astype(np.uint8)
        point_wide = (codes >= 256) & (classes != _SEPARATOR)
        return cls(chars, lengths, offsets, codes, classes, point_byte, point_wide)


def _alphabet_of(values: np.ndarray) -> tuple[_Alphabet, np.ndarray]:
    """The alphabet of the non-ASCII code points among `values` (not empty), and a table from code
    point to index in it: distinct values without sorting (numpy's unique is slow on large arrays)."""
    size = max(int(values.max()) + 1, 128)
    present = np.zeros(size, dtype=np.bool_)
    present[values] = True
    present[:128] = False
    alphabet = _Alphabet.of(np.flatnonzero(present))
    slot = np.zeros(size, dtype=np.int32)
    slot[alphabet.chars] = np.arange(alphabet.chars.shape[0], dtype=np.int32)
    return alphabet, slot


def _canonical_stream(text: str) -> tuple[_Stream, np.ndarray]:
    """The canonical stream of a text, and its raw code points (uint8 for ASCII, else uint16 or uint32).

    Only the distinct non-ASCII characters are looked at one by one. A text
    that is mostly ASCII is translated as ASCII and patched where the others
    stand; one that is not (Cyrillic, CJK) goes through tables indexed by code
    point, a pass over the text per table.
    """
    if text.isascii():
        data = text.encode("ascii")
        return _Stream(_translated(data), len(data), _NO_POSITIONS, _NO_CODES, _NO_POSITIONS, None), \
            np.frombuffer(data, dtype=np.uint8)
    cps = _code_points(text)
    high = cps >= 128
    if np.count_nonzero(high) * 8 < cps.shape[0]:
        return _mostly_ascii_stream(cps, np.flatnonzero(high)), cps
    return _table_stream(cps), cps


def _mostly_ascii_stream(cps: np.ndarray, high_at: np.ndarray) -> _Stream:
    """ASCII translation of the whole text, then the few non-ASCII characters written in."""
    high = cps[high_at]
    alphabet, slot = _alphabet_of(high)
    which = slot[high]
    framed = _translated(cps.astype(np.uint8))
    single = alphabet.lengths[which] == 1
    at = high_at[single]
    point = alphabet.offsets[which[single]]
    framed[1 + at] = alphabet.point_byte[point]
    wide = alphabet.point_wide[point]
    point = point[wide]
    return _moved_by_specials(framed, cps.shape[0], alphabet, high_at[~single], which[~single], at[wide],
                              alphabet.codes[point], alphabet.classes[point] == _ISOLATED)


def _table_stream(cps: np.ndarray) -> _Stream:
    """Every character through one table indexed by code point: its stream byte, or a marker for the
    wide and the expanding ones, found afterwards among the bytes (no array wider than a byte per character)."""
    n = cps.shape[0]
    alphabet, slot = _alphabet_of(cps)
    size = slot.shape[0]
    chars = alphabet.chars
    one = alphabet.lengths == 1
    head = alphabet.offsets[one]  # the point of each one-point character
    byte_of = np.zeros(size, dtype=np.uint8)
    byte_of[:128] = _ASCII_BYTES
    byte_of[chars[one]] = alphabet.point_byte[head]  # _WIDE_MARK for a wide point
    byte_of[chars[~one]] = _SPECIAL_MARK
    framed = np.zeros(1 + n + _PAD, dtype=np.uint8)
    np.take(byte_of, cps, out=framed[1 : 1 + n])
    points = framed[1 : 1 + n]
    wide_at, wide_codes, wide_iso = _NO_POSITIONS, _NO_CODES, _NO_FLAGS
    wide_head = alphabet.point_wide[head]
    if wide_head.any():  # one-point characters with a wide point: which point
        wide_at = np.flatnonzero(points == _WIDE_MARK)
        point = alphabet.offsets[slot.take(cps.take(wide_at))]
        wide_codes, wide_iso = alphabet.codes[point], alphabet.classes[point] == _ISOLATED
    special_at, which = _NO_POSITIONS, _NO_POSITIONS
    if not one.all():
        special_at = np.flatnonzero(points == _SPECIAL_MARK)
        which = slot.take(cps.take(special_at))
    return _moved_by_specials(framed, n, alphabet, special_at, which, wide_at, wide_codes, wide_iso)


def _moved_by_specials(framed: np.ndarray, n: int, alphabet: _Alphabet, special_at: np.ndarray, which: np.ndarray,
                       wide_at: np.ndarray, wide_codes: np.ndarray, wide_iso: np.ndarray) -> _Stream:
    """The stream once the characters of 0 or 2+ points (soft hyphens, ligatures, decomposed
    accents; `special_at`, ascending, `which` of the alphabet) are spliced in; `framed` holds one
    byte per character, and `wide_*` the wide points of one-point characters."""
    if special_at.shape[0] == 0:
        return _Stream(framed, n, wide_at, wide_codes, wide_at[wide_iso], None)
    lengths = alphabet.lengths[which]
    delta = lengths - 1
    moved = np.concatenate(([0], np.cumsum(delta)))  # how far the specials before a character move it
    first = special_at + moved[:-1]  # stream index of each special's first point
    total = n + int(moved[-1])
    at = expand_ranges(first, lengths)  # the specials' points in the stream
    source = expand_ranges(alphabet.offsets[which], lengths)
    if special_at.shape[0] <= _FEW_SPECIALS:
        framed = _spliced(framed, special_at, lengths)
    else:  # e.g. decomposed accents in French text: every other character moves, by two masks
        keep = np.ones(n, dtype=np.bool_)
        keep[special_at] = False
        owned = np.ones(total, dtype=np.bool_)
        owned[at] = False
        spliced = np.zeros(1 + total + _PAD, dtype=np.uint8)
        spliced[1 : 1 + total][owned] = framed[1 : 1 + n][keep]
        framed = spliced
    framed[1 + at] = alphabet.point_byte[source]  # the specials' points, written where they land
    if wide_at.shape[0]:  # each moves by the specials before it: the few specials searched in the many points
        cuts = np.searchsorted(wide_at, special_at)
        wide_at = wide_at + np.repeat(moved, np.diff(cuts, prepend=0, append=wide_at.shape[0]))
    own_wide = alphabet.point_wide[source]
    if own_wide.any():  # wide points inside expansions (combining marks, jamo, a squared CJK word)
        more_at, source = at[own_wide], source[own_wide]
        more_codes, more_iso = alphabet.codes[source], alphabet.classes[source] == _ISOLATED
        if wide_at.shape[0] == 0:  # e.g. Hangul: every syllable expands to jamo
            wide_at, wide_codes, wide_iso = more_at, more_codes, more_iso
        else:  # merged in order (np.insert sorts only the inserted)
            into = np.searchsorted(wide_at, more_at)
            wide_at = np.insert(wide_at, into, more_at)
            wide_codes = np.insert(wide_codes, into, more_codes)
            wide_iso = np.insert(wide_iso, into, more_iso)
    return _Stream(framed, total, wide_at, wide_codes, wide_at[wide_iso], _Expansion(special_at, first, lengths))


def _token_bounds(stream: _Stream, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """[start, end) of each token in stream coordinates."""
    in_token = stream.framed[: stream.length + 2] != 0  # the frame's zeros open the first token and close the last
    if unit == "char":
        starts = np.flatnonzero(in_token[1:-1])
        return starts, starts + 1
    if stream.isolated_at.shape[0] == 0:
        edges = np.flatnonzero(in_token[1:] != in_token[:-1])  # where a token starts, then where it ends
        return np.ascontiguousarray(edges[0::2]), np.ascontiguousarray(edges[1::2])
    # each isolated (CJK) point is a token alone: it also starts and ends one, and so do its neighbours
    isolated = np.zeros(stream.length + 2, dtype=np.bool_)
    isolated[stream.isolated_at + 1] = True
    here, before, after = in_token[1:-1], in_token[:-2], in_token[2:]
    cut = isolated[1:-1]
    starts = np.flatnonzero(here & (~before | cut | isolated[:-2]))
    ends = np.flatnonzero(here & (~after | cut | isolated[2:])) + 1
    return starts, ends


def _span_polynomials(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """sum_j values[j] * B**(end - 1 - j) modulo 2**64 for every span [start, end) of `values`.

    With prefix[i] = sum_{j < i} values[j] * B**-j this is
    (prefix[end] - prefix[start]) * B**(end - 1): one prefix sum for all spans,
    and each value is independent of where its span sits.
    """
    n = values.shape[0]
    prefix = np.zeros(n + 1, dtype=np.uint64)
    body = prefix[1:]
    np.multiply(values, _powers(_INV_LOW, _INV_HIGH, n), out=body)
    np.cumsum(body, out=body)
    out = prefix[ends]
    out -= prefix[starts]
    out *= _powers(_POW_LOW, _POW_HIGH, n)[ends - 1]
    return out


def _packed_hashes(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, per_chunk: int,
                   masks: np.ndarray, domain: np.uint64) -> np.ndarray:
    """mix64(P(chunks) ^ domain) for every token, P the polynomial of its packed chunks.

    `words[i]` is the 64-bit little-endian chunk that starts at unit i (an
    unaligned view); a chunk holds `per_chunk` units, and `masks[r]` keeps its
    first r units. Tokens of one chunk, nearly all words, are one gather.
    """
    hashes = words.take(starts, mode="wrap")  # take skips indexing's checks: faster on an unaligned view
    hashes &= masks.take(lengths, mode="clip")
    multi = np.flatnonzero(lengths > per_chunk)
    if multi.shape[0]:
        sizes = lengths[multi]
        counts = (sizes + (per_chunk - 1)) // per_chunk
        rank = ranks(counts)
        chunks = words.take(np.repeat(starts[multi], counts) + rank * per_chunk, mode="wrap")
        chunks &= masks.take(np.repeat(sizes, counts) - rank * per_chunk, mode="clip")
        chunk_ends = np.cumsum(counts)
        hashes[multi] = _span_polynomials(chunks, chunk_ends - counts, chunk_ends)
    hashes ^= domain
    return mix64_inplace(hashes)


def _unaligned_words(buffer: np.ndarray, unit_bytes: int, count: int) -> np.ndarray:
    """A read-only view of the 8 bytes at each of the first `count` units of `buffer`, as '<u8'."""
    return np.ndarray((count,), dtype="<u8", buffer=buffer, strides=(unit_bytes,))


def _token_hashes(stream: _Stream, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hash of every token: narrow tokens from the byte stream, tokens with a wide point from 32-bit units."""
    lengths = ends - starts
    hashes = _packed_hashes(_unaligned_words(stream.points, 1, stream.length), starts, lengths, 8,
                            _BYTE_MASKS, _NARROW_DOMAIN)
    wide_at = stream.wide_at
    if wide_at.shape[0] == 0:
        return hashes
    if wide_at.shape[0] * 16 <= stream.length:  # a few wide points (quotes, a name in Western text)
        owner = np.searchsorted(starts, wide_at, side="right") - 1  # their tokens, ascending
        first = np.ones(owner.shape[0], dtype=np.bool_)
        np.not_equal(owner[1:], owner[:-1], out=first[1:])  # distinct owners without np.unique
        wide_tokens = owner[first]
        sizes = lengths[wide_tokens]
        unit_ends = np.cumsum(sizes)
        unit_starts = unit_ends - sizes
        units = np.zeros(int(unit_ends[-1]) + 1, dtype="<u4")  # those tokens' points, one zero unit of padding
        units[:-1] = stream.points[expand_ranges(starts[wide_tokens], sizes)]
        units[unit_starts[np.cumsum(first) - 1] + wide_at - starts[owner]] = stream.wide_codes
    else:  # many (Cyrillic, CJK): wide points counted along the stream, which becomes 32-bit units
        seen = np.zeros(stream.length + 1, dtype=np.int32)
        np.cumsum(stream.points[: stream.length] == _WIDE_MARK, dtype=np.int32, out=seen[1:])
        wide_tokens = np.flatnonzero(seen[ends] > seen[starts])
        sizes = lengths[wide_tokens]
        unit_starts = starts[wide_tokens]
        units = stream.points.astype("<u4")  # padding included
        units[wide_at] = stream.wide_codes
    hashes[wide_tokens] = _packed_hashes(_unaligned_words(units, 4, units.shape[0] - 1), unit_starts, sizes, 2,
                                         _UNIT_MASKS, _WIDE_DOMAIN)
    return hashes


def _tokens_of(text: str, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token hashes, [start, end) character offsets, and the text's raw code points.

    The one tokenizer of both `canonicalize` and the batch path (which runs it on
    the texts joined by a separator). Raw code points are uint8 for ASCII text,
    else uint16 (no astral characters) or uint32; `coates` sums either exactly.
    """
    stream, raw = _canonical_stream(text)
    starts, ends = _token_bounds(stream, unit)
    if starts.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), empty, empty, raw
    hashes = _token_hashes(stream, starts, ends)
    if stream.expansion is None:
        return hashes, starts, ends, raw
    # the original character of each token's first and last point
    return hashes, stream.expansion.owner(starts), stream.expansion.owner(ends - 1) + 1, raw

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

    `starts`/`ends` are offsets into the joined text (texts joined by
    BATCH_SEPARATOR), where text i begins at `char_starts[i]` (char_starts[-1]
    is the joined length + 1); `tokens` and `split` give offsets into each
    text's own characters, as `canonicalize` does. `code_points` are the joined
    text's raw code points (uint8 when it is ASCII, else uint16 or uint32), for
    the Coates signatures.
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
        shift = int(self.char_starts[i])
        return Tokens(self.hashes[a:b], self.starts[a:b] - shift, self.ends[a:b] - shift)

    def split(self) -> list[Tokens]:
        """Every text's tokens (offsets moved per text, only for the callers that want them)."""
        bounds = self.offsets.tolist()
        h, s, e = self.hashes, self.starts, self.ends
        empty = Tokens.empty()
        return [Tokens(h[a:b], s[a:b] - shift, e[a:b] - shift) if a != b else empty
                for a, b, shift in zip(bounds[:-1], bounds[1:], self.char_starts.tolist())]


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
    return TokenBatch(hashes, starts, ends, offsets, char_starts, raw)


# Characters per batch: the arrays of a batch then stay in cache and the
# allocator reuses their memory.
BATCH_CHARS = 1 << 18


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
