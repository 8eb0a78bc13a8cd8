"""E-mail messages (RFC 822 / MIME) through the stdlib `email` package.

The text is the Subject and From headers followed by the body: plain text
preferred, else the HTML part through the HTML extractor. A mail is also a
container: each attachment (text, PDF, office file, archive, attached mail)
is a member of its own, `mail.eml!/report.pdf`, typed by its content and
read by whichever plugin reads that type, so a leak sent as an attachment is
found and named.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins.html import html_to_text

if TYPE_CHECKING:
    from email.message import EmailMessage, MIMEPart

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
    message = _message(data)
    lines = [f"{name}: {message[name]}" for name in ("Subject", "From") if message[name]]
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        text = _part_text(body)
        if body.get_content_subtype() == "html":
            text, _ = html_to_text(text, limits)
        lines.append("")
        lines.append(text.replace("\r\n", "\n").strip())
    meta = {"attachments": str(len(_attachments(message)))}
    if message["Date"]:
        meta["date"] = str(message["Date"])
    return Extracted(text="\n".join(lines).strip(), extractor=NAME, meta=meta)


def unpack_eml(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """Each attachment, decoded, named by its file name (else "attachment N")."""
    for number, part in enumerate(_attachments(_message(data)), 1):
        name = part.get_filename() or f"attachment {number}"
        try:
            payload = part.get_payload(decode=True)
        except Exception as exc:  # noqa: BLE001 - a damaged transfer encoding
            yield Member(name, None, "corrupt", f"attachment not decodable: {exc}")
            continue
        if isinstance(payload, bytes):
            budget.take(len(payload), f"attachment {name!r}")
            yield Member(name, payload)
        elif isinstance(attached := part.get_payload(), list):  # an attached message (message/rfc822)
            content = attached[0].as_bytes() if attached and not isinstance(attached[0], str) else b""
            budget.take(len(content), f"attachment {name!r}")
            yield Member(name if part.get_filename() else f"message {number}.eml", content)


def _message(data: bytes) -> EmailMessage:
    import email.policy  # when a message is read: email's policies cost every process ~20 ms to import
    from email.message import EmailMessage

    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


def _attachments(message: EmailMessage) -> list[MIMEPart]:
    return list(message.iter_attachments()) if message.is_multipart() else []


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("message/rfc822",), priority=50, extract=extract_eml)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name=NAME, mimes=("message/rfc822",), priority=50, unpack=unpack_eml, has_text=True)]
