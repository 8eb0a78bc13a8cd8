"""What a watch is told (options) and what it tells (alerts, events, counters)."""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    ocr_languages: str = "eng"  # Tesseract's language codes, joined by "+"
    passwords: tuple[str, ...] = field(default=(), repr=False)  # tried on encrypted files (ExtractLimits)
    semantic: bool = True  # the semantic pass (issue 21): reworded and paraphrased protected text, when installed
    exec_command: str | None = None  # hook run per alert, alert JSON on stdin (no shell)
    hook_timeout: float = 60.0
    ignore: tuple[str, ...] = TEMP_PATTERNS
    min_severity: str = "low"  # alerts below this severity are not raised
    # a passage found in at least this share of the protected documents (and in 3 at least) is the protected
    # set's own boilerplate: it does not alert
    boilerplate_share: float = 0.1
    allow_index: str | None = None  # an index of text that never alerts (licences, notices, allowed passages)
    # with close events (inotify): a file written to is checked when its writer closes it; one held open this
    # long without a write is checked anyway (and again when it is closed)
    open_grace: float = 30.0
    followup_every: float = 2.0  # seconds between follow-up lines naming new copies of an alerted content


SEVERITIES = ("low", "medium", "high")
HIGH_SHARE = 0.3  # of a protected document found in one file: high
MEDIUM_WORDS = 30  # a passage this long (and less than HIGH_SHARE): medium; shorter: low


def severity_of(matches: Sequence[dict[str, Any]]) -> str:
    """How bad a leak is, from the share of each protected document that left and the longest passage.

    high: a protected document is over 30 % in the file (or the file resembles one); medium: a passage of
    30 words or more; low: shorter passages only.
    """
    rank = 0
    for match in matches:
        if match.get("share_of_protected", 0.0) >= HIGH_SHARE or "resemblance" in match.get("rules", ()):
            rank = 2
        elif match.get("longest_passage_words", 0) >= MEDIUM_WORDS:
            rank = max(rank, 1)
    return SEVERITIES[rank]


def at_least(severity: str, minimum: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(minimum)


@dataclass(frozen=True)
class Alert:
    """Protected text found in watched files: one alert group per content (SHA-256) and set of protected
    sources, with every path that content was seen at.

    A follow-up (`followup`) names only the copies found after the group was first reported.
    """

    time: float  # epoch seconds
    path: str  # the first copy seen
    sha256: str
    matches: tuple[dict[str, Any], ...]  # Match.to_json(), passages included, with the rules they passed
    paths: tuple[str, ...] = ()  # every copy (a follow-up: the new ones)
    severity: str = "low"
    alert_id: int | None = None
    followup: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"time": iso_time(self.time), "path": self.path, "paths": list(self.paths or
                               (self.path,)), "sha256": self.sha256, "severity": self.severity}
        if self.followup:
            out["followup"] = True
        else:
            out["matches"] = list(self.matches)
        return out


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
    alerts: int = 0  # alert groups raised (a new content for its protected sources)
    errors: int = 0
    ignored: int = 0
    copies: int = 0  # more paths found holding an already alerted content (named in follow-ups)


def iso_time(when: float) -> str:
    """UTC, millisecond precision: alerts from several machines sort together."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"


def is_ignored(path: str, patterns: Sequence[str]) -> bool:
    """Temp files of browsers, office suites and editors: checked once renamed to their real name."""
    name = os.path.basename(path)
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
