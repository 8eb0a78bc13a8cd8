"""Snapshot tests of the key screens (pytest-textual-snapshot; `--snapshot-update` to accept changes).

The index is built from the repository's sample corpus with relative paths, as
`scanner scan` builds it (files, shared passages, stored findings), so every run
draws exactly the same screens.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scanner.core.config import Params
from scanner.faces.tui import make_app
from scanner.index import Index
from scanner.services.findings import stored_or_found
from scanner.services.passages import align_index
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("snapshots") / "sample.db"
    here = os.getcwd()
    os.chdir(REPO)  # relative paths in the index: the same screen on every machine
    try:
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan(["sample_corpus"], index, make_plugin_manager(), Params(), jobs=0, exclude=("SOURCES.md",))
            align_index(index, Params(), jobs=0)
            stored_or_found(index, Params())
    finally:
        os.chdir(here)
    return db


@pytest.fixture(autouse=True)
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


async def _loaded(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def _open_first_pair(pilot) -> None:
    await _loaded(pilot)
    await pilot.press("enter")
    await _loaded(pilot)


class TestFindings:
    """The Findings tab: summary counts, score histogram and the planted pairs, strongest first."""

    def test_findings_120x40(self, snap_compare, sample_db: Path) -> None:
        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=_loaded)

    def test_findings_80x24(self, snap_compare, sample_db: Path) -> None:
        assert snap_compare(make_app(str(sample_db)), terminal_size=(80, 24), run_before=_loaded)

    def test_findings_filtered(self, snap_compare, sample_db: Path) -> None:
        async def filtered(pilot) -> None:
            await _loaded(pilot)
            await pilot.press("slash", *"license", "enter")
            await pilot.pause()

        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=filtered)


async def _documents_view(pilot) -> None:
    await _loaded(pilot)
    await pilot.press("d")
    await _loaded(pilot)


class TestDocuments:
    """The documents view (d): each document's share found elsewhere, highest first, and its sources."""

    def test_documents_120x40(self, snap_compare, sample_db: Path) -> None:
        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=_documents_view)

    def test_documents_80x24(self, snap_compare, sample_db: Path) -> None:
        assert snap_compare(make_app(str(sample_db)), terminal_size=(80, 24), run_before=_documents_view)

    def test_stored_passage_of_a_source(self, snap_compare, sample_db: Path) -> None:
        async def source_pair(pilot) -> None:
            await _loaded(pilot)
            await pilot.press("d", "down", "down", "down", "down", "down", "enter", "enter")
            await _loaded(pilot)

        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=source_pair)


class TestPairView:
    """The pair view: metrics, the difference strip, both texts with the current shared passage selected."""

    def test_identical_pair(self, snap_compare, sample_db: Path) -> None:
        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=_open_first_pair)

    def test_containment_pair_80x24(self, snap_compare, sample_db: Path) -> None:
        async def containment(pilot) -> None:
            await _loaded(pilot)
            await pilot.press("slash", *"tidewater", "enter", "down", "down", "enter")  # LICENSE-vendored in the readme
            await _loaded(pilot)

        assert snap_compare(make_app(str(sample_db)), terminal_size=(80, 24), run_before=containment)


class TestHelp:
    """The help screen lists every key binding over the findings."""

    def test_help(self, snap_compare, sample_db: Path) -> None:
        async def help_open(pilot) -> None:
            from scanner.faces.tui.screens import HelpScreen

            await _loaded(pilot)
            await pilot.press("question_mark")
            for _ in range(100):  # the modal is pushed on a later tick on a loaded machine
                if isinstance(pilot.app.screen, HelpScreen):
                    break
                await pilot.pause(0.05)
            await _loaded(pilot)

        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=help_open)


class TestEmptyState:
    """A missing index shows how to create one instead of failing."""

    def test_missing_index(self, snap_compare) -> None:
        assert snap_compare(make_app("missing.db"), terminal_size=(80, 24), run_before=_loaded)


class TestCheck:
    """The Check tab: the lifted passage's source, its share of the file, and the passage itself."""

    def test_check_essay(self, snap_compare, sample_db: Path) -> None:
        async def check(pilot) -> None:
            await _loaded(pilot)
            await pilot.press("2", *"sample_corpus/submissions/essay-on-public-memory.txt", "enter")
            await _loaded(pilot)

        assert snap_compare(make_app(str(sample_db)), terminal_size=(120, 40), run_before=check)
