"""The SQLite index on real files in tmp_path: schema, parameters, locking, read API."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from carriers import CARRIERS
from clirun import run_cli
from rawsql import raw

from scanner.core.config import Params
from scanner.core.errors import IndexLockedError, IndexStoreError, ParameterMismatchError
from scanner.core.model import FileRecord
from scanner.engine.semantic import QuantizedVectors
from scanner.engine.sketch import build_sketch, compare_sketches, shingle_text, winnow
from scanner.index import LATEST_VERSION, MIGRATIONS, Index, NewDocument, compress_text
from scanner.index.batches import IN_BATCH
from scanner.index.store import COMMON_MIN_DOCS, to_signed, to_unsigned
from scanner.index.vectors import VECTOR_FORMAT
from scanner.sources.extract.readers import READER_CHANGES

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

REPO = Path(__file__).resolve().parents[1]
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
DEFAULT_PARAMS = Params()


def _text(seed: int, n: int = 200) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] + str(j) for i, j in zip(rng.integers(0, len(WORDS), n), rng.integers(0, 30, n)))


def _doc(text: str, sha: str, params: Params = DEFAULT_PARAMS, store_text: bool = True) -> NewDocument:
    shingled = shingle_text(text, params)
    sketch = build_sketch(text, params, shingled)
    fps, _ = winnow(shingled.fingerprints, params.winnow_window)
    return NewDocument(sha, len(text), "text/plain", "ok", "text", sketch.to_bytes(), len(shingled.tokens),
                       sketch.n_shingles, len(text), sketch.lexical_digest, sketch.shingle_digest, np.unique(fps),
                       compress_text(text) if store_text else None, (0,))


def _add(index: Index, path: str, text: str, sha: str, *, store_text: bool = True) -> int:
    with index.transaction():
        doc_id = index.add_document(_doc(text, sha, index.params, store_text))
        index.put_file(FileRecord(path, len(text), 1, sha, "text/plain"), readers=1, status="ok", extractor="text",
                       doc_id=doc_id, run_id=None)
    return doc_id


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "scanner.db"


class TestSchema:
    """Numbered migrations, stored version, and refusal of newer indexes."""

    def test_new_index_is_migrated_in_wal(self, db: Path) -> None:
        with Index.open(db, readonly=False) as index:
            assert index.schema_version == LATEST_VERSION
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        assert rows == [(m.version, m.name) for m in MIGRATIONS]
        assert rows[:2] == [(1, "initial"), (2, "watch_state")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        assert {"files", "documents", "sketches", "postings", "runs", "alerts", "meta",
                "equivalence_groups"} <= tables
        conn.close()

    def test_reopen_applies_nothing_twice(self, db: Path) -> None:
        Index.open(db, readonly=False).close()
        Index.open(db, readonly=False).close()
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)

    def test_a_scan_that_upgrades_an_index_past_places_says_its_files_keep_their_old_text(self, tmp_path: Path
                                                                                         ) -> None:
        """Migration 13: documents indexed before keep the text their readers gave then, which a rescan does
        not read again (unchanged files); the scan that upgrades the index says so once, with the way out."""
        folder = tmp_path / "docs"
        folder.mkdir()
        (folder / "a.txt").write_text(_text(3), encoding="utf-8")
        db = tmp_path / "i.db"
        assert run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--quiet").returncode == 0
        conn = sqlite3.connect(db, isolation_level=None)  # back to schema 12, as a build of session 28 left it
        for statement in ("DROP TABLE base_texts", "ALTER TABLE documents DROP COLUMN places",
                          "DROP INDEX files_readers",
                          "ALTER TABLE files DROP COLUMN readers", "DELETE FROM schema_migrations WHERE version >= 13",
                          "PRAGMA user_version = 12"):
            conn.execute(statement)
        conn.close()
        upgrading = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0")
        assert upgrading.returncode == 0, upgrading.stderr
        assert "upgraded from schema 12" in upgrading.stderr and "scanner scan --rebuild" in upgrading.stderr
        again = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0")
        assert again.returncode == 0 and "upgraded" not in again.stderr
        with Index.open(tmp_path / "new.db", readonly=False) as fresh:  # a new index has nothing to read again
            assert fresh.upgrade_note() == ""

    def test_a_scan_says_how_many_files_older_readers_read(self, tmp_path: Path) -> None:
        """Migration 14: each file row keeps the readers' version that read it. A rescan reads only changed
        files, so those read before the readers learnt to find more (pictures, since version 2) are counted,
        a copy of one of them too (it takes its text as first read), until `--rebuild` reads them again."""
        folder = tmp_path / "docs"
        folder.mkdir()
        (folder / "report.docx").write_bytes(CARRIERS["docx"](_text(4), 0).data)
        (folder / "a.txt").write_text(_text(3), encoding="utf-8")
        db = tmp_path / "i.db"

        def scan(*options: str) -> tuple[list[dict[str, object]], str]:
            proc = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--json", *options)
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)["read_by_older_readers"], proc.stderr

        assert scan() == ([], "")
        conn = sqlite3.connect(db, isolation_level=None)  # as a build of readers version 1 would have left them
        conn.execute("UPDATE files SET readers = 1")
        conn.close()
        (folder / "copy.docx").write_bytes((folder / "report.docx").read_bytes())
        older, said = scan()
        word = [c for c in READER_CHANGES if DOCX_MIME in c.mimes]  # pictures (2), document properties (5)
        assert [c.version for c in word] == [2, 5]
        text = [c for c in READER_CHANGES if "text/plain" in c.mimes]  # Latin-1 lines, .emlx, WARC, code pages
        assert [c.version for c in text] == [10, 13, 14, 16]
        assert older == sorted([{"readers_version": c.version, "finds": c.what, "files": 2} for c in word]
                               + [{"readers_version": c.version, "finds": c.what, "files": 1} for c in text],
                               key=lambda row: row["readers_version"])
        for change in word:
            assert f"2 files of this index were read before the readers learnt to find {change.what}" in said
        assert "scanner scan --rebuild" in said
        assert scan("--rebuild") == ([], "")

    def test_a_rescan_reads_again_what_older_readers_found_no_text_in(self, tmp_path: Path) -> None:
        """An XPS document was `unsupported` ("binary content") until readers' version 4 and, unchanged on disk,
        stayed so at every rescan, alone or zipped: its text was never matched, and no note counted it (only
        files with a document were). A file older readers found no text in, or an archive holding such a
        member, is read again once by newer ones; a file with text keeps its document (counted, as above),
        and nothing is read again twice."""
        folder = tmp_path / "docs"
        folder.mkdir()
        printed, zipped = CARRIERS["xps"](_text(4), 0), CARRIERS["xps"](_text(5), 1)
        (folder / printed.filename).write_bytes(printed.data)
        with zipfile.ZipFile(folder / "bundle.zip", "w") as bundle:
            bundle.writestr(zipped.filename, zipped.data)
            bundle.writestr("notes.txt", _text(6))
        (folder / "a.txt").write_text(_text(3), encoding="utf-8")
        db = tmp_path / "i.db"

        def scan() -> dict:
            proc = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--json")
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)

        assert scan()["files_indexed"] == 4  # the archive's two members are files too, the archive has no text
        xps_rows = "path LIKE '%.xps'"
        with Index.open(db, readonly=False) as index:  # as readers version 3 left them: no document, no text
            rows = raw(db).execute(f"SELECT doc_id, mtime_ns, path FROM files WHERE {xps_rows}").fetchall()
            index.forget_documents([doc_id for doc_id, _, _ in rows], "test")
        for _, mtime, path in rows:
            raw(db).execute("UPDATE files SET status = 'unsupported', reason = 'binary content', readers = 3, "
                            "mtime_ns = ? WHERE path = ?", (mtime, path))
        again = scan()
        assert again["files_reread"] == 2 and again["files_unchanged"] == 1  # the XPS file, the archive
        assert not again["skipped"] and again["read_by_older_readers"] == []
        read = raw(db).execute(f"SELECT status, doc_id FROM files WHERE {xps_rows} ORDER BY path").fetchall()
        assert [status for status, _ in read] == ["ok", "ok"]
        with Index.open(db) as index:
            texts = [index.text(doc_id) or "" for _, doc_id in read]
        assert _text(5).split()[0] in texts[0] and _text(4).split()[0] in texts[1]  # bundle.zip!/... sorts first
        third = scan()
        assert third["files_reread"] == 0 and third["files_unchanged"] == 3

    def test_containers_left_unread_by_older_limits_are_read_again(self, tmp_path: Path) -> None:
        """Readers before version 15 read 10,000 members of any file and called the rest an archive bomb (a
        mailbox of 20,000 messages kept half of them unread at every rescan), and left a mailbox over
        `max_bytes` wholly unread; `too_large` is no matter of the readers' version otherwise. Such files are
        read again once; a file over another limit is not."""
        folder = tmp_path / "mail"
        folder.mkdir()
        store = b"".join(
            b"From clerk@example.org Mon Jan  1 10:00:00 2024\nFrom: clerk@example.org\nTo: records@example.org\n"
            b"Subject: item %d\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n\n%s\n\n" % (n, _text(n).encode())
            for n in range(3))
        for name in ("inbox.mbox", "big.mbox", "bomb.mbox"):  # three stores of the same three messages
            (folder / name).write_bytes(store.replace(b"Subject: item 0", b"Subject: item 0 of " + name.encode()))
        db = tmp_path / "i.db"

        def scan() -> dict:
            proc = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--json")
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)

        assert scan()["files_indexed"] == 9
        left = {"inbox.mbox": "archive bomb: more than 10000 members; the 10000 member(s) before it were read",
                "big.mbox": "1000000000 bytes > max_bytes 536870912",
                "bomb.mbox": "archive bomb: message 2 expands past the limit of 2147483648 bytes; the 1 member(s) "
                             "before it were read"}
        # as readers 14 left them: the first cut after its first message, the second unread, the third cut
        raw(db).execute("DELETE FROM files WHERE path LIKE '%.mbox!/message-000_.eml' AND path NOT LIKE '%0001.eml'")
        for name, reason in left.items():
            raw(db).execute("UPDATE files SET status = 'too_large', reason = ?, readers = 14 WHERE path LIKE ?",
                            (reason, f"%/{name}"))
        again = scan()
        assert again["files_reread"] == 2 and again["files_unchanged"] == 1
        read = dict(raw(db).execute("SELECT substr(path, length(?) + 2), status FROM files", (str(folder),)))
        assert read["inbox.mbox"] == read["big.mbox"] == "container" and read["bomb.mbox"] == "too_large"
        assert read["inbox.mbox!/message-0003.eml"] == read["big.mbox!/message-0003.eml"] == "ok"
        assert "bomb.mbox!/message-0003.eml" not in read
        assert scan()["files_reread"] == 0

    def test_a_reader_opens_an_index_without_the_files_readers(self, tmp_path: Path) -> None:
        """Migrations 14 and 15 add what only a scan reads: `check` on an index a build before them wrote needs no
        scan first (a reader refuses an index older than a migration it needs, as for 13)."""
        folder = tmp_path / "docs"
        folder.mkdir()
        (folder / "a.txt").write_text(_text(3), encoding="utf-8")
        db = tmp_path / "i.db"
        assert run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--quiet").returncode == 0
        conn = sqlite3.connect(db, isolation_level=None)  # as a build of session 29 left it: schema 13
        for statement in ("DROP INDEX files_readers", "ALTER TABLE files DROP COLUMN readers",
                          "DELETE FROM schema_migrations WHERE version >= 14", "PRAGMA user_version = 13"):
            conn.execute(statement)
        conn.close()
        (tmp_path / "copy.txt").write_text(_text(3), encoding="utf-8")
        checked = run_cli("check", str(tmp_path / "copy.txt"), "--index", str(db), "--json")
        assert checked.returncode == 1, checked.stderr  # 1: a finding
        [result] = json.loads(checked.stdout)["results"]
        assert result["matches"][0]["containment_query_in_doc"] == 1.0
        with Index.open(db) as index:
            assert index.schema_version == 13
        conn = sqlite3.connect(db, isolation_level=None)  # schema 12 still needs a scan first
        conn.execute("PRAGMA user_version = 12")
        conn.close()
        with pytest.raises(IndexStoreError, match="run `scanner scan` once to upgrade"):
            Index.open(db)

    def test_version_1_index_is_upgraded_in_place(self, db: Path) -> None:
        """An index in the schema-1 layout (one postings table with a doc index, no watch_state, no real
        paths, no passages, no alert groups, no document vectors, no step plan, no postings filter, no
        documents' places, no files' readers, no base texts) keeps its
        documents and postings through every later migration."""
        text = _text(7)
        with Index.open(db, readonly=False) as index:
            doc_id = _add(index, "/old/a.txt", text, "a" * 64)
            expected = index.candidates(_doc(text, "x").fingerprints)
        old_view = next(st for st in MIGRATIONS[0].statements if "CREATE VIEW equivalence_groups" in st)
        conn = sqlite3.connect(db, isolation_level=None)  # back to the schema-1 layout, data kept
        for statement in ("DROP VIEW postings", "ALTER TABLE postings_buffer RENAME TO postings",
                          "CREATE INDEX postings_doc ON postings(doc_id)", "DROP TABLE postings_segments",
                          "DROP TABLE watch_state", "DROP VIEW equivalence_groups", old_view,
                          "DROP INDEX files_real_path", "ALTER TABLE files DROP COLUMN real_path",
                          "DROP TABLE passage_pairs", "DROP TABLE passage_aligned", "DROP TABLE stored_findings",
                          "DROP TABLE meaning_blocks", "DROP TABLE passage_plan",
                          "DROP TABLE passage_plan_done", "DROP TABLE postings_filter", "DROP TABLE sentence_vectors",
                          "DROP TABLE base_texts",
                          "DELETE FROM meta WHERE key = 'generation'", "DROP INDEX alerts_content",
                          "ALTER TABLE documents DROP COLUMN places", "DROP INDEX files_readers",
                          "ALTER TABLE files DROP COLUMN readers",
                          *(f"ALTER TABLE alerts DROP COLUMN {c}" for c in ("paths_json", "severity", "sources",
                                                                            "review")),
                          "DELETE FROM schema_migrations WHERE version > 1", "PRAGMA user_version = 1"):
            conn.execute(statement)
        conn.execute("UPDATE documents SET text = ? WHERE id = ?",  # a text as builds before migration 12 wrote it
                     (zlib.compress(text.encode("utf-8"), 1), doc_id))
        conn.close()
        with pytest.raises(IndexStoreError, match="run `scanner scan` once to upgrade"):
            Index.open(db)
        with Index.open(db, readonly=False) as index:
            assert index.schema_version == LATEST_VERSION
            assert raw(index).execute("SELECT count(*) FROM watch_state").fetchone()[0] == 0
            assert index.candidates(_doc(text, "x").fingerprints) == expected
            assert expected[0][0] == doc_id and expected[0][1] == index.stats().postings > 0
            names = {r[0] for r in raw(index).execute("SELECT name FROM sqlite_master")}
            assert "postings_doc" not in names and {"postings", "postings_buffer", "postings_segments"} <= names
            assert "files_real_path" in names
            assert {"passage_pairs", "passage_aligned", "stored_findings"} <= names and index.generation() == 0
            assert "alerts_content" in names and index.alerts() == []
            assert "meaning_blocks" in names and index.meaning.vectors()[0].tolist() == []
            assert "passage_plan" in names and index.passages.plan({}) is None
            assert index.filters.state()[0] == "ok"  # built by the writer that upgraded it
            assert "sentence_vectors" in names and index.sentence_vectors(doc_id, {}) is None
            assert index.document(doc_id).places == ()  # migration 13: nothing outside its body, as before
            # texts: the zlib one kept and read as it is; one written now is a zstd frame, read back too
            assert index.text(doc_id) == text and next(index.stored_texts())[0] == (doc_id, text)
            newer = _add(index, "/new/b.txt", _text(8), "b" * 64)
            stored = raw(index).execute("SELECT text FROM documents WHERE id = ?", (newer,)).fetchone()[0]
            assert stored[:4] == b"\x28\xb5\x2f\xfd" and index.text(newer) == _text(8)
            assert len(stored) < len(_text(8).encode("utf-8")) / 2

    def test_newer_schema_is_refused(self, db: Path) -> None:
        Index.open(db, readonly=False).close()
        conn = sqlite3.connect(db)
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
        conn.commit()
        conn.close()
        for readonly in (True, False):
            with pytest.raises(IndexStoreError, match="newer than this scanner supports"):
                Index.open(db, readonly=readonly)

    def test_missing_and_junk_indexes(self, db: Path, tmp_path: Path) -> None:
        with pytest.raises(IndexStoreError, match="no index"):
            Index.open(db)
        junk = tmp_path / "junk.db"
        junk.write_bytes(b"this is not sqlite" * 100)
        with pytest.raises(IndexStoreError):
            Index.open(junk)
        with pytest.raises(IndexStoreError):
            Index.open(junk, readonly=False)
        assert not db.exists()  # a reader never creates anything


class TestParameters:
    """Sketch parameters live in the index; other ones are refused."""

    def test_params_stored_and_read_back(self, db: Path) -> None:
        params = Params(shingle_size=4, resemblance_threshold=0.6)
        Index.open(db, readonly=False, params=params).close()
        with Index.open(db) as index:
            assert index.params == params
            assert index.stored_params == params

    def test_other_sketch_params_are_a_mismatch(self, db: Path) -> None:
        Index.open(db, readonly=False, params=Params(shingle_size=4)).close()
        with pytest.raises(ParameterMismatchError, match=r"shingle_size 4 vs 6.*--rebuild"):
            Index.open(db, params=Params(shingle_size=6))
        with pytest.raises(ParameterMismatchError):
            Index.open(db, readonly=False, params=Params(shingle_size=6))
        # thresholds do not change sketches
        with Index.open(db, params=Params(shingle_size=4, resemblance_threshold=0.9)) as index:
            assert index.params.resemblance_threshold == 0.9

    def test_an_index_of_another_algorithm_version_is_refused(self, db: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
        """Same parameters, other fingerprints: the stored key tells, and only --rebuild reuses the file."""
        import scanner.core.config

        monkeypatch.setattr(scanner.core.config, "ALGORITHM_VERSION", scanner.core.config.ALGORITHM_VERSION - 1)
        with Index.open(db, readonly=False) as index:
            _add(index, "a.txt", _text(1), "a" * 64)
        monkeypatch.undo()
        for readonly in (True, False):
            with pytest.raises(ParameterMismatchError, match=r"earlier scanner algorithm.*scanner scan.*--rebuild"):
                Index.open(db, readonly=readonly)
        (tmp_path / "a.txt").write_text(_text(1), encoding="utf-8")
        proc = run_cli("check", str(tmp_path / "a.txt"), "--index", str(db))
        assert proc.returncode != 0 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and "--rebuild" in proc.stderr
        with Index.open(db, readonly=False, rebuild=True) as index:
            assert index.stats().documents == 0
        with Index.open(db) as index:  # what a rebuild writes is this version's
            assert index.params == Params()

    def test_rebuild_wipes(self, db: Path) -> None:
        with Index.open(db, readonly=False, params=Params(shingle_size=4)) as index:
            _add(index, "a.txt", _text(1), "a" * 64)
        with Index.open(db, readonly=False, params=Params(shingle_size=6), rebuild=True) as index:
            assert index.stats().documents == 0
            assert index.params.shingle_size == 6


class TestLocking:
    """One writer at a time; readers are never blocked."""

    def test_second_writer_fails_at_once(self, db: Path) -> None:
        with Index.open(db, readonly=False) as index:
            with pytest.raises(IndexLockedError, match=r"being written by another scan \(pid \d+\)"):
                Index.open(db, readonly=False)
            _add(index, "a.txt", _text(1), "a" * 64)
            with Index.open(db) as reader:
                assert reader.stats().documents == 1
        Index.open(db, readonly=False).close()  # released on close

    def test_lock_held_by_another_process(self, db: Path) -> None:
        Index.open(db, readonly=False).close()
        code = ("import sys, time; from scanner.index import Index; i = Index.open(sys.argv[1], readonly=False);"
                "print('locked', flush=True); time.sleep(30)")
        proc = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True,
                                cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
            with pytest.raises(IndexLockedError, match=f"pid {proc.pid}"):
                Index.open(db, readonly=False)
        finally:
            proc.kill()
            proc.wait()
        Index.open(db, readonly=False).close()  # the kernel released the dead holder's lock

    def test_reader_cannot_write(self, db: Path) -> None:
        Index.open(db, readonly=False).close()
        with Index.open(db) as index, pytest.raises(IndexStoreError, match="read-only"):
            index.add_alert("x", "y", [])


class TestReadApi:
    """What check, report and the TUI read."""

    def test_documents_texts_sketches(self, db: Path) -> None:
        text = _text(7)
        with Index.open(db, readonly=False) as index:
            doc_id = _add(index, "dir/a.txt", text, "a" * 64)
            # a copy with the same sha256 reuses the document
            assert _add(index, "dir/copy.txt", text, "a" * 64) == doc_id
            private = _add(index, "dir/p.txt", _text(8), "b" * 64, store_text=False)
        with Index.open(db) as index:
            info = index.document(doc_id)
            assert info.paths == ("dir/a.txt", "dir/copy.txt")
            assert info.sha256 == "a" * 64 and info.n_tokens == 200 and info.text_length == len(text)
            assert index.text(doc_id) == text
            assert index.text(private) is None
            assert index.texts([private, doc_id, doc_id]) == [None, text, text] and index.texts([]) == []
            with pytest.raises(IndexStoreError, match="no document 999"):
                index.texts([doc_id, 999])
            sketch = index.sketch(doc_id)
            assert compare_sketches(sketch, sketch, index.params.sample_size).resemblance == 1.0
            assert index.stats().documents == 2 and index.stats().files == 3
            with pytest.raises(IndexStoreError):
                index.document(999)
            # many at once (check reads its matches' so): each as `document` gives it, its paths in order
            many = index.documents_of([private, doc_id, private])
            assert sorted(many) == [doc_id, private] and many[doc_id] == info
            assert many[private].paths == ("dir/p.txt",) and not many[private].has_text and info.has_text
            assert index.documents_of([]) == {}
            with pytest.raises(IndexStoreError, match="no document 999"):
                index.documents_of([doc_id, 999])
            assert sorted(index.sketches([doc_id, private])) == sorted([doc_id, private])

    def test_candidates_by_postings(self, db: Path) -> None:
        base = _text(3, 400)
        words = base.split()
        lifted = _text(4, 300) + " " + " ".join(words[100:160]) + " " + _text(5, 100)
        with Index.open(db, readonly=False) as index:
            a = _add(index, "a.txt", base, "a" * 64)
            _add(index, "other.txt", _text(6, 300), "c" * 64)
            query = _doc(lifted, "q" * 64)
            found = index.candidates(query.fingerprints, max_doc_share=None)
        assert found[0][0] == a and found[0][1] >= 10
        assert all(doc != a for doc, _ in found[1:])

    def test_candidates_ignore_common_fingerprints(self, db: Path) -> None:
        common = " ".join(_text(99, 40).split())
        with Index.open(db, readonly=False) as index:
            for i in range(COMMON_MIN_DOCS + 5):
                _add(index, f"d{i}.txt", _text(1000 + i, 150) + " " + common, f"{i:064x}")
            query = _doc(common, "q" * 64).fingerprints
            assert len(index.candidates(query)) == COMMON_MIN_DOCS + 5
            assert index.candidates(query, max_doc_share=0.05) == []

    def test_signed_storage_round_trips(self) -> None:
        fps = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1], dtype=np.uint64)
        assert to_signed(fps) == [0, 1, 2**63 - 1, -(2**63), -1]
        assert np.array_equal(to_unsigned(to_signed(fps)), fps)

    def test_alerts(self, db: Path) -> None:
        with Index.open(db, readonly=False) as index:
            first = index.add_alert("in/x.txt", "d" * 64, [{"path": "a.txt", "resemblance": 0.9}], when=10.0)
            index.add_alert("in/y.txt", "e" * 64, [])
        with Index.open(db) as index:
            alerts = index.alerts()
            assert [a.path for a in alerts] == ["in/y.txt", "in/x.txt"]
            assert alerts[1].id == first and alerts[1].matches[0]["resemblance"] == 0.9
            assert len(index.alerts(limit=1)) == 1

    def test_transaction_rolls_back_whole_file(self, db: Path) -> None:
        with Index.open(db, readonly=False) as index:
            with pytest.raises(RuntimeError), index.transaction():
                index.add_document(_doc(_text(1), "a" * 64))
                raise RuntimeError("killed mid-file")
            stats = index.stats()
            assert stats.documents == 0 and stats.postings == 0

    def test_vanished_only_under_scanned_roots(self, db: Path) -> None:
        with Index.open(db, readonly=False) as index:
            for path in ("root/a.txt", "root/sub/b.txt", "rootless/c.txt", "other/d.txt"):
                _add(index, path, _text(len(path)), path.ljust(64, "0"))
            run = index.begin_run("scan")
            index.mark_seen(run, ["root/a.txt"])
            assert index.mark_vanished(run, ["root"]) == 1
            assert {f.path for f in index.files() if f.vanished} == {"root/sub/b.txt"}
            assert index.document_ids() and len(index.document_ids()) == 3

    def test_files_seen_again_come_back_with_their_members_over_several_batches(self, db: Path) -> None:
        plain = [f"root/f{i:04d}.txt" for i in range(IN_BATCH + 100)]  # two batches of paths
        members = ["root/box.zip!/a.txt", "root/box.zip!/sub/b.txt"]
        unseen = ["root/box.zip2", "root/other.zip", "root/other.zip!/c.txt"]  # a name sharing the prefix too
        with Index.open(db, readonly=False) as index:
            doc_id = _add(index, "root/box.zip", _text(7), "b" * 64)
            with index.transaction():
                for i, path in enumerate(plain + members + unseen):
                    index.put_file(FileRecord(path, 10, 1, "b" * 64, "text/plain"), readers=1,
                                   status="error" if i % 7 else "ok", extractor="text", doc_id=doc_id, run_id=None,
                                   reason=f"why {i}")
            everything = ["root/box.zip", *plain, *members, *unseen]
            assert index.mark_vanished(index.begin_run("scan"), ["root"]) == len(everything)
            run = index.begin_run("scan")
            index.mark_seen(run, iter(["root/box.zip", *plain]))  # any iterable
            rows = {row.path: row.vanished for row in index.files()}
            assert {path for path, vanished in rows.items() if vanished} == set(unseen)
            seen = {r[0] for r in raw(index).execute("SELECT path FROM files WHERE seen_run = ?", (run,))}
            assert seen == {"root/box.zip", *plain, *members}
            states = index.file_states([*plain, "root/missing.txt", "root/box.zip"])
            assert set(states) == {*plain, "root/box.zip"}
            assert [states[path].reason for path in plain] == [f"why {i}" for i in range(len(plain))]
            assert [states[path].status for path in plain[:8]] == ["ok"] + ["error"] * 6 + ["ok"]
            assert states["root/box.zip"] == index.file_state("root/box.zip") and not states["root/box.zip"].vanished


def test_segmented_postings_answer_as_one_table(tmp_path: Path) -> None:
    """Small buffers force sealing and a tiered merge; every reader sees the same postings as without."""
    from scanner.index.store import SEGMENT_FAN_IN

    texts = [_text(1000 + i, 120) for i in range(40)]
    texts += [texts[i] + " " + texts[i + 1][:300] for i in range(0, 10, 2)]  # containments across segments
    answers = {}
    for name, buffer_rows in (("one table", 10**9), ("segments", 40)):
        db = tmp_path / f"{name}.db"
        with Index.open(db, readonly=False) as index:
            index.postings_buffer_rows = buffer_rows
            for i, text in enumerate(texts):
                _add(index, f"/d/{i}.txt", text, f"{i:064x}")
            segments = index.postings_segments()
        with Index.open(db) as index:
            probe = np.concatenate([_doc(texts[3], "q").fingerprints, _doc(texts[41], "q").fingerprints])
            pairs = sorted((int(a), int(b), int(n)) for aa, bb, nn in index.pair_count_arrays(0.05, slice_rows=500)
                           for a, b, n in zip(aa, bb, nn))
            rows = sorted(raw(index).execute("SELECT fp, doc_id FROM postings").fetchall())
            answers[name] = (index.candidates(probe), pairs, rows, index.stats().postings)
            assert index.integrity_check() == "ok"
        if name == "segments":
            levels = [level for _, level, _ in segments]
            assert 1 in levels, segments  # SEGMENT_FAN_IN level-0 segments were merged into one of level 1
            assert levels.count(0) < SEGMENT_FAN_IN and sum(n for _, _, n in segments) > 0.8 * len(rows)
        else:
            assert segments == []
    assert answers["segments"] == answers["one table"]
    candidates, pairs, rows, count = answers["segments"]
    assert count == len(rows) and len(pairs) >= 5 and candidates[0][1] > 10


def _filtered_index(db: Path, texts: list[str], buffer_rows: int) -> list[tuple[int, int, int]]:
    with Index.open(db, readonly=False) as index:
        index.postings_buffer_rows = buffer_rows
        for i, text in enumerate(texts):
            _add(index, f"/d/{i}.txt", text, f"{i:064x}")
        return index.postings_segments()


def writer_id(index: Index, i: int) -> int:
    return int(raw(index).execute("SELECT doc_id FROM files WHERE path = ?", (f"/d/{i}.txt",)).fetchone()[0])


def _all_candidates(index: Index, probe: np.ndarray) -> list[tuple[int, int]]:
    """`candidates` computed in SQL over every posting, with no filter."""
    values = to_signed(np.unique(probe.astype(np.uint64)))
    marks = ",".join("?" * len(values))
    return [tuple(r) for r in raw(index).execute(
        f"SELECT doc_id, count(*) AS n FROM postings WHERE fp IN ({marks}) GROUP BY doc_id ORDER BY n DESC, doc_id",
        values)]


def test_the_segments_filter_loses_no_candidate(tmp_path: Path) -> None:
    """The Bloom filter of the segments rules out the anchors no document holds, and only those: a query's
    candidates are those of every posting looked up, across buffer and segments, after seals, merges, a
    rebuild when the filter fills up, and for a reader that stayed open while the writer sealed."""
    from scanner.index.store import SEGMENT_FAN_IN

    texts = [_text(2000 + i, 150) for i in range(60)]
    texts += [texts[i] + " " + texts[i + 7][:400] for i in range(0, 20, 2)]  # containments across segments
    db = tmp_path / "filtered.db"
    segments = _filtered_index(db, texts[:50], buffer_rows=60)
    assert len(segments) >= 2 and any(level == 1 for _, level, _ in segments), segments
    with Index.open(db) as reader, Index.open(db, readonly=False) as writer:
        assert reader.filters.current() is None  # a process that checks once never reads it
        reader.filters.current()  # the second look-up starts reading it, on a thread of its own
        deadline = time.monotonic() + 30
        while reader.filters.current() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        held = reader.filters.current()
        assert held is not None and held.keys >= sum(rows for _, _, rows in segments) - SEGMENT_FAN_IN * 60
        stale_version = reader.filters.state()[1]
        writer.postings_buffer_rows = 60
        for i, text in enumerate(texts[50:], start=50):  # sealed while the reader keeps its loaded filter
            _add(writer, f"/d/{i}.txt", text, f"{i:064x}")
        assert writer.filters.state()[1] > stale_version
        for probe_text in (texts[3], texts[55], texts[61], texts[68], _text(99, 80)):
            probe = _doc(probe_text, "q").fingerprints
            expected = _all_candidates(reader, probe)
            assert reader.candidates(probe) == expected and writer.candidates(probe) == expected
            assert reader.filters.current(wait=True) is not None  # the filter of the segments as sealed now
            assert reader.candidates(probe) == expected
            if len(expected) > 2:
                assert reader.candidates(probe, top=2) == [c for c in expected if c[1] >= expected[1][1]]
        planted = _all_candidates(reader, _doc(texts[68], "q").fingerprints)  # texts[16], a piece of texts[23]
        assert {planted[0][0], planted[1][0]} == {writer_id(writer, 68), writer_id(writer, 16)}
        summary = reader.stats().postings_filter  # what `scanner info` shows
        assert summary["state"] == "ok" and summary["postings"] == reader.filters.current(wait=True).keys
        assert 0 < summary["false_positive_rate"] < 0.01
        absent = np.random.default_rng(0).integers(0, 2**63, 20_000, dtype=np.int64)
        assert reader.filters.current(wait=True).may_hold(absent).mean() < 0.1  # it does rule most out
        # a document's postings in the buffer (found there), then sealed: none left in the buffer, which
        # is then not looked in (as after a scan), and the same candidates
        writer.postings_buffer_rows = 10**6
        _add(writer, "/d/999.txt", texts[3] + " " + _text(98, 80), f"{999:064x}")
        assert raw(writer).execute("SELECT count(*) FROM postings_buffer").fetchone()[0] > 0
        probes = [_doc(t, "q").fingerprints for t in (texts[3], texts[61], _text(98, 80))]
        before = [reader.candidates(p) for p in probes]
        assert writer_id(writer, 999) in {doc for doc, _ in before[2]}
        writer.seal_postings()
        assert raw(writer).execute("SELECT count(*) FROM postings_buffer").fetchone()[0] == 0
        assert [reader.candidates(p) for p in probes] == before == [_all_candidates(reader, p) for p in probes]


def test_a_seal_rolled_back_leaves_the_filter_as_stored(tmp_path: Path) -> None:
    """The writer keeps the filter it stored for its next seal; a transaction rolled back after a seal takes
    the stored filter back, and the writer reads it again rather than keep the one that is gone."""
    texts = [_text(5000 + i, 150) for i in range(30)]
    db = tmp_path / "rolled.db"
    _filtered_index(db, texts[:10], buffer_rows=60)
    with Index.open(db, readonly=False) as index:
        before = index.filters.current(wait=True).keys
        index.postings_buffer_rows = 60
        with pytest.raises(RuntimeError), index.transaction():
            for i, text in enumerate(texts[10:], start=10):
                _add(index, f"/d/{i}.txt", text, f"{i:064x}")
            assert index.filters.current(wait=True).keys > before  # sealed, in this transaction
            raise RuntimeError("stopped")
        assert index.filters.current(wait=True).keys == before
    with Index.open(db) as reader:
        assert reader.filters.current(wait=True).keys == before


def test_a_damaged_filter_is_looked_past_and_rebuilt(tmp_path: Path) -> None:
    """A filter whose stored form cannot be read (a torn write, a hand edit) loses no candidate: readers look
    every anchor up, `scanner info` says it is damaged, and the next writer builds it afresh."""
    texts = [_text(6000 + i, 150) for i in range(30)]
    db = tmp_path / "damaged.db"
    _filtered_index(db, texts, buffer_rows=60)
    probe = _doc(texts[4], "q").fingerprints
    with Index.open(db) as reader:
        good = reader.filters.current(wait=True).keys
        expected = _all_candidates(reader, probe)
    raw(db).execute("UPDATE postings_filter SET filter = substr(filter, 1, 100)")
    with Index.open(db) as reader:
        assert reader.stats().postings_filter["state"] == "unreadable"
        assert reader.filters.current(wait=True) is None and reader.candidates(probe) == expected
    with Index.open(db) as reader:  # read in the background, as a checking process does: found damaged once
        for _ in range(3):
            assert reader.candidates(probe) == expected
        thread = reader.filters._loading
        assert thread is not None
        thread.join(30)
        assert reader.candidates(probe) == expected
        assert reader.filters.current() is None and reader.filters._loading is thread  # not read again
    info = run_cli("info", "--index", str(db))
    assert info.returncode == 0 and "damaged" in info.stdout
    with Index.open(db, readonly=False) as writer:
        assert writer.filters.current(wait=True).keys == good and writer.candidates(probe) == expected


def test_the_segments_filter_is_rebuilt_larger_and_dropped_past_its_size(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A filter sized for few keys is rebuilt larger when seals fill it; past the largest size the index keeps
    none (every anchor looked up, as before filters); dropping every posting starts one afresh."""
    import scanner.engine.membership as membership

    texts = [_text(3000 + i, 150) for i in range(40)]
    db = tmp_path / "grown.db"
    monkeypatch.setattr(membership, "MIN_BITS_LOG2", 12)  # room for 1,024 keys
    with Index.open(db, readonly=False) as index:
        assert index.filters.current().bits_log2 == 12  # a new index: an empty filter
    _filtered_index(db, texts, buffer_rows=500)
    with Index.open(db) as index:
        grown = index.filters.current(wait=True)
        assert index.stats().postings > 1_024 and grown.bits_log2 > 12 and grown.has_room_for(0)
        probe = _doc(texts[5], "q").fingerprints
        assert index.candidates(probe) == _all_candidates(index, probe)
    monkeypatch.setattr(membership, "MAX_BITS_LOG2", grown.bits_log2)
    more = [_text(4000 + i, 400) for i in range(80)]
    with Index.open(db, readonly=False) as index:
        index.postings_buffer_rows = 500
        for i, text in enumerate(more, start=100):
            _add(index, f"/d/{i}.txt", text, f"{i:064x}")
        assert index.filters.state()[0] == "off" and index.filters.current() is None
        assert index.stats().postings_filter == {"state": "off"}
        probe = _doc(more[7], "q").fingerprints
        assert index.candidates(probe) == _all_candidates(index, probe) and index.candidates(probe)[0][0] > 0
        index.clear_postings()
        assert index.filters.state()[0] == "build" and index.candidates(probe) == []


