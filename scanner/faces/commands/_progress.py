"""Rich progress bar on stderr for `scan` (only used when stderr is a terminal)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


class ScanBar:
    """Files, MB, rate, ETA and errors; totals grow while the crawl is running."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("[bold]scan"),
            BarColumn(),
            TextColumn("{task.fields[files]}"),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[errors]}"),
            console=console or Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("scan", total=None, files="0 files", errors="")

    def __enter__(self) -> "ScanBar":
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.stop()

    def update(self, p: Any) -> None:
        files = f"{p.files_done}/{p.files_seen}{'' if p.crawl_done else '+'} files"
        errors = f"[red]{p.errors} errors" if p.errors else ""
        self._progress.update(self._task, completed=p.bytes_done, total=max(p.bytes_seen, 1),
                              files=files, errors=errors)


class StepBar:
    """The passage step's tasks done of how many, elapsed time and ETA: at 100,000 documents the step runs
    for tens of minutes, and a stopped one goes on at the next scan (`scanner info` says how far it got)."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("[bold]passages"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("tasks"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("passages", total=None)

    def __enter__(self) -> "StepBar":
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.stop()

    def update(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)
