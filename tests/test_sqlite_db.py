"""SQLite databases: the chat and app stores a phone or a desktop program keeps. A text pasted into a chat is in
a cell of such a file, which was "no extractor for application/vnd.sqlite3". Real databases written by SQLite
(the standard library's sqlite3) in the shapes chat programs use."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from clirun import run_cli, the_one_match
from corpus import prose

from scanner.core.model import FileRecord, TextStatus
from scanner.sources.extract import detect_mime, extract_or_open
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import make_plugin_manager


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _chat_db(path: Path, messages: list[str], wal: bool = False) -> bytes:
    """A chat store shaped like iMessage's: handles, messages with their text, attachments with a picture's
    bytes and a transcript kept as a UTF-8 BLOB; a view and a full-text index over the messages."""
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode = WAL")
    connection.executescript("""
        CREATE TABLE handle (ROWID INTEGER PRIMARY KEY, id TEXT, service TEXT);
        CREATE TABLE message (ROWID INTEGER PRIMARY KEY, handle_id INTEGER, text TEXT, date INTEGER);
        CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY, transfer_name TEXT, body BLOB);
        CREATE VIEW endless AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n;
        CREATE VIRTUAL TABLE message_search USING fts5(text);
    """)
    connection.execute("INSERT INTO handle VALUES (1, '+15555550123', 'iMessage')")
    connection.executemany("INSERT INTO message (handle_id, text, date) VALUES (1, ?, ?)",
                           [(text, 700_000_000 + n) for n, text in enumerate(messages)])
    connection.executemany("INSERT INTO message_search (text) VALUES (?)", [(text,) for text in messages])
    connection.execute("INSERT INTO attachment VALUES (1, 'photo.heic', ?)", (bytes(range(256)) * 4,))
    connection.execute("INSERT INTO attachment VALUES (2, 'transcript.txt', ?)", (b"Call notes: the quay.",))
    connection.commit()
    connection.close()
    return path.read_bytes()


def _opened(data: bytes, pm, limits: ExtractLimits | None = None):
    record = FileRecord("chat.db", len(data), 0, hashlib.sha256(data).hexdigest(), detect_mime(data))
    return extract_or_open(record, data, pm, limits or ExtractLimits())


def test_every_table_gives_its_text_a_line_a_row(pm, tmp_path: Path) -> None:
    leak = " ".join(prose(601, 120).split())
    data = _chat_db(tmp_path / "chat.db", ["Are you there?", leak, "ok 👍"])
    assert detect_mime(data) == "application/vnd.sqlite3"
    result = _opened(data, pm)
    assert result.status is TextStatus.OK
    handles, messages, attachments, *search = result.text.split("\n\n")
    assert handles == "+15555550123\tiMessage"
    assert messages.split("\n") == ["Are you there?", leak, "ok 👍"]  # the numbers (ids, dates) are not text
    assert attachments.split("\n") == ["photo.heic", "transcript.txt\tCall notes: the quay."]
    assert search == ["\n".join(["Are you there?", leak, "ok 👍"])]  # the index's copy; the view is never run
    assert result.meta["blobs"] == "1 BLOB values that hold no text, not read"  # the picture
    assert result.meta["tables"] == ("handle (1 rows); message (3 rows); attachment (2 rows); "
                                     "message_search_content (3 rows)")


def test_a_database_in_wal_mode_is_read(pm, tmp_path: Path) -> None:
    data = _chat_db(tmp_path / "wal.db", ["Meet at the quay at nine."], wal=True)
    assert data[18:20] == b"\x02\x02"
    assert "Meet at the quay at nine." in _opened(data, pm).text


def test_a_damaged_database_is_said_in_one_line(pm, tmp_path: Path) -> None:
    data = bytearray(_chat_db(tmp_path / "chat.db", ["hello"] * 50))
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema's page
    result = _opened(bytes(data), pm)
    assert result.status is TextStatus.CORRUPT and "\n" not in result.reason
    assert result.reason.startswith("not a readable SQLite database: ")


def test_the_reading_stops_in_time_and_says_what_it_left(pm, tmp_path: Path, monkeypatch) -> None:
    import scanner_plugins.sqlite_db as sqlite_db

    data = _chat_db(tmp_path / "chat.db", [prose(602 + n, 30) for n in range(200)])
    monkeypatch.setattr(sqlite_db, "_SECONDS", 0.0)
    monkeypatch.setattr(sqlite_db, "_CHECK_EVERY", 1)
    result = _opened(data, pm)
    assert (result.status, result.text) == (TextStatus.PARTIAL, "")
    assert result.reason == "read for 0 s: 4 of 4 tables not read (handle, message, attachment, message_search_content)"


def test_a_leak_pasted_into_a_chat_is_found_by_check(tmp_path: Path) -> None:
    leak = prose(603, 250)
    folder = tmp_path / "phone"
    folder.mkdir()
    _chat_db(folder / "sms.db", ["Running late", " ".join(leak.split()), "See you"])
    (tmp_path / "protected.txt").write_text(leak, encoding="utf-8")
    db = tmp_path / "i.db"
    assert run_cli("scan", str(folder), "--index", str(db), "--quiet").returncode == 0
    match = the_one_match(tmp_path / "protected.txt", db)
    assert match["path"] == str(folder / "sms.db") and match["containment_query_in_doc"] > 0.95


def _live_copy(folder: Path, messages: list[str]) -> tuple[bytes, bytes]:
    """chat.db and chat.db-wal as copied from a running chat program: its latest transactions are in the log
    alone, not yet checkpointed into the database."""
    live = folder / "live"
    live.mkdir()
    connection = sqlite3.connect(live / "chat.db")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT, date INTEGER)")
    connection.commit()
    for number, text in enumerate(messages):
        connection.execute("INSERT INTO message (text, date) VALUES (?, ?)", (text, number))
        connection.commit()
    copies = (live / "chat.db").read_bytes(), (live / "chat.db-wal").read_bytes()
    connection.close()
    return copies


def test_a_chat_programs_newest_messages_are_read_from_its_write_ahead_log(pm, tmp_path: Path) -> None:
    """A database copied from a running program holds its latest transactions in `chat.db-wal` alone: the
    database was read, the log was "no extractor" (application/octet-stream), and the newest messages lost."""
    long = " ".join(prose(604, 900).split())  # longer than a page: it goes on in overflow pages of the log
    database, log = _live_copy(tmp_path, ["Running late", "The quay at nine, then.", long])
    assert "The quay at nine" not in _opened(database, pm).text  # not yet in the database
    assert detect_mime(log) == "application/x-sqlite3-wal"
    result = _opened(log, pm)
    assert result.status is TextStatus.OK
    assert result.text.split("\n") == ["Running late", "The quay at nine, then.", long]  # each row once
    assert result.meta["rows"] == "3" and int(result.meta["frames"]) >= 4
    cut = _opened(log[:-100], pm)  # the copy taken while a frame was being written
    assert cut.status is TextStatus.PARTIAL and cut.reason.startswith("the last frame is cut short (")
    assert cut.text.split("\n")[:2] == ["Running late", "The quay at nine, then."]


def test_messages_deleted_from_a_chat_are_read_from_its_free_pages(pm, tmp_path: Path) -> None:
    """Deleting a chat message after a leak frees its page, which keeps the row until SQLite uses the page
    again: the deleted messages are read as a marked region (an evasion that worked is evidence)."""
    leak = " ".join(prose(605, 200).split())
    path = tmp_path / "chat.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA secure_delete = OFF")  # SQLite's default on most systems
    connection.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT, date INTEGER)")
    kept = [f"Kept message {n}: see you at the quay." for n in range(5)]
    filler = [" ".join(prose(606 + n, 60).split()) for n in range(60)]  # pages enough to free whole ones
    connection.executemany("INSERT INTO message (text, date) VALUES (?, ?)",
                           [(text, n) for n, text in enumerate([*kept, *filler[:30], leak, *filler[30:]])])
    connection.commit()
    connection.execute("DELETE FROM message WHERE ROWID > 5")
    connection.commit()
    connection.close()
    result = _opened(path.read_bytes(), pm)
    assert result.body.split("\n") == kept  # the live rows
    [(text, label)] = result.region_texts
    assert label == "rows deleted from the database, still in its free pages"
    assert leak in text.split("\n")
    assert result.meta["deleted_rows"].endswith("rows deleted from the database, still in its free pages")


def attributed_body(text: str) -> bytes:
    """An NSAttributedString archived as iMessage keeps a message's text in `attributedBody` (NeXTSTEP's
    typedstream: the string, then its attribute runs and their dictionary)."""
    data = text.encode("utf-8")

    def length(count: int) -> bytes:
        return bytes([count]) if count < 0x80 else b"\x81" + count.to_bytes(2, "little")

    return (b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@\x84\x84\x84\x12NSAttributedString\x00\x84\x84\x08NSObject"
            b"\x00\x85\x92\x84\x84\x84\x08NSString\x01\x94\x84\x01+" + length(len(data)) + data
            + b"\x86\x84\x02iI\x01" + length(len(text)) + b"\x92\x84\x84\x84\x0cNSDictionary\x00\x94\x84\x01i\x01"
            b"\x92\x84\x96\x96\x1d__kIMMessagePartAttributeName\x86\x92\x84\x84\x84\x08NSNumber\x00\x84\x84\x07"
            b"NSValue\x00\x94\x84\x01*\x84\x99\x99\x00\x86\x86\x86")


def test_messages_kept_only_as_archived_attributed_strings_are_read(pm, tmp_path: Path) -> None:
    """iMessage keeps the text of many messages only in `attributedBody`, an archived NSAttributedString, its
    `text` column empty: those cells were BLOBs "not read". Apps keep NSKeyedArchiver property lists too."""
    import plistlib

    import typedstream

    leak = " ".join(prose(607, 150).split())
    body = attributed_body(leak)
    assert typedstream.unarchive_from_data(body).contents[0].values[0].value == leak  # an independent reader
    note = plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(1)},
                           "$objects": ["$null", {"NS.string": "Draft: the quay at nine.",
                                                  "$class": plistlib.UID(2)},
                                        {"$classname": "NSMutableString",
                                         "$classes": ["NSMutableString", "NSString", "NSObject"]}]},
                          fmt=plistlib.FMT_BINARY)
    path = tmp_path / "chat.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT, attributedBody BLOB)")
    connection.executemany("INSERT INTO message (text, attributedBody) VALUES (?, ?)",
                           [("Running late", attributed_body("Running late")), (None, body), (None, note),
                            (None, b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@\x84\x84\x84\x12NSAttr")])  # cut short
    connection.commit()
    connection.close()
    result = _opened(path.read_bytes(), pm)
    assert result.text.split("\n") == ["Running late\tRunning late", leak, "Draft: the quay at nine."]
    assert result.meta["blobs"] == "1 BLOB values that hold no text, not read"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field of a protocol buffer (wire type 2)."""
    tag, size, out = (number << 3) | 2, len(payload), bytearray()
    for value in (tag, size):
        while value >= 0x80:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out) + payload


