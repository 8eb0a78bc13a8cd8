"""The compiled loops of the aligner and of the search by meaning (`loops.c`), or None where the package was
built without a C compiler: their callers then run their own Python forms, which give the same results."""

from __future__ import annotations

try:
    from scanner.engine import loops as compiled
except ImportError:  # pragma: no cover - the build made it here
    compiled = None  # type: ignore[assignment]

__all__ = ["compiled"]
