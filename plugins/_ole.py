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
        return olefile.OleFileIO(io.BytesIO(data))
    except (OSError, ValueError, IndexError) as exc:
        raise ExtractionError(f"unreadable {what}: {exc}", status="corrupt") from exc
