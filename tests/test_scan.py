"""The scan service and the scan / clusters / info commands, on real files.

A small evidence tree is built in tmp_path from generated English-like texts
(tests/corpus.py), generated web pages, real PDFs (a pdfTeX one and a
password-protected LibreOffice one, tests/fixtures/pdf) plus planted findings:
a near-duplicate, a byte-identical copy, a lifted passage, the same text as
TXT, HTML and PDF, junk and too-short files.
"""

from __future__ import annotations

import io
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

import pytest
from clirun import cli_env, run_cli
from corpus import build_corpus_tree, documents, html_page
from rawsql import raw

import scanner.services.scan.pool as scan_pool
import scanner.services.scan.resketch as scan_resketch
from scanner.core.config import Params
from scanner.core.errors import IndexLockedError
from scanner.core.model import Extracted
from scanner.index import LATEST_VERSION, Index
from scanner.services.findings import find_similar
from scanner.services.scan import ScanResult, run_scan
from scanner.sources.plugins import Extractor, hookimpl, make_plugin_manager

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pdf"


def _sources(count: int, low: int = 4_000, high: int = 12_000) -> list[str]:
    """`count` unrelated English-like documents of `low` to `high` characters."""
    return documents(count, seed=1, low=low, high=high)


def _perturb(text: str, every: int, seed: int) -> str:
    rng = random.Random(seed)
    words = text.split(" ")
    for i in range(0, len(words), every):
        words[i] = rng.choice(["zebra", "quantum", "marmalade", "obsidian"])
    return " ".join(words)


def build_tree(root: Path) -> dict[str, Any]:
    """The evidence tree; returns the planted facts the findings must show."""
    src = _sources(8)
    texts = root / "texts"
    texts.mkdir(parents=True)
    for i, text in enumerate(src):
        (texts / f"src{i}.txt").write_text(text, encoding="utf-8")
    (texts / "near0.txt").write_text(_perturb(src[0], 60, 1), encoding="utf-8")
    shutil.copyfile(texts / "src1.txt", texts / "copy-of-src1.txt")
    passage = " ".join(src[4].split()[50:450])
    (texts / "excerpt.txt").write_text("Notes for my essay, due Friday.\n\n" + passage + "\n\nThe end.\n",
                                       encoding="utf-8")
    body = "".join(f"<p>{p}</p>\n" for p in src[5].split("\n") if p.strip())
    html = root / "web"
    html.mkdir()
    (html / "src5.html").write_text(
        "<!DOCTYPE html><html><head><title>Essay</title><style>p{margin:0}</style>"
        "<script>var tracking = 'x';</script></head><body><nav><a href='/'>Home</a></nav>"
        f"<article>{body}</article></body></html>", encoding="utf-8")
    sys.path.insert(0, str(Path(__file__).parent))
    from pdfgen import write_text_pdf

    pdf = root / "pdf"
    pdf.mkdir()
    write_text_pdf(pdf / "src5.pdf", src[5])
    shutil.copyfile(FIXTURES / "pdflatex-4-pages.pdf", pdf / "latex-4-pages.pdf")
    shutil.copyfile(FIXTURES / "libreoffice-writer-password.pdf", pdf / "password.pdf")
    for i, text in enumerate(documents(2, seed=2, low=3_000, high=6_000)):
        (html / f"page{i}.html").write_text(html_page(f"Page {i}", text, seed=i), encoding="utf-8")
    junk = root / "junk"
    junk.mkdir()
    (junk / "random.bin").write_bytes(random.Random(5).randbytes(20_000))
    (junk / "empty.txt").write_bytes(b"")
    (junk / "short.txt").write_text("Hello there, world.\n", encoding="utf-8")
    return {"src": src, "n_files": sum(1 for p in root.rglob("*") if p.is_file())}