def test_files_without_a_hash_are_not_identical(tmp_path: Path) -> None:
    """Two files the crawler skipped (no SHA-256 recorded) are not an 'identical' group; two real copies are."""
    db = tmp_path / "scanner.db"
    with Index.open(db, readonly=False) as index:
        with index.transaction():
            for path in ("/e/loop-a", "/e/loop-b"):
                index.put_file(FileRecord(path, 10, 1, "", "inode/symlink"), readers=1, status="skipped",
                               reason="symlink loop")
        for path in ("/e/copy-1.txt", "/e/copy-2.txt"):
            _add(index, path, _text(3), "c" * 64)
        groups = raw(index).execute("SELECT kind, key, count(*) FROM equivalence_groups GROUP BY kind, key").fetchall()
    assert ("identical", "c" * 64, 2) in groups
    assert not [g for g in groups if g[1] == ""]


def test_document_vectors_keep_the_latest_and_go_with_their_key(tmp_path: Path) -> None:
    """`Index.meaning`: blocks of vectors (float16 as stored), each document's latest one, and sentence vectors
    beside them; a new key (another model) wipes both; a reader finds the nearest by meaning only under the
    key they were made with."""
    rng = np.random.default_rng(3)
    first, second = rng.normal(size=(3, 64)).astype(np.float32), rng.normal(size=(2, 64)).astype(np.float32)
    key = {"model": "m@1", "dimensions": 64}
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False) as index:
        assert index.meaning.use_key(key) and not index.meaning.use_key(key)
        sentences = [QuantizedVectors.of(rng.normal(size=(4, 256)).astype(np.float32)) for _ in range(2)]
        index.meaning.put([5, 7, 9, 13], np.concatenate((first, np.zeros((1, 64), np.float32))),
                          [sentences[0], sentences[1], None, None])
        # to embed: 6 and 11 (no vector), 9 (a vector but no sentence vectors); not 13 (no sentences at all)
        assert index.meaning.missing(np.array([5, 6, 9, 11, 13])).tolist() == [6, 9, 11]
        assert np.array_equal(index.sentence_vectors(7, key).codes, sentences[1].codes)  # type: ignore[union-attr]
        # many in one read: those stored under this key, none for a document without, none under another key
        many = index.sentence_vectors_of([13, 7, 5, 6, 7], key)
        assert sorted(many) == [5, 7] and np.array_equal(many[5].scales, sentences[0].scales)
        assert np.array_equal(many[7].codes, sentences[1].codes)
        assert index.sentence_vectors_of([5, 7], {"model": "other@2", "dimensions": 64}) == {}
        assert index.sentence_vectors_of([], key) == {}
        index.meaning.put([7, 12], second)  # document 7 again: its later vector counts
    with Index.open(db) as reader:
        ids, vectors = reader.meaning.vectors()
        assert ids.tolist() == [5, 7, 9, 12, 13]
        expected = np.stack((first[0], second[0], first[2], second[1], np.zeros(64, np.float32))
                            ).astype(np.float16).astype(np.float32)
        assert np.array_equal(vectors, expected)
        assert reader.nearest_in_meaning(second[0], 1, key) == [7]
        assert reader.nearest_in_meaning(second[0], 1, {"model": "other@2", "dimensions": 64}) == []
    with Index.open(db, readonly=False) as index:  # document 7 written twice: compacted to one row each
        before = index.meaning.vectors()
        assert index.meaning.compact() and not index.meaning.compact()
        after = index.meaning.vectors()
        assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])
        assert raw(index).execute("SELECT sum(length(ids)) / 8 FROM meaning_blocks").fetchone()[0] == 5
        assert index.meaning.use_key({"model": "other@2", "dimensions": 64})
        assert index.meaning.vectors()[0].tolist() == []
        assert raw(index).execute("SELECT count(*) FROM sentence_vectors").fetchone()[0] == 0


