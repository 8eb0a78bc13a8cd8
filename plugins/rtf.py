"""RTF through striprtf (BSD licence): a small pure-Python reader of RTF's control words.

striprtf decodes `\\uN` escapes and `\\'xx` code-page bytes (by the font's
charset or `\\ansicpg`) and skips destinations that are not text (font and
colour tables, pictures, objects, fields' instructions). Its parser takes
one regular-expression match per character, so before it runs, the groups
that hold only binary data (`\\pict`, `\\objdata`, `\\datastore`, `\\themedata`...,
which it would skip anyway) and `\\binN` runs are cut out in one linear scan:
a 5 MB RTF that is mostly an embedded picture is read in milliseconds, not
seconds.
"""

from __future__ import annotations

import re

from striprtf.striprtf import rtf_to_text

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "rtf"
MIMES = ("text/rtf", "application/rtf")
_HEADER = re.compile(rb"\s*(?:\xef\xbb\xbf)?\s*\{\\rtf", re.ASCII)
# groups of binary data (hex or \bin): pictures, OLE objects, embedded fonts, Office's XML data stores
_BINARY_GROUP = re.compile(
    rb"(?<!\\)\{(?:\\\*)?\\(?:pict|objdata|datastore|themedata|colorschememapping|fontemb|fontfile|blipuid|passwordhash)"
    rb"(?![a-zA-Z])"
)
_BINARY_RUN = re.compile(rb"(?<!\\)\\bin(\d{1,10}) ?")  # not the text "\\bin" (an escaped backslash)
# what moves the brace depth inside a skipped group: escaped braces and backslashes do not
_GROUP_TOKEN = re.compile(rb"\\bin(\d{1,10}) ?|\\[\\{}]|[{}]")
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f]")
_FONT_TABLE = re.compile(rb"\{[^{}]*\\fonttbl")  # where striprtf looks for it
_FONT_NUMBER = re.compile(rb"\\f(\d{1,10})")
_FONT_CHARSET = re.compile(rb"\\fcharset(\d{1,5})")
_CODE_PAGE = re.compile(rb"\\ansicpg(\d{1,5})")
# "{\field{" is where striprtf's hyperlink pattern (greedy, line-bound, quadratic on a long line) starts; a
# space after \field is the control word's delimiter, the same RTF to any reader, and never matches it
_FIELD = re.compile(rb"\{\\field\{")


def _group_end(data: bytes, start: int) -> int:
    """Where the group opened at `start` closes (after its `}`), `\\binN` data skipped; the end if never."""
    depth = 0
    position = start
    while (token := _GROUP_TOKEN.search(data, position)) is not None:
        position = token.end()
        if token.group(1) is not None:
            position += int(token.group(1))
        elif token.group() == b"{":
            depth += 1
        elif token.group() == b"}":
            depth -= 1
            if depth == 0:
                return position
    return len(data)


def without_binary(data: bytes) -> bytes:
    """The RTF without its binary-data groups and `\\binN` runs (text a reader never shows)."""
    kept: list[bytes] = []
    position = 0
    while True:
        group = _BINARY_GROUP.search(data, position)
        run = _BINARY_RUN.search(data, position, group.start() if group else len(data))
        if run is not None:
            kept.append(data[position:run.start()])
            position = run.end() + int(run.group(1))
        elif group is not None:
            kept.append(data[position:group.start()])
            position = _group_end(data, group.start())
        else:
            kept.append(data[position:])
            return b"".join(kept)


