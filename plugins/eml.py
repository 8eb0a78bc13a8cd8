"""E-mail messages (RFC 822 / MIME) through the stdlib `email` package.

The text is the Subject and From headers followed by the body: plain text
preferred, else the HTML part through the HTML extractor; another version of
the body that says more (an HTML alternative that differs from the plain one)
follows it as a marked region. A mail is also a
container: each attachment (text, PDF, office file, archive, attached mail)
is a member of its own, `mail.eml!/report.pdf`, typed by its content and
read by whichever plugin reads that type, so a leak sent as an attachment is
found and named. Apple Mail's `.emlx` files are the same messages after a line giving their length.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import EMLX_LENGTH, EMLX_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins.html import html_to_text

if TYPE_CHECKING:
    from email.message import EmailMessage, MIMEPart

NAME = "eml"
MIMES = ("message/rfc822", EMLX_MIME)  # mail, and Apple Mail's message files


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
    lines = [f"{name}: {value}" for name in ("Subject", "From") if (value := header_text(message[name]))]
    body = message.get_body(preferencelist=("plain", "html"))
    shown = ""
    if body is not None:
        shown = _readable(body, limits)
        lines.append("")
        lines.append(shown)
    attachments = _attachments(message)
    meta = {"attachments": str(len(attachments))}
    if date := header_text(message["Date"]):
        meta["date"] = _date(date)
    others = _other_texts(message, body, attachments)
    shown_words = _words(shown) if others else Counter[str]()  # counted only when there is another to weigh
    versions = [(_VERSION_LABELS[part.get_content_subtype()], text) for part in others
                if _adds_words(text := _readable(part, limits), shown_words)]
    return Extracted(text="\n".join(lines).strip(), extractor=NAME, meta=meta).with_regions(versions)


def _readable(part: MIMEPart, limits: ExtractLimits) -> str:
    """A text part's text: plain as it is, HTML through the HTML extractor."""
    text = _part_text(part)
    if part.get_content_subtype() == "html":
        text, _ = html_to_text(text, limits)
    return text.replace("\r\n", "\n").strip()


def _other_texts(message: EmailMessage, body: MIMEPart | None, attachments: list[MIMEPart]) -> list[MIMEPart]:
    """The plain and HTML parts of the message that are neither its body nor one of its `attachments`: the
    other alternatives (a mail client shows the HTML one, most often) and inline parts beside the body."""
    attached = {id(part) for part in attachments}
    found: list[MIMEPart] = []
    stack: list[Any] = [message]
    while stack:
        part = stack.pop()
        if part is not message and (id(part) in attached or part.is_attachment()):
            continue
        if part.is_multipart():
            if part.get_content_maintype() == "multipart":  # not into an attached message
                stack.extend(reversed(part.get_payload()))
        elif part is not body and part.get_content_type() in ("text/plain", "text/html"):
            found.append(part)
    return found


_VERSION_LABELS = {"html": "the HTML version of the message", "plain": "another plain-text part of the message"}
_OWN_WORDS = 7  # the guarantee's length: a passage that long in another version alone must be read
_WORD = re.compile(r"\w+")


def _words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def _adds_words(text: str, shown: Counter[str]) -> bool:
    """Whether `text` holds _OWN_WORDS words (counted with repeats) that the body's words `shown` lack: an
    alternative that says the same (the usual HTML copy of a plain mail) adds nothing, one that differs is
    read too, since the reader may see it instead (a leak in the HTML alternative of an innocuous plain one
    went unseen)."""
    return sum((_words(text) - shown).values()) >= _OWN_WORDS


def unpack_eml(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """Each attachment, decoded, named by its file name (else "attachment N")."""
    for number, part in enumerate(_attachments(_message(data)), 1):
        name = header_text(part.get_filename()) or f"attachment {number}"
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


@functools.lru_cache(maxsize=1)
def _message(data: bytes) -> EmailMessage:
    """The message parsed with its headers kept as strings (the `compat32` policy): the default policy makes a
    header object, parsing the value, at every access, and the body and attachment searches ask each part's
    Content-Type many times (~30 parses a message, two thirds of a mail's reading); only the headers shown
    are decoded (`header_text`). The last message parsed is kept, as a mail's text and then its attachments
    are read from the same bytes (two parses were a third of a mail's reading); neither reading changes it."""
    import email
    from email.message import EmailMessage
    from email.policy import compat32

    message = email.message_from_bytes(emlx_message(data), _class=_mail_class(), policy=compat32)
    assert isinstance(message, EmailMessage)
    return message


@functools.cache
def _mail_class() -> type[EmailMessage]:
    """EmailMessage whose parts say they are attachments from a string header (its own test wants the default
    policy's header object); made when a message is first read: email's policies cost ~20 ms to import."""
    from email.message import EmailMessage

    class StringHeadersMail(EmailMessage):
        def is_attachment(self) -> bool:
            return self.get_content_disposition() == "attachment"

    return StringHeadersMail


def _date(text: str) -> str:
    """A Date header in RFC 5322's form ("Mon, 01 Jan 2001 00:01:00 +0000"), as written when it does not parse."""
    from email.utils import format_datetime, parsedate_to_datetime

    try:
        return format_datetime(parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError):
        return text


def header_text(value: object) -> str:
    """A header's text as a reader sees it: RFC 2047 words decoded, folded lines joined ("" when absent)."""
    if value is None:
        return ""
    from email.errors import HeaderParseError
    from email.header import decode_header, make_header

    try:
        text = str(make_header(decode_header(value)))  # type: ignore[arg-type]
    except (HeaderParseError, LookupError, UnicodeError, ValueError):  # a word in an unknown or broken charset
        text = str(value)
    return " ".join(text.split())


def _attachments(message: EmailMessage) -> list[MIMEPart]:
    return list(message.iter_attachments()) if message.is_multipart() else []


def emlx_message(data: bytes) -> bytes:
    """The message an Apple Mail `.emlx` file holds: its first line is the message's length in bytes, and a
    property list of Mail's flags follows the message (any other message is given back whole)."""
    count = EMLX_LENGTH.match(data)
    if count is None:
        return data
    return data[count.end():count.end() + int(count.group(1))]


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_eml)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name=NAME, mimes=MIMES, priority=50, unpack=unpack_eml, has_text=True)]
