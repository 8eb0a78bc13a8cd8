"""Outlook `.msg` files: an OLE2 compound file of MAPI properties, read with olefile (BSD licence).

extract-msg reads more of the format, but it is GPL-3 and this needs six
properties: subject, sender, the plain, HTML or compressed RTF body, and each attachment's
name and bytes, which are streams named `__substg1.0_<property><type>`
([MS-OXMSG] 2.1). The text is Subject and From, then the body; each
attachment is a member `mail.msg!/report.pdf` read by whichever plugin reads
its type. An attached Outlook item (a forwarded mail: a nested storage, not
bytes) is a member `mail.msg!/Re: budget.eml`, written as a mail.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins._mapi import (
    body_text,
    body_with_note,
    decompressed_rtf,
    eight_bit_text,
    message_result,
    mime_message,
)
from scanner_plugins._ole import open_compound_file, read_stream

NAME = "msg"
MIMES = ("application/vnd.ms-outlook",)
_SUBJECT, _SENDER_NAME, _SENDER_ADDRESS, _BODY, _HTML_BODY = "0037", "0C1A", "0C1F", "1000", "1013"
_RTF_COMPRESSED = "1009"  # the body of a message written in rich text, which may be the only one kept
_ATTACH_DATA, _ATTACH_LONG_NAME, _ATTACH_NAME = "3701", "3707", "3704"
_ATTACHMENT_PREFIX = "__attach_version1.0_#"
_NESTED_ITEMS = 8  # Outlook items attached inside attached items: deeper is a loop in a damaged file


class _Message:
    """The property streams of one message (or of one attachment's storage)."""

    def __init__(self, ole: Any, size: int, storage: tuple[str, ...] = ()) -> None:
        self.ole = ole
        self.size = size  # the file's: no stream of it is larger
        self.storage = storage

    def _stream(self, name: str) -> bytes | None:
        path = [*self.storage, name]
        if not self.ole.exists("/".join(path)) or self.ole.get_type("/".join(path)) != 2:  # 2: a stream
            return None
        return read_stream(self.ole, path, self.size, "Outlook message")

    def string(self, prop: str) -> str:
        unicode = self._stream(f"__substg1.0_{prop}001F")
        if unicode is not None:
            return unicode.decode("utf-16-le", errors="replace").rstrip("\0")
        eight_bit = self._stream(f"__substg1.0_{prop}001E")
        return "" if eight_bit is None else eight_bit_text(eight_bit)

    def binary(self, prop: str) -> bytes | None:
        return self._stream(f"__substg1.0_{prop}0102")

    def has_storage(self, prop: str) -> bool:
        path = "/".join([*self.storage, f"__substg1.0_{prop}000D"])
        return bool(self.ole.exists(path)) and self.ole.get_type(path) == 1  # 1: a storage


def _open(data: bytes) -> Any:
    import olefile

    if not olefile.isOleFile(io.BytesIO(data)):
        raise ExtractionError("not an Outlook message: no OLE2 header", status="corrupt")
    return open_compound_file(data, "Outlook message")


def extract_msg(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    ole = _open(data)
    try:
        message = _Message(ole, len(data))
        subject, sender, body = message.string(_SUBJECT), _sender(message), _body(message, limits)
        attachments = len(_attachment_storages(ole))
    finally:
        ole.close()
    return message_result(NAME, subject, sender, body, {"attachments": str(attachments)})


def _sender(message: _Message) -> str:
    address = message.string(_SENDER_ADDRESS)
    return " ".join(part for part in (message.string(_SENDER_NAME), f"<{address}>" if address else "") if part)


def _body(message: _Message, limits: ExtractLimits) -> tuple[str, str]:
    """The body's text, and why it is missing when it cannot be read (`body_text`)."""
    compressed = message.binary(_RTF_COMPRESSED)
    return body_text(message.string(_BODY), message.binary(_HTML_BODY) or message.string(_HTML_BODY),
                     lambda: decompressed_rtf(compressed) if compressed else None, limits)


def _attachment_storages(ole: Any, storage: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The attachments' storages of the message at `storage` (the file's own message: the root)."""
    depth = len(storage)
    return sorted({tuple(entry[:depth + 1]) for entry in ole.listdir(streams=True, storages=True)
                   if len(entry) > depth and tuple(entry[:depth]) == storage
                   and entry[depth].startswith(_ATTACHMENT_PREFIX)})


def unpack_msg(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    ole = _open(data)
    try:
        for number, storage in enumerate(_attachment_storages(ole), 1):
            yield from _attachment(ole, len(data), storage, number, budget, 0)
    finally:
        ole.close()


def _attachment(ole: Any, size: int, storage: tuple[str, ...], number: int, budget: Any,
                depth: int) -> list[Member]:
    """An attachment as a member, named, with its bytes or why it has none. An attached Outlook item (a
    forwarded mail, kept as a message's storage inside this one, [MS-OXMSG] 2.2.2.1) is written as a mail,
    `name.eml`, its attachments in it (the mail reader opens it as any attached mail); those it could not
    carry follow it, named after it (`name.eml: inner name`)."""
    attachment = _Message(ole, size, storage)
    name = attachment.string(_ATTACH_LONG_NAME) or attachment.string(_ATTACH_NAME) or f"attachment {number}"
    content = attachment.binary(_ATTACH_DATA)
    if content is not None:
        budget.take(len(content), f"attachment {name!r}")
        return [Member(name, content)]
    if not attachment.has_storage(_ATTACH_DATA):
        return [Member(name, None, "empty", "an attachment without data (a link or a reference)")]
    if depth >= _NESTED_ITEMS:
        return [Member(name, None, "too_large", f"Outlook items attached more than {_NESTED_ITEMS} deep: not opened")]
    name = name if name.lower().endswith(".eml") else f"{name}.eml"
    item = (*storage, f"__substg1.0_{_ATTACH_DATA}000D")
    attached: list[Member] = []
    left: list[Member] = []
    for inner_number, inner in enumerate(_attachment_storages(ole, item), 1):
        first, *rest = _attachment(ole, size, inner, inner_number, budget, depth + 1)
        (attached if first.data is not None else left).append(first)
        left.extend(rest)
    mail = _item_as_mail(_Message(ole, size, item), [(member.name, member.data or b"") for member in attached])
    budget.take(len(mail), f"attachment {name!r}")
    return [Member(name, mail), *(replace(member, name=f"{name}: {member.name}") for member in left)]


def _item_as_mail(item: _Message, attached: list[tuple[str, bytes]]) -> bytes:
    """An attached Outlook item as a MIME mail: Subject and From, its body as text (`body_with_note`), and
    `attached`."""
    headers = [(header, " ".join(value.split())) for header, value in (("Subject", item.string(_SUBJECT)),
                                                                        ("From", _sender(item))) if value.strip()]
    return mime_message(headers, body_with_note(_body(item, ExtractLimits())), b"", attached)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_msg)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name=NAME, mimes=MIMES, priority=50, unpack=unpack_msg, has_text=True)]
