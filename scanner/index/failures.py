"""What ran out when the machine, not the input, stops a command (issue 22).

One phrase for the user and what a rerun needs, read from an OSError's errno, a MemoryError or SQLite's
result code. SQLite keeps the errno to itself: a full disk is SQLITE_FULL, but a file-size limit (EFBIG)
comes back as a bare "disk I/O error" and too many open files as "unable to open database file", so those
two are told apart by the process's own limits.
"""

from __future__ import annotations

import errno
import os
import resource
import sqlite3
from dataclasses import dataclass

from scanner.core.errors import ResourceError


@dataclass(frozen=True)
class Shortage:
    """What ran out, and how a rerun succeeds (`remedy` completes "rerun ...")."""

    what: str
    remedy: str


DISK_FULL = Shortage("disk full", "with space")
OUT_OF_MEMORY = Shortage("out of memory", "with more memory")

_BY_ERRNO = {
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: Shortage("disk quota exceeded", "with space"),
    errno.EROFS: Shortage("read-only file system", "on writable storage"),
    errno.EACCES: Shortage("permission denied", "with write access"),
    errno.EPERM: Shortage("operation not permitted", "with write access"),
    errno.ENFILE: Shortage("too many open files in the system", "when fewer files are open"),
    errno.ENOMEM: OUT_OF_MEMORY,
}


def _open_files() -> Shortage:
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return Shortage(f"too many open files (limit {limit})", "with a higher `ulimit -n`")


def _file_size_limit() -> Shortage | None:
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    return Shortage(f"file size limit reached ({limit:,} bytes)", "with a higher `ulimit -f`")


def spare_descriptors(fallback: int = 1024) -> int:
    """How many more files this process may open now (`fallback` when /proc cannot tell)."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    try:
        open_now = len(os.listdir("/proc/self/fd"))
    except OSError:
        return fallback
    return max(0, (limit if limit != resource.RLIM_INFINITY else open_now + fallback) - open_now)


def shortage_of(error: BaseException) -> Shortage | None:
    """What ran out when `error` says the machine stopped the work; None for anything else (a bug, bad input)."""
    if isinstance(error, ResourceError):
        return None  # already said, with its context
    if isinstance(error, MemoryError):
        return OUT_OF_MEMORY
    if isinstance(error, OSError):
        if error.errno == errno.EMFILE:
            return _open_files()
        if error.errno == errno.EFBIG:
            return _file_size_limit() or Shortage("file too large for its file system", "with space")
        return _BY_ERRNO.get(error.errno or 0)
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        if code == sqlite3.SQLITE_FULL:
            return DISK_FULL
        if code == sqlite3.SQLITE_NOMEM:
            return OUT_OF_MEMORY
        if code == sqlite3.SQLITE_READONLY:
            return Shortage("the index became read-only (moved, deleted or remounted)", "on writable storage")
        if code == sqlite3.SQLITE_IOERR:
            return _file_size_limit() or Shortage("disk I/O error (the disk may be failing or gone)",
                                                  "once the disk works")
        if code == sqlite3.SQLITE_CANTOPEN and spare_descriptors() <= 2:  # SQLite met EMFILE
            return _open_files()
    return None


def resource_error(error: BaseException, context: str = "") -> ResourceError | None:
    """`error` as one line, "what ran out: context; rerun remedy", when it is a shortage (None otherwise)."""
    shortage = shortage_of(error)
    if shortage is None:
        return None
    where = f": {context}" if context else ""
    return ResourceError(f"{shortage.what}{where}; rerun {shortage.remedy}")
