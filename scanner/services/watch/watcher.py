"""The watcher: observer, settle timers, the pool of check workers, and the one writer of alerts."""

from __future__ import annotations

import multiprocessing as mp
import os
import stat as stat_module
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Any

from scanner.core.errors import UsageError
from scanner.core.model import TextStatus
from scanner.services.ingest import write_checked_file
from scanner.services.watch.checking import (
    Checked,
    CheckedFile,
    Checker,
    CheckWorker,
    Unreadable,
    check_file,
)
from scanner.services.watch.hooks import HookRunner
from scanner.services.watch.records import (
    Alert,
    WatchCounters,
    WatchEvent,
    WatchOptions,
    at_least,
    is_ignored,
    severity_of,
)
from scanner.services.workers import Broken, Ready

_TICK = 0.05  # seconds between coordinator passes while anything is pending
_IDLE_TICK = 0.5
_DEFAULT_OPTIONS = WatchOptions()  # frozen, so one shared default is safe


@dataclass
class _Pending:
    """A path waiting to settle: the last event, the last stat and when it was taken."""

    last_event: float
    last_stat: tuple[int, int] | None = None
    stat_time: float = 0.0
    attempts: int = 0
    not_before: float = 0.0  # backoff after a failed read
    writing: bool = False  # written to since its last close (only known with close events)
    closed: bool = False  # its writer closed it: the content is final, checked without waiting to settle


@dataclass
class _Counts:
    values: WatchCounters = field(default_factory=WatchCounters)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **deltas: int) -> None:
        with self.lock:
            self.values = replace(self.values, **{k: getattr(self.values, k) + v for k, v in deltas.items()})


