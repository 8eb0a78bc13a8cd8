"""The scan service: crawl, extract and sketch in worker processes, index, find pairs.

Why it is built this way:

* extraction runs on hostile files, so it happens in worker processes, each
  with an address-space cap (RLIMIT_AS) and a wall-clock budget; a worker over
  budget is killed and replaced, its file is reported, and the scan goes on;
* each worker holds one small batch of files (up to 32 files or 2 MiB), so
  memory is bounded whatever the corpus size; it says which file it starts on,
  so the parent knows which file a hung or dead worker holds, and hands the
  batch's other files out again;
* a worker first hashes its batch and asks the parent which SHA-256s are not
  yet indexed (nor being extracted by another worker): copies are linked to the
  existing document without being extracted again; the texts of a batch are
  then sketched together in one set of numpy passes;
* the parent is the only writer and commits complete files in batches: a file's
  document, sketch, postings and file row share one transaction.
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np

from scanner.core.config import Params
from scanner.core.errors import ScannerError
from scanner.core.model import Extracted, FileRecord, TextStatus
from scanner.engine.cluster import ScoredPair, UnionFind, containments_from
from scanner.engine.sketch import sketch_and_winnow, theorem1_estimates
from scanner.index.store import Index, NewDocument, compress_text
from scanner.services.workers import WorkerProcess, serve_tasks
from scanner.sources.crawl import printable_realpath

MiB = 1024 * 1024
DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY = 2048 * MiB
_BATCH_FILES = 256  # files per index transaction
_BATCH_SECONDS = 2.0
_WORKER_BATCH_FILES = 32  # files per worker message: one hash round trip and one sketch pass for all
_WORKER_BATCH_BYTES = 2 * 1024 * 1024
_POLL = 0.1
_HASH_CHUNK = 1024 * 1024

# statuses reported under "errors"; the other non-text statuses go under "skipped"
ERROR_STATUSES = frozenset({TextStatus.ENCRYPTED.value, TextStatus.CORRUPT.value, TextStatus.TIMEOUT.value,
                            TextStatus.ERROR.value})
TEXT_STATUSES = frozenset({TextStatus.OK.value, TextStatus.TOO_SHORT.value})


# --------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class FileIssue:
    """A file that gave no usable text, with its one-line reason."""

    path: str
    status: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.status}: {self.reason}" if self.reason else self.status


@dataclass(frozen=True)
class ScanProgress:
    """Small progress message for a face (CLI bar, TUI worker)."""

    files_seen: int
    files_done: int
    bytes_seen: int
    bytes_done: int
    errors: int
    crawl_done: bool
    current: str = ""


@dataclass(frozen=True)
class ScanResult:
    run_id: int
    files_seen: int
    files_indexed: int  # new or changed files written with text (ok or too_short), copies included
    files_unchanged: int
    files_linked: int  # of files_indexed: copies of an already indexed SHA-256, not re-extracted
    files_vanished: int
    bytes_read: int
    seconds: float
    errors: tuple[FileIssue, ...]
    skipped: tuple[FileIssue, ...]
    too_short: tuple[str, ...]
    resketch: "Resketch | None" = None  # the index was made by an earlier algorithm version


@dataclass(frozen=True)
class Resketch:
    """What re-sketching an index made by an earlier algorithm version did."""

    documents: int  # re-sketched from their stored text
    forgotten: int  # scanned with --no-text: their files are read again when a scan reaches them


STALE_REASON = "sketched by an earlier scanner algorithm and no text stored (--no-text): read again by the next scan"


def resketch_index(index: Index, params: Params) -> Resketch:
    """Re-sketch every document of an index made by an earlier algorithm version from its stored text.

    One transaction: a crash leaves the index as it was, and the next scan starts over. Documents
    without stored text cannot be re-sketched; their files are read again by the scans that reach them.
    """
    done = 0
    forgotten: list[int] = []
    with index.transaction():
        index.clear_postings()
        for batch in index.stored_texts():
            stored = [(doc_id, text) for doc_id, text in batch if text is not None]
            forgotten.extend(doc_id for doc_id, text in batch if text is None)
            sketched = sketch_and_winnow([text for _, text in stored], params)
            index.replace_sketches([(doc_id, sketch, winnowed)
                                    for (doc_id, _), (sketch, (winnowed, _)) in zip(stored, sketched)])
            done += len(stored)
        index.forget_documents(forgotten, STALE_REASON)
        index.mark_current()
    index.stale = False  # committed
    return Resketch(done, len(forgotten))


@dataclass(frozen=True)
class Member:
    path: str
    sha256: str


@dataclass(frozen=True)
class Cluster:
    id: int
    kind: str  # "identical" | "lexical" | "near-duplicate"
    members: tuple[Member, ...]
    min_resemblance: float | None  # lowest scored resemblance linking it (None: equivalences only)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind,
                "members": [{"path": m.path, "sha256": m.sha256} for m in self.members]}


@dataclass(frozen=True)
class ContainmentFinding:
    contained: str
    container: str
    containment: float
    resemblance: float
    contained_sha256: str
    container_sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"contained": self.contained, "container": self.container,
                "containment": round(self.containment, 6)}


@dataclass(frozen=True)
class Findings:
    clusters: tuple[Cluster, ...]
    containments: tuple[ContainmentFinding, ...]
    pairs_considered: int
    pairs_scored: int
    threshold: float
    min_containment: float


# --------------------------------------------------------------------------
# worker side


@dataclass(frozen=True)
class _Outcome:
    """What one file gave: its record, a status, and a document when there is text."""

    record: FileRecord
    status: str
    reason: str
    extractor: str
    document: NewDocument | None = None


def sha256_file(path: str) -> str:
    """SHA-256 of the evidence, read-only and with O_NOATIME, so hashing leaves its atime alone."""
    from scanner.sources.extract.evidence import open_readonly

    digest = hashlib.sha256()
    fd = open_readonly(path)
    try:
        while chunk := os.read(fd, _HASH_CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def hash_or_reason(path: str) -> tuple[str, str]:
    """(sha256, "") or ("", why the file cannot be read)."""
    try:
        return sha256_file(path), ""
    except OSError as exc:
        return "", f"cannot read: {exc.strerror or exc}"


def extract_one(path: str, pm: Any, limits: Any = None) -> tuple[FileRecord, Extracted]:
    from scanner.sources.extract import extract_file

    record, extracted = extract_file(Path(path), pm) if limits is None else extract_file(Path(path), pm, limits)
    return replace(record, path=path), extracted


def process_files(paths: Sequence[str], pm: Any, params: Params, store_text: bool, limits: Any = None, *,
                  memory: int | None = None, on_start: Callable[[int], None] | None = None,
                  ) -> tuple[list[_Outcome | tuple[str, str] | None], bool]:
    """Extract each file, then sketch all their texts in one batch pass (runs in a worker).

    Returns one entry per path, an outcome or a failure (status, reason), and
    whether the process ran out of memory: it then stops, the files it did not
    reach are None (to be tried again elsewhere), and it should not be trusted
    with more work. `on_start(i)` is called before extracting paths[i], so a
    parent watching the clock knows which file overran.
    """
    results: list[_Outcome | tuple[str, str] | None] = [None] * len(paths)
    extracted: list[tuple[int, FileRecord, Extracted]] = []
    over_budget = (TextStatus.TOO_LARGE.value, f"memory budget of {memory // MiB} MiB exceeded" if memory
                   else "out of memory")
    for i, path in enumerate(paths):
        if on_start is not None:
            on_start(i)
        try:
            record, text = extract_one(path, pm, limits)
        except MemoryError:
            results[i] = over_budget
            return results, True
        except Exception as exc:  # noqa: BLE001 - hostile input must not stop the scan
            results[i] = (TextStatus.ERROR.value, f"{type(exc).__name__}: {exc}"[:300])
            continue
        extracted.append((i, record, text))
    try:
        outcomes = outcomes_from([(record, text) for _, record, text in extracted], params, store_text)
    except MemoryError:  # the longest text is blamed; the others are tried again (None) by a fresh worker
        longest = max(extracted, key=lambda item: len(item[2].text))
        results[longest[0]] = over_budget
        return results, True
    for (i, _, _), outcome in zip(extracted, outcomes):
        results[i] = outcome
    return results, False


def outcome_from(record: FileRecord, extracted: Extracted, params: Params, store_text: bool) -> _Outcome:
    return outcomes_from([(record, extracted)], params, store_text)[0]


def outcomes_from(items: Sequence[tuple[FileRecord, Extracted]], params: Params, store_text: bool) -> list[_Outcome]:
    """What each extracted file gives the index; the texts are sketched together (`sketch_and_winnow`,
    bit-identical to one at a time and about twice as fast on small files)."""
    outcomes: list[_Outcome | None] = [None] * len(items)
    with_text: list[int] = []
    for i, (record, extracted) in enumerate(items):
        status = extracted.status.value if isinstance(extracted.status, TextStatus) else str(extracted.status)
        if status in TEXT_STATUSES:
            with_text.append(i)
        else:
            outcomes[i] = _Outcome(record, status, extracted.reason, extracted.extractor)
    sketched = sketch_and_winnow([items[i][1].text for i in with_text], params) if with_text else []
    for i, (sketch, (winnowed, _)) in zip(with_text, sketched):
        record, extracted = items[i]
        text = extracted.text
        n_tokens = sketch.n_tokens
        if n_tokens == 0:
            outcomes[i] = _Outcome(record, TextStatus.EMPTY.value, extracted.reason or "no words in the extracted text",
                                   extracted.extractor)
            continue
        too_short = n_tokens < params.min_tokens
        doc_status = TextStatus.TOO_SHORT.value if too_short else TextStatus.OK.value
        reason = f"{n_tokens} tokens, fewer than min_tokens={params.min_tokens}" if too_short else ""
        document = NewDocument(
            sha256=record.sha256, size=record.size, mime=record.mime, status=doc_status,
            extractor=extracted.extractor, sketch_blob=sketch.to_bytes(), n_tokens=n_tokens,
            n_shingles=sketch.n_shingles, text_length=len(text), lexical_digest=sketch.lexical_digest,
            shingle_digest=sketch.shingle_digest, fingerprints=np.unique(winnowed),
            text_z=compress_text(text) if store_text else None, page_starts=tuple(extracted.page_starts))
        outcomes[i] = _Outcome(record, doc_status, reason, extracted.extractor, document)
    return outcomes  # type: ignore[return-value]


def _worker_main(conn: Connection, params: Params, store_text: bool, memory: int | None,
                 pm_factory: Callable[[], Any], limits: Any) -> None:
    """Loop over batches of files:

    ("task", 0, [(id, path), ...]) -> ("hashes", [(id, sha256 or "", why unreadable)]) -> [ids to extract]
    -> ("start", id) before each extraction -> ("done", [(id, outcome | (status, reason) | None)], retire).
    """

    def handle(pm: Any, _batch: int, items: list[tuple[int, str]]) -> bool:
        conn.send(("hashes", [(task_id, *hash_or_reason(path)) for task_id, path in items]))
        try:
            wanted: list[int] | None = conn.recv()
        except (EOFError, OSError):
            return False
        if wanted is None:
            return False
        if not wanted:
            return True
        path_of = dict(items)
        results, out_of_memory = process_files(
            [path_of[t] for t in wanted], pm, params, store_text, limits, memory=memory,
            on_start=lambda i: conn.send(("start", wanted[i])))
        conn.send(("done", list(zip(wanted, results)), out_of_memory))
        return not out_of_memory  # a process that ran out of memory is not trusted with another file

    serve_tasks(conn, pm_factory, memory, handle)


class _Worker(WorkerProcess):
    """One worker process and the batch of files it holds."""

    def __init__(self, ctx: Any, args: tuple[Any, ...]) -> None:
        super().__init__(ctx, _worker_main, args)
        self.held: dict[int, _Task] = {}  # the batch's files not yet settled, in crawl order
        self.hashing = False  # waiting for the batch's hashes
        self.current: _Task | None = None  # the file the clock runs for

    @property
    def busy(self) -> bool:
        return bool(self.held)

    def assign(self, tasks: list["_Task"]) -> None:
        self.held = {t.id: t for t in tasks}
        self.hashing = True
        self.current = None
        self.started = time.monotonic()
        self.conn.send(("task", 0, [(t.id, t.path) for t in tasks]))

    def begin(self, task_id: int) -> None:
        self.current = self.held.get(task_id)
        self.started = time.monotonic()


@dataclass
class _Task:
    id: int
    path: str  # opens the file (may hold surrogate escapes)
    display: str  # stored in the index and printed
    size: int
    mtime_ns: int
    sha256: str = ""
    alone: bool = False  # in a batch of its own: it was in a batch that failed before a file could be blamed


# --------------------------------------------------------------------------
# the parent: crawl, dispatch, write


@dataclass
class _Counts:
    seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    linked: int = 0
    bytes_seen: int = 0
    bytes_done: int = 0
    bytes_read: int = 0
    errors: list[FileIssue] = field(default_factory=list)
    skipped: list[FileIssue] = field(default_factory=list)
    too_short: list[str] = field(default_factory=list)


class _Writer:
    """Collects finished files and commits them in batches (one transaction each)."""

    def __init__(self, index: Index, run_id: int, counts: _Counts) -> None:
        self.index = index
        self.run_id = run_id
        self.counts = counts
        self.outcomes: list[_Outcome] = []
        self.pending_docs: dict[str, NewDocument] = {}
        self.seen: list[str] = []
        self.real_paths: dict[str, str] = {}  # display path -> real path, for rows of this run's next flush
        self.last_flush = time.monotonic()

    def known_document(self, sha256: str) -> tuple[str, str, str] | None:
        """(status, extractor, mime) of an indexed or pending document with this SHA-256."""
        doc = self.pending_docs.get(sha256)
        if doc is not None:
            return doc.status, doc.extractor, doc.mime
        row = self.index.conn.execute(
            "SELECT status, extractor, mime FROM documents WHERE sha256 = ?", (sha256,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def add(self, outcome: _Outcome) -> None:
        self.outcomes.append(outcome)
        if outcome.document is not None:
            self.pending_docs.setdefault(outcome.document.sha256, outcome.document)
        c = self.counts
        c.bytes_done += outcome.record.size
        if outcome.status in TEXT_STATUSES:
            c.indexed += 1
            if outcome.status == TextStatus.TOO_SHORT.value:
                c.too_short.append(outcome.record.path)
        elif outcome.status in ERROR_STATUSES:
            c.errors.append(FileIssue(outcome.record.path, outcome.status, outcome.reason))
        else:
            c.skipped.append(FileIssue(outcome.record.path, outcome.status, outcome.reason))
        self.maybe_flush()

    def unchanged(self, path: str) -> None:
        self.seen.append(path)
        self.maybe_flush()

    def maybe_flush(self) -> None:
        if (len(self.outcomes) + len(self.seen) // 16 >= _BATCH_FILES
                or time.monotonic() - self.last_flush >= _BATCH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if not self.outcomes and not self.seen:
            return
        index = self.index
        with index.transaction():
            if self.seen:
                index.mark_seen(self.run_id, self.seen)
            docs = list(self.pending_docs.values())
            doc_ids = dict(zip((d.sha256 for d in docs), index.add_documents(docs)))
            for outcome in self.outcomes:
                doc_id = None
                if outcome.status in TEXT_STATUSES:
                    sha = outcome.record.sha256
                    doc_id = doc_ids[sha] if sha in doc_ids else index.doc_id_for_sha256(sha)
                index.put_file(outcome.record, status=outcome.status, reason=outcome.reason,
                               extractor=outcome.extractor, doc_id=doc_id, run_id=self.run_id)
            written = {outcome.record.path for outcome in self.outcomes} | set(self.seen)
            index.set_real_paths((path, real) for path, real in self.real_paths.items() if path in written)
        self.real_paths = {path: real for path, real in self.real_paths.items() if path not in written}
        self.outcomes.clear()
        self.pending_docs.clear()
        self.seen.clear()
        self.last_flush = time.monotonic()


def _record_for(task: _Task, sha256: str, mime: str) -> FileRecord:
    return FileRecord(path=task.display, size=task.size, mtime_ns=task.mtime_ns, sha256=sha256, mime=mime)


def run_scan(
    paths: Sequence[str | os.PathLike[str]],
    index: Index,
    pm: Any,
    params: Params,
    *,
    jobs: int | None = None,
    exclude: Sequence[str] = (),
    max_size: int | None = None,
    store_text: bool = True,
    on_progress: Callable[[ScanProgress], None] | None = None,
    per_file_timeout: float | None = DEFAULT_TIMEOUT,
    per_file_memory: int | None = DEFAULT_MEMORY,
    pm_factory: Callable[[], Any] | None = None,
    limits: Any = None,
    command: str = "scan",
    dask: Any = None,
) -> ScanResult:
    """Index every file under `paths` incrementally; returns what this run saw and did.

    Args:
        pm: plugin manager used when `jobs == 0` (extraction in this process,
            no time or memory budget: for debugging and tests).
        jobs: worker processes (default: the number of cores).
        pm_factory: builds a plugin manager inside each worker (a picklable,
            module-level callable; default `scanner.sources.plugins.make_plugin_manager`).
        per_file_timeout: seconds a worker may spend on one file before it is killed.
        per_file_memory: bytes of address space a worker may add while extracting.
        dask: "local", a scheduler address or a `distributed.Client`: extraction and
            sketching run on Dask workers (scanner/services/scan/dask.py); None: this machine's pool.
    """
    from scanner.sources.crawl import crawl

    start = time.monotonic()
    resketch = resketch_index(index, params) if index.stale else None
    roots = _distinct_roots([os.fspath(p) for p in paths], nested_too=not exclude)
    real_roots = [printable_realpath(root) for root in roots]
    run_id = index.begin_run(command)
    counts = _Counts()
    writer = _Writer(index, run_id, counts)
    entries = crawl(roots, exclude=tuple(exclude), max_size=max_size)
    crawl_done = False
    last_progress = 0.0

    def progress(current: str = "", force: bool = False) -> None:
        nonlocal last_progress
        if on_progress is None:
            return
        now = time.monotonic()
        if force or now - last_progress >= 0.1:
            last_progress = now
            on_progress(ScanProgress(counts.seen, counts.indexed + counts.unchanged + len(counts.errors)
                                     + len(counts.skipped), counts.bytes_seen, counts.bytes_done,
                                     len(counts.errors), crawl_done, current))

    def next_task() -> _Task | None:
        """The next file that needs work; unchanged and skipped files are handled inline."""
        nonlocal crawl_done
        for entry in entries:
            path = _display(entry)
            counts.seen += 1
            if entry.skip_reason:  # recorded in the index too, so the reason outlives the run's output
                counts.bytes_seen += entry.size
                writer.add(_Outcome(FileRecord(path=path, size=entry.size, mtime_ns=entry.mtime_ns, sha256="",
                                               mime=""), "skipped", entry.skip_reason, ""))
                progress(path)
                continue
            counts.bytes_seen += entry.size
            state = index.file_state(path)
            if state is None or state.real_path is None:
                real = printable_realpath(entry.path)
                # new under this name: maybe an indexed file under another spelling of its path
                alias = index.live_path_for_real(real) if state is None else None
                if alias is not None:
                    path, state = alias, index.file_state(alias)
                else:  # a new row, or one from before migration 5: it learns its real path
                    writer.real_paths[path] = real
            if state is not None and state.size == entry.size and state.mtime_ns == entry.mtime_ns:
                counts.unchanged += 1
                counts.bytes_done += entry.size
                if state.status in ERROR_STATUSES:
                    counts.errors.append(FileIssue(path, state.status, _stored_reason(index, path)))
                elif state.status == TextStatus.TOO_SHORT.value:
                    counts.too_short.append(path)
                elif state.status not in TEXT_STATUSES:
                    counts.skipped.append(FileIssue(path, state.status, _stored_reason(index, path)))
                writer.unchanged(path)
                progress(path)
                continue
            return _Task(counts.seen, os.fspath(entry.path), path, entry.size, entry.mtime_ns)
        crawl_done = True
        return None

    try:
        if dask is not None:  # issue 9: Dask executor, same writer
            from scanner.services.scan.dask import run_dask

            run_dask(next_task, writer, params, store_text, limits, progress, address=dask, jobs=jobs,
                     pm_factory=pm_factory or _default_pm_factory)
        elif jobs == 0:
            _run_inline(_Dispatch(next_task, writer, progress), pm, params, store_text, limits)
        else:
            _run_pool(_Dispatch(next_task, writer, progress), params, store_text, limits, progress,
                      jobs=jobs or os.cpu_count() or 1, timeout=per_file_timeout, memory=per_file_memory,
                      pm_factory=pm_factory or _default_pm_factory)
        writer.flush()
    except BaseException:
        writer.flush()  # complete files are worth keeping; the next scan resumes after them
        raise
    vanished = index.mark_vanished(run_id, roots, real_roots) if crawl_done else 0
    result = ScanResult(
        run_id=run_id, files_seen=counts.seen, files_indexed=counts.indexed, files_unchanged=counts.unchanged,
        files_linked=counts.linked, files_vanished=vanished, bytes_read=counts.bytes_read,
        seconds=time.monotonic() - start, errors=tuple(sorted(counts.errors, key=lambda e: e.path)),
        skipped=tuple(sorted(counts.skipped, key=lambda e: e.path)), too_short=tuple(sorted(counts.too_short)),
        resketch=resketch)
    index.finish_run(run_id, {
        "files_seen": result.files_seen, "files_indexed": result.files_indexed,
        "files_unchanged": result.files_unchanged, "files_linked": result.files_linked,
        "files_vanished": vanished, "errors": len(result.errors), "skipped": len(result.skipped),
        "too_short": len(result.too_short), "seconds": round(result.seconds, 3),
        **({"resketched": resketch.documents, "forgotten": resketch.forgotten} if resketch else {})})
    progress(force=True)
    return result


def _distinct_roots(roots: list[str], nested_too: bool) -> list[str]:
    """The roots minus those that name a path already given under another spelling, and (`nested_too`:
    when no --exclude could have left them out of the outer crawl) those inside another root, so each
    file is crawled once."""
    real = [os.path.realpath(root) for root in roots]
    kept = []
    for i, root in enumerate(roots):
        repeated = real[i] in real[:i]
        nested = nested_too and any(real[i].startswith(outer.rstrip(os.sep) + os.sep) for outer in real)
        if not (repeated or nested):
            kept.append(root)
    return kept


def _display(entry: Any) -> str:
    """The printable form of a crawled path (valid UTF-8 for SQLite and JSON)."""
    display = getattr(entry, "display", None)
    return display if isinstance(display, str) else os.fspath(entry.path)


def _stored_reason(index: Index, path: str) -> str:
    row = index.conn.execute("SELECT reason FROM files WHERE path = ?", (path,)).fetchone()
    return row[0] if row else ""


def _default_pm_factory() -> Any:
    from scanner.sources.plugins import make_plugin_manager

    return make_plugin_manager()


class _Dispatch:
    """The parent's bookkeeping for the inline and pool executors: batches to hand out, the SHA-256s being
    extracted, and the copies waiting for them (a copy is linked to its twin's document, never extracted)."""

    def __init__(self, next_task: Callable[[], _Task | None], writer: _Writer,
                 progress: Callable[..., None]) -> None:
        self.next_task = next_task
        self.writer = writer
        self.progress = progress
        self.retry: deque[_Task] = deque()  # files handed back by a worker that died or overran
        self.crawl_exhausted = False
        self.inflight: dict[str, _Task] = {}  # sha256 being extracted -> its task
        self.waiting: dict[str, list[_Task]] = {}  # sha256 -> copies waiting for that extraction

    @property
    def finished(self) -> bool:
        return self.crawl_exhausted and not self.retry

    def next_batch(self) -> list[_Task]:
        """Up to _WORKER_BATCH_FILES files and _WORKER_BATCH_BYTES (a larger file goes alone)."""
        batch: list[_Task] = []
        size = 0
        while len(batch) < _WORKER_BATCH_FILES:
            if self.retry:
                task: _Task | None = self.retry.popleft()
            elif self.crawl_exhausted:
                break
            else:
                task = self.next_task()
                if task is None:
                    self.crawl_exhausted = True
                    break
            assert task is not None
            if batch and (task.alone or size + task.size > _WORKER_BATCH_BYTES):
                self.retry.appendleft(task)
                break
            batch.append(task)
            size += task.size
            if task.alone:
                break
        return batch

    def hashed(self, task: _Task, sha: str, unreadable: str = "") -> bool:
        """Record a file's SHA-256 (or why it could not be read); True when it is to be extracted."""
        writer = self.writer
        if unreadable:
            self.settle(task, (TextStatus.ERROR.value, unreadable))
            return False
        task.sha256 = sha
        writer.counts.bytes_read += task.size
        known = writer.known_document(sha)
        if known is not None:
            writer.counts.linked += 1
            writer.add(_Outcome(_record_for(task, sha, known[2]), known[0], "", known[1]))
            self.progress(task.path)
            return False
        if sha in self.inflight:
            self.waiting.setdefault(sha, []).append(task)
            return False
        self.inflight[sha] = task
        return True

    def settle(self, task: _Task, result: _Outcome | tuple[str, str]) -> None:
        """Write a file's outcome (or failure: status, reason), and its waiting copies'."""
        if isinstance(result, tuple):
            outcome = _Outcome(_record_for(task, task.sha256, ""), result[0], result[1], "")
        else:
            outcome = replace(result, record=replace(result.record, path=task.display))
        self.writer.add(outcome)
        sha = task.sha256
        if sha and self.inflight.get(sha) is task:
            del self.inflight[sha]
            for copy in self.waiting.pop(sha, []):
                self.writer.counts.linked += outcome.status in TEXT_STATUSES
                self.writer.add(_Outcome(_record_for(copy, sha, outcome.record.mime), outcome.status,
                                         outcome.reason, outcome.extractor))
        self.progress(task.path)

    def requeue(self, task: _Task) -> None:
        """Hand a file (and the copies waiting for it) out again, from its hash on."""
        if task.sha256 and self.inflight.get(task.sha256) is task:
            del self.inflight[task.sha256]
            self.retry.extend(self.waiting.pop(task.sha256, []))
        self.retry.appendleft(task)


def _run_inline(dispatch: _Dispatch, pm: Any, params: Params, store_text: bool, limits: Any) -> None:
    while batch := dispatch.next_batch():
        wanted = []
        for task in batch:
            if dispatch.hashed(task, *hash_or_reason(task.path)):
                wanted.append(task)
        results, _ = process_files([t.path for t in wanted], pm, params, store_text, limits,
                                   on_start=lambda i: dispatch.progress(wanted[i].path))
        for task, result in zip(wanted, results):
            if result is None:  # not reached after the file that ran out of memory: tried again
                dispatch.requeue(task)
            else:
                dispatch.settle(task, result)


def _run_pool(dispatch: _Dispatch, params: Params, store_text: bool, limits: Any, progress: Callable[..., None],
              *, jobs: int, timeout: float | None, memory: int | None, pm_factory: Callable[[], Any]) -> None:
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["scanner.services.scan", "numpy"])
    args = (params, store_text, memory, pm_factory, limits)
    workers = [_Worker(ctx, args) for _ in range(max(1, jobs))]

    def retire(i: int, status: str, reason: str) -> None:
        """Kill worker i, blame the file it was on, hand its other files out again, start a new worker.

        While hashing (one message for the whole batch) or before the first file starts, no file can be
        blamed: a batch of one is, and a larger batch's files are each handed out again in a batch of
        their own, so the next failure names the right file."""
        worker = workers[i]
        worker.kill()
        if len(worker.held) == 1:
            blamed: _Task | None = next(iter(worker.held.values()))
        elif worker.hashing or worker.current is None or worker.current.id not in worker.held:
            blamed = None
        else:
            blamed = worker.current
        for task in worker.held.values():
            if task is blamed:
                dispatch.settle(task, (status, reason))
            else:
                task.alone = task.alone or blamed is None
                dispatch.requeue(task)
        worker.held.clear()
        workers[i] = _Worker(ctx, args)

    startup_failures = 0
    try:
        while True:
            for worker in workers:
                if worker.ready and not worker.busy and not dispatch.finished:
                    batch = dispatch.next_batch()
                    if batch:
                        worker.assign(batch)
            if dispatch.finished and not any(w.busy for w in workers):
                break
            listening = [w for w in workers if w.busy or not w.ready]
            ready = wait([w.conn for w in listening], timeout=_POLL)
            for i, worker in enumerate(workers):
                if worker.conn not in ready or (worker.ready and not worker.busy):
                    continue
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    worker.process.join(timeout=2)
                    code = worker.process.exitcode
                    if not worker.busy:  # died while starting
                        worker.kill()
                        workers[i] = _Worker(ctx, args)
                        startup_failures += 1
                        if startup_failures >= 3:
                            raise ScannerError(f"extraction workers die while starting (exit code {code})")
                    else:
                        retire(i, TextStatus.ERROR.value, f"extraction worker died (exit code {code})")
                    continue
                kind = message[0]
                if kind == "ready":
                    worker.ready = True
                    startup_failures = 0
                elif kind == "broken":
                    raise ScannerError(f"extraction worker cannot start: {message[2]}")
                elif kind == "hashes":
                    wanted = []
                    for task_id, sha, unreadable in message[1]:
                        task = worker.held[task_id]
                        if dispatch.hashed(task, sha, unreadable):
                            wanted.append(task_id)
                        else:
                            del worker.held[task_id]
                    worker.hashing = False
                    worker.current = None  # until the worker says which file it starts
                    worker.started = time.monotonic()
                    worker.conn.send(wanted)
                elif kind == "start":
                    worker.begin(message[1])
                    progress(worker.current.path if worker.current else "")
                elif kind == "done":
                    for task_id, result in message[1]:
                        task = worker.held.pop(task_id)
                        if result is None:
                            dispatch.requeue(task)
                        else:
                            dispatch.settle(task, result)
                    if message[2]:  # ran out of memory: the process ends; replace it
                        worker.kill()
                        workers[i] = _Worker(ctx, args)
            if timeout is not None:
                now = time.monotonic()
                for i, worker in enumerate(workers):
                    if worker.busy and now - worker.started > timeout:
                        retire(i, TextStatus.TIMEOUT.value, f"no result within {timeout:g} s; worker killed")
            progress()
    finally:
        for worker in workers:
            if worker.busy:
                worker.kill()
            else:
                worker.stop()


