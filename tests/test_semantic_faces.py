"""Semantic passages (issue 21) in every face: sentences a sentence model finds alike in meaning with few
words in common are reported as such, with their similarity, and never read as a verbatim copy.

A real index (real scan of two unrelated essays) gets one stored passage pair holding a semantic passage,
as a scan with the sentence model would store it; the report formats, the TUI's pair view and the
command-line tables then show it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from scanner.core.config import Params
from scanner.core.model import Match, Passage
from scanner.engine.sketch import shingle_text
from scanner.faces.commands._tables import _print_passages
from scanner.faces.commands.check import _render
from scanner.faces.report import build_report, load_schema, render
from scanner.faces.report.csv_format import CSV_FIELDS
from scanner.faces.report.model import Report
from scanner.faces.tui import make_app
from scanner.faces.tui.app import FINDING_COLUMNS, ScannerApp
from scanner.faces.tui.screens import PairScreen
from scanner.index import Index
from scanner.index.passages import PassagePair, StoredPassage
from scanner.services.check import CheckReport
from scanner.services.scan.run import run_scan
from scanner.sources.plugins import make_plugin_manager
from tests.corpus import HARBOUR, HARBOUR_RETOLD, prose

SIMILARITY = 0.71
LABEL = "semantic: the same meaning in other words (similarity 0.71), not a verbatim copy"
TUI_LABEL = "semantic 0.71: the same meaning in other words, not a verbatim copy"


@pytest.fixture(scope="module")
def semantic_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], StoredPassage]:
    """alpha.txt and beta.txt, unrelated essays, sharing one stored semantic passage (30 words each side)."""
    root = tmp_path_factory.mktemp("semantic")
    folder = root / "essays"
    folder.mkdir()
    texts = {"alpha.txt": prose(211, 260), "beta.txt": prose(212, 260)}
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    db = root / "index.db"
    params = Params()
    words = params.min_passage_words + 15
    with Index.open(db, readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
        ids = {Path(f.path).name: index.doc_id_for_sha256(f.sha256) for f in index.files(include_vanished=False)}
        alpha, beta = ids["alpha.txt"], ids["beta.txt"]
        assert alpha is not None and beta is not None
        lo, hi = sorted((alpha, beta))
        text_lo, text_hi = index.text(lo), index.text(hi)
        assert text_lo and text_hi
        tok_lo, tok_hi = shingle_text(text_lo, params).tokens, shingle_text(text_hi, params).tokens
        a_first, b_first = 10, 20
        a_stop, b_stop = a_first + words, b_first + words
        stored = StoredPassage(int(tok_lo.starts[a_first]), int(tok_lo.ends[a_stop - 1]),
                               int(tok_hi.starts[b_first]), int(tok_hi.ends[b_stop - 1]),
                               a_first, a_stop, b_first, b_stop, kind="semantic", similarity=SIMILARITY)
        index.passages.put([PassagePair(lo, hi, words, words, (stored,))], aligned=sorted(ids.values()))
    return db, texts, stored


@pytest.fixture(scope="module")
def report(semantic_index: tuple[Path, dict[str, str], StoredPassage]) -> Report:
    db = semantic_index[0]
    with Index.open(db) as index:
        return build_report(index, index.params, index_path=str(db), command="scanner report test",
                            clock=lambda: 1_700_000_000.0)


def _semantic_pair(report: Report):  # type: ignore[no-untyped-def]
    found = [p for p in report.pairs if p.kind == "passages"]
    assert len(found) == 1, [(p.kind, p.a.path, p.b.path) for p in report.pairs]
    return found[0]


def test_the_report_model_carries_kind_and_similarity(report: Report) -> None:
    pair = _semantic_pair(report)
    assert [(p.kind, p.similarity) for p in pair.passages] == [("semantic", SIMILARITY)]
    assert pair.semantic == 1 and pair.reworded == 0
    assert report.summary["semantic_passages"] == 1 and report.summary["reworded_passages"] == 0
    passage = pair.passages[0]
    assert report.texts[pair.a.sha256][passage.a_start:passage.a_end] == passage.text


def test_json_passage_is_semantic_with_its_similarity_and_validates(report: Report) -> None:
    doc = json.loads(str(render(report, "json")))
    jsonschema.validate(doc, load_schema())
    passages = [q for p in doc["pairs"] if p["kind"] == "passages" for q in p["passages"]]
    assert len(passages) == 1
    assert passages[0]["kind"] == "semantic" and passages[0]["similarity"] == SIMILARITY
    assert doc["summary"]["semantic_passages"] == 1


def test_json_schema_wants_similarity_exactly_on_semantic_passages(report: Report) -> None:
    schema = load_schema()
    doc = json.loads(str(render(report, "json")))
    passage = next(q for p in doc["pairs"] for q in p["passages"])
    del passage["similarity"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
    passage["kind"], passage["similarity"] = "verbatim", SIMILARITY
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
    del passage["similarity"]
    jsonschema.validate(doc, schema)


def test_csv_counts_the_semantic_passage_in_its_column(report: Report) -> None:
    rows = list(csv.DictReader(io.StringIO(str(render(report, "csv")))))
    assert tuple(rows[0]) == CSV_FIELDS and CSV_FIELDS[14] == "semantic_passages"  # columns are only appended
    assert CSV_FIELDS[:14] == ("path_a", "sha256_a", "path_b", "sha256_b", "resemblance", "containment_a_in_b",
                               "containment_b_in_a", "edit_distance_estimate", "passages", "kind",
                               "reworded_passages", "shared_words", "ocr_a", "ocr_b")
    row = next(r for r in rows if r["kind"] == "passages")
    assert row["passages"] == "1" and row["semantic_passages"] == "1" and row["reworded_passages"] == "0"


def test_html_labels_the_semantic_passage_and_never_as_verbatim(report: Report) -> None:
    page = str(render(report, "html"))
    section = page[page.index("<h2 id=passages>Shared passages</h2>"):page.index("<h2>Evidence: files</h2>")]
    assert section.count(LABEL) == 1 and "0.71" in section
    assert "<span class='kind sem'>" in section
    assert section.count("<mark class=sem>") == 2  # both sides, in their own colour
    assert "<mark>" not in section  # the verbatim highlight
    assert "<span class=kind>verbatim</span>" not in section and "reworded" not in section
    assert re.search(r"1 shared passage\(s\) \(1 semantic\)", section)
    assert "mark.sem{" in page and ".kind.sem{" in page
    assert re.search(r"<th>semantic passages[^<]*</th><td class=num>1</td>", page)


def test_pan_still_reports_the_semantic_passage_as_a_detection(report: Report) -> None:
    files = render(report, "pan")
    assert isinstance(files, dict) and len(files) == 1
    assert "detected-plagiarism" in next(iter(files.values()))


@pytest.mark.asyncio
async def test_tui_pair_view_shows_the_semantic_label_and_similarity(
        semantic_index: tuple[Path, dict[str, str], StoredPassage]) -> None:
    db = semantic_index[0]
    app: ScannerApp = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.query_one("#pairs", DataTable)
        kinds = [str(table.get_row_at(i)[FINDING_COLUMNS.index("kind")]) for i in range(table.row_count)]
        table.move_cursor(row=kinds.index("passages"))
        table.focus()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PairScreen)
        assert screen.pair.stored and screen.pair.kinds == ("semantic",)
        assert screen.pair.similarities == (SIMILARITY,)
        status = str(screen.query_one("#passage-status", Static).render())
        assert TUI_LABEL in status and "≈" in status and "verbatim)" not in status
        for side in ("#side-a", "#side-b"):
            assert screen.query_one(side)._semantic_spans  # painted in the semantic style


def test_check_render_names_the_kind_over_the_passage() -> None:
    query_text = "one two three four five six seven eight nine ten " * 3
    doc_text = "uno dos tres cuatro cinco seis siete ocho nueve diez " * 3
    passage = Passage(0, 40, 0, 45, query_text[:40], kind="semantic", similarity=SIMILARITY)
    match = Match("source.txt", "c" * 64, 0.1, 0.2, 0.2, 30, (passage,), doc_id=1)
    check = CheckReport(n_tokens=30, matches=(match,), coverage=0.5, excluded_tokens=0, guaranteed_run=7,
                        per_source_coverage={1: 0.5})
    console = Console(record=True, width=200, color_system=None)
    _render(console, "query.txt", query_text, check, SimpleNamespace(text=lambda doc_id: doc_text))
    out = console.export_text()
    assert "query.txt [0:40] semantic 0.71" in out
    assert match.to_json()["passages"] == [dict(passage.to_json())]
    assert passage.to_json()["similarity"] == SIMILARITY and passage.to_json()["kind"] == "semantic"
    # a reworded passage says so, and a summary (one side 3 times the other or more) says it is one
    for doc_end, summary in ((45, False), (120, True)):
        reworded = replace(passage, kind="reworded", similarity=None, doc_end=doc_end)
        console = Console(record=True, width=200, color_system=None)
        _render(console, "query.txt", query_text, replace(check, matches=(replace(match, passages=(reworded,)),)),
                SimpleNamespace(text=lambda doc_id: doc_text))
        out = console.export_text()
        assert "query.txt [0:40] reworded" in out and ("(a summary)" in out) == summary


def test_passage_pair_table_counts_semantic_passages() -> None:
    from scanner.services.findings import DocumentFinding, Findings, Member, PassagePairFinding, SourceFinding

    alpha, beta = Member("alpha.txt", "a" * 64), Member("beta.txt", "b" * 64)
    pair = PassagePairFinding(alpha, beta, shared_words=30, share_a=0.1, share_b=0.1, passages=3, reworded=1,
                              semantic=2)
    document = DocumentFinding("alpha.txt", alpha.sha256, 0.1, 30, 300, (SourceFinding("beta.txt", beta.sha256, 0.1),))
    findings = Findings((), (), 1, 1, 0.5, 0.5, passage_pairs=(pair,), documents=(document,), min_words=15)
    console = Console(record=True, width=200, color_system=None)
    _print_passages(console, findings)
    assert "3 (1 reworded) (2 semantic)" in console.export_text()


def test_a_reworded_passage_is_never_shown_as_a_copy() -> None:
    """A reworded passage is the same sentences in other words: the pair view keeps its kind when it aligns
    the pair itself (not stored), so it is labelled, and shown with "≈", as a semantic one is."""
    from scanner.faces.tui.model import pair_texts, passage_label, shown_as_copy

    params = Params()
    source = prose(10, 200, topic=3) + "\n\n" + " ".join(HARBOUR) + "\n\n" + prose(20, 200, topic=4)
    suspect = prose(30, 200, topic=5) + "\n\n" + " ".join(HARBOUR_RETOLD) + "\n\n" + prose(40, 200, topic=6)
    pair = pair_texts(suspect, source, "suspect.txt", "source.txt", params)
    assert pair.kinds == ("reworded",) and not pair.stored
    assert pair.label(0) == "reworded: the same sentences in other words, not a verbatim copy"
    assert not shown_as_copy(pair.kind(0)) and shown_as_copy("verbatim") and not shown_as_copy("semantic")
    summary = passage_label("reworded", None, summary=True)
    assert summary == "reworded: a summary of much longer text, not a verbatim copy"
    assert passage_label("verbatim") == "verbatim"
