"""Out of disk, read-only media, exhausted resources (issue 22): one line and exit 4, nothing lost.

Every case runs the real `scanner` command on real SQLite files, with the shortage made real: a small
tmpfs that fills up (or, where nothing can be mounted, RLIMIT_FSIZE), a read-only bind mount (or, where
none can be made, a read-only file for an unprivileged user), RLIMIT_NOFILE, and faults injected through
a PEP 578 audit hook in the CLI's own process (`FAULTS`): a MemoryError, the index's folder removed, a
SIGKILL while a report is written. Each test asserts the exact line on stderr, the exit code, that no
traceback was printed, and what the index or the output file holds afterwards.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import pytest
from clirun import REPO, cli_env, run_cli
from corpus import build_corpus_tree

RESOURCE_EXIT = 4
DOCUMENTS = 400  # in four folders: part0..part3, about 4.7 MB of text and a 9.5 MB index
SMALL_DISK = "6m"  # a tmpfs this size takes the first batch of 256 files, not the rest
FILE_SIZE_LIMIT = 5 * 2**20  # where nothing can be mounted: RLIMIT_FSIZE, which the first batch's log passes

# Faults in the CLI's own process, chosen by SCANNER_TEST_FAULT ("kind:argument"). The variable is removed
# at start, so the forkserver and the workers started later run without it.
FAULTS = textwrap.dedent('''
    import os, shutil, signal, sys, threading
    _kind, _, _arg = os.environ.pop("SCANNER_TEST_FAULT", "").partition(":")
    _state = {"done": False, "opened": 0}

    def _kill():
        os.kill(os.getpid(), signal.SIGKILL)

    def _hook(event, args):
        if not _kind or _state["done"]:
            return
        path = os.fsdecode(args[0]) if args and isinstance(args[0], (str, bytes)) else ""
        if _kind == "memory" and event == "os.scandir" and path.endswith("part2"):
            _state["done"] = True
            raise MemoryError()
        if _kind == "rmtree" and event == "os.scandir" and path.endswith("part2"):
            _state["done"] = True
            shutil.rmtree(_arg)
        if _kind == "kill-at" and event == _arg:
            _kill()
        if _kind == "kill-after" and event == "open" and ".scanner-report-" in path:
            delay, _, nth = _arg.partition("/")
            _state["opened"] += 1
            if _state["opened"] < int(nth or 1):
                return
            _state["done"] = True
            if float(delay) == 0:
                _kill()
            threading.Timer(float(delay) / 1000, _kill).start()

    sys.addaudithook(_hook)
''')


# --------------------------------------------------------------------------
# fixtures: an evidence tree, its index, mounts


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evidence") / "tree"
    assert build_corpus_tree(root, 4, count=DOCUMENTS // 4) == DOCUMENTS
    return root


@pytest.fixture(scope="module")
def indexed(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tree's index on writable storage, checkpointed (as `scanner scan` leaves it)."""
    db = tmp_path_factory.mktemp("index") / "case.db"
    proc = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr", "--json")
    assert proc.returncode == 0, proc.stderr
    return db


