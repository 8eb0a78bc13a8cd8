"""The report format registry: `scanner report --format`, `write_report` and the TUI's Export tab all read it,
so a format registered there (here a toy one) is offered and written by the real code paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from clirun import REPO, run_cli

from scanner.faces.cli import group
from scanner.faces.report import FORMATS, ReportFormat, render, report_format
from scanner.faces.report.model import Report

SAMPLE = REPO / "sample_corpus"


def render_toy(report: Report) -> str:
    return f"toy report of {report.index}: {len(report.pairs)} pairs\n"


def render_toy_folder(report: Report) -> dict[str, str]:
    return {f"pair-{number}.txt": f"{pair.a.path} ~ {pair.b.path}\n" for number, pair in enumerate(report.pairs, 1)}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("formats") / "index.db"
    done = run_cli("scan", str(SAMPLE), "--index", str(db), "--exclude", "SOURCES.md", "--jobs", "0", "--quiet")
    assert done.returncode in (0, 1), done.stderr
    return db


@pytest.fixture
def toys(monkeypatch: pytest.MonkeyPatch) -> tuple[ReportFormat, ReportFormat]:
    """Two formats registered for one test: a file and a folder of files."""
    toy = ReportFormat("toy", "Toy text", render_toy)
    folder = ReportFormat("toydir", "Toy files", render_toy_folder, folder=True, note="one file per pair")
    monkeypatch.setitem(FORMATS, toy.name, toy)
    monkeypatch.setitem(FORMATS, folder.name, folder)
    return toy, folder


def test_the_cli_offers_exactly_the_registered_formats() -> None:
    done = run_cli("report", "--help")
    assert done.returncode == 0, done.stderr
    assert f"[{'|'.join(FORMATS)}]" in done.stdout
    assert {"html", "json", "csv", "pan"} <= set(FORMATS)
    assert "Output file (folder for pan)." in done.stdout


def test_a_registered_format_is_offered_and_written_by_scanner_report(db: Path, tmp_path: Path, toys) -> None:
    runner = CliRunner()
    shown = runner.invoke(group, ["report", "--help"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"\[html\|json\|csv\|pan\|toy\|toydir\]", shown.output), shown.output
    out = tmp_path / "report.toy"
    done = runner.invoke(group, ["report", "--index", str(db), "--format", "toy", "-o", str(out), "--quiet"])
    assert done.exit_code == 0, (done.output, done.exception)
    text = out.read_text()
    assert text.startswith(f"toy report of {db}: ") and not text.endswith(": 0 pairs\n"), text
    again = runner.invoke(group, ["report", "--index", str(db), "--format", "toy", "-o", str(out), "--quiet"])
    assert again.exit_code != 0 and out.read_text() == text  # never over an existing file without --force


def test_a_registered_folder_format_writes_one_file_each_into_the_folder(db: Path, tmp_path: Path, toys) -> None:
    folder = tmp_path / "pairs"
    folder.mkdir()  # an existing folder is where a folder format writes, not a file it would overwrite
    done = CliRunner().invoke(group, ["report", "--index", str(db), "--format", "toydir", "-o", str(folder), "-q"])
    assert done.exit_code == 0, (done.output, done.exception)
    written = sorted(p.name for p in folder.iterdir())
    assert written and written[0] == "pair-1.txt"
    assert " ~ " in (folder / "pair-1.txt").read_text()


def test_dispatch_goes_through_the_registry(toys) -> None:
    toy, folder = toys
    assert report_format("toy") is toy and folder.label == "Toy files (folder)" and toy.label == "Toy text"
    assert FORMATS["pan"].label == "PAN XML (folder)"
    with pytest.raises(Exception, match="choose one of html, json, csv, pan, toy, toydir"):
        render(None, "nope")  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_the_tui_export_tab_offers_and_writes_a_registered_format(db: Path, tmp_path: Path, toys) -> None:
    from textual.widgets import Input, Select, Static

    from scanner.faces.tui import make_app

    out = tmp_path / "from-tui.toy"
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        choice = app.query_one("#export-format", Select)
        choice.value = "toy"  # a value the Select does not offer would be refused
        await pilot.pause()
        assert "Toy" in app.export_screenshot()
        app.query_one("#export-path", Input).value = str(out)
        await pilot.click("#export-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert str(app.query_one("#export-status", Static).render()) == f"wrote {out}"
    assert out.read_text().startswith(f"toy report of {db}: ")


def test_a_reworded_summary_is_labelled_a_summary_not_a_rewording() -> None:
    """The HTML label says what a reworded passage is: the same sentences in other words, or (one side three
    times the other's length or more: the aligner's summaries) a summary of much longer text."""
    from scanner.faces.report.html import _passage_kind
    from scanner.faces.report.model import PairPassage

    source = "a sentence of the source. " * 40
    summary = PairPassage(0, 100, 0, 300, source, source, "reworded")
    rewording = PairPassage(0, 100, 0, 299, source, source, "reworded")
    assert summary.condenses and not rewording.condenses
    assert "a summary of much longer text, not a verbatim copy" in _passage_kind(summary)
    assert "the same sentences in other words, not a verbatim copy" in _passage_kind(rewording)
    assert _passage_kind(PairPassage(0, 100, 0, 300, source, source, "verbatim")) == "<span class=kind>verbatim</span>"
