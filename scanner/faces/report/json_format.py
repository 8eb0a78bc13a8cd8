"""The report as one JSON document, valid against `report.schema.json` (docs/REPORT.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scanner.faces.json_lines import json_document_chunks
from scanner.faces.report.model import Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def render_json(report: Report) -> str:
    """The report as one JSON document (`json_chunks`, joined)."""
    return "".join(json_chunks(report))


def json_chunks(report: Report) -> Iterator[str]:
    """The report in pieces, each made as it is asked for (`json_document_chunks`): `write_report` writes
    them as they come, so a report of 150,000 pairs never stands in memory as one string (one was killed
    for memory at 24 GB)."""
    return json_document_chunks(report.json_fields())
