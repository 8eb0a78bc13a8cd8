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
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl

MBOX = "application/mbox"
_SEPARATOR = re.compile(rb"(?:\A|(?<=\n\n)|(?<=\r\n\r\n))From [^\r\n]*\r?\n")
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)


def unpack_mbox(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    starts = [m for m in _SEPARATOR.finditer(data)]
    if not starts or starts[0].start() != 0:
        raise ExtractionError("not an mbox: no \"From \" separator line at the start", status="corrupt")
    for number, found in enumerate(starts, 1):
        end = starts[number].start() if number < len(starts) else len(data)
        message = _ESCAPED_FROM.sub(rb"\1", data[found.end():end])
        budget.take(len(message), f"message {number}")
        yield Member(f"message-{number:04d}.eml", message)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="mbox", mimes=(MBOX,), priority=50, unpack=unpack_mbox)]
