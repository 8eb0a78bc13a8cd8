"""`run_scan`: crawl, dispatch files to an executor, write through the single writer, mark what vanished."""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from scanner.core.config import Params
from scanner.core.errors import ResourceError
from scanner.core.model import FileRecord, TextStatus
from scanner.index.batches import IN_BATCH
from scanner.index.failures import shortage_of
from scanner.index.store import FileState, Index
from scanner.services.ingest import Outcome
from scanner.services.scan.dispatch import Dispatch, Task, run_inline
from scanner.services.scan.resketch import Resketch, resketch_index
from scanner.services.scan.writer import Counts, FileIssue, Writer
from scanner.sources import crawl as crawling
from scanner.sources.crawl import printable_realpath
from scanner.sources.extract.readers import READERS_VERSION, ReaderChange, changes_missed
from scanner.sources.limits import ExtractLimits

MiB = 1024 * 1024
DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY = 2048 * MiB


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
    resketch: Resketch | None = None  # the index was made by an earlier algorithm version
    partial: tuple[FileIssue, ...] = ()  # indexed with their raw text too: the extractor lost > 10 % of the words
    members: int = 0  # of the files written: members of containers (archives, attachments), every level
    # what today's readers find that the files read by older ones may lack, with how many files each concerns
    older_readers: tuple[tuple[ReaderChange, int], ...] = ()
    files_reread: int = 0  # unchanged files read again (`worth_reading_again`): newer readers, passwords given


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
    limits: ExtractLimits | None = None,
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
            sketching run on Dask workers (`scanner.services.scan.dask`); None: this machine's pool.
    """
    start = time.monotonic()
    resketch = resketch_index(index, params) if index.stale else None
    roots = _distinct_roots([os.fspath(p) for p in paths], nested_too=not exclude)
    real_roots = [printable_realpath(root) for root in roots]
    run_id = index.begin_run(command)
    counts = Counts()
    writer = Writer(index, run_id, counts)
    crawled = _with_states(index, crawling.crawl(roots, exclude=tuple(exclude), max_size=max_size,
                                                 own=(os.fspath(index.path),)))
    unread_members = index.containers_with_members_read_before(READERS_VERSION, _READ_AGAIN)
    passwords = limits is not None and bool(limits.passwords)
    if passwords:  # whatever read them: a password may open them now
        unread_members |= index.containers_with_members_read_before(READERS_VERSION + 1, _LOCKED)
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

    def next_task() -> Task | None:
        """The next file that needs work; unchanged and skipped files are handled inline."""
        nonlocal crawl_done
        for entry, path, state in crawled:
            counts.seen += 1
            if entry.skip_reason:  # recorded in the index too, so the reason outlives the run's output
                counts.bytes_seen += entry.size
                writer.add(Outcome(FileRecord(path=path, size=entry.size, mtime_ns=entry.mtime_ns, sha256="",
                                              mime=""), TextStatus.SKIPPED.value, entry.skip_reason, ""))
                progress(path)
                continue
            counts.bytes_seen += entry.size
            if state is None or state.real_path is None:
                real = printable_realpath(entry.path)
                # new under this name: maybe an indexed file under another spelling of its path
                alias = index.live_path_for_real(real) if state is None else None
                if alias is not None:
                    path, state = alias, index.file_state(alias)
                else:  # a new row, or one from before migration 5: it learns its real path
                    writer.real_paths[path] = real
            if state is not None and state.size == entry.size and state.mtime_ns == entry.mtime_ns:
                if not worth_reading_again(state, path in unread_members, passwords):
                    counts.unchanged += 1
                    counts.bytes_done += entry.size
                    quiet = TextStatus(state.status).has_text and state.status != TextStatus.PARTIAL
                    counts.tally(path, state.status, "" if quiet else state.reason)
                    writer.unchanged(path)
                    progress(path)
                    continue
                counts.reread += 1  # unchanged, but newer readers, or passwords given, may find its text
            return Task(counts.seen, os.fspath(entry.path), path, entry.size, entry.mtime_ns)
        crawl_done = True
        return None

    dispatch = Dispatch(next_task, writer, progress)
    with shortage_explained(index, lambda: f"{writer.committed} files committed"):
        try:
            if dask is not None:  # issue 9: Dask executor, same writer
                from scanner.services.scan.dask import run_dask

                run_dask(dispatch, params, store_text, limits, address=dask, jobs=jobs,
                         pm_factory=pm_factory or _default_pm_factory)
            elif jobs == 0:
                run_inline(dispatch, pm, params, store_text, limits)
            elif dispatch.has_work():  # the pool's modules (multiprocessing: ~10 ms) only for files to extract
                from scanner.services.scan.pool import run_pool

                run_pool(dispatch, params, store_text, limits, progress, jobs=jobs or os.cpu_count() or 1,
                         timeout=per_file_timeout, memory=per_file_memory, pm_factory=pm_factory or _default_pm_factory)
            writer.flush()
            index.seal_postings()
            vanished = index.mark_vanished(run_id, roots, real_roots) if crawl_done else 0
            result = ScanResult(
                run_id=run_id, files_seen=counts.seen, files_indexed=counts.indexed, files_unchanged=counts.unchanged,
                files_linked=counts.linked, files_vanished=vanished, bytes_read=counts.bytes_read,
                seconds=time.monotonic() - start, errors=tuple(sorted(counts.errors, key=lambda e: e.path)),
                skipped=tuple(sorted(counts.skipped, key=lambda e: e.path)), too_short=tuple(sorted(counts.too_short)),
                resketch=resketch, partial=tuple(sorted(counts.partial, key=lambda e: e.path)), members=counts.members,
                older_readers=tuple(changes_missed(index.readers_of_live_files(READERS_VERSION))),
                files_reread=counts.reread)
            index.finish_run(run_id, {
                "files_seen": result.files_seen, "files_indexed": result.files_indexed,
                "files_unchanged": result.files_unchanged, "files_linked": result.files_linked,
                "files_vanished": vanished, "errors": len(result.errors), "skipped": len(result.skipped),
                "too_short": len(result.too_short), "partial": len(result.partial), "members": result.members,
                "reread": result.files_reread,
                "seconds": round(result.seconds, 3),
                **({"resketched": resketch.documents, "forgotten": resketch.forgotten} if resketch else {})})
        except BaseException:
            _keep_complete_files(writer)
            raise
    progress(force=True)
    return result


# what older readers may have left of a file that today's can read: no text (a type they did not know, a
# layout they could not parse); a timeout, a size limit or encryption is no matter of the readers' version
_READ_AGAIN = frozenset({TextStatus.UNSUPPORTED.value, TextStatus.EMPTY.value, TextStatus.CORRUPT.value,
                         TextStatus.ERROR.value})
_LOCKED = frozenset({TextStatus.ENCRYPTED.value})  # read again whenever the scan is given passwords
# but readers 15 read what two limits left unread: a container's members past 10,000 (one per 256 bytes of the
# file now) and a mailbox over max_bytes (read from disk now)
_LIMITS_MOVED = 15
_LEFT_BY_LIMITS = re.compile(r"archive bomb: more than 10000 members|\d+ bytes > max_bytes \d+$")


def worth_reading_again(state: FileState, members_unread: bool = False, passwords: bool = False) -> bool:
    """An unchanged file is read again when readers older than today's found no text in it, or when it is
    encrypted and the scan was given passwords; or when one of its members is such a file (`members_unread`:
    an archive's, a mail's). Such a file has no document, so nothing else would ever read it again (an XPS
    document, alone or zipped, stayed `unsupported` at every rescan after readers learnt XPS; a locked PDF
    stayed `encrypted` when its password turned up). Newer readers read it once (the reading records their
    version). A file with text keeps its document (`changes_missed` counts those, `--rebuild` reads them
    again); so do a re-read archive's members with text (linked to their documents by content)."""
    if members_unread:
        return True
    if state.doc_id is not None:
        return False
    over_old_limits = (state.readers < _LIMITS_MOVED and state.status == TextStatus.TOO_LARGE.value
                       and _LEFT_BY_LIMITS.match(state.reason) is not None)
    return (state.readers < READERS_VERSION and state.status in _READ_AGAIN) or over_old_limits or (
        passwords and state.status in _LOCKED)


