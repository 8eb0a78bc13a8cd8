"""Jupyter notebooks (`.ipynb`, nbformat 3 and 4) as a reader sees them: each cell's text in order, with the
text its code printed, and the pictures in its outputs and cells as members read by OCR.

A notebook is JSON, and read as text its words were its structure's as much as its author's: every cell
wraps its lines in `"cell_type"`, `"metadata"`, `"outputs"`, `"source"` and the lines' quotes and `\\n`
escapes, so any two notebooks of a class shared passages of that skeleton (12 unrelated notebooks gave all
66 pairs passages of it), a copied paragraph's shingles broke at every line end, and text a writer stored
escaped (`\\u00e9`, Python's `json.dump` by default: every non-ASCII letter) matched nothing. What is left
out here is said: a notebook's and its cells' metadata are no text; an output whose every form is one this
reader cannot read (a widget, JavaScript) is counted in `meta["outputs_not_read"]` with its types.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import NOTEBOOK_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl

NAME = "notebook"
# an output's forms, best first: the first it has is its text (a DataFrame's HTML table and its text/plain
# copy are one output; `display(Markdown(...))`'s text/plain is only "<IPython.core.display.Markdown object>")
_TEXT_FORMS = ("text/markdown", "text/html", "text/plain", "text/latex")
_PICTURE_FORMS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif"}
# nbformat 3 kept an output's forms under short names
_V3_FORMS = {"text": "text/plain", "html": "text/html", "markdown": "text/markdown", "latex": "text/latex",
             "png": "image/png", "jpeg": "image/jpeg", "svg": "image/svg+xml", "javascript": "application/javascript",
             "json": "application/json"}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a traceback's colours


@dataclass(frozen=True)
class Cell:
    """One cell: its kind, its own text, and its outputs (each a bundle of forms: MIME type -> content)."""

    kind: str
    source: str
    outputs: tuple[dict[str, Any], ...]
    attachments: dict[str, Any]


def _joined(value: Any) -> str:
    """nbformat's multi-line string: one string, or a list of lines each ending in its own newline."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _bundle(output: dict[str, Any]) -> dict[str, Any]:
    """An output's forms by MIME type, whatever its nbformat and output type."""
    kind = output.get("output_type")
    if kind == "stream":
        return {"text/plain": output.get("text", "")}
    if kind in ("error", "pyerr"):
        trace = output.get("traceback")
        text = "\n".join(_joined(line) for line in trace) if isinstance(trace, list) else \
            f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return {"text/plain": _ANSI.sub("", text)}
    data = output.get("data")
    if isinstance(data, dict):  # nbformat 4: execute_result, display_data, update_display_data
        return data
    return {_V3_FORMS[key]: value for key, value in output.items() if key in _V3_FORMS}  # nbformat 3: pyout...


def load_cells(data: bytes) -> tuple[list[Cell], dict[str, str]]:
    """The notebook's cells in order, and what the file says of itself (encoding, nbformat, language).

    Raises:
        ExtractionError: not JSON, or JSON that is no notebook (status corrupt: the text reader reads it).
    """
    text, encoding = decode_text(data)
    try:
        notebook = json.loads(text)
    except ValueError as exc:
        raise ExtractionError(f"not valid JSON: {exc}", status="corrupt") from None
    if not isinstance(notebook, dict):
        raise ExtractionError("JSON that is no notebook: not an object", status="corrupt")
    raw_cells = notebook.get("cells")
    if raw_cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        raw_cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                     for cell in sheet.get("cells") or ()]
    if not isinstance(raw_cells, list):
        raise ExtractionError("JSON that is no notebook: no list of cells", status="corrupt")
    cells = []
    for raw in raw_cells:
        if not isinstance(raw, dict):
            continue
        source = raw.get("source", raw.get("input", ""))  # nbformat 3 kept a code cell's text as "input"
        outputs = tuple(_bundle(output) for output in raw.get("outputs") or () if isinstance(output, dict))
        attachments = raw.get("attachments")
        cells.append(Cell(str(raw.get("cell_type", "")), _joined(source), outputs,
                          attachments if isinstance(attachments, dict) else {}))
    meta = {"encoding": encoding, "cells": str(len(cells)),
            "nbformat": f"{notebook.get('nbformat', '?')}.{notebook.get('nbformat_minor', 0)}"}
    metadata = notebook.get("metadata")
    kernel = metadata.get("kernelspec") if isinstance(metadata, dict) else None
    if isinstance(kernel, dict) and isinstance(kernel.get("language"), str):
        meta["language"] = kernel["language"]
    return cells, meta


def _output_text(bundle: dict[str, Any], limits: ExtractLimits) -> str | None:
    """An output's text in its best form; "" for a picture (read as a member); None when no form is read."""
    for form in _TEXT_FORMS:
        if form in bundle:
            value = _joined(bundle[form])
            if form == "text/html":
                from scanner_plugins.html import html_to_text

                value = html_to_text(value, limits)[0]
            return value
    return "" if any(form in bundle for form in _PICTURE_FORMS) else None


def extract_notebook(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """The cells' text in order, each code cell followed by what it printed, cells apart by a blank line."""
    cells, meta = load_cells(data)
    parts: list[str] = []
    not_read: dict[str, int] = {}
    for cell in cells:
        if cell.source.strip():
            parts.append(cell.source.strip("\n"))
        for bundle in cell.outputs:
            text = _output_text(bundle, limits)
            if text is None:
                for form in bundle:
                    not_read[form] = not_read.get(form, 0) + 1
            elif text.strip():
                parts.append(text.strip("\n"))
    if not_read:
        meta["outputs_not_read"] = ", ".join(f"{count} {form}" for form, count in sorted(not_read.items()))
    return Extracted(text="\n\n".join(parts), extractor=NAME, meta=meta)


def _pictures(cells: list[Cell]) -> Iterator[tuple[str, str, str]]:
    """(name, extension, base64) of every picture of the cells: outputs' and those pasted into a cell."""
    for number, cell in enumerate(cells, 1):
        for name, bundle in cell.attachments.items():
            for form, extension in _PICTURE_FORMS.items():
                if isinstance(bundle, dict) and form in bundle:
                    yield f"cell {number} {name}", extension, _joined(bundle[form])
        for place, bundle in enumerate(cell.outputs, 1):
            for form, extension in _PICTURE_FORMS.items():
                if form in bundle:
                    yield f"cell {number} output {place}.{extension}", extension, _joined(bundle[form])


def unpack_notebook_pictures(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """Each picture once (a plot shown twice is one picture); a notebook that does not load has none here."""
    from scanner_plugins.pictures import picture_member

    try:
        cells, _ = load_cells(data)
    except (ExtractionError, RecursionError):
        return
    seen: set[str] = set()
    for name, extension, encoded in _pictures(cells):
        encoded = "".join(encoded.split())
        if encoded in seen:
            continue
        seen.add(encoded)
        if not name.endswith(f".{extension}"):
            name = f"{name}.{extension}"
        try:
            content = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError) as exc:
            yield Member(name, None, "corrupt", f"picture not base64: {exc}", picture=True)
            continue
        budget.take(len(content), name)
        yield from picture_member(name, content)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=(NOTEBOOK_MIME,), priority=50, extract=extract_notebook)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="notebook-pictures", mimes=(NOTEBOOK_MIME,), priority=50, unpack=unpack_notebook_pictures,
                     has_text=True)]
