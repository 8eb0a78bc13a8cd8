"""HTML to plain text: the body first, then every other text a reader or a program could see, marked.

The stdlib `html.parser` is an event tokenizer, not a tree builder, so a page
nested 400,000 levels deep costs a counter, not a stack: hostile input cannot
blow the recursion limit. Boilerplate containers (nav, header, footer, aside,
noscript, template...) are kept out of the body by counting their open tags;
block elements become line breaks; entities are decoded by the tokenizer.

Nothing a person could have hidden is dropped: the text of boilerplate
regions, comments (commented-out markup is read as markup, so its scripts stay out) and
alt/title attributes follows the body, each piece a marked region
(`Extracted.regions`), so a passage hidden there is found and reported with
its place. Elements hidden by `hidden` or `display:none` stay in the body, as
pages unhide them by script (a real article can sit in one). Only code
(script, style) is dropped.

A skipped region ends at its closing tag. One that is never closed (a
`<script>` or `<head>` that is only a word in prose, a page cut short) hides
nothing: its text comes back where it stood, and meta["unclosed"] names the
elements. The stdlib tokenizer keeps the rest of a document after an
unclosed `<script>` or `<style>` as raw text it never reports; that tail is
parsed again as markup.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any

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
# inside an inline <svg>, each label a line and each of its pieces a word (a chart's "North", "South" and
# "increased" ran together into one word); HTMLParser gives the tags in lower case
SVG_TEXT_TAGS = frozenset({"text", "title", "desc", "foreignobject", "textpath"})
_SVG_PLACED = frozenset({"x", "y", "dx", "dy"})
VOID_TAGS = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr",
    }
)
CODE_TAGS = frozenset({"script", "style"})  # program text, not prose: the only content dropped
_LABELS = {"comment": "an HTML comment", "attribute": "an alt or title attribute", "meta": "a meta tag",
           "input": "a form field"}
# <meta> whose content is prose about the page (what search results and link previews show)
_META_PROSE = frozenset({"description", "og:description", "twitter:description", "og:title", "twitter:title",
                         "abstract", "dc.description", "citation_abstract", "keywords"})
_TYPED_INPUTS = frozenset({"", "text", "search", "hidden", "email", "url"})  # a value a person or the page typed
_CONDITIONAL = re.compile(r"^\s*\[if[^\]]*\]>(.*?)(?:<!\[endif\])?\s*$", re.S | re.I)
_MARKUP = re.compile(r"<[A-Za-z/!]")
_SPACE = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}


class _TextCollector(HTMLParser):
    """Collects visible text; every piece of state is a counter or a flat list.

    While a boilerplate region is open its text goes to `held`, not `parts`: a
    region that closes drops it, one still open at the end gives it back.
    """

    def __init__(self, max_depth: int) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.held: list[str] = []
        self.title: list[str] = []
        self.skipping: Counter[str] = Counter()
        self.unclosed: set[str] = set()
        self.never_closed: set[str] = set()  # raw-text elements with no closing tag left in the input
        self.pre = 0
        self.in_title = 0
        self.depth = 0
        self.deepest = 0
        self.max_depth = max_depth
        self.regions: list[tuple[str, str]] = []  # (label, text) of what is not the body, in document order

    def _out(self) -> list[str]:
        return self.held if self.skipping else self.parts

    def _region(self, label: str, text: str) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self.regions.append((label, text))

    def _attributes(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Alt and title text: read aloud or shown on hover, so a place a passage can hide; and the prose of
        a page's meta description, and the values of its form's text fields, which no element's text holds."""
        for name, value in attrs:
            if name in ("alt", "title") and value:
                self._region(_LABELS["attribute"], value)
        if tag == "meta":
            found = dict(attrs)
            kind = (found.get("name") or found.get("property") or "").lower()
            if kind in _META_PROSE and found.get("content"):
                self._region(_LABELS["meta"], found["content"] or "")
        elif tag == "input":
            found = dict(attrs)
            if (found.get("type") or "").lower() in _TYPED_INPUTS and found.get("value"):
                self._region(_LABELS["input"], found["value"] or "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attributes(tag, attrs)
        if tag not in VOID_TAGS:
            self.depth += 1
            self.deepest = max(self.deepest, self.depth)
        if tag == "body" and self.skipping.pop("head", 0) and not self.skipping:
            self.held.clear()  # <body> ends an unclosed <head>: what it held was the head's
        if tag in SKIP_TAGS:
            self.skipping[tag] += 1
        elif tag == "title" and "svg" not in self.skipping:  # an inline drawing's title is not the page's
            self.in_title += 1
        elif tag == "pre":
            self.pre += 1
        elif tag == "tspan" and "svg" in self.skipping and _SVG_PLACED.intersection(name for name, _ in attrs):
            self._out().append(" ")  # a piece of a label placed apart (a line of it), not the rest of a word
        self._boundary(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attributes(tag, attrs)
        self._boundary(tag)

    def handle_comment(self, data: str) -> None:
        conditional = _CONDITIONAL.match(data)
        if conditional:
            data = conditional.group(1)
        if _MARKUP.search(data):  # commented-out markup (<!--[if IE]>, an old <script>): its text, not its code
            inner = _TextCollector(self.max_depth)
            inner.feed(data)
            inner.close()
            inner.finish()
            data = inner.document()[0]
        self._region(_LABELS["comment"], data)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID_TAGS and self.depth:
            self.depth -= 1
        if tag in SKIP_TAGS and self.skipping[tag]:
            self.skipping[tag] -= 1
            if not self.skipping[tag]:
                del self.skipping[tag]
                if not self.skipping:  # a closed region: not the body, but kept (code excepted)
                    if tag not in CODE_TAGS:
                        self._region(f"<{tag}>", "".join(self.held))
                    self.held.clear()
        elif tag == "title" and self.in_title and "svg" not in self.skipping:
            self.in_title -= 1
        elif tag == "pre" and self.pre:
            self.pre -= 1
        self._boundary(tag)

    def _boundary(self, tag: str) -> None:
        if tag in BLOCK_TAGS or (tag in SVG_TEXT_TAGS and "svg" in self.skipping):
            self._out().append("\n")
        elif tag in CELL_TAGS:
            self._out().append(" ")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skipping and not CODE_TAGS.isdisjoint(self.skipping):
            return  # program text inside a script or style
        self._out().append(data if self.pre else _SPACE.sub(" ", data))

    def set_cdata_mode(self, elem: str, *args: Any, **kwargs: Any) -> None:
        if elem not in self.never_closed:  # no </script> after here: a later <script> is read as markup too
            super().set_cdata_mode(elem, *args, **kwargs)

    def reopen(self, elem: str) -> None:
        """A raw-text element (script, style) that never closed was no region: what follows is parsed again."""
        self.unclosed.add(elem)
        self.never_closed.add(elem)
        if self.skipping[elem] > 1:
            self.skipping[elem] -= 1
        else:
            self.skipping.pop(elem, None)
            if not self.skipping:
                self.parts.extend(self.held)
                self.held.clear()
        self.clear_cdata_mode()

    def finish(self) -> None:
        """End of input: what regions still open held comes back."""
        if self.skipping:
            self.unclosed.update(self.skipping)
            self.skipping.clear()
            self.parts.extend(self.held)
            self.held.clear()

    def text(self) -> str:
        lines = (_SPACE.sub(" ", line).strip() for line in "".join(self.parts).split("\n"))
        return "\n".join(line for line in lines if line)

    def document(self) -> tuple[str, tuple[tuple[int, int, str], ...]]:
        """The body, then each region on a paragraph of its own, with the regions' spans."""
        pieces = [self.text()]
        spans = []
        at = len(pieces[0])
        for label, text in self.regions:
            at += 2  # the blank line before it
            spans.append((at, at + len(text), label))
            pieces.append(text)
            at += len(text)
        return "\n\n".join(pieces), tuple(spans)


def html_document(markup: str, limits: ExtractLimits) -> tuple[str, dict[str, str], tuple[tuple[int, int, str], ...]]:
    """The text of an HTML string (body, then marked regions), its meta (title, nesting depth, elements
    never closed) and the regions' spans."""
    parser = _TextCollector(limits.max_html_depth)
    markup, unclosed_comment = _cut_unclosed_comment(markup)
    parser.feed(markup)
    parser.close()
    # An unclosed <script> or <style> leaves the tokenizer in raw-text mode, and the rest of the input
    # unreported in rawdata (Python 3.11). It was no script: the rest is parsed again as markup.
    while parser.rawdata and parser.cdata_elem:
        tail, elem = parser.rawdata, parser.cdata_elem
        parser.rawdata = ""
        parser.reopen(elem)
        parser.feed(tail)
        parser.close()
    if unclosed_comment is not None:
        parser.handle_comment(unclosed_comment)
        parser.unclosed.add("comment")
    parser.finish()
    meta: dict[str, str] = {}
    title = _SPACE.sub(" ", "".join(parser.title)).strip()
    if title:
        meta["title"] = title
    if parser.deepest > limits.max_html_depth:
        meta["deep_nesting"] = f"{parser.deepest} levels (flattened)"
    if parser.unclosed:
        meta["unclosed"] = ", ".join(sorted(parser.unclosed)) + ": never closed, text kept"
    text, regions = parser.document()
    return text, meta, regions


def _cut_unclosed_comment(markup: str) -> tuple[str, str | None]:
    """The markup before a comment that never closes, and that comment's text (None when every comment
    closes). A browser hides all that follows an unclosed `<!--`; Python's parser instead searches the rest
    for `-->` again at every later `<!--`, which is quadratic (100,000 of them took 46 s). The comment's
    own `<!--` are text in it, not openers."""
    last_close = markup.rfind("-->")
    start = markup.find("<!--", last_close + 3 if last_close >= 0 else 0)
    if start < 0:
        return markup, None
    return markup[:start], markup[start + 4 :].replace("<!--", " ")


def html_to_text(markup: str, limits: ExtractLimits) -> tuple[str, dict[str, str]]:
    """`html_document` without the spans (mail bodies, EPUB chapters): every text, body first."""
    text, meta, _ = html_document(markup, limits)
    return text, meta


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
    text, meta, regions = html_document(markup, limits)
    return Extracted(text=text, extractor=NAME, meta={"encoding": encoding, **meta}, regions=regions)


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
