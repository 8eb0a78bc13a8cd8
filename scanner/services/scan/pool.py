"""The scan's process pool: extraction runs on hostile files, so it happens in worker processes.

* each worker has an address-space cap (RLIMIT_AS) and a wall-clock budget; a
  worker over budget is killed and replaced, its file is reported, and the
  scan goes on;
* each worker holds one small batch of files (`dispatch.WORKER_BATCH_FILES`),
  so memory is bounded whatever the corpus size; it says which file it starts
  on, so the parent knows which file a hung or dead worker holds, and hands the
  batch's other files out again;
* a worker first reads and hashes its batch and asks the parent which SHA-256s
  are not yet indexed (nor being extracted by another worker): copies are
  linked to the existing document without being extracted; the texts of a
  batch are then sketched together in one set of numpy passes.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from scanner.core.config import Params
from scanner.core.errors import ScannerError
from scanner.core.model import TextStatus
from scanner.services.ingest import Failure, FileResult, Outcome, process_files, read_or_reason
from scanner.services.scan.dispatch import Dispatch, Task
from scanner.services.workers import Assign, Broken, Ready, WorkerProcess, serve_tasks
from scanner.sources.limits import ExtractLimits

POLL = 0.1


@dataclass(frozen=True)
class Hashes:
    """Worker to parent: the batch's SHA-256s, (task id, sha256 or "", why unreadable) each; the parent
    answers with the ids to extract (None: stop)."""

    items: tuple[tuple[int, str, str], ...]


@dataclass(frozen=True)
class Started:
    """Worker to parent: extraction of this file begins (the clock now runs for it)."""

    task_id: int


@dataclass(frozen=True)
class Members:
    """Worker to parent: members of the container it reads, a thousand or more (`process_files(on_members=)`):
    written before the container itself, so neither side holds a mailbox of 90,000 messages whole."""

    task_id: int
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class Done:
    """Worker to parent: the batch's results (None: not reached, to be tried again); after running out of
    memory the worker ends and is replaced."""

    results: tuple[tuple[int, FileResult | None], ...]
    out_of_memory: bool


def worker_main(conn: Connection, params: Params, store_text: bool, memory: int | None,
                pm_factory: Callable[[], Any], limits: ExtractLimits | None) -> None:
    """Loop over batches: Assign -> Hashes -> [ids] -> Started per file (and Members of a large container) -> Done."""

    def handle(pm: Any, _batch: int, items: list[tuple[int, str]]) -> bool:
        read = {task_id: read_or_reason(path, limits) for task_id, path in items}
        conn.send(Hashes(tuple((task_id, evidence.sha256 if evidence else "", why)
                               for task_id, (evidence, why) in read.items())))
        try:
            wanted: list[int] | None = conn.recv()
        except (EOFError, OSError):
            return False
        if wanted is None:
            return False
        if not wanted:
            return True
        path_of = dict(items)
        batch = []
        for task_id in wanted:
            evidence = read.pop(task_id)[0]
            assert evidence is not None  # the parent asks only for files that were read
            batch.append((path_of[task_id], evidence))
        read.clear()  # the copies' bytes are not needed
        results, out_of_memory = process_files(
            batch, pm, params, store_text, limits, memory=memory, on_start=lambda i: conn.send(Started(wanted[i])),
            on_members=lambda i, outcomes: conn.send(Members(wanted[i], tuple(outcomes))))
        conn.send(Done(tuple(zip(wanted, results)), out_of_memory))
        return not out_of_memory  # a process that ran out of memory is not trusted with another file

    serve_tasks(conn, pm_factory, memory, handle)


class PoolWorker(WorkerProcess):
    """One worker process and the batch of files it holds."""

    def __init__(self, ctx: Any, args: tuple[Any, ...]) -> None:
        super().__init__(ctx, worker_main, args)
        self.held: dict[int, Task] = {}  # the batch's files not yet settled, in crawl order
        self.hashing = False  # waiting for the batch's hashes
        self.current: Task | None = None  # the file the clock runs for

    @property
    def busy(self) -> bool:
        return bool(self.held)

    def assign(self, tasks: list[Task]) -> None:
        self.held = {t.id: t for t in tasks}
        self.hashing = True
        self.current = None
        self.started = time.monotonic()
        self.conn.send(Assign(0, [(t.id, t.path) for t in tasks]))

    def begin(self, task_id: int) -> None:
        self.current = self.held.get(task_id)
        self.started = time.monotonic()


def run_pool(dispatch: Dispatch, params: Params, store_text: bool, limits: ExtractLimits | None,
             progress: Callable[..., None], *, jobs: int, timeout: float | None, memory: int | None,
             pm_factory: Callable[[], Any]) -> None:
    """Hand batches to `jobs` workers until the crawl and the retries are done; none start when no file
    needs extracting (an empty folder, a rescan of unchanged files)."""
    if not dispatch.has_work():
        return
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["scanner.services.scan.pool", "numpy"])
    args = (params, store_text, memory, pm_factory, limits)
    workers = [PoolWorker(ctx, args) for _ in range(max(1, jobs))]

    def retire(i: int, status: str, reason: str) -> None:
        """Kill worker i, blame the file it was on, hand its other files out again, start a new worker.

        While hashing (one message for the whole batch) or before the first file starts, no file can be
        blamed: a batch of one is, and a larger batch's files are each handed out again in a batch of
        their own, so the next failure names the right file."""
        worker = workers[i]
        worker.kill()
        if len(worker.held) == 1:
            blamed: Task | None = next(iter(worker.held.values()))
        elif worker.hashing or worker.current is None or worker.current.id not in worker.held:
            blamed = None
        else:
            blamed = worker.current
        for task in worker.held.values():
            if task is blamed:
                dispatch.settle(task, Failure(status, reason))
            else:
                task.alone = task.alone or blamed is None
                dispatch.requeue(task)
        worker.held.clear()
        workers[i] = PoolWorker(ctx, args)

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
            ready = wait([w.conn for w in listening], timeout=POLL)
            for i, worker in enumerate(workers):
                if worker.conn not in ready or (worker.ready and not worker.busy):
                    continue
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError) as exc:
                    worker.process.join(timeout=2)
                    code = worker.process.exitcode
                    if not worker.busy:  # died while starting
                        worker.kill()
                        workers[i] = PoolWorker(ctx, args)
                        startup_failures += 1
                        if startup_failures >= 3:
                            raise ScannerError(
                                f"extraction workers die while starting (exit code {code})") from exc
                    else:
                        retire(i, TextStatus.ERROR.value, f"extraction worker died (exit code {code})")
                    continue
                if isinstance(message, Ready):
                    worker.ready = True
                    startup_failures = 0
                elif isinstance(message, Broken):
                    raise ScannerError(f"extraction worker cannot start: {message.reason}")
                elif isinstance(message, Hashes):
                    wanted = []
                    for task_id, sha, unreadable in message.items:
                        task = worker.held[task_id]
                        if dispatch.hashed(task, sha, unreadable):
                            wanted.append(task_id)
                        else:
                            del worker.held[task_id]
                    worker.hashing = False
                    worker.current = None  # until the worker says which file it starts
                    worker.started = time.monotonic()
                    worker.conn.send(wanted)
                elif isinstance(message, Started):
                    worker.begin(message.task_id)
                    progress(worker.current.path if worker.current else "")
                elif isinstance(message, Members):
                    dispatch.spilled(worker.held[message.task_id], message.outcomes)
                elif isinstance(message, Done):
                    for task_id, result in message.results:
                        task = worker.held.pop(task_id)
                        if result is None:
                            dispatch.requeue(task)
                        else:
                            dispatch.settle(task, result)
                    if message.out_of_memory:  # the process ends; replace it
                        worker.kill()
                        workers[i] = PoolWorker(ctx, args)
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
