"""A minimal writer of OLE2 Compound File Binary files ([MS-CFB]), for building test fixtures.

Word 97 `.doc`, Outlook `.msg` and the other OLE2 formats are storages and
streams inside one of these files. No library on this machine writes them
(olefile only reads), so the tests build real ones here and hand them to the
real readers (antiword, olefile, libmagic).

`write_compound_file(streams)` takes `{"Storage/Sub/Stream": bytes}` and returns
the bytes of a version 3 file: 512-byte sectors, one FAT (with DIFAT sectors
when it needs more than 109 FAT sectors), a mini stream of 64-byte sectors
for streams under 4096 bytes (as every reader expects), and a directory whose
red-black trees are balanced binary search trees with every node black (the
specification allows that). Storages named in a path are created as needed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

__all__ = ["write_compound_file"]

SECTOR = 512
MINI_SECTOR = 64
MINI_STREAM_CUTOFF = 4096
_FAT_PER_SECTOR = SECTOR // 4
_DIFAT_IN_HEADER = 109
_DIFAT_PER_SECTOR = _FAT_PER_SECTOR - 1  # the last entry chains to the next DIFAT sector
_DIRS_PER_SECTOR = SECTOR // 128
_FREE, _END_OF_CHAIN, _FAT_SECTOR, _DIFAT_SECTOR = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFC
_NO_STREAM = 0xFFFFFFFF
_STORAGE, _STREAM, _ROOT = 1, 2, 5
_BLACK = 1
_FORBIDDEN_IN_NAMES = set("/\\:!")


@dataclass
class _Entry:
    name: str
    kind: int
    data: bytes = b""
    children: list[int] = field(default_factory=list)
    left: int = _NO_STREAM
    right: int = _NO_STREAM
    child: int = _NO_STREAM
    start: int = _END_OF_CHAIN
    size: int = 0


def _sort_key(name: str) -> tuple[int, str]:
    """[MS-CFB] 2.6.4: shorter names first, then by upper-case code points."""
    return len(name.encode("utf-16-le")), name.upper()


def _entries(streams: dict[str, bytes]) -> list[_Entry]:
    """The root entry, then one entry per storage and stream, children listed on their parent."""
    entries = [_Entry("Root Entry", _ROOT)]
    storages: dict[tuple[str, ...], int] = {(): 0}

    def add(parent: tuple[str, ...], entry: _Entry, path: str) -> int:
        siblings = entries[storages[parent]].children
        if any(entries[i].name.upper() == entry.name.upper() for i in siblings):
            raise ValueError(f"duplicate compound file entry {path!r}")
        siblings.append(len(entries))
        entries.append(entry)
        return len(entries) - 1

    for path, data in streams.items():
        parts = tuple(path.split("/"))
        for part in parts:
            if not part or len(part) > 31 or _FORBIDDEN_IN_NAMES & set(part):
                raise ValueError(f"invalid compound file name {part!r} in {path!r}")
        for depth in range(1, len(parts)):
            if parts[:depth] not in storages:
                storages[parts[:depth]] = add(parts[: depth - 1], _Entry(parts[depth - 1], _STORAGE), path)
        add(parts[:-1], _Entry(parts[-1], _STREAM, data=bytes(data), size=len(data)), path)
    return entries


def _link_trees(entries: list[_Entry]) -> None:
    """Each storage's children as a balanced search tree: the median is the subtree's root."""
    for parent in entries:
        ordered = sorted(parent.children, key=lambda i: _sort_key(entries[i].name))
        if not ordered:
            continue
        pending: list[tuple[int, int, _Entry, str]] = [(0, len(ordered), parent, "child")]
        while pending:
            low, high, owner, slot = pending.pop()
            if low >= high:
                continue
            middle = (low + high) // 2
            setattr(owner, slot, ordered[middle])
            node = entries[ordered[middle]]
            pending.append((low, middle, node, "left"))
            pending.append((middle + 1, high, node, "right"))


def _chain(fat: list[int], first: int, count: int) -> None:
    """Sectors first..first+count-1 linked in order, the last ending the chain."""
    for sector in range(first, first + count):
        fat[sector] = sector + 1 if sector < first + count - 1 else _END_OF_CHAIN


def _sectors(size: int, unit: int) -> int:
    return -(-size // unit)


def _directory_entry(entry: _Entry) -> bytes:
    name = entry.name.encode("utf-16-le") + b"\x00\x00"
    return struct.pack(
        "<64sHBBIII16sIQQIQ",
        name, len(name), entry.kind, _BLACK, entry.left, entry.right, entry.child,
        b"\x00" * 16, 0, 0, 0, entry.start, entry.size,
    )


# a free directory slot: no name, no siblings or child (0xFFFFFFFF, not 0, which is the root)
_UNUSED_ENTRY = struct.pack(
    "<64sHBBIII16sIQQIQ", b"", 0, 0, 0, _NO_STREAM, _NO_STREAM, _NO_STREAM, b"\x00" * 16, 0, 0, 0, 0, 0
)


def write_compound_file(streams: dict[str, bytes]) -> bytes:
    """The bytes of a compound file holding `streams`.

    Args:
        streams: stream path -> content. A path is names joined by "/" ("WordDocument",
            "__attach_version1.0_#00000000/__substg1.0_37010102"); the storages on the way are
            created. Names are at most 31 characters, without "/", "\\", ":" or "!", and unique
            (case-insensitively) within their storage. Insertion order does not matter.

    Raises:
        ValueError: an invalid or duplicate name.
    """
    entries = _entries(streams)
    _link_trees(entries)
    small = [e for e in entries if e.kind == _STREAM and 0 < e.size < MINI_STREAM_CUTOFF]
    large = [e for e in entries if e.kind == _STREAM and e.size >= MINI_STREAM_CUTOFF]

    mini_stream = bytearray()
    mini_fat: list[int] = []
    for entry in small:
        entry.start = len(mini_fat)
        count = _sectors(entry.size, MINI_SECTOR)
        mini_fat.extend([_FREE] * count)
        _chain(mini_fat, entry.start, count)
        mini_stream += entry.data.ljust(count * MINI_SECTOR, b"\x00")

    directory_sectors = _sectors(len(entries), _DIRS_PER_SECTOR)
    mini_fat_sectors = _sectors(len(mini_fat) * 4, SECTOR)
    mini_stream_sectors = _sectors(len(mini_stream), SECTOR)
    data_sectors = directory_sectors + mini_fat_sectors + mini_stream_sectors
    data_sectors += sum(_sectors(e.size, SECTOR) for e in large)
    fat_sectors = difat_sectors = 0
    while True:  # the FAT covers itself and the DIFAT too: grow both until they fit
        difat_sectors = _sectors(max(fat_sectors - _DIFAT_IN_HEADER, 0), _DIFAT_PER_SECTOR)
        needed = _sectors(data_sectors + fat_sectors + difat_sectors, _FAT_PER_SECTOR)
        if needed <= fat_sectors:
            break
        fat_sectors = needed
    total = data_sectors + fat_sectors + difat_sectors
    fat = [_FREE] * (fat_sectors * _FAT_PER_SECTOR)

    body = bytearray()
    directory_start = 0
    _chain(fat, directory_start, directory_sectors)
    next_sector = directory_sectors
    mini_fat_start = next_sector if mini_fat else _END_OF_CHAIN
    _chain(fat, next_sector, mini_fat_sectors)
    next_sector += mini_fat_sectors
    entries[0].start = next_sector if mini_stream else _END_OF_CHAIN
    entries[0].size = len(mini_stream)
    _chain(fat, next_sector, mini_stream_sectors)
    next_sector += mini_stream_sectors
    for entry in large:
        entry.start = next_sector
        count = _sectors(entry.size, SECTOR)
        _chain(fat, next_sector, count)
        next_sector += count
    fat_start = next_sector
    for sector in range(fat_start, fat_start + fat_sectors):
        fat[sector] = _FAT_SECTOR
    difat_start = fat_start + fat_sectors
    for sector in range(difat_start, difat_start + difat_sectors):
        fat[sector] = _DIFAT_SECTOR
    assert difat_start + difat_sectors == total

    body += b"".join(_directory_entry(e) for e in entries)
    body += _UNUSED_ENTRY * (directory_sectors * _DIRS_PER_SECTOR - len(entries))
    mini_fat_bytes = struct.pack(f"<{len(mini_fat)}I", *mini_fat)
    body += mini_fat_bytes.ljust(mini_fat_sectors * SECTOR, b"\xff")
    body += bytes(mini_stream).ljust(mini_stream_sectors * SECTOR, b"\x00")
    for entry in large:
        body += entry.data.ljust(_sectors(entry.size, SECTOR) * SECTOR, b"\x00")
    body += struct.pack(f"<{len(fat)}I", *fat)

    fat_locations = list(range(fat_start, fat_start + fat_sectors))
    header_difat = fat_locations[:_DIFAT_IN_HEADER]
    rest = fat_locations[_DIFAT_IN_HEADER:]
    for index in range(difat_sectors):
        chunk = rest[index * _DIFAT_PER_SECTOR:(index + 1) * _DIFAT_PER_SECTOR]
        following = difat_start + index + 1 if index < difat_sectors - 1 else _END_OF_CHAIN
        chunk += [_FREE] * (_DIFAT_PER_SECTOR - len(chunk))
        body += struct.pack(f"<{_FAT_PER_SECTOR}I", *chunk, following)

    header = struct.pack(
        "<8s16sHHHHH6sIIIIIIIII",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\x00" * 16,
        0x003E, 0x0003, 0xFFFE, 9, 6, b"\x00" * 6,
        0,  # directory sectors: always 0 in version 3
        fat_sectors, directory_start, 0, MINI_STREAM_CUTOFF,
        mini_fat_start, mini_fat_sectors,
        difat_start if difat_sectors else _END_OF_CHAIN, difat_sectors,
    )
    header += struct.pack(f"<{_DIFAT_IN_HEADER}I", *header_difat, *[_FREE] * (_DIFAT_IN_HEADER - len(header_difat)))
    assert len(header) == SECTOR and len(body) == total * SECTOR
    return header + bytes(body)
