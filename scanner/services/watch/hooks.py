"""`watch --exec`: a command run per alert, on its own thread."""

from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import threading
from collections.abc import Callable

from scanner.services.watch.records import Alert, WatchEvent


class HookRunner:
    """Runs `--exec` per alert on its own thread; a failing hook is reported, never fatal."""

    def __init__(self, command: str, timeout: float, report: Callable[[WatchEvent], None]) -> None:
        self.argv = shlex.split(command)  # no shell, unless the user names one
        self.timeout = timeout
        self.report = report
        self.queue: queue.Queue[Alert | None] = queue.Queue(maxsize=1000)  # bounded memory
        self.thread = threading.Thread(target=self._run, name="scanner-watch-hook", daemon=True)
        self.thread.start()

    def submit(self, alert: Alert) -> None:
        try:
            self.queue.put_nowait(alert)
        except queue.Full:
            self.report(WatchEvent("hook_failed", alert.path, "too many alerts waiting for the hook; skipped"))

    def close(self, timeout: float) -> None:
        """Let queued alerts reach the hook, then stop."""
        self.queue.put(None)
        self.thread.join(timeout)

    def _run(self) -> None:
        while (alert := self.queue.get()) is not None:
            env = dict(os.environ, SCANNER_ALERT_PATH=alert.path, SCANNER_ALERT_SHA256=alert.sha256)
            try:
                done = subprocess.run(self.argv, input=json.dumps(alert.to_json(), ensure_ascii=False), text=True,
                                      env=env, capture_output=True, timeout=self.timeout)
            except (OSError, subprocess.SubprocessError) as exc:
                self.report(WatchEvent("hook_failed", alert.path, f"{type(exc).__name__}: {exc}"))
                continue
            if done.returncode != 0:
                self.report(WatchEvent("hook_failed", alert.path,
                                       f"exit {done.returncode}: {done.stderr.strip()[:200]}"))
