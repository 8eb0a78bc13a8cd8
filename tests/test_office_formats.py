"""PPTX, XLSX, ODP, ODS, RTF and Word 97 (.doc): real files built here, read through the plugin manager.

The OOXML and ODF packages are written part by part with zipfile, so each
fixture shows exactly what is tested; the Word 97 files are compound files
written by `cfbwriter` around a minimal FIB and piece table, and read by the
real antiword (those tests skip when antiword is not installed).
"""

from __future__ import annotations

import os
import stat
import struct
import time
from pathlib import Path

import olefile
import pytest
from carriers import CARRIERS, docx_around, w_paragraphs
from cfbwriter import write_compound_file
from officegen import (
    make_odf,
    make_ppt,
    make_pptx,
    make_xls,
    make_xlsx,
    odf_paragraphs,
    relationships,
    slide_xml,
    table_frame,
    text_shape,
    with_member,
    word97,
    zip_of,
)

from scanner.core.errors import ExtractionError
from scanner.core.model import TextStatus
from scanner.sources.extract import ExtractLimits, detect_mime, extract_bytes, extract_file
from scanner.sources.extract.containers import Budget
from scanner.sources.plugins import choose_extractor, make_plugin_manager
from scanner_plugins import doc as doc_plugin
from scanner_plugins import office, rtf
from scanner_plugins.pictures import unpack_rtf_pictures

DOCX = office.DOCX_MIME
PPTX = office.PPTX_MIME
XLSX = office.XLSX_MIME
ODP = office.ODP_MIME
ODS = office.ODS_MIME
ODT = office.ODT_MIME
DOC = "application/msword"
FRENCH = "Le café de la façade est à côté de l'hôpital, où il déjeune."

needs_antiword = pytest.mark.skipif(doc_plugin.antiword_path() is None, reason=doc_plugin.MISSING)


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager(load_entry_points=False)


ENTITY_BOMB = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
               b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
               b"<d>&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;</d>")


# --- PPTX ---------------------------------------------------------------------

SLIDES = {
    "slide1.xml": text_shape("Closing remarks"),
    "slide2.xml": text_shape("Opening title", placeholder="title") + text_shape("First point", "Second point"),
    "slide3.xml": text_shape("Results") + table_frame([["Year", "Sales"], ["2023", "1,200"]]),
}
ORDER = ["slide2.xml", "slide3.xml", "slide1.xml"]  # sldIdLst order, not the parts' names
NOTES = {
    "slide3.xml": text_shape("", placeholder="sldImg") + text_shape("Say the sales doubled.", placeholder="body")
                  + text_shape("2", placeholder="sldNum"),
}
PPTX_TEXT = ("Opening title\nFirst point\nSecond point\n\n"
             "Results\nYear\tSales\n2023\t1,200\n\n"
             "Closing remarks")


