"""Opening a compound file (OLE2: Outlook items, Office 97-2003 documents), shared by the plugins that read one."""

from __future__ import annotations

import io
from typing import Any

from scanner.core.errors import ExtractionError


def open_compound_file(data: bytes, what: str) -> Any:
    """An olefile reader over `data` (the caller closes it); a file olefile cannot open is `corrupt`,
    "unreadable <what>: <why>"."""
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except (OSError, ValueError, IndexError) as exc:
        raise ExtractionError(f"unreadable {what}: {exc}", status="corrupt") from exc
    # the mini FAT is read, when a small stream is first opened, for as many sectors as the header declares,
    # along a chain that may loop: a 3.7 KB item declaring 1.85e9 of them took 23 s and all the memory given
    mini_fat = ole.num_mini_fat_sectors * ole.sector_size
    if mini_fat > len(data) or ole.root.size > len(data):
        ole.close()
        raise ExtractionError(f"unreadable {what}: its header declares a mini stream table of {mini_fat} bytes "
                              f"and a mini stream of {ole.root.size}, more than the file's {len(data)}",
                              status="corrupt")
    return ole


def read_stream(ole: Any, path: str | list[str], file_size: int, what: str) -> bytes:
    """A stream's bytes; one that declares more bytes than the whole file holds is `corrupt`: olefile follows
    a stream's sector chain for every sector its size claims (a 4 KB file whose stream claimed 1.7 GB took
    15 s, and as much memory as it claimed)."""
    size = ole.get_size(path)
    if size > file_size:
        name = path if isinstance(path, str) else "/".join(path)
        raise ExtractionError(f"{what}: stream {name!r} declares {size} bytes, more than the file's {file_size}",
                              status="corrupt")
    return bytes(ole.openstream(path).read())
