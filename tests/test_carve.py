"""Text carved from files no reader reads. A leak pasted into a program's own binary format (a OneNote
notebook, a Works document, an app's cache) was `unsupported` ("no extractor for application/octet-stream")
and matched nothing; its runs of prose are now carved from its bytes, the file `partial`. Programs and media
are not carved, and noise is not prose."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from clirun import run_cli, the_one_match
from corpus import prose

from scanner.core.model import TextStatus
from scanner.sources.extract import extract_bytes
from scanner.sources.extract.carve import carvable, carve_text
from scanner.sources.plugins import make_plugin_manager


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _binary_with(texts: list[bytes], seed: int) -> bytes:
    """Random bytes with `texts` laid between them, each behind a length as a program's record would be."""
    rng = random.Random(seed)
    out = bytearray(rng.randbytes(2000))
    for text in texts:
        out += len(text).to_bytes(4, "little") + text + rng.randbytes(rng.randrange(500, 3000))
    return bytes(out)


def test_prose_is_carved_from_bytes_no_reader_reads(pm) -> None:
    paragraph = " ".join(prose(701, 80).split())
    note = "Réunion du conseil : le quai sera prolongé — budget voté à l'unanimité."
    data = _binary_with([paragraph.encode("utf-16-le"), note.encode("utf-8"), b"com.example.notes.SyncEngine",
                         b"/Users/ann/Library/Containers/notes", "kIMAttributeKey_9f3a".encode("utf-16-le")], 1)
    result = extract_bytes(data, "application/octet-stream", pm)
    assert (result.status, result.extractor) == (TextStatus.PARTIAL, "strings")
    assert result.text.split("\n") == [paragraph, note]  # identifiers and paths are not prose
    assert result.reason == ("binary content: contains NUL bytes: 2 runs of text carved from its bytes, "
                             "the rest unread")
    assert result.meta["carved"] == "1 runs of bytes, 1 of UTF-16 text"


def test_noise_programs_and_media_are_not_carved(pm) -> None:
    for seed in range(20):  # 20 x 200 KB of random bytes: no run of them reads as prose
        noise = random.Random(seed).randbytes(200_000)
        assert carve_text(noise).text == ""
    noise = random.Random(99).randbytes(50_000)
    unsupported = extract_bytes(noise, "application/octet-stream", pm)
    assert (unsupported.status, unsupported.reason) == (TextStatus.UNSUPPORTED,
                                                        "binary content: no text encoding fits")
    unknown = extract_bytes(_binary_with([b"The board agreed the budget for the new quay today."], 4),
                            "application/x-foo", pm)  # a type no reader reads at all
    assert (unknown.status, unknown.text) == (TextStatus.PARTIAL, "The board agreed the budget for the new quay today.")
    assert unknown.reason.startswith("no extractor for application/x-foo: 1 runs of text carved")
    program = _binary_with([b"Usage: the program copies the files you name to the folder you name."], 2)
    assert not carvable("application/x-executable") and not carvable("video/mp4") and carvable("application/x-foo")
    assert extract_bytes(program, "application/x-sharedlib", pm).status is TextStatus.UNSUPPORTED


def test_a_leak_in_a_file_of_an_unknown_format_is_found_by_check(tmp_path: Path) -> None:
    leak = prose(702, 250)
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "Meeting notes.one").write_bytes(_binary_with([" ".join(leak.split()).encode("utf-16-le")], 3))
    (tmp_path / "protected.txt").write_text(leak, encoding="utf-8")
    db = tmp_path / "i.db"
    scanned = run_cli("scan", str(folder), "--index", str(db), "--json", "--quiet")
    assert scanned.returncode == 0, scanned.stderr
    [partial] = json.loads(scanned.stdout)["partial"]
    assert partial["path"].endswith("Meeting notes.one") and "carved from its bytes" in partial["reason"]
    match = the_one_match(tmp_path / "protected.txt", db)
    assert match["path"] == str(folder / "Meeting notes.one") and match["containment_query_in_doc"] > 0.95
