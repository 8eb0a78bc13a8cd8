"""Hostile and broken evidence through a real `scanner scan` (CLI, worker pool, budgets).

One evidence tree holds every kind of bad file next to good ones; the scan
must finish, give every bad file a one-line reason in `--json` and in the
index (`files.status` / `files.reason`), and index the good files, with the
text of odd encodings stored correctly. Files that vanish mid-scan and a
50 MB text file get their own tests because they need their own set-up.
"""

from __future__ import annotations

import io
import json
import os
import random
import sqlite3
import struct
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clirun import run_cli
from corpus import documents, news_page
from pdfgen import encrypted_pdf_bytes

from scanner.core.config import Params
from scanner.index import Index
from scanner.services.scan import run_scan
from scanner.sources.limits import ExtractLimits

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pdf"
GOOD_PDF = FIXTURES / "pdflatex-4-pages.pdf"
SECRET = "Nobody may read this without the password.\n" * 40
ENCRYPTED = (  # user-password PDFs of every standard security handler, and a real LibreOffice one
    encrypted_pdf_bytes(SECRET, revision=6, user_password="user", seed=1),
    encrypted_pdf_bytes(SECRET, revision=4, user_password="user", aes=True, seed=2),
    encrypted_pdf_bytes(SECRET, revision=4, user_password="user", seed=3),
    encrypted_pdf_bytes(SECRET, revision=3, user_password="user", seed=4),
    encrypted_pdf_bytes(SECRET, revision=2, user_password="user", seed=5),
    (FIXTURES / "libreoffice-writer-password.pdf").read_bytes(),
)
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

# BOM-less legacy and UTF-16 text: these must be decoded, not reported as binary
ACCENTED = ("Voilà déjà l'été, garçon; la naïve façade du théâtre. Über die Straße gehen wir schön früh, "
            "señor, à côté de l'hôpital où l'on déjeune. ") * 30


def real_texts(count: int) -> list[str]:
    """English-like prose (tests/corpus.py): readable UTF-8, long enough to sketch."""
    return documents(count, seed=4, low=3_000, high=12_000)


