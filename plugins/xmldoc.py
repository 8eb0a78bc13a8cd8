"""XML documents (TEI, JATS, DocBook, XLIFF, RSS, flat ODF, data exports) by their character data, not their
tags.

Read as text, an XML document's words were its tags' as much as its text's: every inline element
(`<hi rend="italic">`, `<persName ref="#p12">`) put its name and attributes inside a sentence, so a copy
of a plain text marked up in TEI kept none of its 7-word runs across a tag, and two unrelated documents of
one schema shared their skeleton's passages (seven TEI files: all 21 pairs paired). The text is now the
document's character data in order: an element whose own text sits between its children (mixed content,
`<p>A <hi>word</hi> here</p>`) holds inline elements, joined as written (`wo<hi>rd</hi>` stays one word);
an element holding only elements holds blocks, each on its own line. Attribute values that are prose (three
words or more: a title, a description) follow as a marked region; identifiers, references and single
words are counted in `meta["attributes_left_out"]`. A document whose text is all in attributes (a data
export of `<row name="..." city="..."/>`) gives them as its body. Comments are a region too.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.extract.routing import XML_MIMES
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._xml import parse_xml, xml_events

NAME = "xml"
_PROSE_WORDS = 3  # an attribute value with this many words is text (a title), not a name or a reference
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of letters
_SPACE = re.compile(r"\s+")
_ATTRIBUTES, _COMMENTS = "attribute values", "a comment"
MAX_TREE_BYTES = 64 * 1024 * 1024  # a larger document is read as text: its tree would take ten times that


def _mixed(node: ET.Element) -> bool:
    """Does text sit among the element's children (inline markup), or only elements (blocks)?"""
    return bool(node.text and node.text.strip()) or any(child.tail and child.tail.strip() for child in node)


def xml_text(root: ET.Element, comments: list[str]) -> tuple[str, list[tuple[str, str]], dict[str, str]]:
    """(body, regions as (label, text), meta) of a parsed document and its comments."""
    pieces: list[str] = []
    prose_attributes: list[str] = []
    other_attributes: list[str] = []
    inline: list[bool] = []  # for each open element: are its children inline?
    for kind, item in xml_events(root):
        if kind == "data":
            assert isinstance(item, str)
            pieces.append(_SPACE.sub(" ", item))
            continue
        assert isinstance(item, ET.Element)
        block = not inline or not inline[-1]  # its parent holds blocks (the root is one)
        if kind == "start":
            if block:
                pieces.append("\n")
            for value in item.attrib.values():
                words = len(_WORD.findall(value))
                (prose_attributes if words >= _PROSE_WORDS else other_attributes).append(value)
            inline.append(bool(inline and inline[-1]) or _mixed(item))
        else:
            inline.pop()
            if not inline or not inline[-1]:
                pieces.append("\n")
    lines = (line.strip() for line in "".join(pieces).split("\n"))
    body = "\n".join(line for line in lines if line)
    meta: dict[str, str] = {}
    if not body and other_attributes:  # all its text is in attributes: they are its text
        body = "\n".join(value.strip() for value in other_attributes if _WORD.search(value))
        meta["read_from"] = "attribute values (the document has no character data)"
    elif other_attributes:
        meta["attributes_left_out"] = f"{len(other_attributes)} (names, identifiers, references, single words)"
    regions = [(label, _SPACE.sub(" ", "\n".join(texts)).strip())
               for label, texts in ((_ATTRIBUTES, prose_attributes), (_COMMENTS, comments))]
    return body, regions, meta


def extract_xml(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """A document's character data; refused, malformed or very large XML is read as text by the text reader."""
    if len(data) > MAX_TREE_BYTES:
        raise ExtractionError(f"an XML document of {len(data)} bytes is read as text (over {MAX_TREE_BYTES} "
                              "bytes, its tree is not built)", status="error")
    comments: list[str] = []
    body, regions, meta = xml_text(parse_xml(data, "XML document", allow_doctype=True, comments=comments), comments)
    return Extracted(text=body, extractor=NAME, meta=meta).with_regions(regions)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=XML_MIMES, priority=30, extract=extract_xml)]
