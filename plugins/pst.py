"""Outlook data files (`.pst`, `.ost`): the mail store Outlook keeps and exports, read with libpff (LGPL-3).

An investigator is handed a mailbox as a PST more often than as anything else. Each message becomes a
member `mail.pst!/Inbox/Projects/message-0001.eml`: a MIME message of its headers (the transport headers
the server wrote, else Subject and From from its properties), its plain and HTML bodies (the RTF body,
which Outlook may keep alone, as text) and its attachments, read in turn as a mail, so every attachment
is a member of it. Contacts, appointments and notes are messages of the store too. Items the folder tree
no longer reaches but the file still holds (libpff's orphan items: deleted or cut off by damage) are
members under `(items outside any folder)/`. What cannot be read (a damaged folder, message or attachment,
an attached Outlook item) is named with its reason, never dropped.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from scanner.core.errors import ExtractionError
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Member, Unpacker, hookimpl
from scanner_plugins._mapi import body_text, body_with_note, eight_bit_text, mime_message

PST_MIME = "application/vnd.ms-outlook-pst"
OUTSIDE_FOLDERS = "(items outside any folder)"
_HEADERS_KEPT = ("Date", "From", "To", "Cc", "Subject", "Message-ID", "In-Reply-To")
_DISPLAY_TO, _DISPLAY_CC, _SENDER_ADDRESS = 0x0E04, 0x0E03, 0x0C1F  # PidTag* property ids
_ATTACH_METHOD, _ATTACH_DATA = 0x3705, 0x3701
_EMBEDDED_MESSAGE, _BY_REFERENCE = 5, frozenset({2, 3, 4, 7})  # PidTagAttachMethod values
_NESTED_ITEM = "an attached Outlook item (a nested message): not opened, as libpff's Python binding does not reach it"
_SUBJECT_PREFIX = re.compile(r"\A\x01.")  # a stored subject's first two characters: a marker and a length
_FOLDER_DEPTH = 64  # a folder tree deeper than this loops on itself (a damaged file)
# what pypff raises on damaged data: OSError, and MemoryError where libpff cannot build a folder, message or
# attachment object out of it ("unable to create folder object"), not for want of memory
_DAMAGE = (OSError, MemoryError)


def unpack_pst(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    return _members(io.BytesIO(data), budget)


def unpack_pst_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """A store over the size held in memory (PST files run to gigabytes): libpff reads the blocks it needs."""
    return _members(stream, budget)


def _members(stream: BinaryIO, budget: Any) -> Iterator[Member]:
    import pypff

    store = pypff.file()
    try:
        store.open_file_object(stream)
    except _DAMAGE as exc:
        raise ExtractionError(f"not a readable Outlook data file: {_last_reason(exc)}", status="corrupt") from exc
    try:
        orphans = [item for item in _orphans(store) if isinstance(item, pypff.message)]
        try:
            yield from _folder(store.root_folder, "", budget, 0)
        except _DAMAGE as exc:  # no folder tree: the items outside it may still be read
            reason = f"no root folder: {_last_reason(exc)}"
            if not orphans:
                raise ExtractionError(f"not a readable Outlook data file: {reason}", status="corrupt") from exc
            yield Member("root folder", None, "corrupt", reason)
        for number, message in enumerate(orphans, 1):
            yield from _message_members(message, f"{OUTSIDE_FOLDERS}/message-{number:04d}.eml", budget)
    finally:
        store.close()


def _orphans(store: Any) -> list[Any]:
    """The items no folder reaches, an empty list where libpff cannot list them (a damaged index)."""
    try:
        return [store.get_orphan_item(number) for number in range(store.number_of_orphan_items)]
    except _DAMAGE:
        return []


def _folder(folder: Any, path: str, budget: Any, depth: int) -> Iterator[Member]:
    if depth > _FOLDER_DEPTH:
        yield Member(path or "folder", None, "corrupt", f"folders nested more than {_FOLDER_DEPTH} deep")
        return
    try:
        count = folder.number_of_sub_messages
    except _DAMAGE as exc:
        yield Member(path or "root folder", None, "corrupt", f"folder not readable: {_last_reason(exc)}")
        count = 0
    for number in range(count):
        name = f"{path}/message-{number + 1:04d}.eml" if path else f"message-{number + 1:04d}.eml"
        try:
            message = folder.get_sub_message(number)
        except _DAMAGE as exc:
            yield Member(name, None, "corrupt", f"message not readable: {_last_reason(exc)}")
            continue
        yield from _message_members(message, name, budget)
    try:
        subfolders = [folder.get_sub_folder(number) for number in range(folder.number_of_sub_folders)]
    except _DAMAGE as exc:
        yield Member(path or "root folder", None, "corrupt", f"sub-folders not readable: {_last_reason(exc)}")
        return
    for number, sub in enumerate(subfolders, 1):
        yield from _folder(sub, "/".join(p for p in (path, _folder_name(sub, number)) if p), budget, depth + 1)


def _folder_name(folder: Any, number: int) -> str:
    """A folder's name as a path part ("Inbox"), a slash in it kept out of the path."""
    try:
        name = folder.name or ""
    except _DAMAGE:
        name = ""
    return name.replace("/", "\N{DIVISION SLASH}").strip() or f"folder {number}"