def docx_bytes(body: bytes, extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", body)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def lying_zip_bomb(unpacked: int) -> bytes:
    """A DOCX whose headers declare 100-byte members that really inflate to `unpacked` bytes."""
    payload = (b'<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>' + b"A" * unpacked
               + b"</w:t></w:r></w:p></w:body></w:document>")
    bomb = bytearray(docx_bytes(payload))
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = bomb.find(sig)
        while pos != -1:
            bomb[pos + offset : pos + offset + 4] = struct.pack("<I", 100)
            pos = bomb.find(sig, pos + 4)
    return bytes(bomb)


def build_hostile_tree(root: Path) -> dict[str, Any]:
    """The tree; returns the good texts and the expected (status, reason fragment) per bad file."""
    root.mkdir(parents=True)
    good = real_texts(4)
    for i, text in enumerate(good):
        (root / f"good{i}.txt").write_text(text, encoding="utf-8")
    pdf = GOOD_PDF.read_bytes()
    rng = random.Random(8)
    (root / "truncated.pdf").write_bytes(pdf[: len(pdf) // 3])
    (root / "truncated-keeps-eof.pdf").write_bytes(pdf[: len(pdf) // 2] + b"\n%%EOF\n")
    (root / "random-bytes.pdf").write_bytes(b"%PDF-1.7\n" + rng.randbytes(40_000) + b"\n%%EOF\n")
    (root / "random-bytes.bin").write_bytes(rng.randbytes(40_000))
    for i, data in enumerate(ENCRYPTED):
        (root / f"encrypted{i}.pdf").write_bytes(data)
    (root / "bomb-declared.docx").write_bytes(docx_bytes(b"<w:document/>", {"pad.bin": b"\0" * (300 * 2**20)}))
    (root / "bomb-lying.docx").write_bytes(lying_zip_bomb(260 * 2**20))
    (root / "nul-only.txt").write_bytes(b"\0" * 65_536)
    (root / "latin1.txt").write_bytes(ACCENTED.encode("latin-1"))
    (root / "utf16le.txt").write_bytes(ACCENTED.encode("utf-16-le"))
    (root / "utf16be.txt").write_bytes(ACCENTED.encode("utf-16-be"))
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "up")  # a directory loop, if it were followed
    (root / "over-max-size.txt").write_text(good[1] * 1000, encoding="utf-8")
    with open(os.path.join(os.fsencode(root), b"name-\xff\xfe-not-utf8.txt"), "wb") as handle:
        handle.write(good[2].replace("the", "THE").encode("utf-8"))  # a distinct document
    return {"good": good, "over_size": (root / "over-max-size.txt").stat().st_size}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One CLI scan of the hostile tree (2 workers, tight per-file budgets)."""
    work = tmp_path_factory.mktemp("hostile")
    facts = build_hostile_tree(work / "tree")
    start = time.monotonic()
    proc = run_cli("scan", "tree", "--index", "idx.db", "--json", "--jobs", "2", "--max-size", "500KB",
               "--file-timeout", "30", "--file-memory", "1GiB", cwd=work)
    facts["seconds"] = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    facts.update(work=work, json=doc, stderr=proc.stderr)
    conn = sqlite3.connect(work / "idx.db")
    facts["rows"] = {r[0].split("/", 1)[1]: r[1:] for r in conn.execute(
        "SELECT path, status, reason, doc_id, sha256 FROM files")}
    conn.close()
    return facts


def _issues(doc: dict[str, Any]) -> dict[str, str]:
    """path (relative to the tree) -> the one-line message of every error and skip."""
    out = {e["path"].split("/", 1)[1]: e["error"] for e in doc["errors"]}
    out.update({s["path"].split("/", 1)[1]: s["reason"] for s in doc["skipped"]})
    return out


EXPECTED: dict[str, tuple[str, str]] = {  # name -> (files.status, fragment of the reason)
    "truncated.pdf": ("corrupt", "truncated"),
    "random-bytes.pdf": ("corrupt", ""),
    "random-bytes.bin": ("unsupported", "binary"),
    "bomb-declared.docx": ("too_large", "zip bomb"),
    # zipfile stops at the declared size and then finds a bad CRC: refused either way, in no time
    "bomb-lying.docx": ("too_large|corrupt", ""),
    "nul-only.txt": ("empty", "NUL"),
    "loop-a": ("skipped", "symlink loop"),
    "loop-b": ("skipped", "symlink loop"),
    "sub/up": ("skipped", "symlink"),
    "over-max-size.txt": ("skipped", "too large"),
}


class TestHostileTree:
    """Every bad file has its one-line reason in the output and the index; good files are indexed."""

    def test_each_bad_file_has_its_reason_in_output_and_index(self, hostile: dict[str, Any]) -> None:
        issues = _issues(hostile["json"])
        rows = hostile["rows"]
        for name, (status, fragment) in EXPECTED.items():
            assert name in issues, (name, issues)
            message = issues[name]
            assert "\n" not in message and 0 < len(message) <= 320
            assert message.split(":", 1)[0] in status.split("|"), (name, message)
            assert fragment.lower() in message.lower(), (name, message)
            assert rows[name][0] == message.split(":", 1)[0], (name, rows[name])
            assert rows[name][1] and "\n" not in rows[name][1] and rows[name][1] in message, (name, rows[name])
            assert rows[name][2] is None  # no document for a file without text

    def test_truncated_pdf_that_keeps_its_eof_marker(self, hostile: dict[str, Any]) -> None:
        """Past the cheap %%EOF check a parser sees the damage: corrupt, or the pages it could read."""
        status, reason, doc_id, _ = hostile["rows"]["truncated-keeps-eof.pdf"]
        assert (status == "corrupt" and reason) or (status in ("ok", "too_short") and doc_id is not None)

    def test_encrypted_pdfs(self, hostile: dict[str, Any]) -> None:
        names = [n for n in hostile["rows"] if n.startswith("encrypted")]
        assert len(names) == len(ENCRYPTED)
        issues = _issues(hostile["json"])
        for name in names:
            assert hostile["rows"][name][:2] == ("encrypted", "encrypted PDF: a user password is needed"), name
            assert issues[name] == "encrypted: encrypted PDF: a user password is needed"

    def test_oversize_skip_keeps_size_and_reason(self, hostile: dict[str, Any]) -> None:
        conn = sqlite3.connect(hostile["work"] / "idx.db")
        size, reason = conn.execute("SELECT size, reason FROM files WHERE path = 'tree/over-max-size.txt'").fetchone()
        conn.close()
        assert size == hostile["over_size"] and reason == f"too large ({size} bytes > 500000)"

    def test_good_files_and_odd_encodings_indexed_with_correct_text(self, hostile: dict[str, Any]) -> None:
        rows = hostile["rows"]
        with Index.open(hostile["work"] / "idx.db") as index:
            for i, text in enumerate(hostile["good"]):
                status, _, doc_id, _ = rows[f"good{i}.txt"]
                assert status == "ok" and index.text(doc_id) == text
            for name in ("latin1.txt", "utf16le.txt", "utf16be.txt"):
                status, reason, doc_id, _ = rows[name]
                assert status == "ok", (name, reason)
                assert index.text(doc_id) == ACCENTED, name  # not mojibake, not binary
            # the same text in three encodings: three files, three SHA-256s, one lexical group
            shas = {rows[n][3] for n in ("latin1.txt", "utf16le.txt", "utf16be.txt")}
            assert len(shas) == 3

    def test_non_utf8_file_name(self, hostile: dict[str, Any]) -> None:
        name = "name-\\xff\\xfe-not-utf8.txt"  # the printable form stored and printed
        status, _, doc_id, _ = hostile["rows"][name]
        assert status == "ok" and doc_id is not None
        with Index.open(hostile["work"] / "idx.db") as index:
            assert index.text(doc_id) == hostile["good"][2].replace("the", "THE")

    def test_counts_and_budget(self, hostile: dict[str, Any]) -> None:
        doc = hostile["json"]
        n_files = len(hostile["rows"])
        assert doc["files_seen"] == n_files
        assert doc["files_indexed"] + len(doc["errors"]) + len(doc["skipped"]) == n_files
        assert hostile["seconds"] < 60  # the bombs cost their budget, not the machine

    def test_rescan_reports_the_same_reasons_without_work(self, hostile: dict[str, Any]) -> None:
        again = run_cli("scan", "tree", "--index", "idx.db", "--json", "--jobs", "2", "--max-size", "500KB",
                    cwd=hostile["work"])
        assert again.returncode == 0, again.stderr
        doc = json.loads(again.stdout)
        assert doc["files_indexed"] == 0
        assert _issues(doc) == _issues(hostile["json"])


def test_html_nested_400000_levels_through_the_scan(tmp_path: Path) -> None:
    text = real_texts(1)[0]
    depth = 400_000
    root = tmp_path / "tree"
    root.mkdir()
    (root / "deep.html").write_text("<!DOCTYPE html><html><body>" + "<div><span>" * depth + text
                                    + "</span></div>" * depth + "</body></html>", encoding="utf-8")
    (root / "unclosed.html").write_text("<html><body>" + "<b><i>" * depth + text, encoding="utf-8")
    with Index.open(tmp_path / "i.db", readonly=False) as index:
        result = run_scan([root], index, None, Params(), jobs=2, per_file_timeout=60)
        assert result.errors == () and result.skipped == ()
        rows = {Path(f.path).name: f for f in index.files()}
        for name in ("deep.html", "unclosed.html"):
            assert rows[name].status == "ok"
            assert " ".join(index.text(rows[name].doc_id).split()) == " ".join(text.split())


# --------------------------------------------------------------------------
# files that vanish between the crawl and the read


def test_file_deleted_between_crawl_and_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crawl hook deletes chosen files right after they were stat()ed: reported, the scan goes on."""
    import scanner.sources.crawl

    texts = real_texts(6)
    root = tmp_path / "tree"
    root.mkdir()
    for i, text in enumerate(texts):
        (root / f"{'vanish' if i % 2 else 'keep'}{i}.txt").write_text(text, encoding="utf-8")
    real_crawl = scanner.sources.crawl.crawl

    def deleting_crawl(*args: Any, **kw: Any) -> Iterator[Any]:
        for entry in real_crawl(*args, **kw):
            if os.path.basename(entry.path).startswith("vanish"):
                os.unlink(entry.path)
            yield entry

    monkeypatch.setattr(scanner.sources.crawl, "crawl", deleting_crawl)
    with Index.open(tmp_path / "i.db", readonly=False) as index:
        result = run_scan([root], index, None, Params(), jobs=2)
        rows = {Path(f.path).name: f for f in index.files()}
    assert result.files_indexed == 3
    errors = {Path(e.path).name: e for e in result.errors}
    assert sorted(errors) == ["vanish1.txt", "vanish3.txt", "vanish5.txt"]
    for name, issue in errors.items():
        assert issue.status == "error" and "No such file" in issue.reason
        assert rows[name].status == "error" and "No such file" in rows[name].reason
    assert all(rows[f"keep{i}.txt"].status == "ok" for i in (0, 2, 4))


def test_many_files_deleted_by_a_thread_during_the_scan(tmp_path: Path) -> None:
    """Deletions race the crawl, the hash and the extraction: each file ends indexed or with a reason."""
    texts = real_texts(20)
    root = tmp_path / "tree"
    for d in range(10):
        (root / f"d{d}").mkdir(parents=True)
        for i, text in enumerate(texts):
            (root / f"d{d}" / f"f{i:02}.txt").write_text(f"{d} {i}\n{text}", encoding="utf-8")
    doomed = sorted(root.glob("d*/f*[13579].txt"))
    gone = threading.Event()

    def delete() -> None:
        rng = random.Random(4)
        order = doomed[:]
        rng.shuffle(order)
        for path in order:
            path.unlink()
            time.sleep(0.002)
        gone.set()

    thread = threading.Thread(target=delete)
    with Index.open(tmp_path / "i.db", readonly=False) as index:
        thread.start()
        result = run_scan([root], index, None, Params(), jobs=2)
        thread.join()
        rows = {f.path: f for f in index.files()}
        assert index.integrity_check() == "ok"
    assert gone.is_set()
    doomed_names = {f"{root}/{p.relative_to(root)}" for p in doomed}
    for path in sorted(str(p) for p in root.glob("d*/f*.txt")):  # survivors: all indexed
        assert rows[path].status == "ok", rows[path]
    reasons = {e.path: e.reason for e in result.errors} | {s.path: s.reason for s in result.skipped}
    for path in doomed_names:
        if path in rows and rows[path].status != "ok":
            assert reasons[path] and rows[path].reason == reasons[path]
        # else: read before it was deleted (indexed), or deleted before the crawl saw it
    assert set(reasons) <= doomed_names


# --------------------------------------------------------------------------
# a 50 MB text file


def test_50_mb_text_file_costs_at_most_its_budget(tmp_path: Path) -> None:
    """Reported as a timeout within --file-timeout (or indexed), memory capped; the rest is indexed."""
    texts = real_texts(40)
    block = "\n".join(texts)
    root = tmp_path / "tree"
    root.mkdir()
    with open(root / "big.txt", "w", encoding="utf-8") as handle:
        written = 0
        n = 0
        while written < 50 * 10**6:
            chunk = f"\n[{n}] " + block
            handle.write(chunk)
            written += len(chunk.encode("utf-8"))
            n += 1
    for i, text in enumerate(texts[:3]):
        (root / f"small{i}.txt").write_text(text, encoding="utf-8")
    assert (root / "big.txt").stat().st_size >= 50 * 10**6
    timeout = 4.0
    start = time.monotonic()
    proc = run_cli("scan", "tree", "--index", "i.db", "--json", "--jobs", "2", "--file-timeout", str(timeout),
               "--file-memory", "1GiB", cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert elapsed < timeout + 15
    conn = sqlite3.connect(tmp_path / "i.db")
    status, reason = conn.execute("SELECT status, reason FROM files WHERE path = 'tree/big.txt'").fetchone()
    ok = conn.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
    conn.close()
    if status in ("ok", "partial"):  # a fast machine indexed it within the budget: cut at max_chars, and said
        assert (status, ok) == ("partial", 3)
        assert doc["partial"] == [{"path": "tree/big.txt", "reason": f"partial: only part of the text was read: "
                                                                      f"cut at {ExtractLimits().max_chars} characters"}]
    else:  # over its time or its memory budget: the worker was killed and the file reported
        issues = doc["errors"] + [{"path": s["path"], "error": s["reason"]} for s in doc["skipped"]]
        assert issues == [{"path": "tree/big.txt", "error": f"{status}: {reason}"}]
        assert (status, reason) in (("timeout", f"no result within {timeout:g} s; worker killed"),
                                    ("too_large", "memory budget of 1024 MiB exceeded"))
        assert ok == 3 and doc["files_indexed"] == 3


# --------------------------------------------------------------------------
# extractor fuzzing: random and mutated real documents, each built-in extractor

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bench.fuzz_extract import (  # noqa: E402
    check_container,
    check_one,
    container_seeds,
    mutate,
    mutate_members,
    seeds,
)
from scanner.sources.plugins import list_extractors, list_unpackers, make_plugin_manager  # noqa: E402

_PM = make_plugin_manager(load_entry_points=False)
# bench's seeds, with the ones it takes from ../shared/corpora (a text, a web page, a PDF) replaced by
# files of this repository, so that the fuzzing is the same with or without the corpora
_SEEDS = seeds() | {
    "text": ("text/plain", documents(1, seed=6, low=3_000, high=5_000)[0].encode("utf-8")),
    "html": ("text/html", news_page(7).data),
    "pdfium": ("application/pdf", (FIXTURES / "minimal-document.pdf").read_bytes()),
    "pdfminer": ("application/pdf", (FIXTURES / "minimal-document.pdf").read_bytes()),
}
_OPS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2**30), st.integers(0, 2**16)), min_size=1, max_size=6)


def test_fuzz_seeds_cover_every_builtin_extractor() -> None:
    from scanner_plugins.ocr import tesseract_version

    assert {e.name for e in list_extractors(_PM)} == set(_SEEDS)
    # the image of text is read by OCR, or said unreadable where Tesseract is not installed
    image = "ocr" if tesseract_version() else "unsupported"
    for name, (mime, data) in _SEEDS.items():  # the unmutated seeds are real documents that read fine
        assert check_one(data, mime, _PM, name) == (image if name == "tesseract" else "ok"), name


@pytest.mark.parametrize("name", sorted(_SEEDS))
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(ops=_OPS, inside=st.booleans())
def test_mutated_documents_never_raise(name: str, ops: list[tuple[int, int, int]], inside: bool) -> None:
    mime, seed = _SEEDS[name]
    data = mutate_members(seed, ops) if inside and seed[:2] == b"PK" else mutate(seed, ops)
    check_one(data, mime, _PM, name)


@pytest.mark.parametrize("name", sorted(_SEEDS))
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=4096), magic=st.booleans())
def test_random_bytes_never_raise(name: str, data: bytes, magic: bool) -> None:
    mime, seed = _SEEDS[name]
    check_one((seed[:8] if magic else b"") + data, mime, _PM, name)


_CONTAINERS = container_seeds()


def test_fuzz_seeds_cover_every_builtin_unpacker() -> None:
    assert {u.name for u in list_unpackers(_PM)} == set(_CONTAINERS)
    for name, (mime, data) in _CONTAINERS.items():  # the unmutated seeds open, and their members read
        assert check_container(data, mime, _PM) in ("container", "ok"), name


@pytest.mark.parametrize("name", sorted(_CONTAINERS))
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(ops=_OPS, inside=st.booleans())
def test_mutated_containers_never_raise(name: str, ops: list[tuple[int, int, int]], inside: bool) -> None:
    mime, seed = _CONTAINERS[name]
    check_container(mutate_members(seed, ops) if inside and seed[:2] == b"PK" else mutate(seed, ops), mime, _PM)
