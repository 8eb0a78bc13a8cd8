"""Reading evidence files once, read-only, without touching their access time."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

from scanner.core.errors import InputError

_CHUNK = 1024 * 1024
_NOATIME = getattr(os, "O_NOATIME", 0)


class UnreadableError(InputError):
    """The file cannot be opened or read; `why` is the short reason, without the path."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Evidence:
    """What one read of a file gave: its bytes (None if over the cap) and identity.

    `head` is the first chunk read (for MIME sniffing when `data` is None);
    `size` counts the bytes hashed.

    `changed` is True when size or mtime moved while we read it, so the hash
    may not match what is on disk now.
    """

    data: bytes | None
    head: bytes
    sha256: str
    size: int
    mtime_ns: int
    changed: bool


def open_readonly(path: str | os.PathLike[str]) -> int:
    """An O_RDONLY descriptor; O_NOATIME when the kernel lets us (owner or CAP_FOWNER)."""
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if _NOATIME:
        try:
            return os.open(path, flags | _NOATIME)
        except PermissionError:
            pass  # EPERM: not our file; fall back to a plain read-only open
    return os.open(path, flags)


def read_evidence(path: str | os.PathLike[str], max_bytes: int) -> Evidence:
    """Hash the whole file in one pass, keeping its bytes only if within `max_bytes`.

    Raises:
        UnreadableError: the file cannot be opened or read, or is not a regular file.
    """
    try:
        fd = open_readonly(path)
    except OSError as exc:
        why = str(exc.strerror or exc)
        raise UnreadableError(f"cannot open {os.fsdecode(path)!r}: {why}", why) from exc
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise UnreadableError(f"{os.fsdecode(path)!r} is not a regular file", "not a regular file")
        digest = hashlib.sha256()
        keep = before.st_size <= max_bytes
        parts: list[bytes] = []
        head = b""
        kept = total = 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            if not head:
                head = chunk
            total += len(chunk)
            if keep:
                kept += len(chunk)
                if kept > max_bytes:  # grew while reading
                    keep, parts = False, []
                else:
                    parts.append(chunk)
        after = os.fstat(fd)
    except OSError as exc:
        why = str(exc.strerror or exc)
        raise UnreadableError(f"cannot read {os.fsdecode(path)!r}: {why}", why) from exc
    finally:
        os.close(fd)
    changed = (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns)
    return Evidence(
        data=b"".join(parts) if keep else None,
        head=head,
        sha256=digest.hexdigest(),
        size=total,
        mtime_ns=after.st_mtime_ns,
        changed=changed,
    )
