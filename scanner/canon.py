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

from scanner.fingerprint import mix64

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
_ASCII_LOWER.flags.writeable = False
_ASCII_CLASS.flags.writeable = False


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
    """The first `count` powers (texts up to 2**32 characters)."""
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


def _canonical_stream(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Expanded canonical code points, their classes, and where each original char starts.

    The third array gives, for each original character, the index of its first
    expanded code point (characters that vanish share their successor's); it is
    None when the expansion is one-to-one, the common case.
    """
    if text.isascii():
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        return _ASCII_LOWER[raw], _ASCII_CLASS[raw], None
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    high_pos = np.flatnonzero(cps >= 128)
    uniq, inverse = np.unique(cps[high_pos], return_inverse=True)
    u_len, u_off, u_codes, u_classes = _expand_unique(uniq)
    # every character mapped to its first expanded code point (one-to-one part)
    head = np.minimum(u_off, max(u_codes.shape[0] - 1, 0))
    low = np.minimum(cps, 127)
    mapped = _ASCII_LOWER[low].astype(np.uint32)
    mapped_classes = _ASCII_CLASS[low]
    if u_codes.shape[0]:
        mapped[high_pos] = u_codes[head][inverse]
        mapped_classes[high_pos] = u_classes[head][inverse]
    if (u_len == 1).all():  # e.g. only quotes, dashes, no-break spaces
        return mapped, mapped_classes, None
    lengths = np.ones(cps.shape[0], dtype=np.int64)
    char_len = u_len[inverse]
    lengths[high_pos] = char_len
    first = np.cumsum(lengths)
    total = int(first[-1])
    first -= lengths
    codes = np.empty(total, dtype=np.uint32)
    classes = np.empty(total, dtype=np.uint8)
    present = lengths > 0
    codes[first[present]] = mapped[present]
    classes[first[present]] = mapped_classes[present]
    multi = char_len > 1  # the rest of multi-point expansions, one offset at a time
    multi_pos, multi_u = high_pos[multi], inverse[multi]
    for j in range(1, int(u_len.max())):
        sel = u_len[multi_u] > j
        codes[first[multi_pos[sel]] + j] = u_codes[u_off[multi_u[sel]] + j]
        classes[first[multi_pos[sel]] + j] = u_classes[u_off[multi_u[sel]] + j]
    return codes, classes, first


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

    prefix[i] = sum_{j < i} (code_j + 1) * B**-j, so a span's hash is
    (prefix[end] - prefix[start]) * B**(end - 1): independent of where it sits.
    """
    n = codes.shape[0]
    terms = codes.astype(np.uint64)
    terms += np.uint64(1)
    terms *= _powers(_INV_LOW, _INV_HIGH, n)
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    np.cumsum(terms, out=prefix[1:])
    raw = (prefix[ends] - prefix[starts]) * _powers(_POW_LOW, _POW_HIGH, n)[ends - 1]
    lengths = (ends - starts).astype(np.uint64)
    return mix64(raw ^ (lengths * _LENGTH_SALT))


def canonicalize(text: str, unit: str = "word") -> Tokens:
    """Tokens of `text` after NFKC + casefold, without punctuation or markup.

    Args:
        text: the extracted text; offsets refer to its characters.
        unit: "word" (default) or "char" (each letter or digit is a token).
    """
    if unit not in ("word", "char"):
        raise ValueError(f"unknown token unit {unit!r}")
    if not text:
        return Tokens.empty()
    codes, classes, first = _canonical_stream(text)
    starts, ends = _token_bounds(classes, unit, ascii_only=text.isascii())
    if starts.shape[0] == 0:
        return Tokens.empty()
    hashes = _span_hashes(codes, starts, ends)
    if first is None:
        return Tokens(hashes, starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False))
    # the original character of each expanded point (vanished characters own none)
    owner = np.repeat(np.arange(first.shape[0], dtype=np.int64), np.diff(first, append=codes.shape[0]))
    return Tokens(hashes, owner[starts], owner[ends - 1] + 1)


def canonical_words(text: str, unit: str = "word") -> list[str]:
    """The canonical form of each token, for display and tests (not a hot path)."""
    tokens = canonicalize(text, unit)
    return [
        unicodedata.normalize("NFKC", text[s:e].casefold())
        for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())
    ]