def _clusters_by_path(document: dict[str, Any]) -> dict[str, set[str]]:
    out = {}
    for cluster in document["clusters"]:
        paths = {m["path"] for m in cluster["members"]}
        for path in paths:
            out[path] = paths
    return out


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One CLI scan of the evidence tree, shared by the read-only checks below."""
    work = tmp_path_factory.mktemp("scan")
    facts = build_tree(work / "evidence")
    proc = run_cli("scan", "evidence", "--index", "idx.db", "--json", "--jobs", "2", cwd=work)
    assert proc.returncode == 0, proc.stderr
    return {"work": work, "facts": facts, "json": json.loads(proc.stdout), "stderr": proc.stderr,
            "raw": proc.stdout}


class TestFirstScan:
    """`scanner scan --json` on the evidence tree shows every kind of finding."""

    def test_contract_fields(self, scanned: dict[str, Any]) -> None:
        doc = scanned["json"]
        for key in ("files_seen", "files_indexed", "files_unchanged", "errors", "skipped", "clusters",
                    "containments"):
            assert key in doc
        assert list(doc)[:7] == ["files_seen", "files_indexed", "files_unchanged", "errors", "skipped",
                                 "clusters", "containments"]
        assert doc["files_seen"] == scanned["facts"]["n_files"]
        assert doc["files_unchanged"] == 0
        assert all(set(e) == {"path", "error"} for e in doc["errors"])
        assert all(set(s) == {"path", "reason"} for s in doc["skipped"])
        for cluster in doc["clusters"]:
            assert {"id", "members"} <= set(cluster)
            assert all(set(m) == {"path", "sha256"} and len(m["sha256"]) == 64 for m in cluster["members"])
        assert all(set(c) == {"contained", "container", "containment", "containment_error", "resemblance",
                              "resemblance_error"} for c in doc["containments"])
        assert all(0 <= c["containment_error"] <= 0.2 for c in doc["containments"])
        # the resemblance beside each containment is an estimate too, with its 95 % error (0: exact)
        assert all(0 <= c["resemblance"] <= 1 and 0 <= c["resemblance_error"] <= 0.2 for c in doc["containments"])
        assert any(c["resemblance_error"] > 0 for c in doc["containments"])
        assert scanned["stderr"] == ""  # no progress bar when stderr is not a terminal

    def test_json_has_a_field_a_line_and_a_list_item_a_line(self, scanned: dict[str, Any]) -> None:
        """The layout the json module's C encoder writes (with `indent` it falls back to Python, 4x slower)."""
        lines = scanned["raw"].splitlines()
        assert lines[0] == "{" and lines[-1] == "}"
        assert lines[1] == f'  "files_seen": {scanned["json"]["files_seen"]},'
        clusters = scanned["json"]["clusters"]
        first = lines.index('  "clusters": [')
        assert [json.loads(line.rstrip(",")) for line in lines[first + 1 : first + 1 + len(clusters)]] == clusters
        assert lines[first + 1 + len(clusters)] == "  ],"

    def test_identical_copy(self, scanned: dict[str, Any]) -> None:
        clusters = _clusters_by_path(scanned["json"])
        assert clusters["evidence/texts/src1.txt"] == {"evidence/texts/src1.txt", "evidence/texts/copy-of-src1.txt"}
        kinds = {c["kind"] for c in scanned["json"]["clusters"]
                 if {m["path"] for m in c["members"]} == clusters["evidence/texts/src1.txt"]}
        assert kinds == {"identical"}

    def test_near_duplicate(self, scanned: dict[str, Any]) -> None:
        clusters = _clusters_by_path(scanned["json"])
        assert clusters["evidence/texts/src0.txt"] == {"evidence/texts/src0.txt", "evidence/texts/near0.txt"}

    def test_same_text_as_txt_html_pdf(self, scanned: dict[str, Any]) -> None:
        clusters = _clusters_by_path(scanned["json"])
        assert clusters["evidence/texts/src5.txt"] == {
            "evidence/texts/src5.txt", "evidence/web/src5.html", "evidence/pdf/src5.pdf"}

    def test_lifted_passage_is_a_containment(self, scanned: dict[str, Any]) -> None:
        found = {(c["contained"], c["container"]): c["containment"] for c in scanned["json"]["containments"]}
        assert found.get(("evidence/texts/excerpt.txt", "evidence/texts/src4.txt"), 0) >= 0.8
        unrelated = {f"evidence/texts/src{i}.txt" for i in (2, 3, 6, 7)}
        assert not any(a in unrelated and b in unrelated for a, b in found)

    def test_unrelated_documents_stay_apart(self, scanned: dict[str, Any]) -> None:
        clusters = _clusters_by_path(scanned["json"])
        for i in (2, 3, 4, 6, 7):
            assert f"evidence/texts/src{i}.txt" not in clusters

    def test_bad_files_are_reported(self, scanned: dict[str, Any]) -> None:
        doc = scanned["json"]
        errors = {e["path"]: e["error"] for e in doc["errors"]}
        skipped = {s["path"]: s["reason"] for s in doc["skipped"]}
        assert errors["evidence/pdf/password.pdf"].startswith("encrypted")
        assert "evidence/junk/random.bin" in skipped
        assert "evidence/junk/empty.txt" in skipped or "evidence/junk/empty.txt" in errors
        assert doc["too_short"] == ["evidence/junk/short.txt"]
        assert "evidence/pdf/latex-4-pages.pdf" not in errors

    def test_clusters_command_reads_the_index(self, scanned: dict[str, Any]) -> None:
        work = scanned["work"]
        proc = run_cli("clusters", "--index", "idx.db", "--json", cwd=work)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["clusters"] == scanned["json"]["clusters"]
        assert doc["containments"] == scanned["json"]["containments"]
        loose = json.loads(run_cli("clusters", "--index", "idx.db", "--json", "--threshold", "1.0", cwd=work).stdout)
        assert len(loose["clusters"]) < len(doc["clusters"])
        text = run_cli("clusters", "--index", "idx.db", cwd=work)
        assert text.returncode == 0 and "copy-of-src1.txt" in text.stdout

    def test_info_command(self, scanned: dict[str, Any]) -> None:
        proc = run_cli("info", "--index", "idx.db", "--json", cwd=scanned["work"])
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["stats"]["schema_version"] == LATEST_VERSION
        assert doc["stats"]["files"] == scanned["facts"]["n_files"] - 0
        assert doc["params"]["shingle_size"] == Params().shingle_size
        assert any(p["name"] == "pdfminer" for p in doc["plugins"])
        text = run_cli("info", "--index", "idx.db", cwd=scanned["work"])
        assert text.returncode == 0 and "schema version" in text.stdout
        assert doc["stats"]["postings_filter"]["state"] == "ok" and "postings filter" in text.stdout
        semantic = doc["stats"]["semantic"]  # the scan's semantic pass (on by default): what it stored
        assert semantic["model"].startswith("wordllama") and 0 < semantic["sentence_documents"] <= semantic["documents"]
        assert semantic["sentence_bytes"] >= 260 * semantic["sentence_documents"]  # a sentence at least a document
        assert "semantic pass" in text.stdout and "sentence vectors" in text.stdout

    def test_index_contents(self, scanned: dict[str, Any]) -> None:
        with Index.open(scanned["work"] / "idx.db") as index:
            assert index.integrity_check() == "ok"
            files = {f.path: f for f in index.files()}
            original, copy = files["evidence/texts/src1.txt"], files["evidence/texts/copy-of-src1.txt"]
            assert original.doc_id == copy.doc_id and original.sha256 == copy.sha256
            info = index.document(original.doc_id)
            assert set(info.paths) == {"evidence/texts/src1.txt", "evidence/texts/copy-of-src1.txt"}
            assert index.text(original.doc_id) == scanned["facts"]["src"][1]
            assert files["evidence/junk/short.txt"].status == "too_short"
            shas = [r[0] for r in raw(index).execute("SELECT sha256 FROM documents")]
            assert len(shas) == len(set(shas))


