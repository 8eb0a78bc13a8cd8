"""Issue 17 in the TUI: the Watch tab's alerts table, the evidence of an alert, review and allow, under Textual's
Pilot on a real protected index (the sample originals, real scan) with alerts raised by the real `scanner watch`."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from clirun import run_cli
from textual.widgets import DataTable, Input, RichLog, Static

from scanner.core.config import Params
from scanner.faces.tui import make_app
from scanner.faces.tui.alert_table import AlertTable
from scanner.faces.tui.alerts import ALERT_COLUMNS, alert_cells, alert_row, allow_list_path
from scanner.faces.tui.app import ScannerApp
from scanner.faces.tui.screens import EvidenceScreen
from scanner.index import Index
from scanner.services.scan import run_scan
from scanner.services.watch import WatchOptions
from scanner.services.watch.allow import allow_index_path
from scanner.services.watch.records import Alert
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
ORIGINALS = REPO / "sample_corpus" / "originals"
DECLARATION = (ORIGINALS / "declaration-of-independence.txt").read_text(encoding="utf-8")
GETTYSBURG = (ORIGINALS / "gettysburg-address.txt").read_text(encoding="utf-8")
FILLER = (REPO / "sample_corpus" / "unrelated" / "field-notes-river-survey.txt").read_text(encoding="utf-8")
RECIPE = (REPO / "sample_corpus" / "unrelated" / "recipe-rye-bread.md").read_text(encoding="utf-8")
SHORT_QUOTE = DECLARATION[DECLARATION.index("We hold these truths"):][:110]  # one passage under 30 words: low
LEAK = FILLER[:400] + "\n\n" + DECLARATION[DECLARATION.index("We hold these truths"):][:600] + "\n\n" + FILLER[400:]


@pytest.fixture(scope="module")
def protected_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample originals (declaration, Gettysburg address, MIT licence), indexed by the real scan service."""
    db = tmp_path_factory.mktemp("protected") / "protected.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(ORIGINALS)], index, make_plugin_manager(), Params(), jobs=0)
    return db


