"""Outlook data files (.pst, .ost). Before, libmagic typed a PST as an Outlook item (.msg) and the item's
reader called it "not an Outlook message: no OLE2 header": a mailbox exported from Outlook, every message and
attachment in it, was one corrupt file. Stores written by tests/pstgen.py (no PST with a stated licence can
be fetched here), read by libpff: the same reader real stores go through."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from carriers import CARRIERS
from clirun import run_cli, the_one_match
from corpus import prose
from pstgen import PstAttachment, PstFolder, PstMessage, write_pst

from scanner.core.model import FileRecord, TextStatus
from scanner.sources.extract import detect_mime, extract_file, extract_or_open
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import make_plugin_manager
from scanner_plugins.pst import OUTSIDE_FOLDERS, PST_MIME

RTF = rb"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}\f0 The quay extension was {\b approved} by the board today.\par}"


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _opened(data: bytes, pm):
    record = FileRecord("mail.pst", len(data), 0, hashlib.sha256(data).hexdigest(), detect_mime(data))
    return extract_or_open(record, data, pm, ExtractLimits())


def _members(result) -> dict[str, object]:
    return {record.path.split("!/", 1)[-1]: got for record, got in result.members}


def _store() -> bytes:
    inbox = PstFolder("Inbox", [
        PstMessage("Quarterly figures", body="The harbour board met on Monday.\r\n", sender="Ann Smith",
                   sender_address="ann@example.org",
                   attachments=[PstAttachment("minutes.txt", prose(501, 120).encode())]),
        PstMessage("Lunch", html=b"<html><body><p>See you at <b>noon</b> by the quay.</p></body></html>"),
        PstMessage("Written in Word", rtf=RTF, sender="Zoë Ng", sender_address="zoe@example.org"),
        PstMessage("Re: figures", body="Noted.\r\n",
                   headers="Received: from mx.example.org\r\nFrom: =?utf-8?q?Ren=C3=A9e?= <renee@example.org>\r\n"
                           "To: ann@example.org\r\nSubject: Re: figures\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n"),
    ], [PstFolder("Projects/2026", [PstMessage("Deep", body=prose(502, 900))])])
    return write_pst(PstFolder("Top of Personal Folders", folders=[inbox, PstFolder("Sent Items")]))


def test_every_message_of_every_folder_is_a_member(pm) -> None:
    data = _store()
    assert detect_mime(data) == PST_MIME
    result = _opened(data, pm)
    assert result.status is TextStatus.CONTAINER
    members = _members(result)
    assert list(members) == [  # a folder's messages, then its sub-folders' (the slash in a name kept out of the path)
        "Inbox/message-0001.eml", "Inbox/message-0001.eml!/minutes.txt", "Inbox/message-0002.eml",
        "Inbox/message-0003.eml", "Inbox/message-0004.eml", "Inbox/Projects\N{DIVISION SLASH}2026/message-0001.eml"]
    first = members["Inbox/message-0001.eml"]
    assert first.text == ("Subject: Quarterly figures\nFrom: Ann Smith <ann@example.org>\n\n"
                          "The harbour board met on Monday.")
    assert members["Inbox/message-0001.eml!/minutes.txt"].text == prose(501, 120)
    assert members["Inbox/message-0002.eml"].text == "Subject: Lunch\n\nSee you at noon by the quay."
    assert members["Inbox/message-0003.eml"].text == ("Subject: Written in Word\nFrom: Zoë Ng <zoe@example.org>\n\n"
                                                      "The quay extension was approved by the board today.")
    # the server's headers where the store kept them: the sender's name as sent, the date it was sent
    replied = members["Inbox/message-0004.eml"]
    assert replied.text == "Subject: Re: figures\nFrom: Renée <renee@example.org>\n\nNoted."
    assert replied.meta["date"] == "Mon, 02 Nov 2026 10:00:00 +0000"
    deep = members["Inbox/Projects\N{DIVISION SLASH}2026/message-0001.eml"]  # a body of 5+ KB: kept outside the heap
    assert deep.status is TextStatus.OK and deep.text.endswith(prose(502, 900).strip())


def test_an_offline_store_is_read_and_an_outlook_item_stays_one(pm) -> None:
    offline = write_pst(PstFolder("Root", [PstMessage("Cached", body=prose(503, 40))]), client=b"SO")
    assert detect_mime(offline) == PST_MIME
    assert _members(_opened(offline, pm))["message-0001.eml"].text.endswith(prose(503, 40).strip())
    item = CARRIERS["msg"](prose(504, 40), 0).data
    assert detect_mime(item) == "application/vnd.ms-outlook"


def test_what_a_message_cannot_carry_is_named_with_its_reason(pm) -> None:
    message = PstMessage("Forwarded", body="See the two attached.\r\n", attachments=[
        PstAttachment("original.msg", b"", method=5), PstAttachment("share.lnk", b"", method=2),
        PstAttachment("kept.txt", prose(505, 60).encode())])
    result = _opened(write_pst(PstFolder("Root", [message])), pm)
    members = _members(result)
    assert members["message-0001.eml"].meta["attachments"] == "1"
    assert members["message-0001.eml!/kept.txt"].text == prose(505, 60)
    nested = members["message-0001.eml: original.msg"]
    assert (nested.status, nested.reason) == (TextStatus.UNSUPPORTED,
                                              "an attached Outlook item (a nested message): not opened, as libpff's "
                                              "Python binding does not reach it")
    linked = members["message-0001.eml: share.lnk"]
    assert (linked.status, linked.reason) == (TextStatus.EMPTY, "a link to a file kept outside the message, not in it")


def test_messages_no_folder_reaches_are_read(pm) -> None:
    """A deleted folder's messages may still be in the file: libpff finds them outside the folder tree."""
    lost = prose(506, 200)
    data = write_pst(PstFolder("Root", [PstMessage("Kept", body="Still here.\r\n")]),
                     orphans=[PstMessage("Deleted draft", body=lost)])
    members = _members(_opened(data, pm))
    assert members[f"{OUTSIDE_FOLDERS}/message-0001.eml"].text == f"Subject: Deleted draft\n\n{lost.strip()}"
    assert members["message-0001.eml"].text == "Subject: Kept\n\nStill here."


