"""What a watch is told (options) and what it tells (alerts, events, counters)."""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TEMP_PATTERNS = ("*.part", "~$*", ".~lock*", "*.tmp", "*.crdownload", "*.swp", "*.swx", ".#*", "*~")
MiB = 1024 * 1024


@dataclass(frozen=True)
class WatchOptions:
    """When a checked file raises an alert, and how the watcher behaves.

    The defaults are meant for leak detection: a single protected paragraph
    (12 words or more, verbatim) pasted into another document alerts, as does
    a file holding half of a protected document or resembling one.
    """

    min_words: int = 12  # a shared passage this long alerts (a pasted paragraph)
    min_containment: float = 0.5  # share of a protected document found in the file
    threshold: float = 0.5  # resemblance of the file to a protected document
    settle: float = 0.25  # seconds a file must stay unchanged before it is checked
    retries: int = 5  # attempts to read a file that cannot be read yet (backoff doubles)
    jobs: int = 2  # worker processes
    timeout: float | None = 60.0  # seconds a worker may spend on one file before it is killed
    memory: int | None = 2048 * MiB  # address space a worker may add while checking a file
    polling: bool = False  # PollingObserver, for network shares
    add: bool = False  # also add checked files to the index
    ocr: bool = True  # read images and scanned pages with Tesseract (when installed)
    exec_command: str | None = None  # hook run per alert, alert JSON on stdin (no shell)
    hook_timeout: float = 60.0
    ignore: tuple[str, ...] = TEMP_PATTERNS


@dataclass(frozen=True)
class Alert:
    """Protected text found in a watched file."""

    time: float  # epoch seconds
    path: str
    sha256: str
    matches: tuple[dict[str, Any], ...]  # Match.to_json(), passages included

    def to_json(self) -> dict[str, Any]:
        return {"time": iso_time(self.time), "path": self.path, "sha256": self.sha256,
                "matches": list(self.matches)}


@dataclass(frozen=True)
class WatchEvent:
    """Anything worth telling the user that is not an alert.

    kind: "ready", "catchup", "checked", "skipped" (no text, e.g. an image),
    "retry", "error" (reported, the watcher goes on; with an empty path: the
    watcher itself stopped, see `Watcher.error`), "hook_failed".
    """

    kind: str
    path: str = ""
    message: str = ""


@dataclass(frozen=True)
class WatchCounters:
    checked: int = 0
    alerts: int = 0
    errors: int = 0
    ignored: int = 0


def iso_time(when: float) -> str:
    """UTC, millisecond precision: alerts from several machines sort together."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"


def is_ignored(path: str, patterns: Sequence[str]) -> bool:
    """Temp files of browsers, office suites and editors: checked once renamed to their real name."""
    name = os.path.basename(path)
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
