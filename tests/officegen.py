"""Office documents built part by part (OOXML and ODF packages with zipfile, Word 97 in an OLE2 file), for
tests, the evasion carriers and the fuzzing seeds: each fixture shows exactly what it holds."""

from __future__ import annotations

import io
import re
import struct
import zipfile
from xml.sax.saxutils import escape

from cfbwriter import write_compound_file

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 forbids

_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_SS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS = f'xmlns:p="{_P}" xmlns:a="{_A}" xmlns:r="{_OFFICE_RELS}"'
_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/"'
)



def zip_of(parts: dict[str, str | bytes]) -> bytes:
    """A ZIP of `parts`, in the order given, deflated."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in parts.items():
            zf.writestr(name, content)
    return buf.getvalue()


def relationships(*rels: tuple[str, str, str]) -> str:
    """A .rels part: (Id, type suffix, Target) each."""
    body = "".join(f'<Relationship Id="{i}" Type="{_OFFICE_RELS}/{kind}" Target="{target}"/>'
                   for i, kind, target in rels)
    return f'<?xml version="1.0"?><Relationships xmlns="{_PKG_RELS}">{body}</Relationships>'


def ooxml(main: str, parts: dict[str, str | bytes]) -> bytes:
    """An OOXML package: [Content_Types].xml, the package relationship to `main`, then `parts`."""
    return zip_of({
        "[Content_Types].xml": '<?xml version="1.0"?><Types '
                               'xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "_rels/.rels": relationships(("rId1", "officeDocument", main)),
        **parts,
    })


def paragraphs(*lines: str) -> str:
    return "".join(f"<a:p><a:r><a:t>{escape(line)}</a:t></a:r></a:p>" for line in lines)


def text_shape(*lines: str, placeholder: str = "") -> str:
    ph = f'<p:nvSpPr><p:nvPr><p:ph type="{placeholder}"/></p:nvPr></p:nvSpPr>' if placeholder else ""
    return f"<p:sp>{ph}<p:txBody>{paragraphs(*lines)}</p:txBody></p:sp>"


def table_frame(rows: list[list[str]]) -> str:
    cells = "".join("<a:tr>" + "".join(f"<a:tc><a:txBody>{paragraphs(c)}</a:txBody></a:tc>" for c in row)
                    + "</a:tr>" for row in rows)
    return f"<p:graphicFrame><a:graphic><a:graphicData><a:tbl>{cells}</a:tbl></a:graphicData></a:graphic>" \
           "</p:graphicFrame>"


def slide_xml(shapes: str) -> str:
    return f'<?xml version="1.0"?><p:sld {_NS}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>'


def make_pptx(slides: dict[str, str], order: list[str], notes: dict[str, str] | None = None,
              extra: dict[str, str | bytes] | None = None) -> bytes:
    """A presentation whose slide parts are `slides` (file name -> shapes), shown in `order`;
    `notes` maps a slide file name to its notes slide's shapes."""
    notes = notes or {}
    parts: dict[str, str | bytes] = {}
    rels = []
    for number, name in enumerate(slides, 1):
        parts[f"ppt/slides/{name}"] = slide_xml(slides[name])
        rels.append((f"rId{number + 10}", "slide", f"slides/{name}"))
        if name in notes:
            notes_name = f"notesSlide{number}.xml"
            parts[f"ppt/slides/_rels/{name}.rels"] = relationships(
                ("rId1", "notesSlide", f"../notesSlides/{notes_name}"))
            parts[f"ppt/notesSlides/{notes_name}"] = (
                f'<?xml version="1.0"?><p:notes {_NS}><p:cSld><p:spTree>{notes[name]}</p:spTree></p:cSld>'
                "</p:notes>")
    ids = {f"slides/{name}": f"rId{number + 10}" for number, name in enumerate(slides, 1)}
    listed = "".join(f'<p:sldId id="{256 + i}" r:id="{ids["slides/" + name]}"/>' for i, name in enumerate(order))
    parts["ppt/presentation.xml"] = f'<?xml version="1.0"?><p:presentation {_NS}><p:sldIdLst>{listed}' \
                                    "</p:sldIdLst></p:presentation>"
    parts["ppt/_rels/presentation.xml.rels"] = relationships(*rels)
    return ooxml("ppt/presentation.xml", {**parts, **(extra or {})})


def sheet_xml(rows: str) -> str:
    return f'<?xml version="1.0"?><worksheet xmlns="{_SS}"><sheetData>{rows}</sheetData></worksheet>'


