"""Issue 20 in the TUI: stored findings, passage-pair rows, the documents view and stored passages in the
pair view, under Textual's Pilot on a real index (real scan, real alignment, real stored findings)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher, DataTable, Static

import scanner.engine.align
import scanner.services.findings
from scanner.core.config import Params
from scanner.core.display import visible
from scanner.faces.tui import make_app
from scanner.faces.tui.app import COMMON_COLUMN, DOCUMENT_COLUMNS, FINDING_COLUMNS, SOURCE_COLUMNS, ScannerApp
from scanner.faces.tui.model import load_findings
from scanner.faces.tui.screens import PairScreen
from scanner.index import Index
from scanner.services.findings import Findings, stored_or_found
from scanner.services.passages import align_index
from scanner.services.scan.run import run_scan
from scanner.sources.plugins import make_plugin_manager
from tests.corpus import NOTICE, prose

LIFTED_WORDS = 70


def _lifted(source: str) -> str:
    """LIFTED_WORDS consecutive words from the middle of `source`."""
    words = source.split()
    start = len(words) // 3
    return " ".join(words[start : start + LIFTED_WORDS])


def _folder(root: Path) -> tuple[Path, str]:
    """host.txt lifts a 70-word passage from source.txt; three unrelated essays, one with an identical copy
    (five documents in six files)."""
    folder = root / "essays"
    folder.mkdir()
    source = prose(101, 700)
    passage = _lifted(source)
    paragraphs = prose(102, 600).split("\n\n")
    host = "\n\n".join(paragraphs[:2] + [passage] + paragraphs[2:])
    (folder / "source.txt").write_text(source, encoding="utf-8")
    (folder / "host.txt").write_text(host, encoding="utf-8")
    for seed in (103, 104, 105):
        (folder / f"other-{seed}.txt").write_text(prose(seed, 500), encoding="utf-8")
    (folder / "other-105-copy.txt").write_text(prose(105, 500), encoding="utf-8")
    return folder, passage


def _scan(folder: Path, db: Path, *, align: bool = True, store: bool = True) -> Findings | None:
    """The real scan (as `scanner scan`: files, passages, then stored findings)."""
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
        if align:
            align_index(index, Params(), jobs=0)
        return stored_or_found(index, Params()) if store else None


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, Findings]:
    root = tmp_path_factory.mktemp("documents")
    folder, passage = _folder(root)
    db = root / "index.db"
    findings = _scan(folder, db)
    assert findings is not None
    return folder, db, passage, findings


def _app(db: Path) -> ScannerApp:
    return make_app(str(db), scan_jobs=0)


def _rows(table: DataTable, columns: tuple[str, ...]) -> list[dict[str, str]]:
    return [dict(zip(columns, (str(c) for c in table.get_row_at(i)))) for i in range(table.row_count)]


async def _settle(app: ScannerApp, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.asyncio
async def test_documents_view_lists_the_host_and_opens_its_source_with_the_stored_passage(
        scanned: tuple[Path, Path, str, Findings], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, db, passage, findings = scanned
    host = next(d for d in findings.documents if d.path.endswith("host.txt"))
    assert [Path(s.path).name for s in host.sources] == ["source.txt"]
    assert 0.05 < host.share < 0.2  # 70 of ~670 words
    with Index.open(db) as index:
        host_id, source_id = index.doc_id_for_sha256(host.sha256), index.doc_id_for_sha256(host.sources[0].sha256)
        stored = index.passages.pair(host_id, source_id)
        host_text, source_text = index.text(host_id), index.text(source_id)
    assert stored is not None and stored.passages and host_text and source_text

    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert app.query_one("#findings-views", ContentSwitcher).current == "pairs"
        passages_rows = [r for r in _rows(app.query_one("#pairs", DataTable), FINDING_COLUMNS)
                         if r["kind"] == "passages"]
        assert {(r["A"], r["B"]) for r in passages_rows} in ({("host.txt", "source.txt")},
                                                             {("source.txt", "host.txt")})
        assert "1 passage pairs" in str(app.query_one("#summary", Static).render())

        await pilot.press("d")  # the documents view
        await pilot.pause()
        assert app.query_one("#findings-views", ContentSwitcher).current == "documents-view"
        table = app.query_one("#documents", DataTable)
        assert app.focused is table
        rows = _rows(table, DOCUMENT_COLUMNS)
        assert [r["document"] for r in rows] == [Path(d.path).name for d in findings.documents]
        shares = [float(r["share %"]) for r in rows]
        assert shares == sorted(shares, reverse=True)
        line = next(r for r in rows if r["document"] == "host.txt")
        assert line["share %"] == f"{100 * host.share:.1f}"
        assert line["words"] == f"{host.words:,}" and int(host.words) >= LIFTED_WORDS - 5
        assert line["sources"] == "1" and line["main source"] == "source.txt"
        assert line["main %"] == f"{100 * host.sources[0].share:.1f}"

        table.move_cursor(row=[r["document"] for r in rows].index("host.txt"))
        await pilot.press("enter")  # the host's sources
        await pilot.pause()
        sources = app.query_one("#sources", DataTable)
        assert app.focused is sources
        assert _rows(sources, SOURCE_COLUMNS) == [{"source": "source.txt",
                                                   "% of document": f"{100 * host.sources[0].share:.1f}"}]
        assert "host.txt" in str(app.query_one("#sources-title", Static).render())

        def no_aligning(*args: object, **kwargs: object) -> object:
            raise AssertionError("the pair view aligned a pair whose passages are stored")

        monkeypatch.setattr(scanner.engine.align, "align", no_aligning)
        await pilot.press("enter")  # the host beside its source
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        pair = screen.pair
        assert pair.stored and pair.title_a.endswith("host.txt") and pair.title_b.endswith("source.txt")
        expected = sorted((p.a_start, p.a_end, p.b_start, p.b_end) for p in stored.passages)
        assert list(pair.passages) == expected
        a, b = screen.selected_texts()
        a0, a1, b0, b1 = expected[0]
        assert a == visible(host_text[a0:a1]) and b == visible(source_text[b0:b1])
        core = _words(" ".join(passage.split()[3:-3]))  # the planted words, give or take the edges
        assert core in _words(a) and core in _words(b)
        assert "(stored)" in str(screen.query_one("#metrics", Static).render())
        assert "passage 1/" in str(screen.query_one("#passage-status", Static).render())
        painted = screen.query_one("#side-a")._spans  # the stored passage is painted on A's lines
        assert painted.get(host_text.count("\n", 0, a0))

        monkeypatch.undo()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PairScreen)
        assert app.focused is sources
        await pilot.press("escape")  # back to the documents
        await pilot.pause()
        assert app.focused is table
        await pilot.press("d")  # and back to the pairs
        await pilot.pause()
        assert app.query_one("#findings-views", ContentSwitcher).current == "pairs"
        assert app.focused is app.query_one("#pairs", DataTable)


@pytest.mark.asyncio
async def test_a_pair_without_stored_passages_is_aligned_on_opening(
        scanned: tuple[Path, Path, str, Findings]) -> None:
    _, db, _, _ = scanned
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        table = app.query_one("#pairs", DataTable)
        rows = _rows(table, FINDING_COLUMNS)
        target = next(i for i, r in enumerate(rows) if r["kind"] == "identical")  # one document: nothing stored
        assert {rows[target]["A"], rows[target]["B"]} == {"other-105.txt", "other-105-copy.txt"}
        table.move_cursor(row=target)
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        assert not screen.pair.stored and screen.pair.kinds == ("verbatim",)  # aligned here, kinds kept
        assert len(screen.pair.passages) == 1 and screen.pair.text_a == screen.pair.text_b
        a, b = screen.selected_texts()
        assert a == b and len(a.split()) > 400  # the whole essay


@pytest.mark.asyncio
async def test_opening_the_tui_reads_stored_findings(scanned: tuple[Path, Path, str, Findings],
                                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder, db, _, findings = scanned

    def no_finding(*args: object, **kwargs: object) -> Findings:
        raise RuntimeError("find_similar was called")

    monkeypatch.setattr(scanner.services.findings, "find_similar", no_finding)
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        summary = str(app.query_one("#summary", Static).render())
        assert "find_similar" not in summary and "Cannot read" not in summary
        assert f"{len(findings.clusters)} clusters" in summary
        assert f"{len(findings.documents)} documents with text found elsewhere" in summary
        kinds = [r["kind"] for r in _rows(app.query_one("#pairs", DataTable), FINDING_COLUMNS)]
        assert kinds.count("passages") == len(findings.passage_pairs) == 1 and "identical" in kinds

    # the same index without stored findings does call it: the patch above was in the path
    fresh = tmp_path / "unstored.db"
    _scan(folder, fresh, store=False)
    app = _app(fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert "find_similar was called" in str(app.query_one("#summary", Static).render())


@pytest.mark.asyncio
async def test_an_index_whose_passages_are_not_aligned_says_so(scanned: tuple[Path, Path, str, Findings],
                                                               tmp_path: Path) -> None:
    folder = scanned[0]
    db = tmp_path / "unaligned.db"
    _scan(folder, db, align=False, store=False)
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert "passages of 5 documents not aligned yet" in str(app.query_one("#summary", Static).render())
        await pilot.press("d")
        await pilot.pause()
        assert app.query_one("#documents", DataTable).row_count == 0
        assert "no document has passages" in str(app.query_one("#sources-title", Static).render())


def test_passage_rows_past_the_sketch_budget_are_scored_from_their_shares(
        scanned: tuple[Path, Path, str, Findings]) -> None:
    _, db, _, findings = scanned
    pair = findings.passage_pairs[0]
    with Index.open(db) as index:
        sketched = load_findings(index, index.params)
        shared = load_findings(index, index.params, sketch_rows=0)
    row = next(r for r in sketched.rows if r.kind == "passages")
    cheap = next(r for r in shared.rows if r.kind == "passages")
    assert row.from_sketches and row.edit_distance_estimate >= 0
    assert not cheap.from_sketches and cheap.edit_distance_estimate == -1 and shared.shares_only == 1
    assert (cheap.containment_a_in_b, cheap.containment_b_in_a) == (pair.share_a, pair.share_b)
    tokens = {d.sha256: d.n_tokens for d in findings.documents}
    n_a, n_b = tokens[pair.a.sha256], tokens[pair.b.sha256]
    inter = (pair.share_a * n_a + pair.share_b * n_b) / 2
    assert cheap.resemblance == pytest.approx(inter / (n_a + n_b - inter))
    assert 0.03 < cheap.resemblance < 0.1  # 70 shared words of ~1,300
    assert [r for r in shared.rows if r.kind != "passages"] == [r for r in sketched.rows if r.kind != "passages"]


def test_load_findings_of_a_scanned_index_is_fast(scanned: tuple[Path, Path, str, Findings]) -> None:
    """The first screen's data comes from storage: loading it is a small fraction of computing it."""
    _, db, _, _ = scanned
    with Index.open(db) as index:
        started = time.perf_counter()
        view = load_findings(index, index.params)
        seconds = time.perf_counter() - started
    assert view.passage_pairs == 1 and len(view.document_rows) == 2
    assert seconds < 1.0


