"""Stored passage pairs: the passages every two documents share, aligned once after a scan (issue 20).

Two tables (migration 6). `passage_pairs` holds one row per pair of documents
(a < b) that share at least one passage, with the passages as one versioned
blob; `passage_aligned` lists the documents whose pairs with every document
indexed at the time were aligned, so a rescan aligns only the pairs of new or
changed documents. What the passages were aligned with (the alignment's
version, the shingle parameters and the minimum passage length) is the
`passages_key` in `meta`: a different key wipes both tables, and the next scan
aligns everything again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from scanner.core.errors import IndexStoreError

PASSAGE_BLOB_FORMAT = 2  # little-endian int64 rows of _COLUMNS[format], after one int64 holding the format
# a_start, a_end, b_start, b_end (characters), a_first, a_stop, b_first, b_stop (tokens), kind, then (format 2)
# the similarity of a semantic passage in thousandths (-1: none)
_COLUMNS = {1: 9, 2: 10}
KINDS = ("verbatim", "reworded", "semantic")


@dataclass(frozen=True)
class StoredPassage:
    """One shared passage: [start, end) characters and [first, stop) tokens in each document."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    a_first: int
    a_stop: int
    b_first: int
    b_stop: int
    kind: str  # "verbatim": exact shared runs; "reworded": sentences that say the same in other words;
    # "semantic": sentences a sentence model finds alike, with few words in common (issue 21)
    similarity: float | None = None  # of a semantic passage: its sentences' mean centred cosine

    @property
    def words(self) -> int:
        """Tokens it holds on the side that holds fewer (a summary spreads over more source)."""
        return min(self.a_stop - self.a_first, self.b_stop - self.b_first)


@dataclass(frozen=True)
class PassagePair:
    """Two documents (a < b) and the passages they share."""

    doc_a: int
    doc_b: int
    words_a: int  # tokens of A inside its passages (overlaps counted once)
    words_b: int
    passages: tuple[StoredPassage, ...]

    @property
    def shared_words(self) -> int:
        """MOSS's rank: words shared, counted on the side that holds fewer."""
        return min(self.words_a, self.words_b)


def encode_passages(passages: Sequence[StoredPassage]) -> bytes:
    rows = np.array([[p.a_start, p.a_end, p.b_start, p.b_end, p.a_first, p.a_stop, p.b_first, p.b_stop,
                      KINDS.index(p.kind), -1 if p.similarity is None else round(p.similarity * 1000)]
                     for p in passages], dtype="<i8").reshape(-1, _COLUMNS[PASSAGE_BLOB_FORMAT])
    return np.int64(PASSAGE_BLOB_FORMAT).astype("<i8").tobytes() + rows.tobytes()


def decode_passages(blob: bytes) -> tuple[StoredPassage, ...]:
    """Passages of any format this version wrote or an earlier one did."""
    values = np.frombuffer(blob, dtype="<i8")
    columns = _COLUMNS.get(int(values[0])) if values.shape[0] else None
    if columns is None or (values.shape[0] - 1) % columns:
        raise IndexStoreError(f"stored passages of an unknown format ({int(values[0]) if values.shape[0] else '-'})")
    rows = values[1:].reshape(-1, columns).tolist()
    return tuple(StoredPassage(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], KINDS[r[8]],
                               r[9] / 1000 if columns > 9 and r[9] >= 0 else None) for r in rows)


def covered_count(spans: Iterable[tuple[int, int]]) -> int:
    """Tokens inside the union of [first, stop) ranges."""
    total, reach = 0, -1
    for first, stop in sorted(spans):
        if stop > reach:
            total += stop - max(first, reach)
            reach = stop
    return total