class TestPptx:
    def test_slides_in_presentation_order_with_tables_and_notes(self, pm):
        data = make_pptx(SLIDES, ORDER, NOTES)
        result = extract_bytes(data, PPTX, pm)
        assert result.status is TextStatus.OK, result.reason
        assert result.extractor == "pptx" and result.meta["slides"] == "3"
        assert result.text == PPTX_TEXT + "\n\nSay the sales doubled."
        assert result.body_end == len(PPTX_TEXT)
        # one page per slide, where the slide's text starts
        assert result.page_starts == (0, PPTX_TEXT.index("Results"), PPTX_TEXT.index("Closing"))
        (start, end, label), = result.regions
        assert label == "the speaker notes of slide 2"
        assert result.text[start:end] == "Say the sales doubled."  # not the slide number placeholder

    def test_line_breaks_fields_and_alternate_content(self, pm):
        shapes = ("<p:sp><p:txBody><a:p><a:r><a:t>one</a:t></a:r><a:br/><a:r><a:t>two</a:t></a:r>"
                  '<a:fld type="slidenum"><a:t>7</a:t></a:fld></a:p></p:txBody></p:sp>'
                  '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
                  f"<mc:Choice>{text_shape('chosen')}</mc:Choice><mc:Fallback>{text_shape('fallback')}"
                  "</mc:Fallback></mc:AlternateContent>")
        result = extract_bytes(make_pptx({"s.xml": shapes}, ["s.xml"]), PPTX, pm)
        assert result.text == "one\ntwo7\nchosen"

    def test_typed_by_content_end_to_end(self, pm, tmp_path: Path):
        path = tmp_path / "talk.txt"  # the name says text; the bytes say PPTX
        path.write_bytes(make_pptx(SLIDES, ORDER, NOTES))
        record, result = extract_file(path, pm)
        assert record.mime == PPTX and result.extractor == "pptx"
        assert result.text.startswith("Opening title") and result.regions

    def test_zip_bomb_member(self, pm):
        bomb = make_pptx(SLIDES, ORDER, extra={"ppt/media/pad.bin": b"\x00" * (30 * 1024 * 1024)})
        assert len(bomb) < 100_000
        result = extract_bytes(bomb, PPTX, pm)
        assert result.status is TextStatus.TOO_LARGE and "zip bomb" in result.reason

    def test_inflate_budget_shared_by_slides(self, pm):
        big = {f"s{i}.xml": text_shape("B" * (600 * 1024)) for i in range(4)}
        tight = ExtractLimits(max_unzipped_bytes=2 * 1024 * 1024, max_zip_ratio=1e9)
        result = extract_bytes(make_pptx(big, list(big)), PPTX, pm, tight)
        assert result.status is TextStatus.TOO_LARGE and "zip bomb" in result.reason

    def test_entity_bomb_refused(self, pm):
        data = with_member(make_pptx(SLIDES, ORDER), "ppt/slides/slide3.xml", ENTITY_BOMB)
        result = extract_bytes(data, PPTX, pm)
        assert result.status is TextStatus.CORRUPT and "DTD" in result.reason

    def test_entity_bomb_in_utf16_refused(self, pm):
        utf16 = ENTITY_BOMB.replace(b'version="1.0"', b'version="1.0" encoding="UTF-16"').decode()
        data = with_member(make_pptx(SLIDES, ORDER), "ppt/presentation.xml", utf16.encode("utf-16"))
        result = extract_bytes(data, PPTX, pm)
        assert result.status is TextStatus.CORRUPT and "DTD" in result.reason

    def test_corrupt(self, pm):
        data = make_pptx(SLIDES, ORDER)
        assert extract_bytes(data[: len(data) // 2], PPTX, pm).status is TextStatus.CORRUPT
        without_main = zip_of({"ppt/slides/slide1.xml": slide_xml(text_shape("x"))})
        result = extract_bytes(without_main, PPTX, pm)
        assert result.status is TextStatus.CORRUPT and "main part" in result.reason
        broken = with_member(data, "ppt/slides/slide2.xml", b"<p:sld><unclosed>")
        assert extract_bytes(broken, PPTX, pm).status is TextStatus.CORRUPT


# --- XLSX ---------------------------------------------------------------------

SHARED = [
    "<t>Name</t>",
    "<r><t>Rich </t></r><r><rPr><b/></rPr><t>text</t></r><rPh><t>ruby not read</t></rPh>",
    "<t>two\nlines</t>",
]
FIRST_ROWS = (
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
    '<row r="2"><c r="A2" t="inlineStr"><is><t>inline</t></is></c><c r="B2"><v>3.25</v></c>'
    '<c r="C2" t="b"><v>1</v></c><c r="E2" t="e"><v>#DIV/0!</v></c></row>'
    '<row r="4"><c r="B4" t="str"><f>UPPER("x")</f><v>X</v></c><c r="C4" t="s"><v>2</v></c></row>'
)


class TestXlsx:
    def test_cells_rows_and_sheets_in_workbook_order(self, pm):
        data = make_xlsx([("Data", "sheet2.xml", FIRST_ROWS),
                          ("Notes & more", "sheet1.xml", '<row r="1"><c r="A1" t="s"><v>0</v></c></row>')],
                         SHARED)
        result = extract_bytes(data, XLSX, pm)
        assert result.status is TextStatus.OK, result.reason
        first = "Sheet: Data\nName\tRich text\ninline\t3.25\tTRUE\t\t#DIV/0!\n\tX\ttwo lines"
        assert result.text == first + "\n\nSheet: Notes & more\nName"
        assert result.page_starts == (0, len(first) + 2)
        assert result.meta == {"sheets": "2"}

    def test_typed_by_content_end_to_end(self, pm, tmp_path: Path):
        path = tmp_path / "figures.dat"
        path.write_bytes(make_xlsx([("Only", "s.xml", FIRST_ROWS)], SHARED))
        record, result = extract_file(path, pm)
        assert record.mime == XLSX and result.extractor == "xlsx" and "Rich text" in result.text

    def test_huge_sparse_sheet_is_cut_and_says_so(self, pm):
        rows = "".join(f'<row r="{r}"><c r="XFD{r}" t="inlineStr"><is><t>far</t></is></c></row>'
                       for r in range(1, 401))  # 400 rows x 16384 columns > MAX_SHEET_CELLS
        started = time.perf_counter()
        result = extract_bytes(make_xlsx([("Sparse", "s.xml", rows)], []), XLSX, pm)
        assert time.perf_counter() - started < 10
        assert result.status is TextStatus.PARTIAL and result.reason.endswith(f"cut at {office.MAX_SHEET_CELLS} cells")
        assert result.meta["truncated"] == f"cut at {office.MAX_SHEET_CELLS} cells"
        lines = result.text.split("\n")[1:]
        assert len(lines) == office.MAX_SHEET_CELLS // 16384 and lines[0] == "\t" * 16383 + "far"

    def test_zip_bomb_member(self, pm):
        data = make_xlsx([("A", "s.xml", FIRST_ROWS)], SHARED)
        bomb = with_member(data, "xl/sharedStrings.xml", b"<sst>" + b" " * (30 * 1024 * 1024) + b"</sst>")
        result = extract_bytes(bomb, XLSX, pm)
        assert result.status is TextStatus.TOO_LARGE and "zip bomb" in result.reason

    def test_entity_bomb_refused(self, pm):
        data = with_member(make_xlsx([("A", "s.xml", FIRST_ROWS)], SHARED), "xl/worksheets/s.xml", ENTITY_BOMB)
        result = extract_bytes(data, XLSX, pm)
        assert result.status is TextStatus.CORRUPT and "DTD" in result.reason

    def test_corrupt_sheet(self, pm):
        data = with_member(make_xlsx([("A", "s.xml", FIRST_ROWS)], SHARED), "xl/worksheets/s.xml",
                           b"<worksheet><sheetData><row>")
        result = extract_bytes(data, XLSX, pm)
        assert result.status is TextStatus.CORRUPT and "malformed XML" in result.reason


# --- ODF: ODP, ODS (and ODT through the same code) ------------------------------

ODP_BODY = (
    "<office:presentation>"
    '<draw:page draw:name="one"><draw:frame><draw:text-box>'
    + odf_paragraphs("Welcome", "to the talk") +
    "</draw:text-box></draw:frame>"
    "<presentation:notes><draw:page-thumbnail/><draw:frame><draw:text-box>"
    + odf_paragraphs("Remember to smile.") +
    "</draw:text-box></draw:frame></presentation:notes></draw:page>"
    '<draw:page draw:name="two"><draw:frame><draw:text-box>'
    "<text:p>Second  \n   slide<text:s text:c=\"2\"/>here</text:p>"
    "</draw:text-box></draw:frame></draw:page>"
    "</office:presentation>"
)

ODS_BODY = (
    "<office:spreadsheet>"
    '<table:table table:name="Budget">'
    "<table:table-header-rows><table:table-row>"
    "<table:table-cell><text:p>Item</text:p></table:table-cell>"
    "<table:table-cell><text:p>Cost</text:p></table:table-cell>"
    "</table:table-row></table:table-header-rows>"
    "<table:table-row>"
    "<table:table-cell><text:p>Paper</text:p><text:p>A4</text:p></table:table-cell>"
    '<table:table-cell table:number-columns-repeated="2"/>'
    '<table:table-cell office:value-type="float" office:value="12.5"><text:p>12.50</text:p></table:table-cell>'
    '<table:table-cell><office:annotation><text:p>a comment</text:p></office:annotation></table:table-cell>'
    '<table:table-cell table:number-columns-repeated="16000"/>'
    "</table:table-row>"
    '<table:table-row table:number-rows-repeated="2">'
    '<table:table-cell table:number-columns-repeated="2"><text:p>same</text:p></table:table-cell>'
    "</table:table-row>"
    '<table:table-row table:number-rows-repeated="1048000"><table:table-cell/></table:table-row>'
    "</table:table>"
    '<table:table table:name="Second"><table:table-row><table:covered-table-cell/>'
    "<table:table-cell><text:p>after a merged cell</text:p></table:table-cell></table:table-row></table:table>"
    "</office:spreadsheet>"
)
ENCRYPTED_MANIFEST = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                      '<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/>'
                      "</manifest:file-entry></manifest:manifest>")


class TestXls:
    """Excel 97-2003 workbooks, `unsupported` before session 30 (no extractor for application/vnd.ms-excel)."""

    def test_sheets_rows_and_cells_as_an_xlsx_reads_them(self, pm):
        import datetime

        data = make_xls([("Data", [["Name", "Amount", "Paid"], ["harbour dues", 3.25, True],
                                   [None, 42, datetime.date(2024, 3, 1)]]),
                         ("Hidden notes", [["The ledger was copied\nin two lines."]])], hidden=("Hidden notes",))
        assert detect_mime(data) == office.XLS_MIME
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.status is TextStatus.OK and result.extractor == "xls", result.reason
        first = "Sheet: Data\nName\tAmount\tPaid\nharbour dues\t3.25\tTRUE\n\t42\t2024-03-01 00:00:00"
        assert result.text == first + "\n\nSheet: Hidden notes\nThe ledger was copied in two lines."
        assert result.page_starts == (0, len(first) + 2) and result.meta == {"sheets": "2"}

    def test_a_huge_sheet_is_cut_and_says_so(self, pm):
        data = make_xls([("Wide", [[f"cell {r}.{c}" for c in range(200)] for r in range(60)])])
        result = extract_bytes(data, office.XLS_MIME, pm, ExtractLimits(max_chars=5_000))
        assert result.meta["truncated"] == "cut at max_chars characters" and len(result.text) <= 5_000
        assert result.status is TextStatus.PARTIAL
        assert result.text.startswith("Sheet: Wide\ncell 0.0\tcell 0.1")

    def test_a_damaged_workbook_is_corrupt_with_a_reason(self, pm):
        data = make_xls([("Data", [["Name"]])])
        result = extract_bytes(data[:1536] + bytes(len(data) - 1536), office.XLS_MIME, pm)
        assert result.status is TextStatus.CORRUPT and result.reason.startswith("unreadable XLS")


class TestPpt:
    """PowerPoint 97-2003 presentations, `unsupported` before session 30."""

    def test_slides_text_boxes_and_notes_but_not_the_masters(self, pm):
        data = make_ppt(["Quarterly minutes\nThe harbour ledger", "Second slide"], ["Say the ledger was copied."],
                        box="A text box on the first slide")
        assert detect_mime(data) == "application/vnd.ms-powerpoint"  # by its stream: the writer gave no class id
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.status is TextStatus.OK and result.extractor == "ppt", result.reason
        assert result.body == "Quarterly minutes\nThe harbour ledger\n\nSecond slide\n\nA text box on the first slide"
        assert result.region_texts == [("Say the ledger was copied.", "the speaker notes")]
        assert "Master" not in result.text and "level" not in result.text and result.meta == {"text_atoms": "6"}

    def test_a_record_past_its_container_is_corrupt_and_a_protected_file_encrypted(self, pm):
        from cfbwriter import write_compound_file

        stream = bytes.fromhex("0f00e803ffff0000")  # a Document container claiming 65,535 bytes in an 8-byte stream
        damaged = make_ppt(["A slide"], []).replace("PowerPoint".encode("utf-16-le"), "PowerPoinX".encode("utf-16-le"))
        broken = write_compound_file({"PowerPoint Document": stream, "Current User": bytes(20)})
        result = extract_bytes(broken, "application/vnd.ms-powerpoint", pm)
        assert result.status is TextStatus.CORRUPT and "runs past its container" in result.reason
        missing = extract_bytes(damaged, "application/vnd.ms-powerpoint", pm)
        assert missing.status is TextStatus.CORRUPT and "no 'PowerPoint Document' stream" in missing.reason
        locked = make_ppt(["A slide"], [], streams={"EncryptedSummary": bytes(64)})
        assert extract_bytes(locked, detect_mime(locked), pm).status is TextStatus.ENCRYPTED

    def test_a_stream_that_claims_more_than_the_file_is_corrupt_at_once(self, pm):
        """A directory entry whose stream size says 2 GB in a 4 KB file, its first sector chained to itself
        (found by fuzzing): olefile followed the chain for every sector claimed, 15 s and as much memory."""
        whole = bytearray(make_ppt(["A slide"], []))
        entry = whole.index("PowerPoint Document".encode("utf-16-le"))  # a directory entry: size at byte 120
        start = int.from_bytes(whole[entry + 116:entry + 120], "little")  # its first sector
        whole[entry + 120:entry + 124] = (2_000_000_000).to_bytes(4, "little")
        fat = 512 * (int.from_bytes(whole[0x4C:0x50], "little") + 1)  # the first FAT sector (512-byte sectors)
        whole[fat + 4 * start:fat + 4 * start + 4] = start.to_bytes(4, "little")  # the chain loops on itself
        lying = bytes(whole)
        started = time.perf_counter()
        result = extract_bytes(lying, "application/vnd.ms-powerpoint", pm)
        assert time.perf_counter() - started < 2
        assert result.status is TextStatus.CORRUPT and "declares 2000000000 bytes" in result.reason

    def test_a_header_that_claims_a_mini_stream_table_larger_than_the_file_is_corrupt_at_once(self, pm):
        """A compound file header whose count of mini FAT sectors says 1.85e9 (found by fuzzing an Outlook
        item, `bench/fuzz_extract.py --examples 400 --seed 32`): olefile read that many sectors along a
        looping chain when a small stream was first opened, 23 s and all the memory it was given."""
        from cfbwriter import write_compound_file

        for streams, mime in (({"__substg1.0_0037001F": "Minutes".encode("utf-16-le"),
                                "__substg1.0_1000001F": "The committee met.".encode("utf-16-le")},
                               "application/vnd.ms-outlook"),
                              ({"PowerPoint Document": bytes(8), "Current User": bytes(20)},
                               "application/vnd.ms-powerpoint")):
            whole = bytearray(write_compound_file(streams))
            whole[0x40:0x44] = (1_852_112_897).to_bytes(4, "little")  # the header's number of mini FAT sectors
            started = time.perf_counter()
            result = extract_bytes(bytes(whole), mime, pm)
            assert time.perf_counter() - started < 2
            assert result.status is TextStatus.CORRUPT and "mini stream table" in result.reason, result.reason


def test_deep_styles_and_deep_slides_are_read_in_linear_time(pm) -> None:
    """100,000 styles each based on the one before (the first hiding its text), and 50,000 containers nested
    in a slide around 50,000 text atoms: each style resolved once, each atom's place known from its container
    (walking the chain, or the nesting, for each cost ~10^10 steps)."""
    from cfbwriter import write_compound_file

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    chain = "".join(f'<w:style w:type="character" w:styleId="s{n}"><w:basedOn w:val="s{n - 1}"/></w:style>'
                    for n in range(1, 100_000))
    styles = (f'<?xml version="1.0"?><w:styles {w}><w:style w:type="character" w:styleId="s0"><w:rPr><w:vanish/>'
              f"</w:rPr></w:style>{chain}</w:styles>")
    body = '<w:p><w:r><w:rPr><w:rStyle w:val="s99999"/></w:rPr><w:t>Hidden at the end of the chain.</w:t></w:r></w:p>'
    atoms = (struct.pack("<HHI", 0, 0x0FA8, 4) + b"word") * 50_000
    depth = 50_000  # container i holds container i + 1, the innermost the atoms
    nested = b"".join(struct.pack("<HHI", 0xF, 0x0F0D, len(atoms) + 8 * (depth - 1 - i)) for i in range(depth)) + atoms
    slide = struct.pack("<HHI", 0xF, 0x03EE, len(nested)) + nested
    presentation = write_compound_file({"PowerPoint Document": slide, "Current User": bytes(20)})
    started = time.perf_counter()
    hidden = extract_bytes(docx_around(0, body, {"styles.xml": ("styles", styles)}), DOCX, pm)
    slides = extract_bytes(presentation, "application/vnd.ms-powerpoint", pm)
    assert time.perf_counter() - started < 20
    assert hidden.region_texts == [("Hidden at the end of the chain.", "hidden text")]
    assert slides.status is TextStatus.OK and slides.text.count("word") == 50_000


class TestVisio:
    def test_pages_in_their_order_shapes_a_line_a_paragraph_and_comments(self, pm):
        """Visio drawings (a network or an org chart) were `unsupported`; the masters' placeholder words, the
        same in every drawing, are not read."""
        from officegen import make_vsdx, visio_shape

        data = make_vsdx([("Network", visio_shape("Core router", "Rack 4") + visio_shape("Firewall", shape_id=2)),
                          ("Backup", visio_shape("Tape library in the vault", shape_id=3))],
                         master="Double-click to add text", comments=["Move this box"])
        assert detect_mime(data) == office.VSDX_MIME
        read = extract_bytes(data, office.VSDX_MIME, pm)
        assert (read.status, read.extractor) == (TextStatus.OK, "vsdx")
        assert read.body == "Core router\nRack 4\nFirewall\n\nTape library in the vault"
        assert read.page_starts == (0, read.body.index("Tape"))
        assert read.region_texts == [("Move this box", "the comments")]
        assert extract_bytes(b"PK\x03\x04 not a package", office.VSDX_MIME, pm).status is TextStatus.CORRUPT


class TestXps:
    def test_pages_in_their_documents_order_and_runs_laid_out_into_lines(self, pm):
        """XPS and OpenXPS (Windows' print-to-file format) were `unsupported`: typed application/octet-stream.
        Pages come in the order the fixed document lists them, whatever their names; runs on one baseline
        make a line, a run starting where the one before ended goes on its word (a change of style), one
        starting clear of it is a word apart."""
        from officegen import make_xps, xps_glyphs

        first = (xps_glyphs("Quarterly ", 96, 100) + xps_glyphs("re", 156, 100) + xps_glyphs("port", 168, 100)
                 + xps_glyphs("draft", 300, 100) + xps_glyphs('{braces} and "quotes"', 96, 120))
        second = xps_glyphs("Closing remarks", 96, 100, advance=None) + xps_glyphs("signed", 400, 100, advance=None)
        data = make_xps([second, first], names=["9.fpage", "10.fpage"][::-1])  # listed 10 then 9
        assert detect_mime(data) == "application/vnd.ms-xpsdocument"
        read = extract_bytes(data, "application/vnd.ms-xpsdocument", pm)
        assert (read.status, read.extractor) == (TextStatus.OK, "xps")
        assert read.body == 'Closing remarks signed\n\nQuarterly report draft\n{braces} and "quotes"'
        assert read.page_starts == (0, read.body.index("Quarterly"))
        oxps = make_xps([first], open_xps=True)
        assert detect_mime(oxps) == "application/oxps"
        assert extract_bytes(oxps, "application/oxps", pm).body.startswith("Quarterly report draft")

    def test_pages_of_outlines_only_are_empty_and_a_package_without_pages_corrupt(self, pm):
        from officegen import make_xps, zip_of

        outlined = make_xps(['<Path Data="M 0,0 L 10,10" Fill="#ff000000"/>'])
        assert extract_bytes(outlined, "application/oxps", pm).status is TextStatus.EMPTY
        bare = zip_of({"FixedDocSeq.fdseq": "<FixedDocumentSequence/>"})
        assert detect_mime(bare) == "application/vnd.ms-xpsdocument"
        assert extract_bytes(bare, "application/vnd.ms-xpsdocument", pm).status is TextStatus.CORRUPT


class TestOdf:
    def test_odp_pages_and_notes(self, pm):
        data = make_odf(ODP, ODP_BODY)
        assert detect_mime(data) == ODP
        result = extract_bytes(data, ODP, pm)
        assert result.status is TextStatus.OK, result.reason
        body = "Welcome\nto the talk\n\nSecond slide  here"  # literal white space collapsed, text:s kept
        assert result.text == body + "\n\nRemember to smile."
        assert result.page_starts == (0, body.index("Second"))
        assert result.regions == ((len(body) + 2, len(result.text), "the speaker notes of slide 1"),)
        assert result.extractor == "odp"

    def test_drawings_and_templates_are_read_as_their_kind(self, pm):
        """LibreOffice Draw drawings (their pages as slides) and every kind's templates were `unsupported`."""
        drawing = ("<office:drawing><draw:page><draw:frame><draw:text-box><text:p>Rack A feeds the core switch"
                   "</text:p></draw:text-box></draw:frame></draw:page><draw:page><draw:custom-shape><text:p>Backup"
                   "</text:p></draw:custom-shape></draw:page></office:drawing>")
        for mime, body, extractor, text in (
                (f"{office.ODG_MIME}-template", drawing, "odg", "Rack A feeds the core switch\n\nBackup"),
                (office.ODG_MIME, drawing, "odg", "Rack A feeds the core switch\n\nBackup"),
                (f"{ODT}-template", "<office:text><text:p>Dear customer,</text:p></office:text>", "odt",
                 "Dear customer,"),
                (f"{ODP}-template", ODP_BODY, "odp", None), (f"{ODS}-template", ODS_BODY, "ods", None)):
            data = make_odf(mime, body)
            assert detect_mime(data) == mime
            result = extract_bytes(data, mime, pm)
            assert (result.status, result.extractor) == (TextStatus.OK, extractor), mime
            if text is not None:
                assert result.text == text
        assert extract_bytes(make_odf(office.ODG_MIME, drawing), office.ODG_MIME, pm).page_starts == (0, 30)

    def test_ods_rows_cells_repeats_and_sheets(self, pm):
        data = make_odf(ODS, ODS_BODY)
        assert detect_mime(data) == ODS
        result = extract_bytes(data, ODS, pm)
        assert result.status is TextStatus.OK, result.reason
        budget = "Sheet: Budget\nItem\tCost\nPaper A4\t\t\t12.50\nsame\tsame\nsame\tsame"
        sheets = budget + "\n\nSheet: Second\n\tafter a merged cell"
        assert result.text == sheets + "\n\na comment"  # a cell's comment: after the sheets, with its place
        assert result.regions == ((len(sheets) + 2, len(result.text), "the comments of sheet Budget"),)
        assert result.page_starts == (0, len(budget) + 2)
        assert "truncated" not in result.meta and result.extractor == "ods"

    def test_ods_repeat_bomb_is_cut(self, pm):
        row = ('<table:table-row table:number-rows-repeated="1048576">'
               '<table:table-cell table:number-columns-repeated="16384"><text:p>x</text:p></table:table-cell>'
               "</table:table-row>")
        data = make_odf(ODS, f'<office:spreadsheet><table:table table:name="T">{row}</table:table>'
                             "</office:spreadsheet>")
        assert len(data) < 2000
        started = time.perf_counter()
        result = extract_bytes(data, ODS, pm)
        assert time.perf_counter() - started < 10
        assert result.meta["truncated"] == f"cut at {office.MAX_SHEET_CELLS} cells"
        assert result.text.count("\n") == office.MAX_SHEET_CELLS // 16384

    def test_ods_long_text_repeated_is_cut_by_characters(self, pm):
        cell = ('<table:table-cell table:number-columns-repeated="' + "9" * 5000 + '">'  # absurd count
                f"<text:p>{'long words ' * 100}</text:p></table:table-cell>")
        data = make_odf(ODS, '<office:spreadsheet><table:table table:name="T">'
                             f'<table:table-row table:number-rows-repeated="99999">{cell}</table:table-row>'
                             "</table:table></office:spreadsheet>")
        result = extract_bytes(data, ODS, pm, ExtractLimits(max_chars=100_000))
        assert result.status is TextStatus.PARTIAL  # the rest of the sheet is not read, and it says so
        assert result.meta["truncated"] == "cut at max_chars characters"
        assert 90_000 < len(result.text) <= 100_000

    def test_odt_table_rows_are_lines(self, pm):
        body = ("<office:text><text:h>Title</text:h><table:table><table:table-row>"
                "<table:table-cell><text:p>a</text:p></table:table-cell>"
                "<table:table-cell><text:p>b</text:p><text:p>c</text:p></table:table-cell>"
                "</table:table-row></table:table>\n   <text:p>after</text:p></office:text>")
        result = extract_bytes(make_odf(ODT, body), ODT, pm)
        assert result.text == "Title\na\tb c\nafter"

    @pytest.mark.parametrize("mime", [ODT, ODP, ODS])
    def test_encrypted(self, pm, mime):
        result = extract_bytes(make_odf(mime, "<office:text/>", manifest=ENCRYPTED_MANIFEST), mime, pm)
        assert result.status is TextStatus.ENCRYPTED

    @pytest.mark.parametrize("mime", [ODP, ODS])
    def test_entity_bomb_and_corrupt(self, pm, mime):
        data = with_member(make_odf(mime, ODP_BODY), "content.xml", ENTITY_BOMB)
        result = extract_bytes(data, mime, pm)
        assert result.status is TextStatus.CORRUPT and "DTD" in result.reason
        assert extract_bytes(b"PK\x03\x04 not a zip", mime, pm).status is TextStatus.CORRUPT

    def test_odf_zip_bomb_member(self, pm):
        data = make_odf(ODS, ODS_BODY)
        bomb = with_member(data, "content.xml", b"<x>" + b" " * (30 * 1024 * 1024) + b"</x>")
        result = extract_bytes(bomb, ODS, pm)
        assert result.status is TextStatus.TOO_LARGE and "zip bomb" in result.reason

    def test_end_to_end(self, pm, tmp_path: Path):
        (tmp_path / "slides.bin").write_bytes(make_odf(ODP, ODP_BODY))
        record, result = extract_file(tmp_path / "slides.bin", pm)
        assert record.mime == ODP and result.regions


# --- RTF ----------------------------------------------------------------------

RTF_HEAD = rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Arial;}{\f1\froman\fcharset204 Times;}}"