def test_a_damaged_store_is_said_in_one_line(pm, tmp_path: Path) -> None:
    data = _store()
    cut = tmp_path / "cut.pst"
    cut.write_bytes(data[:0x4800])  # the header and the allocation map: the trees it points to are gone
    _, result = extract_file(cut, pm)
    assert result.status is TextStatus.CORRUPT and "\n" not in result.reason
    assert result.reason.startswith("not a readable Outlook data file: ")


def test_a_store_over_the_size_held_in_memory_is_read_from_disk(pm, tmp_path: Path) -> None:
    """An Outlook export runs to gigabytes: over `max_bytes`, libpff reads it from the file, the same members."""
    data = _store()
    path = tmp_path / "archive.pst"
    path.write_bytes(data)
    _, result = extract_file(path, pm, ExtractLimits(max_bytes=len(data) // 4))
    assert result.status is TextStatus.CONTAINER and result.meta["read_from_disk"].startswith("over max_bytes")
    held = _opened(data, pm)
    texts = {name: m.text for name, m in _members(result).items()}
    assert texts == {name: m.text for name, m in _members(held).items()} and len(texts) == 6


def test_a_store_left_damaged_by_older_readers_is_read_again_and_its_leak_found(tmp_path: Path) -> None:
    """An index from before this reader holds the store as a damaged Outlook item: the next scan reads it again,
    and `check` of the protected text finds the message it was pasted into."""
    leak = prose(507, 300)
    folder = tmp_path / "mail"
    folder.mkdir()
    (folder / "export.pst").write_bytes(write_pst(PstFolder("Top", folders=[PstFolder("Inbox", [
        PstMessage("Notes", body=prose(508, 200)), PstMessage("Fwd: draft", body=leak)])])))
    (tmp_path / "protected.txt").write_text(leak, encoding="utf-8")
    db = tmp_path / "i.db"

    def scan() -> dict:
        proc = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--json", "--quiet")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    scan()
    conn = sqlite3.connect(db, isolation_level=None)  # as readers 16 left it
    conn.execute("DELETE FROM files WHERE path LIKE '%!/%'")
    conn.execute("UPDATE files SET status = 'corrupt', mime = 'application/vnd.ms-outlook', readers = 16, "
                 "reason = 'not an Outlook message: no OLE2 header', doc_id = NULL")
    conn.close()
    assert scan()["files_reread"] == 1
    match = the_one_match(tmp_path / "protected.txt", db)
    assert match["path"] == f"{folder}/export.pst!/Inbox/message-0002.eml"
    assert match["containment_query_in_doc"] > 0.95
    assert scan()["files_reread"] == 0


def test_a_store_whose_folder_tree_is_damaged_still_gives_what_lies_outside_it(pm) -> None:
    """libpff raises MemoryError ("unable to create folder object") for a folder it cannot build from damaged
    bytes: that is the store's damage, said in one line, not the scan running out of memory."""
    lost = prose(509, 200)
    data = bytearray(write_pst(PstFolder("Top of Personal Folders", [PstMessage("Kept", body="Still here.\r\n")]),
                               orphans=[PstMessage("Deleted draft", body=lost)]))
    start = data.find("Top of Personal Folders".encode("utf-16-le")) // 64 * 64
    while data[start + 2] != 0xEC:  # back to the root folder's heap, whose signature byte is 0xEC
        start -= 64
    data[start + 2] = 0
    members = _members(_opened(bytes(data), pm))
    assert (members["root folder"].status, members["root folder"].reason) == (
        TextStatus.CORRUPT, "no root folder: unable to create folder object")
    assert members[f"{OUTSIDE_FOLDERS}/message-0001.eml"].text == f"Subject: Deleted draft\n\n{lost.strip()}"
    alone = bytearray(write_pst(PstFolder("Top of Personal Folders", [PstMessage("Kept", body="Still here.")])))
    alone[start + 2] = 0  # the same block: nothing else to read
    result = _opened(bytes(alone), pm)
    assert (result.status, result.reason) == (
        TextStatus.CORRUPT, "not a readable Outlook data file: no root folder: unable to create folder object")
