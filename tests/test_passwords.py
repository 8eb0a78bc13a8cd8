"""Encrypted files read with the passwords an investigator gives (`--password`, `--passwords-file`).

Before, a locked PDF, an encrypted ZIP member or a 7z archive was listed `encrypted` ("a password is
needed") whatever the user knew, and a rescan never read it again. Now each given password is tried; a
file one opens is read and indexed, its row says it was decrypted, and no password is stored or printed.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from pathlib import Path

import py7zr
import pytest
from carriers import CARRIERS
from clirun import run_cli
from corpus import prose
from rawsql import raw
from textual.widgets import Input

from scanner.core.model import TextStatus
from scanner.faces.tui import make_app
from scanner.index import Index
from scanner.sources.extract import ExtractLimits, detect_mime, extract_bytes
from scanner.sources.plugins import make_plugin_manager

LOCKED_PDF = Path(__file__).resolve().parent / "fixtures" / "pdf" / "libreoffice-writer-password.pdf"
PDF_PASSWORD = "openpassword"  # tests/fixtures/README.md
SECRET = prose(41, 300)


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
        table.append(crc)
    return table


def zipcrypto(files: dict[str, bytes], password: str, encrypted: set[str]) -> bytes:
    """A ZIP of stored members, those named in `encrypted` with the traditional PKWARE cipher (APPNOTE 6.1):
    what `zip -P` writes, made here since the standard library only reads it."""
    table = _crc_table()

    def encrypt(data: bytes) -> bytes:
        keys = [0x12345678, 0x23456789, 0x34567890]

        def update(byte: int) -> None:
            keys[0] = (keys[0] >> 8) ^ table[(keys[0] ^ byte) & 0xFF]
            keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
            keys[2] = (keys[2] >> 8) ^ table[(keys[2] ^ (keys[1] >> 24)) & 0xFF]

        for byte in password.encode():
            update(byte)
        out = bytearray()
        for plain in data:
            temp = (keys[2] | 2) & 0xFFFF
            out.append(plain ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
            update(plain)
        return bytes(out)

    body, central = bytearray(), bytearray()
    for name, data in files.items():
        crc, raw_name, locked = zlib.crc32(data), name.encode(), name in encrypted
        stored = encrypt(os.urandom(11) + bytes([crc >> 24]) + data) if locked else data
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, int(locked), 0, 0, 0x21, crc, len(stored), len(data),
                             len(raw_name), 0)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, int(locked), 0, 0, 0x21, crc, len(stored),
                               len(data), len(raw_name), 0, 0, 0, 0, 0, len(body)) + raw_name
        body += header + raw_name + stored
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(files), len(files), len(central), len(body), 0)
    return bytes(body + central + end)


def _scan(folder: Path, db: Path, *options: str) -> dict:
    done = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--json", *options)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _indexed_memo(tmp_path: Path, seed: int) -> Path:
    """An index of one folder holding one memo (`prose(seed, 300)`): what a locked copy is checked against."""
    folder = tmp_path / "indexed"
    folder.mkdir()
    (folder / "memo.txt").write_text(prose(seed, 300))
    db = tmp_path / "indexed.db"
    _scan(folder, db)
    return db


def _rows(db: Path) -> dict[str, tuple[str, str, int | None]]:
    return {Path(path).name if "!/" not in path else path.split("/")[-1]: (status, reason, doc_id)
            for path, status, reason, doc_id in raw(db).execute("SELECT path, status, reason, doc_id FROM files")}


def _text(db: Path, doc_id: int | None) -> str:
    assert doc_id is not None
    with Index.open(db) as index:
        return index.text(doc_id) or ""


def test_encrypted_files_are_read_with_the_passwords_given(tmp_path: Path) -> None:
    folder = tmp_path / "seized"
    folder.mkdir()
    (folder / "locked.pdf").write_bytes(LOCKED_PDF.read_bytes())
    (folder / "bundle.zip").write_bytes(zipcrypto({"secret.txt": SECRET.encode(), "open.txt": prose(42, 200).encode()},
                                                  "hunter2", {"secret.txt"}))
    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w", password="hunter2", header_encryption=True) as archive:
        archive.writestr(prose(43, 300), "minutes.txt")
    (folder / "minutes.7z").write_bytes(buffer.getvalue())
    db = tmp_path / "index.db"

    told = run_cli("scan", str(folder), "--index", str(db), "--jobs", "0")
    assert told.returncode == 0 and "unchanged, read again" not in told.stdout
    assert "3 encrypted files not read: `--password TEXT` or `--passwords-file FILE`" in told.stderr  # said once
    rows = _rows(db)
    assert rows["locked.pdf"][:2] == ("encrypted", "encrypted PDF: a user password is needed")
    assert rows["secret.txt"][:2] == ("encrypted", "encrypted ZIP member: a password is needed")
    assert rows["open.txt"][0] == "ok"
    assert rows["minutes.7z"][:2] == ("encrypted", "7z archive with encrypted names: a password is needed")

    again = _scan(folder, db)  # a rescan without passwords lists the same locked files, the archive's member too
    assert again["files_unchanged"] == 3 and again["files_reread"] == 0
    assert sorted(Path(e["path"]).name for e in again["errors"]) == ["locked.pdf", "minutes.7z", "secret.txt"]
    wrong = _scan(folder, db, "--password", "letmein")  # locked files are read again whenever passwords are given
    assert wrong["files_reread"] == 3
    assert _rows(db)["locked.pdf"][1] == "encrypted PDF: none of the 1 password(s) given opens it"

    passwords = tmp_path / "passwords.txt"
    passwords.write_text(f"letmein\n{PDF_PASSWORD}\r\n\n")  # blank lines ignored, CRLF read as a line end
    opened = _scan(folder, db, "--passwords-file", str(passwords), "--password", "hunter2")
    assert opened["files_reread"] == 3 and not opened["errors"]
    rows = _rows(db)
    for name in ("locked.pdf", "secret.txt", "minutes.txt"):
        assert rows[name][1].endswith("decrypted with a password given to the scan"), rows[name]
    assert rows["open.txt"][1] == ""  # not locked: nothing to say
    assert SECRET.split()[0] in _text(db, rows["secret.txt"][2])
    assert prose(43, 300).split()[5] in _text(db, rows["minutes.txt"][2])
    assert _text(db, rows["locked.pdf"][2]).startswith("Lorem ipsum dolor sit amet")

    leak = tmp_path / "leak.txt"  # the decrypted member's text is matched like any other
    leak.write_text(SECRET)
    checked = run_cli("check", str(leak), "--index", str(db), "--json")
    [result] = json.loads(checked.stdout)["results"]
    assert result["matches"][0]["path"].endswith("bundle.zip!/secret.txt")
    assert result["matches"][0]["containment_query_in_doc"] == 1.0

    settled = _scan(folder, db, "--password", "hunter2")  # nothing locked is left: nothing read again
    assert settled["files_reread"] == 0
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("index.db*"))
    assert b"hunter2" not in stored and PDF_PASSWORD.encode() not in stored  # never stored


def test_check_reads_a_locked_file_with_a_password_and_a_bad_list_is_one_line(tmp_path: Path) -> None:
    db = _indexed_memo(tmp_path, 44)
    locked = tmp_path / "locked.zip"
    locked.write_bytes(zipcrypto({"copy.txt": prose(44, 300).encode()}, "hunter2", {"copy.txt"}))
    unopened = run_cli("check", str(locked), "--index", str(db), "--json")
    assert json.loads(unopened.stdout)["results"][0]["matches"] == []
    opened = run_cli("check", str(locked), "--index", str(db), "--json", "--password", "hunter2")
    [result] = json.loads(opened.stdout)["results"]
    assert result["matches"][0]["path"].endswith("memo.txt") and result["matches"][0]["containment_doc_in_query"] == 1.0
    assert "hunter2" not in opened.stdout + opened.stderr

    missing = run_cli("scan", str(tmp_path / "indexed"), "--index", str(db), "--passwords-file",
                      str(tmp_path / "nope.txt"))
    assert missing.returncode == 2 and "nope.txt" in missing.stderr
    assert len([line for line in missing.stderr.splitlines() if line.strip()]) <= 3


@pytest.mark.asyncio
async def test_tui_scan_tab_takes_a_password(tmp_path: Path) -> None:
    folder = tmp_path / "seized"
    folder.mkdir()
    (folder / "bundle.zip").write_bytes(zipcrypto({"secret.txt": SECRET.encode()}, "hunter2", {"secret.txt"}))
    db = tmp_path / "index.db"
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(folder)
        field = app.query_one("#scan-password", Input)
        field.value = "hunter2"
        assert field.password  # shown as dots
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    status, reason, doc_id = _rows(db)["secret.txt"]
    assert status == "ok" and reason == "decrypted with a password given to the scan"
    assert SECRET.split()[0] in _text(db, doc_id)


def test_a_password_protected_word_document_is_read_with_its_password() -> None:
    """A DOCX saved with a password is an OLE2 file holding the encrypted package (ECMA-376 agile encryption,
    written here by msoffcrypto-tool as Word writes it); its text is read once a given password verifies."""
    from msoffcrypto.format.ooxml import OOXMLFile

    text = prose(45, 3000)  # over 4 KB: msoffcrypto-tool writes smaller packages it cannot read back
    plain = CARRIERS["docx"](text, 0).data
    locked = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt("hunter2", locked)
    data, pm = locked.getvalue(), make_plugin_manager()
    assert detect_mime(data) == "application/encrypted"
    shut = extract_bytes(data, detect_mime(data), pm)
    assert (shut.status, shut.reason) == (TextStatus.ENCRYPTED, "password-protected Office document: a password is "
                                                                "needed")
    wrong = extract_bytes(data, detect_mime(data), pm, limits=ExtractLimits(passwords=("letmein",)))
    assert wrong.status is TextStatus.ENCRYPTED and wrong.reason.endswith("none of the 1 password(s) given opens it")
    opened = extract_bytes(data, detect_mime(data), pm, limits=ExtractLimits(passwords=("letmein", "hunter2")))
    assert opened.status is TextStatus.OK and opened.meta["decrypted"] == "decrypted with a password given to the scan"
    assert text.split()[0] in opened.text and text.split()[-1].rstrip(".") in opened.text


def test_watch_opens_a_locked_archive_with_a_password(tmp_path: Path) -> None:
    db = _indexed_memo(tmp_path, 46)
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "out.zip").write_bytes(zipcrypto({"memo-copy.txt": prose(46, 300).encode()}, "hunter2",
                                             {"memo-copy.txt"}))
    unopened = run_cli("watch", str(drop), "--index", str(db), "--once", "--jsonl")
    assert unopened.returncode == 0 and unopened.stdout == ""  # locked: no text to alert on, and not recorded
    opened = run_cli("watch", str(tmp_path / "drop"), "--index", str(db), "--once", "--jsonl", "--password",
                     "hunter2")
    assert opened.returncode == 1, opened.stderr
    [alert] = [json.loads(line) for line in opened.stdout.splitlines()]
    assert alert["path"].endswith("out.zip") and alert["matches"][0]["member"].endswith("out.zip!/memo-copy.txt")
    assert alert["severity"] == "high"  # the whole memo
    settled = run_cli("watch", str(drop), "--index", str(db), "--once", "--jsonl", "--password", "hunter2")
    assert settled.returncode == 0 and settled.stdout == ""  # opened and recorded: not checked again
    assert "hunter2" not in opened.stdout + opened.stderr


@pytest.mark.asyncio
async def test_tui_check_tab_opens_a_locked_file_with_its_password(tmp_path: Path) -> None:
    db = _indexed_memo(tmp_path, 47)
    locked = tmp_path / "out.zip"
    locked.write_bytes(zipcrypto({"memo-copy.txt": prose(47, 300).encode()}, "hunter2", {"memo-copy.txt"}))
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        app.query_one("#check-path", Input).value = str(locked)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "encrypted ZIP member: a password is needed" in str(app.query_one("#check-summary").render())
        app.query_one("#check-password", Input).value = "hunter2"
        app.query_one("#check-password", Input).focus()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        summary = str(app.query_one("#check-summary").render())
        assert "100.0% of this file is found in 1 source" in summary, summary
        # an archive of several members is checked member by member, as `scanner check` does (before, the tab
        # said "cannot check: container"): the member found elsewhere is shown, the others named
        bundle = tmp_path / "bundle.zip"
        bundle.write_bytes(zipcrypto({"notes.txt": prose(48, 200).encode(), "memo.txt": prose(47, 300).encode()},
                                     "", set()))
        app.query_one("#check-path", Input).value = str(bundle)
        app.query_one("#check-path", Input).focus()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        summary = str(app.query_one("#check-summary").render())
        assert summary.startswith(f"{bundle}!/memo.txt: 100.0% of this file is found in 1 source"), summary
        assert f"other members checked: {bundle}!/notes.txt: 0.0%" in summary


def test_compare_opens_locked_files_with_a_password(tmp_path: Path) -> None:
    read = extract_bytes(LOCKED_PDF.read_bytes(), "application/pdf", make_plugin_manager(),
                         limits=ExtractLimits(passwords=(PDF_PASSWORD,)))
    plain = tmp_path / "plain.txt"
    plain.write_text(read.text)  # what the PDF says, unlocked
    shut = run_cli("compare", str(LOCKED_PDF), str(plain))
    assert shut.returncode == 3 and "encrypted PDF: a user password is needed" in shut.stderr
    opened = run_cli("compare", str(LOCKED_PDF), str(plain), "--password", PDF_PASSWORD, "--json")
    assert opened.returncode == 0, opened.stderr
    assert json.loads(opened.stdout)["resemblance"] == 1.0


def _aes_zip(files: dict[str, bytes], password: str, bits: int, compression: int) -> bytes:
    """A ZIP whose members are encrypted by WinZip's AES scheme, written by pyzipper (an implementation
    independent of the reader under test, which interoperates with WinZip and 7-Zip)."""
    import pyzipper

    buffer = io.BytesIO()
    with pyzipper.AESZipFile(buffer, "w", compression=compression, encryption=pyzipper.WZ_AES) as archive:
        archive.setpassword(password.encode())
        archive.setencryption(pyzipper.WZ_AES, nbits=bits)
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _members(data: bytes, tmp_path: Path, *passwords: str) -> dict[str, tuple[str, str, str]]:
    """{member name: (status, reason, text)} of the archive `data` read with `passwords`; a member a password
    opened has for reason what its row in the index says."""
    from scanner.sources.extract import extract_file

    path = tmp_path / "archive.zip"
    path.write_bytes(data)
    _, result = extract_file(path, make_plugin_manager(), ExtractLimits(passwords=passwords))
    assert result.status is TextStatus.CONTAINER, result
    return {record.path.split("!/")[-1]: (got.status.value, got.reason or got.meta.get("decrypted", ""), got.text)
            for record, got in result.members}


@pytest.mark.parametrize("method", ["stored", "deflated", "bzip2", "lzma"])
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_aes_encrypted_zip_members_are_read_with_their_password(tmp_path: Path, bits: int, method: str) -> None:
    import pyzipper

    compression = {"stored": pyzipper.ZIP_STORED, "deflated": pyzipper.ZIP_DEFLATED,
                   "bzip2": pyzipper.ZIP_BZIP2, "lzma": pyzipper.ZIP_LZMA}[method]
    texts = {"secret.txt": SECRET, "minutes.txt": prose(44, 2000)}  # 2,000 words: deflate's output in chunks
    data = _aes_zip({name: text.encode() for name, text in texts.items()}, "hunter2", bits, compression)

    shut = _members(data, tmp_path)
    assert shut["secret.txt"][:2] == ("encrypted", "AES-encrypted ZIP member: a password is needed")
    wrong = _members(data, tmp_path, "letmein")
    assert wrong["minutes.txt"][:2] == ("encrypted", "AES-encrypted ZIP member: none of the 1 password(s) given "
                                                     "opens it")
    opened = _members(data, tmp_path, "letmein", "hunter2")
    for name, text in texts.items():
        status, reason, got = opened[name]
        assert (status, reason) == ("ok", "decrypted with a password given to the scan")
        assert got == text


def test_aes_encrypted_members_of_a_zip_read_from_disk(tmp_path: Path) -> None:
    """A ZIP over `max_bytes` is read from disk (`unpack_zip_file`): its AES members' bytes are read at their
    offsets in the file, as in the archive held whole."""
    import pyzipper

    texts = {"secret.txt": SECRET, "minutes.txt": prose(44, 2000)}
    data = _aes_zip({name: text.encode() for name, text in texts.items()}, "hunter2", 256, pyzipper.ZIP_STORED)
    path = tmp_path / "archive.zip"  # stored: the file is over max_bytes, each member under it
    path.write_bytes(data)
    from scanner.sources.extract import extract_file

    _, result = extract_file(path, make_plugin_manager(), ExtractLimits(max_bytes=len(data) - 1,
                                                                        passwords=("hunter2",)))
    assert result.status is TextStatus.CONTAINER and "read_from_disk" in result.meta
    assert {record.path.split("!/")[-1]: got.text for record, got in result.members} == texts
    assert {got.meta.get("decrypted") for _, got in result.members} == {"decrypted with a password given to the scan"}


def _patch_aes_version(data: bytes, crc: int) -> bytes:
    """The archive as AE-1 writes it: version 1 in both AES fields, the plain data's CRC in both headers."""
    patched = bytearray(data)
    for signature, crc_at in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
        at = patched.index(signature)
        patched[at + crc_at:at + crc_at + 4] = struct.pack("<I", crc)
    at = 0
    while (at := patched.find(b"\x01\x99\x07\x00", at)) >= 0:
        patched[at + 4:at + 6] = struct.pack("<H", 1)
        at += 4
    return bytes(patched)


