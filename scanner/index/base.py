"""The index's base texts (migration 16): text every document may hold by design, which no finding counts
(`engine/base.py`). Kept in the index, so that every later scan, `check`, `watch`, report and the TUI leave
the same text out; the findings and passages stored name them (`digest`), so adding or removing one makes
the next scan find them again."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from scanner.core.config import Params
from scanner.core.errors import UsageError
from scanner.engine.base import Base


@dataclass(frozen=True)
class BaseText:
    """One base text as the index lists it: its name (the file it was read from), content and size."""

    label: str
    sha256: str
    words: int
    added: float

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "sha256": self.sha256, "words": self.words}


class BaseTable:
    """The base texts of one open index (`Index.base`)."""

    def __init__(self, conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]],
                 compress: Callable[[str], bytes], decompress: Callable[[bytes], str],
                 changed: Callable[[], None]) -> None:
        """`changed`: called inside the transaction that adds or removes a base text (the stored passages,
        found without the old base, go with it)."""
        self._conn = conn
        self._transaction = transaction
        self._compress, self._decompress = compress, decompress
        self._changed = changed
        self._prepared: tuple[str | None, bytes, Base] | None = None  # (digest, params key, what they give)

    def _exists(self) -> bool:
        """An index a reader opens unmigrated (schema before 16) has no base texts."""
        return self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'base_texts'").fetchone() is not None

    def listed(self) -> list[BaseText]:
        if not self._exists():
            return []
        return [BaseText(*row) for row in self._conn.execute(
            "SELECT label, sha256, words, added FROM base_texts ORDER BY label, sha256")]

    def digest(self) -> str | None:
        """What the stored findings and passages were found without (None: no base text)."""
        shas = sorted(base.sha256 for base in self.listed())
        return hashlib.sha256("\n".join(shas).encode("ascii")).hexdigest() if shas else None

    def add(self, label: str, text: str) -> tuple[BaseText, bool]:
        """Keep `text` as a base text named `label`; (its row, whether it was new). The same text again keeps
        its first name."""
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        known = {base.sha256: base for base in self.listed()}
        if sha in known:
            return known[sha], False
        row = BaseText(label, sha, len(text.split()), time.time())
        with self._transaction():
            self._conn.execute("INSERT INTO base_texts (sha256, label, words, added, text) VALUES (?, ?, ?, ?, ?)",
                               (row.sha256, row.label, row.words, row.added, self._compress(text)))
            self._changed()
        return row, True

    def remove(self, name: str) -> list[BaseText]:
        """Remove the base texts named `name` (a label, a SHA-256 or a prefix of one of at least 8 digits, or
        "all"); those removed. A name that matches none is an error, so a typo removes nothing silently."""
        listed = self.listed()
        chosen = [base for base in listed if name == "all" or base.label == name
                  or (len(name) >= 8 and base.sha256.startswith(name.lower()))]
        if not chosen:
            raise UsageError(f"no base text named {name!r} in this index "
                                  f"({len(listed)} base text(s); `scanner base --index ...` lists them)")
        with self._transaction():
            self._conn.executemany("DELETE FROM base_texts WHERE sha256 = ?", [(base.sha256,) for base in chosen])
            self._changed()
        return chosen

    def texts(self) -> list[str]:
        if not self._exists():
            return []
        return [self._decompress(blob) for (blob,) in self._conn.execute(
            "SELECT text FROM base_texts ORDER BY sha256")]

    def prepared(self, params: Params) -> Base:
        """The base texts' shingles under `params` and their sentences (`engine.base.Base`): made once an open
        index, again when the base texts change."""
        digest, key = self.digest(), params.sketch_key()
        if self._prepared is None or self._prepared[:2] != (digest, key):
            self._prepared = (digest, key, Base.of(self.texts() if digest is not None else [], params))
        return self._prepared[2]

    def fingerprints(self, params: Params) -> np.ndarray:
        """Every shingle of the base texts under `params`, sorted uint64 (`engine.base.base_fingerprints`)."""
        return self.prepared(params).fingerprints

    def as_postings(self, params: Params) -> np.ndarray:
        """`fingerprints` as the postings hold them: int64, sorted as such (what `index.pairs` compares)."""
        return np.sort(self.fingerprints(params).view(np.int64))
