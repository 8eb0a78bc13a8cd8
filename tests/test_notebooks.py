"""Jupyter notebooks read as a reader sees them (`scanner_plugins.notebook`): cells and outputs, not JSON;
and JSON files with their strings' escapes undone (`scanner_plugins.text.extract_json`).

Read as text, a notebook's words were its JSON's as much as its author's: a class of unrelated notebooks
shared passages of their skeleton, and text stored escaped (`\\u00e9`, Python's `json.dump` default) matched
nothing, in a notebook or in any JSON file (a chat export, a translation file). The notebooks here are
written as Jupyter writes them (`carriers.notebook_json`).
"""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path

import pytest
from carriers import notebook_cell, notebook_json, screenshot_png
from clirun import scanned_pairs
from corpus import prose

from scanner.core.model import FileRecord, TextStatus
from scanner.sources.extract import extract_bytes, extract_or_open
from scanner.sources.extract.routing import NOTEBOOK_MIME, detect_mime
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import make_plugin_manager


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager(load_entry_points=False)


def _accented(text: str) -> str:
    """Generated prose with French-looking letters: what `ensure_ascii` turns into escapes."""
    return text.replace("e", "é").replace("a", "à").replace("o", "ô")


def _read(pm, data: bytes, limits: ExtractLimits | None = None):
    mime = detect_mime(data)
    record = FileRecord(path="nb.ipynb", size=len(data), mtime_ns=0, sha256="0" * 64, mime=mime)
    return mime, extract_or_open(record, data, pm, limits or ExtractLimits(ocr=False))


def test_cells_in_order_and_each_output_in_its_best_form(pm) -> None:
    outputs = [
        {"name": "stdout", "output_type": "stream", "text": ["42 rows loaded\n"]},
        {"data": {"text/html": ["<table><tr><th>station</th><td>Grenoble</td></tr></table>"],
                  "text/plain": ["   station\n0  Grenoble"]}, "execution_count": 2, "metadata": {},
         "output_type": "execute_result"},
        {"data": {"text/markdown": "The **mean** is höher than expected",
                  "text/plain": "<IPython.core.display.Markdown object>"}, "metadata": {},
         "output_type": "display_data"},
        {"ename": "ZeroDivisionError", "evalue": "division by zero", "output_type": "error",
         "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]},
        {"data": {"application/vnd.jupyter.widget-view+json": {"model_id": "ab12"}}, "metadata": {},
         "output_type": "display_data"},
    ]
    cells = [notebook_cell("markdown", "# Météo\nLes stations du réseau.", 1),
             notebook_cell("code", "rows = load()\nrows.head()", 2, outputs=outputs),
             notebook_cell("raw", "raw notes", 3)]
    mime, extracted = _read(pm, notebook_json(cells, ensure_ascii=True))
    assert mime == NOTEBOOK_MIME
    assert extracted.status is TextStatus.OK and extracted.extractor == "notebook"
    assert extracted.text == ("# Météo\nLes stations du réseau.\n\nrows = load()\nrows.head()\n\n42 rows loaded\n\n"
                              "station Grenoble\n\nThe **mean** is höher than expected\n\n"
                              "ZeroDivisionError: division by zero\n\nraw notes")
    assert extracted.meta["outputs_not_read"] == "1 application/vnd.jupyter.widget-view+json"
    assert (extracted.meta["cells"], extracted.meta["nbformat"], extracted.meta["language"]) == ("3", "4.5", "python")


def test_nbformat_3_worksheets_inputs_and_short_output_names(pm) -> None:
    notebook = {"metadata": {"name": "old"}, "nbformat": 3, "nbformat_minor": 0, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["Old analysis"]},
        {"cell_type": "code", "input": ["x = 1\n", "x"], "language": "python", "metadata": {}, "outputs": [
            {"output_type": "pyout", "prompt_number": 1, "text": ["1"], "png": "iVBORw0KGgo="},
            {"output_type": "pyerr", "ename": "NameError", "evalue": "y", "traceback": ["NameError: y"]}]},
    ]}]}
    mime, extracted = _read(pm, json.dumps(notebook).encode())
    assert mime == NOTEBOOK_MIME
    assert extracted.text == "Old analysis\n\nx = 1\nx\n\n1\n\nNameError: y"


