"""Apple iWork documents (Pages, Numbers, Keynote since 2013). A `.pages` file is a ZIP whose `Index/*.iwa`
members hold the document as Snappy-compressed protocol buffers: opened as an archive, its `.iwa` members
were binary content ("contains NUL bytes"), the document's text read nowhere. Archives written with cramjam's
Snappy compressor, an independent implementation."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from carriers import iwa_archive
from clirun import run_cli, the_one_match
from corpus import prose

from scanner.core.model import FileRecord, TextStatus
from scanner.sources.extract import detect_mime, extract_bytes, extract_or_open
from scanner.sources.plugins import make_plugin_manager


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _pages(paragraphs: list[str]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("Index/Document.iwa", iwa_archive(paragraphs, chunk=1000))  # several chunks
        package.writestr("Index/Metadata.iwa", iwa_archive(["Pages"]))
        package.writestr("Metadata/DocumentIdentifier", "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
    return data.getvalue()


def test_a_pages_documents_paragraphs_are_read_from_its_archive(pm) -> None:
    paragraphs = [" ".join(prose(801 + n, 90).split()) for n in range(4)]
    data = _pages(paragraphs)
    result = extract_or_open(FileRecord("essay.pages", len(data), 0, hashlib.sha256(data).hexdigest(),
                                        detect_mime(data)), data, pm)
    members = {record.path: (record.mime, got) for record, got in result.members}
    mime, body = members["essay.pages!/Index/Document.iwa"]
    assert mime == "application/x-iwork-archive" and body.status is TextStatus.OK
    lines = body.text.split("\n")  # a paragraph a line, across the archive's chunks, and at most the printable
    assert [line[:len(p)] for line, p in zip(lines, paragraphs, strict=True)] == paragraphs  # byte of a tag after it
    assert all(len(line) - len(p) <= 1 for line, p in zip(lines, paragraphs, strict=True))
    assert body.meta["carved"].startswith("4 runs of prose carved from its protocol buffers; strings that are not")
    assert members["essay.pages!/Index/Metadata.iwa"][1].status is TextStatus.EMPTY  # "Pages": no prose


def test_bytes_that_only_start_like_an_archive_are_not_one(pm) -> None:
    fake = b"\x00\x10\x00\x00" + b"not snappy at all, this is text" + bytes(32)
    assert detect_mime(fake) == "application/octet-stream"
    damaged = bytearray(iwa_archive([prose(805, 60)]))
    damaged[1:4] = (len(damaged) + 100).to_bytes(3, "little")  # a chunk longer than the file: cut short
    cut = extract_bytes(bytes(damaged), "application/x-iwork-archive", pm)
    assert (cut.status, cut.reason) == (TextStatus.CORRUPT, "not an iWork archive: chunk 1 of the archive cut "
                                                            "short or not a chunk")
    paragraphs = [" ".join(prose(808 + n, 90).split()) for n in range(4)]
    whole = iwa_archive(paragraphs, chunk=1000)
    first = 4 + int.from_bytes(whole[1:4], "little")
    tail = extract_bytes(whole[:first + 10], "application/x-iwork-archive", pm)  # cut inside the second chunk
    assert (tail.status, tail.reason) == (TextStatus.PARTIAL, "chunk 2 of the archive cut short or not a chunk: "
                                                              "what precedes it is read")
    assert tail.text and paragraphs[0].startswith(tail.text.split("\n")[0][:200])


def test_a_leak_pasted_into_a_pages_document_is_found_by_check(tmp_path: Path) -> None:
    leak = prose(806, 250)
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "essay.pages").write_bytes(_pages([" ".join(prose(807, 120).split()), " ".join(leak.split())]))
    (tmp_path / "source.txt").write_text(leak, encoding="utf-8")
    db = tmp_path / "i.db"
    assert run_cli("scan", str(folder), "--index", str(db), "--quiet").returncode == 0
    match = the_one_match(tmp_path / "source.txt", db)
    assert match["path"] == f"{folder / 'essay.pages'}!/Index/Document.iwa"
    assert match["containment_query_in_doc"] > 0.95
