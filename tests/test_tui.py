"""The real TUI under Textual's Pilot, on a real index of the sample corpus."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Button, Checkbox, DataTable, Input, RichLog, Select, Static, TabbedContent

from scanner.core.config import Params
from scanner.core.display import visible
from scanner.faces.report import REPORT_SCHEMA_VERSION
from scanner.faces.tui import make_app
from scanner.faces.tui.app import FINDING_COLUMNS, ScannerApp
from scanner.faces.tui.model import line_spans, path_suggestion, profile_strip
from scanner.faces.tui.screens import HelpScreen, PairScreen
from scanner.index import Index
from scanner.services.findings import stored_or_found
from scanner.services.passages import align_index
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"


def _index_of(folder: Path, db: Path) -> Path:
    """A real index of `folder` (its SOURCES.md aside), scanned in this process as `scanner scan` does:
    the files, then the passages they share, then the findings stored."""
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0, exclude=("SOURCES.md",))
        align_index(index, Params(), jobs=0)
        stored_or_found(index, Params())
    return db


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _index_of(SAMPLE, tmp_path_factory.mktemp("tui") / "sample.db")


@pytest.fixture
def db(sample_db: Path, tmp_path: Path) -> Path:
    """A private copy: scans and watches write to it."""
    copy = tmp_path / "index.db"
    shutil.copy(sample_db, copy)
    return copy


def _app(db: Path) -> ScannerApp:
    from scanner.services.watch import WatchOptions

    return make_app(str(db), scan_jobs=0, watch_options=WatchOptions(jobs=1, settle=0.1))


def _rows(table: DataTable, columns: tuple[str, ...] = FINDING_COLUMNS) -> list[dict[str, str]]:
    return [dict(zip(columns, (str(c) for c in table.get_row_at(i)))) for i in range(table.row_count)]


def _text(app: ScannerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def _log(log: RichLog) -> str:
    """A RichLog's text with wrapped lines joined back."""
    return "".join(str(line.text) for line in log.lines)


