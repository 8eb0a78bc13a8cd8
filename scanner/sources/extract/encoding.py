"""Bytes -> str for text of unknown encoding, refusing binary junk.

Order: BOM, NUL-pattern test for BOM-less UTF-16 and UTF-32, the 7-bit escape
encodings (ISO-2022-JP and -KR, HZ), strict UTF-8, UTF-8 with a few stray bytes,
the document's declared charset, then charset-normalizer. Anything
that still decodes to mostly control characters is reported as binary rather
than returned as garbage text.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

import numpy as np

from scanner.core.errors import ExtractionError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE = 64 * 1024
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_MAX_CONTROL_SHARE = 0.02
# When charset-normalizer scores several code pages equally (short Western
# text: cp1250 and cp1252 tie), take the one most files in the wild use.
_TIE_BREAK = ("cp1252", "latin_1")
_CHAOS_MARGIN = 0.05
_SEPARATOR = re.compile("[\\s\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f\uff61-\uff65]")
_LEAST_SEPARATORS = 0.02  # a Chinese text's 。，、 and line ends: 5-10 % of it; Latin or Cyrillic spaces: ~15 %
_STRAY_EVIDENCE = 4  # bytes of valid multi-byte UTF-8 needed for each invalid one
_STRAY_SHARE = 100  # and at most one byte in this many invalid
_ESCAPED = re.compile("[\udc80-\udcff]")
_CP1252_OF_ESCAPED = {0xDC00 + byte: bytes([byte]).decode("cp1252", errors="replace") for byte in range(0x80, 0x100)}


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """(encoding, BOM length) if `data` starts with a Unicode byte-order mark."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return None


def wide_encodings(sample: bytes) -> tuple[str, ...]:
    """The BOM-less UTF-32 or UTF-16 that `sample`, holding NULs, may be in, likelier first: text in any
    script (Latin in UTF-16 has a NUL in every other byte; Cyrillic, Greek or Chinese only beside its spaces,
    digits and line ends, and Chinese a few more on the other side, in U+xx00 characters such as 一, so a
    test of "mostly NULs on one side" took it for binary). Only a strict decoding into few control
    characters says which, if any, it is."""
    whole = len(sample) // 4 * 4
    if whole >= 8:  # code points up to 0x10FFFF: in UTF-32 one byte of four is always 0, the next at most 0x10
        if sample[3:whole:4].count(0) == whole // 4 and max(sample[2:whole:4]) <= 0x10:
            return ("utf-32-le",)
        if sample[0:whole:4].count(0) == whole // 4 and max(sample[1:whole:4]) <= 0x10:
            return ("utf-32-be",)
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    return ("utf-16-le", "utf-16-be") if odd >= even else ("utf-16-be", "utf-16-le")


def _wide_text(data: bytes, sample: bytes) -> tuple[str, str] | None:
    """(text, encoding) of `data` in the first of its `wide_encodings` that decodes strictly into few control
    characters; None: binary."""
    for encoding in wide_encodings(sample):
        unit = 4 if encoding.startswith("utf-32") else 2
        try:
            text = data[: len(data) - len(data) % unit].decode(encoding)
        except UnicodeDecodeError:
            continue
        if control_share(text) <= _MAX_CONTROL_SHARE and _separated(text):
            return text, encoding
    return None


def _separated(text: str) -> bool:
    """Whether `text` has the spaces, line ends or CJK punctuation of writing: binary bytes taken two at a
    time are letters of every script (a repeated hash read as UTF-16 is Hangul and ideographs without a
    control among them), and almost never one of these ~170 of the 65,536 code units."""
    sample = text[:_SAMPLE]
    return len(_SEPARATOR.findall(sample)) >= _LEAST_SEPARATORS * len(sample)


def _stray_bytes_as_cp1252(data: bytes) -> tuple[str, int] | None:
    """`data` as UTF-8 whose few invalid bytes are read as cp1252 (a Latin-1 word pasted into a UTF-8 text, a
    file cut mid-character), with their count; None when they are not few against the characters UTF-8
    reads in several bytes (a Latin-1 text is invalid UTF-8 at every accented letter, and has no such
    character). Such a file was refused whole as "no text encoding fits"."""
    text = data.decode("utf-8", errors="surrogateescape")  # each invalid byte: one lone surrogate
    strays = len(_ESCAPED.findall(text))
    several = len(data) - len(text)  # bytes beyond the first of valid multi-byte characters
    if not strays or several < _STRAY_EVIDENCE * strays or strays * _STRAY_SHARE > len(data):
        return None
    return text.translate(_CP1252_OF_ESCAPED), strays