class Watcher:
    """Watches `dirs` and checks new or changed files against the protected index at `index_path`.

    `start()` returns once the observer runs and the catch-up is queued;
    `stop()` stops the observer, kills in-flight checks (their files are
    checked again on the next start) and joins every thread and process.
    Callbacks run on the watcher's own threads (alerts and events from the
    coordinator, hook failures from the hook thread): a UI must hop to its own
    thread (Textual: `post_message` / `call_from_thread`). An exception in a
    callback is swallowed, never fatal.

    Args:
        observer_factory: the watchdog observer class (injected by tests);
            default: `Observer`, or `PollingObserver` with `options.polling`.
        checker: what a worker runs per file (injected by tests); must be a
            module-level function so it can reach a worker process.
        clock: monotonic seconds, for settling and backoff.
    """

    def __init__(self, index_path: str, dirs: Sequence[str], options: WatchOptions = _DEFAULT_OPTIONS, *,
                 on_alert: Callable[[Alert], None] | None = None,
                 on_event: Callable[[WatchEvent], None] | None = None,
                 observer_factory: Callable[[], Any] | None = None,
                 checker: Checker = check_file,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not dirs:
            raise UsageError("watch needs at least one folder")
        for folder in dirs:
            if not os.path.isdir(folder):
                raise UsageError(f"not a folder: {folder}")
        self.index_path = str(index_path)
        self.dirs = sorted({os.path.abspath(d) for d in dirs})
        self.options = options
        self.on_alert = on_alert or (lambda alert: None)
        self.on_event = on_event or (lambda event: None)
        self.observer_factory = observer_factory
        self.checker = checker
        self.clock = clock
        self._counts = _Counts()
        self._pending: dict[str, _Pending] = {}
        self._walk: set[str] = set()  # folders created or moved in: their files are queued
        self._attempts: dict[str, int] = {}  # failed reads survive a path leaving `_pending` for a worker
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Any = None
        self._error: BaseException | None = None
        self._close_events = False  # the observer reports close-after-write (inotify): writers are waited for
        self._followups: dict[int, tuple[Alert, list[str], float]] = {}  # alert id -> (group, new copies, since)
        self._reviews: list[tuple[int, str]] | None = []  # queued by `review`; None once the coordinator is done

    # ---- state visible to faces --------------------------------------------

    @property
    def counters(self) -> WatchCounters:
        return self._counts.values

    @property
    def error(self) -> BaseException | None:
        """Why the watcher stopped on its own (None while running or after `stop()`)."""
        return self._error

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or in flight (tests, `--once`)."""
        return self._idle.wait(timeout)

    def review(self, alert_id: int, review: str) -> bool:
        """Queue an alert's review state ("new", "reviewed", "allowed") for the coordinator, the index's only
        writer while the watch runs; it is kept on the next pass (or when the watch stops). False when the
        coordinator no longer runs: the caller then writes it with a writer of its own."""
        from scanner.index.store import ALERT_REVIEWS

        if review not in ALERT_REVIEWS:
            raise ValueError(f"review must be one of {', '.join(ALERT_REVIEWS)}")
        with self._lock:
            if self._reviews is None or not self.running:
                return False
            self._reviews.append((alert_id, review))
        self._wake.set()
        return True

    # ---- events in (watchdog threads) -------------------------------------

    def enqueue(self, path: str, kind: str = "modified") -> None:
        """Record an event for `path` (`kind`: watchdog's event type, "catchup" or "walk"); the only thing the
        watchdog handler does."""
        if not self._inside(path):  # moved out of the watched folders
            return
        if is_ignored(path, self.options.ignore):
            self._counts.add(ignored=1)
            return
        now = self.clock()
        with self._lock:
            pending = self._pending.get(path)
            if pending is None:
                pending = self._pending[path] = _Pending(now)
            else:
                pending.last_event = now
            if kind == "closed":  # close after write: the writer is done
                pending.writing, pending.closed = False, True
            elif kind == "modified" and self._close_events:  # a file moved in comes as "created", never closed
                pending.writing, pending.closed = True, False
            self._idle.clear()
        self._wake.set()

    def enqueue_folder(self, path: str) -> None:
        """A folder was created or moved in: its files are queued by the coordinator."""
        if self._inside(path):
            with self._lock:
                self._walk.add(path)
                self._idle.clear()
            self._wake.set()

    def _inside(self, path: str) -> bool:
        return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in self.dirs)

    def _handler(self) -> Any:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type not in ("created", "modified", "moved", "closed"):
                    return
                target = getattr(event, "dest_path", "") or event.src_path
                if isinstance(target, bytes):
                    target = os.fsdecode(target)
                if event.is_directory:
                    if event.event_type in ("created", "moved"):
                        watcher.enqueue_folder(target)
                else:
                    watcher.enqueue(target, event.event_type)

        return Handler()

    # ---- lifecycle ----------------------------------------------------------

    def start(self, *, catch_up: bool = True, observe: bool = True) -> None:
        """Open the index, start observer and workers, queue the catch-up; raises what prevents that."""
        if self._thread is not None:
            raise RuntimeError("a Watcher is started once")
        self._thread = threading.Thread(target=self._run, args=(catch_up, observe), name="scanner-watch",
                                        daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join(10)
            raise self._error

    def stop(self, timeout: float = 30.0) -> None:
        """Stop and join; from a callback (the coordinator's own thread) it only asks."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # ---- the coordinator ----------------------------------------------------

    def _run(self, catch_up: bool, observe: bool) -> None:
        from scanner.index import Index

        try:
            index = Index.open(self.index_path, readonly=False)
        except BaseException as exc:  # noqa: BLE001 - reported to start()'s caller, which re-raises it
            self._error = exc
            self._ready.set()
            return
        hooks = (HookRunner(self.options.exec_command, self.options.hook_timeout, self._emit)
                 if self.options.exec_command else None)
        ctx = mp.get_context("forkserver")
        args = (self.index_path, self.options, self.checker)
        workers: list[CheckWorker] = []
        ready: OrderedDict[str, None] = OrderedDict()  # stable paths waiting for a free worker
        try:
            workers = [CheckWorker(ctx, args) for _ in range(max(1, self.options.jobs))]
            if observe:
                self._start_observer()
            if catch_up:
                self._catch_up(index)
            self._ready.set()
            self._emit(WatchEvent("ready", message=f"watching {', '.join(self.dirs)}"))
            task_ids = iter(range(1, 1 << 62))
            startup_failures = 0
            while not self._stop.is_set():
                self._expand_folders()
                self._keep_reviews(index)
                busy = {w.path for w in workers if w.path is not None}
                self._settle(ready, busy)
                for worker in workers:
                    if worker.ready and worker.path is None and ready:
                        path, _ = ready.popitem(last=False)
                        if self._unchanged_since_check(index, path):
                            continue
                        worker.assign(next(task_ids), path, self.clock())
                active = [w for w in workers if w.path is not None or not w.ready]
                if active:
                    for conn in wait([w.conn for w in active], timeout=_TICK):
                        i = next(i for i, w in enumerate(workers) if w.conn is conn)
                        replacement = self._receive(workers[i], index, hooks)
                        if replacement is not None:
                            startup_failures = startup_failures + 1 if replacement == "startup" else 0
                            if startup_failures >= 3:
                                raise RuntimeError("watch workers die while starting")
                            workers[i] = CheckWorker(ctx, args)
                    self._enforce_budget(workers, ctx, args)
                with self._lock:
                    quiet = not self._pending and not self._walk and not ready and all(
                        w.path is None for w in workers)
                if self._followups:  # copies of alerted contents: named together, not one line each
                    self._flush_followups(hooks, everything=quiet)
                if quiet:
                    with self._lock:
                        if not self._pending and not self._walk:  # nothing came in while follow-ups went out
                            self._idle.set()
                if not active:
                    self._wake.wait(_IDLE_TICK if quiet else _TICK)
                    self._wake.clear()
        except BaseException as exc:  # noqa: BLE001 - kept in `error` (raised by start()) and said as an event
            self._error = exc
            self._ready.set()
            self._emit(WatchEvent("error", message=f"watcher stopped: {type(exc).__name__}: {exc}"))
        finally:
            if self._observer is not None:
                self._observer.stop()
                self._observer.join(5)
            for worker in workers:
                if worker.path is not None:  # not recorded: checked again on the next start
                    worker.kill()
                else:
                    worker.stop()
            self._keep_reviews(index, last=True)
            index.close()
            if self._followups:  # copies found just before the stop: their paths are stored; say them too
                self._flush_followups(hooks, everything=True)
            if hooks is not None:
                hooks.close(self.options.hook_timeout + 5)
            self._idle.set()

    def _keep_reviews(self, index: Any, last: bool = False) -> None:
        """Write the review states faces queued (`review`); the last call also closes the queue."""
        with self._lock:
            reviews, self._reviews = self._reviews or [], None if last else []
        for alert_id, review in reviews:
            try:
                index.set_alert_review(alert_id, review)
            except Exception as exc:  # stopping: said, not raised out of the cleanup
                if not last:
                    raise
                self._emit(WatchEvent("error", message=f"review of alert {alert_id} not kept: {exc}"))

    def _start_observer(self) -> None:
        if self.observer_factory is not None:
            observer = self.observer_factory()
        elif self.options.polling:
            from watchdog.observers.polling import PollingObserver

            observer = PollingObserver()
        else:
            from watchdog.observers import Observer

            observer = Observer()
        handler = self._handler()
        for folder in self.dirs:
            observer.schedule(handler, folder, recursive=True)
        # inotify reports close-after-write: a file is checked when its writer is done, not when it pauses
        self._close_events = type(observer).__name__ == "InotifyObserver"
        observer.start()
        self._observer = observer

    def _catch_up(self, index: Any) -> None:
        """Queue files new or changed since the last check in `watch_state`; forget vanished ones."""
        from scanner.sources.crawl import crawl

        known = index.watched_files(self.dirs)
        seen: set[str] = set()
        queued = 0
        for entry in crawl(self.dirs, exclude=self.options.ignore):
            if entry.skip_reason is not None:
                continue
            seen.add(entry.path)
            if known.get(entry.path) != (entry.size, entry.mtime_ns):
                self.enqueue(entry.path, "catchup")
                queued += 1
        vanished = set(known) - seen
        if vanished:
            index.forget_watched_files(vanished)
        self._emit(WatchEvent("catchup", message=f"{queued} file(s) new or changed since the last watch"))

    def _expand_folders(self) -> None:
        with self._lock:
            folders, self._walk = self._walk, set()
        for folder in folders:
            for root, _dirs, files in os.walk(folder):
                for name in files:
                    self.enqueue(os.path.join(root, name), "walk")

    def _settle(self, ready: OrderedDict[str, None], busy: set[str]) -> None:
        """Move paths whose size and mtime held still across two stats into `ready`."""
        now = self.clock()
        settle = self.options.settle
        grace = self.options.open_grace
        with self._lock:  # stat outside the lock: the handler must never wait on the disk
            # the first stat is taken at once; the second `settle` later, after `settle` without events; a file
            # still open for writing waits for its close (or `open_grace` without an event); a closed one is final
            due = [(path, p.last_stat) for path, p in self._pending.items()
                   if path not in busy and now >= p.not_before
                   and (not p.writing or now - p.last_event >= grace) and (
                       p.closed or p.last_stat is None
                       or (now - p.last_event >= settle and now - p.stat_time >= settle))]
        stats: dict[str, os.stat_result | str | None] = {}
        for path, _ in due:
            try:
                stats[path] = os.lstat(path)  # a symlink is not followed out of the watched folder
            except FileNotFoundError:
                stats[path] = None
            except OSError as exc:
                stats[path] = exc.strerror or str(exc)
        report: list[tuple[str, str]] = []
        with self._lock:
            for path, last_stat in due:
                pending = self._pending.get(path)
                if pending is None or pending.last_stat != last_stat:
                    continue
                st = stats[path]
                if st is None:
                    del self._pending[path]  # gone before it settled (a temp file, a move away)
                elif isinstance(st, str):
                    if self._backoff(path, pending, st):
                        report.append((path, st))
                elif (st.st_size, st.st_mtime_ns) != pending.last_stat and not pending.closed:
                    pending.last_stat, pending.stat_time = (st.st_size, st.st_mtime_ns), now
                elif pending.last_event > pending.stat_time and not pending.closed:
                    pending.stat_time = now  # an event since the first stat: stat once more
                else:
                    del self._pending[path]
                    if stat_module.S_ISREG(st.st_mode):
                        ready[path] = None
                        ready.move_to_end(path)
        for path, reason in report:
            self._counts.add(errors=1)
            self._emit(WatchEvent("error", path, f"cannot read: {reason}"))

    def _backoff(self, path: str, pending: _Pending, reason: str) -> bool:
        """Wait longer before the next attempt; True when the attempts are used up (caller reports)."""
        pending.attempts += 1
        if pending.attempts > self.options.retries:
            del self._pending[path]
            return True
        pending.not_before = self.clock() + self.options.settle * (2 ** pending.attempts)
        pending.last_stat, pending.stat_time = None, 0.0
        return False

    def _retry(self, path: str, reason: str) -> None:
        """A worker could not read the file: back into the queue with backoff, or reported."""
        with self._lock:
            pending = self._pending.setdefault(path, _Pending(self.clock()))
            pending.attempts = max(pending.attempts, self._attempts.pop(path, 0))
            exhausted = self._backoff(path, pending, reason)
            if not exhausted:
                self._attempts[path] = pending.attempts
        if exhausted:
            self._attempts.pop(path, None)
            self._counts.add(errors=1)
            self._emit(WatchEvent("error", path, f"cannot read after {self.options.retries} retries: {reason}"))
        else:
            self._emit(WatchEvent("retry", path, f"cannot read yet ({reason}); retry {pending.attempts}"))

    def _unchanged_since_check(self, index: Any, path: str) -> bool:
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return index.watched_file(path) == (st.st_size, st.st_mtime_ns)

    def _receive(self, worker: CheckWorker, index: Any, hooks: HookRunner | None) -> str | None:
        """Handle one message from `worker`; returns why it must be replaced, if it must."""
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(timeout=2)
            code = worker.process.exitcode
            path = worker.path
            worker.kill()
            if path is None:
                return "startup"
            self._fail(path, f"check worker died (exit code {code})")
            return "died"
        if isinstance(message, Ready):
            worker.ready = True
            return None
        if isinstance(message, Broken):
            raise RuntimeError(f"watch worker cannot start: {message.reason}")
        path = worker.path
        if path is None or message.task_id != worker.task_id:
            return None
        worker.path = None
        if isinstance(message, Checked):
            self._attempts.pop(path, None)
            if message.result.changed:  # written to while being read: wait for it to settle again
                self.enqueue(path, "reread")
            else:
                self._record(index, message.result, hooks)
        elif isinstance(message, Unreadable):
            self._retry(path, message.why)
        else:
            self._fail(path, message.why)
            if not worker.process.is_alive() or message.retire:
                worker.kill()
                return "died"
        return None

    def _fail(self, path: str, reason: str) -> None:
        """A file that defeats a worker is reported, and not tried again until it changes."""
        self._attempts.pop(path, None)
        self._counts.add(errors=1)
        self._emit(WatchEvent("error", path, reason))

    def _enforce_budget(self, workers: list[CheckWorker], ctx: Any, args: tuple[Any, ...]) -> None:
        timeout = self.options.timeout
        if timeout is None:
            return
        now = self.clock()
        for i, worker in enumerate(workers):
            if worker.path is not None and now - worker.started > timeout:
                path = worker.path
                worker.kill()
                workers[i] = CheckWorker(ctx, args)
                self._fail(path, f"no result within {timeout:g} s; worker killed")

    def _root_of(self, path: str) -> str:
        return next((d for d in self.dirs if path.startswith(d.rstrip(os.sep) + os.sep)), "")

    def _record(self, index: Any, result: CheckedFile, hooks: HookRunner | None) -> None:
        """Write what a worker found; raise an alert for a new content, or add the path to its alert group."""
        path = result.path
        matches = list(result.matches)
        severity = severity_of(matches)
        below = bool(matches) and not at_least(severity, self.options.min_severity)
        if below:
            matches = []
        sources = ",".join(sorted({m["sha256"] for m in matches}))
        now = time.time()
        alert: Alert | None = None
        with index.transaction():
            if not result.locked:  # a locked file is read again by the next watch: a password may open it then
                index.put_watched_file(path, self._root_of(path), result.size, result.mtime_ns, result.sha256, now,
                                       bool(matches))
            if matches:
                group = index.alert_group(result.sha256, sources)
                if group is None:  # a content not seen before for these sources: a new alert
                    alert_id = index.add_alert(path, result.sha256, matches, now, severity=severity, sources=sources)
                    alert = Alert(now, path, result.sha256, tuple(matches), (path,), severity, alert_id)
                elif index.add_alert_paths(group.id, [path]):  # a copy of an alerted content: one more path
                    self._counts.add(copies=1)
                    self._copy_of(group, path)
            if result.added is not None:
                write_checked_file(index, result.added, result.real_path)
        self._counts.add(checked=1)
        status = TextStatus(result.status)
        if status.is_error:
            self._counts.add(errors=1)
            self._emit(WatchEvent("error", path, f"{status.value}: {result.reason}"))
        elif not status.has_text:
            self._emit(WatchEvent("skipped", path, f"{status.value}: {result.reason}"))
        note = f" ({len(result.matches)} below --min-severity {self.options.min_severity})" if below else ""
        self._emit(WatchEvent("checked", path, f"{len(matches)} match(es){note}"))
        if alert is not None:
            self._counts.add(alerts=1)
            self._raise(alert, hooks)

    def _copy_of(self, group: Any, path: str) -> None:
        """A copy of an already alerted content: named in a follow-up, sent at most every `followup_every` s."""
        known = self._followups.get(group.id)
        if known is None:
            first = Alert(group.time, group.path, group.sha256, (), (), group.severity, group.id, followup=True)
            self._followups[group.id] = (first, [path], self.clock())
        else:
            known[1].append(path)

    def _flush_followups(self, hooks: HookRunner | None, everything: bool) -> None:
        now = self.clock()
        for alert_id, (group, paths, since) in list(self._followups.items()):
            if everything or now - since >= self.options.followup_every:
                del self._followups[alert_id]
                self._raise(replace(group, time=time.time(), paths=tuple(paths)), hooks)

    def _raise(self, alert: Alert, hooks: HookRunner | None) -> None:
        try:
            self.on_alert(alert)
        except Exception as exc:  # noqa: BLE001 - a face's bug must not stop the watcher
            self._emit(WatchEvent("error", alert.path, f"alert callback failed: {type(exc).__name__}: {exc}"))
        if hooks is not None:
            hooks.submit(alert)

    def _emit(self, event: WatchEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # noqa: BLE001 - a face's bug must not stop the watcher
            pass
