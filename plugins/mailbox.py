"""mbox mail stores (Unix mailboxes, Thunderbird's folders, Google Takeout's exports).

Read by hand rather than with the standard library's `mailbox`, which wants
a file on disk: messages start at a "From " separator line at the start of
the store or after a blank line, and a line escaped as ">From " (mboxrd,
mboxo) loses one ">". Each message is a member `inbox.mbox!/message-0001.eml`,
opened in turn as a mail (its attachments are members of it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl

MBOX = "application/mbox"
# a "From " line, searched as a literal at a line's start (fast); it separates messages at the store's start or
# after a blank line (`_separators`): lookbehinds in the pattern made the search 28 MB/s
_FROM_LINE = re.compile(rb"^From [^\r\n]*\r?\n", re.MULTILINE)
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)


_BLOCK = 8 * 1024 * 1024  # bytes read at a time from a mailbox too large to hold whole


def unpack_mbox(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    return _messages(iter((data,)), budget)


def unpack_mbox_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """A mailbox over the size held in memory (a mail service's export runs to gigabytes), a block at a time:
    a message is given once the separator after it is read, so only the message being read is held."""
    return _messages(iter(lambda: stream.read(_BLOCK), b""), budget)


def _messages(blocks: Iterator[bytes], budget: Any) -> Iterator[Member]:
    """The messages of a mailbox read as consecutive blocks (one block: the whole store)."""
    held = b""  # from the last separator found (the store's start first) to the end of what was read
    number = 0
    for block in blocks:
        held += block
        starts = _separators(held)
        if number == 0 and (not starts or starts[0].start() != 0):
            if not starts and b"\n" not in held:  # its first line is not all read yet
                continue
            raise ExtractionError("not an mbox: no \"From \" separator line at the start", status="corrupt")
        for found, following in zip(starts, starts[1:]):
            number += 1
            yield _message(number, held[found.end():following.start()], budget)
        held = held[starts[-1].start():]  # the last message may go on in the next block
    last = _FROM_LINE.match(held)  # the store's start, or the last separator found
    if last is None:
        raise ExtractionError("not an mbox: no \"From \" separator line at the start", status="corrupt")
    yield _message(number + 1, held[last.end():], budget)


def _separators(held: bytes) -> list[re.Match[bytes]]:
    """The separator lines of `held`: "From " lines at its start or after a blank line."""
    return [found for found in _FROM_LINE.finditer(held) if found.start() == 0
            or held.endswith(b"\n\n", 0, found.start()) or held.endswith(b"\r\n\r\n", 0, found.start())]


def _message(number: int, text: bytes, budget: Any) -> Member:
    message = _ESCAPED_FROM.sub(rb"\1", text)
    budget.take(len(message), f"message {number}")
    return Member(f"message-{number:04d}.eml", message)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="mbox", mimes=(MBOX,), priority=50, unpack=unpack_mbox, unpack_file=unpack_mbox_file)]