def make_xlsx(sheets: list[tuple[str, str, str]], shared: list[str],
              extra: dict[str, str | bytes] | None = None) -> bytes:
    """A workbook of (sheet name, part name, rows XML) in workbook order, with a shared string table
    (each entry an <si> body); `extra`: more parts (a sheet's relationships and comments)."""
    listed = "".join(f'<sheet name="{escape(name)}" sheetId="{i + 1}" r:id="rId{i + 1}"/>'
                     for i, (name, _, _) in enumerate(sheets))
    parts: dict[str, str | bytes] = {
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{_SS}" xmlns:r="{_OFFICE_RELS}">'
                           f"<sheets>{listed}</sheets></workbook>",
        "xl/_rels/workbook.xml.rels": relationships(
            *[(f"rId{i + 1}", "worksheet", f"worksheets/{part}") for i, (_, part, _) in enumerate(sheets)],
            ("rIdS", "sharedStrings", "sharedStrings.xml")),
        "xl/sharedStrings.xml": f'<?xml version="1.0"?><sst xmlns="{_SS}">'
                                + "".join(f"<si>{s}</si>" for s in shared) + "</sst>",
    }
    for _, part, rows in sheets:
        parts[f"xl/worksheets/{part}"] = sheet_xml(rows)
    return ooxml("xl/workbook.xml", {**parts, **(extra or {})})


def visio_shape(*paragraphs: str, shape_id: int = 1) -> str:
    """A Visio shape whose text is `paragraphs`, each after a paragraph mark (`pp`), a character mark first."""
    text = "".join(f"<pp IX='{n}'/>{xml_escape(p)}\n" for n, p in enumerate(paragraphs))
    return f"<Shape ID='{shape_id}' Type='Shape'><Cell N='PinX' V='1'/><Text><cp IX='0'/>{text}</Text></Shape>"


def make_vsdx(pages: list[tuple[str, str]], *, master: str = "", comments: list[str] | None = None) -> bytes:
    """A Visio drawing: (name, shapes XML) pages listed in visio/pages/pages.xml (through its relationships),
    a master whose shape holds `master` (a stencil's placeholder), `comments` in visio/comments.xml."""
    ns = "http://schemas.microsoft.com/office/visio/2012/main"
    rel_ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    listing = "".join(f"<Page ID='{n}' NameU='{escape(name)}' Name='{escape(name)}'><PageSheet/><Rel r:id='rId{n}'/>"
                      "</Page>" for n, (name, _) in enumerate(pages, 1))
    parts: dict[str, str | bytes] = {
        "visio/document.xml": f"<?xml version='1.0'?><VisioDocument xmlns='{ns}'/>",
        "visio/pages/pages.xml": f"<?xml version='1.0'?><Pages xmlns='{ns}' xmlns:r='{rel_ns}'>{listing}</Pages>",
        "visio/pages/_rels/pages.xml.rels": relationships(*((f"rId{n}", "page", f"page{n}.xml")
                                                            for n in range(1, len(pages) + 1))),
        "visio/masters/master1.xml": f"<?xml version='1.0'?><MasterContents xmlns='{ns}'><Shapes>"
                                     f"{visio_shape(master) if master else ''}</Shapes></MasterContents>",
    }
    for n, (_, shapes) in enumerate(pages, 1):
        parts[f"visio/pages/page{n}.xml"] = (f"<?xml version='1.0'?><PageContents xmlns='{ns}'><Shapes>{shapes}"
                                             "</Shapes></PageContents>")
    if comments:
        entries = "".join(f"<CommentEntry IX='{n}' PageID='1' ShapeID='1'>{escape(c)}</CommentEntry>"
                          for n, c in enumerate(comments))
        parts["visio/comments.xml"] = f"<?xml version='1.0'?><Comments xmlns='{ns}'><CommentList>{entries}" \
                                      "</CommentList></Comments>"
    return ooxml("visio/document.xml", parts)


def xps_glyphs(text: str, x: float, y: float, *, size: float = 12.0, advance: int | None = 50) -> str:
    """A `Glyphs` run as an XPS writer emits it: its characters at (x, y), each glyph `advance` hundredths of
    an em wide when given (the Indices attribute; without it a reader must guess the run's width)."""
    indices = f' Indices="{";".join(f"0,{advance}" for _ in text)}"' if advance is not None else ""
    string = "{}" + text if text.startswith("{") else text  # a leading brace is escaped by "{}"
    return (f'<Glyphs Fill="#ff000000" FontUri="/Resources/0.odttf" FontRenderingEmSize="{size}" OriginX="{x}" '
            f'OriginY="{y}" UnicodeString="{xml_escape(string).replace(chr(34), "&quot;")}"{indices}/>')


