"""Archives libarchive reads, the C library bsdtar is built on (libarchive-c's binding; the system's
libarchive13): RAR 4 and 5, ISO 9660 disc images (with their Joliet and Rock Ridge names), Microsoft
Cabinet files, cpio archives (RPM payloads, initramfs), Unix `ar` archives (Debian packages, whose members
are TAR archives of their own). Before, each was `unsupported`: every document inside was read nowhere.

The format is chosen by the bytes' signature and named to libarchive, never left to its detection (a damaged
RAR holding a ZIP member was read as that ZIP). Members are read one at a time, their blocks charged to the
shared `Budget` as they inflate (bombs stop there). libarchive cannot decrypt RAR: an encrypted member is named
`encrypted` (passwords given are not tried on it, and it says so). Links and devices are named `skipped`.
Without libarchive on the machine, such an archive is `unsupported` and says what is missing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
from collections.abc import Iterator
from typing import Any, BinaryIO

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl

RAR_MIMES = ("application/x-rar", "application/vnd.rar", "application/x-rar-compressed")
ISO_MIMES = ("application/x-iso9660-image", "application/x-cd-image")
CAB_MIMES = ("application/vnd.ms-cab-compressed",)
CPIO_MIMES = ("application/x-cpio",)
AR_MIMES = ("application/x-archive", "application/vnd.debian.binary-package")
MISSING = "install the system's libarchive: Debian libarchive13 (libarchive13t64 since trixie)"

# each format by its signature: (offset, bytes, libarchive's format name, what the archive is called)
_SIGNATURES = (
    (0, b"Rar!\x1a\x07\x01\x00", "rar5", "RAR archive"),
    (0, b"Rar!\x1a\x07\x00", "rar", "RAR archive"),
    (0, b"MSCF\0\0\0\0", "cab", "Cabinet file"),
    (0, b"!<arch>\n", "ar", "ar archive"),
    (0, b"070701", "cpio", "cpio archive"), (0, b"070702", "cpio", "cpio archive"),
    (0, b"070707", "cpio", "cpio archive"), (0, b"\xc7\x71", "cpio", "cpio archive"),
    (0, b"\x71\xc7", "cpio", "cpio archive"),
    *((offset, b"CD001", "iso9660", "ISO 9660 image") for offset in (0x8001, 0x8801, 0x9001)),
    # read here only over max_bytes (`archives.unpack_7z_file`): py7zr reads the others, passwords included
    (0, b"7z\xbc\xaf\x27\x1c", "7zip", "7z archive"),
)


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


def _format(data: bytes) -> tuple[str, str] | None:
    """(libarchive's format name, what the archive is called) by the bytes' signature."""
    return next(((form, what) for offset, signature, form, what in _SIGNATURES
                 if data[offset:offset + len(signature)] == signature), None)


def unpack_libarchive(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    libarchive, form, called = _reader_for(data, mime)
    with _damage_said(libarchive, called):
        with libarchive.memory_reader(data, format_name=form, filter_name="none") as archive:
            yield from _members(libarchive, archive, called, budget)


def unpack_libarchive_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """An archive over the size held in memory (a DVD's disc image), read from disk by libarchive a block at a
    time; a member itself over that size is named `too_large`, not read."""
    libarchive, form, called = _reader_for(stream.read(_HEAD), mime)
    stream.seek(0)
    with _damage_said(libarchive, called):
        with libarchive.fd_reader(stream.fileno(), format_name=form, filter_name="none",
                                  block_size=1024 * 1024) as archive:
            yield from _members(libarchive, archive, called, budget, budget.limits.max_bytes)


_HEAD = max(offset + len(signature) for offset, signature, _, _ in _SIGNATURES)  # what the signatures need


def _reader_for(head: bytes, mime: str) -> tuple[Any, str, str]:
    """libarchive, the archive's format by its signature and what it is called; or why it cannot be read."""
    found = _format(head)
    called = found[1] if found is not None else ("RAR archive" if mime in RAR_MIMES else "archive")
    libarchive = libarchive_module()
    if libarchive is None:
        raise ExtractionError(f"{called}: libarchive is not installed ({MISSING})", status="unsupported")
    if found is None:
        raise ExtractionError(f"not a {called}: its signature is missing", status="corrupt")
    return libarchive, found[0], called


@contextlib.contextmanager
def _damage_said(libarchive: Any, called: str) -> Iterator[None]:
    """libarchive's error on a damaged archive as the container's `corrupt` reason."""
    try:
        yield
    except libarchive.ArchiveError as exc:
        raise ExtractionError(f"{called} damaged: {getattr(exc, 'msg', exc)}", status="corrupt") from exc


def _members(libarchive: Any, archive: Any, called: str, budget: Any, largest: int | None = None) -> Iterator[Member]:
    """Each member of an opened archive, read through `budget` (one over `largest` bytes named `too_large`)."""
    is_encrypted = libarchive.ffi.libarchive.archive_entry_is_data_encrypted
    for entry in archive:
        name = entry.pathname or ""
        if entry.isdir:
            continue
        mtime = int(entry.mtime or 0) * 1_000_000_000
        if not entry.isfile:
            yield Member(name, None, "skipped", f"not a regular file: {entry.linkpath or 'a link or device'}", mtime)
            continue
        if is_encrypted(entry._entry_p):  # the binding has no accessor for it
            kind = called.split()[0]  # "RAR"
            unable = "of an archive over max_bytes" if kind == "7z" else "(libarchive cannot decrypt them)"
            why = f"passwords are not tried on {kind} members {unable}" if budget.limits.passwords \
                else "a password is needed"
            yield Member(name, None, "encrypted", f"encrypted {kind} member: {why}", mtime)
            continue
        if largest is not None and (entry.size or 0) > largest:
            yield Member(name, None, "too_large", f"{entry.size} bytes > max_bytes {largest}", mtime)
            continue
        yield Member(name, budget.read_chunks(entry.get_blocks(), f"member {name!r}"), mtime_ns=mtime)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="libarchive", mimes=(*RAR_MIMES, *ISO_MIMES, *CAB_MIMES, *CPIO_MIMES, *AR_MIMES),
                     priority=50, unpack=unpack_libarchive, unpack_file=unpack_libarchive_file)]
