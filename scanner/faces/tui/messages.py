"""Small typed messages that worker threads post to the app.

Workers never touch widgets: they post one of these (`post_message` is
thread-safe) and the app updates the screen on its own thread (toolong's habit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from scanner.faces.tui.alerts import AlertRow
from scanner.faces.tui.model import FindingsView, PairTexts


class FindingsLoaded(Message):
    """The findings were read (or computed) from the index; `view` is None when there is no readable index."""

    def __init__(self, view: FindingsView | None, problem: str = "") -> None:
        super().__init__()
        self.view = view
        self.problem = problem


class ScanProgress(Message):
    """Progress of the running scan (`progress` is a `scanner.services.scan.ScanProgress`)."""

    def __init__(self, progress: Any) -> None:
        super().__init__()
        self.progress = progress


class ScanStatus(Message):
    """A step of the scan after the files (aligning passages, finding pairs), said in the status line."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ScanComplete(Message):
    """The scan ended (done, cancelled or failed); `problems` are per-file errors and skips."""

    def __init__(self, summary: str, problems: tuple[str, ...] = (), cancelled: bool = False) -> None:
        super().__init__()
        self.summary = summary
        self.problems = problems
        self.cancelled = cancelled


@dataclass(frozen=True)
class CheckedPart:
    """A checked file, or one member of a checked archive or mail: `report` is a
    `scanner.services.check.CheckReport`, `texts` its sources' texts by doc id."""

    name: str
    sha256: str
    text: str
    report: Any
    texts: dict[int, str]


class CheckComplete(Message):
    """A file was checked: its parts (the file, or its members with text, the most found elsewhere first) and,
    for a container, its members without text ("name: why")."""

    def __init__(self, parts: tuple[CheckedPart, ...], unread: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.parts = parts
        self.unread = unread


class CheckFailed(Message):
    """A file could not be checked (unreadable, no text, no index)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__()
        self.path = path
        self.reason = reason


class PairReady(Message):
    """Two texts were aligned for the pair view."""

    def __init__(self, pair: PairTexts | None, problem: str = "") -> None:
        super().__init__()
        self.pair = pair
        self.problem = problem


class WatchAlert(Message):
    """The watcher found protected text in a file (`alert` is a `scanner.services.watch.Alert`)."""

    def __init__(self, alert: Any) -> None:
        super().__init__()
        self.alert = alert


class WatchStatus(Message):
    """The watcher started, stopped, or reported an event worth a line in the feed."""

    def __init__(self, text: str, running: bool | None = None) -> None:
        super().__init__()
        self.text = text
        self.running = running


class AlertsLoaded(Message):
    """The alerts earlier watches stored, newest first; `more`: the index holds older ones than these."""

    def __init__(self, rows: tuple[AlertRow, ...], more: bool = False) -> None:
        super().__init__()
        self.rows = rows
        self.more = more


class AlertReview(Message):
    """The alerts table asks for an alert's review state to change (`review`: "reviewed" or "allowed")."""

    def __init__(self, alert_id: int, review: str) -> None:
        super().__init__()
        self.alert_id = alert_id
        self.review = review


class AlertReviewed(Message):
    """A review state was kept in the index (or queued for the running watch), or not: `ok` False and `text`
    says why; `text` also says what was allowed."""

    def __init__(self, alert_id: int, review: str, text: str, ok: bool) -> None:
        super().__init__()
        self.alert_id = alert_id
        self.review = review
        self.text = text
        self.ok = ok


class EvidenceReady(Message):
    """An alert's evidence, one pair view per protected source (empty, and `problem` says why, when none)."""

    def __init__(self, pairs: tuple[PairTexts, ...], problem: str = "") -> None:
        super().__init__()
        self.pairs = pairs
        self.problem = problem


class ExportDone(Message):
    """A report was written (or not: `ok` False and `text` says why)."""

    def __init__(self, text: str, ok: bool) -> None:
        super().__init__()
        self.text = text
        self.ok = ok
