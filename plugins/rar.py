"""RAR archives (RAR 4 and RAR 5) through libarchive, the C library bsdtar is built on (libarchive-c's binding;
the system's libarchive13). Before, a RAR was `unsupported`: every document inside it was read nowhere.

Members are read one at a time, their blocks charged to the shared `Budget` as they inflate (bombs stop
there). libarchive cannot decrypt RAR: an encrypted member is named `encrypted` (passwords given are not
tried on it, and it says so). Links and devices are named `skipped`. Without libarchive on the machine, a RAR
is `unsupported` and says what is missing.
"""

from __future__ import annotations

import ctypes
import functools
import logging
from collections.abc import Iterator
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl

RAR_MIMES = ("application/x-rar", "application/vnd.rar", "application/x-rar-compressed")
MISSING = "install the system's libarchive: Debian libarchive13 (libarchive13t64 since trixie)"


# the RAR formats by their signatures: libarchive is told which one, never left to detect a format (a damaged
# RAR holding a ZIP member was read as that ZIP)
_FORMATS = ((b"Rar!\x1a\x07\x01\x00", "rar5"), (b"Rar!\x1a\x07\x00", "rar"))


@functools.cache
def libarchive_module() -> Any:
    """libarchive-c, or None when it or the system's libarchive cannot be loaded (`scanner info` says so).
    Its warnings (a damaged archive's, each said in the member's reason) are not printed on stderr."""
    try:
        import libarchive
        import libarchive.ffi
    except (ImportError, OSError, AttributeError):
        return None
    encrypted = libarchive.ffi.libarchive.archive_entry_is_data_encrypted
    encrypted.argtypes, encrypted.restype = [ctypes.c_void_p], ctypes.c_int
    logging.getLogger("libarchive").propagate = False
    return libarchive


def unpack_rar(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    libarchive = libarchive_module()
    if libarchive is None:
        raise ExtractionError(f"RAR archive: libarchive is not installed ({MISSING})", status="unsupported")
    is_encrypted = libarchive.ffi.libarchive.archive_entry_is_data_encrypted
    form = next((name for signature, name in _FORMATS if data.startswith(signature)), None)
    if form is None:
        raise ExtractionError("not a RAR archive: its signature is missing", status="corrupt")
    try:
        with libarchive.memory_reader(data, format_name=form, filter_name="none") as archive:
            for entry in archive:
                name = entry.pathname or ""
                if entry.isdir:
                    continue
                mtime = int(entry.mtime or 0) * 1_000_000_000
                if not entry.isfile:
                    yield Member(name, None, "skipped", f"not a regular file: {entry.linkpath or 'a link or device'}",
                                 mtime)
                    continue
                if is_encrypted(entry._entry_p):  # the binding has no accessor for it
                    why = ("passwords are not tried on RAR members (libarchive cannot decrypt them)"
                           if budget.limits.passwords else "a password is needed")
                    yield Member(name, None, "encrypted", f"encrypted RAR member: {why}", mtime)
                    continue
                content = bytearray()
                for block in entry.get_blocks():
                    budget.take(len(block), f"member {name!r}")
                    content += block
                yield Member(name, bytes(content), mtime_ns=mtime)
    except libarchive.ArchiveError as exc:
        raise ExtractionError(f"RAR archive damaged: {getattr(exc, 'msg', exc)}",
                              status="corrupt") from exc


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="rar", mimes=RAR_MIMES, priority=50, unpack=unpack_rar)]