def test_a_note_kept_as_a_compressed_protocol_buffer_is_read(pm, tmp_path: Path) -> None:
    """Apple Notes keeps each note's text in a gzip-compressed protocol buffer (ZICNOTEDATA.ZDATA), beside the
    formatting runs: a BLOB that is not text. Its content is inflated and its prose carved."""
    import gzip

    leak = " ".join(prose(608, 160).split())
    runs = b"".join(_field(5, b"\x08\x01\x10" + bytes([n])) for n in range(1, 6))  # attribute runs: no text
    note = gzip.compress(_field(2, b"\x08\x00" + _field(3, b"\x08\x00" + _field(2, leak.encode()) + runs)))
    path = tmp_path / "NoteStore.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE ZICNOTEDATA (Z_PK INTEGER PRIMARY KEY, ZNOTE INTEGER, ZDATA BLOB)")
    connection.execute("INSERT INTO ZICNOTEDATA (ZNOTE, ZDATA) VALUES (1, ?)", (note,))
    connection.commit()
    connection.close()
    result = _opened(path.read_bytes(), pm)
    # carved: the text, and at most the printable byte of the next field's tag ("*": field 5, a run)
    assert result.text.startswith(leak) and len(result.text) <= len(leak) + 1 and "blobs" not in result.meta


