"""Outlook `.msg` files: an OLE2 compound file of MAPI properties, read with olefile (BSD licence).

extract-msg reads more of the format, but it is GPL-3 and this needs six
properties: subject, sender, the plain, HTML or compressed RTF body, and each attachment's
name and bytes, which are streams named `__substg1.0_<property><type>`
([MS-OXMSG] 2.1). The text is Subject and From, then the body; each
attachment is a member `mail.msg!/report.pdf` read by whichever plugin reads
its type. An attached Outlook item (a nested storage, not bytes) is listed
`unsupported`, never dropped.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins._mapi import body_text, decompressed_rtf, eight_bit_text, message_result
from scanner_plugins._ole import open_compound_file, read_stream

NAME = "msg"
MIMES = ("application/vnd.ms-outlook",)
_SUBJECT, _SENDER_NAME, _SENDER_ADDRESS, _BODY, _HTML_BODY = "0037", "0C1A", "0C1F", "1000", "1013"
_RTF_COMPRESSED = "1009"  # the body of a message written in rich text, which may be the only one kept
_ATTACH_DATA, _ATTACH_LONG_NAME, _ATTACH_NAME = "3701", "3707", "3704"
_ATTACHMENT_PREFIX = "__attach_version1.0_#"


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
        subject = message.string(_SUBJECT)
        address = message.string(_SENDER_ADDRESS)
        sender = " ".join(part for part in (message.string(_SENDER_NAME), f"<{address}>" if address else "") if part)
        compressed = message.binary(_RTF_COMPRESSED)
        body = body_text(message.string(_BODY), message.binary(_HTML_BODY) or message.string(_HTML_BODY),
                         lambda: decompressed_rtf(compressed) if compressed else None, limits)
        attachments = len(_attachment_storages(ole))
    finally:
        ole.close()
    return message_result(NAME, subject, sender, body, {"attachments": str(attachments)})


def _attachment_storages(ole: Any) -> list[str]:
    return sorted({entry[0] for entry in ole.listdir(streams=True, storages=True)
                   if entry and entry[0].startswith(_ATTACHMENT_PREFIX)})


def unpack_msg(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    ole = _open(data)
    try:
        for number, storage in enumerate(_attachment_storages(ole), 1):
            attachment = _Message(ole, len(data), (storage,))
            name = (attachment.string(_ATTACH_LONG_NAME) or attachment.string(_ATTACH_NAME)
                    or f"attachment {number}")
            content = attachment.binary(_ATTACH_DATA)
            if content is not None:
                budget.take(len(content), f"attachment {name!r}")
                yield Member(name, content)
            elif attachment.has_storage(_ATTACH_DATA):
                yield Member(name, None, "unsupported", "an attached Outlook item (a nested message): not opened")
            else:
                yield Member(name, None, "empty", "an attachment without data (a link or a reference)")
    finally:
        ole.close()


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_msg)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name=NAME, mimes=MIMES, priority=50, unpack=unpack_msg, has_text=True)]