def test_a_damaged_notebook_or_other_json_is_read_as_text_and_says_why(pm) -> None:
    whole = notebook_json([notebook_cell("markdown", "A paragraph the damaged copy still holds.", 1)])
    mime, extracted = _read(pm, whole[: len(whole) // 2 + 40])
    assert mime == NOTEBOOK_MIME
    assert extracted.status is TextStatus.OK and extracted.extractor == "text"
    assert extracted.meta["fallback_from"].startswith("notebook: corrupt: not valid JSON")
    assert "A paragraph the damaged copy" in extracted.text
    deep = b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert extract_bytes(deep, NOTEBOOK_MIME, pm).meta["fallback_from"].startswith("notebook: corrupt")
    other = extract_bytes(b'{"nbformat": "a key", "cells": "none here"}', NOTEBOOK_MIME, pm)
    assert other.extractor == "text" and "no list of cells" in other.meta["fallback_from"]


def test_typed_by_its_keys_whatever_their_order() -> None:
    colab = json.dumps({"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": []}).encode()
    assert detect_mime(b"\xef\xbb\xbf" + colab) == NOTEBOOK_MIME
    assert detect_mime(json.dumps({"text": 'a "nbformat" key quoted', "cells": 3}).encode()) == "application/json"


def test_pictures_in_cells_and_outputs_are_members_each_once(pm) -> None:
    from PIL import Image

    shot = base64.b64encode(screenshot_png("A screenshot pasted into a cell")).decode()
    icon = io.BytesIO()
    Image.new("L", (16, 16), 255).save(icon, "PNG")
    plot = {"data": {"image/png": shot, "text/plain": "<Figure size 640x480 with 1 Axes>"}, "metadata": {},
            "output_type": "display_data"}
    tiny = {"data": {"image/png": base64.b64encode(icon.getvalue()).decode()}, "metadata": {},
            "output_type": "display_data"}
    pasted = {"shot.png": {"image/png": shot}}
    cells = [notebook_cell("markdown", "![shot](attachment:shot.png)", 1, attachments=pasted),
             notebook_cell("code", "plot()", 2, outputs=[plot, tiny]),
             notebook_cell("markdown", "Broken:", 3, attachments={"bad": {"image/png": "&&&"}})]
    _, extracted = _read(pm, notebook_json(cells))
    members = {record.path: member for record, member in extracted.members}
    assert set(members) == {"nb.ipynb!/cell 1 shot.png", "nb.ipynb!/cell 3 bad.png"}  # the plot is the same picture
    assert members["nb.ipynb!/cell 3 bad.png"].status is TextStatus.CORRUPT
    assert "<Figure size" in extracted.text


def test_a_class_of_notebooks_pairs_only_the_copy(tmp_path: Path) -> None:
    """Twelve unrelated notebooks of one template share no passage; the one that copies a paragraph of a
    French text (stored escaped, as `json.dump` writes it) is paired with that text."""
    folder = tmp_path / "class"
    folder.mkdir()
    source = _accented(prose(4_242, 400))
    (folder / "source.txt").write_text(source, encoding="utf-8")
    copied = " ".join(source.split()[100:220])
    for student in range(12):
        cells = []
        for k in range(6):
            cells.append(notebook_cell("markdown", _accented(prose(5_000 + 10 * student + k, 60)), 2 * k + 1))
            cells.append(notebook_cell("code", f"r{student}_{k} = fit{k}(data{student})", 2 * k + 2,
                                       outputs=[{"name": "stdout", "output_type": "stream", "text": ["done\n"]}]))
        if student == 4:
            cells.insert(5, notebook_cell("markdown", copied, 99))
        (folder / f"student{student:02}.ipynb").write_bytes(notebook_json(cells, ensure_ascii=True))
    found, pairs = scanned_pairs(folder, tmp_path / "i.db", "--no-semantic")
    assert found["errors"] == [] and found["partial"] == []
    assert set(pairs) == {frozenset(("source.txt", "student04.ipynb"))}
    assert pairs[frozenset(("source.txt", "student04.ipynb"))]["shared_words"] >= 110


def test_json_strings_read_with_their_escapes_undone(pm) -> None:
    rows = [{"user": "anna", "text": "Le café est fermé.\nÀ demain, dit-elle \"enfin\".", "ts": 1},
            {"user": "ivan", "text": "Привет, мир", "ts": 2, "path": "C:\\temp"}]
    chat = json.dumps({"messages": rows}).encode()  # ensure_ascii: every letter above not ASCII an escape
    assert detect_mime(chat) == "application/json"
    read = extract_bytes(chat, "application/json", pm)
    assert read.extractor == "json" and read.meta["json_escapes"] == "undone"
    assert 'Le café est fermé.\nÀ demain, dit-elle "enfin".' in read.text and "Привет, мир" in read.text
    assert '"path": "C:\\temp"' in read.text and '"user": "anna"' in read.text  # the structure as written
    lines = ("\n".join(json.dumps(row) for row in rows) + "\n").encode()  # JSON Lines: one object a line
    assert detect_mime(lines) == "application/x-ndjson"
    assert "Привет, мир" in extract_bytes(lines, "application/x-ndjson", pm).text
    plain = b'{"text": "nothing escaped here"}'
    assert extract_bytes(plain, "application/json", pm).text == plain.decode()
    odd = extract_bytes(b'{"a": "\\x41 is no JSON escape", "b": "caf\\u00e9", "c": "cut \\', "application/json", pm)
    assert odd.text == '{"a": "\\x41 is no JSON escape", "b": "café", "c": "cut \\'


def test_json_strings_are_read_in_linear_time(pm) -> None:
    """Quotes and escapes that never close a string: each character read once (a pattern that looked for a
    closing quote from every quote took ~10^11 steps here)."""
    hostile = b'"' + b'\\"' * 300_000 + b"\\\n" + b'"\\' * 300_000
    started = time.perf_counter()
    read = extract_bytes(hostile, "application/json", pm)
    assert time.perf_counter() - started < 10
    assert read.status is TextStatus.OK and len(read.text) > 1_000_000
