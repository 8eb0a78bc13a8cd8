"""Raw SQL on an index file, for tests that inspect or tamper with rows the store's API does not expose.

The store owns its SQL (`Index` has no public connection); a test opens its own, in autocommit mode, so
what it reads is what the store committed and what it writes is committed at once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def raw(index_or_path: Any) -> sqlite3.Connection:
    """A fresh autocommit connection to the index file (an `Index` or a path)."""
    path = Path(getattr(index_or_path, "path", index_or_path))
    return sqlite3.connect(path, isolation_level=None, timeout=30)