class TestRtf:
    def test_headers_footers_footnotes_comments_and_text_boxes_are_regions(self, pm):
        """striprtf skips \\header, \\footer, \\footnote, \\*\\annotation and a shape's \\shptxt: each is read as
        a document of its own under the file's font table (its charsets), after the body, once."""
        data = (rb"{\rtf1\ansi\ansicpg1251\deff0{\fonttbl{\f0\fcharset204 Times;}}{\header \'c0\'e4 top\par}"
                rb"{\headerr \'c0\'e4 top\par}{\footer Page bottom.\par}Body text.{\*\atnid A}{\*\atnauthor Ann}"
                rb"\chatn{\*\annotation Check the source.}\chftn{\footnote \chftn A note.} More body."
                rb"{\shp{\*\shpinst{\sp{\sn fill}}{\shptxt Boxed words.\par}}}\par}")
        result = extract_bytes(data, detect_mime(data), pm)
        assert (result.body, result.region_texts) == ("Body text. More body.", [
            ("\u0410\u0434 top", "a page header"), ("Page bottom.", "a page footer"),
            ("Check the source.", "the comments"), ("A note.", "the footnotes"), ("Boxed words.", "a text box")])
        assert "Ann" not in result.text

    def test_code_page_bytes_unicode_escapes_and_charsets(self, pm):
        data = (RTF_HEAD + rb"\f0 Le caf\'e9 de la fa\'e7ade est \u224? c\u244?t\u233? de l'h\'f4pital, "
                rb"o\u249? il d\'e9jeune.\par {\f1 \'cf\'f0\'e8\'e2\'e5\'f2}\par Emoji \u-10179?\u-8704?.\par"
                rb" C:\\bin and \{braces\}.}")
        assert detect_mime(data) == "text/rtf"
        result = extract_bytes(data, "text/rtf", pm)
        assert result.status is TextStatus.OK, result.reason  # the loss check does not count control words
        assert result.text == f"{FRENCH}\nПривет\nEmoji \U0001f600.\nC:\\bin and {{braces}}."

    def test_many_control_words_are_not_partial(self, pm):
        words = " ".join(f"word{i}" for i in range(200))
        data = RTF_HEAD + rb"\pard\plain\f0\fs24\lang1033\b\i\ul\cf1\highlight2 " + words.encode() + rb"\par}"
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.status is TextStatus.OK and result.text == words

    def test_embedded_picture_is_fast(self, pm):
        picture = b"{\\*\\shppict{\\pict\\pngblip " + os.urandom(2_500_000).hex().encode() + b"}}"
        data = RTF_HEAD + rb"\f0 Before.\par " + picture + rb"After.\par}"
        assert len(data) > 5_000_000
        started = time.perf_counter()
        result = extract_bytes(data, "text/rtf", pm)
        assert time.perf_counter() - started < 1.0  # striprtf alone: about 1 s
        assert result.text == "Before.\nAfter."

    def test_binary_picture_data_is_cut(self, pm):
        picture = b"{\\pict\\wmetafile8\\bin4096 " + os.urandom(4096) + b"}"
        result = extract_bytes(RTF_HEAD + rb"\f0 A " + picture + rb"B.}", "text/rtf", pm)
        assert result.status is TextStatus.OK and result.text == "A B."

    def test_hostile_font_table_and_fields_are_linear(self, pm):
        fonts = rb"{\rtf1{\fonttbl " + rb"\f1 x" * 200_000 + rb"}}"
        field = rb'{\field{\*\fldinst{HYPERLINK "http://example.com/"}}{\fldrslt{link}}} '
        fields = RTF_HEAD + field * 20_000 + rb"{\field{\*\fldinst{HYPERLINK " + b"a " * 100_000 + b"}"
        # 2,000 footnotes under a 50 KB font table: read one by one under it, 26 s
        table = b"".join(b"{\\f%d\\fcharset0 Font %d;}" % (n, n) for n in range(1500))
        notes = (b"{\\rtf1\\ansi{\\fonttbl" + table + b"}"
                 + b"".join(b"Body %d.\\chftn{\\footnote \\chftn Note %d.} " % (n, n) for n in range(2000)) + b"}")
        for data in (fonts, fields, notes):
            started = time.perf_counter()
            result = extract_bytes(data, "text/rtf", pm)
            assert time.perf_counter() - started < 5, len(data)  # striprtf alone: 11 minutes for `fonts`
            if data is fields:
                assert result.text.startswith("link link")
        assert [(text.count("Note"), label) for text, label in result.region_texts] == [(2000, "the footnotes")]
        # metafiles nested 100,000 deep, 100,000 more, then a PNG never closed: each group read once, the search
        # going on after its end (from each group's start: 10^10 tokens)
        pictures = (RTF_HEAD + rb"{\pict\wmetafile8 89" * 100_000 + rb"}" * 100_000
                    + rb"{\pict\wmetafile8 89}" * 100_000 + rb"{\pict\pngblip 89")
        started = time.perf_counter()
        found = list(unpack_rtf_pictures(pictures, "text/rtf", Budget(ExtractLimits())))
        assert time.perf_counter() - started < 5 and found == []

    def test_not_rtf_is_corrupt(self):
        limits = ExtractLimits()
        with pytest.raises(ExtractionError) as missing_header:
            rtf.extract_rtf(b"Plain words, no RTF header.", "text/rtf", limits)
        with pytest.raises(ExtractionError) as binary:
            rtf.extract_rtf(b"{\\rtf1 " + bytes(range(32)) * 100 + b"}", "text/rtf", limits)
        assert missing_header.value.status == binary.value.status == "corrupt"

    def test_binary_garbage_typed_rtf_has_no_text(self, pm):
        result = extract_bytes(b"{\\rtf1 " + bytes(range(256)) * 200 + b"}", "text/rtf", pm)
        assert result.status is not TextStatus.OK and result.text == ""

    def test_wordpad_trailing_nul_is_fine(self, pm):
        result = extract_bytes(RTF_HEAD + rb"\f0 Saved by WordPad.\par}" + b"\x00", "text/rtf", pm)
        assert result.status is TextStatus.OK and result.text == "Saved by WordPad."


