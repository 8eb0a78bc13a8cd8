"""Extraction never drops text silently: what an extractor kept, against the file's own words.

For a text-like file (text/*, HTML, XML, JSON, JavaScript) read by an
extractor that does not return its input whole, the words (`\\w+` runs) of
the extracted text are counted against the words of the file decoded as
text. For markup (HTML, XHTML, XML) the file's words are those a reader
sees: tags, comments and declarations are not words, and neither is the
content of the elements an HTML extractor leaves out on purpose (script,
style, head, nav, header, footer, aside... `NON_TEXT_ELEMENTS`) when the
element is closed. An element that never closes hides nothing here.

A file whose extractor kept less than 90 % of those words is PARTIAL: its
text is the extractor's text, a blank line, then the raw text (the file
decoded, with markup tags removed when that keeps at least 90 % of its
words, else verbatim), so any passage of the file can still be found, and
offsets into the extractor's part stay valid (meta["raw_text_at"]).
Binary formats (PDF, DOCX, ODT, EPUB) and mail are out of scope: their bytes
are not their words; so are Jupyter notebooks, JSON whose keys and escapes are
not their words either (their reader counts the outputs it cannot read), and
LaTeX sources, whose commands are not.

Every scan here is linear in the input: one pass over the tags (a `>`
inside a quoted attribute value does not end a tag), and the close of an
unclosed `<script>` or `<style>` is looked for once.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections import Counter

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import LATEX_MIME, NOTEBOOK_MIME

__all__ = ["MAX_LOSS", "NON_TEXT_ELEMENTS", "checked", "count_words", "is_markup", "is_text_like", "visible_text"]

MAX_LOSS = 0.10  # a file that loses more of its words than this is never OK
_WORD = re.compile(r"\w+")
_TEXT_APPS = frozenset({
    "application/json", "application/javascript", "application/x-javascript", "application/xml",
    "application/xhtml+xml", "application/x-empty",
})
_MARKUP = frozenset({"text/html", "application/xhtml+xml", "text/xml", "application/xml"})
# What an HTML extractor may leave out when it is closed (scanner_plugins.html skips these).
NON_TEXT_ELEMENTS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "head", "nav",
        "header", "footer", "aside", "iframe", "object", "select", "button", "canvas",
    }
)
# Tags that sit inside words (`<b>wo</b>rd`); every other tag separates words.
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i ins kbd mark q s samp small span strike strong sub sup "
    "time tt u var wbr".split()
)
def count_words(text: str) -> int:
    """Number of `\\w+` runs."""
    return _WORD.subn("", text)[1]


def is_text_like(mime: str) -> bool:
    """Inputs whose bytes are their words: the loss check applies."""
    # RTF and LaTeX are text/*, but their control words are not their words: counted raw, every RTF and
    # LaTeX source would be "partial"; a notebook's JSON keys and escapes are not its words either
    return ((mime.startswith("text/") and mime not in ("text/rtf", LATEX_MIME)) or mime in _TEXT_APPS
            or (mime.endswith(("+xml", "+json")) and mime != NOTEBOOK_MIME))


def is_markup(mime: str) -> bool:
    return mime in _MARKUP or mime.endswith("+xml")


# A tag: its name, then anything but `<`, `>` and `=`, or `=` and a quoted value (which may hold `<`, `>`);
# atomic and possessive, so no input makes the engine backtrack.
_TOKEN = re.compile(r"""<!--|<(/?)([A-Za-z][\w:.-]*)(?>[^<>=]|=\s*"[^"]*"|=\s*'[^']*'|=)*+>|<[!?][^<>]*>""")
_RAW_TEXT = frozenset({"script", "style"})  # their content is not markup: it runs to their closing tag