def test_an_altered_aes_member_is_named_corrupt_not_read_or_locked(tmp_path: Path) -> None:
    """Its HMAC (AE-2) or CRC (AE-1) fails once a password passes the verifier: the member was damaged or
    changed after it was encrypted, which is evidence in itself; no altered text is indexed."""
    import pyzipper

    plain = SECRET.encode()
    data = _aes_zip({"secret.txt": plain}, "hunter2", 256, pyzipper.ZIP_STORED)
    altered = bytearray(data)
    at = data.index(b"PK\x01\x02") - 30  # inside the ciphertext, before the 10-byte authentication code
    altered[at] ^= 0x20
    status, reason, text = _members(bytes(altered), tmp_path, "hunter2")["secret.txt"]
    assert status == "corrupt" and text == ""
    assert reason.endswith("a password given passes its check but its authentication code does not match: "
                           "damaged or altered after it was encrypted")

    version_1 = _patch_aes_version(data, zlib.crc32(plain))
    assert _members(version_1, tmp_path, "hunter2")["secret.txt"][2] == SECRET
    wrong_crc = _patch_aes_version(data, zlib.crc32(plain) ^ 1)
    assert _members(wrong_crc, tmp_path, "hunter2")["secret.txt"][:2] == (
        "corrupt", "AES-encrypted ZIP member: its CRC does not match once decrypted")