def _mount(*args: str) -> bool:
    """Run mount(8); False when it is missing or not permitted here (not root, no CAP_SYS_ADMIN)."""
    if shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _unmount(where: Path) -> None:
    subprocess.run(["umount", str(where)], capture_output=True, check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder on a tmpfs of SMALL_DISK ("tmpfs"), or a plain folder to be written under RLIMIT_FSIZE
    ("fsize") where nothing can be mounted."""
    where = tmp_path / "small"
    where.mkdir()
    if _mount("-t", "tmpfs", "-o", f"size={SMALL_DISK}", "tmpfs", str(where)):
        yield where, "tmpfs"
        _unmount(where)
    else:
        yield where, "fsize"


def _limits(how: str) -> dict[int, int] | None:
    return {resource.RLIMIT_FSIZE: FILE_SIZE_LIMIT} if how == "fsize" else None


def _shortage(how: str) -> tuple[str, str]:
    """What the line says ran out on a small disk, and the rerun it asks for."""
    if how == "tmpfs":
        return "disk full", "with space"
    return f"file size limit reached ({FILE_SIZE_LIMIT:,} bytes)", "with a higher `ulimit -f`"


@pytest.fixture
def read_only_copy(indexed: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A copy of the index seen through a read-only bind mount ("mount"); where none can be made and this
    user honours permission bits (not root), the same copy as read-only files in a read-only folder ("chmod")."""
    source, view = tmp_path / "source", tmp_path / "media"
    source.mkdir()
    view.mkdir()
    shutil.copy(indexed, source / "case.db")
    if _mount("--bind", str(source), str(view)):
        if _mount("-o", "remount,bind,ro", str(view)):
            yield view / "case.db", "mount"
            _unmount(view)
            return
        _unmount(view)
    if os.geteuid() == 0:
        pytest.skip("cannot mount here, and root ignores permission bits: no read-only index to test")
    (source / "case.db").chmod(0o444)
    source.chmod(0o555)
    yield source / "case.db", "chmod"
    source.chmod(0o755)


def _lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.strip()]