class PassageTable:
    """The passage pairs of one open index (`Index.passages`)."""

    def __init__(self, conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]]) -> None:
        self._conn = conn
        self._transaction = transaction  # the index's: one transaction, nested ones joining it

    def key(self) -> dict[str, object] | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'passages_key'").fetchone()
        return None if row is None else json.loads(row[0])

    def use_key(self, key: dict[str, object]) -> bool:
        """Make `key` the stored one; True when it changed (every stored passage then goes)."""
        if self.key() == key:
            return False
        with self._transaction():
            self._conn.execute("DELETE FROM passage_pairs")
            self._conn.execute("DELETE FROM passage_aligned")
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('passages_key', ?)",
                               (json.dumps(key, sort_keys=True),))
        return True

    def aligned_ids(self) -> np.ndarray:
        """Sorted ids of the documents whose pairs are aligned."""
        rows = self._conn.execute("SELECT doc_id FROM passage_aligned ORDER BY doc_id").fetchall()
        return np.asarray([r[0] for r in rows], dtype=np.int64)

    def put(self, pairs: Sequence[PassagePair], aligned: Sequence[int] = ()) -> None:
        """Store pairs (replacing earlier rows of the same two documents) and mark documents aligned."""
        with self._transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO passage_pairs (doc_a, doc_b, words_a, words_b, passages) "
                "VALUES (?, ?, ?, ?, ?)",
                [(p.doc_a, p.doc_b, p.words_a, p.words_b, encode_passages(p.passages)) for p in pairs])
            self._conn.executemany("INSERT OR IGNORE INTO passage_aligned (doc_id) VALUES (?)",
                                   [(int(d),) for d in aligned])

    def live_pairs(self, min_words: int = 0) -> Iterator[PassagePair]:
        """Pairs of live documents, with their passages of at least `min_words` words, most shared words first
        (a pair left with none is not one). The `+` keeps SQLite from looking up every pair of live documents
        in the primary key (10^10 lookups at 100,000 documents): one scan of the pairs, each checked."""
        rows = self._conn.execute(
            """SELECT doc_a, doc_b, words_a, words_b, passages FROM passage_pairs
               WHERE min(words_a, words_b) >= ?
                 AND +doc_a IN (SELECT doc_id FROM files WHERE vanished = 0)
                 AND +doc_b IN (SELECT doc_id FROM files WHERE vanished = 0)""", (min_words,))
        kept = []
        for doc_a, doc_b, words_a, words_b, blob in rows:
            passages = decode_passages(blob)
            long_enough = tuple(p for p in passages if p.words >= min_words)
            if len(long_enough) == len(passages):
                kept.append(PassagePair(doc_a, doc_b, words_a, words_b, passages))
            elif long_enough:
                kept.append(PassagePair(doc_a, doc_b, covered_count((p.a_first, p.a_stop) for p in long_enough),
                                        covered_count((p.b_first, p.b_stop) for p in long_enough), long_enough))
        kept.sort(key=lambda p: (-p.shared_words, p.doc_a, p.doc_b))  # after the filter, which changes the words
        yield from kept

    def pair(self, doc_a: int, doc_b: int) -> PassagePair | None:
        """The passages of two documents, as A then B in the order given."""
        lo, hi = min(doc_a, doc_b), max(doc_a, doc_b)
        row = self._conn.execute("SELECT words_a, words_b, passages FROM passage_pairs WHERE doc_a = ? AND doc_b = ?",
                                 (lo, hi)).fetchone()
        if row is None:
            return None
        stored = PassagePair(lo, hi, row[0], row[1], decode_passages(row[2]))
        return stored if lo == doc_a else swapped(stored)

    def aligned_count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM passage_aligned").fetchone()[0])

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM passage_pairs").fetchone()[0])


def swapped(pair: PassagePair) -> PassagePair:
    """The same pair seen from B."""
    return PassagePair(pair.doc_b, pair.doc_a, pair.words_b, pair.words_a, tuple(
        StoredPassage(p.b_start, p.b_end, p.a_start, p.a_end, p.b_first, p.b_stop, p.a_first, p.a_stop, p.kind,
                      p.similarity)
        for p in pair.passages))
