"""The SQLite index: one writer (an exclusive lock file), readers in WAL.

Why this shape:

* every file's rows (document, sketch, postings, file row) are written in the
  same transaction as the file row that marks it done, so a SIGKILL at any
  moment leaves a consistent index and the next scan resumes where it stopped;
* the writer holds `PATH.lock` with `flock`, so a second scan fails at once
  instead of waiting on SQLite's busy handler; readers open `mode=ro` and see
  the last committed state while a scan runs;
* the sketch parameters are stored in the index: mixing sketches made with
  other parameters would silently give wrong scores, so it is refused.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from scanner import __version__
from scanner.core.config import ALGORITHM_VERSION, Params, describe_difference
from scanner.core.errors import IndexLockedError, IndexStoreError, ParameterMismatchError, ResourceError
from scanner.core.model import MEMBER_SEPARATOR, FileRecord, disk_first, place_at
from scanner.engine.base import Base
from scanner.engine.semantic import QuantizedVectors
from scanner.engine.sketch import Sketch, distinct
from scanner.index.base import BaseTable
from scanner.index.batches import chunks, rows_in
from scanner.index.failures import resource_error
from scanner.index.filters import FilterTable
from scanner.index.passages import PassageTable
from scanner.index.schema import (
    LATEST_VERSION,
    PLACES_VERSION,
    check_version,
    current_version,
    migrate,
    readable_at,
)
from scanner.index.vectors import MeaningTable

ALERT_REVIEWS = ("new", "reviewed", "allowed")
_CACHE_KIB = -131072  # page cache up to 128 MiB: postings inserts are random in fp order
# Readers map up to 2 GiB (SQLite's own cap): a check probes postings pages at random, and a mapped page
# costs no copy into the page cache (2,000 probes of a 100,000-document index: 4.1 -> 2.5 ms warm; a check
# there 1-2 ms faster, none at 1,000,000 documents). Not on read-only media, which may be removable: a
# mapped read of a device gone is a crash (SIGBUS), a plain read an error the user is told. Mapped pages
# count in a process's resident size (a check of 1,000,000 documents: 806 MiB against 265) though they
# are the system's file cache, shared and reclaimable
_MMAP_BYTES = 1 << 31
# Postings go to a buffer B-tree small enough to stay in the page cache; a full buffer is written out, in
# key order, as an immutable segment, and SEGMENT_FAN_IN segments of one level merge into one of the next
# (a tiered LSM): each posting is rewritten O(log N) times instead of once per commit (docs/SCALING.md).
POSTINGS_BUFFER_ROWS = 2_000_000
SEGMENT_FAN_IN = 8
COMMON_MIN_DOCS = 20  # below this many documents no shingle is "very common"
# and no shingle held by this many documents or fewer ever is: a text copied into 3 of 25 files is what a
# small case is about (with the share alone, 5 % of 25 documents made any shingle in 3 of them "very
# common", and such copies vanished from the findings); a notice in 13 of 40 still is boilerplate
COMMON_FLOOR = 5
# issue 9: and above this many documents a shingle is always "very common", whatever the share: with
# 5 % of 10^6 documents a single shingle would pair 1.25e9 documents (docs/SCALING.md). It only binds
# above COMMON_MAX_DOCS / common_shingle_share documents (20,000 with the default share).
COMMON_MAX_DOCS = 1000


# --------------------------------------------------------------------------
# records

# the rows of a container's members: `path!/...`, as a range of the path index ("0" follows "/" in ASCII)
_MEMBERS_OF = f"({{path}} > {{of}} || '{MEMBER_SEPARATOR}' AND {{path}} < {{of}} || '{MEMBER_SEPARATOR[0]}0')"


@dataclass(frozen=True)
class DocumentIdentity:
    """How an indexed or pending document was read: what a byte-identical copy is recorded with."""

    status: str
    reason: str
    extractor: str
    mime: str
    has_members: bool = False  # a mail with attachments: a copy must be read again to list its members


@dataclass(frozen=True)
class NewDocument:
    """What a worker prepared for one distinct sha256, ready to be written."""

    sha256: str
    size: int
    mime: str
    status: str  # "ok" or "too_short"
    extractor: str
    sketch_blob: bytes
    n_tokens: int
    n_shingles: int
    text_length: int
    lexical_digest: str
    shingle_digest: str
    fingerprints: np.ndarray = field(repr=False)  # distinct winnowed fps, uint64
    text_z: bytes | None = field(default=None, repr=False)  # `compress_text`, None with --no-text
    page_starts: tuple[int, ...] = ()
    places: tuple[tuple[int, int, str], ...] = ()  # `Extracted.places`: where the text is not the body


@dataclass(frozen=True)
class FileState:
    """What the index remembers of a path, enough to skip it without re-hashing."""

    size: int
    mtime_ns: int
    sha256: str
    status: str
    doc_id: int | None
    vanished: bool
    real_path: str | None = None  # None for rows written before migration 5, until a scan sees them
    reason: str = ""  # the one-line reason of its status
    readers: int = 1  # the readers' version that read it (scanner/sources/extract/readers.py)


@dataclass(frozen=True)
class FileRow:
    path: str
    size: int
    mtime_ns: int
    sha256: str
    mime: str
    status: str
    reason: str
    extractor: str
    vanished: bool
    doc_id: int | None


@dataclass(frozen=True)
class DocumentInfo:
    """A document and the files that hold it (all paths with its sha256)."""

    doc_id: int
    paths: tuple[str, ...]  # live files first, sorted
    sha256: str
    size: int
    mtime_ns: int
    mime: str
    n_tokens: int
    text_length: int
    status: str
    extractor: str
    lexical_digest: str
    shingle_digest: str
    page_starts: tuple[int, ...]
    has_text: bool
    places: tuple[tuple[int, int, str], ...] = ()  # `Extracted.places` of its text

    def place_at(self, start: int, end: int) -> str:
        """Where in the document the span [start, end) of its text was found, when not in its body."""
        return place_at(self.places, start, end)


@dataclass(frozen=True)
class Alert:
    """A stored alert group: one content (SHA-256) for one set of protected sources, every path it was seen at."""

    id: int
    time: float
    path: str  # the first path the content was seen at
    sha256: str
    matches: list[dict[str, Any]]
    paths: tuple[str, ...] = ()
    severity: str = ""
    sources: str = ""  # the protected documents' SHA-256s, sorted, comma-separated: what makes the group
    review: str = "new"  # "new", "reviewed" or "allowed"


@dataclass(frozen=True)
class IndexStats:
    path: str
    schema_version: int
    size_bytes: int
    files: int
    files_live: int
    files_vanished: int
    documents: int
    documents_ok: int
    documents_too_short: int
    documents_with_text: int
    postings: int
    runs: int
    alerts: int
    file_status: dict[str, int]
    last_run: dict[str, Any] | None
    passage_tasks_left: int = 0  # tasks of a passage step stopped half-way: the next scan runs them
    postings_filter: dict[str, Any] = field(default_factory=dict)  # `FilterTable.summary`
    semantic: dict[str, Any] = field(default_factory=dict)  # `MeaningTable.summary`

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class PairCount:
    """<id, id, count>: two live documents and how many winnowed fingerprints they share."""

    a: int
    b: int
    shared: int


# --------------------------------------------------------------------------
# helpers


def to_signed(fps: np.ndarray) -> list[int]:
    """uint64 fingerprints as the signed int64 SQLite stores."""
    return np.ascontiguousarray(fps, dtype=np.uint64).view(np.int64).tolist()


def to_unsigned(values: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).view(np.uint64)


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # how a zstd frame begins; a zlib stream's first byte is 0x78


def compress_text(text: str) -> bytes:
    """A document's text as the index stores it: a zstd frame of its UTF-8 (migration 12; level 1: as small as
    zlib's level 1 on these texts, and compressed in half its time)."""
    import zstandard  # imported when first needed: commands that store no text never pay for it

    try:
        return zstandard.ZstdCompressor(level=1).compress(text.encode("utf-8"))
    except zstandard.ZstdError as exc:  # its own word for a process out of memory: said as Python says it
        if "allocation" in str(exc).lower():
            raise MemoryError(str(exc)) from exc
        raise