async def _settle(app: ScannerApp, pilot) -> None:
    """Wait for the thread workers, then for the messages they posted."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def _check(app: ScannerApp, pilot, path: Path) -> None:
    """Check `path` in the Check tab, and wait for its result."""
    await pilot.press("2")
    app.query_one("#check-path", Input).value = str(path)
    await pilot.press("enter")
    await _settle(app, pilot)


@pytest.mark.asyncio
async def test_findings_show_planted_cases_sort_and_filter(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        rows = _rows(app.query_one("#pairs", DataTable))
        kinds = {(r["kind"], Path(r["A"]).name, Path(r["B"]).name) for r in rows}
        speech = {"speech-backup-copy.txt", "gettysburg-address.txt", "gettysburg.txt"}  # the last in a ZIP
        assert any(kind == "identical" and {a, b} <= speech for kind, a, b in kinds)
        assert ("containment", "mit-license.txt", "tidewater-readme.md") in kinds
        assert any(r["kind"] == "near-duplicate" and "declaration-print.pdf" in r["B"] for r in rows)
        scores = [float(r["resem."].split("±")[0]) for r in rows]  # an estimate carries its error
        assert scores == sorted(scores, reverse=True)  # strongest first
        summary = _text(app, "#summary")
        with Index.open(db) as index:
            documents = index.stats().documents_ok
        assert f"{documents} documents in" in summary and "3 clusters" in summary and "suspected copies" in summary
        # the paraphrased harbour paragraph: a passages pair whose passages the pair view labels semantic
        assert ("passages", "harbour-notice.txt", "harbour-newsletter.txt") in kinds
        assert sum(app.query_one("#histogram").counts) == len(rows)

        await pilot.press("s")  # next column: A in B
        await pilot.pause()
        contained = [float(r["A in B"].split("±")[0]) for r in _rows(app.query_one("#pairs", DataTable))]
        assert contained == sorted(contained, reverse=True)
        await pilot.click("#pairs", offset=(2, 0))  # the "kind" header
        await pilot.pause()
        assert [r["kind"] for r in _rows(app.query_one("#pairs", DataTable))][0] == "containment"

        await pilot.press("slash")
        assert app.focused is app.query_one("#filter", Input)
        await pilot.press(*"tidewater", "enter")
        await pilot.pause()
        filtered = _rows(app.query_one("#pairs", DataTable))
        assert filtered and all("tidewater" in r["A"] + r["B"] for r in filtered)
        assert len(filtered) < len(rows)
        assert app.focused is app.query_one("#pairs", DataTable)
        await pilot.press("q")
    assert app.return_code == 0


@pytest.mark.asyncio
async def test_pair_view_highlights_and_jumps_between_passages(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        table = app.query_one("#pairs", DataTable)
        target = next(i for i, r in enumerate(_rows(table)) if r["kind"] == "containment"
                      and "mit-license" in r["A"])
        table.move_cursor(row=target)
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        a, b = screen.selected_texts()
        assert a.startswith("MIT License") and b.startswith("MIT License")
        assert "passage 1/" in _text(app, "#passage-status")
        assert "resemblance" in _text(app, "#metrics")
        side_b = screen.query_one("#side-b")
        start_row = b and screen.pair.text_b.count("\n", 0, screen.pair.passages[0][2])
        assert side_b._spans.get(start_row)  # the shared passage is painted in B
        await pilot.press("n")
        await pilot.pause()
        assert screen.current == 1 % len(screen.pair.passages)
        await pilot.press("p")
        await pilot.pause()
        assert screen.current == 0
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PairScreen)


@pytest.mark.asyncio
async def test_pair_view_of_a_reworded_copy_steps_through_several_passages(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        table = app.query_one("#pairs", DataTable)
        rows = _rows(table)
        target = next(i for i, r in enumerate(rows) if "declaration-reader" in r["A"] + r["B"])
        table.move_cursor(row=target)
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        assert len(screen.pair.passages) >= 1
        seen = set()
        for _ in range(len(screen.pair.passages)):
            a, b = screen.selected_texts()
            assert a.split()[:3] == b.split()[:3]  # both sides show the same passage
            seen.add(screen.current)
            await pilot.press("n")
            await pilot.pause()
        assert seen == set(range(len(screen.pair.passages)))
        assert screen.current == 0  # wrapped around


@pytest.mark.asyncio
async def test_check_tab_lists_the_source_of_a_lifted_passage(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        assert app.query_one(TabbedContent).active == "check"
        assert app.focused is app.query_one("#check-path", Input)
        essay = SAMPLE / "submissions" / "essay-on-public-memory.txt"
        await pilot.press(*"sample")  # typed: the path completion offers the folder
        await pilot.pause(0.1)
        assert app.query_one("#check-path", Input)._suggestion == "sample_corpus/"
        app.query_one("#check-path", Input).value = str(essay)
        await pilot.press("enter")
        await _settle(app, pilot)
        columns = ("source",)
        rows = _rows(app.query_one("#matches", DataTable), columns)
        assert [Path(r["source"]).name for r in rows] in (["gettysburg-address.txt"], ["speech-backup-copy.txt"])
        assert "of this file is found in 1 source" in _text(app, "#check-summary")
        assert "It is rather for us to be here dedicated" in _text(app, "#check-passages")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert isinstance(app.screen, PairScreen)
        assert app.screen.selected_texts()[0].startswith("It is rather for us to be here dedicated")


@pytest.mark.asyncio
async def test_file_names_with_brackets_show_verbatim(tmp_path: Path) -> None:
    """Brackets in file names are not Rich markup: "[final]" once vanished from the table and "[/b]"
    stopped the app. Columns are as wide as their longest cell from the first frame."""
    folder = tmp_path / "share"
    folder.mkdir()
    speech = (SAMPLE / "originals" / "gettysburg-address.txt").read_bytes()
    names = ("report [final].txt", "notes[/b] copy.txt")  # the second one in a folder named "notes["
    for name in names:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_bytes(speech)
    essay = folder / "essay [draft].txt"
    essay.write_bytes(b"A student wrote this. " + speech[200:900] + b" And more of her own words here.")
    app = _app(_index_of(folder, tmp_path / "index.db"))
    async with app.run_test(size=(160, 40)) as pilot:
        await _settle(app, pilot)
        table = app.query_one("#pairs", DataTable)
        rows = _rows(table)
        shown = {r["A"] for r in rows} | {r["B"] for r in rows}  # paths below the folder they share
        assert set(names) | {essay.name} <= shown
        identical = [r for r in rows if r["kind"] == "identical"]
        assert {identical[0]["A"], identical[0]["B"]} == set(names)
        for name, column in zip(FINDING_COLUMNS, table.ordered_columns):
            assert column.width == max(len(name), *(len(r[name]) for r in rows))
        await pilot.press("enter")  # the pair view of the first row
        await _settle(app, pilot)
        assert isinstance(app.screen, PairScreen)
        assert "[" in app.screen.pair.title_a + app.screen.pair.title_b
        await pilot.press("escape")
        await pilot.pause()
        await _check(app, pilot, essay)
        sources = {r["source"] for r in _rows(app.query_one("#matches", DataTable), ("source",))}
        assert sources and sources <= {str(folder / name) for name in names}
        assert "essay [draft].txt" in _text(app, "#check-summary")


@pytest.mark.asyncio
async def test_escape_sequences_in_a_document_are_shown_not_obeyed(tmp_path: Path) -> None:
    """A document's ESC sequences (conceal, window title) and bidi overrides reach the screen as visible
    stand-ins, one for one, so the pair view still lines its passages up with the text."""
    folder = tmp_path / "share"
    folder.mkdir()
    speech = (SAMPLE / "originals" / "gettysburg-address.txt").read_text(encoding="utf-8")
    hostile = speech[:400] + "\x1b[8mconcealed\x1b[0m \x1b]0;pwned\x07 \u202etxt.exe " + speech[400:]
    (folder / "copy.txt").write_text(hostile, encoding="utf-8")
    (folder / "original.txt").write_text(speech, encoding="utf-8")
    app = _app(_index_of(folder, tmp_path / "index.db"))
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert isinstance(app.screen, PairScreen)
        pair = app.screen.pair
        shown = pair.text_a if "concealed" in pair.text_a else pair.text_b
        assert len(shown) == len(hostile)  # one for one: offsets hold
        assert "\u241b[8mconcealed\u241b[0m \u241b]0;pwned\u2407 \ufffdtxt.exe" in shown
        assert not any(ch in pair.text_a + pair.text_b for ch in "\x1b\x07\u202e")
        assert "\x1b]0;" not in app.export_screenshot()
        originals = (hostile, speech) if shown is pair.text_a else (speech, hostile)
        for a0, a1, b0, b1 in pair.passages:  # each highlighted span is the document's own text there
            assert pair.text_a[a0:a1] == visible(originals[0][a0:a1])
            assert pair.text_b[b0:b1] == visible(originals[1][b0:b1])


@pytest.mark.asyncio
async def test_check_tab_reports_an_unreadable_file(db: Path, tmp_path: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        app.query_one("#check-path", Input).value = str(tmp_path / "nope.txt")
        await pilot.click("#check-run")
        await _settle(app, pilot)
        assert "cannot check" in _text(app, "#check-summary")
        assert app.query_one("#matches", DataTable).row_count == 0


@pytest.mark.asyncio
async def test_scan_tab_scans_a_folder_and_findings_refresh(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "new"
    folder.mkdir()
    text = (SAMPLE / "unrelated" / "recipe-rye-bread.md").read_text()
    (folder / "bread.md").write_text(text)
    (folder / "bread-copy.md").write_text(text.replace("two days", "two long days"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(folder)
        await pilot.press("enter")
        await _settle(app, pilot)
        status = _text(app, "#scan-status")
        assert "done: 3 seen" in status, status
        assert not app.query_one("#scan-start", Button).disabled
        assert app.query_one("#scan-cancel", Button).disabled
        assert "broken.pdf" in _log(app.query_one("#scan-log", RichLog))  # per-file problems are listed
        with Index.open(db) as index:  # the sample's documents and bread-copy.md (bread.md is the recipe's copy)
            documents = index.stats().documents_ok
        assert f"{documents} documents in" in _text(app, "#summary")
        rows = _rows(app.query_one("#pairs", DataTable))
        assert any("bread-copy.md" in r["A"] + r["B"] for r in rows)


@pytest.mark.asyncio
async def test_scan_can_be_cancelled(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scanner.services.ingest

    folder = tmp_path / "many"
    folder.mkdir()
    words = (SAMPLE / "originals" / "declaration-of-independence.txt").read_text().split()
    for i in range(400):
        (folder / f"f{i:03}.txt").write_text(" ".join(words[i % 50:] + [str(i)] * 20))
    real_extract_one = scanner.services.ingest.extract_one

    def slow_extract_one(*args, **kwargs):  # 400 files take 20 s: the cancel always lands mid-scan
        time.sleep(0.05)
        return real_extract_one(*args, **kwargs)

    monkeypatch.setattr(scanner.services.ingest, "extract_one", slow_extract_one)
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(folder)
        await pilot.click("#scan-start")
        assert app.scanning
        await pilot.press("x")
        await _settle(app, pilot)
        assert _text(app, "#scan-status").startswith("cancelled"), _text(app, "#scan-status")
        assert not app.scanning and not app.query_one("#scan-start", Button).disabled


@pytest.mark.asyncio
async def test_scan_from_a_missing_index_creates_it(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        assert "No index at" in _text(app, "#summary")
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(SAMPLE / "originals") + " " + str(SAMPLE / "copies")
        await pilot.press("enter")
        await _settle(app, pilot)
        # 4 originals and 4 copies, one a ZIP (its 2 members indexed, not it) and one a mail (its attachment too)
        assert "done: 8 seen, 10 indexed" in _text(app, "#scan-status")
        assert "identical" in {r["kind"] for r in _rows(app.query_one("#pairs", DataTable))}


@pytest.mark.asyncio
async def test_export_writes_a_report_and_refuses_to_overwrite(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        app.query_one("#export-format", Select).value = "json"
        app.query_one("#export-path", Input).value = str(out)
        await pilot.click("#export-run")
        await _settle(app, pilot)
        assert _text(app, "#export-status") == f"wrote {out}"
        assert f'"schema_version": {REPORT_SCHEMA_VERSION}' in out.read_text()
        app.query_one("#export-path", Input).focus()
        await pilot.press("enter")  # again: the file exists
        await _settle(app, pilot)
        assert _text(app, "#export-status").startswith("cannot write")
        app.query_one("#export-force", Checkbox).value = True
        app.query_one("#export-scope", Select).value = "check"
        await pilot.press("enter")
        await pilot.pause()
        assert "no checked file yet" in _text(app, "#export-status")


@pytest.mark.asyncio
async def test_export_of_the_checked_file(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.csv"
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _check(app, pilot, SAMPLE / "submissions" / "essay-on-public-memory.txt")
        await pilot.press("5")
        app.query_one("#export-format", Select).value = "csv"
        app.query_one("#export-scope", Select).value = "check"
        app.query_one("#export-path", Input).value = str(out)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert _text(app, "#export-status") == f"wrote {out}"
    body = out.read_text()
    assert "essay-on-public-memory.txt" in body, body
    assert "gettysburg-address.txt" in body or "speech-backup-copy.txt" in body


@pytest.mark.asyncio
async def test_watch_tab_shows_a_live_alert_and_stops(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "outbox"
    folder.mkdir()
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        app.query_one("#watch-path", Input).value = str(folder)
        await pilot.click("#watch-start")
        await _settle(app, pilot)
        assert app.watcher is not None and app.query_one("#watch-start", Button).disabled
        declaration = (SAMPLE / "originals" / "declaration-of-independence.txt").read_text()
        (folder / "leak [v2]\x1b[2J.txt").write_text("Notes.\n\n" + declaration[800:1600])  # a hostile name
        log = app.query_one("#alerts", RichLog)
        for _ in range(300):
            await pilot.pause(0.1)
            if "ALERT" in _log(log):
                break
        assert "ALERT" in _log(log) and "leak [v2]\\x1b[2J.txt" in _log(log), _log(log)
        assert "\x1b" not in _log(log)
        assert "declaration-of-independence.txt" in _log(log)
        await pilot.click("#watch-stop")
        await _settle(app, pilot)
        assert app.watcher is None and not app.query_one("#watch-start", Button).disabled
        assert "watch stopped" in _log(log)
    # the alert was stored: a new session shows it from the index
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("4")  # a RichLog renders once it is shown
        await pilot.pause()
        assert "leak [v2]\\x1b[2J.txt" in _log(app.query_one("#alerts", RichLog))


@pytest.mark.asyncio
async def test_watch_reports_a_missing_folder(db: Path, tmp_path: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        app.query_one("#watch-path", Input).value = str(tmp_path / "absent")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.watcher is None and not app.query_one("#watch-start", Button).disabled
        assert "cannot watch" in _text(app, "#watch-status")


@pytest.mark.asyncio
async def test_command_palette_runs_app_commands(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to scan")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "scan"


@pytest.mark.asyncio
async def test_help_small_terminal_and_missing_index(tmp_path: Path) -> None:
    app = _app(tmp_path / "none.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        assert "No index at" in _text(app, "#summary")
        assert app.query_one("#pairs", DataTable).region.height > 3  # the table still has room at 80x24
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("q")
    assert app.return_code == 0
    assert not (tmp_path / "none.db").exists()  # opening never creates an index


@pytest.mark.asyncio
async def test_pair_view_fits_80x24(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        for selector in ("#side-a", "#side-b"):
            region = screen.query_one(selector).region
            assert region.height >= 8 and region.width >= 30
        assert screen.query_one("#passage-status").region.y < 24


@pytest.mark.asyncio
async def test_no_color_is_respected(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = _app(db)
    assert app.no_color  # Textual reads NO_COLOR when the app is built
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert isinstance(app.screen, PairScreen)
        assert "passage 1/" in _text(app, "#passage-status")


def test_model_helpers() -> None:
    text = "ab\ncdef\ngh"
    assert line_spans(text, ((1, 6), (8, 10))) == {0: [(1, 2)], 1: [(0, 3)], 2: [(0, 2)]}
    assert profile_strip((0.0, 1.0), 4) == "  ██"


def test_path_suggestion_completes_from_the_file_system(tmp_path: Path) -> None:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "beta.txt").write_text("x")
    assert path_suggestion(str(tmp_path) + "/al") == str(tmp_path) + "/alpha/"
    assert path_suggestion(str(tmp_path) + "/b") == str(tmp_path) + "/beta.txt"
    assert path_suggestion(str(tmp_path) + "/zz") is None
    (tmp_path / "gamma\x1b[2J.txt").write_text("x")  # a name with an escape sequence is not offered
    (tmp_path / "gamma.txt").write_text("x")
    assert path_suggestion(str(tmp_path) + "/ga") == str(tmp_path) + "/gamma.txt"


def test_textual_is_imported_only_by_the_tui() -> None:
    code = ("import sys, scanner.faces.cli, scanner.services.scan, scanner.services.check, scanner.services.watch, "
            "scanner.faces.report, scanner.index, "
            "scanner.faces.commands.tui; print([m for m in sys.modules if m.split('.')[0] == 'textual'])")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
    offenders = [p for p in (REPO / "scanner").rglob("*.py") if "tui" not in p.parent.parts
                 and ("import textual" in p.read_text() or "from textual" in p.read_text())]
    assert offenders == []


def test_bare_scanner_opens_the_tui_on_the_index_named_by_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    from click.testing import CliRunner

    import scanner.faces.tui
    from scanner.faces.cli import group

    opened: list[str] = []

    class FakeApp:
        def run(self) -> None:
            pass

    def fake_make_app(index_path: str, **kwargs: object) -> FakeApp:
        opened.append(index_path)
        return FakeApp()

    monkeypatch.setattr(scanner.faces.tui, "make_app", fake_make_app)
    result = CliRunner().invoke(group, [], env={"SCANNER_INDEX": str(tmp_path / "from-env.db")})
    assert result.exit_code == 0, result.output
    assert opened == [str(tmp_path / "from-env.db")]


@pytest.mark.asyncio
async def test_check_tab_lists_the_sources_of_every_member_of_an_archive(db: Path, tmp_path: Path) -> None:
    """An archive whose members each come from another source: every member's sources are rows (a member
    column first), and a row's passages and pair view are its member's (before, only the member with the most
    found elsewhere was shown, the others named by their share)."""
    import zipfile

    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("essay.txt", (SAMPLE / "submissions" / "essay-on-public-memory.txt").read_text())
        archive.writestr("notice.txt", (SAMPLE / "originals" / "harbour-notice.txt").read_text())
        archive.writestr("own.txt", "A line of my own.")
    app = _app(db)
    async with app.run_test(size=(200, 40)) as pilot:
        await _check(app, pilot, bundle)
        table = app.query_one("#matches", DataTable)
        rows = _rows(table, ("member", "source", "% of file"))
        members = {r["member"] for r in rows}
        assert members == {f"{bundle}!/notice.txt", f"{bundle}!/essay.txt"}, rows
        assert any(Path(r["source"]).name == "harbour-notice.txt" and r["% of file"] == "100.0" for r in rows)
        summary = _text(app, "#check-summary")  # the first of equal shares heads it (the essay is indexed too)
        assert summary.startswith(f"{bundle}!/essay.txt: 100.0% of this file is found in 2 sources"), summary
        assert f"{bundle}!/notice.txt: 100.0%" in summary and f"{bundle}!/own.txt: 0.0%" in summary
        assert _text(app, "#check-passages").startswith(f"{bundle}!/essay.txt\n")  # the first row's member
        notice_row = next(i for i, r in enumerate(rows) if r["member"].endswith("notice.txt"))
        table.move_cursor(row=notice_row)
        await pilot.pause()
        passages = _text(app, "#check-passages")
        assert passages.startswith(f"{bundle}!/notice.txt\n1 shared passage(s) with "), passages
        assert "harbour" in passages.lower() and "It is rather for us" not in passages
        await pilot.press("enter")
        await _settle(app, pilot)
        assert isinstance(app.screen, PairScreen) and app.screen.pair.title_a == f"{bundle}!/notice.txt"
