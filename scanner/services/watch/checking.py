"""The worker side of a watch: one file read, extracted and matched against the protected index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from scanner.core.errors import InputError
from scanner.core.model import TextStatus
from scanner.services.ingest import Outcome, checked_file_outcome
from scanner.services.watch.records import MiB, WatchOptions
from scanner.services.workers import Assign, WorkerProcess, serve_tasks
from scanner.sources.crawl import printable_path
from scanner.sources.extract.containers import moved


@dataclass(frozen=True)
class CheckedFile:
    """What a worker found in one file: its identity, status and the matches that are leaks."""

    path: str
    sha256: str
    size: int
    mtime_ns: int
    changed: bool  # written to while being read: checked again once it settles
    status: str  # a TextStatus value
    reason: str
    matches: tuple[dict[str, Any], ...]
    added: Outcome | None = None  # --add: the file as a scan would index it
    real_path: str = ""


def check_file(path: str, index: Any, pm: Any, options: WatchOptions) -> CheckedFile:
    """Extract and match one file (in a worker).

    Raises:
        InputError / OSError: the file cannot be read (yet); the coordinator retries.
    """
    from scanner.services.check import CheckOptions, check_extracted
    from scanner.sources.extract import ExtractLimits, extract_file

    record, extracted = extract_file(Path(path), pm, ExtractLimits(ocr=options.ocr))
    status = TextStatus(extracted.status)
    checked = CheckedFile(path, record.sha256, record.size, record.mtime_ns, "warning" in (extracted.meta or {}),
                          status.value, extracted.reason, ())
    # a container (archive, mail) is checked member by member; a leak inside one names the member
    shown = printable_path(path)  # the file's name in the index, as a scan would write it
    queries = [(shown, extracted)] + [(moved(m.path, path, shown), e) for m, e in extracted.members]
    readable = [(query, e) for query, e in queries if TextStatus(e.status).has_text]
    if not readable:
        return checked
    params = index.params
    skip: frozenset[int] = frozenset()
    if options.add:  # the file's own earlier version, indexed by --add, is not a leak of itself
        skip = frozenset(doc for query, _ in readable for doc in index.doc_ids_at(query))
    leaks: list[dict[str, Any]] = []
    for query, query_extracted in readable:
        report = check_extracted(query_extracted, index, params,
                                 CheckOptions(min_words=min(options.min_words, params.guaranteed_run),
                                              skip_doc_ids=skip))
        member = {"member": query} if query != shown else {}
        leaks.extend({**m.to_json(), **member} for m in report.matches if is_leak(m, options))
    # a file read in part keeps saying so (its raw text was matched too); any other file with text was checked
    partial = status is TextStatus.PARTIAL
    checked = replace(checked, status=status.value if partial else TextStatus.OK.value,
                      reason=extracted.reason if partial else "", matches=tuple(leaks))
    if not options.add:
        return checked
    outcome, real_path = checked_file_outcome(path, shown, record, extracted, params)
    return replace(checked, added=outcome, real_path=real_path)


def is_leak(match: Any, options: WatchOptions) -> bool:
    """A pasted passage, most of a protected document, or a near copy of one."""
    longest = max((len(p.text.split()) for p in match.passages), default=0)
    return (longest >= options.min_words or match.containment_doc_in_query >= options.min_containment
            or match.resemblance >= options.threshold)


Checker = Callable[[str, Any, Any, WatchOptions], CheckedFile]


@dataclass(frozen=True)
class Checked:
    """Worker to coordinator: the file was read and matched."""

    task_id: int
    result: CheckedFile


@dataclass(frozen=True)
class Unreadable:
    """Worker to coordinator: the file cannot be read yet (retried with backoff)."""

    task_id: int
    why: str


@dataclass(frozen=True)
class CheckFailed:
    """Worker to coordinator: the file defeats the checker (reported); `retire`: the worker ran out of memory
    and ends."""

    task_id: int
    why: str
    retire: bool = False


def worker_main(conn: Connection, index_path: str, options: WatchOptions, checker: Checker) -> None:
    """Loop: Assign(id, path) -> Checked | Unreadable | CheckFailed."""

    def setup() -> tuple[Any, Any]:
        from scanner.index import Index
        from scanner.sources.plugins import make_plugin_manager

        return Index.open(index_path, readonly=True), make_plugin_manager()

    def handle(state: tuple[Any, Any], task_id: int, path: str) -> bool:
        index, pm = state
        try:
            conn.send(Checked(task_id, checker(path, index, pm, options)))
        except MemoryError:
            conn.send(CheckFailed(task_id, f"memory budget of {(options.memory or 0) // MiB} MiB exceeded",
                                  retire=True))
            return False  # a process that ran out of memory is not trusted with another file
        except OSError as exc:
            conn.send(Unreadable(task_id, f"{exc.strerror or exc}"))
        except Exception as exc:  # noqa: BLE001 - hostile input must not stop the watcher
            why = f"{type(exc).__name__}: {exc}"[:300]
            conn.send(Unreadable(task_id, why) if isinstance(exc, InputError) else CheckFailed(task_id, why))
        return True

    serve_tasks(conn, setup, options.memory, handle)


class CheckWorker(WorkerProcess):
    """One worker process and the file it holds."""

    def __init__(self, ctx: Any, args: tuple[Any, ...]) -> None:
        super().__init__(ctx, worker_main, args)
        self.path: str | None = None
        self.task_id = 0

    def assign(self, task_id: int, path: str, now: float) -> None:
        self.task_id, self.path, self.started = task_id, path, now
        self.conn.send(Assign(task_id, path))
