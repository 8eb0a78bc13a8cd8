"""Untrusted XML, shared by the plugins that read it (office documents, SVG drawings, XML documents): parsed
by expat after refusing entity declarations (and, unless allowed, any DTD), in UTF-8 or UTF-16, so an
entity-expansion bomb never reaches the parser; and walked in document order with an explicit stack, so deep
nesting cannot hit the recursion limit."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from scanner.core.errors import ExtractionError

_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def _as_utf8(data: bytes) -> bytes:
    """UTF-16 XML re-encoded as UTF-8 for the DTD search (expat reads UTF-16; a byte search would miss it)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "utf-16"
    elif data[:2] == b"<\x00":
        encoding = "utf-16-le"
    elif data[:2] == b"\x00<":
        encoding = "utf-16-be"
    else:
        return data
    return data.decode(encoding, "replace").encode("utf-8")


def refuse_dtd(data: bytes, what: str, allow_doctype: bool = False) -> None:
    """Entity declarations (and, unless allowed, any DTD) are refused before expat sees the bytes."""
    data = _as_utf8(data)
    found = _DTD.search(data)
    if found and (found.group(0).upper() == b"<!ENTITY" or not allow_doctype):
        raise ExtractionError(f"{what}: XML with a DTD refused", status="corrupt")
    if allow_doctype and b"<!ENTITY" in data.upper():
        raise ExtractionError(f"{what}: XML entity declarations refused", status="corrupt")


class _CommentsKept(ET.TreeBuilder):
    """A tree builder that also keeps every comment's text, those before and after the root included."""

    def __init__(self, comments: list[str]) -> None:
        super().__init__()
        self.comments = comments

    def comment(self, text: str | None) -> ET.Element:
        self.comments.append(text or "")
        return super().comment(text)


def parse_xml(data: bytes, what: str, allow_doctype: bool = False, comments: list[str] | None = None) -> ET.Element:
    """Parse untrusted XML; entity declarations are refused outright. `comments`: where each comment's text
    is appended, in document order (the tree has none)."""
    refuse_dtd(data, what, allow_doctype)
    try:
        return ET.fromstring(data, None if comments is None else ET.XMLParser(target=_CommentsKept(comments)))
    except ET.ParseError as exc:
        raise ExtractionError(f"{what}: malformed XML: {exc}", status="corrupt") from exc


def local_name(tag: object) -> str:
    """An element's name without its namespace ("" for a comment or a processing instruction)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def xml_events(root: ET.Element) -> Iterator[tuple[str, ET.Element | str]]:
    """("start" | "end", element) and ("data", text) in document order, with an explicit stack (a tree
    nested 100,000 deep costs no recursion)."""
    stack: list[tuple[str, ET.Element | str]] = [("start", root)]
    while stack:
        kind, item = stack.pop()
        yield kind, item
        if kind == "start" and isinstance(item, ET.Element):
            stack.append(("end", item))
            for child in reversed(item):
                if child.tail:
                    stack.append(("data", child.tail))
                stack.append(("start", child))
            if item.text:
                stack.append(("data", item.text))
