"""Watch folders for leaks of protected documents.

Every new, changed or moved-in file under the watched folders is checked
against an index of protected documents; when protected text turns up in it,
an alert is raised (callback), stored in the index's `alerts` table and, if
asked, handed to a hook command.

How a file travels (watchdog's habits, DESIGN.md section 4):

* the watchdog handler only records the path and the time of the event;
* a coordinator thread waits until a path has been quiet for `settle` seconds,
  then stats it twice, `settle` apart: only a file whose size and mtime are
  stable is checked, so a file written slowly is checked once, complete;
* extraction and matching run in worker processes (bounded in-flight work);
* the coordinator alone writes to the index (alerts and `watch_state`, which
  lets a restart catch up on files changed while nothing was watching).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import subprocess
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from scanner.config import Params
from scanner.errors import UsageError

TEMP_PATTERNS = ("*.part", "~$*", ".~lock*", "*.tmp", "*.crdownload", "*.swp", "*.swx", ".#*", "*~")


@dataclass(frozen=True)
class WatchOptions:
    """When a checked file raises an alert, and how the watcher behaves."""

    min_words: int = 12  # a shared passage this long alerts (a pasted paragraph)
    min_containment: float = 0.5  # share of a protected document found in the file
    threshold: float = 0.5  # resemblance of the file to a protected document
    settle: float = 0.25  # seconds a file must stay unchanged before it is checked
    retries: int = 5  # attempts to read a file that cannot be read yet
    jobs: int = 2
    polling: bool = False  # PollingObserver, for network shares
    add: bool = False  # also add checked files to the index
    exec_command: str | None = None
    ignore: tuple[str, ...] = TEMP_PATTERNS


@dataclass(frozen=True)
class Alert:
    time: float
    path: str
    sha256: str
    matches: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"time": _iso(self.time), "path": self.path, "sha256": self.sha256, "matches": list(self.matches)}


@dataclass(frozen=True)
class WatchEvent:
    """Anything worth telling the user that is not an alert: errors, checks, catch-up."""

    kind: str  # "checked" | "error" | "hook_failed" | "catchup" | "ready"
    path: str = ""
    message: str = ""


@dataclass
class WatchCounters:
    checked: int = 0
    alerts: int = 0
    errors: int = 0
    ignored: int = 0


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"


def is_ignored(path: str, patterns: Sequence[str]) -> bool:
    name = os.path.basename(path)
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


# --------------------------------------------------------------------------
# worker side: one process keeps its read-only index and plugins open

# Per worker *process*: the read-only index and plugin manager opened once by
# the pool's initializer (a ProcessPoolExecutor task cannot carry them).
_worker_state: dict[str, Any] = {}


def _init_worker(index_path: str) -> None:
    from scanner.index import Index
    from scanner.plugins import make_plugin_manager

    _worker_state["index"] = Index.open(index_path, readonly=True)
    _worker_state["pm"] = make_plugin_manager()


def check_file(path: str, options: WatchOptions) -> dict[str, Any]:
    """Extract and match one file (in a worker); returns a plain dict for the coordinator."""
    from scanner.extract import extract_file
    from scanner.model import TextStatus
    from scanner.query import CheckOptions, check_text

    index = _worker_state["index"]
    record, extracted = extract_file(Path(path), _worker_state["pm"])
    base = {"path": path, "sha256": record.sha256, "size": record.size, "mtime_ns": record.mtime_ns}
    if extracted.status not in (TextStatus.OK, TextStatus.TOO_SHORT):
        return dict(base, status=extracted.status.value, reason=extracted.reason, matches=[])
    params = index.params
    report = check_text(extracted.text, index, params, CheckOptions(min_words=min(options.min_words,
                                                                                  params.guaranteed_run)))
    leaks = [m.to_json() for m in report.matches if _is_leak(m, options)]
    document = None
    if options.add:
        from scanner.scan import outcome_from

        outcome = outcome_from(record, extracted, params, store_text=True)
        document = (outcome.record, outcome.status, outcome.reason, outcome.extractor, outcome.document)
    return dict(base, status="ok", reason="", matches=leaks, document=document)


def _is_leak(match: Any, options: WatchOptions) -> bool:
    longest = max((len(p.text.split()) for p in match.passages), default=0)
    return (longest >= options.min_words or match.containment_doc_in_query >= options.min_containment
            or match.resemblance >= options.threshold)


# --------------------------------------------------------------------------
# the watcher


@dataclass
class _Pending:
    last_event: float
    last_stat: tuple[int, int] | None = None
    stat_time: float = 0.0
    attempts: int = 0


class Watcher:
    """Watches `dirs` and checks files against the protected index at `index_path`.

    Callbacks are called from the coordinator thread; a UI must hop to its
    own thread (Textual: `call_from_thread`).
    """

    def __init__(self, index_path: str, dirs: Sequence[str], options: WatchOptions = WatchOptions(), *,
                 on_alert: Callable[[Alert], None] | None = None,
                 on_event: Callable[[WatchEvent], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not dirs:
            raise UsageError("watch needs at least one folder")
        for folder in dirs:
            if not os.path.isdir(folder):
                raise UsageError(f"not a folder: {folder}")
        self.index_path = index_path
        self.dirs = [os.path.abspath(d) for d in dirs]
        self.options = options
        self.on_alert = on_alert or (lambda alert: None)
        self.on_event = on_event or (lambda event: None)
        self.clock = clock
        self.counters = WatchCounters()
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Any = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # ---- events in (watchdog threads) -------------------------------------

    def enqueue(self, path: str) -> None:
        """Record an event for `path`; the only thing the watchdog handler does."""
        if is_ignored(path, self.options.ignore):
            self.counters.ignored += 1
            return
        with self._lock:
            pending = self._pending.get(path)
            if pending is None:
                self._pending[path] = _Pending(self.clock())
            else:
                pending.last_event = self.clock()
        self._idle.clear()
        self._wake.set()

    def _handler(self) -> Any:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.is_directory or event.event_type in ("deleted", "opened"):
                    return
                target = getattr(event, "dest_path", "") or event.src_path
                if isinstance(target, bytes):
                    target = os.fsdecode(target)
                watcher.enqueue(target)

        return Handler()

    # ---- lifecycle ----------------------------------------------------------

    def start(self, *, catch_up: bool = True, observe: bool = True) -> None:
        self._thread = threading.Thread(target=self._run, args=(catch_up, observe), name="scanner-watch",
                                        daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or in flight (tests, `--once`)."""
        return self._idle.wait(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the coordinator ----------------------------------------------------

    def _run(self, catch_up: bool, observe: bool) -> None:
        import multiprocessing

        from scanner.index import Index

        try:
            index = Index.open(self.index_path, readonly=False)
        except BaseException as exc:  # reported to start()'s caller
            self._error = exc
            self._ready.set()
            return
        pool = ProcessPoolExecutor(max_workers=max(1, self.options.jobs),
                                   mp_context=multiprocessing.get_context("forkserver"),
                                   initializer=_init_worker, initargs=(self.index_path,))
        in_flight: dict[Future[dict[str, Any]], str] = {}
        try:
            if observe:
                self._start_observer()
            if catch_up:
                self._catch_up(index)
            self._ready.set()
            self.on_event(WatchEvent("ready", message=f"watching {', '.join(self.dirs)}"))
            while not self._stop.is_set():
                self._submit_stable(pool, in_flight, index)
                self._collect(in_flight, index)
                with self._lock:
                    quiet = not self._pending and not in_flight
                if quiet:
                    self._idle.set()
                self._wake.wait(0.05 if (in_flight or not quiet) else 0.5)
                self._wake.clear()
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            self.on_event(WatchEvent("error", message=f"watcher stopped: {exc}"))
        finally:
            if self._observer is not None:
                self._observer.stop()
                self._observer.join(5)
            for future in in_flight:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            index.close()
            self._idle.set()

    def _start_observer(self) -> None:
        if self.options.polling:
            from watchdog.observers.polling import PollingObserver as ObserverClass
        else:
            from watchdog.observers import Observer as ObserverClass
        observer = ObserverClass()
        handler = self._handler()
        for folder in self.dirs:
            observer.schedule(handler, folder, recursive=True)
        observer.start()
        self._observer = observer

    def _catch_up(self, index: Any) -> None:
        """Queue files changed (or new) since the last check recorded in `watch_state`."""
        from scanner.crawl import crawl

        known = {row[0]: (row[1], row[2]) for row in index.conn.execute(
            "SELECT path, size, mtime_ns FROM watch_state")}
        queued = 0
        for entry in crawl(self.dirs):
            if entry.skip_reason is not None:
                continue
            path = os.fsdecode(entry.path) if isinstance(entry.path, bytes) else entry.path
            if known.get(path) == (entry.size, entry.mtime_ns):
                continue
            self.enqueue(path)
            queued += 1
        self.on_event(WatchEvent("catchup", message=f"{queued} file(s) changed since the last watch"))

    def _submit_stable(self, pool: ProcessPoolExecutor, in_flight: dict[Future[dict[str, Any]], str],
                       index: Any) -> None:
        now = self.clock()
        settle = self.options.settle
        busy = set(in_flight.values())
        ready: list[str] = []
        with self._lock:
            for path, pending in list(self._pending.items()):
                if path in busy or now - pending.last_event < settle or now - pending.stat_time < settle:
                    continue
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    del self._pending[path]  # gone before it settled (a temp file, a move away)
                    continue
                except OSError as exc:
                    self._retry_or_report(path, pending, str(exc))
                    continue
                current = (st.st_size, st.st_mtime_ns)
                if pending.last_stat != current:
                    pending.last_stat, pending.stat_time = current, now
                    continue
                if not _is_regular(st.st_mode):
                    del self._pending[path]
                    continue
                ready.append(path)
                del self._pending[path]
        limit = 4 * max(1, self.options.jobs)
        for path in ready:
            if self._unchanged_since_check(index, path):
                continue
            if len(in_flight) >= limit:
                with self._lock:  # back in the queue, checked when a worker is free
                    self._pending.setdefault(path, _Pending(now - settle, None, 0.0))
                continue
            future = pool.submit(check_file, path, self.options)
            future.add_done_callback(lambda _: self._wake.set())  # collect at once, not at the next tick
            in_flight[future] = path

    def _retry_or_report(self, path: str, pending: _Pending, reason: str) -> None:
        pending.attempts += 1
        if pending.attempts > self.options.retries:
            del self._pending[path]
            self.counters.errors += 1
            self.on_event(WatchEvent("error", path, f"cannot read: {reason}"))
        else:  # back off: wait longer each time
            pending.last_event = self.clock() + self.options.settle * (2 ** pending.attempts)

    def _unchanged_since_check(self, index: Any, path: str) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        row = index.conn.execute("SELECT size, mtime_ns FROM watch_state WHERE path = ?", (path,)).fetchone()
        return row is not None and (row[0], row[1]) == (st.st_size, st.st_mtime_ns)

    def _collect(self, in_flight: dict[Future[dict[str, Any]], str], index: Any) -> None:
        for future in [f for f in in_flight if f.done()]:
            path = in_flight.pop(future)
            try:
                result = future.result()
            except Exception as exc:  # unreadable right now, or a worker died
                with self._lock:
                    pending = self._pending.setdefault(path, _Pending(self.clock()))
                    self._retry_or_report(path, pending, f"{type(exc).__name__}: {exc}")
                continue
            self._record(index, result)

    def _record(self, index: Any, result: dict[str, Any]) -> None:
        path = result["path"]
        root = next((d for d in self.dirs if path.startswith(d.rstrip("/") + "/")), "")
        matches = result["matches"]
        now = time.time()
        with index.transaction():
            index.conn.execute(
                """INSERT INTO watch_state (path, root, size, mtime_ns, sha256, checked, alerted)
                   VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(path) DO UPDATE SET root = excluded.root, size = excluded.size,
                       mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, checked = excluded.checked,
                       alerted = excluded.alerted""",
                (path, root, result["size"], result["mtime_ns"], result["sha256"], now, int(bool(matches))))
            if matches:
                index.add_alert(path, result["sha256"], matches, now)
            if result.get("document") is not None:
                record, status, reason, extractor, document = result["document"]
                doc_id = index.add_document(document) if document is not None else None
                index.put_file(record, status=status, reason=reason, extractor=extractor, doc_id=doc_id)
        self.counters.checked += 1
        if result["status"] != "ok":
            self.counters.errors += 1
            self.on_event(WatchEvent("error", path, f"{result['status']}: {result['reason']}"))
        else:
            self.on_event(WatchEvent("checked", path, f"{len(matches)} match(es)"))
        if matches:
            self.counters.alerts += 1
            alert = Alert(now, path, result["sha256"], tuple(matches))
            self.on_alert(alert)
            if self.options.exec_command:
                self._run_hook(alert)

    def _run_hook(self, alert: Alert) -> None:
        """Run the user's hook with the alert JSON on stdin; a failing hook is reported, not fatal."""
        command = shlex.split(self.options.exec_command or "")
        env = dict(os.environ, SCANNER_ALERT_PATH=alert.path, SCANNER_ALERT_SHA256=alert.sha256)
        try:
            done = subprocess.run(command, input=json.dumps(alert.to_json()), text=True, env=env,
                                  capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.on_event(WatchEvent("hook_failed", alert.path, str(exc)))
            return
        if done.returncode != 0:
            self.on_event(WatchEvent("hook_failed", alert.path,
                                     f"exit {done.returncode}: {done.stderr.strip()[:200]}"))


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)
