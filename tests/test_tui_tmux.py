"""The real app in a real terminal: tmux runs `scanner tui`, we send keys and read the pane."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.core.config import Params
from scanner.index import Index
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"
TMUX = shutil.which("tmux")

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """One tmux server of our own (-L socket), so nothing touches the user's sessions."""

    def __init__(self, width: int = 120, height: int = 40) -> None:
        self.socket = f"scanner-test-{uuid.uuid4().hex[:8]}"
        self.width, self.height = width, height

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TMUX or "tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=20, check=check)

    def start(self, command: str, env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # pytest exports COLUMNS=80 LINES=24, which would pin the app's size (shutil.get_terminal_size)
        self.tmux("new-session", "-d", "-s", "tui", "-x", str(self.width), "-y", str(self.height),
                  f"cd {shlex.quote(str(REPO))} && env -u COLUMNS -u LINES {exports} {command}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "tui", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "tui", check=False).stdout

    def wait_for(self, *texts: str, timeout: float = 20.0) -> str:
        """The screen once every one of `texts` is on it (the first frames may predate a resize)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{texts!r} never all appeared; the screen was:\n{self.screen()}")

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", "tui", check=False).returncode == 0

    def kill(self) -> None:
        self.tmux("kill-server", check=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "index.db"
    with Index.open(path, readonly=False, params=Params()) as index:
        run_scan([str(SAMPLE)], index, make_plugin_manager(), Params(), jobs=0, exclude=("SOURCES.md",))
    return path


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    term.kill()


def test_the_real_app_in_tmux(db: Path, tmp_path: Path, terminal: Terminal) -> None:
    env = {"TERM": "xterm-256color", "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    terminal.start(f"{sys.executable} -m scanner tui --index {db}", env)

    # the footer too: on a busy machine the first screen can be captured before the footer is drawn
    screen = terminal.wait_for("suspected copies", "sample_corpus/", "copies/speech-backup-copy.txt", "Quit", "Help")
    with Index.open(db) as index:
        documents = index.stats().documents_ok
    assert f"{documents} documents" in screen and "3 clusters" in screen

    terminal.keys("Enter")  # the strongest pair: the identical copy of the Gettysburg address
    terminal.wait_for("passage 1/", "Four score and seven years ago", "differences along A", "Next passage")
    terminal.keys("Escape")
    terminal.wait_for("1 Findings")

    terminal.keys("?")
    terminal.wait_for("Pair view")
    terminal.keys("Escape")
    time.sleep(0.5)

    terminal.keys("2")  # check a file against the index
    terminal.wait_for("file to check")
    terminal.keys(str(SAMPLE / "submissions" / "essay-on-public-memory.txt"), "Enter")
    screen = terminal.wait_for("of this file is found in 1 source", "It is rather for us")
    assert "gettysburg-address.txt" in screen or "speech-backup-copy.txt" in screen

    terminal.keys("q")
    deadline = time.monotonic() + 15
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not terminal.alive(), terminal.screen()


def test_scan_in_a_real_terminal_with_worker_processes(tmp_path: Path, terminal: Terminal) -> None:
    """A scan started from the interface uses the process pool (Textual's stderr must not break it)."""
    db = tmp_path / "new.db"
    env = {"TERM": "xterm-256color", "HOME": str(tmp_path), "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    terminal.start(f"{sys.executable} -m scanner tui --index {db} --jobs 2", env)
    terminal.wait_for("No index at")
    terminal.keys("3")
    terminal.wait_for("folders to scan")
    terminal.keys(str(SAMPLE / "originals") + " " + str(SAMPLE / "copies"), "Enter")
    terminal.wait_for("done: 8 seen, 10 indexed", timeout=40)  # the ZIP's 2 members and the attachment too
    terminal.keys("1")
    terminal.wait_for("suspected copies", "identical")
    terminal.keys("q")
    deadline = time.monotonic() + 15
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not terminal.alive(), terminal.screen()
    assert os.path.exists(db)
