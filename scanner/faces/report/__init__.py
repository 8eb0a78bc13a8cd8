"""Evidence-grade reports of an index, or of one checked document: HTML, JSON, CSV, PAN XML.

`build_report` gathers the content once as plain data (`builder.py`); one
module per format renders it (`html.py`, `json_format.py`, `csv_format.py`,
`pan.py`), named in the registry `formats.FORMATS`; `write_report` is what
the CLI and the TUI call.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.core.config import Params
from scanner.core.errors import UsageError
from scanner.faces.report.formats import FORMATS, ReportFormat, report_format
from scanner.faces.report.json_format import SCHEMA_PATH, load_schema
from scanner.faces.report.model import REPORT_SCHEMA_VERSION, CheckedDocument, Report, Selection
from scanner.faces.report.output import check_path, safe_target, target_free, write_new

if TYPE_CHECKING:
    from scanner.faces.report.builder import build_report

__all__ = ["FORMATS", "REPORT_SCHEMA_VERSION", "SCHEMA_PATH", "CheckedDocument", "Report", "ReportFormat",
           "Selection", "build_report", "checked_document", "load_schema", "render", "report_format",
           "write_report"]


def __getattr__(name: str) -> Any:
    """`build_report` is imported when first asked for: the builder pulls in numpy and the engine, which
    `scanner report --help` (reading the format registry) has no use for."""
    if name == "build_report":
        from scanner.faces.report.builder import build_report

        return build_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(report: Report, fmt: str) -> str | dict[str, str]:
    """The report in one format: a string, or {file name: text} for a folder format such as `pan`."""
    rendered = report_format(fmt).render(report)
    return rendered if isinstance(rendered, (str, dict)) else "".join(rendered)


def checked_document(path: str | os.PathLike[str], pm: Any = None) -> CheckedDocument:
    """Extract a file to check (`--check FILE`) with the evidence a report names."""
    from scanner.sources.extract import extract_text
    from scanner.sources.plugins import make_plugin_manager

    record, extracted = extract_text(Path(path), pm if pm is not None else make_plugin_manager())
    return CheckedDocument(str(path), record.sha256, record.size, record.mtime_ns, extracted.text, record.mime,
                           ocr=extracted.status == "ocr")


def _legacy_check(check: tuple[str, str, str]) -> CheckedDocument:
    """(path, sha256, text) as the TUI keeps it: size and mtime from the file when it is still there."""
    path, sha256, text = check
    try:
        st = os.stat(path)
        size, mtime_ns = st.st_size, st.st_mtime_ns
    except OSError:
        size, mtime_ns = len(text.encode("utf-8", "surrogateescape")), 0
    return CheckedDocument(path, sha256, size, mtime_ns, text)


def write_report(index: Any, params: Params, fmt: str, out_path: str | os.PathLike[str], *,
                 selection: Selection | None = None, force: bool = False, command: str = "",
                 index_path: str = "", check: tuple[str, str, str] | CheckedDocument | None = None,
                 threshold: float | None = None, min_containment: float | None = None,
                 clock: Callable[[], float] = time.time) -> Path:
    """Build the report and write it to `out_path` (for `pan`: a folder, one XML per suspicious document).

    Never replaces an existing file unless `force` (UsageError, checked before any work is done).
    `check`, `threshold` and `min_containment` are shorthands for the fields of `selection`.

    Returns:
        the file (or folder) written.
    """
    spec = report_format(fmt)
    selection = selection or Selection()
    if check is not None:
        selection = dataclasses.replace(
            selection, check=check if isinstance(check, CheckedDocument) else _legacy_check(check))
    if threshold is not None:
        selection = dataclasses.replace(selection, threshold=threshold)
    if min_containment is not None:
        selection = dataclasses.replace(selection, min_containment=min_containment)
    out = Path(out_path)
    check_path(out)
    if spec.folder:
        if out.exists() and not out.is_dir():
            what = spec.note or "one file per document"
            raise UsageError(f"{out} is not a folder; --format {spec.name} writes {what} into a folder")
    else:
        target_free(out, force)
    from scanner.faces.report.builder import build_report

    report = build_report(index, params, selection, index_path=index_path, command=command, clock=clock)
    rendered = spec.render(report)
    if isinstance(rendered, dict):
        return _write_folder(out, rendered, force)
    pieces = [rendered] if isinstance(rendered, str) else rendered
    write_new(out, (piece.encode("utf-8", "backslashreplace") for piece in pieces), force=force)
    return out


def _write_folder(folder: Path, files: dict[str, str], force: bool) -> Path:
    if not folder.exists():
        if not folder.parent.is_dir():
            raise UsageError(f"directory {folder.parent} does not exist")
        folder.mkdir()
    targets = {name: safe_target(folder, name) for name in files}
    taken = [str(t) for t in targets.values() if t.exists() or t.is_symlink()]
    if taken and not force:  # all or nothing: a half-written set would be scored as a whole run
        raise UsageError(f"{taken[0]} exists ({len(taken)} file(s) in {folder} would be replaced); "
                         "use --force to overwrite them")
    for name, text in files.items():
        write_new(targets[name], text.encode("utf-8"), force=force)
    return folder