def _scan(root: Path, db: Path, **kw: Any) -> ScanResult:
    params = kw.pop("params", Params())
    with Index.open(db, readonly=False, params=params) as index:
        return run_scan([str(root)], index, kw.pop("pm", None), params, **{"jobs": 2, **kw})


def _index_dump(db: Path) -> tuple[list[Any], ...]:
    """Documents, sketches and postings by SHA-256 (ids aside), and the stored sketch key."""
    conn = sqlite3.connect(db)
    try:
        return (
            sorted(conn.execute("""SELECT sha256, status, n_tokens, n_shingles, n_fps, lexical_digest, shingle_digest
                                   FROM documents""")),
            sorted(conn.execute("SELECT d.sha256, s.blob FROM sketches s JOIN documents d ON d.id = s.doc_id")),
            sorted(conn.execute("SELECT p.fp, d.sha256 FROM postings p JOIN documents d ON d.id = p.doc_id")),
            list(conn.execute("SELECT value FROM meta WHERE key = 'sketch_key'")),
        )
    finally:
        conn.close()


class TestAlgorithmUpgrade:
    """An index made by an earlier algorithm version (other token hashes) is refused by readers and
    re-sketched by the next scan from its stored texts: it then equals a fresh index, and nothing is lost."""

    def test_a_scan_resketches_stored_texts_and_rereads_the_rest(self, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
        import numpy as np

        import scanner.core.config
        import scanner.engine.canon
        from scanner.core.errors import ParameterMismatchError
        from scanner.services.scan import Resketch

        tree = tmp_path / "tree"
        tree.mkdir()
        texts = _sources(3)
        for name, text in (("a.txt", texts[0]), ("copy-of-a.txt", texts[0]), ("b.txt", texts[1]),
                           ("c.txt", texts[2] + texts[1][:3000])):
            (tree / name).write_text(text, encoding="utf-8")

        def scan(db: Path, store_text: bool = True) -> ScanResult:
            with Index.open(db, readonly=False, accept_stale=True) as index:
                return run_scan([str(tree)], index, make_plugin_manager(), index.params, jobs=0,
                                store_text=store_text)

        with monkeypatch.context() as earlier:  # what the version before this one would have stored
            earlier.setattr(scanner.core.config, "ALGORITHM_VERSION", scanner.core.config.ALGORITHM_VERSION - 1)
            earlier.setattr(scanner.engine.canon, "_NARROW_DOMAIN", np.uint64(0x1234567))
            scan(tmp_path / "old.db")
            scan(tmp_path / "old-no-text.db", store_text=False)
        scan(tmp_path / "fresh.db")
        fresh = _index_dump(tmp_path / "fresh.db")
        assert _index_dump(tmp_path / "old.db")[1] != fresh[1]  # other sketches indeed
        with pytest.raises(ParameterMismatchError, match=r"earlier scanner algorithm.*run `scanner scan DIR --index"):
            Index.open(tmp_path / "old.db")
        proc = run_cli("check", str(tree / "b.txt"), "--index", str(tmp_path / "old.db"))
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        info = run_cli("info", "--index", str(tmp_path / "old.db"), "--json")
        assert info.returncode == 0 and json.loads(info.stdout)["stale_sketches"] is True

        # a failure half-way (here, the sketcher) leaves the index as it was: one transaction
        before = _index_dump(tmp_path / "old.db")

        def broken(*_: Any) -> None:
            raise RuntimeError("sketcher failed")

        with monkeypatch.context() as failing:
            failing.setattr(scan_resketch, "sketch_and_winnow", broken)
            with pytest.raises(RuntimeError, match="sketcher failed"):
                scan(tmp_path / "old.db")
        assert _index_dump(tmp_path / "old.db") == before

        upgraded = scan(tmp_path / "old.db")
        assert upgraded.resketch == Resketch(documents=3, forgotten=0)
        assert (upgraded.files_indexed, upgraded.files_unchanged) == (0, 4)
        assert _index_dump(tmp_path / "old.db") == fresh
        again = scan(tmp_path / "old.db")
        assert again.resketch is None and again.files_unchanged == 4
        rescanned = json.loads(run_cli("info", "--index", str(tmp_path / "old.db"), "--json").stdout)
        assert rescanned["stale_sketches"] is False

        # without stored texts the documents are read again from their files, in the same scan
        reread = scan(tmp_path / "old-no-text.db", store_text=False)
        assert reread.resketch == Resketch(documents=0, forgotten=3)
        assert (reread.files_indexed, reread.files_unchanged) == (4, 0)
        assert _index_dump(tmp_path / "old-no-text.db") == fresh
        with Index.open(tmp_path / "old-no-text.db") as index:
            findings = find_similar(index, index.params)
        assert [sorted(m.path.rsplit("/", 1)[1] for m in c.members) for c in findings.clusters
                if c.kind == "identical"] == [["a.txt", "copy-of-a.txt"]]


class TestIncremental:
    """Rescans skip unchanged files without hashing, re-index changed ones, mark vanished ones."""

    def test_one_file_under_several_spellings_is_one_row(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The same folder given as "tree", "./tree/" or its absolute path, one after the other or
        together: each file stays one row (it was indexed again under each spelling and clustered as an
        identical copy of itself); a file deleted is seen as vanished through any spelling."""
        monkeypatch.chdir(tmp_path)
        tree = tmp_path / "tree"
        tree.mkdir()
        texts = _sources(2)
        for name, text in (("a.txt", texts[0]), ("copy-of-a.txt", texts[0]), ("b.txt", texts[1])):
            (tree / name).write_text(text, encoding="utf-8")
        db = tmp_path / "i.db"

        def scan(*roots: str) -> ScanResult:
            with Index.open(db, readonly=False, params=Params()) as index:
                return run_scan(list(roots), index, make_plugin_manager(), Params(), jobs=0)

        assert scan("tree").files_indexed == 3
        for roots in ((str(tree),), ("./tree/",), ("tree", str(tree), "./tree")):
            result = scan(*roots)
            assert (result.files_seen, result.files_indexed, result.files_unchanged) == (3, 0, 3), roots
        with Index.open(db) as index:
            assert sorted(row.path for row in index.files()) == ["tree/a.txt", "tree/b.txt", "tree/copy-of-a.txt"]
            findings = find_similar(index, index.params)
        assert [sorted(m.path for m in c.members) for c in findings.clusters if c.kind == "identical"] == [
            ["tree/a.txt", "tree/copy-of-a.txt"]]
        (tree / "b.txt").unlink()
        assert scan(str(tree)).files_vanished == 1
        # rows written before migration 5 have no real path: a rescan under their own name learns it
        raw(db).execute("UPDATE files SET real_path = NULL")
        assert scan("tree").files_unchanged == 2
        with Index.open(db) as index:
            assert raw(index).execute("SELECT count(*) FROM files WHERE real_path IS NULL AND vanished = 0"
                                      ).fetchone()[0] == 0
        assert (scan(str(tree)).files_indexed, scan("./tree").files_indexed) == (0, 0)

    def test_rescan_changes_and_vanished(self, tmp_path: Path) -> None:
        root = tmp_path / "tree"
        root.mkdir()
        src = _sources(40, 2_000, 40_000)
        for i, text in enumerate(src):
            (root / f"d{i:02}.txt").write_text(text, encoding="utf-8")
        db = tmp_path / "i.db"
        first = _scan(root, db)
        assert (first.files_seen, first.files_indexed, first.files_unchanged) == (40, 40, 0)
        with Index.open(db) as index:  # a scan leaves its postings sealed, under the segments' filter
            assert index.buffered_postings() == 0 and [rows for _, _, rows in index.postings_segments()] == [
                index.stats().postings]
            assert index.filters.summary()["postings"] == index.stats().postings
        again = _scan(root, db)
        assert (again.files_seen, again.files_indexed, again.files_unchanged) == (40, 0, 40)
        assert again.bytes_read == 0  # nothing re-hashed
        assert again.seconds < first.seconds

        (root / "d00.txt").write_text(src[0] + "\nA new closing line.\n", encoding="utf-8")
        (root / "d01.txt").unlink()
        shutil.copyfile(root / "d02.txt", root / "d02-copy.txt")
        third = _scan(root, db)
        assert third.files_indexed == 2 and third.files_linked == 1 and third.files_vanished == 1
        with Index.open(db) as index:
            assert index.buffered_postings() == 0 and len(index.postings_segments()) == 2  # d00's new text
            files = {f.path: f for f in index.files()}
            assert files[str(root / "d01.txt")].vanished
            assert files[str(root / "d02-copy.txt")].doc_id == files[str(root / "d02.txt")].doc_id
            findings = find_similar(index, index.params)
        members = [{m.path for m in c.members} for c in findings.clusters]
        assert {str(root / "d02.txt"), str(root / "d02-copy.txt")} in members
        assert not any(str(root / "d01.txt") in m for m in members)

    def test_inline_mode_gives_the_same_index(self, tmp_path: Path) -> None:
        root = tmp_path / "tree"
        root.mkdir()
        for i, text in enumerate(_sources(5)):
            (root / f"d{i}.txt").write_text(text, encoding="utf-8")
        shutil.copyfile(root / "d0.txt", root / "e0.txt")
        a = _scan(root, tmp_path / "a.db", jobs=0, pm=make_plugin_manager())
        b = _scan(root, tmp_path / "b.db", jobs=2)
        assert (a.files_indexed, a.files_linked) == (b.files_indexed, b.files_linked) == (6, 1)
        dump = []
        for name in ("a.db", "b.db"):
            conn = sqlite3.connect(tmp_path / name)
            dump.append(conn.execute("SELECT sha256, n_tokens, lexical_digest FROM documents ORDER BY sha256")
                        .fetchall())
            conn.close()
        assert dump[0] == dump[1]


# --------------------------------------------------------------------------
# hostile files: a plugin that hangs, bloats or dies on marked input


def _hostile_extract(data: bytes, mime: str, limits: Any) -> Extracted:
    if data.startswith(b"HANG"):
        time.sleep(600)
    if data.startswith(b"BLOAT"):
        blocks = [bytearray(64 * 1024 * 1024) for _ in range(64)]  # 4 GiB
        del blocks
    if data.startswith(b"DIE"):
        os._exit(7)
    return Extracted(text=data.decode("utf-8", "replace"), extractor="hostile")


class _HostilePlugin:
    @hookimpl
    def scanner_extractors(self) -> list[Extractor]:
        return [Extractor("hostile", ("text/",), 10_000, _hostile_extract)]


def hostile_pm() -> Any:
    pm = make_plugin_manager(load_entry_points=False)
    pm.register(_HostilePlugin(), name="hostile")
    return pm


def _stalling_read(path: str, limits: Any = None) -> Any:
    if "stall" in path:  # a read that never returns (a dead network share, say)
        time.sleep(600)
    return _REAL_READ(path, limits)


_REAL_READ = scan_pool.read_or_reason


def stalling_hash_pm() -> Any:
    """Runs in each worker at start-up: hashing a file named *stall* hangs there."""
    scan_pool.read_or_reason = _stalling_read
    return make_plugin_manager(load_entry_points=False)


class TestBudgets:
    """A file over its time or memory budget is reported; the scan goes on."""

    def test_timeout_memory_and_dead_worker(self, tmp_path: Path) -> None:
        root = tmp_path / "tree"
        root.mkdir()
        texts = _sources(6)
        for i, text in enumerate(texts):
            (root / f"ok{i}.txt").write_text(text, encoding="utf-8")
        (root / "hang.txt").write_text("HANG " + texts[0], encoding="utf-8")
        (root / "bloat.txt").write_text("BLOAT " + texts[1], encoding="utf-8")
        (root / "die.txt").write_text("DIE " + texts[2], encoding="utf-8")
        start = time.monotonic()
        result = _scan(root, tmp_path / "i.db", pm_factory=hostile_pm, per_file_timeout=5.0,
                       per_file_memory=512 * 1024 * 1024)
        assert time.monotonic() - start < 40
        errors = {Path(e.path).name: e for e in result.errors}
        skipped = {Path(e.path).name: e for e in result.skipped}
        assert errors["hang.txt"].status == "timeout", result.errors
        assert "bloat.txt" in skipped, (result.errors, result.skipped)
        assert skipped["bloat.txt"].status == "too_large" and "memory" in skipped["bloat.txt"].reason
        assert errors["die.txt"].status == "error" and "exit code 7" in errors["die.txt"].reason
        assert result.files_indexed == 6
        with Index.open(tmp_path / "i.db") as index:
            assert {f.path.rsplit("/", 1)[1]: f.status for f in index.files()}["hang.txt"] == "timeout"

    def test_a_hash_that_hangs_is_blamed_on_its_own_file(self, tmp_path: Path) -> None:
        """The batch's hashes come in one message: when it never comes, no file of the batch is blamed yet;
        each is tried again alone, and only the file whose read hangs is reported."""
        root = tmp_path / "tree"
        root.mkdir()
        for i, text in enumerate(_sources(4)):
            (root / f"ok{i}.txt").write_text(text, encoding="utf-8")
        (root / "p-stall.txt").write_text(_sources(5)[4], encoding="utf-8")  # sorts among the ok files' batch
        start = time.monotonic()
        result = _scan(root, tmp_path / "i.db", pm_factory=stalling_hash_pm, per_file_timeout=2.0, jobs=1)
        assert time.monotonic() - start < 30
        assert [(Path(e.path).name, e.status) for e in result.errors] == [("p-stall.txt", "timeout")]
        assert result.files_indexed == 4

    def test_copies_of_a_file_that_kills_its_worker_mid_batch(self, tmp_path: Path) -> None:
        """One worker batch holds good files, copies of them, and three copies of a file that kills the
        process: each killer copy is an error, the batch's other files are handed out again and indexed,
        and every copy is settled (none left waiting for an extraction that never finished)."""
        root = tmp_path / "tree"
        root.mkdir()
        texts = _sources(5)
        for i, text in enumerate(texts):
            (root / f"a{i}.txt").write_text(text, encoding="utf-8")
            (root / f"b{i}.txt").write_text(text, encoding="utf-8")  # a copy, linked not extracted
        for name in ("die1.txt", "die2.txt", "die3.txt"):
            (root / name).write_text("DIE " + texts[0], encoding="utf-8")
        result = _scan(root, tmp_path / "i.db", pm_factory=hostile_pm, per_file_timeout=30.0, jobs=1)
        assert result.files_seen == 13
        errors = {Path(e.path).name: e.reason for e in result.errors}
        assert set(errors) == {"die1.txt", "die2.txt", "die3.txt"}, result.errors
        assert all("exit code 7" in reason for reason in errors.values())
        assert result.files_indexed == 10 and result.files_linked == 5
        with Index.open(tmp_path / "i.db") as index:
            files = {f.path.rsplit("/", 1)[1]: f for f in index.files()}
            assert len(files) == 13
            for i in range(5):
                assert files[f"a{i}.txt"].status == files[f"b{i}.txt"].status == "ok"
                assert files[f"a{i}.txt"].doc_id == files[f"b{i}.txt"].doc_id is not None


# --------------------------------------------------------------------------
# crash safety, locking, parameters


def _corpus_tree(root: Path, copies: int = 2) -> int:
    """`copies` variants of 540 generated documents (each variant a new document)."""
    return build_corpus_tree(root, copies)


class TestCrashSafety:
    """SIGKILL mid-scan leaves a consistent index; the next scan resumes."""

    def test_sigkill_then_resume(self, tmp_path: Path) -> None:
        n = _corpus_tree(tmp_path / "tree", copies=3)
        db = tmp_path / "i.db"
        proc = subprocess.Popen([sys.executable, "-m", "scanner", "scan", "tree", "--index", str(db),
                                 "--jobs", "1", "--json"], cwd=tmp_path, env=cli_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        committed = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            if db.exists():
                try:
                    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                    committed = conn.execute("SELECT count(*) FROM files").fetchone()[0]
                    conn.close()
                except sqlite3.OperationalError:
                    continue
                if committed:
                    break
        assert proc.poll() is None, "the scan ended before it could be killed"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        done = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        conn.close()
        assert 0 < done < n

        resumed = run_cli("scan", "tree", "--index", str(db), "--json", "--jobs", "2", cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        doc = json.loads(resumed.stdout)
        assert doc["files_seen"] == n
        assert doc["files_unchanged"] == done
        # the rest was indexed now (problem files are listed whether new or unchanged)
        assert n - done - len(doc["skipped"]) - len(doc["errors"]) <= doc["files_indexed"] <= n - done

        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*), count(DISTINCT path) FROM files").fetchone() == (n, n)
        assert conn.execute("SELECT count(*) - count(DISTINCT sha256) FROM documents").fetchone()[0] == 0
        orphans = conn.execute("""SELECT count(*) FROM documents d WHERE NOT EXISTS
                                  (SELECT 1 FROM sketches s WHERE s.doc_id = d.id)""").fetchone()[0]
        assert orphans == 0
        good = conn.execute("SELECT count(*) FROM files WHERE status = 'ok' AND doc_id IS NOT NULL").fetchone()[0]
        assert good == n  # every file is readable text
        conn.close()


class TestCli:
    """Locking and parameter errors reach the user as messages and exit codes."""

    def test_second_concurrent_scan_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "tree").mkdir()
        (tmp_path / "tree" / "a.txt").write_text(_sources(1)[0], encoding="utf-8")
        db = tmp_path / "i.db"
        with Index.open(db, readonly=False):
            proc = run_cli("scan", "tree", "--index", str(db), cwd=tmp_path)
            assert proc.returncode == 3
            assert f"being written by another scan (pid {os.getpid()})" in proc.stderr
            with pytest.raises(IndexLockedError):
                _scan(tmp_path / "tree", db)

    def test_parameter_mismatch_and_rebuild(self, tmp_path: Path) -> None:
        (tmp_path / "tree").mkdir()
        for i, text in enumerate(_sources(3)):
            (tmp_path / "tree" / f"{i}.txt").write_text(text, encoding="utf-8")
        assert run_cli("scan", "tree", "--index", "i.db", "--shingle-size", "4", "--json", cwd=tmp_path).returncode == 0
        again = run_cli("scan", "tree", "--index", "i.db", "--json", cwd=tmp_path)  # stored params are reused
        assert again.returncode == 0 and json.loads(again.stdout)["params"]["shingle_size"] == 4
        bad = run_cli("scan", "tree", "--index", "i.db", "--shingle-size", "6", cwd=tmp_path)
        assert bad.returncode == 2
        assert "shingle_size 4 vs 6" in bad.stderr and "--rebuild" in bad.stderr
        rebuilt = run_cli("scan", "tree", "--index", "i.db", "--shingle-size", "6", "--rebuild", "--json", cwd=tmp_path)
        assert rebuilt.returncode == 0, rebuilt.stderr
        doc = json.loads(rebuilt.stdout)
        assert doc["files_indexed"] == 3 and doc["params"]["shingle_size"] == 6

    def test_options(self, tmp_path: Path) -> None:
        tree = tmp_path / "tree"
        (tree / "keep").mkdir(parents=True)
        (tree / "drop").mkdir()
        texts = _sources(3)
        (tree / "keep" / "a.txt").write_text(texts[0], encoding="utf-8")
        (tree / "keep" / "big.txt").write_text(texts[1] * 20, encoding="utf-8")
        (tree / "drop" / "c.txt").write_text(texts[2], encoding="utf-8")
        proc = run_cli("scan", "tree", "--index", "i.db", "--json", "--exclude", "drop", "--max-size", "100KB",
                   "--no-text", "--quiet", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["files_indexed"] == 1
        assert [s["path"] for s in doc["skipped"]] == ["tree/keep/big.txt"]
        with Index.open(tmp_path / "i.db") as index:
            assert index.stats().documents_with_text == 0
        assert run_cli("scan", "tree", "--index", "i.db", "--max-size", "ten", cwd=tmp_path).returncode == 2
        assert run_cli("clusters", "--index", "missing.db", cwd=tmp_path).returncode == 3


def test_readable_output_shows_brackets_in_names_and_text_verbatim(tmp_path: Path) -> None:
    """Rich markup is never applied to what the tool prints: names such as "report [final].txt" once lost
    their brackets in the tables, and "[/b]" in a path or a passage stopped scan and check with a traceback."""
    tree = tmp_path / "tree"
    (tree / "notes[").mkdir(parents=True)
    text = _sources(1)[0]
    names = ("report [final].txt", "notes[/b] copy.txt")
    for name in names:
        (tree / name).write_text(text, encoding="utf-8")
    post = tree / "[red]post.txt"
    post.write_text("A forum post in BBCode: [b]bold[/b] and a stray [/i] tag. " + text[:3000], encoding="utf-8")
    scan = run_cli("scan", "tree", "--index", "i.db", cwd=tmp_path)
    assert scan.returncode == 0, scan.stderr
    clusters = run_cli("clusters", "--index", "i.db", cwd=tmp_path)
    assert clusters.returncode == 0, clusters.stderr
    for out in (scan.stdout, clusters.stdout):
        for name in names:
            assert f"tree/{name}" in out
    check = run_cli("check", "tree/[red]post.txt", "--index", "i.db", cwd=tmp_path)
    assert check.returncode == 1, check.stderr  # findings
    assert "[red]post.txt" in check.stdout and "[b]bold[/b]" in check.stdout
    assert "Traceback" not in check.stderr + scan.stderr + clusters.stderr


def test_no_worker_starts_when_nothing_needs_extracting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty folder, and a rescan of unchanged files, start no extraction process (0.2-0.3 s a scan)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for k, text in enumerate(documents(3, seed=8)):
        (tree / f"d{k}.txt").write_text(text, encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    db = tmp_path / "i.db"
    first = _scan(tree, db)
    assert first.files_indexed == 3

    def no_worker(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(scan_pool, "PoolWorker", no_worker)
    again = _scan(tree, db)
    assert again.files_unchanged == 3 and again.files_indexed == 0 and not again.errors
    assert _scan(empty, tmp_path / "e.db").files_seen == 0
    (tree / "d3.txt").write_text(documents(1, seed=9)[0], encoding="utf-8")
    with pytest.raises(AssertionError, match="a worker process was started"):  # a new file needs one
        _scan(tree, db)


def test_a_terminal_sees_the_passage_step_progress(tmp_path: Path) -> None:
    """On a terminal, the passage step shows its tasks done of how many (a large index's step runs for
    tens of minutes); piped, stderr stays quiet."""
    import pty

    from clirun import REPO

    sample = REPO / "sample_corpus"
    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "scanner", "scan", str(sample), "--index",
                               str(tmp_path / "tty.db"), "--json"], cwd=REPO, env=cli_env(), stdout=subprocess.PIPE,
                              stderr=slave, timeout=300)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    assert done.returncode == 0 and json.loads(done.stdout)["passage_step"]["pairs"] > 0
    shown = seen.decode("utf-8", "replace")
    assert "passages" in shown and "tasks" in shown
    piped = run_cli("scan", str(sample), "--index", str(tmp_path / "piped.db"), "--json")
    assert piped.returncode == 0 and "tasks" not in piped.stderr


def test_the_scan_table_shows_fifty_clusters_and_containments_and_counts_the_rest(tmp_path: Path) -> None:
    """A scan's table shows the first 50 clusters and containment pairs and says how many more there are;
    `scanner clusters` lists them all, as `--json` does (a scan of API documentation found 3,460 containment
    pairs, whose table took Rich seconds to lay out). A rescan shows the same, from the stored head."""
    from corpus import prose

    tree = tmp_path / "tree"
    tree.mkdir()
    for k in range(55):  # 55 clusters of two identical files
        for copy in "ab":
            (tree / f"dup-{k:02d}-{copy}.txt").write_text(prose(k, 60), encoding="utf-8")
    for k in range(52):  # 52 texts, each contained in a text three times as long
        (tree / f"part-{k:02d}.txt").write_text(prose(1000 + k, 80), encoding="utf-8")
        (tree / f"whole-{k:02d}.txt").write_text(prose(1000 + k, 80) + "\n\n" + prose(2000 + k, 250), encoding="utf-8")
    db = tmp_path / "i.db"
    scan = run_cli("scan", str(tree), "--index", str(db), "--no-semantic", cwd=tmp_path, timeout=300)
    assert scan.returncode == 0, scan.stderr
    listed = json.loads(run_cli("clusters", "--index", str(db), "--json", cwd=tmp_path).stdout)
    assert len(listed["clusters"]) == 55 and len(listed["containments"]) == 52
    shown = scan.stdout
    assert "50 of 55" in shown and "... and 5 more clusters: `scanner clusters` lists them all" in shown
    assert "(50 of 52)" in shown and "... and 2 more containment pairs" in shown
    clusters = shown[shown.index("Clusters (") : shown.index("more clusters")]
    containments = shown[shown.index("Containment (") : shown.index("more containment pairs")]
    assert sum(f"dup-{k:02d}-a.txt" in clusters for k in range(55)) == 50
    assert sum(f"part-{k:02d}.txt " in containments for k in range(52)) == 50
    every = run_cli("clusters", "--index", str(db), cwd=tmp_path).stdout
    assert "... and" not in every and all(f"dup-{k:02d}-b.txt" in every for k in range(55))
    assert all(f"part-{k:02d}.txt " in every for k in range(52))
    # a rescan's table is read from the findings' stored head (their first rows and the lists' lengths): the same
    rescan = run_cli("scan", str(tree), "--index", str(db), "--no-semantic", cwd=tmp_path, timeout=300)
    assert rescan.returncode == 0 and "unchanged (skipped)" in rescan.stdout
    assert rescan.stdout[rescan.stdout.index("Clusters ("):] == shown[shown.index("Clusters ("):]
    # and a head cut shorter than the lists (a large index's) prints as the whole findings do
    from rich.console import Console

    from scanner.faces.commands._tables import print_findings
    from scanner.services.findings import stored_or_found

    with Index.open(db) as index:
        whole = stored_or_found(index, index.params)
    printed = []
    for findings in (whole, whole.head(30)):
        console = Console(record=True, width=4096, file=io.StringIO())
        print_findings(console, findings, limit=20)
        printed.append(console.export_text())
    assert whole.head(30).is_head and "20 of 55" in printed[0] and printed[0] == printed[1]