def test_a_scan_of_the_folder_holding_its_index_does_not_read_the_index(tmp_path: Path) -> None:
    """`scanner scan .` writes ./scanner.db by default: now that SQLite databases are read, the index (and
    its write-ahead log and lock) would be read as documents of the folder, their paths and reasons its text.
    They are skipped, each said."""
    (tmp_path / "notes.txt").write_text(prose(609, 200), encoding="utf-8")
    for _ in range(2):  # the second scan finds the index and its companions written by the first
        scanned = run_cli("scan", ".", "--json", "--quiet", cwd=tmp_path)
        assert scanned.returncode == 0, scanned.stderr
    report = json.loads(scanned.stdout)
    own = {entry["path"]: entry["reason"] for entry in report["skipped"]}
    assert own and all(reason == "skipped: the scan's own index" for reason in own.values())
    assert "./scanner.db" in own and report["files_indexed"] == 0 and report["files_unchanged"] == 1


def test_a_database_over_the_size_held_in_memory_is_read_where_it_lies(pm, tmp_path: Path) -> None:
    """A Mac's or a phone's chat store runs to gigabytes, over `max_bytes`: it was `too_large`, none of it read.
    It is opened where it lies, read-only and immutable (no file written beside it), with the same text and
    the same deleted rows as when held whole."""
    from scanner.sources.extract import extract_file

    path = tmp_path / "chat.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")  # as chat programs keep it: read without its log here
    connection.execute("PRAGMA secure_delete = OFF")
    connection.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT)")
    connection.executemany("INSERT INTO message (text) VALUES (?)", [(" ".join(prose(610 + n, 60).split()),)
                                                                     for n in range(80)])
    connection.commit()
    connection.execute("DELETE FROM message WHERE ROWID > 10")
    connection.commit()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    held = _opened(path.read_bytes(), pm)
    before = sorted(p.name for p in tmp_path.iterdir())
    record, result = extract_file(path, pm, ExtractLimits(max_bytes=path.stat().st_size // 2))
    assert result.meta["read_from_disk"].startswith("over max_bytes") and result.status is TextStatus.OK
    assert (result.text, result.regions) == (held.text, held.regions) and len(held.region_texts) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no journal, log or lock left beside it


def test_a_phones_backup_is_opened_and_its_chat_database_read(pm, tmp_path: Path) -> None:
    """`adb backup` writes a phone's apps and their data as one `.ab` file (a header, then a deflated TAR): it
    was one unreadable file; its members, a chat database among them, are read now; one encrypted with its
    owner's password is said, not read."""
    from carriers import android_backup_of, sqlite_chat

    leak = " ".join(prose(611, 120).split())
    files = {"apps/com.whatsapp/db/msgstore.db": sqlite_chat(leak, 1).data,
             "apps/com.example/f/notes.txt": prose(612, 50).encode()}
    for compressed in (True, False):
        data = android_backup_of(files, compressed)
        assert detect_mime(data) == "application/x-android-backup"
        result = _opened(data, pm)
        members = {record.path.split("!/", 1)[1]: got for record, got in result.members}
        assert list(members) == list(files) and leak in members["apps/com.whatsapp/db/msgstore.db"].text
    from scanner.sources.extract import extract_file

    path = tmp_path / "backup.ab"  # a phone's backup runs to gigabytes: over max_bytes, read from disk
    path.write_bytes(android_backup_of(files))
    _, on_disk = extract_file(path, pm, ExtractLimits(max_bytes=path.stat().st_size // 2))
    assert on_disk.meta["read_from_disk"].startswith("over max_bytes")
    assert [record.path.split("!/", 1)[1] for record, _ in on_disk.members] == list(files)
    locked = _opened(android_backup_of(files, encryption="AES-256"), pm)
    assert (locked.status, locked.reason) == (TextStatus.ENCRYPTED,
                                              "an Android backup encrypted with its owner's password (AES-256)")
    cut = _opened(android_backup_of(files)[:400], pm)
    assert cut.status is TextStatus.CORRUPT and "\n" not in cut.reason