def _rows(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    finally:
        conn.close()


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def _faulty_env(tmp_path: Path, fault: str) -> dict[str, str]:
    """PYTHONPATH with the FAULTS sitecustomize first, and the fault it injects."""
    hook = tmp_path / "fault-hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(FAULTS, encoding="utf-8")
    return {"PYTHONPATH": str(hook) + os.pathsep + cli_env()["PYTHONPATH"], "SCANNER_TEST_FAULT": fault}


# --------------------------------------------------------------------------
# disk full


def test_disk_full_is_one_line_keeps_every_committed_file_and_a_rerun_resumes(
        tree: Path, small_disk: tuple[Path, str]) -> None:
    folder, how = small_disk
    db = folder / "case.db"
    first = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr", "--json", limits=_limits(how))

    shortage, remedy = _shortage(how)
    [line] = _lines(first.stderr)
    found = re.fullmatch(rf"scanner: error: {re.escape(shortage)} while scanning into index {re.escape(str(db))}: "
                         rf"(\d+) files committed; rerun {re.escape(remedy)} to resume", line)
    assert found, line
    assert first.returncode == RESOURCE_EXIT
    assert json.loads(first.stdout) == {"error": line.removeprefix("scanner: error: "), "exit_code": RESOURCE_EXIT}
    committed = int(found.group(1))
    assert committed < DOCUMENTS
    if how == "tmpfs":
        assert committed > 0  # the first batch fitted: the rerun resumes after it
    assert _integrity(db) == "ok"
    assert _rows(db) == committed  # every file it says it committed is there, and nothing half-written

    if how == "tmpfs":
        assert _mount("-o", "remount,size=256m", str(folder))
    resumed = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr", "--json")
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert (result["files_seen"], result["files_unchanged"], result["files_indexed"]) == (
        DOCUMENTS, committed, DOCUMENTS - committed)
    assert _integrity(db) == "ok"
    assert _rows(db) == DOCUMENTS


def test_a_report_on_a_full_disk_is_one_line_and_leaves_no_file(
        indexed: Path, small_disk: tuple[Path, str]) -> None:
    folder, how = small_disk
    out = folder / "report.json"  # about 13 MB: more than the disk holds
    proc = run_cli("report", "--index", str(indexed), "--format", "json", "-o", str(out),
                   limits=_limits(how))
    expected, remedy = _shortage(how)
    assert _lines(proc.stderr) == [f"scanner: error: {expected}: cannot write {out}; rerun {remedy}"]
    assert proc.returncode == RESOURCE_EXIT
    assert list(folder.iterdir()) == []  # neither a truncated report nor its temporary file


# --------------------------------------------------------------------------
# read-only media


def _media_note(db: Path, how: str) -> str:
    where = "on read-only media" if how == "mount" else "in a folder this user cannot write to"
    return f"scanner: index {db} is {where}: opened read-only"


def test_readers_work_on_read_only_media_and_say_so_once(
        tree: Path, indexed: Path, read_only_copy: tuple[Path, str], tmp_path: Path) -> None:
    db, how = read_only_copy
    note = _media_note(db, how)
    writable = run_cli("clusters", "--index", str(indexed), "--json")
    read_only = run_cli("clusters", "--index", str(db), "--json")
    assert read_only.returncode == 0, read_only.stderr
    assert _lines(read_only.stderr) == [note]
    same = {k: v for k, v in json.loads(read_only.stdout).items() if k != "index"}
    assert same == {k: v for k, v in json.loads(writable.stdout).items() if k != "index"}

    info = run_cli("info", "--index", str(db), "--json")
    assert info.returncode == 0 and _lines(info.stderr) == [note]
    assert json.loads(info.stdout)["stats"]["files_live"] == DOCUMENTS

    check = run_cli("check", str(sorted((tree / "part1").iterdir())[0]), "--index", str(db), "--no-ocr", "--json")
    assert check.returncode == 1, check.stderr  # its variants in part0, part2, part3 are found
    assert _lines(check.stderr) == [note]

    # a device that may go away is read, not mapped: a mapped read of a device gone is a crash (SIGBUS)
    from scanner.index import Index

    with Index.open(db) as reader, Index.open(indexed) as local:
        assert reader.mmap_bytes == 0 and local.mmap_bytes > 0

    out = tmp_path / "report.html"
    report = run_cli("report", "--index", str(db), "--format", "html", "-o", str(out))
    assert report.returncode == 0
    assert _lines(report.stderr) == [note, f"scanner: wrote html report to {out}"]
    assert out.stat().st_size > 100_000


def test_writers_refuse_read_only_media_with_one_line(
        tree: Path, read_only_copy: tuple[Path, str]) -> None:
    db, how = read_only_copy
    where = "on read-only media" if how == "mount" else "in a folder this user cannot write to"
    line = (f"scanner: error: index {db} is {where}: cannot write to it; copy it to writable storage to scan "
            "or add to it (reading it works as it is)")
    scan = run_cli("scan", str(tree), "--index", str(db), "--no-ocr", "--json")
    assert (scan.returncode, _lines(scan.stderr)) == (RESOURCE_EXIT, [line])
    assert json.loads(scan.stdout) == {"error": line.removeprefix("scanner: error: "), "exit_code": RESOURCE_EXIT}
    add = run_cli("check", "--add", str(next((tree / "part0").iterdir())), "--index", str(db), "--no-ocr")
    assert (add.returncode, _lines(add.stderr)) == (RESOURCE_EXIT, [line])


def _commit_without_checkpoint(db: Path, folder: Path) -> None:
    """Add one file to the index through the writer, then die (SIGKILL) before the checkpoint a close makes:
    the change is only in the -wal file, as a scan killed mid-run or a copy taken during one leaves it."""
    script = textwrap.dedent(f'''
        import os, signal
        from scanner.core.model import FileRecord
        from scanner.index import Index
        index = Index.open({str(db)!r}, readonly=False)
        with index.transaction():
            index.put_file(FileRecord({str(folder / "late.txt")!r}, 1, 1, "", ""), readers=1, status="skipped",
                           reason="written after the last checkpoint", run_id=None)
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=cli_env(), capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (db.parent / "case.db-wal").stat().st_size > 0


def _read_only_view(source: Path, view: Path) -> bool:
    view.mkdir()
    if _mount("--bind", str(source), str(view)):
        if _mount("-o", "remount,bind,ro", str(view)):
            return True
        _unmount(view)
    return False


def test_an_index_not_checkpointed_is_read_through_its_log_or_refused(indexed: Path, tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(indexed, source / "case.db")
    _commit_without_checkpoint(source / "case.db", tmp_path)
    view = tmp_path / "media"
    if not _read_only_view(source, view):
        pytest.skip("cannot mount here: the write-ahead log case needs read-only media")
    try:
        db = view / "case.db"
        pending = (view / "case.db-wal").stat().st_size
        info = run_cli("info", "--index", str(db), "--json")
        assert info.returncode == 0, info.stderr
        assert _lines(info.stderr) == [
            f"scanner: index {db} is on read-only media: opened read-only, with the {pending:,} bytes of its "
            "write-ahead log (not checkpointed)"]
        assert json.loads(info.stdout)["stats"]["files_live"] == DOCUMENTS + 1  # the change in the log is seen
    finally:
        _unmount(view)

    (source / "case.db-shm").unlink()  # copied without it: the log cannot be read from read-only media
    if not _read_only_view(source, tmp_path / "media2"):
        pytest.skip("cannot mount here")
    try:
        db = tmp_path / "media2" / "case.db"
        info = run_cli("info", "--index", str(db), "--json")
        line = (f"scanner: error: index {db} is on read-only media and was not checkpointed: its write-ahead log "
                f"case.db-wal holds {pending:,} bytes of changes but its case.db-shm file is missing; copy the index "
                "with its -wal file to writable storage and open it there")
        assert (info.returncode, _lines(info.stderr)) == (3, [line])  # never the stale index without a word
    finally:
        _unmount(tmp_path / "media2")


def test_a_read_only_file_for_an_unprivileged_user(indexed: Path) -> None:
    """Without a mount, what a user without write access meets: root runs the CLI as `nobody` (setpriv)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root ignores permission bits and setpriv(1) is missing")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    folder = Path(tempfile.mkdtemp(prefix="scanner-read-only-file-"))  # outside pytest's 0700 tmp folders
    try:
        folder.chmod(0o777)  # the folder is writable: only the file is read-only
        db = folder / "case.db"
        shutil.copy(indexed, db)
        db.chmod(0o444)

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*prefix, sys.executable, "-m", "scanner", *args], cwd=folder, env=cli_env(),
                                  text=True, capture_output=True, timeout=120)

        info = run("info", "--index", str(db), "--json")
        assert info.returncode == 0, info.stderr
        assert _lines(info.stderr) == [f"scanner: index {db} is a read-only file: opened read-only"]
        assert json.loads(info.stdout)["stats"]["files_live"] == DOCUMENTS
        assert sorted(p.name for p in folder.iterdir()) == ["case.db"]  # opened immutable: not even a -shm
        scan = run("scan", str(folder), "--index", str(db), "--no-ocr")
        assert (scan.returncode, _lines(scan.stderr)) == (RESOURCE_EXIT, [
            f"scanner: error: index {db} is a read-only file: cannot write to it; copy it to writable storage to "
            "scan or add to it (reading it works as it is)"])
    finally:
        shutil.rmtree(folder)


@pytest.mark.asyncio
async def test_the_tui_reads_an_index_on_read_only_media(read_only_copy: tuple[Path, str]) -> None:
    from scanner.faces.tui import make_app

    db, how = read_only_copy
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        from textual.widgets import Static

        summary = str(app.screen.query_one("#summary", Static).render())
    assert f"{DOCUMENTS} documents" in summary
    assert _media_note(db, how).removeprefix("scanner: ") in summary.replace("\n", "")


# --------------------------------------------------------------------------
# descriptors, memory, the index's folder


def test_too_many_open_files_is_one_line_and_a_rerun_completes(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "case.db"
    low = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr", "--json",
                  limits={resource.RLIMIT_NOFILE: 12})
    line = (f"scanner: error: too many open files (limit 12) while scanning into index {db}: 0 files committed; "
            "rerun with a higher `ulimit -n` to resume")
    assert (low.returncode, _lines(low.stderr)) == (RESOURCE_EXIT, [line])
    assert json.loads(low.stdout)["exit_code"] == RESOURCE_EXIT
    assert _integrity(db) == "ok"
    again = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr", "--json",
                    limits={resource.RLIMIT_NOFILE: 64})
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files_seen"] == DOCUMENTS
    assert _rows(db) == DOCUMENTS


def test_out_of_memory_in_the_parent_is_one_line_and_keeps_what_was_committed(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "case.db"
    proc = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr",
                   env=_faulty_env(tmp_path, "memory"))  # a MemoryError as the crawl lists part2
    [line] = _lines(proc.stderr)
    found = re.fullmatch(rf"scanner: error: out of memory while scanning into index {re.escape(str(db))}: "
                         r"(\d+) files committed; rerun with more memory to resume", line)
    assert found and proc.returncode == RESOURCE_EXIT, proc.stderr
    assert _rows(db) == int(found.group(1))
    assert _integrity(db) == "ok"


def test_the_index_folder_removed_during_a_scan_stops_it_with_one_line(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    db = folder / "case.db"
    proc = run_cli("scan", str(tree), "--index", str(db), "--jobs", "2", "--no-ocr",
                   env=_faulty_env(tmp_path, f"rmtree:{folder}"))  # removed while the crawl lists part2
    assert _lines(proc.stderr) == [f"scanner: error: index {db} was deleted or moved during the scan (its folder "
                                   "gone?): stopped, nothing more can be kept"]
    assert proc.returncode == RESOURCE_EXIT
    assert not folder.exists()


# --------------------------------------------------------------------------
# outputs are atomic


def _complete_json(path: Path) -> bool:
    try:
        return "schema_version" in json.loads(path.read_bytes())
    except ValueError:
        return False


def test_a_report_killed_while_written_leaves_the_old_one_or_the_whole_new_one(
        indexed: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    first = run_cli("report", "--index", str(indexed), "--format", "json", "-o", str(out))
    assert first.returncode == 0, first.stderr
    old = out.read_bytes()
    left_behind = 0
    # killed: as the temporary file opens, 1-80 ms into writing it, and just before the rename
    for fault in ("kill-after:0", "kill-after:1", "kill-after:5", "kill-after:20", "kill-after:80",
                  "kill-at:os.rename"):
        proc = run_cli("report", "--index", str(indexed), "--format", "json", "-o", str(out), "--force",
                       env=_faulty_env(tmp_path, fault))
        timed = fault.startswith("kill-after:") and fault != "kill-after:0"  # a fast run may end before it
        assert proc.returncode == -signal.SIGKILL or (timed and proc.returncode == 0), (fault, proc.stderr)
        assert out.read_bytes() == old or _complete_json(out), fault  # killed after the rename: the new one
        temps = list(tmp_path.glob(".scanner-report-*.tmp"))
        left_behind += len(temps)
        for temp in temps:
            temp.unlink()
    assert left_behind >= 3  # the kills did land while the new report was being written

    fresh = tmp_path / "fresh.json"  # no old report: the name stays free
    proc = run_cli("report", "--index", str(indexed), "--format", "json", "-o", str(fresh),
                   env=_faulty_env(tmp_path, "kill-at:os.link"))
    assert proc.returncode == -signal.SIGKILL
    assert not fresh.exists()


def test_a_pan_folder_killed_midway_holds_only_whole_files(indexed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "pan"
    proc = run_cli("report", "--index", str(indexed), "--format", "pan", "-o", str(folder),
                   env=_faulty_env(tmp_path, "kill-after:0/25"))  # killed as the 25th file opens
    assert proc.returncode == -signal.SIGKILL
    written = sorted(folder.glob("*.xml"))
    assert len(written) == 24
    for path in written:
        ElementTree.parse(path)  # every file under its final name is whole
