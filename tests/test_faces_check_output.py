"""What `scanner check` and `scanner clusters` print for a person, through the real CLI: the guarantee note
stands on its own after a check with no source, and at 80 columns a long source path keeps its share of a
table instead of being squeezed to a few characters while the number columns keep their width."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import REPO, cli_env, run_cli

SAMPLE = REPO / "sample_corpus"
ESSAY = SAMPLE / "submissions" / "essay-on-public-memory.txt"
LONG = "corpus/speeches-kept-for-comparison/nineteenth-century/gettysburg-address-transcribed-copy.txt"
LONG_COPY = "corpus/a-second-archive-of-speeches/gettysburg-address-backup-of-the-transcribed-copy.txt"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index (i.db) of identical copies of a speech under long names, and a near-duplicate pair of licences
    (whose cluster kind, "near-duplicate (>= 0.xx)", is the widest cell outside the paths)."""
    work = tmp_path_factory.mktemp("check-output")
    for name, source in ((LONG, SAMPLE / "originals" / "gettysburg-address.txt"),
                         (LONG_COPY, SAMPLE / "originals" / "gettysburg-address.txt"),
                         ("corpus/licences/mit-license.txt", SAMPLE / "originals" / "mit-license.txt"),
                         ("corpus/licences/LICENSE-vendored.txt", SAMPLE / "copies" / "LICENSE-vendored.txt")):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, work / name)
    done = run_cli("scan", "corpus", "--index", "i.db", "--jobs", "0", "--quiet", cwd=work)
    assert done.returncode in (0, 1), done.stderr
    return work


def _piped(*args: str, cwd: Path, merged: bool = False) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout into a pipe, as `COLUMNS=80 scanner ... | cat` runs it."""
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, env=dict(cli_env(), COLUMNS="80"),
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                          timeout=120)


def _in_terminal(*args: str, cwd: Path, columns: int = 80) -> str:
    """The CLI's stdout on a pseudo-terminal `columns` wide (TERM=dumb: no colour codes to strip)."""
    import pty

    master, slave = pty.openpty()
    env = dict(cli_env(), COLUMNS=str(columns), LINES="60", TERM="dumb")
    env.pop("FORCE_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "scanner", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the command has exited and closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) in (0, 1), proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_the_guarantee_note_stands_on_its_own_line_after_a_check_with_no_source(work: Path) -> None:
    unrelated = str(SAMPLE / "unrelated" / "recipe-rye-bread.md")
    merged = _piped("check", unrelated, "--index", "i.db", cwd=work, merged=True)
    assert merged.returncode == 0, merged.stdout
    lines = merged.stdout.splitlines()
    assert lines[0].endswith(": 0.0% of this document is found in 0 sources"), lines
    assert lines[1] == "", lines  # set apart from the file's result, not read as part of it
    assert lines[2].startswith("guarantee: any run of at least "), lines
    separate = _piped("check", unrelated, "--index", "i.db", cwd=work)
    shown = separate.stdout.rstrip("\n") + separate.stderr  # a display that joins the streams, trimmed
    assert any(line.startswith("guarantee: ") for line in shown.splitlines()), shown


def test_at_80_columns_the_check_table_gives_the_source_path_its_share(work: Path) -> None:
    done = _piped("check", str(ESSAY), "--index", "i.db", cwd=work)
    assert done.returncode in (0, 1), done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines[1:]) <= 80  # the headline is one line whatever its length
    rule = next(i for i, line in enumerate(lines) if "╇" in line)  # under the match table's header
    cells = []
    for line in lines[rule + 1:]:
        if "│" not in line or line.startswith(("┏", "┃", "│")):
            break  # the passages that follow are framed tables
        cells.append(line.split("│")[0].strip())
    assert len(cells[0]) >= 30, cells  # it was 9
    assert "".join(cells) in (LONG, LONG_COPY), cells  # the whole path, folded (the copies are one document)


def test_in_a_wide_terminal_the_check_table_is_unchanged(work: Path) -> None:
    shown = _in_terminal("check", str(ESSAY), "--index", "i.db", cwd=work, columns=200)
    header = next(line for line in shown.splitlines() if "resemblance" in line)
    assert "% of query ┃ resemblance ┃ query in doc ┃ doc in query ┃ est. edits ┃ passages" in header
    assert any(line.startswith((f" {LONG} ", f" {LONG_COPY} ")) for line in shown.splitlines()), shown


def test_in_an_80_column_terminal_clusters_keep_paths_readable_and_beside_their_hashes(work: Path) -> None:
    shown = _in_terminal("clusters", "--index", "i.db", cwd=work)
    cluster_table = shown.split("No containment")[0]  # the passage tables that follow have 6 borders too
    rows = [[cell.strip() for cell in line.strip()[1:-1].split("│")] for line in cluster_table.splitlines()
            if line.startswith("│") and line.count("│") == 6]
    assert rows and max(len(line) for line in shown.splitlines()) <= 80, shown
    members = [row[3] for row in rows]
    starts = [i for i, cell in enumerate(members) if cell.startswith("corpus/")]
    assert len(starts) == 4 and all(len(members[i]) >= 30 for i in starts), shown  # it was 21
    assert [i for i, row in enumerate(rows) if row[4]] == starts, shown  # each hash beside its member's first line
    joined = "".join(members)
    assert LONG in joined and LONG_COPY in joined


def test_in_a_pipe_clusters_never_fold_a_path(work: Path) -> None:
    done = _piped("clusters", "--index", "i.db", cwd=work)
    assert done.returncode == 0, done.stderr
    assert LONG in done.stdout and LONG_COPY in done.stdout


@pytest.mark.parametrize("show_edge", [True, False])
def test_the_quick_fit_bound_never_passes_a_table_rich_finds_too_wide(show_edge: bool) -> None:
    """`_surely_fits` lets a table skip Rich's measure of every cell; it must never call fitting a table wider
    than the console (paths would then be cut by Rich's own shrinking), yet be close enough to be of use."""
    import random

    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    from scanner.faces.commands._tables import _surely_fits

    rng = random.Random(7)
    console = Console(width=4096)
    useful = 0
    for _ in range(60):
        table = Table(title="t", show_edge=show_edge)
        columns = rng.randint(1, 6)
        for _ in range(columns):
            table.add_column(rng.choice(["id", "resem-\nblance", "members", "路径"]))
        for _ in range(rng.randint(0, 8)):
            table.add_row(*("".join(rng.choice("ab/文 \n") for _ in range(rng.randint(0, 40)))
                            for _ in range(columns)))
        needed = Measurement.get(console, console.options.update_width(1 << 20), table).maximum
        for width in range(max(needed - 3, 1), needed + 3 * columns + 3):
            assert not _surely_fits(table, width) or needed <= width
        useful += _surely_fits(table, needed + 3 * columns + 1)
    assert useful == 60
    widths = Table()
    widths.add_column("path", width=10)
    assert not _surely_fits(widths, 4096)  # a set width: Rich measures it
    padded = Table(padding=(0, 3))
    padded.add_column("path")
    assert not _surely_fits(padded, 4096)  # wider padding than the bound counts: Rich measures it too