def test_vectors_read_ahead_on_a_thread_are_those_of_the_current_blocks(tmp_path: Path) -> None:
    """A reader told a search by meaning is coming reads the vectors on a thread of its own (`check` starts it
    before its candidates): the same ids, vectors and nearest documents as a read in place; blocks written
    after the thread read are read again; a writer reads in place."""
    rng = np.random.default_rng(8)
    key = {"model": "m@1", "dimensions": 64}
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False) as index:
        index.meaning.use_key(key)
        index.meaning.put(list(range(1, 301)), rng.normal(size=(300, 64)).astype(np.float32))
        index.meaning.read_ahead()  # a writer reads in place
        assert index.meaning._ahead is None
    query = rng.normal(size=64).astype(np.float32)
    with Index.open(db) as plain:
        expected_ids, expected = plain.meaning.vectors()
        expected_nearest = plain.nearest_in_meaning(query, 5, key)
    with Index.open(db) as reader:
        reader.read_meaning_ahead()
        ahead = reader.meaning._ahead
        assert ahead is not None and ahead.result() is not None
        assert reader.nearest_in_meaning(query, 5, key) == expected_nearest
        ids, vectors = reader.meaning.vectors()
        assert np.array_equal(ids, expected_ids) and np.array_equal(vectors, expected)
        reader.read_meaning_ahead()  # read already: nothing more
        assert reader.meaning._ahead is None
    with Index.open(db) as reader:
        reader.read_meaning_ahead()
        with Index.open(db, readonly=False) as writer:  # a block written after the thread's snapshot
            reader.meaning._ahead.result()  # type: ignore[union-attr]
            writer.meaning.put([301], np.ones((1, 64), np.float32))
        assert reader.meaning.vectors()[0].tolist() == list(range(1, 302))
        assert reader.nearest_in_meaning(np.ones(64, np.float32), 1, key) == [301]
    with Index.open(db) as reader:  # read ahead, then asked under another model's key: none found
        reader.read_meaning_ahead()
        assert reader.nearest_in_meaning(query, 5, {"model": "other@2", "dimensions": 64}) == []
        assert reader.nearest_in_meaning(query, 5, key) == expected_nearest


