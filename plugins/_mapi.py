"""What Outlook's two message formats share: a message's text as Subject, From and body, the body plain, else
HTML, else the compressed RTF Outlook keeps alone for a message written in rich text ([MS-OXRTFCP], undone by
compressed-rtf, MIT); the RTF read as the RTF plugin reads a file."""

from __future__ import annotations

from collections.abc import Callable

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.encoding import decode_text
from scanner.sources.limits import ExtractLimits
from scanner_plugins.html import decode_html, html_to_text
from scanner_plugins.rtf import extract_rtf


def body_text(plain: str, html: bytes | str | None, rtf: Callable[[], bytes | None],
              limits: ExtractLimits) -> tuple[str, str]:
    """The body a reader sees, and why it is missing when it cannot be read: `plain` when it has words, else
    the HTML body's text, else the RTF body's (`rtf()`, decompressed; asked for only then)."""
    if plain.strip():
        return plain, ""
    if html:
        return html_to_text(html if isinstance(html, str) else decode_html(html)[0], limits)[0], ""
    try:
        document = rtf()
    except ExtractionError as exc:
        return "", exc.reason
    return (extract_rtf(document, "text/rtf", limits).text if document else ""), ""


def message_result(name: str, subject: str, sender: str, body: tuple[str, str], meta: dict[str, str]) -> Extracted:
    """The message's text (`message_text`); read in part, saying why, when its body could not be read."""
    text, unread = body
    return Extracted(text=message_text(subject, sender, text), extractor=name, meta=meta,
                     status=TextStatus.PARTIAL if unread else TextStatus.OK,
                     reason=f"the body is not read: {unread}" if unread else "")


def decompressed_rtf(compressed: bytes) -> bytes:
    """PR_RTF_COMPRESSED undone; a damaged one is `corrupt`, with its reason."""
    from compressed_rtf import decompress

    try:
        return bytes(decompress(compressed))
    except Exception as exc:  # the library raises bare Exceptions on a bad header or CRC
        raise ExtractionError(f"compressed RTF body unreadable: {exc}", status="corrupt") from exc


def eight_bit_text(raw: bytes) -> str:
    """A MAPI string in a code page (a PT_STRING8 property, a TNEF string attribute): its encoding detected
    (the terminating NULs off), else Latin-1, which reads any bytes."""
    try:
        return decode_text(raw.rstrip(b"\0"))[0]
    except ExtractionError:
        return raw.decode("latin-1")


def message_text(subject: str, sender: str, body: str) -> str:
    """Subject and From lines, a blank line, then the body (CRLF made LF), as `.eml` messages read."""
    lines = [f"Subject: {subject}"] * bool(subject) + [f"From: {sender}"] * bool(sender)
    return "\n".join([*lines, "", body.replace("\r\n", "\n").strip()]).strip()
