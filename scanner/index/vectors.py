"""Stored document vectors by meaning (issue 21): what `check` searches for the sources that share no
phrase with a query (a translation, a summary, a machine paraphrase), beside the postings.

One vector a document (`engine.semantic.document_vector`: 64 float16, 128 bytes), written by the scan's
passage step in blocks of documents (`meaning_blocks`, migration 8: ids and vectors as two blobs), so a
query reads 100,000 documents' vectors in a hundred rows, not a hundred thousand. A document written
twice keeps its latest vector. What the vectors were made with (format, model and version, dimensions)
is `meaning_key` in `meta`: another key wipes the table, and the next scan embeds every document again.

Beside each vector, the document's sentence vectors (`sentence_vectors`, migration 11), int8 with a scale a
sentence (`semantic.QuantizedVectors`), under the same key and their own format (`sentence_key`): a
document's sentences are then embedded once per index, not once per process that aligns it (`check`, each
worker of the passage step).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from scanner.engine.arrays import difference
from scanner.engine.semantic import QUANTIZED_FORMAT, MeaningSpace, QuantizedVectors
from scanner.index.batches import rows_in

VECTOR_FORMAT = 1  # little-endian int64 ids; little-endian float16 vectors, row after row
_COMPACT_BLOCK = 4096  # documents a block when the blocks are written again (`compact`)


class MeaningTable:
    """The document vectors of one open index (`Index.meaning`)."""

    def __init__(self, conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]],
                 connect: Callable[[], sqlite3.Connection] | None = None) -> None:
        self._conn = conn
        self._transaction = transaction
        self._connect = connect  # a reader's: a second connection, for `read_ahead`
        # what it read last: (blocks seen, ids, vectors), and their MeaningSpace once a query needed it
        self._loaded: tuple[_BlockState, np.ndarray, np.ndarray] | None = None
        self._space: MeaningSpace | None = None
        self._ahead: _ReadAhead | None = None
        # (the connection's data_version, the key, the block state) when last read: another connection's
        # commit moves data_version, and this one's writes (all of them here) forget it; a check then reads
        # neither the key nor the blocks' state again (0.5 ms a check, in two statements and a JSON parse)
        self._seen: tuple[int, dict[str, object] | None, _BlockState] | None = None

    def _state(self) -> tuple[dict[str, object] | None, _BlockState]:
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if self._seen is None or self._seen[0] != version:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'meaning_key'").fetchone()
            self._seen = (version, None if row is None else json.loads(row[0]), _block_state(self._conn))
        return self._seen[1], self._seen[2]

    def key(self) -> dict[str, object] | None:
        key = self._state()[0]
        return None if key is None else dict(key)

    def use_key(self, key: dict[str, object]) -> bool:
        """Make `key` the stored one; True when it changed (every stored vector then goes). Sentence vectors
        stored in another format go too."""
        sentence_key = _sentence_key(key)
        key = {**key, "format": VECTOR_FORMAT}
        if self.key() == key:
            if self._sentence_key() != sentence_key:
                with self._transaction():
                    self._store_sentence_key(sentence_key)
            return False
        self._seen = None
        with self._transaction():
            self._conn.execute("DELETE FROM meaning_blocks")
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('meaning_key', ?)",
                               (json.dumps(key, sort_keys=True),))
            self._store_sentence_key(sentence_key)
        self._loaded = self._space = None
        return True

    def _sentence_key(self) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'sentence_key'").fetchone()
        return None if row is None else str(row[0])

    def _store_sentence_key(self, sentence_key: str) -> None:
        self._conn.execute("DELETE FROM sentence_vectors")
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('sentence_key', ?)", (sentence_key,))

    def put(self, doc_ids: Sequence[int], vectors: np.ndarray,
            sentences: Sequence[QuantizedVectors | None] = ()) -> None:
        """Store one block: a vector (row) for each document; and, when given, each one's sentence vectors
        (None: it has none, or was not embedded)."""
        if len(doc_ids) == 0:
            return
        ids = np.asarray(doc_ids, dtype="<i8")
        rows = np.ascontiguousarray(vectors, dtype="<f2").reshape(ids.shape[0], -1)
        self._seen = None
        with self._transaction():
            self._conn.execute("INSERT INTO meaning_blocks (ids, vectors) VALUES (?, ?)",
                               (ids.tobytes(), rows.tobytes()))
            self._conn.executemany("INSERT OR REPLACE INTO sentence_vectors (doc_id, codes, scales) VALUES (?, ?, ?)",
                                   ((int(doc_id), *found.to_bytes()) for doc_id, found in zip(doc_ids, sentences)
                                    if found is not None and found.rows))

    def sentences(self, doc_id: int, key: dict[str, object]) -> QuantizedVectors | None:
        """The document's stored sentence vectors, when they were made as `key` says (None otherwise, or when
        it has none stored, or they cannot be read)."""
        return self.sentences_of([doc_id], key).get(int(doc_id))

    def sentences_of(self, doc_ids: Sequence[int], key: dict[str, object]) -> dict[int, QuantizedVectors]:
        """`sentences` of each of these documents, from one statement (`check` reads ~15 candidates': a
        statement each cost ~0.4 ms more); those with none usable are left out."""
        rows = rows_in(  # the key in the same statement: a writer may change it between two
            self._conn, """SELECT doc_id, codes, scales FROM sentence_vectors WHERE doc_id IN ({})
                             AND (SELECT value FROM meta WHERE key = 'sentence_key') = ?""",
            sorted({int(doc_id) for doc_id in doc_ids}), (_sentence_key(key),))
        found: dict[int, QuantizedVectors] = {}
        for doc_id, codes, scales in rows:
            try:
                found[int(doc_id)] = QuantizedVectors.from_bytes(codes, scales)
            except ValueError:  # damaged: embedded again by whoever asked
                continue
        return found

    def compact(self) -> bool:
        """Rewrite the blocks with each document once (its latest vector) when some documents were written
        twice (an index embedded again to store its sentence vectors held every vector twice: a reader read
        and sorted 200,000 rows for 100,000 documents, 71 ms instead of 27). True when it rewrote them."""
        rows = self._state()[1][2]
        ids, vectors = self.vectors()
        if rows == ids.shape[0]:
            return False
        self._seen = None
        with self._transaction():
            self._conn.execute("DELETE FROM meaning_blocks")
            for first in range(0, ids.shape[0], _COMPACT_BLOCK):
                self.put(ids[first : first + _COMPACT_BLOCK].tolist(), vectors[first : first + _COMPACT_BLOCK])
        self._loaded = self._space = None
        return True

    def read_ahead(self) -> None:
        """Start reading the vectors (and making their `MeaningSpace`) on a thread of its own, when this
        reader has not read them yet: a search by meaning is coming, and the caller has other work meanwhile
        (`scanner check` loads the sentence model, ~0.1 s; `check` looks its candidates up). The first search
        of a process otherwise read 100,000 documents' vectors first (~25 ms). A writer, or a reader that
        read them already, reads as before."""
        if self._connect is None or self._loaded is not None or self._ahead is not None:
            return
        self._ahead = _ReadAhead(self._connect)

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(document ids, float32 vectors), each document once with its latest vector; read again only when
        blocks were written since (a long-running watch or TUI keeps them)."""
        return self._vectors_at(self._state()[1], self._conn)

    def _vectors_at(self, state: _BlockState, conn: sqlite3.Connection | None) -> tuple[np.ndarray, np.ndarray]:
        """`vectors` as of `state`: kept, or the read-ahead thread's, or read through `conn` (None: through a
        connection of its own, as a search that must not use this one does)."""
        if self._loaded is not None and self._loaded[0] == state:
            return self._loaded[1], self._loaded[2]
        ahead, self._ahead = self._ahead, None
        found = ahead.result() if ahead is not None else None
        if found is not None and found.state == state:  # the same blocks as this connection sees
            self._loaded, self._space = (state, found.ids, found.vectors), found.space
            return found.ids, found.vectors
        if conn is not None:
            ids, matrix = _read_blocks(conn)
        else:
            assert self._connect is not None  # a search of a reader that read ahead (`searcher`)
            own = self._connect()
            try:
                ids, matrix = _read_blocks(own)
            finally:
                own.close()
        self._loaded = (state, ids, matrix)
        self._space = None
        return ids, matrix

    def searcher(self, key: dict[str, object]) -> Callable[[np.ndarray, int], list[int]]:
        """`nearest` in two steps: what it reads through this connection, now (the stored key, the blocks'
        state, and the vectors unless a thread reads them ahead), and the search returned, which reads
        nothing through it. `check` looks its candidates up on a thread through this connection meanwhile,
        and one connection used by two threads at once can crash the sqlite3 module (seen here: a
        segmentation fault in a suite run, in the look-up's COMMIT while the search read beside it)."""
        stored, state = self._state()
        if stored != {**key, "format": VECTOR_FORMAT}:
            return lambda vector, count: []
        if self._ahead is None:
            self._vectors_at(state, self._conn)  # read now, or kept already

        def search(vector: np.ndarray, count: int) -> list[int]:
            ids, vectors = self._vectors_at(state, None)
            if vectors.shape[0] == 0 or vectors.shape[1] != vector.shape[0]:
                return []
            if self._space is None:
                self._space = MeaningSpace.of(vectors)
            return ids[self._space.nearest(vector, count)].tolist()

        return search

    def nearest(self, vector: np.ndarray, count: int, key: dict[str, object]) -> list[int]:
        """Ids of the `count` documents nearest `vector` in meaning (`semantic.MeaningSpace`), best
        first; none when the stored vectors were made otherwise than `key` says (another model)."""
        return self.searcher(key)(vector, count)

    def summary(self) -> dict[str, Any]:
        """What the semantic pass stored (`scanner info`): the model, the documents with a vector by meaning
        (zero ones included: texts without sentences), those with sentence vectors and their bytes."""
        key = self.key()
        sentences, size = self._conn.execute(
            "SELECT count(*), coalesce(sum(length(codes) + length(scales)), 0) FROM sentence_vectors").fetchone()
        return {"model": None if key is None else key.get("model"), "documents": int(self.vectors()[0].shape[0]),
                "sentence_documents": int(sentences), "sentence_bytes": int(size)}

    def missing(self, doc_ids: np.ndarray) -> np.ndarray:
        """Those of `doc_ids` to embed: without a stored vector, or with one (not zero: a text with
        sentences) but no sentence vectors (embedded before they were stored, or stored in another format)."""
        ids, vectors = self.vectors()
        with_sentences = np.fromiter((row[0] for row in self._conn.execute("SELECT doc_id FROM sentence_vectors")),
                                     dtype=np.int64)
        unsplit = difference(ids[vectors.any(axis=1)], with_sentences)
        return difference(np.asarray(doc_ids, dtype=np.int64), difference(ids, unsplit))