def test_a_reader_sees_what_another_connection_writes_after_its_searches(tmp_path: Path) -> None:
    """A reader keeps the vectors' key and the blocks' state between searches (a check reads neither again)
    until a commit moves the database: a block written, or another key, by another connection is seen at
    its next search, and a writer sees its own writes at once."""
    rng = np.random.default_rng(9)
    key, other = {"model": "m@1", "dimensions": 64}, {"model": "other@2", "dimensions": 64}
    vectors = rng.normal(size=(3, 64)).astype(np.float32)
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False) as index:
        index.meaning.use_key(key)
        index.meaning.put([1, 2], vectors[:2])
    with Index.open(db) as reader:
        assert sorted(reader.nearest_in_meaning(vectors[2], 3, key)) == [1, 2]  # the state it now keeps
        with Index.open(db, readonly=False) as writer:
            assert writer.nearest_in_meaning(vectors[2], 1, key) != [3]
            writer.meaning.put([3], vectors[2:])
            assert writer.nearest_in_meaning(vectors[2], 1, key) == [3]
        assert reader.nearest_in_meaning(vectors[2], 1, key) == [3]
        with Index.open(db, readonly=False) as writer:
            assert writer.meaning.use_key(other)
        assert reader.nearest_in_meaning(vectors[2], 1, key) == []
        assert reader.meaning.key() == {**other, "format": VECTOR_FORMAT}
        assert reader.meaning.vectors()[0].tolist() == []


