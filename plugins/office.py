"""DOCX, PPTX, XLSX, ODT/ODP/ODS and EPUB: ZIP containers read with the stdlib under a zip-bomb budget.

Every member is inflated through `SafeZip`, whose budget is shared by all reads
of one file. XML is parsed by expat (no recursion in Python) after refusing any
DTD, in UTF-8 or UTF-16, so entity-expansion bombs never reach the parser; the
trees are walked with an explicit stack so deep nesting cannot hit the
recursion limit. One walker (`_layout_text`) lays out the text of every XML
vocabulary here: paragraphs end lines, table rows end lines and their cells are
separated by tabs.

Slides and sheets are pages (`Extracted.page_starts`, so a passage is cited by
slide or sheet); speaker notes follow the slides as marked regions
(`Extracted.regions`). Spreadsheets are read row by row, and the cells a file may
expand to are capped (`MAX_SHEET_CELLS`, meta["truncated"] when reached): a
cell at XFD1048576, or ODF's repeat counts, turn a few bytes into billions of
tabs otherwise.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import unquote

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.zipsafe import SafeZip
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import PROPERTIES_REGION, Extractor, Member, Unpacker, hookimpl
from scanner_plugins._xml import local_name, parse_xml, refuse_dtd
from scanner_plugins.archives import zip_members
from scanner_plugins.html import decode_html, html_to_text

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX_MIME = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
XLS_MIME = "application/vnd.ms-excel"  # Excel 97-2003 (BIFF8) and older BIFF workbooks
ODT_MIME = "application/vnd.oasis.opendocument.text"
ODP_MIME = "application/vnd.oasis.opendocument.presentation"
ODS_MIME = "application/vnd.oasis.opendocument.spreadsheet"
VSDX_MIME = "application/vnd.ms-visio.drawing.main+xml"  # what libmagic calls a .vsdx (by its content types)
VISIO_MIMES = (VSDX_MIME, "application/vnd.ms-visio.drawing.macroEnabled.main+xml",
               "application/vnd.ms-visio.template.main+xml", "application/vnd.ms-visio.template.macroEnabled.main+xml",
               "application/vnd.ms-visio.drawing")
# XPS (Windows' fixed-layout print format, `.xps`) and OpenXPS (ECMA-388, `.oxps`): OPC packages of pages
XPS_MIMES = ("application/vnd.ms-xpsdocument", "application/oxps")
ODG_MIME = "application/vnd.oasis.opendocument.graphics"  # LibreOffice Draw: pages of shapes, as slides
# each kind's templates (.ott, .otp, .ots, .otg) and the master document (.odm), which hold text as it does
ODF_FAMILIES = {
    "odt": (ODT_MIME, f"{ODT_MIME}-template", f"{ODT_MIME}-master", f"{ODT_MIME}-master-template"),
    "odp": (ODP_MIME, f"{ODP_MIME}-template"),
    "ods": (ODS_MIME, f"{ODS_MIME}-template"),
    "odg": (ODG_MIME, f"{ODG_MIME}-template"),
}
EPUB_MIME = "application/epub+zip"
MAX_SHEET_CELLS = 5_000_000  # cell positions (gaps and repeats included) one workbook may expand to
_SPACE_RUNS = re.compile(r"[ \t]*\n[ \t\n]*")
_XML_WHITE_SPACE = re.compile(r"[ \t\r\n]+")
_CELL_REFERENCE = re.compile(r"[A-Za-z]{1,3}")
_FEED = 1024 * 1024
_DIGITS = re.compile(r"[0-9]+")


def _attribute(node: ET.Element, name: str) -> str:
    """An attribute's value by its local name, whatever its namespace ("" when absent)."""
    return next((value for key, value in node.attrib.items() if local_name(key) == name), "")


def _streamed_records(data: bytes, what: str, record: str) -> Iterator[ET.Element]:
    """Each complete `record` element (a worksheet's row, a shared string) of untrusted XML, parsed a
    megabyte at a time; each is cleared and dropped from the tree once the caller moves on, so a large
    part is never held whole and the caller can stop early."""
    refuse_dtd(data, what)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    open_elements: list[ET.Element] = []

    namespaced = "}" + record

    def complete_records() -> Iterator[ET.Element]:
        # typeshed allows every event kind; only start and end, each with its element, were asked for
        for event, node in cast("Iterator[tuple[str, ET.Element]]", parser.read_events()):
            if event == "start":
                open_elements.append(node)
                continue
            open_elements.pop()
            if node.tag == record or node.tag.endswith(namespaced):
                yield node
                node.clear()
                if open_elements:
                    open_elements[-1].remove(node)

    try:
        for offset in range(0, len(data), _FEED):
            parser.feed(data[offset:offset + _FEED])
            yield from complete_records()
        parser.close()
        yield from complete_records()
    except ET.ParseError as exc:
        raise ExtractionError(f"{what}: malformed XML: {exc}", status="corrupt") from exc


def _count(value: str, default: int) -> int:
    """A count attribute (repeats, spaces) as an int; absurd ones stay large but cost nothing to parse."""
    if not _DIGITS.fullmatch(value):
        return default
    return int(value) if len(value) <= 9 else 10**9


def _tidy(text: str) -> str:
    return _SPACE_RUNS.sub("\n", text).strip()


def _cell_text(text: str) -> str:
    """A cell's text on one line: its paragraphs, line breaks and tabs become single spaces."""
    return " ".join(text.split())


# --- one layout for every XML vocabulary -------------------------------------


@dataclass(frozen=True)
class _Vocabulary:
    """The elements (local names) that shape the plain text of one XML format.

    `runs`: elements whose own text is document text (WordprocessingML's and DrawingML's
    `t`); empty for ODF, whose text is all character data inside its paragraphs
    (white space collapsed, as ODF requires, so indented XML adds none).
    """

    runs: frozenset[str] = frozenset()
    paragraphs: frozenset[str] = frozenset()  # end a line (a space inside a table cell)
    rows: frozenset[str] = frozenset()  # end a line
    cells: frozenset[str] = frozenset()  # end with a tab
    breaks: Mapping[str, str] = field(default_factory=dict)  # empty elements that stand for a character
    skip: frozenset[str] = frozenset()  # subtrees that are not the document's text
    spaces: str = ""  # ODF's text:s, a run of text:c spaces


def _space_count(node: ET.Element) -> int:
    count = next((value for key, value in node.attrib.items() if local_name(key) == "c"), "1")
    return min(_count(count, 1), 1000)


