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
* letters that a reader takes for Latin letters (Cyrillic а е о р с х, Greek ο,
  ...: Unicode's confusables, `confusables.py`) become those letters, so text
  retyped with look-alikes keeps its words (an evasion of copy detection);
* characters are classed as word (letters, digits, combining marks), isolated
  (CJK ideographs and kana, one token each since those scripts do not use
  spaces) or separator; format characters such as soft hyphens vanish;
* the canonical stream is kept as one byte per point (the point itself below
  256, 0 for a separator, a marker for a wider word point), so ASCII text is
  lower-cased by one `bytes.translate`, and the few wider points are listed apart;
* a token's hash is its points packed into 64-bit chunks (8 bytes, or two
  32-bit units once a point is 256 or more), read at the token's start through
  an unaligned view, then mixed: a token of up to 8 narrow points costs a
  gather, a mask and a mixer, whatever its length in characters;
* letter-spaced words ("c o p i e d") are joined into one token spanning their
  letters (`_letter_spaced`), another evasion; `normalizations` says where a
  text needed either, so a match can show the evasion as evidence.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from scanner.engine.arrays import expand_ranges, ranks
from scanner.engine.confusables import latin_lookalikes
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
    # word tokens: positions of the letter-spaced words joined into one token ("s e c r e t"), so that a match's
    # evidence (`normalizations`) need not cut the text again; None for character tokens, or when not known
    spaced: np.ndarray | None = None

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
    """Canonical code points and classes of one character (pure, hence memoized): NFKD of its case
    fold, each point that looks like a Latin letter replaced by that letter; format characters vanish."""
    ch = chr(code)
    if unicodedata.category(ch) == "Cf":  # soft hyphen, zero-width joiner...
        return (), ()
    lookalike = latin_lookalikes()
    points = tuple(lookalike.get(ord(part), ord(part))
                   for part in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()))
    return points, tuple(_class_of(chr(point)) for point in points)


@functools.lru_cache(maxsize=1 << 16)
def _looks_latin(code: int) -> bool:
    """Whether a character outside ASCII is read as a Latin letter it looks like: a look-alike of the
    table, or a compatibility form that is one ASCII letter (full-width ａ, mathematical 𝐚), both
    UTS #39 confusables. Accented letters and ligatures (several points) are not."""
    ch = chr(code)
    if code < 128 or unicodedata.category(ch) == "Cf":
        return False
    lookalike = latin_lookalikes()
    points = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
    return any(ord(part) in lookalike for part in points) or (
        len(points) == 1 and points.isascii() and points.isalpha())


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


