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


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def render_json(report: Report) -> str:
    """One JSON document, each top-level field on a line of its own and each item of a top-level list
    (a file, a pair, a document) on one line: readable, and written by the json module's C encoder (with
    `indent`, json falls back to Python: 18 of a 50,000-pair report's 27 s).

    UTF-8-safe: a path holding undecodable bytes keeps them as \\udcXX escapes, not as invalid UTF-8."""
    data = report.to_json()
    lines = ["{"]
    for n, (key, value) in enumerate(data.items()):
        end = "," if n < len(data) - 1 else ""
        if isinstance(value, list) and value:
            items = [_compact(item) for item in value]
            lines += [f"  {_compact(key)}: [", *(f"    {item}," for item in items[:-1]), f"    {items[-1]}",
                      f"  ]{end}"]
        else:
            lines.append(f"  {_compact(key)}: {_compact(value)}{end}")
    text = "\n".join(lines) + "\n}\n"
    try:
        text.encode("utf-8")  # no lone surrogate (as nearly always): no pass of the pattern over it all
    except UnicodeEncodeError:
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text