# --- legacy Word (.doc) ---------------------------------------------------------


class TestCompoundFileWriter:
    def test_olefile_reads_streams_storages_and_both_stream_sizes(self):
        streams = {
            "WordDocument": bytes(range(256)) * 40,  # regular sectors
            "1Table": b"table",  # mini stream
            "__attach_version1.0_#00000000/__substg1.0_37010102": b"attached" * 1000,
            "__attach_version1.0_#00000000/__substg1.0_3707001F": "report.pdf".encode("utf-16-le"),
            "__properties_version1.0": bytes(32),
            "empty": b"",
            **{f"s{i:02}": bytes([i]) * (i * 70) for i in range(40)},
        }
        ole = olefile.OleFileIO(write_compound_file(streams), raise_defects=olefile.DEFECT_INCORRECT)
        assert {"/".join(p) for p in ole.listdir()} == set(streams)
        for path, content in streams.items():
            assert ole.openstream(path).read() == content
        assert ole.get_type("__attach_version1.0_#00000000") == olefile.STGTY_STORAGE

    def test_more_fat_sectors_than_the_header_holds(self):
        big = os.urandom(1024) * 8 * 1024  # 8 MiB: 16,384 sectors, 129 FAT sectors > 109
        ole = olefile.OleFileIO(write_compound_file({"Big": big, "small": b"x"}),
                                raise_defects=olefile.DEFECT_INCORRECT)
        assert ole.openstream("Big").read() == big and ole.openstream("small").read() == b"x"

    def test_invalid_names_refused(self):
        for streams in ({"a:b": b""}, {"x" * 32: b""}, {"A": b"", "a": b""}, {"s": b"", "s/t": b""}):
            with pytest.raises(ValueError):
                write_compound_file(streams)


