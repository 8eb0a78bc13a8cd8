"""TNEF streams (`winmail.dat`) as Outlook and Exchange write them ([MS-OXTNEF]): a signature, a key, then
attributes, each a level (message or attachment), an id (property and type), a length, the bytes and their
16-bit sum. Enough of the format for the tests: the version, the code page, a subject, a plain or a
compressed RTF body (the MAPI property PR_RTF_COMPRESSED in attMsgProps), and attachments (each a rendering
record, a file name and the data). The tests read what this writes with tnefparse too, an independent reader."""

from __future__ import annotations

import struct

_SIGNATURE, _KEY = 0x223E9F78, 0x0101
_MESSAGE, _ATTACHMENT = 0x01, 0x02
_STRING, _TEXT, _BYTE, _DWORD = 0x0001, 0x0002, 0x0006, 0x0008  # attribute types (atpString, atpText...)
_SUBJECT, _BODY, _ATTACH_DATA, _ATTACH_TITLE = 0x8004, 0x800C, 0x800F, 0x8010
_RENDER_DATA, _MSG_PROPS, _VERSION, _OEM_CODEPAGE = 0x9002, 0x9003, 0x9006, 0x9007
_PT_BINARY, _PR_RTF_COMPRESSED = 0x0102, 0x1009


def _attribute(level: int, kind: int, name: int, data: bytes) -> bytes:
    return struct.pack("<BHHI", level, name, kind, len(data)) + data + struct.pack("<H", sum(data) & 0xFFFF)


def tnef(subject: str, body: str = "", rtf: bytes | None = None, attachments: dict[str, bytes] | None = None) -> bytes:
    """A message in TNEF; `rtf`: an RTF document, compressed as Outlook keeps it (compressed-rtf's `compress`)."""
    from compressed_rtf import compress

    out = bytearray(struct.pack("<IH", _SIGNATURE, _KEY))
    out += _attribute(_MESSAGE, _DWORD, _VERSION, struct.pack("<I", 0x00010000))
    out += _attribute(_MESSAGE, _BYTE, _OEM_CODEPAGE, struct.pack("<II", 1252, 0))
    out += _attribute(_MESSAGE, _STRING, _SUBJECT, subject.encode("cp1252") + b"\0")
    if body:
        out += _attribute(_MESSAGE, _TEXT, _BODY, body.encode("cp1252"))
    if rtf is not None:
        packed = bytes(compress(rtf))
        value = struct.pack("<II", 1, len(packed)) + packed + b"\0" * (-len(packed) % 4)
        props = struct.pack("<IHH", 1, _PT_BINARY, _PR_RTF_COMPRESSED) + value
        out += _attribute(_MESSAGE, _BYTE, _MSG_PROPS, props)
    for name, data in (attachments or {}).items():
        render = struct.pack("<HIHHI", 1, 0xFFFFFFFF, 0xFFFF, 0xFFFF, 0)  # a file, no position, no picture
        out += _attribute(_ATTACHMENT, _BYTE, _RENDER_DATA, render)
        out += _attribute(_ATTACHMENT, _STRING, _ATTACH_TITLE, name.encode("cp1252") + b"\0")
        out += _attribute(_ATTACHMENT, _BYTE, _ATTACH_DATA, data)
    return bytes(out)
