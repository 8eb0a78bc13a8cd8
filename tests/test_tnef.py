"""Outlook's messages as other mail programs receive them (`winmail.dat`, TNEF), Outlook items whose body
is kept only as compressed RTF, and Apple Mail's message files. Before, a winmail.dat was "no extractor for
application/vnd.ms-tnef": the message's body and every attachment inside it were read nowhere; an .msg
written in rich text gave its subject alone; an .emlx was text. Real streams from tnefparse's test examples
(tests/fixtures/tnef, LGPL-3.0), and streams written by tests/tnefgen.py, which tnefparse reads too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from carriers import CARRIERS, rtf
from cfbwriter import write_compound_file
from clirun import run_cli
from corpus import prose
from tnefgen import tnef

from scanner.core.model import TextStatus
from scanner.sources.extract import detect_mime, extract_bytes, extract_file
from scanner.sources.plugins import make_plugin_manager

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tnef"


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _members(result) -> dict[str, object]:
    return {record.path.split("!/")[-1]: got for record, got in result.members}


def test_real_winmail_streams_give_their_body_and_attachments(pm) -> None:
    record, two = extract_file(FIXTURES / "two-files.tnef", pm)
    assert record.mime == "application/vnd.ms-tnef"
    assert two.text == "Subject: two files" and two.meta["attachments"] == "2"
    members = _members(two)
    assert list(members) == ["AUTHORS", "README"]
    assert "Authors of tnef" in members["AUTHORS"].text
    assert members["README"].status is TextStatus.OK and "TNEF is a program for unpacking" in members["README"].text

    _, rich = extract_file(FIXTURES / "rtf.tnef", pm)  # the body only as compressed RTF, one byte short in it
    assert rich.status is TextStatus.OK and "Greg Allen" in rich.text and "\\rtf" not in rich.text
    _, html = extract_file(FIXTURES / "body.tnef", pm)
    assert html.text.startswith("THE BILL OF RIGHTS") and "<" not in html.text


def test_a_written_stream_reads_the_same_in_tnefparse_and_here(pm) -> None:
    import tnefparse

    leak = prose(81, 200)
    data = tnef("Minutes", body="The notes are attached.\r\n", attachments={"notes.txt": leak.encode()})
    theirs = tnefparse.TNEF(data)  # the writer's own check: an independent reader agrees
    assert [(a.long_filename(), a.data) for a in theirs.attachments] == [("notes.txt", leak.encode())]
    result = extract_bytes(data, detect_mime(data), pm)
    assert result.text == "Subject: Minutes\n\nThe notes are attached."


def test_a_mail_to_another_program_is_read_through_its_winmail_dat(tmp_path: Path) -> None:
    """The leak in an attachment inside winmail.dat, and in a body kept only as rich text: a scan indexes
    them as members of the mail's member, and `check` finds the source of each."""
    leak = prose(82, 300)
    folder = tmp_path / "mail"
    folder.mkdir()
    for variant in (0, 1):
        carrier = CARRIERS["eml-winmail"](leak, variant)
        (folder / carrier.filename).write_bytes(carrier.data)
    (tmp_path / "source.txt").write_text(leak)
    db = tmp_path / "index.db"
    scanned = run_cli("scan", str(folder), "--index", str(db), "--json", "--quiet")
    assert scanned.returncode == 0, scanned.stderr
    checked = run_cli("check", str(tmp_path / "source.txt"), "--index", str(db), "--json", "--quiet")
    [result] = json.loads(checked.stdout)["results"]
    found = {m["path"].split(str(folder) + "/")[-1]: m["containment_query_in_doc"] for m in result["matches"]}
    assert set(found) == {"eml-winmail-0.eml!/winmail.dat!/notes-0.txt", "eml-winmail-1.eml!/winmail.dat"}, found
    assert all(share > 0.95 for share in found.values()), found  # the leak whole in each


def test_an_outlook_item_written_in_rich_text_gives_its_body(pm) -> None:
    leak = prose(83, 200)
    carrier = CARRIERS["msg-rtf"](leak, 0)
    result = extract_bytes(carrier.data, detect_mime(carrier.data), pm)
    assert result.status is TextStatus.OK and result.text.startswith("Subject: Minutes 0\n\n")
    assert " ".join(leak.split()[:12]) in " ".join(result.text.split())


def test_a_damaged_rich_text_body_is_said_and_the_rest_kept(pm) -> None:
    from compressed_rtf import compress

    packed = bytearray(compress(rtf(prose(84, 100), 0).data))
    packed[20] ^= 0xFF  # past the header: its CRC no longer matches
    data = write_compound_file({"__substg1.0_0037001F": "Budget".encode("utf-16-le"),
                                "__substg1.0_10090102": bytes(packed)})
    result = extract_bytes(data, detect_mime(data), pm)
    assert result.status is TextStatus.PARTIAL and result.text == "Subject: Budget"
    assert result.reason.startswith("the body is not read: compressed RTF body unreadable: ")


