"""`watch` with real watchdog observers on real temporary folders, against a real protected index."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from corpus import documents, text_alignment_pairs
from rawsql import raw

from scanner.core.config import Params
from scanner.index import Index
from scanner.services.scan import run_scan
from scanner.services.watch import Alert, Watcher, WatchEvent, WatchOptions, check_file, is_ignored
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"
PROTECTED = [SAMPLE / "originals" / "declaration-of-independence.txt", SAMPLE / "originals" / "gettysburg-address.txt"]
# PAN-style pairs (tests/corpus.py): PLAGIARISED holds one passage of its source verbatim; UNPLAGIARISED is on
# the topic of its source with no reuse. Both sources, and two unrelated documents, are protected.
PLAGIARISED = next(p for p in text_alignment_pairs(8, "none", seed=11) if len(p.cases) == 1)
UNPLAGIARISED = text_alignment_pairs(1, "unrelated", seed=11)[0]
PAN_SOURCES = {PLAGIARISED.src_name: PLAGIARISED.src, UNPLAGIARISED.src_name: UNPLAGIARISED.src,
               **{f"source-document9{i:04d}.txt": text for i, text in enumerate(documents(2, seed=11))}}
FILLER = (SAMPLE / "unrelated" / "field-notes-river-survey.txt").read_text(encoding="utf-8")
RECIPE = (SAMPLE / "unrelated" / "recipe-rye-bread.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def protected_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The protected documents, indexed by the real scan service."""
    folder = tmp_path_factory.mktemp("protected")
    for path in PROTECTED:
        shutil.copy(path, folder)
    for name, text in PAN_SOURCES.items():
        (folder / name).write_text(text, encoding="utf-8")
    db = tmp_path_factory.mktemp("index") / "protected.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
    return db


@pytest.fixture
def db(protected_db: Path, tmp_path: Path) -> Path:
    """A private copy: every watch writes alerts and watch_state into it."""
    copy = tmp_path / "protected.db"
    shutil.copy(protected_db, copy)
    return copy


def leak_text() -> str:
    """One protected paragraph pasted into an unrelated document."""
    declaration = PROTECTED[0].read_text(encoding="utf-8")
    start = declaration.index("We hold these truths")
    return FILLER[:400] + "\n\n" + declaration[start:start + 600] + "\n\n" + FILLER[400:]


class Recorder:
    """Thread-safe sink for the watcher's callbacks."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []
        self.events: list[WatchEvent] = []
        self.lock = threading.Lock()

    def alert(self, alert: Alert) -> None:
        with self.lock:
            self.alerts.append(alert)

    def event(self, event: WatchEvent) -> None:
        with self.lock:
            self.events.append(event)

    def kinds(self, kind: str) -> list[WatchEvent]:
        with self.lock:
            return [e for e in self.events if e.kind == kind]

    def checked(self) -> list[str]:
        return [e.path for e in self.kinds("checked")]


def wait_for(condition: Any, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def start(db: Path, folder: Path, recorder: Recorder, **options: Any) -> Watcher:
    checker = options.pop("checker", check_file)
    watcher = Watcher(str(db), [str(folder)], WatchOptions(**{"settle": 0.2, **options}), on_alert=recorder.alert,
                      on_event=recorder.event, checker=checker)
    watcher.start()
    return watcher


# checkers injected into the worker processes (module level, so they can be pickled by reference)

def check_unless_locked(path: str, index: Any, pm: Any, options: WatchOptions) -> dict[str, Any]:
    """Like a file another program still holds open exclusively: unreadable while `LOCKED` exists."""
    if (Path(path).parent.parent / "LOCKED").exists():
        raise PermissionError(13, "Permission denied", path)
    return check_file(path, index, pm, options)


def check_or_hang(path: str, index: Any, pm: Any, options: WatchOptions) -> dict[str, Any]:
    """A hostile file that sends the extractor into an endless loop."""
    if path.endswith("hang.txt"):
        time.sleep(3600)
    return check_file(path, index, pm, options)


# --------------------------------------------------------------------------


def test_add_indexes_a_watched_file_as_a_scan_would(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --add, a checked file joins the index under its display name and real path: its next
    version is not a leak of itself, and a scan of the folder finds it indexed, not a new file."""
    watched = tmp_path / "outbox"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder, add=True)
    try:
        (watched / "notes.txt").write_text(RECIPE, encoding="utf-8")
        assert wait_for(lambda: len(recorder.checked()) >= 1)
    finally:
        watcher.stop()
    with Index.open(db) as index:
        row = raw(index).execute("SELECT path, real_path, doc_id FROM files WHERE path LIKE ?",
                                 (str(watched) + "%",)).fetchone()
    assert row[0] == str(watched / "notes.txt") and row[1] == os.path.realpath(watched / "notes.txt")
    assert row[2] is not None
    monkeypatch.chdir(tmp_path)
    with Index.open(db, readonly=False) as index:
        rescan = run_scan(["outbox"], index, make_plugin_manager(), index.params, jobs=0)
    assert (rescan.files_indexed, rescan.files_unchanged) == (0, 1)