def test_an_aes_member_that_inflates_past_its_budget_is_stopped(tmp_path: Path) -> None:
    import pyzipper

    from scanner.sources.extract import extract_file

    path = tmp_path / "bomb.zip"
    path.write_bytes(_aes_zip({"bomb.txt": b"\0" * 60_000_000}, "hunter2", 128, pyzipper.ZIP_DEFLATED))
    assert path.stat().st_size < 100_000
    _, result = extract_file(path, make_plugin_manager(), ExtractLimits(passwords=("hunter2",)))
    assert (result.status, result.reason) == (TextStatus.TOO_LARGE, "archive bomb: member 'bomb.txt' inflates over "
                                                                     "200x")  # as an unencrypted member would be


def test_a_locked_word_document_once_opened_gives_its_embedded_documents_too(tmp_path: Path) -> None:
    """A DOCX saved with a password whose leak is in a document embedded in it: the body alone was read once
    opened, the embedded document not at all."""
    from msoffcrypto.format.ooxml import OOXMLFile

    from scanner.sources.extract import extract_file

    leak = prose(46, 400)
    locked = io.BytesIO()
    OOXMLFile(io.BytesIO(CARRIERS["docx-embedded"](leak, 0).data)).encrypt("hunter2", locked)
    path = tmp_path / "report.docx"
    path.write_bytes(locked.getvalue())
    shut = extract_file(path, make_plugin_manager())[1]
    assert (shut.status, shut.members) == (TextStatus.ENCRYPTED, ())
    record, opened = extract_file(path, make_plugin_manager(), ExtractLimits(passwords=("letmein", "hunter2")))
    assert record.mime == "application/encrypted"  # the file is what it is on disk
    assert opened.meta["decrypted"] == "decrypted with a password given to the scan"
    assert "The attached document says more." in opened.text
    inner = {member.path.split("!/")[-1]: got for member, got in opened.members}
    embedded = inner["word/embeddings/Microsoft_Word_Document.docx"]
    assert embedded.status is TextStatus.OK and leak.split()[3] in embedded.text and leak.split()[-2] in embedded.text