def _layout_text(root: ET.Element, vocabulary: _Vocabulary) -> str:
    """The text under `root` in document order, laid out by `vocabulary` (not tidied)."""
    mixed = not vocabulary.runs
    out: list[str] = []
    cells_open = paragraphs_open = 0

    def character_data(text: str | None) -> None:
        if text and paragraphs_open:
            out.append(_XML_WHITE_SPACE.sub(" ", text))

    stack: list[tuple[ET.Element, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        name = local_name(node.tag)
        if closing:
            if name in vocabulary.cells:
                cells_open -= 1
                if out and out[-1] == " ":  # the end of the cell's last paragraph
                    out.pop()
                out.append("\t")
            elif name in vocabulary.rows:
                out.append(" " if cells_open else "\n")
            elif name in vocabulary.paragraphs:
                paragraphs_open -= 1
                out.append(" " if cells_open else "\n")
            if mixed and node is not root:
                character_data(node.tail)
            continue
        if name in vocabulary.skip:
            if mixed and node is not root:
                character_data(node.tail)
            continue
        if name in vocabulary.cells:
            cells_open += 1
        elif name in vocabulary.paragraphs:
            paragraphs_open += 1
        if name in vocabulary.breaks:
            out.append(vocabulary.breaks[name])
        elif name and name == vocabulary.spaces:
            out.append(" " * _space_count(node))
        if mixed:
            character_data(node.text)
        elif name in vocabulary.runs and node.text:
            out.append(node.text)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return "".join(out)


def _outermost(root: ET.Element, name: str, skip: frozenset[str] = frozenset()) -> list[ET.Element]:
    """The elements named `name` (local name) under `root` in document order, not those inside another of
    them nor under a `skip` element (walked with an explicit stack: XML may nest deep)."""
    found: list[ET.Element] = []
    stack = [root]
    while stack:
        node = stack.pop()
        local = local_name(node.tag)
        if local == name and node is not root:
            found.append(node)
        elif local not in skip or node is root:
            stack.extend(reversed(node))
    return found


def _paged(pages: list[str], notes: list[tuple[str, str]], extractor: str, meta: dict[str, str],
           *, paged: bool = True) -> Extracted:
    """Pages (slides, sheets) joined by blank lines, each page's start in page_starts (`paged`; a text
    document's body is one piece with no pages); then each (label, text) of `notes` on a paragraph of its
    own, a marked region."""
    starts = [0] * len(pages)
    for number in range(1, len(pages)):
        starts[number] = starts[number - 1] + len(pages[number - 1]) + 2
    return Extracted(text="\n\n".join(pages), extractor=extractor, page_starts=tuple(starts) if paged else (),
                     meta=meta).with_regions(notes)


# --- OOXML packages -----------------------------------------------------------


def _relationship_id(node: ET.Element) -> str:
    """The r:id of a node (Transitional or Strict namespace); a plain `id` attribute is not it."""
    return next((value for key, value in node.attrib.items() if key.startswith("{") and key.endswith("}id")), "")


def _relationships(archive: SafeZip, part: str) -> dict[str, tuple[str, str]]:
    """Id -> (type, member path) of a part's internal relationships ("" for the package's own)."""
    folder, base = posixpath.split(part)
    rels_path = posixpath.join(folder, "_rels", f"{base}.rels")
    if not archive.has(rels_path):
        return {}
    found: dict[str, tuple[str, str]] = {}
    for rel in parse_xml(archive.read(rels_path), rels_path):
        target = unquote(rel.get("Target", ""))
        if local_name(rel.tag) != "Relationship" or not target or rel.get("TargetMode") == "External":
            continue
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        found[rel.get("Id", "")] = (rel.get("Type", ""), posixpath.normpath(path))
    return found


def _main_part(archive: SafeZip, default: str) -> str:
    """The officeDocument part named by _rels/.rels (word/document.xml, ppt/presentation.xml...)."""
    for rel_type, path in _relationships(archive, "").values():
        if rel_type.endswith("/officeDocument"):
            return path
    return default


def _open_package(data: bytes, limits: ExtractLimits, default: str, kind: str) -> tuple[SafeZip, str]:
    """An OOXML package under the zip budget, and its main part's name (refused when the part is missing)."""
    archive = SafeZip(data, limits)
    main = _main_part(archive, default)
    if not archive.has(main):
        raise ExtractionError(f"{kind} without its main part {main!r}", status="corrupt")
    return archive, main


def _related(archive: SafeZip, relations: Mapping[str, tuple[str, str]], rel_type: str) -> str | None:
    """The first member a part's `relations` (`_relationships`) name by a type ending in `rel_type`, if present."""
    for found_type, path in relations.values():
        if found_type.endswith(rel_type) and archive.has(path):
            return path
    return None


# parts of any OOXML package whose text no page, slide or sheet holds: SmartArt's data (its drawing part
# is a cached copy of the same text), charts' titles (their values are numbers, `c:v`, not read), and a
# sheet's drawings (text boxes and shapes on it)
_PACKAGE_PARTS = ((re.compile(r"(?:word|ppt|xl)/diagrams/data\d*\.xml"), "a diagram (SmartArt)"),
                  (re.compile(r"(?:word|ppt|xl)/charts/chart\d*\.xml"), "a chart"),
                  (re.compile(r"xl/drawings/drawing\d*\.xml"), "a drawing on a sheet"))
_DIAGRAM = _Vocabulary(runs=frozenset({"t"}), paragraphs=frozenset({"p"}))


def _package_regions(archive: SafeZip) -> list[tuple[str, str]]:
    """(label, text) of each diagram, chart and sheet drawing of an OOXML package, in part order, then its
    document properties."""
    found: list[tuple[str, str]] = []
    for pattern, label in _PACKAGE_PARTS:
        for name in sorted((n for n in archive.names() if pattern.fullmatch(n)), key=_natural):
            found.append((label, _tidy(_layout_text(parse_xml(archive.read(name), name), _DIAGRAM))))
    found.append((PROPERTIES_REGION, _properties_text(archive, ("docProps/core.xml", "docProps/custom.xml"))))
    return found


# the free-text fields of a document's properties (File > Properties: title, subject, comments, keywords,
# category) and the values of its custom ones: text a reader of the file sees in no page. Not the names of
# its authors, nor dates and counts: text no two documents share by copying
_PROPERTY_FIELDS = frozenset({"title", "subject", "description", "keywords", "keyword", "category",
                              "contentStatus", "lpwstr", "lpstr", "bstr"})


def _properties_text(archive: SafeZip, parts: Iterable[str]) -> str:
    """The document properties of `parts` (OOXML's core and custom ones, ODF's meta.xml), a line a value, each
    once; an ODF user-defined property's value is its element's own text."""
    lines: dict[str, None] = {}
    for part in (p for p in parts if archive.has(p)):
        for node in parse_xml(archive.read(part), part).iter():
            name = local_name(node.tag)
            if name in _PROPERTY_FIELDS or (name == "user-defined" and _attribute(node, "value-type")
                                            not in ("float", "date", "time", "boolean", "percentage")):
                value = _tidy("".join(node.itertext()))
                if any(ch.isalpha() for ch in value):
                    lines[value] = None
    return "\n".join(lines)


# the captions Office writes itself under a picture's alternative text (the same words in every document)
_AUTO_DESCRIPTION = re.compile(r"Description automatically generated(?: with (?:low|medium|high) confidence)?\s*$")


def _alt_texts(root: ET.Element) -> str:
    """The alternative text of a part's pictures and shapes (their title and description, which a screen reader
    speaks and no page shows: a leak can sit there, or a screenshot's own words), a line each and each once;
    not Office's own captions ("A screenshot of a computer / Description automatically generated")."""
    lines: dict[str, None] = {}
    for node in root.iter():
        if local_name(node.tag) in ("docPr", "cNvPr"):
            for key in ("title", "descr"):
                value = (node.get(key) or "").strip()
                if value and not _AUTO_DESCRIPTION.search(value):
                    lines[value] = None
    return "\n".join(lines)


def _natural(name: str) -> tuple[int, str]:
    """chart2 before chart10."""
    digits = re.findall(r"\d+", name)
    return (int(digits[-1]) if digits else 0, name)


# --- DOCX -------------------------------------------------------------------

_WORDPROCESSINGML = _Vocabulary(
    runs=frozenset({"t"}),
    paragraphs=frozenset({"p"}),
    rows=frozenset({"tr"}),
    cells=frozenset({"tc"}),
    breaks={"br": "\n", "cr": "\n", "tab": "\t", "noBreakHyphen": "-"},
    skip=frozenset({"delText", "instrText", "del", "drawing", "pict", "object"}),  # deletions, field codes
)


# parts related from the main document whose text is not the body's, by relationship type
_DOCX_PARTS = (("/header", "a page header"), ("/footer", "a page footer"), ("/comments", "the comments"))


def extract_docx(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """The body (footnotes and endnotes after it); then, as marked regions, what a reader of the file has
    beside it: text boxes, page headers and footers, reviewers' comments, and text deleted with changes
    tracked (a leak or a lifted passage there was indexed nowhere)."""
    archive, main = _open_package(data, limits, "word/document.xml", "DOCX")
    document = parse_xml(archive.read(main), main)
    hidden = _hidden_runs_taken(document, _hidden_styles(archive))
    notes = [p for p in ("word/footnotes.xml", "word/endnotes.xml") if archive.has(p)]
    texts = [_tidy(_layout_text(root, _WORDPROCESSINGML))
             for root in [document] + [parse_xml(archive.read(p), p) for p in notes]]
    regions = [("a text box", _tidy(_layout_text(box, _WORDPROCESSINGML)))
               for box in _outermost(document, "txbxContent", frozenset({"Fallback"}))]  # once, not in VML too
    related = sorted(_relationships(archive, main).values(), key=lambda found: found[1])
    regions += _once((label, _tidy(_layout_text(parse_xml(archive.read(path), path), _WORDPROCESSINGML)))
                     for suffix, label in _DOCX_PARTS for rel_type, path in related
                     if rel_type.endswith(suffix) and archive.has(path))
    regions.append(("the tracked deletions", _deleted_runs(document)))
    regions.append(("hidden text", hidden))
    regions.append(("the pictures' alternative text", _alt_texts(document)))
    regions.extend(_package_regions(archive))
    return _paged(["\n\n".join(t for t in texts if t)], [(label, text) for label, text in regions if text],
                  "docx", {}, paged=False)


def _once(regions: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Related parts' texts (page headers, footers, comments), each (label, text) once: a first page's header is
    often the others' too."""
    seen: set[tuple[str, str]] = set()
    kept: list[tuple[str, str]] = []
    for region in regions:
        if region not in seen:
            seen.add(region)
            kept.append(region)
    return kept


@dataclass(frozen=True)
class _HiddenStyles:
    """The ids of the character and paragraph styles that hide their text (`w:vanish` in their run
    properties, or in those of a style they are based on, unless they turn it off)."""

    characters: frozenset[str] = frozenset()
    paragraphs: frozenset[str] = frozenset()


def _hidden_styles(archive: SafeZip) -> _HiddenStyles:
    """The styles of `word/styles.xml` that hide their text: hiding text through a style leaves no mark on
    the runs themselves."""
    if not archive.has("word/styles.xml"):
        return _HiddenStyles()
    own: dict[str, bool | None] = {}  # a style's own vanish setting (None: it sets none)
    kinds: dict[str, str] = {}
    based: dict[str, str] = {}
    for style in (n for n in parse_xml(archive.read("word/styles.xml"), "word/styles.xml").iter()
                  if local_name(n.tag) == "style"):
        style_id, kind = _attribute(style, "styleId"), _attribute(style, "type")
        own[style_id] = next((_vanish_value(p) for p in style if local_name(p.tag) == "rPr"), None)
        kinds[style_id] = kind
        parent = next((_attribute(n, "val") for n in style if local_name(n.tag) == "basedOn"), "")
        if parent:
            based[style_id] = parent

    resolved: dict[str, bool] = {}

    def hides(style_id: str) -> bool:
        """Up the basedOn chain to the first style that says (or one resolved before: each style once)."""
        chain: list[str] = []
        while style_id and style_id not in resolved and style_id not in chain:
            chain.append(style_id)
            if own.get(style_id) is not None:
                break
            style_id = based.get(style_id, "")
        said = own.get(chain[-1]) if chain else None
        answer = bool(said) if said is not None else resolved.get(style_id, False)
        resolved.update((link, answer) for link in chain)
        return answer

    hidden = {style_id for style_id in own if hides(style_id)}
    return _HiddenStyles(frozenset(s for s in hidden if kinds[s] == "character"),
                         frozenset(s for s in hidden if kinds[s] == "paragraph"))


def _hidden_runs_taken(document: ET.Element, styles: _HiddenStyles = _HiddenStyles()) -> str:
    """The text of the runs formatted hidden (`w:vanish` of their own, or of their character or paragraph
    style), a line for each paragraph holding some, taken out of `document`: Word shows none of it, so it is
    no part of the body a reader sees (white-on-white and hidden keywords are an evasion; a passage found
    there is reported as hidden text)."""
    lines: dict[int, list[str]] = {}
    stack: list[tuple[ET.Element, int, bool]] = [(document, -1, False)]
    while stack:  # in document order: a node's hidden runs taken, then its other children walked in turn
        node, paragraph, paragraph_hidden = stack.pop()
        shown: list[ET.Element] = []
        walked: list[tuple[ET.Element, int, bool]] = []
        for child in node:
            name = local_name(child.tag)
            if name == "r" and _vanishes(child, styles, paragraph_hidden):
                lines.setdefault(paragraph, []).append(_layout_text(child, _WORDPROCESSINGML))
                continue
            shown.append(child)
            if name == "p":
                walked.append((child, id(child), _paragraph_style(child) in styles.paragraphs))
            elif name != "Fallback":
                walked.append((child, paragraph, paragraph_hidden))
        if len(shown) < len(node):
            node[:] = shown  # the hidden runs out at once (one removal each is quadratic in a long paragraph)
        stack.extend(reversed(walked))
    return _tidy("\n".join("".join(parts) for parts in lines.values()))


def _paragraph_style(paragraph: ET.Element) -> str:
    for properties in (n for n in paragraph if local_name(n.tag) == "pPr"):
        return next((_attribute(n, "val") for n in properties if local_name(n.tag) == "pStyle"), "")
    return ""


def _vanish_value(properties: ET.Element) -> bool | None:
    """What run properties say of hiding: True (`<w:vanish/>`), False (`w:val="0"` or "false"), None: nothing."""
    for flag in (n for n in properties if local_name(n.tag) == "vanish"):
        return _attribute(flag, "val").lower() not in ("0", "false", "off")
    return None


def _vanishes(run: ET.Element, styles: _HiddenStyles = _HiddenStyles(), paragraph_hidden: bool = False) -> bool:
    """Whether a run is hidden: by its own properties (`<w:vanish/>`, not `w:val="0"` or "false"), else by its
    character style, else by its paragraph's style."""
    for properties in (n for n in run if local_name(n.tag) == "rPr"):
        said = _vanish_value(properties)
        if said is not None:
            return said
        character = next((_attribute(n, "val") for n in properties if local_name(n.tag) == "rStyle"), "")
        if character in styles.characters:
            return True
    return paragraph_hidden


def _deleted_runs(document: ET.Element) -> str:
    """The text deleted with changes tracked (`w:delText`), a line for each paragraph that lost some."""
    lines = ("".join(node.text or "" for node in paragraph.iter() if local_name(node.tag) == "delText")
             for paragraph in _outermost(document, "p", frozenset({"Fallback"})))
    return _tidy("\n".join(line for line in lines if line.strip()))


# --- PPTX -------------------------------------------------------------------

_DRAWINGML = _Vocabulary(
    runs=frozenset({"t"}),
    paragraphs=frozenset({"p"}),
    rows=frozenset({"tr"}),
    cells=frozenset({"tc"}),
    breaks={"br": "\n"},
    skip=frozenset({"Fallback"}),  # mc:AlternateContent repeats its content for older readers
)
_NOTES_PLACEHOLDERS_SKIPPED = {"sldImg", "sldNum", "hdr", "ftr", "dt"}  # thumbnail, slide number, header...


def _notes_text(root: ET.Element) -> str:
    """The text of a notes slide: its notes body and any text box, not the slide number or header."""
    texts: list[str] = []
    for shape in root.iter():
        if local_name(shape.tag) != "sp":
            continue
        placeholder = next((n for n in shape.iter() if local_name(n.tag) == "ph"), None)
        if placeholder is None or placeholder.get("type", "body") not in _NOTES_PLACEHOLDERS_SKIPPED:
            texts.append(_tidy(_layout_text(shape, _DRAWINGML)))
    return "\n".join(t for t in texts if t)


def extract_pptx(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Slides in the order of presentation.xml's sldIdLst, one page each; speaker notes after them."""
    archive, main = _open_package(data, limits, "ppt/presentation.xml", "PPTX")
    presentation = parse_xml(archive.read(main), main)
    targets = _relationships(archive, main)
    slide_ids = [_relationship_id(n) for n in presentation.iter() if local_name(n.tag) == "sldId"]
    slides = [targets[i][1] for i in slide_ids if i in targets and archive.has(targets[i][1])]
    pages: list[str] = []
    notes: list[tuple[str, str]] = []
    for number, slide in enumerate(slides, 1):
        root = parse_xml(archive.read(slide), slide)
        pages.append(_tidy(_layout_text(root, _DRAWINGML)))
        alternative = _alt_texts(root)
        if alternative:
            notes.append((f"the alternative text of slide {number}", alternative))
        related = _relationships(archive, slide)  # read once for its notes and its comments
        notes_part = _related(archive, related, "/notesSlide")
        if notes_part:
            text = _notes_text(parse_xml(archive.read(notes_part), notes_part))
            if text:
                notes.append((f"the speaker notes of slide {number}", text))
        comments = _comments_text(archive, related, _PRESENTATION_COMMENT)
        if comments:
            notes.append((f"the comments of slide {number}", comments))
    return _paged(pages, notes + _package_regions(archive), "pptx", {"slides": str(len(pages))})


# a slide's comments: the legacy form (p:cm holding p:text) and the modern one (DrawingML paragraphs)
_PRESENTATION_COMMENT = _Vocabulary(runs=frozenset({"t", "text"}), paragraphs=frozenset({"p", "cm"}))
# a worksheet's comments, legacy (comment/text with runs) or threaded (threadedComment/text)
_SHEET_COMMENT = _Vocabulary(runs=frozenset({"t", "text"}), paragraphs=frozenset({"comment", "threadedComment"}),
                             skip=frozenset({"authors", "rPh", "phoneticPr", "mentions"}))


def _comments_text(archive: SafeZip, relations: Mapping[str, tuple[str, str]], vocabulary: _Vocabulary,
                   kinds: tuple[str, ...] = ("/comments",)) -> str:
    """The text of the comments parts a part's `relations` name by the first relationship type of `kinds`
    they have (an author's name is not text)."""
    for kind in kinds:
        paths = sorted(path for rel_type, path in relations.values() if rel_type.endswith(kind) and archive.has(path))
        if paths:
            return _tidy("\n".join(_layout_text(parse_xml(archive.read(path), path), vocabulary) for path in paths))
    return ""


# --- spreadsheets (XLSX, ODS) -------------------------------------------------


@dataclass
class _CellBudget:
    """What the sheets of one workbook may still expand to: cell positions and characters.

    `cut` says which ran out; nothing more is read after that.
    """

    cells: int
    chars: int
    cut: str = ""

    def take(self, cells: int, chars: int, times: int) -> int:
        """How many of `times` copies of something spanning `cells` positions and `chars` characters
        fit; they are taken, and a shortfall is recorded."""
        by_cells, by_chars = self.cells // max(cells, 1), self.chars // max(chars, 1)
        fitting = min(times, by_cells, by_chars)
        self.cells -= fitting * cells
        self.chars -= fitting * chars
        if fitting < times:
            self.cut = f"cut at {MAX_SHEET_CELLS} cells" if by_cells <= by_chars else "cut at max_chars characters"
        return fitting


_Row = tuple[int, list[tuple[int, str, int]]]  # (times repeated, [(column, text, times repeated)]), non-empty cells


def _row_line(cells: list[tuple[int, str, int]], budget: _CellBudget) -> str:
    """One row's cells, tab-separated in their columns, as far as the budget allows (the row's own
    positions and characters are taken from it)."""
    ordered = sorted(cells, key=lambda cell: cell[0])
    chars = column = 0
    for start, text, times in ordered:  # the whole row's cost first: most rows fit, and are built at once
        start = max(start, column)
        chars += start - column + 1 + (len(text) + 1) * times
        column = start + times
    whole = budget.take(column, chars, 1) if column <= budget.cells and chars <= budget.chars else 0
    parts: list[str] = []
    column = 0
    for start, text, times in ordered:
        start = max(start, column)
        gap = start - column + (1 if parts else 0)  # tabs: the separator, and one per empty cell before
        if not whole and not budget.take(start - column, gap, 1):
            break
        fitting = times if whole else budget.take(1, len(text) + 1, times)
        parts.append("\t" * gap + (text if fitting == 1 else "\t".join([text] * fitting)))
        column = start + fitting
        if budget.cut:
            break
    return "".join(parts)


def _sheet_text(name: str, rows: Iterable[_Row], budget: _CellBudget) -> str:
    """"Sheet: <name>", then one line per row with its cells tab-separated in their columns.

    Every position a line spans (the empty cells before a cell included) and every character is taken
    from the budget; the row that does not fit is cut where it runs out, and nothing is read after it.
    """
    lines = [f"Sheet: {name}"]
    for repeat, cells in rows:
        if budget.cut:
            break
        if not cells:
            continue
        before = budget.cells
        line = _row_line(cells, budget)
        if line and not budget.cut and repeat > 1:
            lines.extend([line] * (1 + budget.take(before - budget.cells, len(line) + 1, repeat - 1)))
        elif line:
            lines.append(line)
    return "\n".join(lines)


def _spreadsheet(pages: list[str], budget: _CellBudget, extractor: str, comments: list[tuple[str, str]]
                 ) -> Extracted:
    meta = {"sheets": str(len(pages))}
    if budget.cut:
        meta["truncated"] = budget.cut
    return _paged(pages, comments, extractor, meta)


_SPREADSHEETML_STRING = _Vocabulary(runs=frozenset({"t"}), skip=frozenset({"rPh", "phoneticPr"}))  # not ruby text


def _string_item_text(item: ET.Element) -> str:
    """A shared (si) or inline (is) string on one line; the common one, a single plain t, without the walker."""
    if len(item) == 1 and not len(item[0]) and local_name(item[0].tag) == "t":
        return _cell_text(item[0].text or "")
    return _cell_text(_layout_text(item, _SPREADSHEETML_STRING))


def _shared_strings(archive: SafeZip, workbook: str, relations: Mapping[str, tuple[str, str]]) -> list[str]:
    """The shared string table (sst/si), rich-text runs joined; read as a stream, it can be large."""
    part = _related(archive, relations, "/sharedStrings")
    if part is None:
        part = posixpath.join(posixpath.dirname(workbook), "sharedStrings.xml")
        if not archive.has(part):
            return []
    return [_string_item_text(item) for item in _streamed_records(archive.read(part), part, "si")]


def _column_index(reference: str) -> int | None:
    """0-based column of an A1 reference ("C7" -> 2), None when it has none."""
    letters = _CELL_REFERENCE.match(reference)
    if letters is None:
        return None
    index = 0
    for letter in letters.group(0).upper():
        index = index * 26 + ord(letter) - 64
    return index - 1


def _xlsx_cell(cell: ET.Element, shared: list[str]) -> str:
    """A cell's value as the file holds it: shared or inline string, number, boolean, error, formula result."""
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        inline = next((n for n in cell if local_name(n.tag) == "is"), None)
        return "" if inline is None else _string_item_text(inline)
    value = next((n.text or "" for n in cell if local_name(n.tag) == "v"), "")
    if kind == "s":
        index = _count(value.strip(), -1)
        return shared[index] if 0 <= index < len(shared) else ""
    if kind == "b":
        return {"1": "TRUE", "0": "FALSE"}.get(value.strip(), value)
    return _cell_text(value)


def _xlsx_rows(data: bytes, part: str, shared: list[str]) -> Iterator[_Row]:
    """The rows of one worksheet, streamed (a row is dropped once read)."""
    for row in _streamed_records(data, part, "row"):
        cells: list[tuple[int, str, int]] = []
        column = -1
        for cell in row:
            if not (cell.tag == "c" or cell.tag.endswith("}c")):
                continue
            found = _column_index(cell.get("r", ""))
            column = column + 1 if found is None else found
            text = _xlsx_cell(cell, shared)
            if text:
                cells.append((column, text, 1))
        yield 1, cells


def extract_xlsx(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Sheets in workbook order, one page each: a "Sheet: <name>" line, then a line per row."""
    archive, main = _open_package(data, limits, "xl/workbook.xml", "XLSX")
    workbook = parse_xml(archive.read(main), main)
    targets = _relationships(archive, main)
    shared = _shared_strings(archive, main, targets)
    budget = _CellBudget(MAX_SHEET_CELLS, limits.max_chars)
    pages: list[str] = []
    notes: list[tuple[str, str]] = []
    for sheet in (n for n in workbook.iter() if local_name(n.tag) == "sheet"):
        target = targets.get(_relationship_id(sheet))
        if target is None or not archive.has(target[1]):
            continue
        rows = _xlsx_rows(archive.read(target[1]), target[1], shared)
        pages.append(_sheet_text(sheet.get("name", ""), rows, budget))
        # threaded comments first: Excel also writes each as a legacy note, behind a paragraph of its own
        comments = _comments_text(archive, _relationships(archive, target[1]), _SHEET_COMMENT,
                                  ("/threadedComment", "/comments"))
        if comments:
            notes.append((f"the comments of sheet {sheet.get('name', '')}", comments))
    return _spreadsheet(pages, budget, "xlsx", notes + _package_regions(archive))


def _xls_cell(cell: Any, datemode: int) -> str:
    """An Excel 97-2003 cell as it shows: text on one line, a whole number without ".0", a date in ISO form,
    TRUE / FALSE; empty, blank and error cells give nothing."""
    import xlrd

    if cell.ctype == xlrd.XL_CELL_TEXT:
        return _cell_text(cell.value)
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        return str(int(cell.value)) if float(cell.value).is_integer() else repr(cell.value)
    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return xlrd.xldate_as_datetime(cell.value, datemode).isoformat(sep=" ")
        except (xlrd.xldate.XLDateError, OverflowError, ValueError):
            return repr(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if cell.value else "FALSE"
    return ""


def extract_xls(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """An Excel 97-2003 workbook (xlrd): its sheets in workbook order, hidden ones too, one page each, as an
    XLSX's ("Sheet: <name>", then a line per row, cells tab-separated in their columns). Before session 30
    these files were `unsupported`, read nowhere. Cell notes are not read (xlrd keeps them only with
    formatting information, which costs a workbook's styles)."""
    import io

    import xlrd

    try:
        book = xlrd.open_workbook(file_contents=data, on_demand=True, logfile=io.StringIO())
    except (xlrd.XLRDError, xlrd.compdoc.CompDocError) as exc:
        if "encrypt" in str(exc).lower():
            raise ExtractionError("encrypted XLS: a password is needed", status="encrypted") from exc
        raise ExtractionError(f"unreadable XLS: {exc}", status="corrupt") from exc
    budget = _CellBudget(MAX_SHEET_CELLS, limits.max_chars)
    pages: list[str] = []
    try:
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            rows = ((1, [(column, text, 1) for column, cell in enumerate(sheet.row(r))
                         if (text := _xls_cell(cell, book.datemode))]) for r in range(sheet.nrows))
            pages.append(_sheet_text(sheet.name, rows, budget))
            book.unload_sheet(index)
    finally:
        book.release_resources()
    return _spreadsheet(pages, budget, "xls", [])


# --- ODF: ODT, ODP, ODS -------------------------------------------------------

_ODF_SKIP = {"tracked-changes", "annotation", "note-citation", "sequence-decls", "forms"}
_ODF = _Vocabulary(
    paragraphs=frozenset({"p", "h"}),
    rows=frozenset({"table-row"}),
    cells=frozenset({"table-cell", "covered-table-cell"}),
    breaks={"tab": "\t", "line-break": "\n"},
    skip=frozenset(_ODF_SKIP),
    spaces="s",
)
_ODF_SLIDE = dataclasses.replace(_ODF, skip=frozenset(_ODF_SKIP | {"notes"}))  # the notes become regions
_ODF_COMMENT = dataclasses.replace(_ODF, skip=frozenset(_ODF_SKIP - {"annotation"}))  # the comment itself
_ODF_NAMES = {mime: name for name, mimes in ODF_FAMILIES.items() for mime in mimes}
_ODF_ROW_GROUPS = {"table-header-rows", "table-rows", "table-row-group"}


def _odf_repeat(node: ET.Element, attribute: str) -> int:
    return max(_count(_attribute(node, attribute), 1), 1)


def _odf_cell_text(cell: ET.Element) -> str:
    """A cell's text on one line; the common cell, one plain paragraph or none, without the walker."""
    if not len(cell):
        return ""
    only = cell[0]
    if len(cell) == 1 and not len(only) and local_name(only.tag) in _ODF.paragraphs:
        return _cell_text(only.text or "")
    return _cell_text(_layout_text(cell, _ODF))


def _odf_table_rows(table: ET.Element) -> Iterator[_Row]:
    """The rows of an ODS sheet (inside header and row groups too), repeat counts kept, not expanded."""
    stack = list(reversed(table))
    while stack:
        node = stack.pop()
        name = local_name(node.tag)
        if name in _ODF_ROW_GROUPS:
            stack.extend(reversed(node))
        elif name == "table-row":
            cells: list[tuple[int, str, int]] = []
            column = 0
            for cell in node:
                if local_name(cell.tag) not in _ODF.cells:
                    continue
                times = _odf_repeat(cell, "number-columns-repeated")
                text = _odf_cell_text(cell)
                if text:
                    cells.append((column, text, times))
                column += times
            yield _odf_repeat(node, "number-rows-repeated"), cells


def _odf_pages(document: ET.Element, extractor: str) -> Extracted:
    """A presentation (or drawing): one page per draw:page, its speaker notes after the pages."""
    pages: list[str] = []
    notes: list[tuple[str, str]] = []
    for number, page in enumerate((n for n in document if local_name(n.tag) == "page"), 1):
        pages.append(_tidy(_layout_text(page, _ODF_SLIDE)))
        for speaker_notes in (n for n in page if local_name(n.tag) == "notes"):
            text = _tidy(_layout_text(speaker_notes, _ODF))
            if text:
                notes.append((f"the speaker notes of slide {number}", text))
        comments = _odf_comments(page)
        if comments:
            notes.append((f"the comments of slide {number}", comments))
    return _paged(pages, notes, extractor, {"slides": str(len(pages))})


def _odf_comments(root: ET.Element) -> str:
    """The text of the comments (office:annotation) under `root`, a line each (not their authors)."""
    return _tidy("\n".join(_layout_text(note, _ODF_COMMENT) for note in _outermost(root, "annotation")))


# a master page's headers and footers (styles.xml)
_ODF_PAGE_PARTS = {"header": "a page header", "header-first": "a page header", "header-left": "a page header",
                   "footer": "a page footer", "footer-first": "a page footer", "footer-left": "a page footer"}


def _odt_regions(archive: SafeZip, body: ET.Element) -> list[tuple[str, str]]:
    """What a text document holds beside its body, as (label, text) regions: comments, text deleted with
    changes recorded, and the master pages' headers and footers."""
    deleted = "\n".join(_tidy(_layout_text(gone, _ODF)) for gone in _outermost(body, "deletion"))
    regions = [("the comments", _odf_comments(body)), ("the tracked deletions", _tidy(deleted))]
    if archive.has("styles.xml"):
        styles = parse_xml(archive.read("styles.xml"), "styles.xml")
        regions += _once((_ODF_PAGE_PARTS[local_name(part.tag)], _tidy(_layout_text(part, _ODF)))
                         for page in _outermost(styles, "master-page") for part in page
                         if local_name(part.tag) in _ODF_PAGE_PARTS)
    return [(label, text) for label, text in regions if text]


def extract_odf(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Any ODF document by its content.xml body: text (ODT), presentation (ODP), drawing (ODG, its pages
    read as slides) or spreadsheet (ODS), and their templates."""
    archive = SafeZip(data, limits)
    if archive.has("META-INF/manifest.xml"):
        if b"encryption-data" in archive.read("META-INF/manifest.xml"):
            raise ExtractionError("password-protected ODF document", status="encrypted")
    if not archive.has("content.xml"):
        raise ExtractionError("ODF document without content.xml", status="corrupt")
    root = parse_xml(archive.read("content.xml"), "content.xml")
    body = next((el for el in root if local_name(el.tag) == "body"), root)
    document = next((el for el in body if local_name(el.tag) in ("presentation", "drawing", "spreadsheet")), None)
    extractor = _ODF_NAMES.get(mime, "odt")
    if document is None:
        result = _paged([_tidy(_layout_text(body, _ODF))], _odt_regions(archive, body), extractor, {}, paged=False)
    elif local_name(document.tag) != "spreadsheet":
        result = _odf_pages(document, extractor)
    else:
        budget = _CellBudget(MAX_SHEET_CELLS, limits.max_chars)
        sheets = [n for n in document if local_name(n.tag) == "table"]
        pages = [_sheet_text(_attribute(sheet, "name"), _odf_table_rows(sheet), budget) for sheet in sheets]
        comments = [(f"the comments of sheet {_attribute(sheet, 'name')}", _odf_comments(sheet))
                    for sheet in sheets]
        result = _spreadsheet(pages, budget, extractor, [(label, text) for label, text in comments if text])
    return result.with_regions([*_odf_objects(archive), (PROPERTIES_REGION, _properties_text(archive, ("meta.xml",)))])


_ODF_OBJECT = re.compile(r"[^/]+/content\.xml")  # "Object 1/content.xml": a chart, a formula, a sub-document


def _odf_objects(archive: SafeZip) -> list[tuple[str, str]]:
    """The text of the objects embedded in an ODF document (each a document of its own in a folder of the
    package: a spreadsheet in a text, a chart's titles), which its content.xml only points to."""
    names = sorted((name for name in archive.names() if _ODF_OBJECT.fullmatch(name)), key=_natural)
    return [("an embedded object", _tidy(_layout_text(parse_xml(archive.read(name), name), _ODF))) for name in names]


# --- Visio -------------------------------------------------------------------


def _visio_pages(archive: SafeZip) -> list[tuple[str, str]]:
    """(name, member) of each page, in the order of visio/pages/pages.xml (background pages too); the page
    files in their numbers' order when it names none."""
    listing = "visio/pages/pages.xml"
    pages: list[tuple[str, str]] = []
    if archive.has(listing):
        relations = _relationships(archive, listing)
        for page in parse_xml(archive.read(listing), listing).iter():
            if local_name(page.tag) != "Page":
                continue
            rel = next((node for node in page if local_name(node.tag) == "Rel"), None)
            target = relations.get(_relationship_id(rel), ("", ""))[1] if rel is not None else ""
            if target and archive.has(target):
                pages.append((page.get("NameU") or page.get("Name") or "", target))
    if not pages:
        files = [name for name in archive.names() if re.fullmatch(r"visio/pages/page\d+\.xml", name)]
        pages = [("", name) for name in sorted(files, key=_natural)]
    return pages


def _visio_shapes_text(root: ET.Element) -> str:
    """Each shape's text, a line a paragraph (a `pp` mark or a line end starts one), in document order; the
    formatting marks inside a text (`cp`, `pp`, `tp`, a field's value) are not text."""
    lines: list[str] = []
    for text in (node for node in root.iter() if local_name(node.tag) == "Text"):
        pieces = [text.text or ""]
        for mark in text:
            pieces.append("\n" if local_name(mark.tag) == "pp" else "")
            pieces.append(mark.tail or "")
        lines.extend(line.strip() for line in "".join(pieces).splitlines())
    return "\n".join(line for line in lines if line)


def extract_vsdx(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """A Visio drawing (.vsdx, .vsdm, .vstx): each page's shapes' text, a page each; reviewers' comments a
    region. The masters' text (a stencil's placeholder words, the same in every drawing) is not read."""
    archive = SafeZip(data, limits)
    pages = []
    for _, member in _visio_pages(archive):
        pages.append(_tidy(_visio_shapes_text(parse_xml(archive.read(member), member))))
    if not pages and not archive.has("visio/document.xml"):
        raise ExtractionError("Visio package without visio/document.xml", status="corrupt")
    comments = ""
    if archive.has("visio/comments.xml"):
        root = parse_xml(archive.read("visio/comments.xml"), "visio/comments.xml")
        comments = "\n".join(_tidy("".join(node.itertext())) for node in root.iter()
                              if local_name(node.tag) == "CommentEntry")
    return _paged(pages, [("the comments", comments)], "vsdx", {"pages": str(len(pages))})


# --- XPS and OpenXPS ---------------------------------------------------------


def _xps_references(archive: SafeZip, part: str, element: str) -> list[str]:
    """The parts a fixed document sequence (`DocumentReference`) or a fixed document (`PageContent`) names, in
    their order, as member paths (relative to the part's folder, or absolute in the package)."""
    folder = posixpath.dirname(part)
    found = []
    for node in parse_xml(archive.read(part), part).iter():
        source = unquote(node.get("Source", "")) if local_name(node.tag) == element else ""
        if source:
            path = source.lstrip("/") if source.startswith("/") else posixpath.join(folder, source)
            found.append(posixpath.normpath(path))
    return [name for name in found if archive.has(name)]


def _xps_pages(archive: SafeZip) -> list[str]:
    """The fixed pages in reading order: the package's fixed representation (a document sequence), its
    documents, their pages; every `.fpage` in its name's order when the package names none."""
    sequence = next((path for kind, path in _relationships(archive, "").values()
                     if kind.endswith("/fixedrepresentation") and archive.has(path)), "")
    if not sequence:
        sequence = next((name for name in archive.names() if name.lower().endswith(".fdseq")), "")
    pages = [page for document in (_xps_references(archive, sequence, "DocumentReference") if sequence else [])
             for page in _xps_references(archive, document, "PageContent")]
    return pages or sorted((name for name in archive.names() if name.lower().endswith(".fpage")), key=_natural)


@dataclass(frozen=True, slots=True)
class _GlyphRun:
    """One `Glyphs` element: its characters, where they start, and where they end on their line."""

    text: str
    x: float
    y: float
    end: float  # where the run ends on its line, from its advance widths (estimated without them)
    size: float


def _glyph_run(node: ET.Element) -> _GlyphRun | None:
    """A `Glyphs` element's characters and where they stand (`{}` opens a string that begins with `{`)."""
    text = node.get("UnicodeString", "")
    text = text[2:] if text.startswith("{}") else text
    if not text.strip():
        return None
    try:
        x, y = float(node.get("OriginX", "0")), float(node.get("OriginY", "0"))
        size = float(node.get("FontRenderingEmSize", "0")) or 12.0
    except ValueError:
        x, y, size = 0.0, 0.0, 12.0
    advances = [float(part.split(",")[1]) for part in node.get("Indices", "").split(";")
                if part.count(",") >= 1 and re.fullmatch(r"[\d.]+", part.split(",")[1] or "x")]
    width = (sum(advances) / 100 if len(advances) >= len(text) else 0.5 * len(text)) * size
    return _GlyphRun(text, x, y, x + width, size)


def _xps_page_text(root: ET.Element) -> str:
    """A page's runs in document order (what writers emit in reading order): a new line where the baseline
    moves, a space where a run starts clear of the one before, else one word going on (a run a style)."""
    lines: list[list[str]] = []
    last: _GlyphRun | None = None
    for node in root.iter():
        run = _glyph_run(node) if local_name(node.tag) == "Glyphs" else None
        if run is None:
            continue
        if last is None or abs(run.y - last.y) > 0.5 * min(run.size, last.size) or run.x < last.x:
            lines.append([run.text])
        else:
            lines[-1].append((" " if run.x - last.end > 0.2 * run.size else "") + run.text)
        last = run
    return "\n".join(" ".join("".join(line).split()) for line in lines)


def extract_xps(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """An XPS or OpenXPS document: each fixed page's text a page, its glyph runs laid out into lines. Text
    drawn as paths (outlined) or as pictures is not read: a document of them only is `empty`."""
    archive = SafeZip(data, limits)
    pages = _xps_pages(archive)
    if not pages:
        raise ExtractionError("XPS package without fixed pages", status="corrupt")
    return _paged([_xps_page_text(parse_xml(archive.read(page), page)) for page in pages], [], "xps",
                  {"pages": str(len(pages))})


# --- EPUB -------------------------------------------------------------------


def _epub_encrypted(archive: SafeZip) -> bool:
    """True when DRM covers content documents (font obfuscation alone is harmless)."""
    if not archive.has("META-INF/encryption.xml"):
        return False
    root = parse_xml(archive.read("META-INF/encryption.xml"), "encryption.xml")
    for node in root.iter():
        if local_name(node.tag) == "CipherReference":
            uri = node.get("URI", "").lower()
            if uri.endswith((".xhtml", ".html", ".htm", ".xml")):
                return True
    return False


def _epub_spine(archive: SafeZip) -> list[str]:
    """Content documents in reading order, from container.xml -> OPF spine."""
    container = parse_xml(archive.read("META-INF/container.xml"), "container.xml")
    opf_path = next(
        (n.get("full-path", "") for n in container.iter() if local_name(n.tag) == "rootfile"), ""
    )
    if not opf_path or not archive.has(opf_path):
        raise ExtractionError("EPUB without its package document", status="corrupt")
    opf = parse_xml(archive.read(opf_path), opf_path)
    base = posixpath.dirname(opf_path)
    manifest: dict[str, str] = {}
    for node in opf.iter():
        if local_name(node.tag) == "item" and node.get("id") and node.get("href"):
            href = unquote(node.get("href", "").split("#", 1)[0])
            manifest[node.get("id", "")] = posixpath.normpath(posixpath.join(base, href))
    spine = [n.get("idref", "") for n in opf.iter() if local_name(n.tag) == "itemref"]
    return [manifest[i] for i in spine if i in manifest and archive.has(manifest[i])]


def extract_epub(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    archive = SafeZip(data, limits)
    if _epub_encrypted(archive):
        raise ExtractionError("EPUB content is encrypted (DRM)", status="encrypted")
    if not archive.has("META-INF/container.xml"):
        raise ExtractionError("EPUB without META-INF/container.xml", status="corrupt")
    chapters: list[str] = []
    for name in _epub_spine(archive):
        markup, _ = decode_html(archive.read(name))
        text, _ = html_to_text(markup, limits)
        if text:
            chapters.append(text)
    return Extracted(text="\n\n".join(chapters), extractor="epub", meta={"chapters": str(len(chapters))})


_EMBEDDED = re.compile(r"(?:word|ppt|xl|visio)/embeddings/[^/]+")
# pictures in a format OCR reads (a drawing, EMF or WMF, holds its text as text, not pixels): an OOXML package's
# media, an ODF package's Pictures, and an EPUB's wherever its manifest puts them
_RASTER = r"[^/]+\.(?:png|jpe?g|gif|tiff?|bmp|webp)"
_PICTURE = re.compile(rf"(?:(?:word|ppt|xl|visio)/media|Pictures)/{_RASTER}", re.IGNORECASE)
_EPUB_PICTURE = re.compile(rf"(?:[^/]+/)*{_RASTER}", re.IGNORECASE)


def unpack_embeddings(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """The files embedded in an office document (a workbook pasted into a report, a document into a slide, an
    OLE object) and its pictures (a screenshot of a page, a scanned letter pasted in): members of it, each
    read by the plugin for its type, pictures by OCR and their metadata. Their text is in none of the document's
    parts, and was read nowhere. A picture too small to hold a line (an icon, a bullet) is not one, unless its
    metadata holds words."""
    from scanner_plugins.ocr import picture_size, worth_reading

    picture = _EPUB_PICTURE if mime == EPUB_MIME else _PICTURE  # a book of scanned pages is only pictures
    for member in zip_members(data, budget, lambda name: bool(_EMBEDDED.fullmatch(name) or picture.fullmatch(name))):
        if not picture.fullmatch(member.name):
            yield member
        elif member.data is None or worth_reading(member.data, picture_size(member.data)):
            yield dataclasses.replace(member, picture=True)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="office-embeddings", mimes=(DOCX_MIME, PPTX_MIME, XLSX_MIME, *VISIO_MIMES, *_ODF_NAMES,
                                                      EPUB_MIME),
                     priority=50, unpack=unpack_embeddings, has_text=True)]


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [
        Extractor(name="docx", mimes=(DOCX_MIME,), priority=50, extract=extract_docx),
        Extractor(name="pptx", mimes=(PPTX_MIME,), priority=50, extract=extract_pptx),
        Extractor(name="xlsx", mimes=(XLSX_MIME,), priority=50, extract=extract_xlsx),
        Extractor(name="xls", mimes=(XLS_MIME,), priority=50, extract=extract_xls),
        *(Extractor(name=name, mimes=mimes, priority=50, extract=extract_odf) for name, mimes in ODF_FAMILIES.items()),
        Extractor(name="vsdx", mimes=VISIO_MIMES, priority=50, extract=extract_vsdx),
        Extractor(name="xps", mimes=XPS_MIMES, priority=50, extract=extract_xps),
        Extractor(name="epub", mimes=(EPUB_MIME,), priority=50, extract=extract_epub),
    ]
