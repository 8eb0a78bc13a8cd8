"""E-mail messages (RFC 822 / MIME) through the stdlib `email` package.

The text is the Subject and From headers followed by the body: plain text
preferred, else the HTML part through the HTML extractor. Text attachments
(text/*, JSON, XML, or any part whose bytes decode as text) follow the body,
each a marked region named after its file, so a leak sent as an attachment is
found. Other attachments (PDF, office files...) are not read here: the result
is then `partial`, and its reason names them, never silently ok.
"""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage, MIMEPart

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.encoding import decode_text
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins.html import html_to_text

NAME = "eml"


def _part_text(part: MIMEPart) -> str:
    """Decoded text of one part, tolerating wrong or missing charsets."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset()
    if charset:
        try:
            return payload.decode(charset)
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        return decode_text(payload)[0]
    except ExtractionError:
        return ""


_TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/csv")


def _attachment_text(part: MIMEPart, limits: ExtractLimits) -> str | None:
    """The text of an attachment that is text (None for a binary one)."""
    ctype = part.get_content_type()
    if ctype == "text/html":
        return html_to_text(_part_text(part), limits)[0]
    if ctype.startswith("text/") or ctype in _TEXT_TYPES:
        return _part_text(part)
    if ctype != "application/octet-stream":  # a declared binary type (PDF, DOCX, image...) is not guessed at
        return None
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes) or b"\x00" in payload[:4096]:
        return None
    try:
        return decode_text(payload)[0]
    except ExtractionError:
        return None


def extract_eml(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    lines = [f"{name}: {message[name]}" for name in ("Subject", "From") if message[name]]
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        text = _part_text(body)
        if body.get_content_subtype() == "html":
            text, _ = html_to_text(text, limits)
        lines.append("")
        lines.append(text.replace("\r\n", "\n").strip())
    text = "\n".join(lines).strip()
    regions: list[tuple[int, int, str]] = []
    unread: list[str] = []
    attachments = list(message.iter_attachments()) if message.is_multipart() else []
    for number, part in enumerate(attachments, 1):
        name = part.get_filename() or f"attachment {number}"
        content = _attachment_text(part, limits)
        if content is None:
            unread.append(f"{name} ({part.get_content_type()})")
            continue
        content = content.replace("\r\n", "\n").strip()
        if content:
            start = len(text) + 2
            text = f"{text}\n\n{content}"
            regions.append((start, len(text), f"the attachment {name}"))
    meta = {"attachments": str(len(attachments))}
    if message["Date"]:
        meta["date"] = str(message["Date"])
    if unread:
        reason = f"{len(unread)} attachment(s) not read here: {', '.join(unread)[:200]}; scan them as files"
        return Extracted(text=text, extractor=NAME, status=TextStatus.PARTIAL, reason=reason, meta=meta,
                         regions=tuple(regions))
    return Extracted(text=text, extractor=NAME, meta=meta, regions=tuple(regions))


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("message/rfc822",), priority=50, extract=extract_eml)]