def test_leak_alerts_with_passage_and_unrelated_file_does_not(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "outbox"
    (watched / "deep" / "er").mkdir(parents=True)
    recorder = Recorder()
    watcher = start(db, watched, recorder)
    try:
        (watched / "memo.txt").write_text(RECIPE, encoding="utf-8")
        (watched / "deep" / "er" / "draft.txt").write_text(leak_text(), encoding="utf-8")  # recursive
        assert wait_for(lambda: len(recorder.checked()) >= 2)
    finally:
        watcher.stop()
    leak = str(watched / "deep" / "er" / "draft.txt")
    assert [a.path for a in recorder.alerts] == [leak]
    match = recorder.alerts[0].matches[0]
    assert match["path"].endswith("declaration-of-independence.txt")
    assert match["containment_doc_in_query"] < 0.5  # one paragraph: it is the passage that alerts
    passage = match["passages"][0]["text"]
    assert passage.startswith("We hold these truths to be self-evident")
    assert set(match["passages"][0]) == {"query_start", "query_end", "doc_start", "doc_end", "text", "kind"}
    with Index.open(db) as index:
        stored = index.alerts()
        watched_docs = raw(index).execute("SELECT count(*) FROM files WHERE path LIKE ?",
                                          (str(watched) + "%",)).fetchone()[0]
    assert [a.path for a in stored] == [leak]
    assert stored[0].matches[0]["passages"][0]["text"] == passage
    assert watched_docs == 0  # watched files are not added to the protected index without --add


def test_pan_style_plagiarised_document_alerts_and_unplagiarised_one_does_not(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "share"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder)
    try:
        for pair in (PLAGIARISED, UNPLAGIARISED):
            (watched / pair.susp_name).write_text(pair.susp, encoding="utf-8")
        assert wait_for(lambda: len(recorder.checked()) >= 2)
    finally:
        watcher.stop()
    assert [Path(a.path).name for a in recorder.alerts] == [PLAGIARISED.susp_name]
    sources = {Path(m["path"]).name for m in recorder.alerts[0].matches}
    assert PLAGIARISED.src_name in sources
    # the planted case: where it is in the suspicious document and where it came from
    (case,) = PLAGIARISED.cases
    passages = next(m for m in recorder.alerts[0].matches if m["path"].endswith(PLAGIARISED.src_name))["passages"]
    assert any(abs(p["query_start"] - case.this_offset) <= 5
               and abs(p["query_end"] - (case.this_offset + case.this_length)) <= 5
               and abs(p["doc_start"] - case.source_offset) <= 5 for p in passages), passages


def test_slowly_written_file_is_checked_once_complete(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "downloads"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder)
    text = leak_text()
    path = watched / "slow.txt"
    try:
        with open(path, "w", encoding="utf-8") as handle:
            step = len(text) // 10
            for i in range(10):  # ~1.5 s of writing, each pause shorter than the settle time
                handle.write(text[i * step:(i + 1) * step] if i < 9 else text[i * step:])
                handle.flush()
                time.sleep(0.15)
        assert wait_for(lambda: str(path) in recorder.checked())
        time.sleep(1.0)  # no second check of the same content
    finally:
        watcher.stop()
    assert recorder.checked().count(str(path)) == 1
    assert len(recorder.alerts) == 1
    with Index.open(db) as index:
        (size,) = raw(index).execute("SELECT size FROM watch_state WHERE path = ?", (str(path),)).fetchone()
    assert size == len(text.encode("utf-8"))  # the complete file was checked


def test_temp_files_are_ignored_and_renamed_download_is_checked(db: Path, tmp_path: Path) -> None:
    for name in ("report.docx.part", "~$report.docx", ".~lock.report.odt#", "x.tmp", "y.crdownload", ".z.swp"):
        assert is_ignored(f"/x/{name}", WatchOptions().ignore)
    assert not is_ignored("/x/report.docx", WatchOptions().ignore)
    watched = tmp_path / "share"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder)
    try:
        (watched / "~$leak.txt").write_text(leak_text())
        (watched / "leak.tmp").write_text(leak_text())
        (watched / "download.txt.crdownload").write_text(leak_text())
        time.sleep(0.8)
        assert recorder.checked() == []
        os.rename(watched / "download.txt.crdownload", watched / "download.txt")  # the browser finishes
        assert wait_for(lambda: str(watched / "download.txt") in recorder.checked())
        time.sleep(0.5)
    finally:
        watcher.stop()
    assert recorder.checked() == [str(watched / "download.txt")]
    assert [a.path for a in recorder.alerts] == [str(watched / "download.txt")]