# Designations of a double-byte set (JIS X 0208, 0212, 0213, GB 2312, KS C 5601) that only the ISO-2022
# encodings write: a lone ESC ( B, which some terminals' colour resets hold, is not among them.
_ISO2022_JP_MARKS = (b"\x1b$@", b"\x1b$B", b"\x1b$A", b"\x1b$(C", b"\x1b$(D", b"\x1b$(O", b"\x1b$(P", b"\x1b$(Q")
_ISO2022_JP_CODECS = ("iso2022_jp", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3", "iso2022_jp_ext")
_HZ_SECTION = re.compile(rb"~\{([^~]*)~\}")
_HZ_LEAST = 4


def seven_bit_text(data: bytes) -> tuple[str, str] | None:
    """(text, encoding) of `data` (ASCII bytes) in the 7-bit escape encoding it is written in, when it decodes
    as one strictly: ISO-2022-JP (Japanese mail and text), ISO-2022-KR, or HZ (GB 2312 between ~{ and ~}).
    Such bytes are valid UTF-8 too, and read as UTF-8 they are escape codes and letter pairs ("$3$s$K$A$O"),
    indexed as text that matches nothing: the copy of a document in one of them went unseen."""
    if not data.isascii():
        return None
    # one-byte searches first (memchr: 0.3 ms for 11 MB, where each search for a longer mark took 7-11 ms)
    escaped = data.find(b"\x1b") >= 0
    if escaped and b"\x1b$)C" in data:  # ISO-2022-KR's header: its Korean then sits between SO and SI
        candidates: tuple[str, ...] = ("iso2022_kr",)
    elif escaped and any(mark in data for mark in _ISO2022_JP_MARKS):
        candidates = _ISO2022_JP_CODECS  # the narrowest that decodes names the text best
    elif data.find(b"~") >= 0 and b"~{" in data and _hz_like(data):
        candidates = ("hz",)
    else:
        return None
    for codec in candidates:
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            continue
    return None


def _hz_like(data: bytes) -> bool:
    """Whether the ~{ sections of `data` hold Chinese as HZ writes it: GB 2312 pairs of printable bytes, no
    space or line break inside, at least _HZ_LEAST characters in all, most of them from the rows of the
    common hanzi and punctuation. An ASCII text with a stray "~{ab~}" or "~{ABCDEFGH~}" in it (code,
    LaTeX) is not HZ."""
    sections = _HZ_SECTION.findall(data)
    if not sections or data.count(b"~{") != len(sections) or any(
            len(section) % 2 or any(not 0x21 <= byte <= 0x7E for byte in section) for section in sections):
        return False
    joined = b"".join(sections)
    leads = joined[0::2]
    common = sum(1 for byte in leads if byte <= 0x29 or 0x30 <= byte <= 0x57)  # GB 2312 rows 1-9 and 16-55
    # a word of letters and digits (a name, a constant) between the marks is not HZ: Chinese writes most
    # bytes of the printable range, punctuation among them
    return len(leads) >= _HZ_LEAST and common >= 0.75 * len(leads) and not joined.isalnum()


def _is_bad(ch: str) -> bool:
    return ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) in ("Cc", "Cs", "Cn", "Co")


_ASCII_BAD = np.array([_is_bad(chr(code)) for code in range(128)], dtype=bool)