def make_xps(pages: list[str], *, open_xps: bool = False, names: list[str] | None = None) -> bytes:
    """An XPS (or OpenXPS) document: the package's fixed representation, a document sequence, one fixed
    document listing `pages` (each a page's Glyphs, Paths...) in order, under `names` (default 1.fpage...)."""
    ns = "http://schemas.openxps.org/oxps/v1.0" if open_xps else "http://schemas.microsoft.com/xps/2005/06"
    names = names or [f"{n}.fpage" for n in range(1, len(pages) + 1)]
    listing = "".join(f'<PageContent Source="Pages/{name}"/>' for name in names)
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types '
                               'xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{_PKG_RELS}"><Relationship Id="R0" '
                       f'Type="{ns}/fixedrepresentation" Target="/FixedDocSeq.fdseq"/></Relationships>',
        "FixedDocSeq.fdseq": f'<FixedDocumentSequence xmlns="{ns}"><DocumentReference '
                             'Source="Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>',
        "Documents/1/FixedDoc.fdoc": f'<FixedDocument xmlns="{ns}">{listing}</FixedDocument>',
    }
    for name, page in zip(names, pages):
        parts[f"Documents/1/Pages/{name}"] = (f'<FixedPage Width="816" Height="1056" xmlns="{ns}" xml:lang="en-US">'
                                              f"<Canvas>{page}</Canvas></FixedPage>")
    return zip_of(parts)