def test_restart_catches_up_without_rechecking(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "usb"
    watched.mkdir()
    (watched / "before.txt").write_text(RECIPE)
    (watched / "edited.txt").write_text(RECIPE)
    first = Recorder()
    watcher = start(db, watched, first)
    try:
        assert wait_for(lambda: len(first.checked()) == 2)
    finally:
        watcher.stop()
    (watched / "while-stopped.txt").write_text(leak_text())  # new while nothing watched
    (watched / "edited.txt").write_text(RECIPE + "\n\n" + leak_text())  # changed while nothing watched
    second = Recorder()
    watcher = start(db, watched, second)
    try:
        assert wait_for(lambda: len(second.checked()) >= 2)
        time.sleep(0.6)
    finally:
        watcher.stop()
    assert sorted(second.checked()) == [str(watched / "edited.txt"), str(watched / "while-stopped.txt")]
    assert sorted(a.path for a in second.alerts) == sorted(second.checked())


def test_burst_of_a_thousand_files_moved_in_at_once_all_checked_once(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "burst"
    staging = tmp_path / "staging"
    watched.mkdir()
    staging.mkdir()
    leak = leak_text()
    words = RECIPE.split()
    for i in range(1000):  # mostly small unrelated files, one leak in a hundred
        body = leak if i % 100 == 7 else f"file {i}: " + " ".join(words[i % 50:(i % 50) + 40])
        (staging / f"f{i:04d}.txt").write_text(body)
    recorder = Recorder()
    watcher = start(db, watched, recorder, jobs=2)
    began = time.monotonic()
    try:
        for i in range(1000):  # dropped at once: each file appears complete (moved-in events)
            os.rename(staging / f"f{i:04d}.txt", watched / f"f{i:04d}.txt")
        assert wait_for(lambda: len(recorder.checked()) >= 1000, timeout=60)
        elapsed = time.monotonic() - began
        time.sleep(0.5)
    finally:
        watcher.stop()
    checked = recorder.checked()
    assert len(checked) == 1000 and len(set(checked)) == 1000  # all checked, none twice
    expected = [str(watched / f"f{i:04d}.txt") for i in range(7, 1000, 100)]
    # ten copies of one leak: one alert group, the later copies named in follow-ups, not ten alerts
    [first] = [a for a in recorder.alerts if not a.followup]
    assert sorted(p for a in recorder.alerts for p in a.paths) == expected
    assert len(recorder.alerts) <= 1 + 9 and first.paths == (first.path,)
    assert elapsed < 45, f"1,000 files took {elapsed:.1f} s"
    with Index.open(db) as index:
        assert raw(index).execute("SELECT count(*) FROM watch_state").fetchone()[0] == 1000
        [group] = index.alerts()
        assert group.path == first.path and sorted(group.paths) == expected


def test_folder_moved_in_is_walked(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "inbox"
    watched.mkdir()
    outside = tmp_path / "project"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "leak.txt").write_text(leak_text())
    (outside / "notes.txt").write_text(RECIPE)
    recorder = Recorder()
    watcher = start(db, watched, recorder)
    try:
        os.rename(outside, watched / "project")
        assert wait_for(lambda: len(recorder.checked()) >= 2)
        time.sleep(0.5)
    finally:
        watcher.stop()
    assert sorted(recorder.checked()) == [str(watched / "project" / "notes.txt"),
                                          str(watched / "project" / "sub" / "leak.txt")]
    assert [a.path for a in recorder.alerts] == [str(watched / "project" / "sub" / "leak.txt")]


def test_file_not_readable_yet_is_retried_then_checked(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "locked"
    watched.mkdir()
    (tmp_path / "LOCKED").touch()
    recorder = Recorder()
    watcher = start(db, watched, recorder, settle=0.1, checker=check_unless_locked)
    try:
        (watched / "held.txt").write_text(leak_text())
        assert wait_for(lambda: recorder.kinds("retry"))
        (tmp_path / "LOCKED").unlink()  # the other program lets go
        assert wait_for(lambda: recorder.alerts)
    finally:
        watcher.stop()
    assert recorder.checked() == [str(watched / "held.txt")]
    assert recorder.kinds("error") == []


def test_file_never_readable_is_reported_after_retries(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "locked"
    watched.mkdir()
    (tmp_path / "LOCKED").touch()
    recorder = Recorder()
    watcher = start(db, watched, recorder, settle=0.05, retries=2, checker=check_unless_locked)
    try:
        (watched / "held.txt").write_text(leak_text())
        assert wait_for(lambda: recorder.kinds("error"))
        assert watcher.wait_idle(5)
    finally:
        watcher.stop()
    (error,) = recorder.kinds("error")
    assert error.path == str(watched / "held.txt") and "Permission denied" in error.message
    assert len(recorder.kinds("retry")) == 2
    assert watcher.counters.errors == 1 and watcher.counters.checked == 0


def test_hanging_file_costs_one_worker_not_the_watcher(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "hostile"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder, jobs=1, timeout=1.0, checker=check_or_hang)
    try:
        (watched / "hang.txt").write_text(RECIPE)
        assert wait_for(lambda: recorder.kinds("error"), timeout=10)
        (watched / "after.txt").write_text(leak_text())
        assert wait_for(lambda: recorder.alerts, timeout=20)  # a fresh worker took over
    finally:
        watcher.stop()
    assert "worker killed" in recorder.kinds("error")[0].message
    assert [a.path for a in recorder.alerts] == [str(watched / "after.txt")]


def test_latency_under_two_seconds(db: Path, tmp_path: Path) -> None:
    """From a complete 100 KB text file to its alert (bench/bench_watch.py measures it properly)."""
    watched = tmp_path / "fast"
    watched.mkdir()
    recorder = Recorder()
    watcher = start(db, watched, recorder, settle=0.25)
    body = (FILLER + "\n") * 60
    text = body[:50_000] + leak_text() + body[:50_000]
    staged = tmp_path / "big.txt"
    staged.write_text(text)
    try:
        assert watcher.wait_idle(10)
        written = time.monotonic()
        os.rename(staged, watched / "big.txt")  # complete at once
        assert wait_for(lambda: recorder.alerts, timeout=20)
        latency = time.monotonic() - written
    finally:
        watcher.stop()
    assert latency < 2.0, f"alert after {latency:.2f} s"


# --------------------------------------------------------------------------
# the CLI


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", "watch", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def test_cli_once_jsonl_and_exit_code(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "drop"
    watched.mkdir()
    (watched / "leak.txt").write_text(leak_text())
    (watched / "fine.txt").write_text(RECIPE)
    done = run_cli(str(watched), "--index", str(db), "--once", "--jsonl")
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["path"] for line in lines] == [str(watched / "leak.txt")]
    assert set(lines[0]) == {"time", "path", "paths", "sha256", "severity", "matches"}
    assert lines[0]["paths"] == [lines[0]["path"]] and lines[0]["severity"] == "medium"  # a 101-word passage
    assert lines[0]["matches"][0]["rules"] == ["passage"] and lines[0]["matches"][0]["longest_passage_words"] > 30
    assert lines[0]["matches"][0]["passages"][0]["text"].startswith("We hold these truths")
    again = run_cli(str(watched), "--index", str(db), "--once", "--jsonl")
    assert again.returncode == 0 and again.stdout == ""  # nothing changed since: nothing re-checked
    missing = run_cli(str(watched), "--index", str(tmp_path / "absent.db"), "--once")
    assert missing.returncode == 3 and "no index" in missing.stderr


def test_cli_exec_hook_gets_the_alert_and_a_failing_hook_is_not_fatal(db: Path, tmp_path: Path) -> None:
    watched = tmp_path / "hooked"
    watched.mkdir()
    (watched / "leak.txt").write_text(leak_text())
    out = tmp_path / "hook.json"
    hook = (f"{sys.executable} -c \"import sys, os; open({str(out)!r}, 'w')"
            f".write(os.environ['SCANNER_ALERT_PATH'] + chr(10) + sys.stdin.read())\"")
    done = run_cli(str(watched), "--index", str(db), "--once", "--exec", hook)
    assert done.returncode == 1, done.stderr
    first, payload = out.read_text().split("\n", 1)
    assert first == str(watched / "leak.txt")
    assert json.loads(payload)["matches"][0]["path"].endswith("declaration-of-independence.txt")
    assert done.stdout.startswith("ALERT ") and "declaration-of-independence.txt" in done.stdout
    (watched / "leak2.txt").write_text(leak_text())
    failing = run_cli(str(watched), "--index", str(db), "--once", "--exec", "false")
    assert failing.returncode == 1 and "exit 1" in failing.stderr
    assert "leak2.txt" in failing.stdout


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_cli_stops_cleanly_on_signals(db: Path, tmp_path: Path, sig: int, code: int) -> None:
    watched = tmp_path / "live"
    watched.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "scanner", "watch", str(watched), "--index", str(db),
                                "--jsonl", "--settle", "0.1"], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        assert wait_for(lambda: any("watching" in line for line in stderr), timeout=30), stderr
        (watched / "leak.txt").write_text(leak_text())
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert json.loads(line)["path"] == str(watched / "leak.txt")
        process.send_signal(sig)
        try:
            returned = process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # once seen in a full run: show where every thread waits
            process.send_signal(signal.SIGABRT)
            process.wait(10)
            reader.join(5)
            pytest.fail("watch did not stop within 30 s; its threads:\n" + "".join(stderr))
        assert returned == code
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(5)
    assert any("1 checked, 1 alert(s)" in line for line in stderr), stderr
