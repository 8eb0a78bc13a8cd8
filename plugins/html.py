"""HTML to plain text with boilerplate removed, by a flat (non-recursive) parser.

The stdlib `html.parser` is an event tokenizer, not a tree builder, so a page
nested 400,000 levels deep costs a counter, not a stack: hostile input cannot
blow the recursion limit. Boilerplate containers (script, style, nav, header,
footer, aside...) are skipped by counting their open tags; block elements
become line breaks; entities are decoded by the tokenizer.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

from scanner.core.model import Extracted
from scanner.sources.extract.encoding import bom_encoding, decode_text
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "html"

SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "head", "nav",
        "header", "footer", "aside", "iframe", "object", "select", "button", "canvas",
    }
)
BLOCK_TAGS = frozenset(
    {
        "address", "article", "blockquote", "br", "caption", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "hr", "li", "main", "ol", "p", "pre", "section", "summary",
        "table", "tbody", "thead", "tfoot", "tr", "ul", "body", "html", "title",
    }
)
CELL_TAGS = frozenset({"td", "th"})
VOID_TAGS = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr",
    }
)
_SPACE = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}


class _TextCollector(HTMLParser):
    """Collects visible text; every piece of state is a counter or a flat list."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.skipping: Counter[str] = Counter()
        self.pre = 0
        self.in_title = 0
        self.depth = 0
        self.deepest = 0
        self.max_depth = max_depth

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_TAGS:
            self.depth += 1
            self.deepest = max(self.deepest, self.depth)
        if tag == "body":
            self.skipping.pop("head", None)  # an unclosed <head> must not hide the page
        if tag in SKIP_TAGS:
            self.skipping[tag] += 1
        elif tag == "title":
            self.in_title += 1
        elif tag == "pre":
            self.pre += 1
        self._boundary(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._boundary(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID_TAGS and self.depth:
            self.depth -= 1
        if tag in SKIP_TAGS and self.skipping[tag]:
            self.skipping[tag] -= 1
            if not self.skipping[tag]:
                del self.skipping[tag]
        elif tag == "title" and self.in_title:
            self.in_title -= 1
        elif tag == "pre" and self.pre:
            self.pre -= 1
        self._boundary(tag)

    def _boundary(self, tag: str) -> None:
        if self.skipping:
            return
        if tag in BLOCK_TAGS:
            self.parts.append("\n")
        elif tag in CELL_TAGS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skipping:
            return
        self.parts.append(data if self.pre else _SPACE.sub(" ", data))

    def text(self) -> str:
        lines = (_SPACE.sub(" ", line).strip() for line in "".join(self.parts).split("\n"))
        return "\n".join(line for line in lines if line)


def html_to_text(markup: str, limits: ExtractLimits) -> tuple[str, dict[str, str]]:
    """Visible text of an HTML string and meta (title, nesting depth)."""
    parser = _TextCollector(limits.max_html_depth)
    parser.feed(markup)
    parser.close()
    meta: dict[str, str] = {}
    title = _SPACE.sub(" ", "".join(parser.title)).strip()
    if title:
        meta["title"] = title
    if parser.deepest > limits.max_html_depth:
        meta["deep_nesting"] = f"{parser.deepest} levels (flattened)"
    return parser.text(), meta


def decode_html(data: bytes) -> tuple[str, str]:
    """(markup, encoding): BOM, then valid UTF-8, then <meta charset>, then guessing."""
    hint = None
    if not bom_encoding(data):
        found = _META_CHARSET.search(data[:4096])
        if found:
            label = found.group(1).decode("ascii", "replace").lower()
            hint = _WHATWG_ALIASES.get(label, label)
    return decode_text(data, hint=hint)


def extract_html(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    markup, encoding = decode_html(data)
    text, meta = html_to_text(markup, limits)
    return Extracted(text=text, extractor=NAME, meta={"encoding": encoding, **meta})


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [
        Extractor(
            name=NAME,
            mimes=("text/html", "application/xhtml+xml"),
            priority=50,
            extract=extract_html,
        )
    ]