def test_the_nearest_in_meaning_rank_by_centred_cosine() -> None:
    """Centred on the documents' mean: the component all documents share does not decide; zero vectors (a
    document without sentences) are never returned."""
    from scanner.engine.semantic import MeaningSpace

    def nearest_in_meaning(query: np.ndarray, documents: np.ndarray, count: int) -> np.ndarray:
        return MeaningSpace.of(documents).nearest(query, count)

    shared = np.full(8, 5.0, dtype=np.float32)
    basis = np.eye(8, dtype=np.float32)
    documents = np.stack([shared + basis[i] for i in range(6)] + [np.zeros(8, dtype=np.float32)])
    query = shared + basis[3] + 0.5 * basis[1]
    assert nearest_in_meaning(query, documents, 2).tolist() == [3, 1]
    assert nearest_in_meaning(query, documents, 50).shape[0] == 6
    assert nearest_in_meaning(query, documents[:0], 3).tolist() == []
    # against the definition, in float64: centre, scale every vector, rank the cosines
    rng = np.random.default_rng(5)
    many = rng.standard_normal((3_000, 64)).astype(np.float32) + 2.0
    many[::97] = 0.0
    kept = np.flatnonzero((many != 0).any(axis=1))
    centre = many[kept].astype(np.float64).mean(axis=0)
    for probe in rng.standard_normal((5, 64)).astype(np.float32) + 2.0:
        centred = many[kept] - centre
        cosines = centred @ (probe - centre) / np.linalg.norm(centred, axis=1)
        assert nearest_in_meaning(probe, many, 10).tolist() == kept[np.argsort(-cosines)[:10]].tolist()


