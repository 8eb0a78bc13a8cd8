"""RAR 4 archives of stored members, written here (no RAR writer is free software): the layout of RARLAB's
technical note for RAR 4.x, enough for any reader. A block is its header CRC (the low 16 bits of the CRC-32 of
the rest of the header), type, flags and size; a file block's data follows it."""

from __future__ import annotations

import struct
import zlib

_UNIX = 3  # host OS: attributes are a POSIX mode
_STORED = 0x30
_VERSION_20 = 20
_LONG_BLOCK, _ENCRYPTED, _END_MARK = 0x8000, 0x04, 0x4000


def _block(kind: int, flags: int, body: bytes) -> bytes:
    rest = struct.pack("<BHH", kind, flags, 7 + len(body)) + body
    return struct.pack("<H", zlib.crc32(rest) & 0xFFFF) + rest


def make_rar(files: dict[str, bytes], encrypted: frozenset[str] = frozenset(), mtime_dos: int = 0x5A210000) -> bytes:
    """A RAR 4 archive holding `files` (name -> bytes) stored, those named in `encrypted` flagged as encrypted
    (their bytes are left as given: a reader must refuse them by the flag)."""
    out = bytearray(b"Rar!\x1a\x07\x00")  # the marker block
    out += _block(0x73, 0, bytes(6))  # the archive header
    for name, data in files.items():
        raw = name.encode()
        flags = _LONG_BLOCK | (_ENCRYPTED if name in encrypted else 0)
        body = struct.pack("<IIBIIBBHI", len(data), len(data), _UNIX, zlib.crc32(data), mtime_dos, _VERSION_20,
                           _STORED, len(raw), 0o100644) + raw
        out += _block(0x74, flags, body) + data
    out += _block(0x7B, _END_MARK, b"")  # the end of the archive
    return bytes(out)