def control_share(text: str) -> float:
    """Share of characters that are controls, unassigned or lone surrogates.

    Counted with numpy over code points; categories are looked up once per
    distinct non-ASCII character, not once per character.
    """
    if not text:
        return 0.0
    sample = text[:_SAMPLE]
    if sample.isascii():
        return float(_ASCII_BAD[np.frombuffer(sample.encode("ascii"), dtype=np.uint8)].sum()) / len(sample)
    codes = np.frombuffer(sample.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    low = codes < 128
    bad = int(_ASCII_BAD[codes[low]].sum())
    distinct, counts = np.unique(codes[~low], return_counts=True)
    bad += sum(n for code, n in zip(distinct.tolist(), counts.tolist()) if _is_bad(chr(code)))
    return bad / len(sample)


# the characters beyond ASCII that French, German, Spanish, Italian, Portuguese, Dutch, Danish, Norwegian,
# Swedish and Finnish text in cp1252 holds (not ð, þ, ý: in cp1252 they are the bytes of Turkish ğ, ş, ı and of
# Cyrillic р, ю, э; nor signs such as ³ or ¹, Polish ł and ą in cp1250)
_WESTERN = frozenset("àáâãäåæçèéêëìíîïñòóôõöøùúûüÿßœšžÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜŸŒŠŽ«»¿¡€–—‘’“”…°§·\xa0")
# code pages charset-normalizer may rank first for a few accented words, which a file is seldom written in
_UNLIKELY = ("hp_roman8", "mac_")


def _western(data: bytes) -> str | None:
    """`data` in cp1252 when it reads as Western European words there: strictly decoded, every character
    beyond ASCII one of `_WESTERN`, letters for half the characters and a word every 20. Binary bytes
    without NULs seldom pass: one in 51 is a byte cp1252 leaves undefined, one in 8 a control character."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    if (not text or any(not ch.isascii() and ch not in _WESTERN for ch in text)
            or sum(ch.isalpha() for ch in text) < len(text) // 2 or len(text.split()) <= len(text) // 20
            or control_share(text) > _MAX_CONTROL_SHARE):
        return None
    return text


def _latin(text: str) -> bool:
    """Whether every letter of `text` is of the Latin script."""
    return all(ch.isascii() or not ch.isalpha() or unicodedata.name(ch, "").startswith("LATIN") for ch in text)


def _checked(text: str, encoding: str) -> tuple[str, str]:
    if control_share(text) > _MAX_CONTROL_SHARE:
        raise ExtractionError(
            f"binary content: decodes as {encoding} to mostly control characters",
            status="unsupported",
        )
    return text, encoding


def decode_text(data: bytes, hint: str | None = None) -> tuple[str, str]:
    """Decode `data`, returning (text, encoding name).

    Args:
        data: raw bytes of a text-like document.
        hint: an encoding declared by the document itself (HTML meta charset);
            used when the bytes are not valid UTF-8 and before guessing.

    Raises:
        ExtractionError: status "empty" for no bytes or NUL-only content,
            "unsupported" for binary content.
    """
    if not data:
        raise ExtractionError("empty file", status="empty")
    bom = bom_encoding(data)
    if bom:
        encoding, skip = bom
        return _checked(data[skip:].decode(encoding, errors="replace"), encoding + " (BOM)")
    if not data.strip(b"\x00"):
        raise ExtractionError("only NUL bytes", status="empty")
    sample = data[:_SAMPLE]
    if sample.count(0) > len(sample) // 100:
        wide = _wide_text(data, sample)
        if wide is None:
            raise ExtractionError("binary content: contains NUL bytes", status="unsupported")
        return wide
    seven_bit = seven_bit_text(data)
    if seven_bit is not None:
        return _checked(*seven_bit)
    try:
        return _checked(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass  # valid UTF-8 beats any declaration: pages often lie about latin-1; so does UTF-8 with a few strays
    strayed = _stray_bytes_as_cp1252(data)
    if strayed is not None:
        text, strays = strayed
        return _checked(text, f"utf-8 ({strays} stray byte{'s' * (strays > 1)} read as cp1252)")
    if hint:
        try:
            return _checked(data.decode(hint), hint)
        except (LookupError, UnicodeDecodeError):
            pass
    from charset_normalizer import from_bytes

    results = list(from_bytes(data))
    if not results:  # it scores nothing for a short Latin-1 line ("TEST \xe4\xf6\xfc +-*/~", a real attachment)
        western = _western(data)
        if western is None:
            raise ExtractionError("binary content: no text encoding fits", status="unsupported")
        return western, "cp1252 (no encoding detected)"
    best = results[0]
    # Near-ties too: charset-normalizer's chaos is noisy on short text (French/German Latin-1
    # scored as Baltic cp1257 by 0.04), and a wrong pick turns every accented letter into mojibake.
    tied = [m for m in results if m.chaos <= best.chaos + _CHAOS_MARGIN and m.coherence >= best.coherence]
    for common in _TIE_BREAK:
        if any(common in m.could_be_from_charset for m in tied):
            return _checked(data.decode(common, errors="replace"), common)
    # a few accented Western words can rank a far-off code page first ("Ça va très bien" as Big5: "ド va
    # tr鋊 bien"; Finnish "Hyvää päivää" as HP Roman-8), which turns them into words that match nothing
    if (not _latin(str(best)) or best.encoding.startswith(_UNLIKELY)) and (western := _western(data)) is not None:
        return western, f"cp1252 (read as Western European words, not as {best.encoding})"
    return _checked(str(best), best.encoding)