def test_the_search_by_meaning_bounds_every_row_from_its_exact_code_products() -> None:
    """`loops.meaning_candidates` keeps the rows whose upper bound reaches the count-th best lower bound, the
    bounds made from each row's int8 codes times the query's int16 codes: the same rows as the bounds taken
    in numpy from products in int64, whether the products are taken 8 rows at a time in vector registers
    (widths a multiple of 16) or a row at a time (others), rows past the last 8 included."""
    from scanner.engine.kernels import compiled
    from scanner.engine.semantic import MeaningSpace

    if compiled is None:
        pytest.skip("the compiled loops were not built")
    rng = np.random.default_rng(21)
    for width in (64, 40):
        topics = rng.standard_normal((30, width)).astype(np.float32)
        documents = topics[rng.integers(0, 30, 3_001)] + 0.4 * rng.standard_normal((3_001, width)).astype(np.float32)
        space = MeaningSpace.of(documents)
        codes, scales, sums = space.codes
        for probe in topics[:6] + 0.2 * rng.standard_normal((6, width)).astype(np.float32):
            centred = probe.astype(np.float64) - space.centre
            centre_dot = float(space.centre.astype(np.float64) @ centred)
            query_scale = float(np.abs(centred).max()) / 32767.0
            query_codes = np.rint(centred / query_scale).astype(np.int16)
            query_l1 = float(np.abs(centred).sum())
            rows = np.empty(codes.shape[0], dtype=np.int64)
            found = compiled.meaning_candidates(codes, scales, sums, space.inverse_norms, query_codes, query_scale,
                                                query_l1, centre_dot, 10, 1e-6, rows)
            dots = codes.astype(np.int64) @ query_codes.astype(np.int64)
            approx = scales * query_scale * dots.astype(np.float64) - centre_dot
            error = scales * (query_scale * 0.5 * sums + 0.5 * (1.0 + 1e-3) * query_l1)
            inverse = space.inverse_norms.astype(np.float64)
            lower, upper = (approx - error) * inverse, (approx + error) * inverse
            reach = np.sort(lower)[-10] - 1e-6
            assert 10 <= found < 3_001
            assert rows[:found].tolist() == np.flatnonzero(upper >= reach).tolist()


