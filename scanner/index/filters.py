"""The stored Bloom filter of the postings segments' fingerprints (`engine/membership.py`; migration 10).

It covers the sealed segments only: the buffer changes with every transaction and is small enough that
looking all of a query's anchors up in it costs well under a millisecond. It is updated in the same
transaction that seals the buffer into a segment, so a reader that takes the segment list and the
filter in one snapshot never misses a posting. Merging segments changes no fingerprint set, and
documents removed leave their bits (false positives, never misses). States (`postings_filter.state`):
'ok' (the filter covers every segment), 'build' (none yet: the next writer builds it from the
segments), 'off' (more postings than a filter of `MAX_BITS_LOG2` bits serves: every anchor is looked up
in every segment, as before there was a filter). A stored filter that cannot be read (`summary`: state
'unreadable') is looked past the same way, and the next writer builds it afresh.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

import numpy as np

from scanner.core.errors import FormatError
from scanner.engine.membership import HEADER_BYTES, FingerprintFilter, false_positive_rate, header_of
from scanner.index.pairs import fingerprint_ranges


class FilterTable:
    """The postings filter of one open index (`Index.filters`), with what it last read.

    A reader reads it in the background (`connect`: a second connection of its own), from its second
    look-up on: 16 MiB at 100,000 documents take ~20 ms to read from a file whose pages lie scattered, as
    long as a check's look-ups themselves, 128 MiB at 1,000,000 documents several checks' worth, and a
    process that checks once (`scanner check FILE`) would read it for nothing. Without the filter every
    anchor is looked up: the same candidates, only slower. The writer reads it at once (`connect` None):
    its own open transaction may have changed it."""

    def __init__(self, conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]],
                 connect: Callable[[], sqlite3.Connection] | None = None) -> None:
        self._conn = conn
        self._transaction = transaction
        self._connect = connect
        self._loaded: tuple[int, FingerprintFilter] | None = None  # (version, filter)
        self._loading: threading.Thread | None = None
        self._asked = 0  # look-ups this reader made: a process that checks once never loads the filter
        self._unreadable = -1  # the version found damaged: not read again

    def state(self) -> tuple[str, int]:
        row = self._conn.execute("SELECT state, version FROM postings_filter WHERE id = 1").fetchone()
        return (str(row[0]), int(row[1])) if row is not None else ("build", -1)

    def current(self, wait: bool = False) -> FingerprintFilter | None:
        """The filter of the segments as this connection now sees them, or None: look every anchor up (no
        filter kept, or a reader's still loading; `wait` loads it first). Read again when its version moved."""
        state, version = self.state()
        if state != "ok":
            return None
        loaded = self._loaded
        if loaded is not None and loaded[0] == version:
            return loaded[1]
        if version == self._unreadable:
            return None
        self._asked += 1
        if self._connect is None or wait:
            try:
                self._loaded = _read(self._conn)
            except FormatError:  # damaged: looked past (every anchor looked up); the next writer rebuilds it
                self._loaded, self._unreadable = None, version
        elif self._asked > 1 and (self._loading is None or not self._loading.is_alive()):
            self._loading = threading.Thread(target=self._load, name="postings-filter", daemon=True)
            self._loading.start()
        loaded = self._loaded
        return loaded[1] if loaded is not None and loaded[0] == version else None

    def _load(self) -> None:
        assert self._connect is not None
        try:
            conn = self._connect()
            try:
                conn.execute("BEGIN")  # the version and the filter of one snapshot
                version = int(conn.execute("SELECT version FROM postings_filter WHERE id = 1").fetchone()[0])
                try:
                    self._loaded = _read(conn)
                except FormatError:  # damaged: every anchor is looked up, and it is not read again
                    self._unreadable = version
                conn.execute("COMMIT")
            finally:
                conn.close()
        except sqlite3.Error:  # the index went away meanwhile: every anchor is looked up
            pass

    def summary(self) -> dict[str, object]:
        """What `scanner info` says of it: state, size, and the share of absent anchors it lets through at
        its load (from its header alone)."""
        row = self._conn.execute("SELECT state, length(filter), substr(filter, 1, ?) FROM postings_filter "
                                 "WHERE id = 1", (HEADER_BYTES,)).fetchone()
        if row is None or row[0] != "ok" or row[2] is None:
            return {"state": row[0] if row is not None else "build"}
        try:
            bits_log2, keys = header_of(row[2])
            FingerprintFilter.check_size(bits_log2, int(row[1]))
        except FormatError as exc:
            return {"state": "unreadable", "reason": str(exc)}
        return {"state": "ok", "bytes": int(row[1]), "postings": keys,
                "false_positive_rate": round(false_positive_rate(bits_log2, keys), 4)}

    def needs_build(self) -> bool:
        """None built yet, or one too damaged to read (a writer then builds it afresh)."""
        return self.summary()["state"] in ("build", "unreadable")

    def build(self, segment_tables: Sequence[str], rows: int) -> None:
        """A new filter from every fingerprint of these segments (`rows` postings in all); in a transaction."""
        made = FingerprintFilter.sized_for(rows)
        if made is not None:
            made.add(part for table in segment_tables for part in _fingerprints(self._conn, table, rows))
        self._store(made)

    def add(self, table: str, table_rows: int, segment_tables: Sequence[str], rows: int) -> None:
        """The fingerprints of a newly sealed segment `table` (already among `segment_tables`, `rows` postings
        in all): added, or a larger filter built when this one would be too full; in a transaction."""
        state, _ = self.state()
        if state == "off":
            return
        current = self.current(wait=True)  # None when none is built, or it is damaged
        if current is None or not current.has_room_for(table_rows):
            self.build(segment_tables, rows)
            return
        current.add(_fingerprints(self._conn, table, table_rows))
        self._store(current)

    def reset(self) -> None:
        """No segments any more (every posting dropped): the next seal or writer builds a filter afresh."""
        self._conn.execute("UPDATE postings_filter SET state = 'build', filter = NULL, version = version + 1")
        self._loaded = None

    def _store(self, made: FingerprintFilter | None) -> None:
        """Write `made` (None: state 'off') and keep it as read: the blob is written in place, not copied
        into one bytes object (128 MiB at 1,000,000 documents), and the writer's next seal adds to it."""
        with self._transaction():
            if made is None:
                self._conn.execute("UPDATE postings_filter SET state = 'off', filter = NULL, version = version + 1")
            else:
                header = made.header()
                self._conn.execute("UPDATE postings_filter SET state = 'ok', filter = zeroblob(?), "
                                   "version = version + 1", (len(header) + made.bits.nbytes,))
                with self._conn.blobopen("postings_filter", "filter", 1) as blob:
                    blob.write(header)
                    blob.write(made.bits.data)
            version = int(self._conn.execute("SELECT version FROM postings_filter WHERE id = 1").fetchone()[0])
        self._loaded = None if made is None else (version, made)

    def forget(self) -> None:
        """Drop what was read (the writer's transaction rolled back: what it stored is gone)."""
        self._loaded = None


def _read(conn: sqlite3.Connection) -> tuple[int, FingerprintFilter] | None:
    """(version, filter) as one snapshot sees them (None if the index keeps none). Through the blob API,
    whose reads let other threads run: a column read holds the GIL while SQLite pages the blob in."""
    nested = conn.in_transaction
    if not nested:
        conn.execute("BEGIN")
    try:
        row = conn.execute("SELECT state, version FROM postings_filter WHERE id = 1").fetchone()
        if row is None or row[0] != "ok":
            return None
        with conn.blobopen("postings_filter", "filter", 1, readonly=True) as blob:
            return int(row[1]), FingerprintFilter.from_bytes(blob.read())
    finally:
        if not nested:
            conn.execute("COMMIT")


def _fingerprints(conn: sqlite3.Connection, table: str, rows: int, slice_rows: int = 1_000_000) -> Iterator[np.ndarray]:
    """Every fingerprint of one postings table (with repeats), range by range: one text SQLite joins and
    numpy parses a range, as `pairs.read_range` reads them."""
    for lo, hi, last in fingerprint_ranges(rows, slice_rows):
        op = "<=" if last else "<"
        (text,) = conn.execute(f"SELECT group_concat(fp, ' ') FROM {table} WHERE fp >= ? AND fp {op} ?",
                               (lo, hi)).fetchone()
        if text is not None:
            yield np.fromstring(text, dtype=np.int64, sep=" ")
