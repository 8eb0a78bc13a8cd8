"""The registry of report formats: `scanner report --format`, `write_report` and the TUI's Export tab all
read `FORMATS`, so a new format is one module with its render function plus one entry here.

Kept light (the format modules need only the standard library) so `scanner report --help` stays instant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scanner.core.errors import UsageError
from scanner.faces.report.csv_format import render_csv
from scanner.faces.report.html import render_html
from scanner.faces.report.json_format import json_chunks
from scanner.faces.report.model import Report
from scanner.faces.report.pan import render_pan


@dataclass(frozen=True)
class ReportFormat:
    """One way to write a report.

    `render` gives the file's text, whole or in pieces written as they are made (a large JSON report); for a
    `folder` format it gives {file name: text}, which `write_report` writes all or nothing into the folder
    -o names. `note` says what a folder format writes there.
    """

    name: str  # the --format value
    title: str  # how the TUI's Export tab lists it
    render: Callable[[Report], str] | Callable[[Report], Iterator[str]] | Callable[[Report], dict[str, str]]
    folder: bool = False
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.title} (folder)" if self.folder else self.title


FORMATS: dict[str, ReportFormat] = {f.name: f for f in (
    ReportFormat("html", "HTML", render_html),
    ReportFormat("json", "JSON", json_chunks),
    ReportFormat("csv", "CSV", render_csv),
    ReportFormat("pan", "PAN XML", render_pan, folder=True, note="one XML per suspicious document"),
)}


def report_format(name: str) -> ReportFormat:
    """The registered format `name`; a UsageError naming the choices otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UsageError(f"unknown report format {name!r}; choose one of {', '.join(FORMATS)}") from None
