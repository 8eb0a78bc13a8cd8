"""Evidence-grade reports of an index (or of one checked document): HTML, JSON, CSV, PAN XML."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scanner.config import Params
from scanner.errors import UsageError
from scanner.report.formats import render_csv, render_html, render_json, render_pan
from scanner.report.model import REPORT_SCHEMA_VERSION, Report, build_report

FORMATS = ("html", "json", "csv", "pan")
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")

__all__ = ["FORMATS", "REPORT_SCHEMA_VERSION", "SCHEMA_PATH", "Report", "build_report", "write_report"]


def _write_new(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path`, never replacing an existing file unless `force`."""
    if path.exists() and not force:
        raise UsageError(f"{path} exists; use --force to overwrite it")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def write_report(index: Any, params: Params, fmt: str, out_path: str | os.PathLike[str], *,
                 check: tuple[str, str, str] | None = None, min_containment: float | None = None,
                 threshold: float | None = None, force: bool = False, command: str = "",
                 index_path: str = "") -> Path:
    """Build and write one report; `pan` writes one XML per suspicious document into folder `out_path`."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    report = build_report(index, params, index_path=index_path, command=command, check=check,
                          threshold=threshold, min_containment=min_containment)
    out = Path(out_path)
    if fmt == "pan":
        out.mkdir(parents=True, exist_ok=True)
        for name, xml in render_pan(report).items():
            target = out / name
            if target.resolve().parent != out.resolve():  # belt and braces: safe_name already ensures it
                raise UsageError(f"refusing to write outside {out}: {name}")
            _write_new(target, xml, force)
        return out
    render = {"html": render_html, "json": render_json, "csv": render_csv}[fmt]
    _write_new(out, render(report), force)
    return out
