"""Stored passage pairs: the passages every two documents share, aligned once after a scan (issue 20).

Two tables (migration 6). `passage_pairs` holds one row per pair of documents
(a < b) that share at least one passage, with the passages as one versioned
blob; `passage_aligned` lists the documents whose pairs with every document
indexed at the time were aligned, so a rescan aligns only the pairs of new or
changed documents. What the passages were aligned with (the alignment's
version, the shingle parameters and the minimum passage length) is the
`passages_key` in `meta`: a different key wipes both tables, and the next scan
aligns everything again. While a step runs, its plan (`passage_plan`, migration 9: its
pairs; `passage_plan_done`: its tasks done) is kept, so a step stopped half-way goes on
from there.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np

from scanner.core.errors import IndexStoreError
from scanner.engine.arrays import covered_by_group

PASSAGE_BLOB_FORMAT = 2  # little-endian int64 rows of _COLUMNS[format], after one int64 holding the format
# a_start, a_end, b_start, b_end (characters), a_first, a_stop, b_first, b_stop (tokens), kind, then (format 2)
# the similarity of a semantic passage in thousandths (-1: none)
_COLUMNS = {1: 9, 2: 10}
KINDS = ("verbatim", "reworded", "semantic")
PLAN_FORMAT = 1  # of a stored step plan: zlib little-endian int64 (a, b) rows, packed bits, JSON notes


def _stored_plan_key(key: dict[str, object]) -> str:
    """A plan's stored key: the step's inputs and the plan's format (another format is not read)."""
    return json.dumps({**key, "plan_format": PLAN_FORMAT}, sort_keys=True)


@dataclass(frozen=True)
class StepPlan:
    """A passage step's pairs (a, b), in the order it sends them, which are worth the sentence pass, which
    of its tasks (`notes["chunk"]` pairs each) are done, and what it counted while planning (`notes`)."""

    pairs: np.ndarray
    worthy: np.ndarray
    done: np.ndarray
    notes: dict[str, int]


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
    kind: str  # "verbatim": exact shared runs; "reworded": sentences that say the same in other words (or a summary);
    # "semantic": sentences a sentence model finds alike, with few words in common (issue 21)
    similarity: float | None = None  # of a semantic passage: its sentences' mean centred cosine
    # made of verbatim runs alone, a summary of verbatim pieces too (its kind then "reworded"): what the scan's
    # rare-anchor filter weighs (services/passages._keep); not stored
    runs_only: bool = field(default=False, compare=False, repr=False)

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


# a pair as `passage_pairs` stores it: doc_a, doc_b, words_a, words_b, the passages' blob
StoredPairRow = tuple[int, int, int, int, bytes]


def stored_row(pair: PassagePair) -> StoredPairRow:
    """The pair as `passage_pairs` stores it: what the passage step's workers send (bytes cross a pipe ~50x
    faster than the passages as objects, whose unpickling took the step's parent ~3 ms a task)."""
    return (pair.doc_a, pair.doc_b, pair.words_a, pair.words_b, encode_passages(pair.passages))


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


@dataclass(frozen=True)
class LivePassages:
    """The passage pairs of live documents as arrays, for the findings (tens of thousands of pairs, a few
    hundred thousand passages: no object a passage). Pairs most shared words first, ties by ids, as
    `PassageTable.live_pairs` gives them; each passage names its pair's row."""

    doc_a: np.ndarray  # int64, a row a pair
    doc_b: np.ndarray
    words_a: np.ndarray  # tokens of A inside the pair's passages (overlaps counted once)
    words_b: np.ndarray
    pair: np.ndarray  # int64, a row a passage: its pair's row
    kind: np.ndarray  # int64 index into KINDS
    a_first: np.ndarray
    a_stop: np.ndarray
    b_first: np.ndarray
    b_stop: np.ndarray

    def __len__(self) -> int:
        return int(self.doc_a.shape[0])

    def kind_counts(self, kind: str) -> np.ndarray:
        """Passages of this kind in each pair."""
        return np.bincount(self.pair[self.kind == KINDS.index(kind)], minlength=len(self))

    def passage_counts(self) -> np.ndarray:
        return np.bincount(self.pair, minlength=len(self))