@pytest.mark.asyncio
async def test_the_scan_tab_aligns_passages_and_stores_the_findings(scanned: tuple[Path, Path, str, Findings],
                                                                    tmp_path: Path) -> None:
    """A scan from the interface does what `scanner scan` does, so the next opening reads stored findings."""
    from textual.widgets import Input

    from scanner.services.findings import findings_key

    folder, _, _, findings = scanned
    db = tmp_path / "from-tui.db"
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(folder)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert "done: 6 seen, 6 indexed" in str(app.query_one("#scan-status", Static).render())
        await pilot.press("1", "d")
        await pilot.pause()
        rows = _rows(app.query_one("#documents", DataTable), DOCUMENT_COLUMNS)
        assert [(r["document"], r["share %"]) for r in rows] == [(Path(d.path).name, f"{100 * d.share:.1f}")
                                                                 for d in findings.documents]
    with Index.open(db) as index:
        assert index.passages.count() == 1
        assert index.stored_findings(findings_key(index, index.params)) is not None


@pytest.mark.asyncio
async def test_tables_show_their_first_rows_and_say_so(scanned: tuple[Path, Path, str, Findings],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of 10^5 rows takes minutes to fill: each shows its first TABLE_ROWS, and the summary says how
    to reach the others."""
    _, db, _, findings = scanned
    monkeypatch.setattr(scanner.faces.tui.app, "TABLE_ROWS", 1)
    app = _app(db)
    async with app.run_test(size=(160, 40)) as pilot:
        await _settle(app, pilot)
        assert app.view is not None and len(app.view.rows) > 1
        assert app.query_one("#pairs", DataTable).row_count == 1
        assert "first 1 rows" in str(app.query_one("#summary", Static).render())
        await pilot.press("d")
        await _settle(app, pilot)
        assert len(findings.documents) > 1 and app.query_one("#documents", DataTable).row_count == 1


@pytest.mark.asyncio
async def test_the_first_screen_reads_the_stored_head_then_the_rest(scanned: tuple[Path, Path, str, Findings],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    """A scan stores the findings' head (the first rows of each list, with the full counts) beside them;
    the TUI shows it first, read alone, then the rest. Heads of one row here, so the rest is there to load."""
    folder, _, _, _ = scanned
    monkeypatch.setattr(scanner.services.findings, "HEAD_ROWS", 1)
    db = tmp_path / "heads.db"
    full = _scan(folder, db)
    assert full is not None and len(full.documents) > 1  # two documents: a head of one row leaves one to load

    read: list[str] = []
    original = Index.stored_findings

    def spy(self: Index, key: str) -> str | None:
        read.append(key)
        return original(self, key)

    monkeypatch.setattr(Index, "stored_findings", spy)
    with Index.open(db) as index:
        head = scanner.services.findings.stored_head(index, Params())
    assert len(read) == 1 and read[0].endswith("#head")  # the full findings were not read
    assert head.is_head and len(head.documents) == 1 and head.total("documents") == len(full.documents)
    assert head.total("passage_pairs") == len(full.passage_pairs) and head.suspected == full.suspected
    assert head.documents[0] == full.documents[0]  # the first rows are the findings' own first rows

    seen: list[tuple[bool, str]] = []
    shown = ScannerApp.on_findings_loaded

    def record(self: ScannerApp, message) -> None:
        shown(self, message)
        seen.append((message.view.partial, str(self.query_one("#summary", Static).render())))

    monkeypatch.setattr(ScannerApp, "on_findings_loaded", record)
    app = _app(db)
    async with app.run_test(size=(160, 40)) as pilot:
        await _settle(app, pilot)
        assert [partial for partial, _ in seen] == [True, False]
        first, final = seen[0][1], seen[1][1]
        assert "the rest is loading" in first and "the rest is loading" not in final
        documents = f"{len(full.documents)} documents with text found elsewhere"
        assert documents in first and documents in final  # the full count from the first screen on
        assert app.view is not None and len(app.view.document_rows) == len(full.documents)


@pytest.mark.asyncio
async def test_documents_holding_very_common_text_are_listed_with_its_share(tmp_path: Path) -> None:
    """A notice 7 of 25 documents hold is too common to pair any two (the limit is 5 documents), so no
    share found elsewhere counts it; the documents view still lists its holders, with the share of their
    fingerprints it makes, and says why."""
    folder = tmp_path / "notices"
    folder.mkdir()
    holders = {f"doc-{i:02d}.txt" for i in range(7)}
    for i in range(25):
        text = prose(300 + i, 500)
        (folder / f"doc-{i:02d}.txt").write_text(text + ("\n\n" + NOTICE if i < 7 else ""), encoding="utf-8")
    findings = _scan(folder, tmp_path / "index.db")
    assert findings is not None and findings.common_limit == 5 and findings.common_documents == 7
    assert {Path(d.path).name for d in findings.documents} == holders
    assert all(d.share == 0 and 0.05 <= d.common < 0.2 for d in findings.documents)

    app = _app(tmp_path / "index.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        table = app.query_one("#documents", DataTable)
        columns = tuple(str(column.label) for column in table.columns.values())
        assert COMMON_COLUMN in columns and set(DOCUMENT_COLUMNS) < set(columns)
        rows = _rows(table, columns)
        assert {r["document"]: r[COMMON_COLUMN] for r in rows} == {
            Path(d.path).name: f"{100 * d.common:.1f}" for d in findings.documents}
        assert all(r["share %"] == "0.0" and r["sources"] == "0" for r in rows)
        title = str(app.query_one("#sources-title", Static).render())
        assert f"{100 * findings.documents[0].common:.1f}% of its fingerprints are very common" in title
        summary = str(app.query_one("#summary", Static).render())
        assert "0 documents with text found elsewhere · 7 with very common text" in summary