def _sentence_key(key: dict[str, object]) -> str:
    """What stored sentence vectors were made with: the model's key and their stored form."""
    return json.dumps({**key, "format": QUANTIZED_FORMAT}, sort_keys=True)


# (blocks, last block, rows in all): moves whenever blocks are written, and when they are rewritten with
# each document once (`compact`: the rows in all fall; the blocks are numbered from 1 again)
_BlockState = tuple[int, int, int]


def _block_state(conn: sqlite3.Connection) -> _BlockState:
    seen = conn.execute("SELECT count(*), coalesce(max(block), 0), coalesce(sum(length(ids)), 0) / 8 "
                        "FROM meaning_blocks").fetchone()
    return int(seen[0]), int(seen[1]), int(seen[2])


def _read_blocks(conn: sqlite3.Connection) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 vectors) of every block, each document once with its latest vector. Read through the
    blob API, whose reads let other threads run (`_ReadAhead`)."""
    blocks = [int(row[0]) for row in conn.execute("SELECT block FROM meaning_blocks ORDER BY block")]
    id_parts, vector_parts = [], []
    for block in blocks:
        with conn.blobopen("meaning_blocks", "ids", block, readonly=True) as blob:
            id_parts.append(np.frombuffer(blob.read(), dtype="<i8"))
        with conn.blobopen("meaning_blocks", "vectors", block, readonly=True) as blob:
            vector_parts.append(blob.read())
    ids = np.concatenate(id_parts).astype(np.int64) if id_parts else np.empty(0, dtype=np.int64)
    width = len(vector_parts[0]) // 2 // id_parts[0].shape[0] if blocks else 0
    matrix = np.empty((ids.shape[0], width), dtype=np.float32)  # filled block by block: one array, no copies
    at = 0
    for block_ids, vectors in zip(id_parts, vector_parts):
        matrix[at : at + block_ids.shape[0]] = np.frombuffer(vectors, dtype="<f2").reshape(block_ids.shape[0], -1)
        at += block_ids.shape[0]
    # documents written again: each one's latest row (ids in increasing order, as they mostly come, need
    # no sort to show there are none)
    if not (ids[1:] > ids[:-1]).all() and (np.diff(np.sort(ids)) == 0).any():
        last = ids.shape[0] - 1 - np.unique(ids[::-1], return_index=True)[1]
        ids, matrix = ids[last], matrix[last]
    return ids, matrix


@dataclass(frozen=True)
class _Read:
    state: _BlockState
    ids: np.ndarray
    vectors: np.ndarray
    space: MeaningSpace


class _ReadAhead:
    """One snapshot's vectors and their space, read on a thread through a connection of its own (nothing
    when the index cannot be read: the caller then reads in place)."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._found: _Read | None = None
        self._thread = threading.Thread(target=self._read, args=(connect,), name="meaning-vectors", daemon=True)
        self._thread.start()

    def _read(self, connect: Callable[[], sqlite3.Connection]) -> None:
        try:
            conn = connect()
            try:
                conn.execute("BEGIN")  # the blocks of one snapshot
                state = _block_state(conn)
                ids, vectors = _read_blocks(conn)
                space = MeaningSpace.of(vectors)
                space.prepare_search()
                self._found = _Read(state, ids, vectors, space)
                conn.execute("COMMIT")
            finally:
                conn.close()
        except (sqlite3.Error, ValueError):  # gone or damaged meanwhile: read in place
            self._found = None

    def result(self) -> _Read | None:
        self._thread.join()
        return self._found
