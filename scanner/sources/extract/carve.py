"""Text carved from the bytes of a file no reader reads, as `strings` does, kept only where it reads as prose.

A leak pasted into a program's own format (a OneNote notebook, a WordPerfect or Works document, an app's
cache, a LevelDB log of a chat program) is bytes no extractor reads: the file was `unsupported` and its text
matched nothing. Its runs of text are carved here: runs of printable bytes (ASCII and UTF-8) and of
UTF-16LE code units (Windows programs' strings) in European scripts, each kept when it reads as prose (words
of letters between spaces, little else), so a program's identifiers and a binary's noise stay out.
Executables, libraries, a program's data (message catalogs, terminal descriptions) and media are never
carved (`carvable`): their strings are a program's messages, not a document's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Carved", "carvable", "carve_text"]

_SHORTEST_BYTES = 16  # a run of fewer printable bytes is not carved (`strings` keeps 4: too much noise here)
_SHORTEST_UNITS = 12  # the same in UTF-16 code units
_WINDOW = 8 * 1024 * 1024  # bytes carved at a time (even: UTF-16 units stay aligned across windows)
_WORD = re.compile(r"[^\W\d_]{3,}")
_LEAST_WORDS = 3
_PROSE_SHARE = 0.85  # letters, spaces and common punctuation, of a run's characters
_PROSE_CHARS = re.compile(r"[^\W\d_]|[\s.,;:!?'\"()\-–—’“”%/&0-9]")
_NOT_CARVED = ("image/", "audio/", "video/", "font/", "model/", "application/x-executable",
               "application/x-sharedlib", "application/x-pie-executable", "application/x-dosexec",
               "application/x-mach-binary", "application/x-object", "application/x-coredump",
               "application/x-java-applet", "application/vnd.microsoft.portable-executable",
               "application/x-font", "application/vnd.ms-opentype", "application/x-bytecode",
               # a program's data: its message catalogs, terminal descriptions, modules and keys
               "application/x-gettext-translation", "application/x-terminfo", "application/x-java-jmod",
               "application/x-java-keystore", "application/x-dc42-floppy-image")


@dataclass(frozen=True)
class Carved:
    """The prose runs carved from a file, in the order of their offsets, and how many there were of each kind."""

    text: str
    byte_runs: int
    utf16_runs: int


def carvable(mime: str) -> bool:
    """Whether a file of this type, when no reader reads it, is carved for text (not programs, not media)."""
    mime = mime.lower()
    return not any(mime.startswith(prefix) for prefix in _NOT_CARVED)


def carve_text(data: bytes) -> Carved:
    """The runs of `data` that read as prose, a line each, by offset. Read a window at a time (its masks are
    several bytes a byte of the window, not of a file of hundreds of MB); a run across two windows is carved
    as two pieces, a piece shorter than a run's least length at the border lost."""
    found: list[tuple[int, str, int]] = []
    view = memoryview(data)
    for at in range(0, len(data), _WINDOW):
        window = bytes(view[at:at + _WINDOW])
        found += [(at + start, text, 0) for start, text in _byte_runs(window)]
        found += [(at + start, text, 1) for start, text in _utf16_runs(window)]
    found.sort()
    return Carved("\n".join(text for _, text, _ in found), sum(1 for *_, k in found if k == 0),
                  sum(1 for *_, k in found if k == 1))


def _runs(mask: np.ndarray, shortest: int) -> list[tuple[int, int]]:
    """The [start, end) spans where `mask` holds, of at least `shortest` elements (vectorised: no per-byte loop)."""
    if not mask.size:
        return []
    edges = np.diff(np.concatenate(([False], mask, [False])).astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    long = (ends - starts) >= shortest
    return list(zip(starts[long].tolist(), ends[long].tolist(), strict=True))


def _byte_runs(data: bytes) -> list[tuple[int, str]]:
    """Runs of printable ASCII, white space and UTF-8 sequences, kept where they read as prose."""
    raw = np.frombuffer(data, dtype=np.uint8)
    mask = ((raw >= 0x20) & (raw < 0x7F)) | (raw == 0x09) | (raw == 0x0A) | (raw == 0x0D)
    mask |= _utf8_sequences(raw)
    kept = []
    for start, end in _runs(mask, _SHORTEST_BYTES):
        text = data[start:end].decode("utf-8", errors="replace")
        if text.count("\ufffd") * 50 <= len(text) and _is_prose(text):
            kept.append((start, " ".join(text.split())))
    return kept


def _utf8_sequences(raw: np.ndarray) -> np.ndarray:
    """The bytes of well-formed two- and three-byte UTF-8 sequences (accented letters, Greek, Cyrillic, dashes
    and quotes): a high byte alone is binary, and would join a run of text to the noise around it."""
    follows = (raw >= 0x80) & (raw <= 0xBF)
    inside = np.zeros(raw.shape[0], dtype=bool)
    if raw.shape[0] >= 2:
        two = (raw[:-1] >= 0xC2) & (raw[:-1] <= 0xDF) & follows[1:]
        inside[:-1] |= two
        inside[1:] |= two
    if raw.shape[0] >= 3:
        three = (raw[:-2] >= 0xE0) & (raw[:-2] <= 0xEF) & follows[1:-1] & follows[2:]
        inside[:-2] |= three
        inside[1:-1] |= three
        inside[2:] |= three
    return inside


def _utf16_runs(data: bytes) -> list[tuple[int, str]]:
    """Runs of UTF-16LE code units in Latin, Greek and Cyrillic (a Windows program's strings), at either byte
    alignment, kept where they read as prose."""
    kept = []
    for offset in (0, 1):
        usable = (len(data) - offset) // 2 * 2
        if usable < 2 * _SHORTEST_UNITS:
            continue
        units = np.frombuffer(data, dtype="<u2", count=usable // 2, offset=offset)
        mask = (((units >= 0x20) & (units < 0x7F)) | (units == 0x09) | (units == 0x0A) | (units == 0x0D)
                | ((units >= 0xA0) & (units < 0x250)) | ((units >= 0x370) & (units < 0x530))
                | ((units >= 0x2010) & (units < 0x2027)))  # dashes, quotes, the ellipsis
        for start, end in _runs(mask, _SHORTEST_UNITS):
            text = data[offset + 2 * start:offset + 2 * end].decode("utf-16-le", errors="replace")
            if _is_prose(text):
                kept.append((offset + 2 * start, " ".join(text.split())))
    return kept


def _is_prose(text: str) -> bool:
    """Words of letters between spaces, and little else: a sentence, not an identifier, a path or noise."""
    stripped = text.strip()
    if len(_WORD.findall(stripped)) < _LEAST_WORDS or stripped.count(" ") < 2:
        return False
    return len(_PROSE_CHARS.findall(stripped)) >= _PROSE_SHARE * len(stripped)