def test_the_search_by_meaning_scores_only_what_its_bounds_cannot_rule_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled search bounds every score from int8 codes and scores exactly only the rows it cannot rule
    out: the same rows, in the same order, as scoring every row (without the kernels), copies of one vector
    included (they tie: the lower row first, whichever rows are scored with them), and far fewer rows scored."""
    from scanner.engine import semantic
    from scanner.engine.kernels import compiled
    from scanner.engine.semantic import MeaningSpace

    if compiled is None:
        pytest.skip("the compiled loops were not built: the package scores every row")
    rng = np.random.default_rng(8)
    topics = rng.standard_normal((40, 64)).astype(np.float32)
    many = topics[rng.integers(0, 40, 20_000)] + 0.3 * rng.standard_normal((20_000, 64)).astype(np.float32)
    many[5_000:5_006] = many[17_000]  # six copies of one document, the original last
    space = MeaningSpace.of(many)
    scored: list[int] = []
    real_scores = MeaningSpace._scores
    monkeypatch.setattr(MeaningSpace, "_scores",
                        lambda self, rows, *rest: scored.append(rows.shape[0]) or real_scores(self, rows, *rest))
    probes = [many[17_000] + 0.01, *(topics[:20] + 0.1 * rng.standard_normal((20, 64)).astype(np.float32))]
    found = [space.nearest(probe, 15) for probe in probes]
    assert max(scored) < 2_000  # of 20,000
    with monkeypatch.context() as every_row:
        every_row.setattr(semantic, "compiled", None)
        assert all(np.array_equal(space.nearest(probe, 15), f) for probe, f in zip(probes, found))
    assert found[0][:7].tolist() == [5_000, 5_001, 5_002, 5_003, 5_004, 5_005, 17_000]
