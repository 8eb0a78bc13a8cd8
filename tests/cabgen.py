"""Microsoft Cabinet files of stored (uncompressed) members, as [MS-CAB] lays them out: a header, one folder,
a record a file, then the folder's data in blocks of at most 32 KiB, each with a zero checksum ("not
computed", which the format allows). No free Cabinet writer is at hand; libarchive reads what this writes."""

from __future__ import annotations

import struct

_BLOCK = 32768
_HEADER, _FOLDER, _FILE_FIXED, _DATA_HEADER = 36, 8, 16, 8


def make_cab(files: dict[str, bytes]) -> bytes:
    stream = b"".join(files.values())
    blocks = [stream[at:at + _BLOCK] for at in range(0, len(stream), _BLOCK)] or [b""]
    records = bytearray()
    offset = 0
    for name, data in files.items():
        # size, offset in the folder's stream, folder 0, a date (2024-01-01) and time (10:00), attribute: archive
        records += struct.pack("<IIHHHH", len(data), offset, 0, (44 << 9) | (1 << 5) | 1, 10 << 11, 0x20)
        records += name.encode("ascii") + b"\0"
        offset += len(data)
    first_file = _HEADER + _FOLDER
    first_data = first_file + len(records)
    data = b"".join(struct.pack("<IHH", 0, len(block), len(block)) + block for block in blocks)
    total = first_data + len(data)
    header = struct.pack("<4sIIIIIBBHHHHH", b"MSCF", 0, total, 0, first_file, 0, 3, 1, 1, len(files), 0, 0x1234, 0)
    folder = struct.pack("<IHH", first_data, len(blocks), 0)  # no compression
    return header + folder + bytes(records) + data