def test_a_cut_winmail_dat_says_what_it_lost(pm, tmp_path: Path) -> None:
    """tnefparse reads a stream cut short without a word: the attachments after the cut were missing, and
    the file said nothing of them."""
    data = (FIXTURES / "two-files.tnef").read_bytes()
    path = tmp_path / "winmail.dat"
    path.write_bytes(data[:2000])  # inside the second attachment
    _, result = extract_file(path, pm)
    assert result.status is TextStatus.PARTIAL and result.text == "Subject: two files"
    cut = "TNEF stream cut short: attribute 15 declares 244 bytes, 184 remain"  # the first attachment's data
    assert result.reason == f"{cut}: what precedes it is read"
    assert list(_members(result)) == ["AUTHORS"]  # the README after the cut is lost, and the cut one said
    assert result.meta["container"] == (f"{cut} (in attachment 'AUTHORS', read as far as it goes); the 1 member(s) "
                                        "before it were read")
    path.write_bytes(data[:60])  # inside the message class, before the subject: nothing read, and why
    shut = extract_file(path, pm)[1]
    assert (shut.status, shut.reason) == (TextStatus.CORRUPT, "TNEF stream cut short: attribute 3 declares 24 "
                                                              "bytes, 11 remain")


def test_an_apple_mail_message_file_is_read_as_the_mail_it_holds(pm, tmp_path: Path) -> None:
    """Apple Mail keeps each message as an .emlx file: its length on a line, the message, then a property list.
    It was typed text: the headers and the base64 of its attachments were indexed as words, and a leak sent as
    an attachment was not found."""
    leak = prose(85, 200)
    carrier = CARRIERS["emlx"](leak, 0)
    assert detect_mime(carrier.data) == "message/x-emlx"
    result = extract_bytes(carrier.data, "message/x-emlx", pm)
    assert result.text.startswith("Subject: ") and "The notes are attached." in result.text
    assert "plist" not in result.text and "base64" not in result.text
    (tmp_path / carrier.filename).write_bytes(carrier.data)
    _, opened = extract_file(tmp_path / carrier.filename, pm)
    attached = {record.path.split("!/")[-1]: got for record, got in opened.members}
    assert " ".join(leak.split()[:10]) in " ".join(attached["notes-0.txt"].text.split())


def test_an_outlook_item_attached_to_an_outlook_item_is_read_as_a_mail(pm) -> None:
    """A mail forwarded as an attachment is kept as a message storage inside the .msg, not as bytes: it was
    "an attached Outlook item (a nested message): not opened", its body and its own attachments read nowhere.
    It is now a member written as a mail, whose attachments (an item attached to it too) are members of it."""
    from hashlib import sha256

    from scanner.core.model import FileRecord
    from scanner.sources.extract import extract_or_open

    leak, inner_leak = prose(85, 200), prose(86, 150)
    outer = "__attach_version1.0_#00000000"
    item = f"{outer}/__substg1.0_3701000D"
    deeper = f"{item}/__attach_version1.0_#00000000/__substg1.0_3701000D"
    data = write_compound_file({
        "__substg1.0_0037001F": "Fwd: minutes".encode("utf-16-le"),
        "__substg1.0_1000001F": "See the mail below.\r\n".encode("utf-16-le"),
        f"{outer}/__substg1.0_3707001F": "Minutes of the board".encode("utf-16-le"),
        f"{item}/__substg1.0_0037001F": "Minutes of the board".encode("utf-16-le"),
        f"{item}/__substg1.0_0C1A001F": "Zoë Ng".encode("utf-16-le"),
        f"{item}/__substg1.0_0C1F001F": "zoe@example.org".encode("utf-16-le"),
        f"{item}/__substg1.0_1000001F": leak.encode("utf-16-le"),
        f"{item}/__attach_version1.0_#00000000/__substg1.0_3707001F": "Earlier".encode("utf-16-le"),
        f"{deeper}/__substg1.0_0037001F": "Earlier".encode("utf-16-le"),
        f"{deeper}/__attach_version1.0_#00000000/__substg1.0_3707001F": "notes.txt".encode("utf-16-le"),
        f"{deeper}/__attach_version1.0_#00000000/__substg1.0_37010102": inner_leak.encode(),
        f"{deeper}/__attach_version1.0_#00000001/__substg1.0_3707001F": "share.lnk".encode("utf-16-le"),
    })
    result = extract_or_open(FileRecord("fwd.msg", len(data), 0, sha256(data).hexdigest(), detect_mime(data)),
                             data, pm)
    members = {record.path: got for record, got in result.members}
    forwarded = members["fwd.msg!/Minutes of the board.eml"]
    assert forwarded.text == f"Subject: Minutes of the board\nFrom: Zoë Ng <zoe@example.org>\n\n{leak.strip()}"
    assert members["fwd.msg!/Minutes of the board.eml!/Earlier.eml"].text == "Subject: Earlier"
    assert members["fwd.msg!/Minutes of the board.eml!/Earlier.eml!/notes.txt"].text == inner_leak
    link = members["fwd.msg!/Minutes of the board.eml: Earlier.eml: share.lnk"]
    assert (link.status, link.reason) == (TextStatus.EMPTY, "an attachment without data (a link or a reference)")
