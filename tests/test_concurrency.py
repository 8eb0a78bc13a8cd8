"""Readers while a scan writes (WAL), and a second scan refused by the writer lock.

While one real `scanner scan` commits batches: `scanner check` subprocesses
and an in-process `Index.open(readonly=True)` reader query the index; every
answer must be complete and consistent (no 'database is locked', each
snapshot's postings match its documents), and a second `scanner scan` on the
same index must be refused at once with exit 3, leaving the index intact.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from clirun import cli_env, run_cli
from corpus import build_corpus_tree, tree_document
from rawsql import raw

from scanner.index import Index


def test_readers_and_a_second_scan_while_a_scan_writes(tmp_path: Path) -> None:
    anchor_text = tree_document(5)  # its variants in the tree are near-duplicates of the anchor
    (tmp_path / "anchor").mkdir()
    (tmp_path / "anchor" / "anchor.txt").write_text(anchor_text, encoding="utf-8")
    (tmp_path / "query.txt").write_text(anchor_text, encoding="utf-8")
    db = tmp_path / "i.db"
    assert run_cli("scan", "anchor", "--index", str(db), "--json", cwd=tmp_path).returncode == 0
    tree = tmp_path / "tree"
    n = build_corpus_tree(tree, copies=5)  # 2,700 files, about 27 MB: a scan that lasts

    writer = subprocess.Popen([sys.executable, "-m", "scanner", "scan", "tree", "anchor", "--index", str(db),
                               "--jobs", "2", "--json"], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    counts: list[int] = []
    reader_errors: list[BaseException] = []
    stop = threading.Event()

    def read_loop() -> None:
        """Snapshots: a monotonic file count, and postings that always match their documents."""
        try:
            with Index.open(db, readonly=True) as index, closing(raw(index)) as conn:
                while not stop.is_set():
                    conn.execute("BEGIN")
                    files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
                    bad = conn.execute("""SELECT count(*) FROM documents d LEFT JOIN
                        (SELECT doc_id, count(*) AS c FROM postings GROUP BY doc_id) p ON p.doc_id = d.id
                        WHERE coalesce(p.c, 0) != d.n_fps""").fetchone()[0]
                    orphans = conn.execute("""SELECT count(*) FROM files f WHERE f.doc_id IS NOT NULL AND
                        NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = f.doc_id)""").fetchone()[0]
                    conn.execute("COMMIT")
                    assert bad == 0 and orphans == 0, (bad, orphans)
                    assert not counts or files >= counts[-1]
                    counts.append(files)
                    time.sleep(0.01)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            reader_errors.append(exc)

    reader = threading.Thread(target=read_loop)
    reader.start()
    checks: list[subprocess.CompletedProcess[str]] = []
    refused: subprocess.CompletedProcess[str] | None = None
    refused_seconds = 0.0
    try:
        deadline = time.monotonic() + 60
        while writer.poll() is None and (not counts or counts[-1] <= 1) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert writer.poll() is None, "the scan ended before the readers could overlap it"
        start = time.monotonic()
        refused = run_cli("scan", "tree", "--index", str(db), "--json", cwd=tmp_path)
        refused_seconds = time.monotonic() - start
        while writer.poll() is None and len(checks) < 4:
            checks.append(run_cli("check", "query.txt", "--index", str(db), "--json", cwd=tmp_path))
    finally:
        out, err = writer.communicate(timeout=300)
        stop.set()
        reader.join()

    assert writer.returncode == 0, err
    assert not reader_errors, reader_errors
    assert len(set(counts)) >= 3, "the reader never saw the scan's commits"
    assert counts[-1] == n + 1

    assert refused is not None and refused.returncode == 3
    assert f"being written by another scan (pid {writer.pid})" in refused.stderr
    assert refused_seconds < 10  # refused at once, not after a busy wait
    assert json.loads(refused.stdout) == {"error": refused.stderr.strip().removeprefix("scanner: error: "),
                                          "exit_code": 3}  # --json: the error as the one document, no scan output

    assert checks, "no check ran during the scan"
    for proc in checks:
        assert proc.returncode in (0, 1), proc.stderr
        assert "locked" not in proc.stderr.lower()
        matches = json.loads(proc.stdout)["results"][0]["matches"]
        assert matches[0]["path"] == "anchor/anchor.txt" and matches[0]["resemblance"] == pytest.approx(1.0)

    assert json.loads(out)["files_seen"] == n + 1
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*), count(DISTINCT path) FROM files").fetchone() == (n + 1, n + 1)
    conn.close()
