"""SVG drawings (diagrams, charts, terminal screenshots, icons) by the text they draw, not by their markup.

Read as text, a drawing's words were its markup's: coordinates, path data, style rules and the attribute
names every drawing of one tool repeats, so two unrelated drawings of one tool (two graphviz diagrams, two
terminal screenshots Rich saved) shared thousands of words and were paired as near-duplicates, and the
labels they draw were split by the markup between them. The text is now what a viewer shows: each
`<text>` element's characters (its `<tspan>`s, `<textPath>`s and links), a `<foreignObject>`'s HTML, laid
out by position (pieces on one baseline make a line; a piece that starts where the one before ended, as
Rich writes one piece a colour, continues its word). What a viewer does not show is kept as marked
regions: the titles and descriptions (tooltips, a screen reader's text), the metadata, text outside any
text element, comments. A drawing without text elements is `empty`, with the reason (text converted to
outlines is paths, which no reader here reads).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.routing import SVG_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._xml import local_name, parse_xml, xml_events

NAME = "svg"
_TEXT, _LINE_STARTS = "text", frozenset({"tspan", "textpath"})
_SKIPPED = frozenset({"style", "script"})  # program text
_REGIONS = {"title": "the drawing's titles and descriptions", "desc": "the drawing's titles and descriptions",
            "metadata": "the drawing's metadata"}
_OUTSIDE, _COMMENT = "text outside the drawing's text elements", "a comment"
_BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"})
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\s*(-?[0-9.]+(?:e-?[0-9]+)?)")


def _number(value: str | None) -> float | None:
    """An SVG coordinate's first number (`x="10 20 30"` places each character; the first is where it starts)."""
    found = _NUMBER.match(value or "")
    try:
        return float(found.group(1)) if found else None
    except ValueError:
        return None


@dataclass
class _Piece:
    """One `<text>` element's characters and where it starts and ends on its baseline."""

    text: str
    x: float | None
    y: float | None
    length: float | None

    def continues(self, before: "_Piece") -> str | None:
        """What joins it to the piece before when on the same baseline: "" when it starts where that one
        ended (a word split by its colours), a space otherwise; None on another line."""
        if self.y is None or before.y is None or abs(self.y - before.y) > 0.01:
            return None
        if before.x is not None and before.length is not None and self.x is not None \
                and abs(before.x + before.length - self.x) < 0.5:
            return ""
        return " "


def svg_text(root: ET.Element, comments: list[str]) -> tuple[str, list[tuple[str, str]], int]:
    """(body, regions as (label, text), number of text elements) of a parsed drawing and its comments."""
    lines: list[str] = []
    previous: _Piece | None = None  # the text element read last (a piece may continue its line)
    piece = _Piece("", None, None, None)
    count = 0  # text elements
    regions: dict[str, list[str]] = {}
    places: list[str] = []  # the open region elements' labels (metadata holds dc:title: the outermost wins)
    skipped = texts = foreign = 0  # open style or script elements, text elements, foreign objects
    current: list[list[str]] | None = None  # the lines of the text element being read, each its characters
    for kind, item in xml_events(root):  # each event costs the same whatever the nesting
        if kind == "data":
            assert isinstance(item, str)
            if skipped:
                continue
            if places:
                regions.setdefault(places[0], []).append(item)
            elif current is not None:
                current[-1].append(item)
            elif foreign:
                lines.append(item)
            elif item.strip():
                regions.setdefault(_OUTSIDE, []).append(item)
            continue
        assert isinstance(item, ET.Element)
        tag = local_name(item.tag).lower()
        step = 1 if kind == "start" else -1
        skipped += step * (tag in _SKIPPED)
        if tag in _REGIONS and step > 0:
            places.append(_REGIONS[tag])
        elif tag in _REGIONS:
            places.pop()
        if kind == "start":
            if tag == _TEXT and current is None and not foreign:
                current = [[]]
                piece = _Piece("", _number(item.get("x")), _number(item.get("y")), _number(item.get("textLength")))
                count += 1
            elif tag in _LINE_STARTS and current is not None and (item.get("x") or item.get("y")) \
                    and "".join(current[-1]).strip():
                current.append([])  # a line of its own (Inkscape writes each line a tspan at its place)
            elif tag == "foreignobject":
                foreign += 1
            elif foreign and tag in _BLOCKS:
                lines.append("\n")
            texts += tag == _TEXT
            continue
        texts -= tag == _TEXT
        if tag == _TEXT and current is not None and not texts:
            # white space collapsed, not stripped: a piece of spaces between two columns keeps them apart
            piece.text = "\n".join(_SPACE.sub(" ", "".join(line)) for line in current)
            current = None
            if previous is not None and (joint := piece.continues(previous)) is not None and lines:
                lines[-1] += joint + piece.text
            else:
                lines.append("\n" + piece.text)
            previous = piece
        elif tag == "foreignobject":
            foreign -= 1
            lines.append("\n")
        elif foreign and tag in _BLOCKS:
            lines.append("\n")
    if any(comment.strip() for comment in comments):
        regions[_COMMENT] = comments
    body_lines = (_SPACE.sub(" ", line).strip() for line in "".join(lines).split("\n"))
    return ("\n".join(line for line in body_lines if line),
            [(label, _SPACE.sub(" ", " ".join(texts)).strip()) for label, texts in regions.items()], count)


def extract_svg(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """A drawing's text as a viewer shows it; refused or malformed XML is read as text by the text reader."""
    comments: list[str] = []
    body, regions, elements = svg_text(parse_xml(data, "SVG drawing", allow_doctype=True, comments=comments), comments)
    meta = {"text_elements": str(elements)}
    extracted = Extracted(text=body, extractor=NAME, meta=meta).with_regions(regions)
    if not extracted.text.strip():
        return Extracted(text="", extractor=NAME, status=TextStatus.EMPTY, meta=meta,
                         reason="a drawing without text elements (text drawn as outlines is paths, not read)")
    return extracted


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=(SVG_MIME,), priority=50, extract=extract_svg)]