def _message_members(message: Any, name: str, budget: Any) -> Iterator[Member]:
    """The message as a mail, then each attachment it could not carry, named after it (`name: label`)."""
    try:
        data, unread = _as_mail(message)
    except _DAMAGE as exc:
        yield Member(name, None, "corrupt", f"message not readable: {_last_reason(exc)}")
        return
    budget.take(len(data), f"message {name!r}")
    yield Member(name, data)
    for label, status, reason in unread:
        yield Member(f"{name}: {label}", None, status, reason)


def _as_mail(message: Any) -> tuple[bytes, list[tuple[str, str, str]]]:
    """The message as a MIME message, and the attachments it could not carry (label, status, reason)."""
    plain = _text(message.plain_text_body)
    html = message.html_body or b""
    if not plain.strip() and not html:  # the rich-text body Outlook may keep alone (libpff inflates it)
        plain = body_with_note(body_text("", None, lambda: (message.rtf_body or b"").rstrip(b"\0"), ExtractLimits()))
    attached, unread = [], []
    for number in range(message.number_of_attachments):
        label, content, status, reason = _attachment(message, number)
        if content is None:
            unread.append((label, status, reason))
        else:
            attached.append((label, content))
    return mime_message(_headers(message), plain, html, attached), unread


def _attachment(message: Any, number: int) -> tuple[str, bytes | None, str, str]:
    """An attachment's label and bytes, or None with the status and reason it has none."""
    label = f"attachment {number + 1}"
    try:
        attachment = message.get_attachment(number)
        label = attachment.long_filename or label
        method = _entry(attachment, _ATTACH_METHOD)
        if method is not None and method.data_as_integer == _EMBEDDED_MESSAGE:
            return label, None, "unsupported", _NESTED_ITEM
        if method is not None and method.data_as_integer in _BY_REFERENCE:
            return label, None, "empty", "a link to a file kept outside the message, not in it"
        if _entry(attachment, _ATTACH_DATA) is None:
            return label, None, "empty", "an attachment without data"
        size = attachment.size
        return label, attachment.read_buffer(size) if size else b"", "", ""
    except _DAMAGE as exc:
        return label, None, "corrupt", f"attachment not readable: {_last_reason(exc)}"


def _headers(message: Any) -> list[tuple[str, str]]:
    """The original mail's headers where the server's are kept, else those the message's properties give."""
    from email.parser import HeaderParser
    from email.policy import compat32

    kept: list[tuple[str, str]] = []
    transport = _text(message.transport_headers)
    if transport.strip():
        parsed = HeaderParser(policy=compat32).parsestr(transport)
        kept = [(header, str(value)) for header in _HEADERS_KEPT if (value := parsed.get(header)) is not None]
    have = {header for header, _ in kept}
    if "Subject" not in have and (subject := _SUBJECT_PREFIX.sub("", _text(message.subject))):
        kept.append(("Subject", subject))
    if "From" not in have:
        sender = _text(message.sender_name)
        address = _property(message, _SENDER_ADDRESS)
        if sender or address:
            kept.append(("From", " ".join(p for p in (sender, f"<{address}>" if address else "") if p)))
    for header, prop in (("To", _DISPLAY_TO), ("Cc", _DISPLAY_CC)):
        if header not in have and (value := _property(message, prop)):
            kept.append((header, value))
    if "Date" not in have:
        when = message.delivery_time or message.client_submit_time
        if when is not None and when.year > 1601:  # 1601: FILETIME zero, no date
            from email.utils import format_datetime

            kept.append(("Date", format_datetime(when)))
    return [(header, " ".join(value.split())) for header, value in kept]  # one line each


def _entry(item: Any, entry_type: int) -> Any:
    """A property of a message or attachment (its first record set), None where it has none."""
    return item.get_record_set(0).get_entry_by_type(entry_type) if item.number_of_record_sets else None


def _property(message: Any, entry_type: int) -> str:
    """A string property of the message, "" where it has none or it cannot be read."""
    try:
        entry = _entry(message, entry_type)
        return "" if entry is None else _text(entry.data_as_string)
    except _DAMAGE:
        return ""


def _text(value: str | bytes | None) -> str:
    """A string libpff gives as text or as bytes (its bodies come as UTF-8, an 8-bit property in a code page)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.rstrip("\0")
    try:
        return value.rstrip(b"\0").decode("utf-8")
    except UnicodeDecodeError:
        return eight_bit_text(value)


def _last_reason(exc: Exception) -> str:
    """libpff's error: a chain of "function: what failed." clauses, of which the first is the cause."""
    clauses = [c.split(": ", 1)[-1].strip() for c in str(exc).split(". ") if c.strip()]
    return clauses[0].rstrip(".") if clauses else str(exc)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="pst", mimes=(PST_MIME,), priority=50, unpack=unpack_pst, unpack_file=unpack_pst_file)]