# --------------------------------------------------------------------------
# findings inside the index


def find_similar(index: Index, params: Params, *, sketch_cache: int = 50_000, dask: Any = None) -> Findings:
    """Clusters and containment pairs among the live documents of `index`.

    Identical files (same SHA-256) share a document; lexically-equivalent
    documents are joined next; only one representative of each such group is
    scored. Pairs come from the postings (`Index.pair_count_arrays`, or the
    same computation on a Dask cluster when `dask` is a `distributed.Client`),
    are filtered by their shared count, then scored from the sketches (Theorem 1).
    """
    threshold, min_c = params.resemblance_threshold, params.min_containment
    if dask is None:
        pair_arrays = index.pair_count_arrays(params.common_shingle_share)
    else:
        from scanner.services.scan.dask import pair_count_arrays_dask

        pair_arrays = pair_count_arrays_dask(index, params.common_shingle_share, dask,
                                             min_shared_share=0.5 * min(threshold, min_c))
    # Memory stays proportional to the findings, not to the index (issue 9: at 1M documents, per-document
    # Python dicts cost more than the pair counting): lexical groups and multi-file documents come from SQL,
    # fingerprint counts as one numpy array, file rows only for the documents that end up in a finding.
    rep_of = index.lexical_representatives()  # only documents sharing their canonical text with another
    n_fps = index.fingerprint_counts()
    candidates: set[tuple[int, int]] = set()
    considered = 0
    for pa, pb, shared in pair_arrays:
        considered += int(pa.shape[0])
        smaller = np.minimum(n_fps[pa], n_fps[pb])
        keep = (smaller > 0) & (shared >= 0.5 * min(threshold, min_c) * smaller)  # worth_scoring's bound
        for a, b in zip(pa[keep].tolist(), pb[keep].tolist()):
            a, b = rep_of.get(a, a), rep_of.get(b, b)
            if a != b:
                candidates.add((a, b) if a < b else (b, a))

    scored = list(_score(index, sorted(candidates), params, sketch_cache))
    linked: list[ScoredPair] = [p for p in scored if p.resemblance >= threshold]
    contained = list(containments_from(scored, threshold, min_c))
    involved = set(rep_of) | set(rep_of.values()) | index.documents_with_copies()
    involved |= {d for p in linked for d in (p.a, p.b)} | {d for c in contained for d in (c.contained, c.container)}
    by_doc: dict[int, list[Member]] = {}
    for path, sha, doc_id in index.live_files_of(sorted(involved)):
        by_doc.setdefault(doc_id, []).append(Member(path, sha))

    uf: UnionFind[int] = UnionFind(sorted(involved))
    for doc_id, rep in rep_of.items():
        uf.union(doc_id, rep)
    min_res: dict[int, float] = {}
    for pair in linked:
        uf.union(pair.a, pair.b)
    for pair in linked:
        root = uf.find(pair.a)
        min_res[root] = min(min_res.get(root, 1.0), pair.resemblance)

    groups: list[tuple[str, tuple[Member, ...], float | None]] = []
    for group in uf.groups():
        members = tuple(sorted((m for d in group for m in by_doc.get(d, [])), key=lambda m: m.path))
        if len(members) < 2:
            continue
        if len({m.sha256 for m in members}) == 1:
            kind = "identical"
        elif len({rep_of.get(d, d) for d in group}) == 1:
            kind = "lexical"
        else:
            kind = "near-duplicate"
        root = uf.find(group[0])
        groups.append((kind, members, min_res.get(root) if kind == "near-duplicate" else None))
    by_sha_nodoc: dict[str, list[Member]] = {}  # identical files with no document (too short, errors...)
    for path, sha in index.identical_files_without_document():
        by_sha_nodoc.setdefault(sha, []).append(Member(path, sha))
    for sha, members in by_sha_nodoc.items():
        if len(members) > 1 and sha != _EMPTY_SHA256:
            groups.append(("identical", tuple(members), None))
    groups.sort(key=lambda g: (-len(g[1]), g[1][0].path))
    clusters = tuple(Cluster(i + 1, kind, members, mr) for i, (kind, members, mr) in enumerate(groups))

    first = {d: ms[0] for d, ms in by_doc.items() if ms}
    containments = tuple(
        ContainmentFinding(first[c.contained].path, first[c.container].path, c.containment, c.resemblance,
                           first[c.contained].sha256, first[c.container].sha256)
        for c in contained if c.contained in first and c.container in first)
    return Findings(clusters, containments, considered, len(scored), threshold, min_c)


_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _score(index: Index, pairs: Sequence[tuple[int, int]], params: Params, cache_size: int) -> Iterator[ScoredPair]:
    """Theorem 1 estimates of candidate pairs, reading sketches in batches with a bounded cache."""
    cache: dict[int, Any] = {}
    step = 2000
    for start in range(0, len(pairs), step):
        chunk = pairs[start : start + step]
        need = sorted({d for pair in chunk for d in pair} - cache.keys())
        if len(cache) + len(need) > cache_size:
            cache.clear()
            need = sorted({d for pair in chunk for d in pair})
        cache.update(index.sketches(need))
        for a, b in chunk:
            yield ScoredPair(a, b, 0, *theorem1_estimates(cache[a], cache[b], params.sample_size))


def findings_json(findings: Findings) -> dict[str, Any]:
    return {"clusters": [c.to_json() for c in findings.clusters],
            "containments": [c.to_json() for c in findings.containments]}