def watch_once(db: Path, folder: Path) -> tuple[int, list[dict], str]:
    """`scanner watch FOLDER --once --jsonl`: the real CLI, one worker so alerts are raised in a known order."""
    done = run_cli("watch", str(folder), "--index", str(db), "--once", "--jsonl", "--jobs", "1")
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.fixture(scope="module")
def alerted(protected_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Three alert groups, raised by three real watches in this order: a low one (one short passage), a medium
    one held by two copies (same content, two names), a high one (a whole protected document)."""
    root = tmp_path_factory.mktemp("alerted")
    db = root / "protected.db"
    shutil.copy(protected_db, db)
    outbox = root / "outbox"
    outbox.mkdir()
    (outbox / "short.txt").write_text(f"{RECIPE}\n\n{SHORT_QUOTE}\n", encoding="utf-8")
    code, lines, stderr = watch_once(db, outbox)
    assert code == 1 and [line["severity"] for line in lines] == ["low"], stderr
    (outbox / "leak-a.txt").write_text(LEAK, encoding="utf-8")
    (outbox / "leak-b.txt").write_text(LEAK, encoding="utf-8")
    code, lines, stderr = watch_once(db, outbox)
    assert code == 1 and lines[0]["severity"] == "medium", stderr
    (outbox / "whole.txt").write_text(DECLARATION, encoding="utf-8")
    code, lines, stderr = watch_once(db, outbox)
    assert code == 1 and [line["severity"] for line in lines] == ["high"], stderr
    return db, outbox


@pytest.fixture
def db(alerted: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the alerted index: reviews and the allow list are written beside it."""
    copy = tmp_path / "protected.db"
    shutil.copy(alerted[0], copy)
    return copy


def _app(db: Path) -> ScannerApp:
    return make_app(str(db), scan_jobs=0, watch_options=WatchOptions(jobs=1, settle=0.1))


def _rows(table: DataTable) -> list[dict[str, str]]:
    return [dict(zip(ALERT_COLUMNS, (str(c) for c in table.get_row_at(i)))) for i in range(table.row_count)]


def _text(app: ScannerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def _settle(app: ScannerApp, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def _to_alerts(app: ScannerApp, pilot) -> AlertTable:
    """The Watch tab, then the alerts table by the keyboard alone: from the folder field past Start (Stop is
    disabled while no watch runs)."""
    await _settle(app, pilot)
    await pilot.press("4")
    assert app.focused is app.query_one("#watch-path", Input)
    await pilot.press("tab", "tab")
    table = app.query_one("#alert-table", AlertTable)
    assert app.focused is table
    return table


def _reviews(db: Path) -> dict[str, str]:
    with Index.open(db) as index:
        return {Path(a.path).name: a.review for a in index.alerts()}


@pytest.mark.asyncio
async def test_stored_alerts_are_listed_newest_first(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        table = await _to_alerts(app, pilot)
        rows = _rows(table)
        assert [r["severity"] for r in rows] == ["high", "medium", "low"]  # newest first
        assert Path(rows[0]["file"]).name == "whole.txt"
        assert rows[1]["file"].endswith(" +1 copies") and "leak-" in rows[1]["file"]
        assert Path(rows[2]["file"]).name == "short.txt"
        assert all(r["source"].endswith("declaration-of-independence.txt") for r in rows)
        assert rows[0]["share"] == "100.0%" and int(rows[2]["words"]) < 30 <= int(rows[1]["words"])
        assert {r["review"] for r in rows} == {"new"}
        assert "3 alerts, newest first: 3 new" in _text(app, "#alert-summary")
        assert "3 alert(s) stored in the index; newest: " in "".join(
            str(line.text) for line in app.query_one("#alerts", RichLog).lines)
        shown = {b.binding.key: b.binding.description for b in app.active_bindings.values()
                 if b.binding.show and b.enabled}  # what the footer shows
        assert {"enter": "Evidence", "r": "Reviewed", "a": "Allow"}.items() <= shown.items(), shown


@pytest.mark.asyncio
async def test_enter_opens_the_evidence_side_by_side(db: Path) -> None:
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        table = await _to_alerts(app, pilot)
        await pilot.press("down")  # the leak held by two copies
        assert table.selected() is not None and len(table.selected().paths) == 2
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EvidenceScreen)
        a, b = screen.selected_texts()
        assert a.split()[:4] == ["We", "hold", "these", "truths"] and a.split()[:8] == b.split()[:8]
        assert "leak-" in screen.pair.title_a and screen.pair.title_b.endswith("declaration-of-independence.txt")
        assert screen.pair.text_a.startswith(FILLER[:40])  # the watched file read again, not its passages alone
        assert "(verbatim)" in _text(app, "#passage-status")
        metrics = _text(app, "#metrics")
        assert "severity medium" in metrics and "rules passage" in metrics
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, EvidenceScreen) and app.focused is table


@pytest.mark.asyncio
async def test_evidence_names_the_member_and_steps_through_the_sources(db: Path, tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    inner = f"{FILLER[:300]}\n\n{GETTYSBURG[:700]}\n\n{FILLER[300:]}"
    with zipfile.ZipFile(outbox / "bundle.zip", "w") as bundle:  # a leak inside an archive names its member
        bundle.writestr("notes/inner.txt", inner)
    quote = DECLARATION[DECLARATION.index("We hold these truths"):][:700]
    (outbox / "two.txt").write_text(f"{FILLER[:300]}\n\n{GETTYSBURG[:700]}\n\n{FILLER[300:900]}\n\n{quote}\n",
                                    encoding="utf-8")
    code, lines, stderr = watch_once(db, outbox)
    assert code == 1 and len(lines) == 2, stderr
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        table = await _to_alerts(app, pilot)
        rows = _rows(table)
        two = next(i for i, r in enumerate(rows) if r["file"].endswith("two.txt"))
        assert rows[two]["source"].endswith(" +1 more")
        await pilot.press(*["down"] * two, "enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EvidenceScreen) and len(screen.pairs) == 2
        assert "source 1/2" in _text(app, "#metrics")
        first_source = screen.pair.title_b
        await pilot.press("s")  # the next protected source
        await _settle(app, pilot)
        assert "source 2/2" in _text(app, "#metrics") and screen.pair.title_b != first_source
        a, b = screen.selected_texts()
        assert a and a.split()[:6] == b.split()[:6]
        await pilot.press("escape")
        await pilot.pause()
        bundle_row = next(i for i, r in enumerate(_rows(table)) if "bundle.zip" in r["file"])
        table.move_cursor(row=bundle_row)
        await pilot.press("enter")
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EvidenceScreen)
        assert screen.pair.title_a.endswith("bundle.zip » member notes/inner.txt")
        assert screen.pair.text_a == inner  # the member's own text, read again from the archive
        assert screen.selected_texts()[0].split()[:3] == GETTYSBURG.split()[:3]


@pytest.mark.asyncio
async def test_evidence_of_a_deleted_file_shows_its_passages(db: Path, tmp_path: Path) -> None:
    with Index.open(db) as index:
        short = next(a for a in index.alerts() if a.path.endswith("short.txt"))
    gone = tmp_path / "gone"
    gone.mkdir()
    with Index.open(db, readonly=False) as index:  # the same alert, at a path that no longer exists
        index.add_alert(str(gone / "deleted.txt"), short.sha256 + "0", short.matches, severity="low",
                        sources="elsewhere")
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        await _to_alerts(app, pilot)
        await pilot.press("enter")  # the newest: the deleted file's
        await _settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, EvidenceScreen)
        assert "its passages only" in screen.pair.title_a
        a, b = screen.selected_texts()
        assert a == short.matches[0]["passages"][0]["text"] and b.split()[:4] == ["We", "hold", "these", "truths"]


@pytest.mark.asyncio
async def test_r_marks_reviewed_and_a_allows_the_passages(db: Path, tmp_path: Path,
                                                          alerted: tuple[Path, Path]) -> None:
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        table = await _to_alerts(app, pilot)
        await pilot.press("r")  # the high one
        await _settle(app, pilot)
        assert _rows(table)[0]["review"] == "reviewed"
        assert _reviews(db)["whole.txt"] == "reviewed"
        await pilot.press("down", "down", "a")  # the low one: its passage goes to the allow list
        await _settle(app, pilot)
        assert _rows(table)[2]["review"] == "allowed"
        assert table.cursor_row == 2  # the cursor stays on the alert it acted on
        assert _reviews(db) == {"whole.txt": "reviewed", "leak-a.txt": "new", "short.txt": "allowed"} or \
            _reviews(db) == {"whole.txt": "reviewed", "leak-b.txt": "new", "short.txt": "allowed"}
        log = "".join(str(line.text) for line in app.query_one("#alerts", RichLog).lines)
        assert "allowed 1 passage(s) of alert" in log, log
        assert "1 reviewed, 1 allowed" in _text(app, "#alert-summary")
    assert Path(allow_index_path(str(db))).exists()
    # the allowed passage never alerts again, in a new file of another folder (it did before it was allowed)...
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "memo.txt").write_text(f"{FILLER[:500]}\n\n{SHORT_QUOTE}\n", encoding="utf-8")
    before = tmp_path / "before" / "protected.db"
    before.parent.mkdir()
    shutil.copy(alerted[0], before)  # the same index with no allow list
    assert watch_once(before, fresh)[0] == 1
    code, lines, stderr = watch_once(db, fresh)
    assert code == 0 and lines == [], stderr
    # ...while protected text that was not allowed still does
    (fresh / "other.txt").write_text(f"{FILLER[:500]}\n\n{GETTYSBURG[:700]}\n", encoding="utf-8")
    code, lines, stderr = watch_once(db, fresh)
    assert code == 1 and len(lines) == 1, stderr
    # a new session shows the states kept in the index
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        table = await _to_alerts(app, pilot)
        assert [r["review"] for r in _rows(table)] == ["new", "reviewed", "new", "allowed"]


@pytest.mark.asyncio
async def test_live_alert_goes_on_top_and_a_copy_counts_on_its_row(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "outbox"
    folder.mkdir()
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("4")
        app.query_one("#watch-path", Input).value = str(folder)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert app.watcher is not None
        leak = f"{RECIPE}\n\n{GETTYSBURG[:800]}\n"
        (folder / "speech [draft]\x1b[2J.txt").write_text(leak, encoding="utf-8")  # a hostile name
        table = app.query_one("#alert-table", AlertTable)
        for _ in range(300):
            await pilot.pause(0.1)
            if table.row_count == 4:
                break
        rows = _rows(table)
        assert len(rows) == 4 and "speech [draft]\\x1b[2J.txt" in rows[0]["file"], rows
        assert rows[0]["source"].endswith("gettysburg-address.txt") and rows[0]["review"] == "new"
        assert [r["severity"] for r in rows[1:]] == ["high", "medium", "low"]
        (folder / "copy.txt").write_text(leak, encoding="utf-8")  # the same content again: no new row
        for _ in range(300):
            await pilot.pause(0.1)
            if _rows(table)[0]["file"].endswith("+1 copies"):
                break
        rows = _rows(table)
        assert len(rows) == 4 and rows[0]["file"].endswith(" +1 copies"), rows
        # reviewed while the watch runs: the watcher, the index's one writer, keeps it
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("r")
        await _settle(app, pilot)
        assert _rows(table)[0]["review"] == "reviewed"
        for _ in range(50):
            if _reviews(db).get("speech [draft]\x1b[2J.txt") == "reviewed":
                break
            await pilot.pause(0.1)
        assert _reviews(db)["speech [draft]\x1b[2J.txt"] == "reviewed"
        await pilot.click("#watch-stop")
        await _settle(app, pilot)
        assert app.watcher is None
    with Index.open(db) as index:
        newest = index.alerts()[0]
    assert {Path(p).name for p in newest.paths} == {"speech [draft]\x1b[2J.txt", "copy.txt"}


def test_rows_of_stored_and_live_alerts_agree(alerted: tuple[Path, Path]) -> None:
    """A live alert (the watcher's) and its stored row (the index's) give the same cells, review aside."""
    with Index.open(alerted[0]) as index:
        stored = index.alerts()[0]
    live = Alert(stored.time, stored.path, stored.sha256, tuple(stored.matches), stored.paths, stored.severity,
                 stored.id)
    assert alert_cells(alert_row(live)) == alert_cells(alert_row(stored))
    hostile = Alert(stored.time, "/tmp/\x1b]0;pwned\x07.txt", stored.sha256,
                    ({"path": "x\u202e.txt", "passages": [{"query_start": "0"}], "share_of_protected": "1"},))
    cells = alert_cells(alert_row(hostile))
    assert "\x1b" not in "".join(cells) and "\u202e" not in "".join(cells) and cells[5] == "0.0%"


def test_the_tui_finds_the_allow_list_where_scanner_allow_writes_it() -> None:
    for path in ("protected.db", "/cases/x/protected.db", "noext", "a.b/index"):
        assert allow_list_path(path) == allow_index_path(path)


def test_watcher_review_is_refused_when_the_watcher_does_not_run(db: Path, tmp_path: Path) -> None:
    """`Watcher.review` queues only for a running coordinator: else the caller writes the state itself."""
    from scanner.services.watch import Watcher

    watcher = Watcher(str(db), [str(tmp_path)], WatchOptions(jobs=1))
    assert watcher.review(1, "reviewed") is False
    with pytest.raises(ValueError):
        watcher.review(1, "ignored")


def test_an_alerts_evidence_is_read_as_the_watch_read_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Watch tab reads an alerted file again to show its passages: with the watch's OCR languages, where it
    read pictures with English data whatever the watch was given (its own check read them in the languages
    chosen, so the evidence shown could lack what raised the alert)."""
    import hashlib

    from scanner.faces.tui import alerts
    from scanner.sources import extract

    picture = tmp_path / "page.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n not a real picture")
    row = alerts.AlertRow(None, 0.0, str(picture), (str(picture),), hashlib.sha256(picture.read_bytes()).hexdigest(),
                          "high", ())
    given = []
    real = extract.extract_file

    def recording(path, pm, limits=extract.DEFAULT_LIMITS, prefer=None):
        given.append((limits.ocr, limits.ocr_languages))
        return real(path, pm, limits, prefer)

    monkeypatch.setattr(extract, "extract_file", recording)
    alerts.watched_texts(row, True, "eng+deu")
    alerts.watched_texts(row, False)
    assert given == [(True, "eng+deu"), (False, "eng")]
