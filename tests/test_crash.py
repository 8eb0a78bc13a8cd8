"""Crash safety: `scanner scan` and `scanner watch` killed with SIGKILL, then resumed.

A kill can land anywhere (mid-batch, mid-commit, during the findings), so the
scan is killed several times at random moments, each time after the index has
visibly moved on, and after every kill the index is audited: integrity, one
row per path, one document per SHA-256, postings that match their documents,
and every file row committed before the kill still there, unchanged.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from clirun import REPO, cli_env
from corpus import build_corpus_tree


def build_tree(root: Path, copies: int) -> int:
    """`copies` variants of 540 generated documents (each a new document), and in each part one binary
    file that is no text: about 5.3 MB a copy."""
    n = build_corpus_tree(root, copies)
    for k in range(copies):
        (root / f"part{k}" / "scan.bin").write_bytes(random.Random(k).randbytes(8_000))
    return n + copies


def _files_rows(db: Path) -> dict[str, tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT f.path, f.sha256, f.status, d.sha256, d.n_fps FROM files f "
            "LEFT JOIN documents d ON d.id = f.doc_id")}
    finally:
        conn.close()


def _committed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM files").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def audit(db: Path) -> None:
    """The invariants a crash must not break."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("SELECT count(*) - count(DISTINCT path) FROM files").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) - count(DISTINCT sha256) FROM documents").fetchone()[0] == 0
        # every document has its sketch and exactly its n_fps postings; no postings without a document
        assert conn.execute("""SELECT count(*) FROM documents d LEFT JOIN
                               (SELECT doc_id, count(*) AS c FROM postings GROUP BY doc_id) p ON p.doc_id = d.id
                               WHERE coalesce(p.c, 0) != d.n_fps OR d.n_fps = 0""").fetchone()[0] == 0
        assert conn.execute("""SELECT count(*) FROM postings p WHERE NOT EXISTS
                               (SELECT 1 FROM documents d WHERE d.id = p.doc_id)""").fetchone()[0] == 0
        assert conn.execute("""SELECT count(*) FROM documents d WHERE NOT EXISTS
                               (SELECT 1 FROM sketches s WHERE s.doc_id = d.id)""").fetchone()[0] == 0
        # a file with text points at the document of its own SHA-256
        assert conn.execute("""SELECT count(*) FROM files f LEFT JOIN documents d ON d.id = f.doc_id
                               WHERE f.status IN ('ok', 'too_short')
                               AND (d.id IS NULL OR d.sha256 != f.sha256)""").fetchone()[0] == 0
    finally:
        conn.close()


