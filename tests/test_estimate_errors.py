"""Every estimate is printed with its error, and what was not measured says so.

An index scanned with --no-text keeps sketches, not texts: `check`, the reports and the TUI can only estimate
its pairs' resemblance and containment from the sketches, and can look for no passage in them. Before, each
face printed those estimates as bare figures ("0.711") and `check` headed them with "0.0% of this document
is found in 1 source", a share nobody measured. A near-duplicate cluster's lowest resemblance, a sketch
estimate on every index, was printed bare too.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import jsonschema
import pytest
from textual.widgets import DataTable

from scanner.core.config import Params
from scanner.engine.compare import compare_texts
from scanner.faces.report import SCHEMA_PATH
from scanner.faces.tui import make_app
from scanner.faces.tui.app import FINDING_COLUMNS
from scanner.index import Index
from scanner.services.findings import stored_or_found
from scanner.services.passages import align_index
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager
from tests.clirun import run_cli
from tests.corpus import prose

# "0.711±0.078": a value and its 95 % half-width
ESTIMATE = re.compile(r"(\d\.\d+)±(\d\.\d+)")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An original, a revision keeping its first 2,600 of 3,000 words (resemblance about 0.7: far more
    shingles than the 128 a sketch keeps, so every measure of the pair is an estimate), and an unrelated text."""
    root = tmp_path_factory.mktemp("estimates") / "docs"
    root.mkdir()
    original = prose(1, 3000)
    (root / "original.txt").write_text(original)
    (root / "revised.txt").write_text(" ".join(original.split()[:2600]) + " " + prose(2, 400))
    (root / "other.txt").write_text(prose(3, 2000))
    return root


@pytest.fixture(scope="module")
def exact(folder: Path):
    """The revision against the original, measured on the texts' full shingle sets."""
    report = compare_texts((folder / "revised.txt").read_text(), (folder / "original.txt").read_text(), Params(),
                           exact=True)
    assert report.exact is not None
    return report.exact


@pytest.fixture(scope="module")
def no_text_index(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("no-text") / "index.db"
    done = run_cli("scan", str(folder), "--index", str(db), "--no-text")
    assert done.returncode == 0, done.stderr
    assert re.search(r"pairs not aligned: no text kept \(--no-text\)\s*│\s*1\b", done.stdout), done.stdout
    return db


def _within(value: float, error: float, truth: float) -> bool:
    return error > 0 and value - error <= truth <= value + error


def test_check_of_a_no_text_index_says_the_share_is_not_measured(folder: Path, no_text_index: Path, exact) -> None:
    done = run_cli("check", str(folder / "revised.txt"), "--index", str(no_text_index), "--json")
    assert done.returncode in (0, 1), done.stderr
    result = json.loads(done.stdout)["results"][0]
    assert result["sources"] == 1 and result["sources_without_text"] == 1
    match = result["matches"][0]
    assert match["path"].endswith("original.txt") and match["measure"] == "estimate"
    assert match["query_share"] is None and match["passages"] == []  # not 0.0: nothing was looked for
    assert _within(match["resemblance"], match["resemblance_error"], exact.resemblance)
    assert _within(match["containment_query_in_doc"], match["containment_query_in_doc_error"],
                   exact.containment_a_in_b)
    assert _within(match["containment_doc_in_query"], match["containment_doc_in_query_error"],
                   exact.containment_b_in_a)

    shown = run_cli("check", str(folder / "revised.txt"), "--index", str(no_text_index), env={"COLUMNS": "160"})
    assert "this document matches 1 source; the share found in it is not measured" in shown.stdout
    assert "% of this document" not in shown.stdout and "n/a" in shown.stdout
    assert "keep no text in this index (scanned with --no-text)" in shown.stdout
    assert len(ESTIMATE.findall(shown.stdout)) == 3, shown.stdout


def test_check_of_an_index_with_texts_measures_exactly(folder: Path, tmp_path: Path, exact) -> None:
    db = tmp_path / "index.db"
    assert run_cli("scan", str(folder), "--index", str(db), "--quiet").returncode == 0
    done = run_cli("check", str(folder / "revised.txt"), "--index", str(db), "--json")
    result = json.loads(done.stdout)["results"][0]
    match = result["matches"][0]
    assert result["sources_without_text"] == 0 and match["measure"] == "exact"
    assert match["resemblance"] == pytest.approx(exact.resemblance, abs=1e-6)
    assert match["resemblance_error"] == 0 and match["query_share"] > 0.8
    shown = run_cli("check", str(folder / "revised.txt"), "--index", str(db), env={"COLUMNS": "160"})
    assert "% of this document is found in 1 source" in shown.stdout and "±" not in shown.stdout


def test_clusters_print_the_lowest_resemblance_with_its_error(no_text_index: Path, exact) -> None:
    done = run_cli("clusters", "--index", str(no_text_index), env={"COLUMNS": "160"})
    low = re.search(r"near-duplicate \(>= " + ESTIMATE.pattern + r"\)", done.stdout)
    assert low is not None, done.stdout
    assert _within(float(low[1]), float(low[2]), exact.resemblance)


def test_reports_of_a_no_text_index_give_each_estimate_its_error(no_text_index: Path, tmp_path: Path,
                                                                 exact) -> None:
    out = {fmt: tmp_path / f"report.{fmt}" for fmt in ("json", "csv", "html")}
    for fmt, path in out.items():
        done = run_cli("report", "--index", str(no_text_index), "--format", fmt, "-o", str(path))
        assert done.returncode == 0, done.stderr
    report = json.loads(out["json"].read_text())
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))
    pair = next(p for p in report["pairs"] if p["kind"] == "near-duplicate")
    assert pair["measure"] == "estimate"
    assert _within(pair["resemblance"], pair["resemblance_error"], exact.resemblance)
    cluster = report["clusters"][0]
    assert _within(cluster["min_resemblance"], cluster["min_resemblance_error"], exact.resemblance)

    row = next(csv.DictReader(out["csv"].read_text().splitlines()))
    assert float(row["resemblance_error"]) == pytest.approx(pair["resemblance_error"], abs=1e-6)
    assert float(row["containment_a_in_b_error"]) > 0 and float(row["containment_b_in_a_error"]) > 0

    html = out["html"].read_text()
    assert f"{100 * pair['resemblance']:.1f}%&thinsp;±&thinsp;{100 * pair['resemblance_error']:.1f}" in html
    assert "no passage is looked for" in html


@pytest.mark.asyncio
async def test_tui_pair_table_shows_sketch_estimates_with_their_error(folder: Path, tmp_path: Path, exact) -> None:
    db = tmp_path / "index.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
        align_index(index, Params(), jobs=0)
        stored_or_found(index, Params())
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.query_one("#pairs", DataTable)
        rows = [dict(zip(FINDING_COLUMNS, (str(c) for c in table.get_row_at(i)))) for i in range(table.row_count)]
        near = next(r for r in rows if r["kind"] == "near-duplicate")
        value, error = ESTIMATE.fullmatch(near["resem."]).groups()  # type: ignore[union-attr]
        assert _within(float(value), float(error), exact.resemblance)
