"""A tiny dependency-free PDF writer for fixtures: wrapped Helvetica text, several pages.

Used to make sample_corpus's PDF and PDFs inside tests, so both are
reproducible without a word processor. `python tests/pdfgen.py IN.txt OUT.pdf`.
"""

from __future__ import annotations

import sys
import textwrap
import zlib
from pathlib import Path

_LINES_PER_PAGE = 48


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf_bytes(text: str, *, compress: bool = True) -> bytes:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, 90) or [""])
    pages = [lines[i : i + _LINES_PER_PAGE] for i in range(0, max(len(lines), 1), _LINES_PER_PAGE)]
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, page_lines in enumerate(pages):
        ops = ["BT", "/F1 10 Tf", "12 TL", "50 760 Td"]
        for line in page_lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("cp1252", "replace")
        content_id = page_ids[i] + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {content_id} 0 R >>".encode()
        )
        if compress:
            data = zlib.compress(stream)
            objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
        else:
            objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def write_text_pdf(path: Path, text: str) -> Path:
    path.write_bytes(text_pdf_bytes(text))
    return path


if __name__ == "__main__":
    write_text_pdf(Path(sys.argv[2]), Path(sys.argv[1]).read_text(encoding="utf-8"))
