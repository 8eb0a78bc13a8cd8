"""Bytes -> str for text of unknown encoding, refusing binary junk.

Order: BOM, NUL-pattern test for BOM-less UTF-16, strict UTF-8, then
charset-normalizer. Anything that still decodes to mostly control
characters is reported as binary rather than returned as garbage text.
"""

from __future__ import annotations

import codecs
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


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """(encoding, BOM length) if `data` starts with a Unicode byte-order mark."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return None


def guess_utf16(sample: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' when NULs sit on one parity only (BOM-less UTF-16 of
    mostly Latin script), else None."""
    half = len(sample) // 2
    if half < 2:
        return None
    even_nul = sample[0 : 2 * half : 2].count(0) / half
    odd_nul = sample[1 : 2 * half : 2].count(0) / half
    if odd_nul > 0.3 and even_nul < 0.02:
        return "utf-16-le"
    if even_nul > 0.3 and odd_nul < 0.02:
        return "utf-16-be"
    return None


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
    utf16 = guess_utf16(sample)
    if utf16:
        even = data[: len(data) - (len(data) % 2)]
        try:
            return _checked(even.decode(utf16), utf16)
        except UnicodeDecodeError:
            pass
    if sample.count(0) > len(sample) // 100:
        raise ExtractionError("binary content: contains NUL bytes", status="unsupported")
    try:
        return _checked(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass  # valid UTF-8 beats any declaration: pages often lie about latin-1
    if hint:
        try:
            return _checked(data.decode(hint), hint)
        except (LookupError, UnicodeDecodeError):
            pass
    from charset_normalizer import from_bytes

    results = list(from_bytes(data))
    if not results:
        raise ExtractionError("binary content: no text encoding fits", status="unsupported")
    best = results[0]
    # Near-ties too: charset-normalizer's chaos is noisy on short text (French/German Latin-1
    # scored as Baltic cp1257 by 0.04), and a wrong pick turns every accented letter into mojibake.
    tied = [m for m in results if m.chaos <= best.chaos + _CHAOS_MARGIN and m.coherence >= best.coherence]
    for common in _TIE_BREAK:
        if any(common in m.could_be_from_charset for m in tied):
            return _checked(data.decode(common, errors="replace"), common)
    return _checked(str(best), best.encoding)
