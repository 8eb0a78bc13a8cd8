"""One row per pair (suspected copies and pairs sharing passages), for spreadsheets.

`kind` is the pair's kind; `reworded_passages` says how many of its `passages` were found from reworded
sentences rather than verbatim runs, `shared_words` (pairs of kind "passages") the words they share,
`ocr_a` / `ocr_b` 1 when that side's text was read from images by OCR (its passages are what the OCR read),
`semantic_passages` how many of its `passages` a sentence model found alike in meaning, with few words in
common (never verbatim copies; the JSON report has each one's similarity). New columns go at the end.

Spreadsheets run formulas: a path or value starting with = + - @ (or a tab
or carriage return) would be one, so such cells get a leading apostrophe
(OWASP's CSV-injection advice). Numbers are written plainly.
"""

from __future__ import annotations

import csv
import io
import math

from scanner.faces.report.model import Report

CSV_FIELDS = ("path_a", "sha256_a", "path_b", "sha256_b", "resemblance", "containment_a_in_b",
              "containment_b_in_a", "edit_distance_estimate", "passages", "kind", "reworded_passages",
              "shared_words", "ocr_a", "ocr_b", "semantic_passages", "resemblance_error",
              "containment_a_in_b_error", "containment_b_in_a_error")  # errors: 95 % half-widths, 0 when exact
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """A CSV cell a spreadsheet will show as text, never evaluate."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def render_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_FIELDS)
    for p in report.pairs:
        writer.writerow([cell(v) for v in (p.a.path, p.a.sha256, p.b.path, p.b.sha256, p.resemblance,
                                           p.containment_a_in_b, p.containment_b_in_a, p.edit_distance_estimate,
                                           len(p.passages), p.kind, p.reworded, p.shared_words,
                                           int(p.a.ocr), int(p.b.ocr), p.semantic, p.resemblance_error,
                                           p.containment_a_in_b_error, p.containment_b_in_a_error)])
    return buffer.getvalue()