class TestDoc:
    def test_registered_for_libmagics_type(self, pm):
        assert detect_mime(word97("Hello.")) == DOC
        assert choose_extractor(pm, DOC).name == "antiword"

    @needs_antiword
    def test_word97_text(self, pm, tmp_path: Path):
        path = tmp_path / "letter.bin"  # typed by content
        path.write_bytes(word97(f"Dear reader,\n{FRENCH}\nYours."))
        record, result = extract_file(path, pm)
        assert record.mime == DOC
        assert result.status is TextStatus.OK, result.reason
        assert result.text == f"Dear reader,\n{FRENCH}\nYours."

    @needs_antiword
    def test_encrypted(self, pm):
        result = extract_bytes(word97("secret", encrypted=True), DOC, pm)
        assert result.status is TextStatus.ENCRYPTED and "Encrypted" in result.reason

    @needs_antiword
    def test_not_word_is_corrupt(self, pm):
        workbook = write_compound_file({"Workbook": bytes(5000)})
        for data in (workbook, b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(3000), word97("cut")[:1500]):
            result = extract_bytes(data, DOC, pm)
            assert result.status is TextStatus.CORRUPT and result.reason.startswith("antiword:"), result.reason
            assert "scanner-doc-" not in result.reason  # the private copy's path is not reported

    def test_missing_antiword_is_unsupported(self, pm, monkeypatch):
        monkeypatch.setattr(doc_plugin, "antiword_path", lambda: None)
        result = extract_bytes(word97("x"), DOC, pm)
        assert result.status is TextStatus.UNSUPPORTED
        assert result.reason == "antiword is not installed (apt install antiword)"

    @pytest.mark.parametrize(("script", "status", "reason"), [
        ("exec sleep 5", TextStatus.TIMEOUT, "antiword ran over"),
        ("kill -SEGV $$", TextStatus.CORRUPT, "antiword crashed (signal 11)"),
    ])
    def test_hang_and_crash(self, pm, monkeypatch, tmp_path: Path, script, status, reason):
        program = tmp_path / "fake-antiword"
        program.write_text(f"#!/bin/sh\n{script}\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setattr(doc_plugin, "antiword_path", lambda: str(program))
        monkeypatch.setattr(doc_plugin, "TIMEOUT_SECONDS", 0.5)
        result = extract_bytes(word97("x"), DOC, pm)
        assert result.status is status and result.reason.startswith(reason)


def test_password_protected_office_file_is_encrypted(pm) -> None:
    """A DOCX, XLSX or PPTX saved with a password is an OLE2 file holding an EncryptedPackage: said so."""
    data = write_compound_file({"EncryptionInfo": b"\x04\x00\x04\x00" + bytes(200),
                                "EncryptedPackage": bytes(5000), "\x06DataSpaces/Version": bytes(80)})
    assert detect_mime(data) == "application/encrypted"
    result = extract_bytes(data, detect_mime(data), pm)
    assert result.status is TextStatus.ENCRYPTED and result.reason.endswith("a password is needed")
    tried = extract_bytes(data, detect_mime(data), pm, limits=ExtractLimits(passwords=("secret",)))
    assert tried.status is TextStatus.CORRUPT  # its encryption header is zeros: no decryptor reads it
    assert tried.reason.startswith("password-protected Office document that cannot be decrypted")


class TestTextBesideTheBody:
    """Text a reader of a Word or ODF file has beside its body: text boxes, page headers and footers,
    reviewers' comments, text deleted with changes tracked, text formatted hidden. Each is indexed once,
    after the body, as a marked region with its place; before session 29 none of it was indexed (hidden
    runs were read as body text)."""

    LEAK = "The harbour ledger was copied here word for word. It lists every ship and every cargo."

    @pytest.mark.parametrize(("kind", "label"), [
        ("docx-textbox", "a text box"), ("docx-comment", "the comments"), ("docx-header", "a page header"),
        ("docx-deleted", "the tracked deletions"), ("docx-hidden", "hidden text"), ("odt-comment", "the comments"),
        ("odt-deleted", "the tracked deletions"), ("odt-header", "a page header"),
        ("docx-alt-text", "the pictures' alternative text")])
    def test_each_is_a_region_once_after_the_body(self, pm, kind: str, label: str) -> None:
        data = CARRIERS[kind](self.LEAK, 3).data
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.status is TextStatus.OK, result.reason
        assert result.text.count("harbour ledger") == 1  # a text box's VML copy is not read again
        start = result.text.index("harbour ledger")
        assert result.region_at(start, start + 10) == label and start > result.body_end
        assert "Reviewer" not in result.text and "Writer" not in result.text  # authors are not text
        assert not result.page_starts
        if kind == "docx-hidden":  # the visible words of the paragraphs stay in the body
            assert result.body.count("Notes follow.") == len(self.LEAK.split("\n"))

    def test_hidden_runs_keep_their_order_and_the_visible_words_theirs(self, pm) -> None:
        hidden = '<w:r><w:rPr><w:vanish/></w:rPr><w:t xml:space="preserve">{}</w:t></w:r>'
        shown = '<w:r><w:t xml:space="preserve">{}</w:t></w:r>'
        body = ("<w:p>" + shown.format("First seen, ") + hidden.format("first hidden, ") + shown.format("then seen.")
                + hidden.format("and more hidden.") + "</w:p><w:p>" + hidden.format("Second hidden.")
                + '<w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t>Shown after all.</w:t></w:r></w:p>')
        result = extract_bytes(docx_around(0, body), DOCX, pm)
        assert "First seen, then seen.\nShown after all." in result.body
        assert result.region_texts == [("first hidden, and more hidden.\nSecond hidden.", "hidden text")]

    def test_alternative_text_but_office_own_captions(self, pm) -> None:
        """A picture's or a shape's title and description (Word's wp:docPr, a slide's p:cNvPr) are a region;
        the captions Office writes itself, the same words in every document, are not."""
        auto = "A screenshot of a computer&#xA;&#xA;Description automatically generated"
        body = ('<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
                f'wordprocessingDrawing"><wp:docPr id="1" name="Picture 1" descr="{auto}"/>'
                '<wp:docPr id="2" name="Picture 2" title="Ledger" descr="The harbour ledger, page one."/>'
                "</wp:inline></w:drawing></w:r></w:p>")
        result = extract_bytes(docx_around(2, body), DOCX, pm)
        assert result.region_texts == [("Ledger\nThe harbour ledger, page one.", "the pictures' alternative text")]
        shape = ('<p:pic><p:nvPicPr><p:cNvPr id="4" name="Picture 3" descr="Minutes of the harbour board."/>'
                 "</p:nvPicPr></p:pic>")
        slides = make_pptx({"slide1.xml": text_shape("First slide"), "slide2.xml": shape}, ["slide1.xml", "slide2.xml"])
        result = extract_bytes(slides, detect_mime(slides), pm)
        assert result.region_texts == [("Minutes of the harbour board.", "the alternative text of slide 2")]

    def test_text_hidden_by_a_style_is_hidden_text(self, pm) -> None:
        """Hiding text through a character or paragraph style (`w:vanish` in styles.xml, or in a style it is
        based on) leaves no mark on the runs; their own `w:vanish w:val="0"` still shows them."""
        w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        styles = (f'<?xml version="1.0"?><w:styles {w}>'
                  '<w:style w:type="character" w:styleId="Secret"><w:rPr><w:vanish/></w:rPr></w:style>'
                  '<w:style w:type="paragraph" w:styleId="Quiet"><w:rPr><w:vanish/></w:rPr></w:style>'
                  '<w:style w:type="paragraph" w:styleId="Quieter"><w:basedOn w:val="Quiet"/></w:style>'
                  '<w:style w:type="paragraph" w:styleId="Loud"><w:basedOn w:val="Quiet"/>'
                  '<w:rPr><w:vanish w:val="0"/></w:rPr></w:style></w:styles>')
        body = ('<w:p><w:r><w:t xml:space="preserve">Seen words, </w:t></w:r><w:r><w:rPr><w:rStyle w:val="Secret"/>'
                '</w:rPr><w:t>the harbour ledger by a character style.</w:t></w:r></w:p>'
                '<w:p><w:pPr><w:pStyle w:val="Quieter"/></w:pPr><w:r><w:t>The ledger by a paragraph style.</w:t>'
                '</w:r><w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t xml:space="preserve"> Shown again.</w:t>'
                "</w:r></w:p>"
                '<w:p><w:pPr><w:pStyle w:val="Loud"/></w:pPr><w:r><w:t>A style that shows.</w:t></w:r></w:p>')
        result = extract_bytes(docx_around(4, body, {"styles.xml": ("styles", styles)}), DOCX, pm)
        assert result.region_texts == [("the harbour ledger by a character style.\nThe ledger by a paragraph style.",
                                         "hidden text")]
        assert "Seen words," in result.body and "Shown again." in result.body and "A style that shows." in result.body
        assert "ledger" not in result.body

    def test_a_header_repeated_by_another_part_is_listed_once(self, pm) -> None:
        header = ('<?xml version="1.0"?><w:hdr xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/'
                  f'main">{w_paragraphs("Confidential: the harbour board only.")}</w:hdr>')
        data = docx_around(1, "", {"header1.xml": ("header", header), "header2.xml": ("header", header),
                                    "footer1.xml": ("footer", header.replace("w:hdr", "w:ftr"))})
        result = extract_bytes(data, detect_mime(data), pm)
        assert [label for _, _, label in result.regions] == ["a page header", "a page footer"]
        assert result.text.count("harbour board") == 2

    def test_comments_of_slides_and_sheets_follow_the_pages(self, pm) -> None:
        """PPTX comments in the legacy form (p:text) and the modern one (DrawingML), XLSX comments legacy and
        threaded (Excel writes a threaded comment again as a legacy note, behind a notice: read once), ODP
        and ODS comments: each slide's or sheet's after the pages, with its place; authors are not text."""
        modern_rels = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                       'relationships"><Relationship Id="rId1" Type="http://schemas.microsoft.com/office/2018/10/'
                       'relationships/comments" Target="../comments/modernComment_1.xml"/></Relationships>')
        data = make_pptx({"slide1.xml": text_shape("First slide"), "slide2.xml": text_shape("Second slide")},
                         ["slide1.xml", "slide2.xml"], extra={
            "ppt/slides/_rels/slide1.xml.rels": relationships(("rId1", "comments", "../comments/comment1.xml")),
            "ppt/comments/comment1.xml": '<p:cmLst xmlns:p="http://schemas.openxmlformats.org/presentationml/'
                                         '2006/main"><p:cm authorId="0"><p:text>Is this chart ours?</p:text>'
                                         "</p:cm></p:cmLst>",
            "ppt/slides/_rels/slide2.xml.rels": modern_rels,
            "ppt/comments/modernComment_1.xml": (
                '<p188:cmLst xmlns:p188="http://schemas.microsoft.com/office/powerpoint/2018/8/main" '
                'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p188:cm authorId="{A}">'
                "<p188:txBody><a:bodyPr/><a:p><a:r><a:t>Copied from the annual report.</a:t></a:r></a:p>"
                "</p188:txBody></p188:cm></p188:cmLst>")})
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.region_texts == [
            ("Is this chart ours?", "the comments of slide 1"),
            ("Copied from the annual report.", "the comments of slide 2")]

        spreadsheet = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
        legacy = (f'<comments xmlns="{spreadsheet}"><authors><author>Ann Author</author></authors><commentList>'
                  '<comment ref="A1" authorId="0"><text><r><t>Check this figure.</t></r></text></comment>'
                  "</commentList></comments>")
        threaded = ('<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/'
                    'threadedcomments"><threadedComment ref="A1" id="{B}"><text>From the audit, page 4.</text>'
                    "</threadedComment></ThreadedComments>")
        mirror = legacy.replace("Check this figure.", "[Threaded comment] Your version of Excel... "
                                "Comment: From the audit, page 4.")
        threaded_rels = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                         'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
                         'officeDocument/2006/relationships/comments" Target="../comments2.xml"/><Relationship '
                         'Id="rId2" Type="http://schemas.microsoft.com/office/2017/10/relationships/threadedComment" '
                         'Target="../threadedComments/threadedComment1.xml"/></Relationships>')
        row = '<row r="1"><c r="A1" t="inlineStr"><is><t>42</t></is></c></row>'
        data = make_xlsx([("Costs", "sheet1.xml", row), ("Audit", "sheet2.xml", row)], [], extra={
            "xl/worksheets/_rels/sheet1.xml.rels": relationships(("rId1", "comments", "../comments1.xml")),
            "xl/comments1.xml": legacy, "xl/comments2.xml": mirror,
            "xl/worksheets/_rels/sheet2.xml.rels": threaded_rels,
            "xl/threadedComments/threadedComment1.xml": threaded})
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.region_texts == [
            ("Check this figure.", "the comments of sheet Costs"),
            ("From the audit, page 4.", "the comments of sheet Audit")]
        assert "Ann Author" not in result.text and "Your version" not in result.text

        slide = ("<office:presentation><draw:page><draw:frame><draw:text-box><text:p>A slide"
                 "<office:annotation><text:p>Cite the source.</text:p></office:annotation></text:p>"
                 "</draw:text-box></draw:frame></draw:page></office:presentation>")
        result = extract_bytes(make_odf(ODP, slide), ODP, pm)
        assert result.text == "A slide\n\nCite the source."
        assert result.regions == ((9, len(result.text), "the comments of slide 1"),)

    def test_diagrams_charts_and_sheet_drawings_are_regions(self, pm) -> None:
        """SmartArt keeps its text in a data part (its drawing part is a cached copy: not read again), a
        chart its title (its values are numbers), a sheet its text boxes in a drawing part: no slide, page
        or sheet holds them, and they were read nowhere."""
        a = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
        diagram = (f'<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" {a}>'
                   "<dgm:ptLst><dgm:pt><dgm:t><a:p><a:r><a:t>Gather the ledgers</a:t></a:r></a:p></dgm:t></dgm:pt>"
                   "<dgm:pt><dgm:t><a:p><a:r><a:t>Compare the cargo lists</a:t></a:r></a:p></dgm:t></dgm:pt>"
                   "</dgm:ptLst></dgm:dataModel>")
        chart = (f'<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" {a}><c:chart>'
                 "<c:title><c:tx><c:rich><a:p><a:r><a:t>Cargo by year</a:t></a:r></a:p></c:rich></c:tx></c:title>"
                 "<c:plotArea><c:barChart><c:ser><c:val><c:numRef><c:numCache><c:pt><c:v>1878</c:v></c:pt>"
                 "</c:numCache></c:numRef></c:val></c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>")
        data = make_pptx({"slide1.xml": text_shape("A slide")}, ["slide1.xml"], extra={
            "ppt/diagrams/data1.xml": diagram, "ppt/diagrams/drawing1.xml": diagram.replace("Gather", "Cached"),
            "ppt/charts/chart1.xml": chart})
        result = extract_bytes(data, detect_mime(data), pm)
        assert (result.body, result.region_texts) == ("A slide", [
            ("Gather the ledgers\nCompare the cargo lists", "a diagram (SmartArt)"), ("Cargo by year", "a chart")])
        drawing = ('<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" '
                   f'{a}><xdr:twoCellAnchor><xdr:sp><xdr:txBody><a:p><a:r><a:t>Checked against the harbour '
                   "book.</a:t></a:r></a:p></xdr:txBody></xdr:sp></xdr:twoCellAnchor></xdr:wsDr>")
        row = '<row r="1"><c r="A1" t="inlineStr"><is><t>42</t></is></c></row>'
        data = make_xlsx([("Costs", "sheet1.xml", row)], [], extra={"xl/drawings/drawing1.xml": drawing})
        result = extract_bytes(data, detect_mime(data), pm)
        assert result.region_texts == [("Checked against the harbour book.", "a drawing on a sheet")]

    def test_objects_embedded_in_an_odf_document_are_regions(self, pm) -> None:
        """An ODF document's embedded objects are documents of their own in folders of the package ("Object
        1/content.xml"): a spreadsheet in a text, a chart. content.xml only points to them."""
        embedded = ('<?xml version="1.0"?><office:document-content '
                    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
                    "<text:p>Figures copied from the harbour ledger.</text:p></office:text></office:body>"
                    "</office:document-content>")
        data = make_odf(ODT, "<office:text><text:p>The report.</text:p></office:text>",
                        extra={"Object 1/content.xml": embedded})
        result = extract_bytes(data, ODT, pm)
        assert (result.body, result.region_texts) == (
            "The report.", [("Figures copied from the harbour ledger.", "an embedded object")])


