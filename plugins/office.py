"""DOCX, ODT and EPUB: ZIP containers read with the stdlib under a zip-bomb budget.

XML is parsed by expat (no recursion in Python) after refusing any DTD, so
entity-expansion bombs never reach the parser; the trees are walked with an
explicit stack so deep nesting cannot hit the recursion limit.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.zipsafe import SafeZip
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins.html import decode_html, html_to_text

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT_MIME = "application/vnd.oasis.opendocument.text"
EPUB_MIME = "application/epub+zip"
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_SPACE_RUNS = re.compile(r"[ \t]*\n[ \t\n]*")


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse_xml(data: bytes, what: str, allow_doctype: bool = False) -> ET.Element:
    """Parse untrusted XML; entity declarations are refused outright."""
    found = _DTD.search(data)
    if found and (found.group(0).upper() == b"<!ENTITY" or not allow_doctype):
        raise ExtractionError(f"{what}: XML with a DTD refused", status="corrupt")
    if allow_doctype and b"<!ENTITY" in data.upper():
        raise ExtractionError(f"{what}: XML entity declarations refused", status="corrupt")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ExtractionError(f"{what}: malformed XML: {exc}", status="corrupt") from exc


def _tidy(text: str) -> str:
    return _SPACE_RUNS.sub("\n", text).strip()


# --- DOCX -------------------------------------------------------------------

_DOCX_BREAKS = {"br": "\n", "cr": "\n", "tab": "\t", "noBreakHyphen": "-"}
_DOCX_BLOCKS = {"p", "tr"}
_DOCX_SKIP = {"delText", "instrText", "del", "drawing", "pict", "object"}


def _docx_text(root: ET.Element) -> str:
    """w:t runs in document order; w:p ends a line; deleted text and field codes skipped."""
    out: list[str] = []
    stack: list[tuple[ET.Element, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        name = _local(node.tag)
        if closing:
            if name in _DOCX_BLOCKS:
                out.append("\n")
            elif name == "tc":
                out.append("\t")
            continue
        if name in _DOCX_SKIP:
            continue
        if name == "t" and node.text:
            out.append(node.text)
        elif name in _DOCX_BREAKS:
            out.append(_DOCX_BREAKS[name])
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return "".join(out)


def _docx_main_part(archive: SafeZip) -> str:
    """The officeDocument part named by _rels/.rels (usually word/document.xml)."""
    if archive.has("_rels/.rels"):
        rels = parse_xml(archive.read("_rels/.rels"), "_rels/.rels")
        for rel in rels:
            if rel.get("Type", "").endswith("/officeDocument") and rel.get("Target"):
                return posixpath.normpath(rel.get("Target", "").lstrip("/"))
    return "word/document.xml"


def extract_docx(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    archive = SafeZip(data, limits)
    main = _docx_main_part(archive)
    if not archive.has(main):
        raise ExtractionError(f"DOCX without its main part {main!r}", status="corrupt")
    parts = [main] + [p for p in ("word/footnotes.xml", "word/endnotes.xml") if archive.has(p)]
    texts = [_tidy(_docx_text(parse_xml(archive.read(p), p))) for p in parts]
    return Extracted(text="\n\n".join(t for t in texts if t), extractor="docx")


# --- ODT --------------------------------------------------------------------

_ODF_BLOCKS = {"p", "h", "list-item", "table-row"}
_ODF_SKIP = {"tracked-changes", "annotation", "note-citation", "sequence-decls", "forms"}
_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _odf_text(root: ET.Element) -> str:
    """Text and tails under office:body; text:s/tab/line-break expanded."""
    out: list[str] = []
    stack: list[tuple[ET.Element, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        name = _local(node.tag)
        if closing:
            if name in _ODF_BLOCKS:
                out.append("\n")
            elif name == "table-cell":
                out.append("\t")
            if node is not root and node.tail:
                out.append(node.tail)
            continue
        if name in _ODF_SKIP:
            if node.tail:
                out.append(node.tail)
            continue
        if name == "s":
            count = node.get(f"{{{_TEXT_NS}}}c", "1")
            out.append(" " * min(int(count) if count.isdigit() else 1, 1000))
        elif name == "tab":
            out.append("\t")
        elif name == "line-break":
            out.append("\n")
        if node.text and name not in ("document-content", "body", "text"):
            out.append(node.text)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return "".join(out)


def extract_odt(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    archive = SafeZip(data, limits)
    if archive.has("META-INF/manifest.xml"):
        if b"encryption-data" in archive.read("META-INF/manifest.xml"):
            raise ExtractionError("password-protected ODF document", status="encrypted")
    if not archive.has("content.xml"):
        raise ExtractionError("ODF document without content.xml", status="corrupt")
    root = parse_xml(archive.read("content.xml"), "content.xml")
    body = next((el for el in root if _local(el.tag) == "body"), root)
    return Extracted(text=_tidy(_odf_text(body)), extractor="odt")


# --- EPUB -------------------------------------------------------------------


def _epub_encrypted(archive: SafeZip) -> bool:
    """True when DRM covers content documents (font obfuscation alone is harmless)."""
    if not archive.has("META-INF/encryption.xml"):
        return False
    root = parse_xml(archive.read("META-INF/encryption.xml"), "encryption.xml")
    for node in root.iter():
        if _local(node.tag) == "CipherReference":
            uri = node.get("URI", "").lower()
            if uri.endswith((".xhtml", ".html", ".htm", ".xml")):
                return True
    return False


def _epub_spine(archive: SafeZip) -> list[str]:
    """Content documents in reading order, from container.xml -> OPF spine."""
    container = parse_xml(archive.read("META-INF/container.xml"), "container.xml")
    opf_path = next(
        (n.get("full-path", "") for n in container.iter() if _local(n.tag) == "rootfile"), ""
    )
    if not opf_path or not archive.has(opf_path):
        raise ExtractionError("EPUB without its package document", status="corrupt")
    opf = parse_xml(archive.read(opf_path), opf_path)
    base = posixpath.dirname(opf_path)
    manifest: dict[str, str] = {}
    for node in opf.iter():
        if _local(node.tag) == "item" and node.get("id") and node.get("href"):
            href = unquote(node.get("href", "").split("#", 1)[0])
            manifest[node.get("id", "")] = posixpath.normpath(posixpath.join(base, href))
    spine = [n.get("idref", "") for n in opf.iter() if _local(n.tag) == "itemref"]
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


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [
        Extractor(name="docx", mimes=(DOCX_MIME,), priority=50, extract=extract_docx),
        Extractor(name="odt", mimes=(ODT_MIME,), priority=50, extract=extract_odt),
        Extractor(name="epub", mimes=(EPUB_MIME,), priority=50, extract=extract_epub),
    ]