def _keep_complete_files(writer: Writer) -> None:
    """Commit the files finished before a failure: the next scan resumes after them. A second failure here
    (the same full disk, more often than not) is dropped, so the first one is the one reported."""
    try:
        writer.flush()
    except Exception:  # noqa: BLE001 - the failure being handled is the one to report
        pass


@contextmanager
def shortage_explained(index: Index, kept: Callable[[], str]) -> Iterator[None]:
    """A scan step that runs out of disk, descriptors or memory stops with one line saying what was `kept`
    and that a rerun resumes (a ResourceError); other failures pass unchanged."""
    try:
        yield
    except Exception as failure:
        shortage = shortage_of(failure)
        if shortage is None:
            raise
        raise ResourceError(f"{shortage.what} while scanning into index {index.path}: {kept()}; "
                            f"rerun {shortage.remedy} to resume") from failure


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


def _with_states(index: Index, entries: Iterator[Any]) -> Iterator[tuple[Any, str, FileState | None]]:
    """Each crawled entry with its printable path and what the index holds of that path (None: nothing, or
    a skipped entry), read for IN_BATCH entries at once: a statement a file cost a rescan of 2,000
    unchanged files 26 ms of its 0.5 s."""
    while batch := list(itertools.islice(entries, IN_BATCH)):
        paths = [_display(entry) for entry in batch]
        states = index.file_states([path for entry, path in zip(batch, paths) if not entry.skip_reason])
        yield from ((entry, path, None if entry.skip_reason else states.get(path))
                    for entry, path in zip(batch, paths))


def _display(entry: Any) -> str:
    """The printable form of a crawled path (valid UTF-8 for SQLite and JSON)."""
    display = getattr(entry, "display", None)
    return display if isinstance(display, str) else os.fspath(entry.path)


def _default_pm_factory() -> Any:
    from scanner.sources.plugins import make_plugin_manager

    return make_plugin_manager()
