"""The report as one JSON document, valid against `report.schema.json` (docs/REPORT.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from scanner.faces.report.model import Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def render_json(report: Report) -> str:
    """UTF-8-safe JSON: a path holding undecodable bytes keeps them as \\udcXX escapes, not as invalid UTF-8."""
    text = json.dumps(report.to_json(), ensure_ascii=False, indent=2, allow_nan=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