def test_scan_survives_repeated_sigkill(tmp_path: Path) -> None:
    rng = random.Random(20240508)
    # 7 copies, 3,787 files: each of the 5 runs commits a batch (256 files) before it can be killed, then works
    # on until the kill (about 2,000 files in all here); 3 copies (as many files as the 540 PAN-13 documents
    # gave) let the 5 runs finish the whole tree
    copies = 7
    n = build_tree(tmp_path / "tree", copies=copies)
    db = tmp_path / "i.db"
    command = [sys.executable, "-m", "scanner", "scan", "tree", "--index", str(db), "--jobs", "2", "--json"]
    before: dict[str, tuple[Any, ...]] = {}
    kills = 0
    for attempt in range(5):
        proc = subprocess.Popen(command, cwd=tmp_path, env=cli_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        start_count = _committed(db)
        # wait until this run has committed something, then kill it a random moment later
        deadline = time.monotonic() + 60
        while proc.poll() is None and _committed(db) <= start_count and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        proc.stderr.close()
        audit(db)
        after = _files_rows(db)
        lost = {p: row for p, row in before.items() if after.get(p) != row}
        assert not lost, f"kill {attempt + 1}: rows committed before it changed or vanished: {list(lost)[:5]}"
        assert len(after) >= len(before)
        before = after
    assert kills >= 4, "the scans ended before they could be killed: the tree is too small for this machine"
    assert len(before) < n  # some work was left for the resume

    resumed = subprocess.run(command, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    audit(db)
    final = _files_rows(db)
    assert doc["files_seen"] == n and len(final) == n
    assert doc["files_unchanged"] == len(before)
    assert all(final[p] == row for p, row in before.items())
    # every file readable as text got indexed exactly once (each part holds one binary file)
    statuses = [row[1] for row in final.values()]
    assert statuses.count("ok") == n - copies and statuses.count("unsupported") == copies
    assert all(row[2] == row[0] for row in final.values() if row[1] == "ok")
    conn = sqlite3.connect(db)
    n_docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    conn.close()
    assert n_docs == len({row[0] for row in final.values() if row[1] == "ok"})
    print(f"scan: {kills} SIGKILLs survived over {n} files; resumed with {doc['files_indexed']} left")


# --------------------------------------------------------------------------
# the watcher

SAMPLE = REPO / "sample_corpus"
DECLARATION = SAMPLE / "originals" / "declaration-of-independence.txt"
FILLER = SAMPLE / "unrelated" / "field-notes-river-survey.txt"


def _leak(i: int) -> str:
    declaration = DECLARATION.read_text(encoding="utf-8")
    start = declaration.index("We hold these truths")
    filler = FILLER.read_text(encoding="utf-8")
    return f"Draft {i}.\n\n" + filler[:400] + "\n\n" + declaration[start:start + 600] + "\n\n" + filler[400:]


def _alerts(db: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute("SELECT path, matches_json FROM alerts ORDER BY id").fetchall()
    finally:
        conn.close()
    for _, matches in rows:
        assert json.loads(matches)[0]["path"].endswith("declaration-of-independence.txt")
    return [(path, matches) for path, matches in rows]


def test_watch_survives_sigkill_and_catches_up(tmp_path: Path) -> None:
    protected = tmp_path / "protected"
    protected.mkdir()
    shutil.copy(DECLARATION, protected)
    db = tmp_path / "p.db"
    made = subprocess.run([sys.executable, "-m", "scanner", "scan", str(protected), "--index", str(db), "--jobs", "0"],
                          cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    # own session, so the kill takes the watcher and its pool with it, like a power cut
    watcher = subprocess.Popen([sys.executable, "-m", "scanner", "watch", str(outbox), "--index", str(db), "--jsonl",
                                "--settle", "0.1"], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        # no wait for start-up: the observer starts before the catch-up crawl, so no file is missed
        (outbox / "leak000.txt").write_text(_leak(0), encoding="utf-8")
        first = watcher.stdout.readline()
        assert json.loads(first)["path"] == str(outbox / "leak000.txt")
        for i in range(1, 41):  # a burst: the kill lands while these are being checked
            (outbox / f"leak{i:03d}.txt").write_text(_leak(i), encoding="utf-8")
            (outbox / f"fine{i:03d}.txt").write_text(f"Shopping list {i}: rye flour, salt, water.\n" * 20,
                                                     encoding="utf-8")
        # kill as soon as a few alerts are in: a fixed pause after them let a fast machine finish the burst
        deadline = time.monotonic() + 60
        while len(_alerts(db)) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.killpg(watcher.pid, signal.SIGKILL)
        watcher.wait()
        watcher.stdout.close()
    audit(db)
    before = _alerts(db)
    assert 2 <= len(before) < 41, "the kill did not land mid-burst"
    for i in range(41, 46):  # changed while nothing watched
        (outbox / f"leak{i:03d}.txt").write_text(_leak(i), encoding="utf-8")

    done = subprocess.run([sys.executable, "-m", "scanner", "watch", str(outbox), "--index", str(db), "--once",
                           "--jsonl"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # alerts were raised on catch-up
    audit(db)
    after = _alerts(db)
    assert after[: len(before)] == before  # nothing recorded before the kill is lost
    paths = [path for path, _ in after]
    leaks = sorted(str(outbox / f"leak{i:03d}.txt") for i in range(46))
    assert sorted(paths) == leaks  # every leak alerted exactly once, across the kill
    streamed = [json.loads(line)["path"] for line in done.stdout.splitlines()]
    assert sorted(streamed) == sorted(set(leaks) - {p for p, _ in before})
    conn = sqlite3.connect(db)
    checked = conn.execute("SELECT count(*), sum(alerted) FROM watch_state").fetchone()
    conn.close()
    assert checked == (86, 46)
