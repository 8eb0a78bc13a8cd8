"""E-mail messages (RFC 822 / MIME) through the stdlib `email` package.

The text is the Subject and From headers followed by the body: plain text
preferred, else the HTML part through the HTML extractor. Attachments are
counted in meta but not extracted (they are files of their own).
"""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage, MIMEPart

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
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
    attachments = sum(1 for _ in message.iter_attachments()) if message.is_multipart() else 0
    meta = {"attachments": str(attachments)}
    if message["Date"]:
        meta["date"] = str(message["Date"])
    return Extracted(text="\n".join(lines).strip(), extractor=NAME, meta=meta)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("message/rfc822",), priority=50, extract=extract_eml)]