def _token_hashes(stream: _Stream, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Hash of every token (`lengths` points from `starts`): narrow tokens from the byte stream, tokens with
    a wide point from 32-bit units."""
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
        wide_tokens = np.flatnonzero(seen[starts + lengths] > seen[starts])
        sizes = lengths[wide_tokens]
        unit_starts = starts[wide_tokens]
        units = stream.points.astype("<u4")  # padding included
        units[wide_at] = stream.wide_codes
    hashes[wide_tokens] = _packed_hashes(_unaligned_words(units, 4, units.shape[0] - 1), unit_starts, sizes, 2,
                                         _UNIT_MASKS, _WIDE_DOMAIN)
    return hashes


# Characters that separate the letters of a letter-spaced word: those whose NFKD is one space
# (space, no-break space, the typographic spaces; tests/test_evasion_canon.py derives the list).
_SPACES = np.array([0x20, 0xA0, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000], dtype=np.uint32)
_SPACES.flags.writeable = False
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # where str.splitlines cuts
_MIN_SPACED = 3  # letters of a letter-spaced word that need no wider gaps around it


def _gap(text: str, o_starts: np.ndarray, o_ends: np.ndarray, i: int) -> str | None:
    """The text between tokens i - 1 and i; None at either end of the text."""
    if i == 0 or i == o_starts.shape[0]:
        return None
    return text[int(o_ends[i - 1]) : int(o_starts[i])]


def _spaced(text: str, o_starts: np.ndarray, o_ends: np.ndarray, i: int) -> bool:
    """Tokens i - 1 and i are apart: some white space between them, or an end of the text."""
    gap = _gap(text, o_starts, o_ends, i)
    return gap is None or any(ch.isspace() for ch in gap)


def _set_apart(gap: str | None) -> bool:
    """A gap wider than a letter space: an end of the text, a line break, or only white space, two or more."""
    return gap is None or any(ch in _LINE_BREAKS for ch in gap) or (len(gap) >= 2 and gap.isspace())


def _maybe_letters() -> np.ndarray:
    """Stream bytes that may be a letter: the letters below 256, and the marker of a wide point."""
    table = np.array([chr(b).isalpha() for b in range(256)], dtype=np.bool_)
    table[_WIDE_MARK] = True
    table.flags.writeable = False
    return table


_MAYBE_LETTER = _maybe_letters()


def _is_space(codes: np.ndarray) -> np.ndarray:
    """codes in _SPACES, by comparisons (np.isin costs more on the few codes tested)."""
    out = (codes == 0x20) | (codes == 0xA0)
    if codes.dtype != np.uint8:
        out |= ((codes >= 0x2000) & (codes <= 0x200A)) | (codes == 0x202F) | (codes == 0x205F) | (codes == 0x3000)
    return out


def _letter_spaced(text: str, stream: _Stream, raw: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   lengths: np.ndarray, o_starts: np.ndarray, o_ends: np.ndarray) -> list[tuple[int, int, list[int]]]:
    """Letter-spaced words: runs of one-letter tokens, each one space apart, that form a word.

    Letters are canonical points (look-alikes already Latin); digits and CJK
    are no letters here. A run (tokens first..last) loses the letters at its
    ends that are glued to the token before or after (no white space between:
    's' of "it's a b"); then it is one word when its letters are not one
    letter repeated ("a a a", "x x x": no word) and it has at least
    _MIN_SPACED letters; or two ("i s" in "c o p y  i s  t h e"), set apart
    from what precedes and follows (an end of the text, a line break, or only
    white space, two or more) and in the company of a word of three or more:
    one reaches it from the pair across letters and white space, no line
    break. Returns (first, last, points) per word.

    Cost: two vector passes over the tokens, a few over the one-point
    tokens, and the rest only where three letters stand in a row, one space
    apart (rare in prose: 5 of PAN-13's 19 batches, from its binary-noise
    texts and an "A r c h i v e d" heading).
    """
    single = np.flatnonzero(lengths == 1)
    if single.shape[0] < 3:
        return []
    at = starts[single]
    link = np.flatnonzero(at[1:] - at[:-1] == 2)  # two one-point tokens one point apart: nothing else between
    if link.shape[0] < 2 or not (link[1:] - link[:-1] == 1).any():
        return []  # no three one-point tokens in a row (prose has many pairs, "it's a"): no word of three
    left = single[link]
    gap_at = ends[left] if stream.expansion is None else stream.expansion.owner(ends[left])
    points = stream.points
    left = left[_is_space(raw[gap_at]) & _MAYBE_LETTER[points[at[link]]] & _MAYBE_LETTER[points[at[link + 1]]]]
    if left.shape[0] < 2 or not (left[1:] - left[:-1] == 1).any():
        return []  # no three letters in a row: no word of three, and no pair has one beside it
    cut = np.flatnonzero(left[1:] != left[:-1] + 1) + 1
    firsts = left[np.concatenate(([0], cut))]
    lasts = left[np.concatenate((cut - 1, [left.shape[0] - 1]))] + 1
    wide_at, wide_codes = stream.wide_at, stream.wide_codes

    def letter(i: int) -> int:
        """The canonical letter of token i, or -1 when it is no one-letter token."""
        if i < 0 or i >= lengths.shape[0] or lengths[i] != 1:
            return -1
        code = int(points[starts[i]])
        if code == _WIDE_MARK:
            code = int(wide_codes[np.searchsorted(wide_at, starts[i])])
        return code if not _is_isolated(code) and chr(code).isalpha() else -1

    long_words: list[tuple[int, int, list[int]]] = []
    pairs: list[tuple[int, int, list[int]]] = []

    def read_run(first: int, last: int) -> None:
        """The letter-spaced words of one run of tokens: long ones, and pairs set apart."""
        piece: list[int] = []
        word: list[int] = []
        for i in range(first, last + 2):  # each run cut where a token is no letter
            code = letter(i) if i <= last else -1
            if code >= 0:
                piece.append(i)
                word.append(code)
                continue
            lo, hi = 0, len(piece)
            while lo < hi and not _spaced(text, o_starts, o_ends, piece[lo]):
                lo += 1
            while hi > lo and not _spaced(text, o_starts, o_ends, piece[hi - 1] + 1):
                hi -= 1
            if hi - lo >= 2 and len(set(word[lo:hi])) > 1:
                found = (piece[lo], piece[hi - 1], word[lo:hi])
                if hi - lo >= _MIN_SPACED:
                    long_words.append(found)
                elif (_set_apart(_gap(text, o_starts, o_ends, piece[lo]))
                      and _set_apart(_gap(text, o_starts, o_ends, piece[hi - 1] + 1))):
                    pairs.append(found)
            piece, word = [], []

    # A pair counts only beside a word of three or more letters, which only a run of three or more tokens
    # holds: those runs first (few in prose), the many two-letter runs ("it's a") only when one was found.
    long_runs = lasts - firsts >= 2
    for first, last in zip(firsts[long_runs].tolist(), lasts[long_runs].tolist()):
        read_run(first, last)
    if not long_words:
        return []
    # A pair is reached from a long word only across one-point tokens (`beside_long`), so only the pair runs
    # in a stretch of consecutive one-point tokens that holds a long word can count.
    stretch = np.cumsum(np.concatenate(([0], single[1:] != single[:-1] + 1)))
    holding = np.unique(stretch[np.searchsorted(single, [first for first, _, _ in long_words])])
    pair_firsts, pair_lasts = firsts[~long_runs], lasts[~long_runs]
    near = np.isin(stretch[np.searchsorted(single, pair_firsts)], holding)
    for first, last in zip(pair_firsts[near].tolist(), pair_lasts[near].tolist()):
        read_run(first, last)
    in_long = {i for first, last, _ in long_words for i in range(first, last + 1)}

    def beside_long(i: int, step: int) -> bool:
        """Whether a word of three or more letters is reached from token i - step going by `step`."""
        while 0 <= i < lengths.shape[0]:
            gap = _gap(text, o_starts, o_ends, max(i, i - step))
            if gap is None or not gap.isspace() or any(ch in _LINE_BREAKS for ch in gap):
                return False
            if i in in_long:
                return True
            if letter(i) < 0:
                return False
            i += step
        return False

    words = long_words + [p for p in pairs if beside_long(p[0] - 1, -1) or beside_long(p[1] + 1, 1)]
    return sorted(words)


def _joined(stream: _Stream, words: list[tuple[int, int, list[int]]], hashes: np.ndarray, o_starts: np.ndarray,
            o_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tokens once each letter-spaced word is one token: hashed as the run of its letters (a small
    stream of their points alone), spanning its first to its last letter. Also returns its token indices."""
    sizes = np.array([len(w) for _, _, w in words], dtype=np.int64)
    codes = np.array([c for _, _, w in words for c in w], dtype=np.uint32)
    total = codes.shape[0]
    framed = np.zeros(1 + total + _PAD, dtype=np.uint8)
    narrow = codes < 256
    framed[1 : 1 + total] = np.where(narrow, codes, _WIDE_MARK)
    wide_at = np.flatnonzero(~narrow)
    letters = _Stream(framed, total, wide_at, codes[wide_at], _NO_POSITIONS, None)
    word_ends = np.cumsum(sizes)
    first = np.array([f for f, _, _ in words], dtype=np.int64)
    last = np.array([la for _, la, _ in words], dtype=np.int64)
    dropped = last - first  # tokens after a word's first letter, which it absorbs
    keep = np.ones(hashes.shape[0], dtype=np.bool_)
    keep[expand_ranges(first + 1, dropped)] = False
    at = first - (np.cumsum(dropped) - dropped)  # where each word lands once they are gone
    out_hashes, out_starts, out_ends = hashes[keep], o_starts[keep], o_ends[keep]
    out_hashes[at] = _token_hashes(letters, word_ends - sizes, sizes)
    out_ends[at] = o_ends[last]
    return out_hashes, out_starts, out_ends, at


def _tokenize(text: str, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token hashes, [start, end) character offsets, the text's raw code points, and which tokens
    are letter-spaced words joined.

    The one tokenizer of both `canonicalize` and the batch path (which runs it on
    the texts joined by a separator). Raw code points are uint8 for ASCII text,
    else uint16 (no astral characters) or uint32; `coates` sums either exactly.
    """
    stream, raw = _canonical_stream(text)
    starts, ends = _token_bounds(stream, unit)
    if starts.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return np.empty(0, dtype=np.uint64), empty, empty, raw, empty
    lengths = ends - starts
    hashes = _token_hashes(stream, starts, lengths)
    o_starts, o_ends = starts, ends
    if stream.expansion is not None:  # the original character of each token's first and last point
        o_starts, o_ends = stream.expansion.owner(starts), stream.expansion.owner(ends - 1) + 1
    if unit == "word":
        words = _letter_spaced(text, stream, raw, starts, ends, lengths, o_starts, o_ends)
        if words:
            hashes, o_starts, o_ends, spaced = _joined(stream, words, hashes, o_starts, o_ends)
            return hashes, o_starts, o_ends, raw, spaced
    return hashes, o_starts, o_ends, raw, _NO_POSITIONS


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
    hashes, starts, ends, _, spaced = _tokenize(text, unit)
    if hashes.shape[0] == 0:
        return Tokens.empty()
    return Tokens(hashes, starts, ends, spaced if unit == "word" else None)


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
    spaced: np.ndarray | None = None  # as `Tokens.spaced`, positions among all the batch's tokens

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def _spaced(self, a: int, b: int) -> np.ndarray | None:
        """The letter-spaced positions among tokens a:b, counted from a."""
        if self.spaced is None or self.spaced.shape[0] == 0:  # none letter-spaced in the batch: no search
            return self.spaced
        lo, hi = np.searchsorted(self.spaced, (a, b))
        return self.spaced[lo:hi] - a

    def tokens(self, i: int) -> Tokens:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if a == b:
            return Tokens.empty()
        shift = int(self.char_starts[i])
        return Tokens(self.hashes[a:b], self.starts[a:b] - shift, self.ends[a:b] - shift, self._spaced(a, b))

    def split(self) -> list[Tokens]:
        """Every text's tokens (offsets moved per text, only for the callers that want them): views of arrays
        moved in one pass for all."""
        bounds = self.offsets.tolist()
        shift = np.repeat(self.char_starts[:-1], np.diff(self.offsets))
        h, s, e = self.hashes, self.starts - shift, self.ends - shift
        empty = Tokens.empty()
        return [Tokens(h[a:b], s[a:b], e[a:b], self._spaced(a, b)) if a != b else empty
                for a, b in zip(bounds[:-1], bounds[1:])]


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
    hashes, starts, ends, raw, spaced = _tokenize(joined, unit)
    known = spaced if unit == "word" else None
    if count == 1:
        return TokenBatch(hashes, starts, ends, np.array([0, hashes.shape[0]], dtype=np.int64), char_starts, raw,
                          known)
    offsets = np.searchsorted(starts, char_starts).astype(np.int64, copy=False)
    return TokenBatch(hashes, starts, ends, offsets, char_starts, raw, known)


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


@dataclass(frozen=True)
class Normalizations:
    """Where canonicalization did more to a text than NFKC and case folding: what an evasion of copy
    detection leaves. Per word token (offsets into the text, ascending): its hash, how many of its
    characters are read as the Latin letter they look like (Cyrillic о, full-width ｏ) and how many are
    invisible (zero-width space, soft hyphen...), and whether it is a letter-spaced word joined."""

    hashes: np.ndarray  # uint64
    starts: np.ndarray  # int64
    ends: np.ndarray
    confusables: np.ndarray  # int64 per token
    invisible: np.ndarray  # int64 per token
    spaced: np.ndarray  # bool per token

    KINDS = ("confusables", "letter_spaced", "invisible")

    def _inside(self, spans: Iterable[tuple[int, int]]) -> np.ndarray:
        """Tokens starting inside the union of the [start, end) spans."""
        bounds = np.asarray(sorted(spans), dtype=np.int64).reshape(-1, 2)
        if bounds.shape[0] == 0:
            return np.zeros(self.starts.shape[0], dtype=np.bool_)
        reach = np.maximum.accumulate(bounds[:, 1])  # spans may overlap: the farthest end so far
        slot = np.searchsorted(bounds[:, 0], self.starts, side="right") - 1
        return (slot >= 0) & (self.starts < reach[np.maximum(slot, 0)])

    def _per_token(self) -> dict[str, np.ndarray]:
        return {"confusables": self.confusables, "letter_spaced": self.spaced.astype(np.int64),
                "invisible": self.invisible}

    def any(self) -> bool:
        """Whether any token needed a normalization (look-alikes, letter spacing, invisible characters)."""
        return bool(self.confusables.any() or self.invisible.any() or self.spaced.any())

    def counts(self, spans: Iterable[tuple[int, int]]) -> dict[str, int]:
        """Look-alike characters, letter-spaced words and invisible characters of the tokens inside the
        spans (overlaps counted once): only the kinds found."""
        inside = self._inside(spans)
        found = {kind: int(values[inside].sum()) for kind, values in self._per_token().items()}
        return {kind: count for kind, count in found.items() if count}

    def needed(self, spans: Iterable[tuple[int, int]], source: "Normalizations",
               source_spans: Iterable[tuple[int, int]]) -> dict[str, int]:
        """What matching these spans with the source's needed: `counts`, but only for the words that the
        other side does not hold in the same form. A copy of a Russian text has as many look-alikes as
        its source, and a letter-spaced heading copied as it stands is no evasion: neither counts. Both
        sides are summed (the indexed text may be the changed one)."""
        if not (self.any() or source.any()):  # most texts: nothing was read otherwise than it stands
            return {}
        mine, theirs = self._inside(spans), source._inside(source_spans)
        out = {}
        for kind, values in self._per_token().items():
            other = source._per_token()[kind]
            own_words = np.unique(self.hashes[mine & (values > 0)])
            other_words = np.unique(source.hashes[theirs & (other > 0)])
            count = int(values[mine & (values > 0) & ~np.isin(self.hashes, other_words)].sum())
            count += int(other[theirs & (other > 0) & ~np.isin(source.hashes, own_words)].sum())
            if count:
                out[kind] = count
        return out


def normalizations(text: str, tokens: Tokens | None = None) -> Normalizations:
    """Look-alikes, letter-spaced words and in-word invisible characters of `text`, per word token (a
    match's evidence). Only characters outside ASCII can be look-alikes or invisible. `tokens`: the text's
    word tokens (`canonicalize`), when the caller has them: the text is then not cut again."""
    if tokens is not None and tokens.spaced is not None:
        hashes, starts, ends, spaced = tokens.hashes, tokens.starts, tokens.ends, tokens.spaced
    else:
        hashes, starts, ends, _, spaced = _tokenize(text, "word")
    n = hashes.shape[0]
    per_token = {"confusables": np.zeros(n, dtype=np.int64), "invisible": np.zeros(n, dtype=np.int64)}
    joined = np.zeros(n, dtype=np.bool_)
    joined[spaced] = True
    if not text.isascii() and n:
        cps = _code_points(text)
        high = cps[cps >= 128]
        present = np.zeros(int(high.max()) + 1, dtype=np.bool_)
        present[high] = True
        chars = np.flatnonzero(present).tolist()
        for kind, test in (("confusables", _looks_latin), ("invisible", _is_format)):
            table = np.zeros(present.shape[0], dtype=np.bool_)  # by code point
            table[np.fromiter((c for c in chars if test(c)), dtype=np.int64)] = True
            at = np.flatnonzero(table[cps])
            slot = np.searchsorted(starts, at, side="right") - 1
            inside = (slot >= 0) & (at < ends[np.maximum(slot, 0)])
            np.add.at(per_token[kind], slot[inside], 1)
    return Normalizations(hashes, starts, ends, per_token["confusables"], per_token["invisible"], joined)


def _is_format(code: int) -> bool:
    return unicodedata.category(chr(code)) == "Cf"


def canonical_words(text: str, unit: str = "word") -> list[str]:
    """The canonical form of each token, for display and tests (not a hot path): NFKC of its case
    fold, look-alikes as their Latin letter, without invisible characters, a letter-spaced word without
    its spaces."""
    tokens = canonicalize(text, unit)
    lookalike = latin_lookalikes()
    words = []
    for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist()):
        points = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text[s:e].casefold()))
        word = "".join(chr(lookalike.get(ord(c), ord(c))) for c in points
                       if not c.isspace() and unicodedata.category(c) != "Cf")
        words.append(unicodedata.normalize("NFC", word))
    return words