class _RawTextCloses:
    """Where `</script>` / `</style>` next closes, each name searched forward once (linear overall)."""

    def __init__(self, markup: str) -> None:
        self.markup = markup
        self.none_after: dict[str, int] = {}  # name -> a position after which it never closes

    def after(self, name: str, pos: int) -> int | None:
        if pos >= self.none_after.get(name, len(self.markup) + 1):
            return None
        match = re.compile(rf"</{name}\s*>", re.IGNORECASE).search(self.markup, pos)
        if match is None:
            self.none_after[name] = pos
            return None
        return match.end()


def visible_text(markup: str, *, drop_elements: bool = True) -> str:
    """The text of markup without tags, comments and declarations, entities decoded; with `drop_elements`,
    also without the content of closed `NON_TEXT_ELEMENTS` (nested ones counted, as an HTML parser does).

    One pass, left to right. An unclosed comment, script or style is no comment, script or style; the text
    of an element that is still open at the end comes back."""
    parts: list[str] = []
    held: list[str] = []  # the text since the outermost open NON_TEXT_ELEMENT began
    open_elements: Counter[str] = Counter()
    raw_closes = _RawTextCloses(markup)
    comments_end = len(markup) + 1
    pos = 0
    while True:
        out = held if open_elements else parts
        match = _TOKEN.search(markup, pos)
        if match is None:
            out.append(markup[pos:])
            break
        out.append(markup[pos : match.start()])
        pos = match.end()
        if match.group() == "<!--":
            end = markup.find("-->", pos) if pos < comments_end else -1
            if end < 0:
                comments_end = pos  # no comment closes after here: an open one hides nothing
            else:
                pos = end + 3
            continue
        closing, name = match.group(1), (match.group(2) or "").lower()
        if name == "body" and not closing and open_elements.pop("head", 0) and not open_elements:
            held.clear()  # <body> closes an open <head>
        elif drop_elements and name in NON_TEXT_ELEMENTS:
            if name in _RAW_TEXT and not closing:
                close = raw_closes.after(name, pos)
                if close is not None:  # the content of a closed script or style: never text
                    pos = close
                    continue
            elif not closing and name not in _RAW_TEXT and not match.group().endswith("/>"):
                open_elements[name] += 1
            elif closing and open_elements[name]:
                open_elements[name] -= 1
                if not open_elements[name]:
                    del open_elements[name]
                    if not open_elements:
                        held.clear()
        (held if open_elements else parts).append("" if name in _INLINE else " ")
    parts.extend(held)  # elements never closed hide nothing
    return html.unescape("".join(parts))


def _decoded(data: bytes, hint: str | None) -> str | None:
    try:
        text, _ = decode_text(data, hint=hint)
    except ExtractionError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def checked(result: Extracted, data: bytes, mime: str, max_chars: int) -> Extracted:
    """`result` as is, or PARTIAL with the raw text after it when the extractor kept < 90 % of the words."""
    hint = result.meta.get("encoding", "").split(" (")[0] or None
    raw = _decoded(data, hint)
    if raw is None:
        return result
    markup = is_markup(mime)
    expected = count_words(visible_text(raw) if markup else raw)
    if not expected:
        return result
    kept = count_words(result.text)
    if kept >= (1 - MAX_LOSS) * expected:
        return result
    total = count_words(raw)
    stripped = visible_text(raw, drop_elements=False) if markup or "<" in raw else raw
    tail = stripped if stripped is not raw and count_words(stripped) >= (1 - MAX_LOSS) * total else raw
    head = result.text.rstrip()
    at = len(head) + 2 if head else 0
    text = (head + "\n\n" + tail.strip()) if head else tail.strip()
    why = result.meta.get("unclosed", "")
    reason = (f"{result.extractor or 'the'} extractor kept {kept} of {expected} words; raw text indexed too"
              + (f" ({why})" if why else ""))
    meta = {**result.meta, "raw_text_at": str(at)}
    if len(text) > max_chars:
        text = text[:max_chars]
        meta["truncated"] = f"cut at {max_chars} characters"
    return dataclasses.replace(result, text=text, status=TextStatus.PARTIAL, reason=reason, meta=meta,
                               page_starts=tuple(p for p in result.page_starts if p < at))