class _TextReader:
    """Stored texts read back: zstd frames, and the zlib streams of indexes written before migration 12, told
    apart by their first bytes. A decompression context a thread, kept: a fresh one costs more than the text
    (13 us against 5 for 2.5 KB), and one context must not serve two threads at once."""

    def __init__(self) -> None:
        self._local = threading.local()

    def __call__(self, blob: bytes) -> str:
        if blob[:4] != _ZSTD_MAGIC:
            return zlib.decompress(blob).decode("utf-8")
        context = getattr(self._local, "context", None)
        if context is None:
            import zstandard

            context = self._local.context = zstandard.ZstdDecompressor()
        return context.decompress(blob).decode("utf-8")


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _acquire_lock(path: Path) -> int:
    """Exclusive, non-blocking flock on PATH.lock; the holder's pid is written in it."""
    lock = _lock_path(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise (resource_error(exc, f"cannot create lock file {lock}")
               or IndexStoreError(f"cannot create lock file {lock}: {exc.strerror}")) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise IndexLockedError(f"index {path} is being written by another scan (pid {holder})") from exc
        raise IndexStoreError(f"cannot lock {lock}: {exc.strerror}") from exc
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _release_lock(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _writer_holds(path: Path) -> bool:
    """Whether a writer holds the index's lock now. A lock file that is missing or cannot be opened has no
    holder: on read-only media nobody could have created or taken it."""
    try:
        fd = os.open(_lock_path(path), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)  # closing also drops the shared lock just taken
    return False


def _unwritable(path: Path) -> str:
    """Why nothing can write the index at `path` ("on read-only media", ...), or "" when something can."""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "on read-only media"
    except OSError:
        return ""  # no folder: the caller says so
    if not os.access(folder, os.W_OK):
        return "in a folder this user cannot write to"
    if path.exists() and not os.access(path, os.W_OK):
        return "a read-only file"
    return ""


def _reader_mode(path: Path) -> tuple[str, str]:
    """The SQLite URI parameters a reader opens `path` with, and what to tell the user about it ("" if nothing).

    A WAL index wants its -shm file, which no reader can create on read-only media: there (no writer can
    hold the index) it is opened `immutable=1`, which takes no locks and reads no write-ahead log. So a log
    that still holds changes, as a scan killed before its checkpoint leaves, is read through `mode=ro` when
    its -shm is there too (SQLite rebuilds the log's index in memory) and refused otherwise: an immutable
    open would silently show the index as it was before those changes.
    """
    where = _unwritable(path)
    if not where or _writer_holds(path):
        return "mode=ro", ""
    note = f"index {path} is {where}: opened read-only"
    wal = path.with_name(path.name + "-wal")
    pending = wal.stat().st_size if wal.is_file() else 0
    if not pending:
        return "mode=ro&immutable=1", note
    if path.with_name(path.name + "-shm").is_file():
        return "mode=ro", f"{note}, with the {pending:,} bytes of its write-ahead log (not checkpointed)"
    raise IndexStoreError(
        f"index {path} is {where} and was not checkpointed: its write-ahead log {wal.name} holds {pending:,} bytes "
        f"of changes but its {path.name}-shm file is missing; copy the index with its -wal file to writable "
        "storage and open it there")


def _inserted_id(cur: sqlite3.Cursor) -> int:
    """The row id of the row an INSERT just made (sqlite3 says None only before any INSERT)."""
    rowid = cur.lastrowid
    if rowid is None:
        raise IndexStoreError("the index gave no row id for a new row")
    return rowid


# --------------------------------------------------------------------------
# the index


class Index:
    """An open index. Use `Index.open`; close it (or use `with`)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, readonly: bool,
                 lock_fd: int | None, params: Params, stored_params: Params | None, stale: bool = False,
                 media_note: str = "", upgraded_from: int | None = None) -> None:
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self.stale = stale  # sketches made by an earlier algorithm version (see `Index.open`)
        self.upgraded_from = upgraded_from  # the schema version this writer's open migrated from, if any
        self.media_note = media_note  # a reader on read-only media: what to tell the user once ("" otherwise)
        self._lock_fd = lock_fd
        self._params = params
        self.stored_params = stored_params
        self._in_tx = False
        self._changed = False  # this transaction wrote files or documents: the generation moves on commit
        self.postings_buffer_rows = POSTINGS_BUFFER_ROWS
        self._buffered: int | None = None  # rows in postings_buffer, counted once per writer
        self._reader_uri: str | None = None  # how a reader opened it: a second connection opens it the same way
        self._read_text = _TextReader()

    # ---- opening -------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = True, params: Params | None = None,
             rebuild: bool = False, accept_stale: bool = False) -> "Index":
        """Open (readers) or open-and-create (the writer) the index at `path`.

        Args:
            readonly: readers open `mode=ro` and never create anything; on read-only
                media `immutable=1` (see `_reader_mode`, and `media_note`).
            params: the parameters the caller will use; their sketch fields
                must equal those stored in the index (ParameterMismatchError).
            rebuild: the writer wipes the index first (after taking the lock).
            accept_stale: open an index whose sketches an earlier algorithm
                version made (`stale` is then True) instead of refusing it:
                for a scan, which re-sketches it first, and for reading its parameters.
        """
        path = Path(path)
        if readonly:
            if rebuild:
                raise IndexStoreError("a read-only index cannot be rebuilt")
            return cls._open_reader(path, params, accept_stale)
        return cls._open_writer(path, params, rebuild, accept_stale)

    @classmethod
    def _open_reader(cls, path: Path, params: Params | None, accept_stale: bool) -> "Index":
        if not path.is_file():
            raise IndexStoreError(f"no index at {path}; create one with `scanner scan PATH --index {path}`")
        mode, note = _reader_mode(path)
        uri = f"file:{quote(str(path.resolve()))}?{mode}"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute(f"PRAGMA cache_size = {_CACHE_KIB}")
            conn.execute(f"PRAGMA mmap_size = {0 if note else _MMAP_BYTES}")  # a note: read-only media
            version = check_version(conn, str(path))
        except sqlite3.DatabaseError as exc:
            raise (resource_error(exc, f"cannot read index {path}")
                   or IndexStoreError(f"cannot read index {path}: {exc}")) from exc
        if version == 0:
            conn.close()
            raise IndexStoreError(f"{path} is not an initialised scanner index")
        if not readable_at(version):
            conn.close()
            raise IndexStoreError(
                f"index {path} has schema version {version}; run `scanner scan` once to upgrade it to {LATEST_VERSION}")
        try:
            stored = _stored_params(conn)
            stale = _check_algorithm(conn, path, stored, accept_stale)
            resolved = _reconcile(path, stored, params)
        except BaseException:
            conn.close()
            raise
        index = cls(conn, path, readonly=True, lock_fd=None, params=resolved, stored_params=stored, stale=stale,
                    media_note=note)
        index._reader_uri = uri
        return index

    @classmethod
    def _open_writer(cls, path: Path, params: Params | None, rebuild: bool, accept_stale: bool) -> "Index":
        if path.parent and not path.parent.exists():
            raise IndexStoreError(f"directory {path.parent} does not exist")
        where = _unwritable(path)
        if where:
            raise ResourceError(f"index {path} is {where}: cannot write to it; copy it to writable storage to scan "
                                "or add to it (reading it works as it is)")
        lock_fd = _acquire_lock(path)
        conn = None
        try:
            if rebuild:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    candidate = path.with_name(path.name + suffix)
                    if candidate.exists():
                        candidate.unlink()
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 10000")
            check_version(conn, str(path))
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise IndexStoreError(f"index {path}: WAL journal mode is not available ({mode})")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA cache_size = {_CACHE_KIB}")
            conn.execute("PRAGMA temp_store = FILE")
            before = current_version(conn)
            upgraded_from = before if migrate(conn, str(path)) and before > 0 else None
            stored = _stored_params(conn)
            stale = _check_algorithm(conn, path, stored, accept_stale)
            resolved = _reconcile(path, stored, params)
            if stored is None:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [
                    ("params", json.dumps(resolved.to_dict(), sort_keys=True)),
                    ("sketch_key", resolved.sketch_key().hex()),
                    ("created", str(time.time())),
                    ("scanner_version", __version__),
                ])
                conn.execute("COMMIT")
                stored = resolved
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            _release_lock(lock_fd)
            raise (resource_error(exc, f"cannot open index {path} for writing")
                   or IndexStoreError(f"cannot open index {path}: {exc}")) from exc
        except BaseException:
            if conn is not None:
                conn.close()
            _release_lock(lock_fd)
            raise
        index = cls(conn, path, readonly=False, lock_fd=lock_fd, params=resolved, stored_params=stored, stale=stale,
                    upgraded_from=upgraded_from)
        if index.filters.needs_build():  # a new index, one from before the filter (migration 10), or damaged
            with index.transaction():
                index.filters.build(*index._segment_tables())
        return index

    def upgrade_note(self) -> str:
        """What to tell a user whose index this writer upgraded past `PLACES_VERSION` ("" otherwise): the files
        it holds keep the text their readers gave when they were indexed (a rescan reads only files that
        changed), so text the readers have learnt to find since (comments, text boxes, form fields...) is
        not in it until they are read again."""
        if self.upgraded_from is None or self.upgraded_from >= PLACES_VERSION or \
                self._conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is None:
            return ""
        return (f"index {self.path} upgraded from schema {self.upgraded_from}: the files it already holds keep "
                "the text extracted when they were indexed; `scanner scan --rebuild` reads them again with "
                "today's readers (comments, text boxes, headers, form fields, attachments...)")

    def close(self) -> None:
        if self._conn is not None:
            if self._in_tx:
                self._conn.execute("ROLLBACK")
                self._in_tx = False
            self._conn.close()
            self._conn = None  # type: ignore[assignment]
        if self._lock_fd is not None:
            _release_lock(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- properties ------------------------------------------------------

    @property
    def params(self) -> Params:
        """The parameters in force: the caller's, whose sketch fields equal the stored ones."""
        return self._params

    @property
    def mmap_bytes(self) -> int:
        """How much of the file this connection maps (0: read with plain reads, as on read-only media)."""
        return int(self._conn.execute("PRAGMA mmap_size").fetchone()[0])

    @property
    def schema_version(self) -> int:
        return check_version(self._conn, str(self.path))

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (benchmarks measure the file's size after it)."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ---- transactions ----------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT; nested calls join the open transaction."""
        self._require_writer()
        if self._in_tx:
            yield
            return
        self._conn.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield
            if self._changed:
                self._conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        except BaseException:
            self._in_tx = False
            self._changed = False
            self._buffered = None  # recounted: the rolled-back rows are gone
            if "filters" in self.__dict__:  # a filter it stored is gone too
                self.filters.forget()
            self._conn.execute("ROLLBACK")
            raise
        self._in_tx = False
        self._changed = False
        self._conn.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Statements that must see one state of the index (a reader's statements each see the latest
        commit otherwise): a read transaction, or the writer's open one."""
        if self._in_tx:
            yield
            return
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def _require_writer(self) -> None:
        if self.readonly:
            raise IndexStoreError(f"index {self.path} is open read-only")

    # ---- runs ------------------------------------------------------------

    def begin_run(self, command: str) -> int:
        with self.transaction():
            cur = self._conn.execute(
                "INSERT INTO runs (started, command, params) VALUES (?, ?, ?)",
                (time.time(), command, json.dumps(self._params.to_dict(), sort_keys=True)))
            return _inserted_id(cur)

    def finish_run(self, run_id: int, counts: dict[str, Any]) -> None:
        with self.transaction():
            self._conn.execute("UPDATE runs SET finished = ?, counts = ? WHERE id = ?",
                               (time.time(), json.dumps(counts, sort_keys=True), run_id))

    def runs(self) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            "SELECT id, started, finished, command, params, counts FROM runs ORDER BY id").fetchall()
        return [{"id": r[0], "started": r[1], "finished": r[2], "command": r[3],
                 "params": json.loads(r[4]), "counts": json.loads(r[5]) if r[5] else None} for r in rows]

    # ---- writing files and documents --------------------------------------

    def file_state(self, path: str) -> FileState | None:
        return self.file_states([path]).get(path)

    def file_states(self, paths: Sequence[str]) -> dict[str, FileState]:
        """`file_state` of each of these paths that has a row, a statement per IN_BATCH paths (a statement a
        path cost a rescan of 2,000 unchanged files 26 ms of its 0.5 s)."""
        rows = self._rows_in("""SELECT path, size, mtime_ns, sha256, status, doc_id, vanished, real_path, reason,
                                readers FROM files WHERE path IN ({})""", paths)
        return {row[0]: FileState(row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8] or "", row[9])
                for row in rows}

    def live_path_for_real(self, real_path: str) -> str | None:
        """The path under which a live row already holds the file whose real path is `real_path`."""
        row = self._conn.execute("SELECT path FROM files WHERE real_path = ? AND vanished = 0 LIMIT 1",
                                 (real_path,)).fetchone()
        return None if row is None else str(row[0])

    def set_real_paths(self, pairs: Iterable[tuple[str, str]]) -> None:
        """(path, real path) of rows just written."""
        with self.transaction():
            self._conn.executemany("UPDATE files SET real_path = ? WHERE path = ?", ((r, p) for p, r in pairs))

    def mark_seen(self, run_id: int, paths: Iterable[str]) -> list[tuple[str, str, str]]:
        """Files found unchanged in this run, and the members of those that are containers: seen, and no
        longer vanished. Returns (path, status, reason) of those members that are not simply read (errors,
        skips, too short, partial): a rescan lists them as the first scan did."""
        revived = 0
        paths = list(paths)
        members = _MEMBERS_OF.format(path="m.path", of="s.column1")
        issues: list[tuple[str, str, str]] = []
        with self.transaction():
            # the files, then their members (`path!/...`: a range of the path index for each file), a statement
            # a batch of files (a statement a file cost a rescan of 2,000 unchanged files 13-16 ms)
            for chunk in chunks(paths):
                marks = ",".join("?" * len(chunk))
                of_members = (f"SELECT m.path FROM (VALUES {','.join(['(?)'] * len(chunk))}) s "
                              f"JOIN files m ON {members}")
                for where in (f"path IN ({marks})", f"path IN ({of_members})"):
                    revived += self._conn.execute(f"UPDATE files SET vanished = 0 WHERE vanished = 1 AND {where}",
                                                  chunk).rowcount
                    self._conn.execute(f"UPDATE files SET seen_run = ? WHERE {where}", (run_id, *chunk))
                issues += self._conn.execute(
                    f"""SELECT path, status, coalesce(reason, '') FROM files WHERE path IN ({of_members})
                        AND status NOT IN ('ok', 'ocr', 'container') ORDER BY path""", chunk).fetchall()
        self._changed |= revived > 0
        return issues

    def document_identity(self, sha256: str) -> DocumentIdentity | None:
        """How the document with this SHA-256 was read, if indexed: a new copy of it is recorded the same.

        The status and reason are its files' (a file may be `partial` while its document is `ok`)."""
        row = self._conn.execute(
            f"""SELECT coalesce(f.status, d.status), coalesce(f.reason, ''), d.extractor, d.mime,
                      EXISTS (SELECT 1 FROM files m WHERE {_MEMBERS_OF.format(path="m.path", of="f.path")})
               FROM documents d LEFT JOIN files f ON f.doc_id = d.id
               WHERE d.sha256 = ? ORDER BY f.vanished LIMIT 1""", (sha256,)).fetchone()
        return None if row is None else DocumentIdentity(row[0], row[1], row[2], row[3], bool(row[4]))

    def doc_ids_at(self, path: str) -> list[int]:
        """The documents held under a file path (a file checked and added earlier)."""
        return [int(r[0]) for r in self._conn.execute(
            "SELECT doc_id FROM files WHERE path = ? AND doc_id IS NOT NULL", (path,))]

    # ---- watch state (migration "watch_state"): what a watch checked, so a restart catches up ----

    def watched_files(self, roots: Sequence[str]) -> dict[str, tuple[int, int]]:
        """path -> (size, mtime_ns) of every file checked under `roots`."""
        marks = ",".join("?" * len(roots))
        rows = self._conn.execute(f"SELECT path, size, mtime_ns FROM watch_state WHERE root IN ({marks})",
                                  tuple(roots))
        return {row[0]: (row[1], row[2]) for row in rows}

    def watched_file(self, path: str) -> tuple[int, int] | None:
        row = self._conn.execute("SELECT size, mtime_ns FROM watch_state WHERE path = ?", (path,)).fetchone()
        return None if row is None else (row[0], row[1])

    def put_watched_file(self, path: str, root: str, size: int, mtime_ns: int, sha256: str, checked: float,
                         alerted: bool) -> None:
        with self.transaction():
            self._conn.execute(
                """INSERT INTO watch_state (path, root, size, mtime_ns, sha256, checked, alerted)
                   VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(path) DO UPDATE SET root = excluded.root, size = excluded.size,
                       mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, checked = excluded.checked,
                       alerted = excluded.alerted""",
                (path, root, size, mtime_ns, sha256, checked, int(alerted)))

    def forget_watched_files(self, paths: Iterable[str]) -> None:
        with self.transaction():
            self._conn.executemany("DELETE FROM watch_state WHERE path = ?", ((p,) for p in paths))

    def doc_id_for_sha256(self, sha256: str) -> int | None:
        row = self._conn.execute("SELECT id FROM documents WHERE sha256 = ?", (sha256,)).fetchone()
        return None if row is None else int(row[0])

    def add_document(self, doc: NewDocument) -> int:
        """Insert a document with its sketch and postings; an existing sha256 is reused, never duplicated."""
        return self.add_documents([doc])[0]

    def add_documents(self, docs: Sequence[NewDocument]) -> list[int]:
        """`add_document` for many: postings of the batch are inserted in fingerprint order,
        which keeps B-tree writes local (about a third faster than document by document)."""
        ids: list[int] = []
        fp_parts: list[np.ndarray] = []
        id_parts: list[np.ndarray] = []
        with self.transaction():
            for doc in docs:
                existing = self.doc_id_for_sha256(doc.sha256)
                if existing is not None:
                    ids.append(existing)
                    continue
                fps = distinct(doc.fingerprints)
                cur = self._conn.execute(
                    """INSERT INTO documents (sha256, size, status, extractor, mime, n_tokens, n_shingles, n_fps,
                           text_length, lexical_digest, shingle_digest, text, page_starts, places)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (doc.sha256, doc.size, doc.status, doc.extractor, doc.mime, doc.n_tokens, doc.n_shingles,
                     int(fps.shape[0]), doc.text_length, doc.lexical_digest, doc.shingle_digest, doc.text_z,
                     json.dumps(list(doc.page_starts)), json.dumps([list(place) for place in doc.places])))
                doc_id = _inserted_id(cur)
                self._conn.execute("INSERT INTO sketches (doc_id, blob) VALUES (?, ?)", (doc_id, doc.sketch_blob))
                ids.append(doc_id)
                fp_parts.append(fps.view(np.int64))
                id_parts.append(np.full(fps.shape[0], doc_id, dtype=np.int64))
            self._insert_postings(fp_parts, id_parts)
        return ids

    def _insert_postings(self, fp_parts: list[np.ndarray], id_parts: list[np.ndarray]) -> None:
        """Postings (fingerprints as int64, their documents) into the buffer in fingerprint order; in a transaction."""
        if not fp_parts:
            return
        fps = np.concatenate(fp_parts)
        owners = np.concatenate(id_parts)
        order = np.lexsort((owners, fps))
        before = self.buffered_postings()
        self._conn.executemany("INSERT OR IGNORE INTO postings_buffer (fp, doc_id) VALUES (?, ?)",
                               zip(fps[order].tolist(), owners[order].tolist()))
        self._buffered = before + int(fps.shape[0])
        if self._buffered >= self.postings_buffer_rows:
            self._seal_buffer()

    # ---- re-sketching an index made by an earlier algorithm version ----------

    def stored_texts(self, batch: int = 256) -> Iterator[list[tuple[int, str | None]]]:
        """Every document's id and stored text (None if it was scanned with --no-text), in batches by id."""
        last = 0
        while True:
            rows = self._conn.execute("SELECT id, text FROM documents WHERE id > ? ORDER BY id LIMIT ?",
                                      (last, batch)).fetchall()
            if not rows:
                return
            last = int(rows[-1][0])
            yield [(int(doc_id), None if z is None else self._read_text(z)) for doc_id, z in rows]

    def clear_postings(self) -> None:
        """Drop every posting (buffer and segments): the first step of re-sketching every document."""
        with self.transaction():
            self._conn.execute("DELETE FROM postings_buffer")
            self._buffered = 0
            for sid, _, _ in self.postings_segments():
                self._conn.execute(f"DROP TABLE postings_s{sid}")
            self._conn.execute("DELETE FROM postings_segments")
            self._rebuild_postings_view()
            self.filters.reset()

    def replace_sketches(self, sketches: Sequence[tuple[int, Sketch, np.ndarray]]) -> None:
        """New sketch, counts, digests and postings (distinct winnowed fingerprints) of existing documents."""
        fp_parts: list[np.ndarray] = []
        id_parts: list[np.ndarray] = []
        with self.transaction():
            self._changed = True
            for doc_id, sketch, fingerprints in sketches:
                fps = distinct(fingerprints)
                self._conn.execute(
                    """UPDATE documents SET n_tokens = ?, n_shingles = ?, n_fps = ?, lexical_digest = ?,
                           shingle_digest = ? WHERE id = ?""",
                    (sketch.n_tokens, sketch.n_shingles, int(fps.shape[0]), sketch.lexical_digest,
                     sketch.shingle_digest, doc_id))
                self._conn.execute("UPDATE sketches SET blob = ? WHERE doc_id = ?", (sketch.to_bytes(), doc_id))
                fp_parts.append(fps.view(np.int64))
                id_parts.append(np.full(fps.shape[0], doc_id, dtype=np.int64))
            self._insert_postings(fp_parts, id_parts)

    def forget_documents(self, doc_ids: Sequence[int], reason: str) -> None:
        """Documents that cannot be re-sketched (no stored text) go; their files' rows stay, marked
        `stale` with `reason` and with no known mtime, so the next scan that reaches them reads them again."""
        with self.transaction():
            self._changed = True
            for chunk in chunks(list(doc_ids)):
                marks = ",".join("?" * len(chunk))
                self._conn.execute(f"DELETE FROM passage_pairs WHERE doc_a IN ({marks}) OR doc_b IN ({marks})",
                                   (*chunk, *chunk))
                self._conn.execute(f"DELETE FROM passage_aligned WHERE doc_id IN ({marks})", chunk)
                self._conn.execute(f"""UPDATE files SET doc_id = NULL, mtime_ns = -1, status = 'stale', reason = ?
                                       WHERE doc_id IN ({marks})""", (reason, *chunk))
                self._conn.execute(f"DELETE FROM sketches WHERE doc_id IN ({marks})", chunk)
                self._conn.execute(f"DELETE FROM documents WHERE id IN ({marks})", chunk)

    def mark_current(self) -> None:
        """Record that this version's algorithm made every sketch (after re-sketching; `stale` is
        cleared once the caller's transaction has committed)."""
        with self.transaction():
            self._conn.execute("UPDATE meta SET value = ? WHERE key = 'sketch_key'",
                               (self._params.sketch_key().hex(),))
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('resketched', ?)", (json.dumps(
                {"scanner_version": __version__, "algorithm": ALGORITHM_VERSION, "time": time.time()}),))
        if not self._in_tx:
            self.stale = False

    # ---- postings segments -------------------------------------------------

    def buffered_postings(self) -> int:
        if self._buffered is None:
            self._buffered = int(self._conn.execute("SELECT count(*) FROM postings_buffer").fetchone()[0])
        return self._buffered

    def postings_segments(self) -> list[tuple[int, int, int]]:
        """(id, level, rows) of every sealed segment, oldest first."""
        return [tuple(r) for r in self._conn.execute(
            "SELECT id, level, rows FROM postings_segments ORDER BY id")]

    def seal_postings(self) -> None:
        """Seal the buffered postings into a segment (the end of a scan): `check` looks every anchor of a
        query up in the buffer, but in the segments only those their filter lets through, so a buffer left
        holding 278,000 postings cost each check 1.3 ms (of 22) on the benchmark index; sealing 362,000 costs
        a scan 0.2 s once."""
        if self.buffered_postings() == 0:
            return
        with self.transaction():
            self._seal_buffer()

    def _seal_buffer(self) -> None:
        """Write the buffer out as a level-0 segment, then merge full levels; inside the caller's transaction."""
        rows = int(self._conn.execute("SELECT count(*) FROM postings_buffer").fetchone()[0])
        if rows == 0:
            return
        sealed = self._new_segment(0, rows, ["postings_buffer"])
        self.filters.add(f"postings_s{sealed}", rows, *self._segment_tables())  # merging changes no fingerprint
        self._conn.execute("DELETE FROM postings_buffer")
        self._buffered = 0
        level = 0
        while True:
            same = [(sid, n) for sid, lvl, n in self.postings_segments() if lvl == level]
            if len(same) < SEGMENT_FAN_IN:
                break
            self._new_segment(level + 1, sum(n for _, n in same), [f"postings_s{sid}" for sid, _ in same])
            for sid, _ in same:
                self._conn.execute(f"DROP TABLE postings_s{sid}")
                self._conn.execute("DELETE FROM postings_segments WHERE id = ?", (sid,))
            level += 1
        self._rebuild_postings_view()

    def _segment_tables(self) -> tuple[list[str], int]:
        """The segments' tables and their postings in all."""
        segments = self.postings_segments()
        return [f"postings_s{sid}" for sid, _, _ in segments], sum(rows for _, _, rows in segments)

    def _new_segment(self, level: int, rows: int, sources: Sequence[str]) -> int:
        """A new segment table filled from `sources` in key order: an append-only B-tree build."""
        sid = _inserted_id(self._conn.execute("INSERT INTO postings_segments (level, rows, created) VALUES (?, ?, ?)",
                                              (level, rows, time.time())))
        self._conn.execute(f"""CREATE TABLE postings_s{sid} (fp INTEGER NOT NULL, doc_id INTEGER NOT NULL,
                               PRIMARY KEY (fp, doc_id)) WITHOUT ROWID""")
        union = " UNION ALL ".join(f"SELECT fp, doc_id FROM {table}" for table in sources)
        self._conn.execute(f"INSERT INTO postings_s{sid} SELECT fp, doc_id FROM ({union}) ORDER BY fp, doc_id")
        return sid

    def _rebuild_postings_view(self) -> None:
        """`postings` = the buffer and every segment; one statement reads one consistent snapshot of them."""
        tables = ["postings_buffer"] + [f"postings_s{sid}" for sid, _, _ in self.postings_segments()]
        self._conn.execute("DROP VIEW IF EXISTS postings")
        self._conn.execute("CREATE VIEW postings AS " +
                           " UNION ALL ".join(f"SELECT fp, doc_id FROM {table}" for table in tables))

    def put_file(self, record: FileRecord, *, status: str, readers: int, reason: str = "", extractor: str = "",
                 doc_id: int | None = None, run_id: int | None = None) -> None:
        """Insert or replace the row of `record.path`: the file's 'done' mark. `readers`: the version of the
        readers that read it; a file of known content keeps the oldest version its document's files have,
        since it takes that document's text as first read."""
        with self.transaction():
            self._changed = True
            self._conn.execute(
                """INSERT INTO files (path, size, mtime_ns, sha256, mime, status, reason, extractor,
                       seen_run, vanished, doc_id, readers)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?,
                           min(?, coalesce((SELECT min(readers) FROM files WHERE doc_id = ? AND path != ?), ?)))
                   ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
                       sha256 = excluded.sha256, mime = excluded.mime, status = excluded.status,
                       reason = excluded.reason, extractor = excluded.extractor,
                       seen_run = excluded.seen_run, vanished = 0, doc_id = excluded.doc_id,
                       readers = excluded.readers""",
                (record.path, record.size, record.mtime_ns, record.sha256, record.mime, status, reason,
                 extractor, run_id, doc_id, readers, doc_id, record.path, readers))

    def readers_of_live_files(self, before: int) -> list[tuple[str, int, int]]:
        """(MIME type, readers' version, count) of the files still present that readers older than `before`
        read."""
        return [(mime, version, count) for mime, version, count in self._conn.execute(
            "SELECT mime, readers, count(*) FROM files WHERE vanished = 0 AND readers < ? GROUP BY mime, readers",
            (before,))]

    def containers_with_members_read_before(self, before: int, statuses: Collection[str]) -> set[str]:
        """The paths of the top-level files (archives, mail...) holding a present member, at any depth, that
        readers older than `before` left with one of `statuses` and no document."""
        marks = ",".join("?" * len(statuses))
        rows = self._conn.execute(
            f"""SELECT DISTINCT substr(path, 1, instr(path, ?) - 1) FROM files
                WHERE readers < ? AND vanished = 0 AND doc_id IS NULL AND status IN ({marks})
                AND instr(path, ?) > 0""", (MEMBER_SEPARATOR, before, *statuses, MEMBER_SEPARATOR))
        return {str(row[0]) for row in rows}

    def mark_vanished(self, run_id: int, roots: Sequence[str], real_roots: Sequence[str] = ()) -> int:
        """Files under `roots` not seen in this run are marked vanished (kept as evidence); so are files
        whose real path lies under `real_roots` (rows kept under another spelling of the same folder)."""
        total = 0
        with self.transaction():
            for column, root in [("path", r) for r in roots] + [("real_path", r) for r in real_roots]:
                # under a folder, or inside a container given as a root (`archive.zip!/...`)
                for prefix in (root.rstrip("/") + "/", root + MEMBER_SEPARATOR):
                    cur = self._conn.execute(
                        f"""UPDATE files SET vanished = 1 WHERE vanished = 0 AND (seen_run IS NULL OR seen_run != ?)
                            AND ({column} = ? OR substr({column}, 1, ?) = ?)""",
                        (run_id, root, len(prefix), prefix))
                    total += cur.rowcount
            self._changed |= total > 0
        return total

    def add_alert(self, path: str, sha256: str, matches: list[dict[str, Any]], when: float | None = None, *,
                  severity: str = "", sources: str = "") -> int:
        with self.transaction():
            cur = self._conn.execute(
                """INSERT INTO alerts (time, path, sha256, matches_json, paths_json, severity, sources)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (time.time() if when is None else when, path, sha256, json.dumps(matches, ensure_ascii=False),
                 json.dumps([path], ensure_ascii=False), severity, sources))
            return _inserted_id(cur)

    def alert_group(self, sha256: str, sources: str) -> Alert | None:
        """The alert already raised for this content and these protected sources, if any."""
        rows = self._alert_rows("WHERE sha256 = ? AND sources = ? ORDER BY id LIMIT 1", (sha256, sources))
        return rows[0] if rows else None

    def add_alert_paths(self, alert_id: int, paths: Sequence[str]) -> tuple[str, ...]:
        """Add copies to an alert group; returns the paths that were new to it."""
        with self.transaction():
            row = self._conn.execute("SELECT paths_json FROM alerts WHERE id = ?", (alert_id,)).fetchone()
            known = json.loads(row[0]) if row else []
            new = tuple(dict.fromkeys(p for p in paths if p not in known))
            if new:
                self._conn.execute("UPDATE alerts SET paths_json = ? WHERE id = ?",
                                   (json.dumps(known + list(new), ensure_ascii=False), alert_id))
            return new

    def set_alert_review(self, alert_id: int, review: str) -> None:
        if review not in ALERT_REVIEWS:
            raise ValueError(f"review must be one of {', '.join(ALERT_REVIEWS)}")
        with self.transaction():
            self._conn.execute("UPDATE alerts SET review = ? WHERE id = ?", (review, alert_id))

    def alerts(self, limit: int | None = None) -> list[Alert]:
        """Alert groups, newest first."""
        return self._alert_rows("ORDER BY id DESC" + (" LIMIT ?" if limit else ""), (limit,) if limit else ())

    def _alert_rows(self, tail: str, args: tuple[Any, ...]) -> list[Alert]:
        sql = f"SELECT id, time, path, sha256, matches_json, paths_json, severity, sources, review FROM alerts {tail}"
        return [Alert(r[0], r[1], r[2], r[3], json.loads(r[4]), tuple(json.loads(r[5])), r[6], r[7], r[8])
                for r in self._conn.execute(sql, args).fetchall()]

    # ---- reading -----------------------------------------------------------

    def files(self, *, include_vanished: bool = True) -> Iterator[FileRow]:
        sql = ("SELECT path, size, mtime_ns, sha256, mime, status, reason, extractor, vanished, doc_id "
               "FROM files" + ("" if include_vanished else " WHERE vanished = 0") + " ORDER BY path")
        for r in self._conn.execute(sql):
            yield FileRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9])

    def file_sizes(self, sha256s: Iterable[str]) -> dict[str, int]:
        """Size of the live files holding each content (through the sha256 index: a first screen names
        a few thousand files of an index of any size)."""
        return dict(self._rows_in("SELECT sha256, max(size) FROM files WHERE vanished = 0 AND sha256 IN ({})"
                                  " GROUP BY sha256", sorted(set(sha256s))))

    def document(self, doc_id: int) -> DocumentInfo:
        return self.documents_of([doc_id])[int(doc_id)]

    def documents_of(self, doc_ids: Sequence[int]) -> dict[int, DocumentInfo]:
        """`document` of each of these, from two queries (`check` reads its matches' at once: two statements
        a match cost ~0.1 ms each); an `IndexStoreError` for an id the index does not hold."""
        ids = sorted({int(d) for d in doc_ids})
        rows = {row[0]: row[1:] for row in self._rows_in(
            """SELECT id, sha256, size, mime, n_tokens, text_length, status, extractor, lexical_digest,
                      shingle_digest, page_starts, text IS NOT NULL, places FROM documents WHERE id IN ({})""", ids)}
        missing = [d for d in ids if d not in rows]
        if missing:
            raise IndexStoreError(f"no document {missing[0]} in index {self.path}")
        files: dict[int, list[tuple[str, int]]] = {d: [] for d in ids}
        for doc_id, path, mtime_ns in self._rows_in(
                f"""SELECT doc_id, path, mtime_ns FROM files WHERE doc_id IN ({{}})
                    ORDER BY doc_id, vanished, instr(path, '{MEMBER_SEPARATOR}') > 0, path""", ids):
            files[doc_id].append((path, mtime_ns))
        return {doc_id: DocumentInfo(
            doc_id=doc_id, paths=tuple(f[0] for f in files[doc_id]), sha256=row[0], size=row[1],
            mtime_ns=files[doc_id][0][1] if files[doc_id] else 0, mime=row[2], n_tokens=row[3],
            text_length=row[4], status=row[5], extractor=row[6], lexical_digest=row[7], shingle_digest=row[8],
            page_starts=tuple(json.loads(row[9])), has_text=bool(row[10]),
            places=tuple((int(start), int(end), str(label)) for start, end, label in json.loads(row[11])))
            for doc_id, row in rows.items()}

    def document_ids(self, *, live_only: bool = True, status: str | None = "ok") -> list[int]:
        sql = "SELECT DISTINCT d.id FROM documents d"
        where = []
        if live_only:
            sql += " JOIN files f ON f.doc_id = d.id"
            where.append("f.vanished = 0")
        args: list[Any] = []
        if status is not None:
            where.append("d.status = ?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [r[0] for r in self._conn.execute(sql + " ORDER BY d.id", args)]

    def text(self, doc_id: int) -> str | None:
        return self.texts([doc_id])[0]

    def texts(self, doc_ids: Sequence[int]) -> list[str | None]:
        """`text` of each of these documents, in their order, from one query (`check` reads its 50
        candidates': a statement each cost ~0.4 ms more)."""
        found = dict(self._rows_in("SELECT id, text FROM documents WHERE id IN ({})", [int(d) for d in doc_ids]))
        missing = [d for d in doc_ids if int(d) not in found]
        if missing:
            raise IndexStoreError(f"no document {missing[0]} in index {self.path}")
        return [None if (blob := found[int(d)]) is None else self._read_text(blob) for d in doc_ids]

    def sketch(self, doc_id: int) -> Sketch:
        row = self._conn.execute("SELECT blob FROM sketches WHERE doc_id = ?", (doc_id,)).fetchone()
        if row is None:
            raise IndexStoreError(f"no sketch for document {doc_id} in index {self.path}")
        return Sketch.from_bytes(row[0])

    def sketches(self, doc_ids: Sequence[int]) -> dict[int, Sketch]:
        out: dict[int, Sketch] = {}
        for doc_id, blob in self._rows_in("SELECT doc_id, blob FROM sketches WHERE doc_id IN ({})", doc_ids):
            out[doc_id] = Sketch.from_bytes(blob)
        return out

    def sha256s(self, doc_ids: Sequence[int]) -> dict[int, str]:
        """The SHA-256 of each of these documents (what ties between them are broken by: `content_ranks`)."""
        return dict(self._rows_in("SELECT id, sha256 FROM documents WHERE id IN ({})", list(doc_ids)))

    def first_by_content(self, doc_ids: Sequence[int], count: int) -> dict[int, str]:
        """The `count` of these documents whose SHA-256 come first, with it, in that order: SQLite sorts each
        batch and hands over its first `count` only (a query's candidates tied at its cut reach 2,300 documents
        of a 100,000-document index; made Python rows and sorted, they took ~7 ms, ~2.7 so)."""
        if count <= 0:
            return {}
        rows = self._rows_in("SELECT id, sha256 FROM documents WHERE id IN ({}) ORDER BY sha256 LIMIT ?",
                             list(doc_ids), (int(count),))
        return dict(sorted(rows, key=lambda row: row[1])[:count])

    def content_ranks(self) -> np.ndarray:
        """Each document's rank among all documents by SHA-256, indexed by id (-1 for an id not in use).
        Ids follow the order a scan's workers finished their files, so a tie broken by id would make the
        same folder give other findings in another scan; broken by this rank, it gives the same."""
        ids = np.asarray([r[0] for r in self._conn.execute("SELECT id FROM documents ORDER BY sha256")],
                         dtype=np.int64)
        ranks = np.full(int(ids.max()) + 1 if ids.shape[0] else 0, -1, dtype=np.int64)
        ranks[ids] = np.arange(ids.shape[0], dtype=np.int64)
        return ranks

    def document_count(self, status: str | None = "ok") -> int:
        if status is None:
            return int(self._conn.execute("SELECT count(*) FROM documents").fetchone()[0])
        return int(self._conn.execute("SELECT count(*) FROM documents WHERE status = ?", (status,)).fetchone()[0])

    def candidates(self, fps: np.ndarray, max_doc_share: float | None = None,
                   top: int | None = None) -> list[tuple[int, int]]:
        """(doc_id, shared fingerprint count) of documents sharing any of `fps`, most shared first (ties by id).

        Fingerprints found in more than `max_doc_share` of the documents (when
        there are at least COMMON_MIN_DOCS of them) are ignored, as Broder
        ignored very common shingles. `top`: only the documents sharing at least as many as the top-th
        (a query's anchors reach a thousand documents of a 100,000-document index; it keeps 50).
        """
        values = to_signed(distinct(fps))
        if not values:
            return []
        limit = None if max_doc_share is None else self.common_limit(max_doc_share, self.document_count(None))
        fp_arr, doc_arr = self._postings_of(values, with_fps=limit is not None)
        if limit is not None:
            _, inverse, counts = np.unique(fp_arr, return_inverse=True, return_counts=True)
            doc_arr = doc_arr[counts[inverse.reshape(-1)] <= limit]
        if doc_arr.shape[0] == 0:
            return []
        docs, counts = np.unique(doc_arr, return_counts=True)
        order = np.lexsort((docs, -counts))
        if top is not None and order.shape[0] > top:
            order = order[counts[order] >= counts[order[top - 1]]]
        return list(zip(docs[order].tolist(), counts[order].tolist()))

    def _postings_of(self, values: list[int], with_fps: bool) -> tuple[np.ndarray, np.ndarray]:
        """(fingerprints, documents) of the postings of these fingerprints (fingerprints empty unless
        `with_fps`). Each is looked up in the buffer; in the segments, only those the segments' filter does
        not rule out (9 in 10 of a query's anchors are in no document, and a look-up that finds nothing
        still costs a B-tree descent). Read as text SQLite joins and numpy parses, not a tuple a row."""
        columns = "group_concat(fp, ' '), group_concat(doc_id, ' ')" if with_fps else "'', group_concat(doc_id, ' ')"
        parts: list[tuple[str | None, str | None]] = []
        with self._snapshot():
            held = self.filters.current()
            if held is None:
                parts += self._rows_in(f"SELECT {columns} FROM postings WHERE fp IN ({{}})", values)
            else:
                # the buffer, unless empty (as after a scan, which seals it): looking ~2,000 anchors up in an
                # empty table still costs ~0.5 ms
                if self._conn.execute("SELECT EXISTS (SELECT 1 FROM postings_buffer)").fetchone()[0]:
                    parts += self._rows_in(f"SELECT {columns} FROM postings_buffer WHERE fp IN ({{}})", values)
                asked = np.asarray(values, dtype=np.int64)
                kept = asked[held.may_hold(asked)].tolist()
                for table in self._segment_tables()[0]:
                    parts += self._rows_in(f"SELECT {columns} FROM {table} WHERE fp IN ({{}})", kept)
        arrays = [(np.fromstring(fps or "", dtype=np.int64, sep=" "), np.fromstring(docs, dtype=np.int64, sep=" "))
                  for fps, docs in parts if docs is not None]
        if not arrays:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        return np.concatenate([a for a, _ in arrays]), np.concatenate([b for _, b in arrays])

    def nearest_in_meaning(self, vector: np.ndarray, count: int, key: dict[str, object]) -> list[int]:
        """Documents nearest a document vector by meaning (issue 21; `MeaningTable.nearest`)."""
        return self.meaning.nearest(vector, count, key)

    def meaning_search(self, key: dict[str, object]) -> Callable[[np.ndarray, int], list[int]]:
        """`nearest_in_meaning` whose reads of this connection are done now, and whose search, returned, may
        run while another thread uses the connection (`MeaningTable.searcher`)."""
        return self.meaning.searcher(key)

    def read_meaning_ahead(self) -> None:
        """A search by meaning is coming: a reader starts reading the vectors on a thread
        (`MeaningTable.read_ahead`)."""
        self.meaning.read_ahead()

    def sentence_vectors(self, doc_id: int, key: dict[str, object]) -> QuantizedVectors | None:
        """A document's stored sentence vectors, when made as `key` says (`MeaningTable.sentences`)."""
        return self.meaning.sentences(doc_id, key)

    def sentence_vectors_of(self, doc_ids: Sequence[int], key: dict[str, object]) -> dict[int, QuantizedVectors]:
        """`sentence_vectors` of many documents in one read (`MeaningTable.sentences_of`)."""
        return self.meaning.sentences_of(doc_ids, key)

    def common_limit(self, share: float, n_docs: int) -> int | None:
        """Document frequency above which a fingerprint is 'very common' (None: no limit)."""
        if n_docs < COMMON_MIN_DOCS:
            return None
        return min(max(COMMON_FLOOR, int(share * n_docs)), COMMON_MAX_DOCS)

    # issue 9 (scale): the same <id,id,count> as pair_counts, from numpy in fp ranges with spill buckets
    def pair_count_arrays(self, common_share: float,
                          **options: Any) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(a, b, shared) arrays, bucket by bucket, equal to `pair_counts` (scanner/index/pairs.py)."""
        from scanner.index.pairs import pair_count_arrays

        live, limit = self.pairing_inputs(common_share)
        return pair_count_arrays(self._conn, live, limit, self.total_postings(), **options)

    def common_fingerprints(self, common_share: float, base: np.ndarray | None = None) -> np.ndarray:
        """Sorted uint64 fingerprints too common to pair documents (held by more than `common_limit`; `base`:
        base text's fingerprints, as `pair_count_arrays` takes them, which are neither)."""
        from scanner.index.pairs import common_fingerprints

        live, limit = self.pairing_inputs(common_share)
        if limit is None:
            return np.empty(0, dtype=np.uint64)
        return np.sort(common_fingerprints(self._conn, limit, self.total_postings(), base=base).view(np.uint64))

    def common_held(self, common_share: float, size: int, **options: Any) -> np.ndarray:
        """Each live document's fingerprints too common to pair, by id (`size` ids): in one more reading of
        the postings, for callers that count the pairs elsewhere (`pair_count_arrays(common_held=...)`
        counts them in its own reading); `options`: `base` and `base_held`, as `pair_count_arrays`."""
        from scanner.index.pairs import common_held_counts

        live, limit = self.pairing_inputs(common_share)
        return common_held_counts(self._conn, live, limit, self.total_postings(), size, **options)

    def pairing_inputs(self, common_share: float) -> tuple[np.ndarray, int | None]:
        """The sorted ids of documents that may pair (live files, status ok) and the very-common limit."""
        live = np.asarray([r[0] for r in self._conn.execute(
            """SELECT DISTINCT f.doc_id FROM files f JOIN documents d ON d.id = f.doc_id
               WHERE f.vanished = 0 AND d.status = 'ok' ORDER BY f.doc_id""")], dtype=np.int64)
        return live, self.common_limit(common_share, int(live.shape[0]))

    def total_postings(self) -> int:
        return int(self._conn.execute("SELECT coalesce(sum(n_fps), 0) FROM documents").fetchone()[0])

    def pair_counts(self, common_share: float) -> Iterator[PairCount]:
        """Broder's <shingle,id> -> <id,id,count> in SQL, over live 'ok' documents.

        Only fingerprints held by 2..limit live documents take part; the GROUP BY
        runs in SQLite's (disk-backed) sorter, so memory stays bounded.
        """
        conn = self._conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS pair_live (doc_id INTEGER PRIMARY KEY)")
        conn.execute("""CREATE TEMP TABLE IF NOT EXISTS pair_postings (fp INTEGER NOT NULL, doc_id INTEGER NOT NULL,
                        PRIMARY KEY (fp, doc_id)) WITHOUT ROWID""")
        conn.execute("DELETE FROM temp.pair_live")
        conn.execute("DELETE FROM temp.pair_postings")
        conn.execute("""INSERT INTO temp.pair_live SELECT DISTINCT f.doc_id FROM files f
                        JOIN documents d ON d.id = f.doc_id WHERE f.vanished = 0 AND d.status = 'ok'""")
        n_live = int(conn.execute("SELECT count(*) FROM temp.pair_live").fetchone()[0])
        limit = self.common_limit(common_share, n_live)
        # one pass over postings in primary-key (fp) order: document frequency by a window,
        # shared and not-too-common fingerprints of live documents kept, appended in order
        conn.execute(
            """INSERT INTO temp.pair_postings SELECT fp, doc_id FROM (
                   SELECT fp, doc_id, count(*) OVER (PARTITION BY fp) AS df FROM postings)
               WHERE df BETWEEN 2 AND ? AND doc_id IN temp.pair_live""",
            (limit if limit is not None else 2**62,))
        cur = conn.execute(
            """SELECT a.doc_id, b.doc_id, count(*) FROM temp.pair_postings a
               JOIN temp.pair_postings b ON b.fp = a.fp AND b.doc_id > a.doc_id
               GROUP BY a.doc_id, b.doc_id""")
        try:
            for a, b, shared in cur:
                yield PairCount(a, b, shared)
        finally:
            cur.close()
            conn.execute("DELETE FROM temp.pair_postings")

    def lexical_representatives(self) -> dict[int, int]:
        """doc_id -> the lowest id with the same canonical text, for live documents sharing it with another."""
        rows = self._conn.execute(
            """WITH live AS (SELECT DISTINCT d.id, d.lexical_digest FROM documents d
                             JOIN files f ON f.doc_id = d.id WHERE f.vanished = 0)
               SELECT id, lexical_digest FROM live WHERE lexical_digest IN (
                   SELECT lexical_digest FROM live GROUP BY lexical_digest HAVING count(*) > 1)
               ORDER BY id""")
        first: dict[str, int] = {}
        return {doc_id: first.setdefault(digest, doc_id) for doc_id, digest in rows}

    def fingerprint_counts(self) -> np.ndarray:
        """n_fps[doc_id] for every document (0 for ids not in use)."""
        top = int(self._conn.execute("SELECT coalesce(max(id), 0) FROM documents").fetchone()[0])
        out = np.zeros(top + 1, dtype=np.int64)
        cur = self._conn.execute("SELECT id, n_fps FROM documents")
        while rows := cur.fetchmany(100_000):
            pairs = np.asarray(rows, dtype=np.int64)
            out[pairs[:, 0]] = pairs[:, 1]
        return out

    def documents_with_copies(self) -> set[int]:
        """Documents held by two or more live files (identical copies)."""
        return {r[0] for r in self._conn.execute(
            """SELECT doc_id FROM files WHERE vanished = 0 AND doc_id IS NOT NULL
               GROUP BY doc_id HAVING count(*) > 1""")}

    def live_files_of(self, doc_ids: Sequence[int]) -> list[tuple[str, str, int]]:
        """(path, sha256, doc_id) of the live files of these documents: files on disk before members of
        containers (the first one names the document), then by path."""
        return sorted(self._rows_in("SELECT path, sha256, doc_id FROM files WHERE vanished = 0 AND doc_id IN ({})",
                                    doc_ids), key=lambda row: (disk_first(row[0]), row[1:]))

    def documents_with_text(self, doc_ids: Sequence[int]) -> list[int]:
        """Those of `doc_ids` whose text is stored (not scanned with --no-text)."""
        return [r[0] for r in self._rows_in("SELECT id FROM documents WHERE text IS NOT NULL AND id IN ({})", doc_ids)]

    def token_counts(self, doc_ids: Sequence[int]) -> dict[int, int]:
        """doc_id -> canonical tokens, for these documents."""
        return dict(self._rows_in("SELECT id, n_tokens FROM documents WHERE id IN ({})", doc_ids))

    def _rows_in(self, sql: str, values: Sequence[Any], after: Sequence[Any] = ()) -> list[Any]:
        """Rows of `sql`, whose `{}` is an IN list, for all `values` (`batches.rows_in`)."""
        return rows_in(self._conn, sql, values, after)

    def identical_files_without_document(self) -> list[tuple[str, str]]:
        """(path, sha256) of live files with no document whose hash another such file shares, by path."""
        return self._conn.execute(
            """SELECT path, sha256 FROM files WHERE vanished = 0 AND doc_id IS NULL AND sha256 <> ''
                 AND sha256 IN (SELECT sha256 FROM files WHERE vanished = 0 AND doc_id IS NULL
                                GROUP BY sha256 HAVING count(*) > 1)
               ORDER BY path""").fetchall()

    def stats(self) -> IndexStats:
        q = lambda sql, *a: self._conn.execute(sql, a).fetchone()[0]  # noqa: E731
        status = dict(self._conn.execute(
            "SELECT status, count(*) FROM files WHERE vanished = 0 GROUP BY status ORDER BY status").fetchall())
        last = self._conn.execute(
            "SELECT id, started, finished, command, counts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        size = sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists())
        return IndexStats(
            path=str(self.path), schema_version=self.schema_version, size_bytes=size,
            files=q("SELECT count(*) FROM files"),
            files_live=q("SELECT count(*) FROM files WHERE vanished = 0"),
            files_vanished=q("SELECT count(*) FROM files WHERE vanished = 1"),
            documents=q("SELECT count(*) FROM documents"),
            documents_ok=q("SELECT count(*) FROM documents WHERE status = 'ok'"),
            documents_too_short=q("SELECT count(*) FROM documents WHERE status = 'too_short'"),
            documents_with_text=q("SELECT count(*) FROM documents WHERE text IS NOT NULL"),
            postings=q("SELECT count(*) FROM postings_buffer") +
            q("SELECT coalesce(sum(rows), 0) FROM postings_segments"),
            runs=q("SELECT count(*) FROM runs"),
            alerts=q("SELECT count(*) FROM alerts"),
            passage_tasks_left=q("SELECT coalesce(sum(json_extract(notes, '$.tasks')), 0) FROM passage_plan")
            - q("SELECT count(*) FROM passage_plan_done"),
            postings_filter=self.filters.summary(),
            semantic=self.meaning.summary(),
            file_status=status,
            last_run=None if last is None else {
                "id": last[0], "started": last[1], "finished": last[2], "command": last[3],
                "counts": json.loads(last[4]) if last[4] else None},
        )

    # ---- what the index's content gave (issue 20): passages and findings, read by every face ----

    @property
    def passages(self) -> PassageTable:
        return PassageTable(self._conn, self.transaction)

    def _second_connection(self) -> Callable[[], sqlite3.Connection] | None:
        """For a reader: how to open another connection to the same index, for what a thread reads while
        this one queries (None for the writer: its own open transaction may have changed what it reads)."""
        uri = self._reader_uri
        if uri is None:
            return None

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA mmap_size = {0 if self.media_note else _MMAP_BYTES}")
            return conn

        return connect

    @functools.cached_property
    def filters(self) -> FilterTable:
        """The Bloom filter of the postings segments (issue 16): one object an open index, which keeps it."""
        return FilterTable(self._conn, self.transaction, self._second_connection())

    @functools.cached_property
    def base(self) -> BaseTable:
        """The base texts (what no finding counts): one object an open index, which keeps their shingles."""
        return BaseTable(self._conn, self.transaction, compress_text, self._read_text, self.passages.forget)

    def base_text(self, params: Params) -> Base:
        """`BaseTable.prepared`: what `check` leaves out of a query."""
        return self.base.prepared(params)

    @functools.cached_property
    def meaning(self) -> MeaningTable:
        """Document vectors by meaning (issue 21): one table object an open index, which keeps what it read."""
        return MeaningTable(self._conn, self.transaction, self._second_connection())

    def generation(self) -> int:
        """A number that moves on whenever files or documents change: stored findings name the one they saw."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def stored_findings(self, key: str) -> str | None:
        row = self._conn.execute("SELECT findings FROM stored_findings WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def has_stored_findings(self, key: str) -> bool:
        """Whether findings are stored under `key`, without reading them (a large index's are megabytes)."""
        return self._conn.execute("SELECT 1 FROM stored_findings WHERE key = ?", (key,)).fetchone() is not None

    def store_findings(self, key: str, findings: str, generation: int) -> None:
        """Keep `findings` under `key`; those of earlier generations go (they describe content that is gone)."""
        with self.transaction():
            self._conn.execute("DELETE FROM stored_findings WHERE key NOT LIKE ?", (f"{generation}:%",))
            self._conn.execute("INSERT OR REPLACE INTO stored_findings (key, findings) VALUES (?, ?)", (key, findings))

    def integrity_check(self) -> str:
        return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])


# --------------------------------------------------------------------------
# parameters


def _stored_params(conn: sqlite3.Connection) -> Params | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'params'").fetchone()
    if row is None:
        return None
    try:
        return Params.from_dict(json.loads(row[0]))
    except (ValueError, TypeError) as exc:
        raise IndexStoreError(f"the parameters stored in the index cannot be read: {exc}") from exc


def _check_algorithm(conn: sqlite3.Connection, path: Path, stored: Params | None, accept_stale: bool) -> bool:
    """Whether an earlier algorithm version made the index's sketches (its stored key, which covers the
    version, no longer matches its parameters); refused unless the caller accepts that."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'sketch_key'").fetchone()
    stale = stored is not None and row is not None and row[0] != stored.sketch_key().hex()
    if stale and not accept_stale:
        raise ParameterMismatchError(
            f"index {path} holds sketches of an earlier scanner algorithm (this one is version {ALGORITHM_VERSION}); "
            f"run `scanner scan DIR --index {path}` once (any folder: the stored texts are re-sketched first), "
            f"or `scanner scan --rebuild ...` to start over")
    return stale


def _reconcile(path: Path, stored: Params | None, wanted: Params | None) -> Params:
    """The parameters to use: the caller's if compatible with the stored sketch fields."""
    if wanted is None:
        return stored or Params()
    if stored is not None and stored.sketch_key() != wanted.sketch_key():
        raise ParameterMismatchError(
            f"index {path} was built with other sketch parameters ({describe_difference(stored, wanted)}); "
            f"rebuild it with `scanner scan --rebuild ...`, or use another --index")
    return wanted
