"""TNEF (`winmail.dat`): how Outlook and Exchange send a rich-text message to a mail program that is not
Outlook; the body and every attachment travel inside this one attachment, and a mail program shows only
"winmail.dat". Read with tnefparse (LGPL-3, pure Python): the text is Subject, then the body (plain, HTML,
or the compressed RTF that is often the only one); each attachment is a member `mail.eml!/winmail.dat!/a.pdf`
read by whichever plugin reads its type, an attached Outlook item a TNEF stream of its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins._mapi import body_text, decompressed_rtf, eight_bit_text, message_result

NAME = "tnef"
MIMES = ("application/vnd.ms-tnef", "application/ms-tnef")
_SIGNATURE = b"\x78\x9f\x3e\x22"
_ATTRIBUTE_HEAD, _CHECKSUM = 9, 2  # an attribute: level (1), id (4), length (4), its bytes, then their sum (2)
_ATTACHMENT_LEVEL = 2


def _open(data: bytes) -> Any:
    import tnefparse

    if not data.startswith(_SIGNATURE):
        raise ExtractionError("not a TNEF stream: no signature", status="corrupt")
    try:
        return tnefparse.TNEF(data, do_checksum=False)
    except Exception as exc:  # hostile bytes reach every corner of its parser (IndexError, struct.error...)
        raise ExtractionError(f"TNEF stream unreadable: {type(exc).__name__}: {exc}", status="corrupt") from exc


def _cut_short(data: bytes) -> tuple[str, bool]:
    """Why the stream's last attribute lacks some of its bytes ("" when none does), and whether it is one of
    an attachment's: tnefparse reads a cut stream without a word, and the attachments and body after the cut
    would be missing unsaid, the one at the cut given as if whole. A few bytes past the last attribute (one
    real stream ends with a stray byte) and a missing last checksum (another) lose nothing."""
    at = len(_SIGNATURE) + 2  # the signature, then the key
    number = 0
    while len(data) - at >= _ATTRIBUTE_HEAD + _CHECKSUM:
        number += 1
        length = int.from_bytes(data[at + 5:at + _ATTRIBUTE_HEAD], "little")
        if at + _ATTRIBUTE_HEAD + length > len(data):
            remain = len(data) - at - _ATTRIBUTE_HEAD
            return f"cut short: attribute {number} declares {length} bytes, {remain} remain", \
                data[at] == _ATTACHMENT_LEVEL
        at += _ATTRIBUTE_HEAD + length + _CHECKSUM
    return "", False


def _string(value: Any) -> str:
    """tnefparse gives a string attribute as bytes or, decoded by its code page, as str."""
    return eight_bit_text(value) if isinstance(value, bytes) else str(value or "").rstrip("\0")


def _whole(compressed: bytes | None) -> bytes | None:
    """The compressed RTF at the size its header declares: the library's MAPI reader can leave off the last
    byte (in one of its own real test files), a zero its own accessor gives back the same way."""
    if not compressed or len(compressed) < 4:
        return compressed
    declared = int.from_bytes(compressed[:4], "little") + 4
    return compressed + b"\0" * (declared - len(compressed)) if declared - len(compressed) in (1, 2, 3) else compressed


def extract_tnef(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    import tnefparse

    tnef = _open(data)
    subject = next((_string(p.data) for p in tnef.msgprops if p.name == tnefparse.TNEF.ATTSUBJECT), "")
    compressed = _whole(tnef._rtfbody)  # (its own accessor decompresses only when compressed-rtf is installed)
    body = body_text(_string(tnef.body), tnef.htmlbody,
                     lambda: decompressed_rtf(compressed) if compressed else None, limits)
    result = message_result(NAME, subject, "", body, {"attachments": str(len(tnef.attachments))})
    cut, _ = _cut_short(data)
    if cut and not result.text.strip():
        raise ExtractionError(f"TNEF stream {cut}", status="corrupt")
    if cut:
        return dataclasses.replace(result, status=TextStatus.PARTIAL, reason="; ".join(
            r for r in (result.reason, f"TNEF stream {cut}: what precedes it is read") if r))
    return result


def unpack_tnef(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    tnef = _open(data)
    name = ""
    for number, attachment in enumerate(tnef.attachments, 1):
        try:
            name = _string(attachment.long_filename()) or f"attachment {number}"
        except (UnicodeDecodeError, AttributeError):
            name = f"attachment {number}"
        content = attachment.data
        if not isinstance(content, bytes):
            yield Member(name, None, "corrupt", "an attachment whose data the TNEF stream does not hold")
            continue
        budget.take(len(content), f"attachment {name!r}")
        yield Member(name, content)
    cut, in_attachment = _cut_short(data)
    if cut:
        last = f" (in attachment {name!r}, read as far as it goes)" if in_attachment and name else ""
        raise ExtractionError(f"TNEF stream {cut}{last}", status="corrupt")


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_tnef)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name=NAME, mimes=MIMES, priority=50, unpack=unpack_tnef, has_text=True)]
