"""The parent's bookkeeping for every executor (inline, process pool, Dask): which files to hand out,
which SHA-256s are being extracted, and the copies waiting for them (a copy is linked to its twin's
document, never extracted)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scanner.core.config import Params
from scanner.core.model import FileRecord, TextStatus
from scanner.services.ingest import Failure, FileResult, Outcome, process_files, read_or_reason
from scanner.services.scan.writer import Writer
from scanner.sources.extract.containers import moved
from scanner.sources.extract.evidence import Evidence
from scanner.sources.limits import ExtractLimits

WORKER_BATCH_FILES = 32  # files per worker message: one hash round trip and one sketch pass for all
WORKER_BATCH_BYTES = 2 * 1024 * 1024


@dataclass
class Task:
    """A file that needs work: new or changed since the last scan."""

    id: int
    path: str  # opens the file (may hold surrogate escapes)
    display: str  # stored in the index and printed
    size: int
    mtime_ns: int
    sha256: str = ""
    alone: bool = False  # in a batch of its own: it was in a batch that failed before a file could be blamed

    def record(self, sha256: str, mime: str) -> FileRecord:
        return FileRecord(path=self.display, size=self.size, mtime_ns=self.mtime_ns, sha256=sha256, mime=mime)

    def failed(self, status: str, reason: str) -> Outcome:
        return Outcome(self.record(self.sha256, ""), status, reason, "")


class Dispatch:
    """Batches to hand out, the SHA-256s being extracted, and the copies waiting for them."""

    def __init__(self, next_task: Callable[[], Task | None], writer: Writer,
                 progress: Callable[..., None]) -> None:
        self.next_task = next_task
        self.writer = writer
        self.progress = progress
        self.retry: deque[Task] = deque()  # files handed back by a worker that died or overran
        self.crawl_exhausted = False
        self.inflight: dict[str, Task] = {}  # sha256 being extracted -> its task
        self.waiting: dict[str, list[Task]] = {}  # sha256 -> copies waiting for that extraction

    @property
    def finished(self) -> bool:
        return self.crawl_exhausted and not self.retry

    def has_work(self) -> bool:
        """Whether a file waits to be handed out (one is taken from the crawl to know, and kept for the next
        batch): no worker process starts for a scan with nothing to extract."""
        if self.retry:
            return True
        if not self.crawl_exhausted:
            task = self.next_task()
            if task is not None:
                self.retry.append(task)
                return True
            self.crawl_exhausted = True
        return False

    def next_batch(self) -> list[Task]:
        """Up to WORKER_BATCH_FILES files and WORKER_BATCH_BYTES (a larger file goes alone)."""
        batch: list[Task] = []
        size = 0
        while len(batch) < WORKER_BATCH_FILES:
            if self.retry:
                task: Task | None = self.retry.popleft()
            elif self.crawl_exhausted:
                break
            else:
                task = self.next_task()
                if task is None:
                    self.crawl_exhausted = True
                    break
            assert task is not None
            if batch and (task.alone or size + task.size > WORKER_BATCH_BYTES):
                self.retry.appendleft(task)
                break
            batch.append(task)
            size += task.size
            if task.alone:
                break
        return batch

    def hashed(self, task: Task, sha: str, unreadable: str = "") -> bool:
        """Record a file's SHA-256 (or why it could not be read); True when it is to be extracted."""
        writer = self.writer
        if unreadable:
            self.settle(task, Failure(TextStatus.ERROR.value, unreadable))
            return False
        task.sha256 = sha
        writer.counts.bytes_read += task.size
        if self.link_copy(task, sha):
            return False
        if sha in self.inflight:
            self.waiting.setdefault(sha, []).append(task)
            return False
        self.inflight[sha] = task
        return True

    def link_copy(self, task: Task, sha: str) -> bool:
        """True when a document with this SHA-256 is indexed or pending: the file is written as its copy."""
        known = self.writer.known_document(sha)
        if known is None or known.has_members:  # a mail with attachments is read again: its members are rows too
            return False
        self.writer.counts.linked += 1
        self.writer.add(Outcome(task.record(sha, known.mime), known.status, known.reason, known.extractor))
        self.progress(task.path)
        return True

    def settle(self, task: Task, result: FileResult) -> None:
        """Write a file's outcome (or failure), and its waiting copies'."""
        outcome = task.failed(result.status, result.reason) if isinstance(result, Failure) \
            else result.moved_to(task.display)
        self.writer.add(outcome)
        sha = task.sha256
        if sha and self.inflight.get(sha) is task:
            del self.inflight[sha]
            for copy in self.waiting.pop(sha, []):
                self.writer.counts.linked += TextStatus(outcome.status).has_text
                self.writer.add(replace(outcome.moved_to(copy.display), record=copy.record(sha, outcome.record.mime)))
        self.progress(task.path)

    def spilled(self, task: Task, members: Sequence[Outcome]) -> None:
        """Write members of a container still being read (`process_files(on_members=)`), its waiting copies'
        too; the container's outcome comes with the rest of them (`settle`)."""
        for display in (task.display, *(copy.display for copy in self.waiting.get(task.sha256, []))):
            self.writer.add_members([m.moved_to(moved(m.record.path, task.path, display)) for m in members])

    def requeue(self, task: Task) -> None:
        """Hand a file (and the copies waiting for it) out again, from its hash on."""
        if task.sha256 and self.inflight.get(task.sha256) is task:
            del self.inflight[task.sha256]
            self.retry.extend(self.waiting.pop(task.sha256, []))
        self.retry.appendleft(task)


def run_inline(dispatch: Dispatch, pm: Any, params: Params, store_text: bool, limits: ExtractLimits | None) -> None:
    """Extraction in this process, no time or memory budget (`--jobs 0`: debugging and tests)."""
    while batch := dispatch.next_batch():
        _run_inline_batch(dispatch, batch, pm, params, store_text, limits)


def _run_inline_batch(dispatch: Dispatch, batch: list[Task], pm: Any, params: Params, store_text: bool,
                      limits: ExtractLimits | None) -> None:
    """One batch of `run_inline` (a function of its own, so `on_start` sees this batch's files)."""
    wanted: list[tuple[Task, Evidence]] = []
    for task in batch:
        evidence, unreadable = read_or_reason(task.path, limits)
        if dispatch.hashed(task, evidence.sha256 if evidence else "", unreadable) and evidence is not None:
            wanted.append((task, evidence))
    results, _ = process_files([(t.path, ev) for t, ev in wanted], pm, params, store_text, limits,
                               on_start=lambda i: dispatch.progress(wanted[i][0].path),
                               on_members=lambda i, members: dispatch.spilled(wanted[i][0], members))
    for (task, _), result in zip(wanted, results):
        if result is None:  # not reached after the file that ran out of memory: tried again
            dispatch.requeue(task)
        else:
            dispatch.settle(task, result)