@pytest.mark.parametrize(("kind", "prefer", "title", "left_out"), [
    ("docx-properties", None, "Quarterly notes", "A. Writer"),  # the author's name is no text of the document
    ("odt-properties", None, "Minutes", "true"),  # a yes/no property is no text either
    ("pdf-properties", "pdfium", "Annual report", "A. Writer"),
    ("pdf-properties", "pdfminer", "Annual report", "A. Writer"),
    ("pdf-xmp", "pdfium", "Annual report", "A. Writer"),  # session 34: XMP, PDF 2.0's only properties
    ("pdf-xmp", "pdfminer", "Annual report", "A. Writer"),
])
def test_document_properties_are_a_marked_region(pm, kind: str, prefer: str | None, title: str,
                                                 left_out: str) -> None:
    """Text typed into File > Properties (comments, a custom property, a PDF's subject) is on no page, and was
    read nowhere before session 33: it follows the body as "the document properties", a line a value."""
    leak = "the harbour budget moved forty thousand pounds to the eastern quay before the vote"
    data = CARRIERS[kind](leak, 0).data
    result = extract_bytes(data, detect_mime(data), pm, prefer=prefer)
    start, end, label = result.regions[-1]
    assert label == "the document properties" and result.text[start:end] == f"{title}\n{leak}"
    assert left_out not in result.text[start:end]
    assert start > 0 and leak not in result.text[:start]  # after the body, and only there