def live_passages(rows: Iterable[tuple[int, int, int, int, bytes]], min_words: int) -> LivePassages:
    """`LivePassages` of stored rows (doc_a, doc_b, words_a, words_b, blob): the passages shorter than
    `min_words` dropped, a pair's words counted again when it lost some, a pair left with none dropped."""
    heads: list[tuple[int, int, int, int]] = []
    bodies: dict[int, list[bytes]] = {}  # by format: rows of one width, joined in one buffer
    counts: dict[int, list[int]] = {}
    pair_of: dict[int, list[int]] = {}
    for doc_a, doc_b, held_a, held_b, blob in rows:
        blob = bytes(blob)
        fmt = int.from_bytes(blob[:8], "little", signed=True) if len(blob) >= 8 else -1
        columns = _COLUMNS.get(fmt)
        if columns is None or (len(blob) - 8) % (8 * columns):
            raise IndexStoreError(f"stored passages of an unknown format ({fmt if len(blob) >= 8 else '-'})")
        bodies.setdefault(fmt, []).append(blob[8:])
        counts.setdefault(fmt, []).append((len(blob) - 8) // (8 * columns))
        pair_of.setdefault(fmt, []).append(len(heads))
        heads.append((doc_a, doc_b, held_a, held_b))
    head = np.asarray(heads, dtype=np.int64).reshape(-1, 4)
    parts = [(np.frombuffer(b"".join(bodies[fmt]), dtype="<i8").reshape(-1, _COLUMNS[fmt])[:, :9].astype(np.int64),
              np.repeat(np.asarray(pair_of[fmt], dtype=np.int64), counts[fmt])) for fmt in sorted(bodies)]
    table = np.concatenate([p for p, _ in parts]) if parts else np.zeros((0, 9), dtype=np.int64)
    stored_pair = np.concatenate([q for _, q in parts]) if parts else np.zeros(0, dtype=np.int64)
    words = np.minimum(table[:, 5] - table[:, 4], table[:, 7] - table[:, 6])  # StoredPassage.words
    long_enough = words >= min_words
    table, pair = table[long_enough], stored_pair[long_enough]
    n_pairs = head.shape[0]
    kept = np.bincount(pair, minlength=n_pairs)
    shortened = kept < np.bincount(stored_pair, minlength=n_pairs)
    words_a, words_b = head[:, 2].copy(), head[:, 3].copy()
    if shortened.any():  # counted again from the passages left
        words_a = np.where(shortened, covered_by_group(pair, table[:, 4], table[:, 5], n_pairs), words_a)
        words_b = np.where(shortened, covered_by_group(pair, table[:, 6], table[:, 7], n_pairs), words_b)
    live = np.flatnonzero(kept > 0)
    order = live[np.lexsort((head[live, 1], head[live, 0], -np.minimum(words_a[live], words_b[live])))]
    row_of = np.full(n_pairs, -1, dtype=np.int64)
    row_of[order] = np.arange(order.shape[0], dtype=np.int64)
    return LivePassages(head[order, 0], head[order, 1], words_a[order], words_b[order], row_of[pair], table[:, 8],
                        table[:, 4], table[:, 5], table[:, 6], table[:, 7])


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
            self.forget()
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('passages_key', ?)",
                               (json.dumps(key, sort_keys=True),))
        return True

    def forget(self) -> None:
        """Drop every stored passage: the next step aligns every document again (what they were found
        under changed, as when base text is added or removed)."""
        with self._transaction():
            self._conn.execute("DELETE FROM passage_pairs")
            self._conn.execute("DELETE FROM passage_aligned")
            self._forget_plan()

    def plan(self, key: dict[str, object]) -> StepPlan | None:
        """The stored plan of a step stopped half-way with these inputs (`key`), or None."""
        row = self._conn.execute("SELECT pairs, worthy, notes FROM passage_plan WHERE key = ?",
                                 (_stored_plan_key(key),)).fetchone()
        if row is None:
            return None
        pairs = np.frombuffer(zlib.decompress(row[0]), dtype="<i8").reshape(-1, 2).astype(np.int64)
        worthy = np.unpackbits(np.frombuffer(row[1], dtype=np.uint8), count=pairs.shape[0]).astype(np.bool_)
        notes = json.loads(row[2])
        done = np.zeros(int(notes["tasks"]), dtype=np.bool_)
        tasks = np.asarray([r[0] for r in self._conn.execute("SELECT task FROM passage_plan_done")], dtype=np.int64)
        done[tasks[tasks < done.shape[0]]] = True
        return StepPlan(pairs, worthy, done, notes)

    def start_plan(self, key: dict[str, object], plan: StepPlan) -> None:
        """Keep `plan` (in place of any other) until `end_plan`."""
        with self._transaction():
            self._forget_plan()
            self._conn.execute(
                "INSERT INTO passage_plan (key, pairs, worthy, notes) VALUES (?, ?, ?, ?)",
                (_stored_plan_key(key), zlib.compress(plan.pairs.astype("<i8").tobytes(), 1),
                 np.packbits(plan.worthy).tobytes(), json.dumps(plan.notes)))
            self._conn.executemany("INSERT INTO passage_plan_done (task) VALUES (?)",
                                   [(int(t),) for t in np.flatnonzero(plan.done)])

    def _forget_plan(self) -> None:
        self._conn.execute("DELETE FROM passage_plan")
        self._conn.execute("DELETE FROM passage_plan_done")

    def end_plan(self, aligned: Sequence[int]) -> None:
        """The step ended: its documents are aligned, its plan goes."""
        with self._transaction():
            self.put([], aligned)
            self._forget_plan()

    def aligned_ids(self) -> np.ndarray:
        """Sorted ids of the documents whose pairs are aligned."""
        rows = self._conn.execute("SELECT doc_id FROM passage_aligned ORDER BY doc_id").fetchall()
        return np.asarray([r[0] for r in rows], dtype=np.int64)

    def put(self, pairs: Sequence[PassagePair], aligned: Sequence[int] = (), task: int | None = None) -> None:
        """Store pairs (replacing earlier rows of the same two documents) and mark documents aligned; with
        `task`, that task of the stored plan done, in the same transaction."""
        self.put_rows([stored_row(p) for p in pairs], aligned, task)

    def put_rows(self, rows: Sequence[StoredPairRow], aligned: Sequence[int] = (), task: int | None = None) -> None:
        """`put` of pairs already in their stored form (`stored_row`)."""
        with self._transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO passage_pairs (doc_a, doc_b, words_a, words_b, passages) "
                "VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.executemany("INSERT OR IGNORE INTO passage_aligned (doc_id) VALUES (?)",
                                   [(int(d),) for d in aligned])
            if task is not None:
                self._conn.execute("INSERT OR IGNORE INTO passage_plan_done (task) VALUES (?)", (task,))

    def _live_rows(self, min_words: int) -> sqlite3.Cursor:
        """The stored rows of the pairs of live documents holding at least `min_words` words each. The `+`
        keeps SQLite from looking up every pair of live documents in the primary key (10^10 lookups at
        100,000 documents): one scan of the pairs, each checked."""
        return self._conn.execute(
            """SELECT doc_a, doc_b, words_a, words_b, passages FROM passage_pairs
               WHERE min(words_a, words_b) >= ?
                 AND +doc_a IN (SELECT doc_id FROM files WHERE vanished = 0)
                 AND +doc_b IN (SELECT doc_id FROM files WHERE vanished = 0)""", (min_words,))

    def live_pairs(self, min_words: int = 0) -> Iterator[PassagePair]:
        """Pairs of live documents, with their passages of at least `min_words` words, most shared words first
        (a pair left with none is not one)."""
        kept = []
        for doc_a, doc_b, words_a, words_b, blob in self._live_rows(min_words):
            passages = decode_passages(blob)
            long_enough = tuple(p for p in passages if p.words >= min_words)
            if len(long_enough) == len(passages):
                kept.append(PassagePair(doc_a, doc_b, words_a, words_b, passages))
            elif long_enough:
                kept.append(PassagePair(doc_a, doc_b, covered_count((p.a_first, p.a_stop) for p in long_enough),
                                        covered_count((p.b_first, p.b_stop) for p in long_enough), long_enough))
        kept.sort(key=lambda p: (-p.shared_words, p.doc_a, p.doc_b))  # after the filter, which changes the words
        yield from kept

    def live_arrays(self, min_words: int = 0) -> LivePassages:
        """What `live_pairs` gives, as arrays (`LivePassages`)."""
        return live_passages(self._live_rows(min_words), min_words)

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
