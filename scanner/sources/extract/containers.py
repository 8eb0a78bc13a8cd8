"""Containers (archives, mail stores, mail attachments) opened into members, each a file of its own.

A member is named `container!/member` (the convention examiners know from
forensic suites and Java's jar URLs), gets its own SHA-256 and MIME, and is
extracted like any file; a member that is itself a container is opened in
turn, down to `ExtractLimits.max_container_depth`. One `Budget` is shared by
every level of a file, so members, expanded bytes and inflate ratio are
bounded for the whole tree, whatever the nesting: a bomb stops with the
container `too_large` and a reason, keeping the members read before it.
A member that cannot be read (encrypted, corrupt, over a limit) is listed
with that status, never dropped.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, BinaryIO

from scanner.core.display import one_line, printable
from scanner.core.errors import ExtractionError
from scanner.core.model import MEMBER_SEPARATOR, Extracted, FileRecord, TextStatus
from scanner.sources.limits import ExtractLimits, decrypted

if TYPE_CHECKING:
    from scanner.sources.plugins import Member, Unpacker

_CHUNK = 64 * 1024


class Budget:
    """What one file's containers may still expand to: members and bytes, all levels together.

    Unpackers read every member through `read` (or account for bytes they
    inflated themselves with `take`), so a member that lies about its size is
    stopped while it inflates, not after.
    """

    def __init__(self, limits: ExtractLimits, size: int = 0, held: bool = True) -> None:
        """`size`: bytes of the file whose containers these are (its members may number one per
        `limits.member_bytes` of it, at least `limits.max_container_members`, and at most
        `limits.most_container_members` when they are `held` until the file is done, not spilled)."""
        self.limits = limits
        by_size = size // max(limits.member_bytes, 1)
        if held:
            by_size = min(by_size, limits.most_container_members)
        self.most_members = max(limits.max_container_members, by_size)
        self.members_left = self.most_members
        self.bytes_left = max(limits.max_expanded_bytes, size)  # a file read from disk gives at least its own bytes

    def count_member(self) -> None:
        if self.members_left <= 0:
            limits, most = self.limits, self.most_members
            if most >= limits.most_container_members > limits.max_container_members:
                why = f"more than {most} members, the most read from one file"
            elif most > limits.max_container_members:
                why = f"archive bomb: more than {most} members, over one per {limits.member_bytes} bytes of the file"
            else:
                why = f"archive bomb: more than {most} members"
            raise ExtractionError(why, status=TextStatus.TOO_LARGE.value)
        self.members_left -= 1

    def take(self, size: int, what: str) -> None:
        """Account for `size` inflated bytes of `what`."""
        if size > self.bytes_left:
            raise ExtractionError(f"archive bomb: {what} expands past the limit of "
                                  f"{self.limits.max_expanded_bytes} bytes", status=TextStatus.TOO_LARGE.value)
        self.bytes_left -= size

    def read(self, stream: IO[bytes], what: str, packed_size: int | None = None) -> bytes:
        """All of `stream`, in chunks against the budget; a member inflating more than `max_zip_ratio` times
        its packed size (once past `zip_ratio_floor`) is a bomb."""
        return self.read_chunks(iter(lambda: stream.read(_CHUNK), b""), what, packed_size)

    def read_chunks(self, chunks: Iterable[bytes], what: str, packed_size: int | None = None) -> bytes:
        """`read` for an unpacker that inflates the member itself, a chunk at a time."""
        limits = self.limits
        out = bytearray()
        for chunk in chunks:
            self.take(len(chunk), what)
            out += chunk
            if (packed_size is not None and len(out) > limits.zip_ratio_floor
                    and len(out) > limits.max_zip_ratio * max(packed_size, 1)):
                raise ExtractionError(f"archive bomb: {what} inflates over {limits.max_zip_ratio:g}x",
                                      status=TextStatus.TOO_LARGE.value)
        return bytes(out)


ExtractBytes = Callable[[bytes, str], Extracted]
Spill = Callable[[list[tuple[FileRecord, Extracted]]], None]
DetectMime = Callable[[bytes], str]
FindUnpacker = Callable[[str], "Unpacker | None"]


@dataclasses.dataclass(frozen=True)
class Opener:
    """What opening a container needs, passed down every level (no module state)."""

    extract: ExtractBytes  # the text of a member that is no container
    detect: DetectMime
    unpacker_for: FindUnpacker
    limits: ExtractLimits
    on_member: Callable[[str], None] | None = None  # told each member's path before it is read
    # given a file's members read so far, SPILL_MEMBERS or more at a time, which then leave its result: a scan's
    # worker sends them on (a mailbox of 90,000 messages held whole ran past the worker's memory budget)
    spill: Spill | None = None


SPILL_MEMBERS = 1_000


def open_container(record: FileRecord, data: bytes | BinaryIO, unpacker: "Unpacker", opener: Opener,
                   budget: Budget | None = None, depth: int = 0) -> Extracted:
    """The container's own result (its body for mail, else status `container`) with every member. `data`: its
    bytes, or the file itself, opened read-only, for an unpacker that reads one (`Unpacker.unpack_file`)."""
    budget = budget or Budget(opener.limits, len(data) if isinstance(data, bytes) else record.size,
                              held=opener.spill is None)
    if unpacker.has_text:
        assert isinstance(data, bytes)
        own = opener.extract(data, record.mime)
    else:
        own = Extracted(text="", extractor=unpacker.name, status=TextStatus.CONTAINER)
    members: list[tuple[FileRecord, Extracted]] = []
    names: set[str] = set()
    direct = 0
    pictures_without_text = 0
    stopped: ExtractionError | None = None
    try:
        if isinstance(data, bytes):
            unpacked = unpacker.unpack(data, record.mime, budget)
        else:
            assert unpacker.unpack_file is not None
            unpacked = unpacker.unpack_file(data, record.mime, budget)
        for member in unpacked:
            budget.count_member()
            direct += 1
            name = _unique(printable(member.name.lstrip("/")) or f"member {direct}", names)
            if opener.on_member is not None:
                opener.on_member(f"{record.path}{MEMBER_SEPARATOR}{name}")
            found = _member(record, name, member, opener, budget, depth)
            if member.picture and [result.status for _, result in found] == [TextStatus.EMPTY]:
                pictures_without_text += 1  # a logo, a photograph: no text lost
                continue
            members.extend(found)
            if depth == 0 and opener.spill is not None and len(members) >= SPILL_MEMBERS:
                opener.spill(members)
                members = []
    except ExtractionError as exc:
        stopped = exc
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - a hostile container may break any reader
        stopped = ExtractionError(f"{type(exc).__name__}: {exc}", status=TextStatus.CORRUPT.value)
    meta = {**own.meta, "members": str(direct - pictures_without_text)}
    if pictures_without_text:
        meta["pictures_without_text"] = str(pictures_without_text)
    if stopped is not None:
        reason = one_line(f"{stopped.reason}; the {direct} member(s) before it were read" if direct
                          else stopped.reason)
        if own.status is TextStatus.CONTAINER:
            return dataclasses.replace(own, status=_status(stopped.status), reason=reason, meta=meta,
                                       members=tuple(members))
        meta["container"] = reason
        if own.status is TextStatus.OK:  # a mail whose body was read but not all its attachments: said, in its status
            return dataclasses.replace(own, status=TextStatus.PARTIAL, reason=f"attachments not all read: {reason}",
                                       meta=meta, members=tuple(members))
    elif own.status is TextStatus.CONTAINER:
        own = dataclasses.replace(own, reason=f"{direct} member{'s' if direct != 1 else ''} "
                                              f"({record.path}{MEMBER_SEPARATOR}…)")
    return dataclasses.replace(own, meta=meta, members=tuple(members))


def _member(container: FileRecord, name: str, member: "Member", opener: Opener, budget: Budget,
            depth: int) -> list[tuple[FileRecord, Extracted]]:
    """One member's record and text, then its own members when it is a container too."""
    path = f"{container.path}{MEMBER_SEPARATOR}{name}"
    mtime = member.mtime_ns or container.mtime_ns
    if member.data is None:
        record = FileRecord(path=path, size=0, mtime_ns=mtime, sha256="", mime="")
        status = _status(member.status)
        return [(record, Extracted(text="", extractor="", status=status, reason=one_line(member.reason)
                                   or status.value))]
    data = member.data
    record = FileRecord(path=path, size=len(data), mtime_ns=mtime, sha256=hashlib.sha256(data).hexdigest(),
                        mime=opener.detect(data))
    unpacker = opener.unpacker_for(record.mime)
    if unpacker is None:
        own = opener.extract(data, record.mime)
        return [(record, decrypted(own) if member.decrypted else own)]
    if depth + 1 >= opener.limits.max_container_depth:
        why = f"a container nested deeper than {opener.limits.max_container_depth} levels: not opened"
        return [(record, Extracted(text="", extractor=unpacker.name, status=TextStatus.TOO_LARGE, reason=why))]
    opened = open_container(record, data, unpacker, opener, budget, depth + 1)
    own = dataclasses.replace(opened, members=())
    return [(record, decrypted(own) if member.decrypted else own), *opened.members]


def _status(value: str) -> TextStatus:
    try:
        return TextStatus(value)
    except ValueError:
        return TextStatus.ERROR


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name (2)`, `name (3)`... when a container holds two members of one name."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name} ({n})"
    taken.add(candidate)
    return candidate


def moved(path: str, old_prefix: str, new_prefix: str) -> str:
    """A member path of a container at `old_prefix`, for the same container at `new_prefix`."""
    return new_prefix + path[len(old_prefix):] if path.startswith(old_prefix) else path
