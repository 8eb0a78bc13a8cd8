"""A tiny PDF writer for fixtures: wrapped Helvetica text, several pages, optionally encrypted.

Used to make sample_corpus's PDF and PDFs inside tests, so both are
reproducible without a word processor. `python tests/pdfgen.py IN.txt OUT.pdf`.

`encrypted_pdf_bytes` writes the same documents under the PDF standard
security handler (ISO 32000-1 7.6.3 and ISO 32000-2 7.6.4): revision 2
(RC4, 40-bit key), 3 (RC4, 128-bit), 4 (RC4 or AES-128 crypt filters) and 6
(AES-256), with a user password (needed to open the file) or only an owner
password (the file opens with the empty password). Plain text needs nothing
beyond the standard library; AES needs `cryptography` (a dependency of
pdfminer.six, so always installed with the scanner).
"""

from __future__ import annotations

import hashlib
import random
import struct
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

_LINES_PER_PAGE = 48


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf_bytes(text: str, *, compress: bool = True) -> bytes:
    return _pdf_bytes(text, compress=compress)


def _pdf_string(text: str) -> str:
    """A PDF text string of any characters: UTF-16BE with its byte-order mark, in hex."""
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"


def annotated_pdf_bytes(text: str, notes: list[tuple[str, str]], fields: dict[str, str]) -> bytes:
    """The text document, its first page holding annotations (`notes`: (subtype, contents): "Text" for a
    sticky note, "FreeText" for a text box drawn on the page, "Highlight"...) and a form of text fields
    (`fields`: name -> value, each a widget on the first page), none of it in the page's text layer."""
    lines = sum(len(textwrap.wrap(paragraph, 90) or [""]) for paragraph in text.split("\n"))
    first = 3 + 2 * -(-max(lines, 1) // _LINES_PER_PAGE) + 1  # the number of the first object added
    extra: list[bytes] = []
    for subtype, contents in notes:
        extra.append(f"<< /Type /Annot /Subtype /{subtype} /Rect [50 40 300 60] /Contents {_pdf_string(contents)} "
                     "/DA (/Helv 10 Tf 0 g) /QuadPoints [50 60 300 60 50 40 300 40] >>".encode())
    field_ids = []
    for name, value in fields.items():
        field_ids.append(first + len(extra))
        extra.append(f"<< /Type /Annot /Subtype /Widget /FT /Tx /T {_pdf_string(name)} /V {_pdf_string(value)} "
                     "/Rect [50 80 550 120] /P 4 0 R /DA (/Helv 10 Tf 0 g) >>".encode())
    annots = " ".join(f"{first + k} 0 R" for k in range(len(extra)))
    form = (f" /AcroForm << /Fields [{' '.join(f'{i} 0 R' for i in field_ids)}] /DA (/Helv 0 Tf 0 g) >>"
            if fields else "")
    return _pdf_bytes(text, first_page=f" /Annots [{annots}]", catalog=form, extra=extra)


def attached_pdf_bytes(text: str, files: dict[str, bytes]) -> bytes:
    """The text document with `files` embedded in it (the catalog's EmbeddedFiles name tree: a PDF's
    attachments, as a reader's paper-clip panel lists them)."""
    lines = sum(len(textwrap.wrap(paragraph, 90) or [""]) for paragraph in text.split("\n"))
    first = 3 + 2 * -(-max(lines, 1) // _LINES_PER_PAGE) + 1
    extra: list[bytes] = []
    names = []
    for name, content in files.items():
        stream, spec = first + len(extra), first + len(extra) + 1
        extra.append(b"<< /Type /EmbeddedFile /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        extra.append(f"<< /Type /Filespec /F {_pdf_string(name)} /UF {_pdf_string(name)} /EF << /F {stream} 0 R >> >>"
                     .encode())
        names.append(f"{_pdf_string(name)} {spec} 0 R")
    return _pdf_bytes(text, catalog=f" /Names << /EmbeddedFiles << /Names [{' '.join(names)}] >> >>", extra=extra)


def picture_pdf_bytes(text: str, pictures: list[tuple[int, int, bytes]]) -> bytes:
    """The text document with grayscale pictures ((width, height, 8-bit pixels, a row after another)) drawn side
    by side at the foot of its first page, 500 points wide together, below its text (keep that text under 40
    lines): screenshots pasted into a report, pixels in no text layer."""
    lines = sum(len(textwrap.wrap(paragraph, 90) or [""]) for paragraph in text.split("\n"))
    first = 3 + 2 * -(-max(lines, 1) // _LINES_PER_PAGE) + 1
    streams, ops = [], []
    drawn = 500 / len(pictures)
    for k, (width, height, pixels) in enumerate(pictures):
        data = zlib.compress(pixels)
        streams.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                       b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(data))
                       + data + b"\nendstream")
        ops.append(f"q {drawn - 10:.2f} 0 0 {(drawn - 10) * height / width:.2f} {50 + k * drawn:.2f} 40 cm /Im{k} Do Q")
    names = " ".join(f"/Im{k} {first + k} 0 R" for k in range(len(pictures)))
    return _pdf_bytes(text, extra=streams, first_resources=f" /XObject << {names} >>", first_ops=" ".join(ops))


def properties_pdf_bytes(text: str, info: dict[str, str]) -> bytes:
    """`text` as a PDF whose Info dictionary (File > Properties: Title, Subject, Keywords, Author...) holds
    `info`, each value a UTF-16 text string."""
    return _pdf_bytes(text, info=info)


def xmp_pdf_bytes(text: str, xmp: bytes) -> bytes:
    """`text` (one page of it) as a PDF whose only properties are an XMP packet, the catalog's /Metadata (an
    unfiltered stream, as the XMP specification asks): what PDF 2.0 writers keep instead of an Info dictionary."""
    return _pdf_bytes(text, metadata=xmp)


def _pdf_bytes(text: str, *, compress: bool = True, encrypt: Callable[[int, bytes], bytes] | None = None,
               trailer: str = "", first_page: str = "", catalog: str = "", extra: list[bytes] | None = None,
               first_resources: str = "", first_ops: str = "", info: dict[str, str] | None = None,
               metadata: bytes | None = None) -> bytes:
    """The document; `encrypt(object number, data)` encrypts each stream (the only strings are in them)
    and `trailer` is added to the trailer dictionary (/Encrypt and /ID); `first_page` and `catalog` to
    those dictionaries, and the `extra` objects after all others (`annotated_pdf_bytes`); `first_resources`
    to the first page's resources and `first_ops` to the end of its content (`picture_pdf_bytes`); `info`:
    the document's Info dictionary, the last object; `metadata`: an XMP packet, the catalog's /Metadata, after
    the `extra` objects."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, 90) or [""])
    pages = [lines[i : i + _LINES_PER_PAGE] for i in range(0, max(len(lines), 1), _LINES_PER_PAGE)]
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    if metadata is not None:  # after the catalog, pages, font, each page's two objects and the extra ones
        catalog += f" /Metadata {3 + 2 * len(pages) + len(extra or []) + 1} 0 R"
    objects.append(f"<< /Type /Catalog /Pages 2 0 R{catalog} >>".encode())
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, page_lines in enumerate(pages):
        ops = ["BT", "/F1 10 Tf", "12 TL", "50 760 Td"]
        for line in page_lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        if i == 0 and first_ops:
            ops.append(first_ops)
        stream = "\n".join(ops).encode("cp1252", "replace")
        content_id = page_ids[i] + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >>"
            f"{first_resources if i == 0 else ''} >> "
            f"/Contents {content_id} 0 R{first_page if i == 0 else ''} >>".encode()
        )
        data = zlib.compress(stream) if compress else stream
        if encrypt is not None:
            data = encrypt(content_id, data)
        flate = b" /Filter /FlateDecode" if compress else b""
        objects.append(b"<< /Length %d%s >>\nstream\n" % (len(data), flate) + data + b"\nendstream")
    objects.extend(extra or [])
    if metadata is not None:
        objects.append(b"<< /Type /Metadata /Subtype /XML /Length %d >>\nstream\n" % len(metadata) + metadata
                       + b"\nendstream")
    if info:
        objects.append(("<< " + " ".join(f"/{key} {_pdf_string(value)}" for key, value in info.items())
                        + " >>").encode())
        trailer += f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, trailer.encode(), xref)
    return bytes(out)


# --------------------------------------------------------------------------
# the standard security handler

_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")
_PERMISSIONS = -4  # every permission granted (bits 3-12 set; bits 1-2 must be 0)


def _rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out = bytearray(len(data))
    i = j = 0
    for n, byte in enumerate(data):
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out[n] = byte ^ s[(s[i] + s[j]) % 256]
    return bytes(out)


def _aes_cbc(key: bytes, iv: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def _aes_ecb(key: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def _pkcs7(data: bytes) -> bytes:
    n = 16 - len(data) % 16
    return data + bytes([n]) * n


def _padded(password: bytes) -> bytes:
    return (password + _PAD)[:32]


def _rc4_rounds(key: bytes, data: bytes) -> bytes:
    """Algorithms 3 and 5: 19 more RC4 passes, the key XORed with the pass number."""
    for i in range(1, 20):
        data = _rc4(bytes(b ^ i for b in key), data)
    return data


def _r6_hash(password: bytes, salt: bytes, udata: bytes) -> bytes:
    """Algorithm 2.B (ISO 32000-2): the hash of revision 6."""
    k = hashlib.sha256(password + salt + udata).digest()
    rounds = 0
    while True:
        e = _aes_cbc(k[:16], k[16:32], (password + k + udata) * 64)
        k = (hashlib.sha256, hashlib.sha384, hashlib.sha512)[sum(e[:16]) % 3](e).digest()
        rounds += 1
        if rounds >= 64 and e[-1] <= rounds - 32:
            return k[:32]


def encrypted_pdf_bytes(text: str, *, revision: int, user_password: str = "", owner_password: str = "owner",
                        aes: bool = False, seed: int = 0) -> bytes:
    """`text` as a PDF encrypted with the standard security handler of `revision` (2, 3, 4 or 6; AES for
    6, and for 4 when `aes`). With an empty `user_password` any reader opens it (only the owner password
    is set); otherwise that password is needed. The same arguments give the same bytes."""
    rng = random.Random(f"pdf {seed} {revision} {aes}")
    user, owner = user_password.encode("utf-8"), (owner_password or user_password).encode("utf-8")
    file_id = rng.randbytes(16)
    ident = f" /ID [<{file_id.hex()}> <{file_id.hex()}>]"
    if revision == 6:
        key = rng.randbytes(32)
        u_salts, o_salts = rng.randbytes(16), rng.randbytes(16)
        u = _r6_hash(user, u_salts[:8], b"") + u_salts
        ue = _aes_cbc(_r6_hash(user, u_salts[8:], b""), bytes(16), key)
        o = _r6_hash(owner, o_salts[:8], u) + o_salts
        oe = _aes_cbc(_r6_hash(owner, o_salts[8:], u), bytes(16), key)
        perms = _aes_ecb(key, struct.pack("<i", _PERMISSIONS) + b"\xff\xff\xff\xffTadb" + rng.randbytes(4))
        dictionary = (f"<< /Filter /Standard /V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent "
                      f"/DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF /O <{o.hex()}> /U <{u.hex()}> "
                      f"/OE <{oe.hex()}> /UE <{ue.hex()}> /Perms <{perms.hex()}> /P {_PERMISSIONS} >>")

        def encrypt(number: int, data: bytes) -> bytes:
            iv = rng.randbytes(16)
            return iv + _aes_cbc(key, iv, _pkcs7(data))
    elif revision in (2, 3, 4):
        length = 5 if revision == 2 else 16
        h = hashlib.md5(_padded(owner)).digest()
        if revision >= 3:
            for _ in range(50):
                h = hashlib.md5(h[:length]).digest()
        o = _rc4(h[:length], _padded(user))
        if revision >= 3:
            o = _rc4_rounds(h[:length], o)
        h = hashlib.md5(_padded(user) + o + struct.pack("<i", _PERMISSIONS) + file_id).digest()
        if revision >= 3:
            for _ in range(50):
                h = hashlib.md5(h[:length]).digest()
        key = h[:length]
        if revision == 2:
            u = _rc4(key, _PAD)
        else:
            u = _rc4_rounds(key, _rc4(key, hashlib.md5(_PAD + file_id).digest())) + rng.randbytes(16)
        use_aes = revision == 4 and aes
        if revision == 2:
            head = "/V 1 /R 2"
        elif revision == 3:
            head = "/V 2 /R 3 /Length 128"
        else:
            head = (f"/V 4 /R 4 /Length 128 /CF << /StdCF << /CFM /{'AESV2' if use_aes else 'V2'} /AuthEvent "
                    "/DocOpen /Length 16 >> >> /StmF /StdCF /StrF /StdCF")
        dictionary = f"<< /Filter /Standard {head} /O <{o.hex()}> /U <{u.hex()}> /P {_PERMISSIONS} >>"

        def encrypt(number: int, data: bytes) -> bytes:
            salt = b"sAlT" if use_aes else b""
            object_key = hashlib.md5(key + number.to_bytes(3, "little") + b"\0\0" + salt).digest()
            object_key = object_key[: min(length + 5, 16)]
            if use_aes:
                iv = rng.randbytes(16)
                return iv + _aes_cbc(object_key, iv, _pkcs7(data))
            return _rc4(object_key, data)
    else:
        raise ValueError(f"no revision {revision} of the standard security handler here")
    body = _pdf_bytes(text, encrypt=encrypt, trailer="")
    # the /Encrypt dictionary is one more object, after the others; the xref is rebuilt to hold it
    return _with_encrypt_object(body, dictionary, ident)


def _with_encrypt_object(pdf: bytes, dictionary: str, ident: str) -> bytes:
    head, _, _ = pdf.partition(b"xref\n")
    offsets = []
    pos = 0
    while True:
        pos = head.find(b" 0 obj\n", pos)
        if pos < 0:
            break
        start = head.rfind(b"\n", 0, pos) + 1
        offsets.append(start)
        pos += 1
    number = len(offsets) + 1
    out = bytearray(head)
    offsets.append(len(out))
    out += b"%d 0 obj\n" % number + dictionary.encode() + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (number + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R /Encrypt %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        number + 1, number, ident.encode(), xref)
    return bytes(out)


def write_text_pdf(path: Path, text: str) -> Path:
    path.write_bytes(text_pdf_bytes(text))
    return path


if __name__ == "__main__":
    write_text_pdf(Path(sys.argv[2]), Path(sys.argv[1]).read_text(encoding="utf-8"))
