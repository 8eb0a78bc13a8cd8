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
    lower = np.arange(128, dtype=np.uint32)
    classes = np.zeros(128, dtype=np.uint8)
    for code in range(128):
        ch = chr(code)
        if ch.isalnum():
            classes[code] = _WORD
        lower[code] = ord(ch.lower())
    return lower, classes


_ASCII_LOWER, _ASCII_CLASS = _ascii_tables()


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


def _expand_unique(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Canonical expansion of each distinct code point (a loop over the alphabet, not the text).

    Returns per-unique lengths and offsets into flat arrays of expanded code
    points and their classes.
    """
    lengths = np.zeros(codes.shape[0], dtype=np.int64)
    flat_codes: list[int] = []
    flat_classes: list[int] = []
    for i, code in enumerate(codes.tolist()):
        ch = chr(code)
        if unicodedata.category(ch) == "Cf":  # soft hyphen, zero-width joiner...
            continue
        expanded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
        lengths[i] = len(expanded)
        for part in expanded:
            flat_codes.append(ord(part))
            flat_classes.append(_class_of(part))
    offsets = np.zeros(codes.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return (
        lengths,
        offsets,
        np.asarray(flat_codes, dtype=np.uint32),
        np.asarray(flat_classes, dtype=np.uint8),
    )


def _canonical_stream(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Expanded canonical code points, their classes, and each one's original index.

    The index array is None when the expansion is the identity (pure ASCII).
    """
    if text.isascii():
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        return _ASCII_LOWER[raw], _ASCII_CLASS[raw], None
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    high = cps >= 128
    uniq, inverse = np.unique(cps[high], return_inverse=True)
    u_len, u_off, u_codes, u_classes = _expand_unique(uniq)
    lengths = np.ones(cps.shape[0], dtype=np.int64)
    lengths[high] = u_len[inverse]
    total = int(lengths.sum())
    origin = np.repeat(np.arange(cps.shape[0], dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths
    within = np.arange(total, dtype=np.int64) - np.repeat(first, lengths)
    # source of each expanded char: ASCII table, or the unique expansion tables
    unique_of_char = np.full(cps.shape[0], -1, dtype=np.int64)
    unique_of_char[high] = inverse
    src_unique = unique_of_char[origin]
    is_high = src_unique >= 0
    codes = np.empty(total, dtype=np.uint32)
    classes = np.empty(total, dtype=np.uint8)
    low_chars = cps[origin[~is_high]]
    codes[~is_high] = _ASCII_LOWER[low_chars]
    classes[~is_high] = _ASCII_CLASS[low_chars]
    flat_index = u_off[src_unique[is_high]] + within[is_high]
    codes[is_high] = u_codes[flat_index]
    classes[is_high] = u_classes[flat_index]
    return codes, classes, origin


def _token_bounds(classes: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """[start, end) of each token in stream coordinates."""
    in_token = classes != _SEPARATOR
    if unit == "char":
        starts = np.flatnonzero(in_token)
        return starts, starts + 1
    isolated = classes == _ISOLATED
    prev_in = np.concatenate(([False], in_token[:-1]))
    prev_isolated = np.concatenate(([False], isolated[:-1]))
    begins = in_token & (~prev_in | isolated | prev_isolated)
    next_in = np.concatenate((in_token[1:], [False]))
    next_isolated = np.concatenate((isolated[1:], [False]))
    finishes = in_token & (~next_in | isolated | next_isolated)
    return np.flatnonzero(begins), np.flatnonzero(finishes) + 1


def _span_hashes(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Polynomial hash of codes[start:end] for every span, modulo 2**64, then mixed."""
    n = codes.shape[0]
    powers = np.empty(n + 1, dtype=np.uint64)
    powers[0] = 1
    np.cumprod(np.full(n, _BASE, dtype=np.uint64), out=powers[1:])
    inv_powers = np.empty(n, dtype=np.uint64)
    inv_powers[0] = 1
    if n > 1:
        np.cumprod(np.full(n - 1, _BASE_INV, dtype=np.uint64), out=inv_powers[1:])
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum((codes.astype(np.uint64) + np.uint64(1)) * inv_powers, out=prefix[1:])
    raw = (prefix[ends] - prefix[starts]) * powers[ends - 1]
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
    codes, classes, origin = _canonical_stream(text)
    starts, ends = _token_bounds(classes, unit)
    if starts.shape[0] == 0:
        return Tokens.empty()
    hashes = _span_hashes(codes, starts, ends)
    if origin is None:
        return Tokens(hashes, starts.astype(np.int64), ends.astype(np.int64))
    return Tokens(hashes, origin[starts], origin[ends - 1] + 1)


def canonical_words(text: str, unit: str = "word") -> list[str]:
    """The canonical form of each token, for display and tests (not a hot path)."""
    tokens = canonicalize(text, unit)
    return [
        unicodedata.normalize("NFKC", text[s:e].casefold())
        for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())
    ]