def make_odf(mime: str, body: str, *, manifest: str = "<manifest:manifest/>", styles: str = "",
             extra: dict[str, str | bytes] | None = None) -> bytes:
    """An ODF package: the stored mimetype first (as ODF requires), content.xml around `body`, styles.xml
    around the master styles `styles` (page headers and footers live there), the `extra` members (an
    embedded object's folder), a manifest."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), mime)
        zf.writestr("content.xml", f'<?xml version="1.0"?><office:document-content {_ODF_NS}>'
                                   f"<office:body>{body}</office:body></office:document-content>",
                    zipfile.ZIP_DEFLATED)
        if styles:
            zf.writestr("styles.xml", f'<?xml version="1.0"?><office:document-styles {_ODF_NS}>'
                                      f"<office:master-styles>{styles}</office:master-styles></office:document-styles>",
                        zipfile.ZIP_DEFLATED)
        for name, content in (extra or {}).items():
            zf.writestr(name, content, zipfile.ZIP_DEFLATED)
        zf.writestr("META-INF/manifest.xml", manifest)
    return buf.getvalue()


def xml_escape(text: str) -> str:
    """Text as XML character data: &, < and > escaped, the control characters XML cannot hold dropped
    (PAN-13's texts have U+0019 where an apostrophe was)."""
    return escape(_NOT_XML.sub("", text))


def odf_paragraphs(*lines: str) -> str:
    return "".join(f"<text:p>{xml_escape(line)}</text:p>" for line in lines)


def word97(text: str, *, encrypted: bool = False, streams: dict[str, bytes] | None = None) -> bytes:
    """A minimal Word 97 document: a FIB, the text as 8-bit (cp1252) characters after it, and in the
    1Table stream an empty style sheet and a piece table of one piece (antiword needs both).

    FIB offsets are [MS-DOC] 2.5.1's: wIdent 0xA5EC, nFib 0xC1 (Word 97), flags at 0x0A (fWhichTblStm
    0x0200: the table stream is 1Table; fEncrypted 0x0100), fcMin/fcMac, ccpText at 0x4C, then
    fcStshf/lcbStshf at 0xA2 and fcClx/lcbClx at 0x1A2. A piece's fc with bit 30 set points at
    8-bit text at fc / 2.
    """
    body = text.replace("\n", "\r").encode("cp1252")
    body += b"" if body.endswith(b"\r") else b"\r"
    text_at = 0x800
    fib = bytearray(text_at)
    struct.pack_into("<HHHH", fib, 0, 0xA5EC, 0x00C1, 0x6027, 0x0409)  # wIdent, nFib, nProduct, lid
    struct.pack_into("<H", fib, 0x0A, 0x0200 | (0x0100 if encrypted else 0))
    struct.pack_into("<II", fib, 0x18, text_at, text_at + len(body))  # fcMin, fcMac
    struct.pack_into("<H", fib, 0x20, 14)  # csw
    struct.pack_into("<H", fib, 0x3E, 22)  # cslw
    struct.pack_into("<I", fib, 0x40, text_at + len(body))  # cbMac
    struct.pack_into("<I", fib, 0x4C, len(body))  # ccpText
    struct.pack_into("<H", fib, 0x98, 93)  # cbRgFcLcb
    style_sheet = struct.pack("<HHH", 18, 0, 10) + bytes(14)  # cbStshi, STSHI: no styles
    pieces = struct.pack("<II", 0, len(body)) + struct.pack("<HIH", 0, (text_at * 2) | 0x40000000, 0)
    clx = b"\x02" + struct.pack("<I", len(pieces)) + pieces
    struct.pack_into("<II", fib, 0xA2, 0, len(style_sheet))  # fcStshf, lcbStshf
    struct.pack_into("<II", fib, 0x1A2, len(style_sheet), len(clx))  # fcClx, lcbClx
    return write_compound_file({
        "WordDocument": (bytes(fib) + body).ljust(4096, b"\x00"),  # antiword refuses a smaller one
        "1Table": style_sheet + clx,  # small: in the mini stream
        **(streams or {}),
    })


def with_member(package: bytes, name: str, content: bytes) -> bytes:
    """`package` with member `name` replaced by `content`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, content if info.filename == name else src.read(info))
    return buf.getvalue()


def make_xls(sheets: list[tuple[str, list[list[object]]]], hidden: tuple[str, ...] = ()) -> bytes:
    """An Excel 97-2003 workbook (xlwt) of (sheet name, rows of cell values: str, int, float, bool,
    datetime.date or None for an empty cell); the sheets named in `hidden` hidden."""
    import datetime

    import xlwt

    book = xlwt.Workbook()
    dated = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    for name, rows in sheets:
        sheet = book.add_sheet(name)
        if name in hidden:
            sheet.visibility = 1
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if isinstance(value, datetime.date):
                    sheet.write(r, c, value, dated)
                elif value is not None:
                    sheet.write(r, c, value)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _ppt_record(record_type: int, body: bytes, instance: int = 0, container: bool = False) -> bytes:
    """One record of a PowerPoint 97-2003 stream ([MS-PPT] 2.3.1): version 0xF for a container, else 0."""
    return struct.pack("<HHI", (instance << 4) | (0xF if container else 0), record_type, len(body)) + body


def _ppt_text(text: str, wide: bool = True) -> bytes:
    """A TextHeaderAtom, then the text as a TextCharsAtom (UTF-16LE) or a TextBytesAtom (one byte a character);
    PowerPoint ends a paragraph with \\r."""
    body = text.replace("\n", "\r")
    atom = _ppt_record(0x0FA0, body.encode("utf-16-le")) if wide else _ppt_record(0x0FA8, body.encode("latin-1"))
    return _ppt_record(0x0F9F, struct.pack("<I", 0)) + atom


def make_ppt(slides: list[str], notes: list[str], box: str = "", master: str = "Click to edit Master title style",
             streams: dict[str, bytes] | None = None) -> bytes:
    """A PowerPoint 97-2003 file: the Document container's slide list (instance 0) holding each slide's text
    after its SlidePersistAtom, its notes list (instance 2), a MainMaster and a notes master (a Notes container
    whose NotesAtom names slide 0) with placeholder prompts, a notes slide (naming slide 256) whose drawing
    holds nothing, and one Slide container whose drawing holds `box` as a TextBytesAtom (a text box);
    `streams`: more streams."""
    from cfbwriter import write_compound_file

    persist = _ppt_record(0x03F3, bytes(20))
    slide_list = _ppt_record(0x0FF0, b"".join(persist + _ppt_text(t) for t in slides), 0, container=True)
    notes_list = _ppt_record(0x0FF0, b"".join(persist + _ppt_text(t) for t in notes), 2, container=True)
    document = _ppt_record(0x03E8, _ppt_record(0x03E9, bytes(40)) + slide_list + notes_list, container=True)
    master_record = _ppt_record(0x03F8, _ppt_record(0x0F0D, _ppt_text(master), container=True), container=True)
    notes_master = _ppt_record(0x03F0, _ppt_record(0x03F1, struct.pack("<IHH", 0, 0, 0))
                               + _ppt_record(0xF00D, _ppt_text("Click to edit Master text styles\nSecond level"),
                                             container=True), container=True)
    notes_slide = _ppt_record(0x03F0, _ppt_record(0x03F1, struct.pack("<IHH", 256, 0, 0)), container=True)
    drawing = _ppt_record(0xF00D, _ppt_text(box, wide=False), container=True) if box else b""
    slide = _ppt_record(0x03EE, _ppt_record(0x03EF, bytes(24)) + drawing, container=True)
    stream = _ppt_record(0x0FF5, bytes(28)) + document + master_record + notes_master + notes_slide + slide
    return write_compound_file({"PowerPoint Document": stream, "Current User": bytes(20), **(streams or {})})