def plain_font_table(data: bytes) -> bytes:
    """The font table rewritten one font a line, `{\\fN\\fcharsetM f;}`, fonts without a charset last.

    striprtf reads only each font's number and charset from it, with a pattern (`\\fN.*?\\fcharsetM.*?name;`)
    that is quadratic on a long line: a hostile 1 MB table on one line took 11 minutes. One line a font
    bounds every match; a font without a charset, placed last, takes the document's code page, as in RTF
    (striprtf would have paired it with the next font's charset).
    """
    start = _FONT_TABLE.search(data)
    if start is None:
        return data
    end = _group_end(data, start.start())
    table = data[start.start():end]
    fonts = list(_FONT_NUMBER.finditer(table))
    with_charset: list[bytes] = []
    without_charset: list[bytes] = []
    for font, following in zip(fonts, [*fonts[1:], None]):
        charset = _FONT_CHARSET.search(table, font.end(), following.start() if following else len(table))
        if charset is None:
            without_charset.append(b"{\\f%s f;}" % font.group(1))
        else:
            with_charset.append(b"{\\f%s\\fcharset%s f;}" % (font.group(1), charset.group(1)))
    rewritten = b"\n".join([b"{\\fonttbl", *with_charset, *without_charset, b"}"])
    return data[:start.start()] + rewritten + data[end:]


# groups whose text a reader has beside the body: page headers and footers, footnotes, comments, text boxes
_SIDE_GROUP = re.compile(
    rb"(?<!\\)\{(?:\\\*)?\\(?:(header|footer)[lrf]?|(footnote|annotation|shptxt))(?![a-zA-Z])")
_SIDE_LABELS = {b"header": "a page header", b"footer": "a page footer", b"footnote": "the footnotes",
                b"annotation": "the comments", b"shptxt": "a text box"}


def side_groups(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """The RTF without the groups whose text is not the body's, and each of them as (label, a group of its
    content): striprtf skips them all (`\\header`, `\\footnote`, `\\*\\annotation`, a shape's `\\shptxt`),
    so a leak in a footer, a footnote, a comment or a text box was read nowhere."""
    kept: list[bytes] = []
    found: list[tuple[str, bytes]] = []
    position = 0
    while (group := _SIDE_GROUP.search(data, position)) is not None:
        end = _group_end(data, group.start())
        kept.append(data[position:group.start()] + b"{}")  # an empty group: a control word before stays one
        found.append((_SIDE_LABELS[group.group(1) or group.group(2)], b"{" + data[group.end():end]))
        position = end
    kept.append(data[position:])
    return b"".join(kept), found


def _text_of(data: bytes) -> str:
    """striprtf's text of an RTF document, its UTF-16 escapes joined and its line ends \\n."""
    text = rtf_to_text(_decoded(data), errors="replace")
    # \uN escapes give UTF-16 code units: join surrogate pairs, replace any left alone
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _decoded(data: bytes) -> str:
    """RTF is 7-bit, but writers put raw bytes in it: UTF-8 when they are, else the document's code page."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    found = _CODE_PAGE.search(data[:4096])
    try:
        return data.decode(f"cp{int(found.group(1))}" if found else "cp1252", "replace")
    except LookupError:
        return data.decode("cp1252", "replace")


def extract_rtf(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    if not _HEADER.match(data[:64]):
        raise ExtractionError("not an RTF document: no {\\rtf header", status="corrupt")
    data = without_binary(data)
    if len(_CONTROL_BYTES.findall(data.rstrip(b"\x00"))) > 0.01 * len(data):  # WordPad ends its files with a NUL
        raise ExtractionError("binary data in an RTF document outside any picture or object", status="corrupt")
    data = plain_font_table(_FIELD.sub(rb"{\\field {", data))
    body, sides = side_groups(data)
    groups: dict[str, list[bytes]] = {}  # a kind's groups, each once (a page's left and right headers are often one)
    for label, group in sides:
        if group not in (kept := groups.setdefault(label, [])):
            kept.append(group)
    # each kind's groups read as one document, a paragraph each, under this one's header and font table (its
    # charsets): once a kind, not once a group (2,000 footnotes under a 50 KB font table took 26 s that way)
    table = _FONT_TABLE.search(body)
    head = body[:_group_end(body, table.start())] if table else b"{\\rtf1\\ansi"
    return Extracted(text=_text_of(body), extractor=NAME).with_regions(
        [(label, _text_of(head + b"\\par ".join(kept) + b"}")) for label, kept in groups.items()])


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_rtf)]
