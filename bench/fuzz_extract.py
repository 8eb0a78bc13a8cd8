"""Extractor fuzzing: random and mutated real documents into every built-in extractor.

    .venv/bin/python bench/fuzz_extract.py --examples 2000 [--seed 1] [--timeout 10]

Seeds are real files (a PAN-13 text, a readability test page, a small real
PDF) and containers built with the stdlib (DOCX, ODT, EPUB, mail). Each
example is one mutation chain (bit flips, truncation, inserted or duplicated
ranges, random splices) fed to `extract_bytes` with each extractor preferred.
The property: it never raises, always returns a TextStatus and a one-line
reason; no example may take longer than --timeout seconds. Containers (ZIP,
tar.gz, 7z, mbox, mail, Outlook .msg, winmail.dat, a web archive, each holding a text, a mail and a
nested ZIP) are mutated the same way and opened with `extract_or_open`: the
container and every member end with a status and a one-line reason. Prints counts per
extractor and status. tests/test_hostile.py runs the same code with fewer
examples (hypothesis picks the mutations there).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import time
import zipfile
from collections import Counter
from email.message import EmailMessage
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # cfbwriter: OLE2 files for the Outlook seeds

CORPORA = REPO.parent / "shared" / "corpora"
TEXT = CORPORA / "pan13-text-alignment-subset" / "src"
HTML = CORPORA / "html-readability-test-pages" / "test-pages"
PDF = CORPORA / "pdf-samples" / "py-pdf-sample-files" / "001-trivial" / "minimal-document.pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT = "application/vnd.oasis.opendocument.text"
EPUB = "application/epub+zip"
PROSE = ("The committee met on Thursday to review the findings of the survey. Café owners, naïve "
         "investors and the river authority each gave evidence; the report follows. ") * 4


def _zip(members: list[tuple[str, str | bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            if name == "mimetype":
                zf.writestr(zipfile.ZipInfo("mimetype"), data)
            else:
                zf.writestr(name, data)
    return buf.getvalue()


def seeds() -> dict[str, tuple[str, bytes]]:
    """extractor name -> (MIME, a well-formed real or stdlib-built document)."""
    text = next((p.read_bytes() for p in sorted(TEXT.glob("*.txt")) if p.stat().st_size > 3000), PROSE.encode())
    html = next((p.read_bytes()[:60_000] for p in sorted(HTML.glob("*/source.html"))),
                f"<html><body><p>{PROSE}</p></body></html>".encode())
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    docx = _zip([("[Content_Types].xml", "<Types/>"), ("word/document.xml",
                  f'<?xml version="1.0"?><w:document {w}><w:body><w:p><w:r><w:t>{PROSE}</w:t></w:r></w:p>'
                  '<w:p><w:r><w:t>Second paragraph.</w:t><w:tab/><w:t>After a tab.</w:t></w:r></w:p>'
                  '</w:body></w:document>')])
    odt = _zip([("mimetype", ODT), ("content.xml",
                 '<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:'
                 'office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
                 f'<text:h>Title</text:h><text:p>{PROSE}</text:p></office:text></office:body></office:document-content>')])
    epub = _zip([("mimetype", EPUB),
                 ("META-INF/container.xml", '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:'
                  'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>'),
                 ("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest>'
                  '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine>'
                  '<itemref idref="c1"/></spine></package>'),
                 ("OEBPS/c1.xhtml", f"<html><body><p>{PROSE}</p></body></html>")])
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "a@example.org", "b@example.org", "Minutes"
    mail.set_content(PROSE)
    mail.add_alternative(f"<html><body><p>{PROSE}</p></body></html>", subtype="html")
    pdf = PDF.read_bytes() if PDF.is_file() else b"%PDF-1.4\n%%EOF\n"
    return {"text": ("text/plain", text), "html": ("text/html", html), "docx": (DOCX, docx), "odt": (ODT, odt),
            "epub": (EPUB, epub), "eml": ("message/rfc822", bytes(mail)), "pdfium": ("application/pdf", pdf),
            "pdfminer": ("application/pdf", pdf), **_issue_18_seeds()}


def _issue_18_seeds() -> dict[str, tuple[str, bytes]]:
    """PPTX, XLSX, ODP, ODS, RTF, Word 97, Outlook, PowerPoint and Excel 97, an SVG diagram, a notebook, JSON,
    XML, drawings (ODG, Visio), LaTeX, winmail.dat and an image of text (tests/officegen.py, cfbwriter.py,
    carriers.py, tnefgen.py)."""
    from carriers import CARRIERS, iwa_archive
    from cfbwriter import write_compound_file
    from officegen import make_odf, make_ppt, make_pptx, make_xls, make_xlsx, odf_paragraphs, text_shape, word97
    from tnefgen import tnef

    from scanner_plugins import office

    pptx = make_pptx({"slide1.xml": text_shape(PROSE), "slide2.xml": text_shape("Second slide.")},
                     ["slide1.xml", "slide2.xml"], notes={"slide2.xml": text_shape("Notes for the speaker.")})
    xlsx = make_xlsx([("Minutes", "sheet1.xml", '<row><c t="s"><v>0</v></c><c><v>42</v></c></row>')],
                     [f"<t>{PROSE}</t>"])
    table = ("<office:spreadsheet><table:table table:name='Minutes'><table:table-row><table:table-cell>"
             f"{odf_paragraphs(PROSE)}</table:table-cell></table:table-row></table:table></office:spreadsheet>")
    slides = f"<office:presentation><draw:page>{odf_paragraphs(PROSE)}</draw:page></office:presentation>"
    rtf = ("{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Times;}}\\f0 " + PROSE.replace("é", "\\'e9").replace("ï", "\\'ef")
           + "\\par Caf\\u233? second paragraph.}").encode("ascii")
    msg = write_compound_file({"__substg1.0_0037001F": "Minutes".encode("utf-16-le"),
                               "__substg1.0_1000001F": PROSE.encode("utf-16-le")})
    seeds = {"pptx": (office.PPTX_MIME, pptx), "xlsx": (office.XLSX_MIME, xlsx),
             "ods": (office.ODS_MIME, make_odf(office.ODS_MIME, table)),
             "odp": (office.ODP_MIME, make_odf(office.ODP_MIME, slides)),
             "rtf": ("text/rtf", rtf), "antiword": ("application/msword", word97(PROSE)),
             "msg": ("application/vnd.ms-outlook", msg),
             "ppt": ("application/vnd.ms-powerpoint", make_ppt([PROSE, "Second slide."], ["Notes."], box="A box.")),
             "xls": (office.XLS_MIME, make_xls([("Minutes", [[PROSE, 42], ["Second row.", 3.5]])])),
             "svg": ("image/svg+xml", CARRIERS["svg"](PROSE, 0).data),
             "notebook": ("application/x-ipynb+json", CARRIERS["ipynb"](PROSE, 0).data),
             "xml": ("text/xml", CARRIERS["xml"](PROSE, 0).data),
             "odg": (office.ODG_MIME, CARRIERS["odg"](PROSE, 0).data),
             "latex": ("text/x-tex", CARRIERS["tex"](PROSE, 0).data),
             "vsdx": (office.VSDX_MIME, CARRIERS["vsdx"](PROSE, 0).data),
             "xps": (office.XPS_MIMES[0], CARRIERS["xps"](PROSE, 0).data),
             "json": ("application/json", json.dumps({"messages": [{"text": PROSE, "ts": 1}, {"text": "À bientôt"}]})
                      .encode()),
             "tnef": ("application/vnd.ms-tnef", tnef("Minutes", rtf=rtf)),
             "sqlite": ("application/vnd.sqlite3", CARRIERS["sqlite"](PROSE, 0).data),
             "sqlite-wal": ("application/x-sqlite3-wal", CARRIERS["sqlite-wal"](PROSE, 0).data),
             "iwork": ("application/x-iwork-archive", iwa_archive([PROSE, "Second paragraph of the body."]))}
    try:
        from PIL import Image, ImageDraw, ImageFont

        page = Image.new("L", (1400, 160), 255)
        ImageDraw.Draw(page).text((20, 40), "The committee met on Thursday.", fill=0,
                                  font=ImageFont.load_default(size=48))
        png = io.BytesIO()
        page.save(png, "PNG")
        seeds["tesseract"] = ("image/png", png.getvalue())
    except ImportError:  # Pillow is a dependency; without it the OCR plugin has nothing to read either
        pass
    return seeds


def mutate(data: bytes, ops: list[tuple[int, int, int]]) -> bytes:
    """Apply (kind, position, amount) operations; positions wrap, so any ints are valid."""
    out = bytearray(data)
    for kind, pos, amount in ops:
        n = len(out)
        if n == 0:
            out += bytes([amount & 0xFF])
            continue
        pos %= n
        match kind % 6:
            case 0:  # flip bits of one byte
                out[pos] ^= (amount % 255) + 1
            case 1:  # truncate
                del out[max(1, pos):]
            case 2:  # insert a run of one byte (NUL, '<', '(' or anything)
                out[pos:pos] = bytes([amount & 0xFF]) * (1 + amount % 64)
            case 3:  # duplicate a slice (repetition: nesting, repeated XML, repeated objects)
                end = min(n, pos + 1 + amount % 512)
                out[pos:pos] = out[pos:end] * (1 + amount % 8)
            case 4:  # delete a slice
                del out[pos : pos + 1 + amount % 256]
            case 5:  # overwrite with a token the parsers care about
                token = (b"<", b">", b"obj", b"endobj", b"stream", b"%%EOF", b"PK\x03\x04", b"\x00\x00",
                         b"<div>", b"&#x110000;", b"\r\n\r\n", b"=?utf-8?b?", b"\xff\xfe")[amount % 13]
                out[pos : pos + len(token)] = token
    return bytes(out)


def mutate_members(data: bytes, ops: list[tuple[int, int, int]]) -> bytes:
    """For ZIP containers: mutate the XML inside each member, then zip again (so the CRC holds
    and the XML readers, not the ZIP reader, meet the damage)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = [(info.filename, zf.read(info)) for info in zf.infolist()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return mutate(data, ops)
    return _zip([(name, body if name == "mimetype" else mutate(body, ops)) for name, body in members])


def container_seeds() -> dict[str, tuple[str, bytes]]:
    """unpacker name -> (MIME, a well-formed container holding a text, a mail and a nested ZIP)."""
    import gzip
    import tarfile

    import py7zr
    from cfbwriter import write_compound_file

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "a@example.org", "b@example.org", "Minutes"
    mail.set_content(PROSE)
    mail.add_attachment(PROSE.encode(), maintype="text", subtype="plain", filename="notes.txt")
    files = [("notes/minutes.txt", PROSE.encode()), ("mail.eml", bytes(mail)),
             ("inner.zip", _zip([("deep.txt", PROSE)]))]
    tar = io.BytesIO()
    with gzip.GzipFile(fileobj=tar, mode="wb", mtime=0) as stream, tarfile.open(fileobj=stream, mode="w") as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    seven = io.BytesIO()
    with py7zr.SevenZipFile(seven, "w") as archive:
        for name, data in files:
            archive.writestr(data, name)
    mbox = b"".join(b"From a@example.org Mon Jan  1 10:00:00 2024\n" + bytes(mail).replace(b"\r\n", b"\n") + b"\n"
                    for _ in range(2))
    msg = write_compound_file({"__substg1.0_0037001F": "Minutes".encode("utf-16-le"),
                               "__substg1.0_1000001F": PROSE.encode("utf-16-le"),
                               "__attach_version1.0_#00000000/__substg1.0_3707001F": "n.txt".encode("utf-16-le"),
                               "__attach_version1.0_#00000000/__substg1.0_37010102": PROSE.encode()})
    # a Word document with files embedded in it, and a PDF with files attached (tests/carriers.py, pdfgen.py);
    # a saved page, an RTF document and a notebook holding a picture
    from carriers import CARRIERS, android_backup_of, docx_around, w_paragraphs
    from pdfgen import attached_pdf_bytes
    from pstgen import PstAttachment, PstFolder, PstMessage, write_pst
    from rargen import make_rar
    from tnefgen import tnef

    report = docx_around(0, w_paragraphs(PROSE), {f"embeddings/{name.replace('/', '_')}": ("package", data)
                                                   for name, data in files})
    pdf = attached_pdf_bytes(PROSE, {name.replace("/", "_"): data for name, data in files})
    return {"zip": ("application/zip", _zip(files)), "tar": ("application/gzip", tar.getvalue()),
            "7z": ("application/x-7z-compressed", seven.getvalue()), "mbox": ("application/mbox", mbox),
            "eml": ("message/rfc822", bytes(mail)), "msg": ("application/vnd.ms-outlook", msg),
            "office-embeddings": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", report),
            "pdf-attachments": ("application/pdf", pdf),
            "html-pictures": ("text/html", CARRIERS["html-screenshot"](PROSE, 0).data),
            "rtf-pictures": ("text/rtf", CARRIERS["rtf-screenshot"](PROSE, 0).data),
            "ole-pictures": ("application/vnd.ms-powerpoint", CARRIERS["ppt-screenshot"](PROSE, 0).data),
            "notebook-pictures": ("application/x-ipynb+json", CARRIERS["ipynb-screenshot"](PROSE, 0).data),
            "libarchive": ("application/x-rar", make_rar(dict(files))),
            "tnef": ("application/vnd.ms-tnef", tnef("Minutes", body=PROSE, attachments=dict(files))),
            "pst": ("application/vnd.ms-outlook-pst", write_pst(PstFolder("Top", folders=[PstFolder("Inbox", [
                PstMessage("Minutes", body=PROSE, attachments=[PstAttachment(name.replace("/", "_"), data)
                                                              for name, data in files])])]))),
            "warc": ("application/warc", gzip.decompress(CARRIERS["warc"](PROSE, 0).data)),
            "android-backup": ("application/x-android-backup", android_backup_of(dict(files)))}


def check_container(data: bytes, mime: str, pm: object) -> str:
    """The property for containers: opening never raises; the container and every member end with a
    TextStatus and a one-line reason, every member named under the container."""
    from scanner.core.model import FileRecord, TextStatus
    from scanner.sources.extract import extract_or_open

    result = extract_or_open(FileRecord("fuzz", len(data), 0, "", mime), data, pm)  # type: ignore[arg-type]
    for record, extracted in ((FileRecord("fuzz", 0, 0, "", mime), result), *result.members):
        assert isinstance(extracted.status, TextStatus), extracted
        assert "\n" not in extracted.reason, extracted.reason
        assert record.path == "fuzz" or record.path.startswith("fuzz!/"), record.path
    return result.status.value


def check_one(data: bytes, mime: str, pm: object, prefer: str) -> str:
    """The property; returns the status value."""
    from scanner.core.model import TextStatus
    from scanner.sources.extract import extract_bytes

    result = extract_bytes(data, mime, pm, prefer=prefer)  # type: ignore[arg-type]
    assert isinstance(result.status, TextStatus), result
    assert isinstance(result.text, str) and "\n" not in result.reason, result.reason
    assert result.status is not TextStatus.OK or result.text.strip(), "OK with no text"
    return result.status.value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=2000, help="mutated inputs per extractor")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0, help="slowest allowed example, seconds")
    args = parser.parse_args(argv)

    import logging

    from scanner.sources.plugins import make_plugin_manager

    for name in ("pdfminer", "pypdfium2", "charset_normalizer"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    pm = make_plugin_manager(load_entry_points=False)
    rng = random.Random(args.seed)
    total = Counter[str]()
    failures = 0
    start = time.monotonic()
    for name, (mime, seed) in seeds().items():
        statuses = Counter[str]()
        slowest = 0.0
        for i in range(args.examples):
            if i % 10 == 0:  # pure random bytes, sometimes with the format's magic in front
                data = random.Random(rng.random()).randbytes(rng.randrange(0, 4096))
                data = seed[:8] + data if i % 20 == 0 else data
            else:
                ops = [(rng.randrange(6), rng.randrange(1 << 30), rng.randrange(1 << 16))
                       for _ in range(rng.randrange(1, 8))]
                data = mutate_members(seed, ops) if seed[:2] == b"PK" and i % 2 else mutate(seed, ops)
            t0 = time.monotonic()
            try:
                statuses[check_one(data, mime, pm, name)] += 1
            except Exception as exc:  # noqa: BLE001 - a finding: print it and go on
                failures += 1
                print(f"FAIL {name} example {i}: {type(exc).__name__}: {exc}", file=sys.stderr)
            slowest = max(slowest, time.monotonic() - t0)
            if time.monotonic() - t0 > args.timeout:
                failures += 1
                print(f"SLOW {name} example {i}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        total.update(statuses)
        print(f"{name:9} {args.examples:6} examples  slowest {slowest * 1000:7.1f} ms  "
              + "  ".join(f"{k}={v}" for k, v in sorted(statuses.items())))
    for name, (mime, seed) in container_seeds().items():
        statuses = Counter[str]()
        for i in range(args.examples):
            ops = [(rng.randrange(6), rng.randrange(1 << 30), rng.randrange(1 << 16))
                   for _ in range(rng.randrange(1, 8))]
            data = mutate_members(seed, ops) if seed[:2] == b"PK" and i % 2 else mutate(seed, ops)
            t0 = time.monotonic()
            try:
                statuses[check_container(data, mime, pm)] += 1
            except Exception as exc:  # noqa: BLE001 - a finding: print it and go on
                failures += 1
                print(f"FAIL container {name} example {i}: {type(exc).__name__}: {exc}", file=sys.stderr)
            if time.monotonic() - t0 > args.timeout:
                failures += 1
                print(f"SLOW container {name} example {i}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        total.update(statuses)
        print(f"{name:9} {args.examples:6} containers  " + "  ".join(f"{k}={v}" for k, v in sorted(statuses.items())))
    print(f"total {sum(total.values())} examples in {time.monotonic() - start:.1f} s, {failures} failures; "
          + "  ".join(f"{k}={v}" for k, v in sorted(total.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
