"""Type routing: what the bytes are, fast, from the package's own magic file.

`scanner.magic` (next to this module) types what the extractor plugins read:
PDF, ZIP containers, XML, HTML documents, mail. libmagic loads it as a
source file (about 0.2 ms, no compile step, no system file touched) and
runs its built-in text tests after it, so text comes back as text/plain,
text/csv or application/json. With a handful of rules instead of the system
database's thousands (whose text rules are regular expressions run over
the whole head), a text file costs about a tenth of the time.

Python then settles what a magic rule should not:

* a ZIP is named by its members (DOCX, ODT, EPUB...);
* text is HTML only when its markup makes it HTML: a document (an HTML
  doctype or <html> element first, after white space, comments or an XML
  declaration), or a fragment that opens with a tag, whose tags are HTML's
  and that closes at least one of them. Prose that mentions `<head>`,
  `<script>` or `git checkout <style>` stays text;
* a block of RFC 822 headers is mail;
* a JSON object with a notebook's keys (`"cells"` of `"cell_type"`s, or `"nbformat"`) is a Jupyter notebook;
* XML whose root element is `<svg>` is an SVG drawing (libmagic says so only without an XML declaration);
* text with a line that opens with a command only LaTeX sources open with (documentclass, usepackage,
  begin{document}, chapter, section) is a LaTeX source.

Only bytes this cannot type (application/octet-stream: images, archives,
executables...) and ZIPs of no known kind go to the system database, and its
answer is what the index records as the file's type. Bytes that nothing
types but that decode as text are text/plain.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

from scanner.core.errors import ExtractionError

__all__ = ["LATEX_MIME", "MAGIC_FILE", "NOTEBOOK_MIME", "SVG_MIME", "XML_MIMES", "detect_mime", "looks_like_html",
           "looks_like_text", "system_mime"]

MAGIC_FILE = Path(__file__).with_name("scanner.magic")
MAGIC_HEAD = 64 * 1024  # libmagic decides from the head; more only costs time
SNIFF = 4096
_UNKNOWN = "application/octet-stream"
_MBOX = "application/mbox"
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_MAPI_STREAM = "__substg1.0_".encode("utf-16-le")  # the property streams of an Outlook .msg ([MS-OXMSG])
_OUTLOOK = "application/vnd.ms-outlook"
NOTEBOOK_MIME = "application/x-ipynb+json"  # Jupyter's own name for the format
# a key only a notebook's JSON has; Jupyter writes keys sorted, so a cell's "cell_type" comes first in it, and
# writers that keep the order they were given (Colab) put "nbformat" first
_NOTEBOOK_KEY = re.compile(rb'"(?:cell_type|nbformat)"\s*:')
# a compound file the system database names only as such (its writer gave its root no class id): typed by the
# stream that makes it what it is, in this order
_OLE2_GENERIC = {"application/x-ole-storage", "application/CDFV2", _UNKNOWN}
_OLE2_STREAMS = (("PowerPoint Document", "application/vnd.ms-powerpoint"), ("WordDocument", "application/msword"),
                 ("Workbook", "application/vnd.ms-excel"))
_ZIPLIKE = {"application/zip", _UNKNOWN, "application/x-zip-compressed"}
_TEXTLIKE_APP = {
    _UNKNOWN,
    "application/javascript",
    "application/x-javascript",
    "application/json",
    "application/xml",
    "application/x-empty",
}
XML_MIMES = ("text/xml", "application/xml")  # what libmagic calls XML (an SVG drawing is typed apart)
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_HEADER_RE = re.compile(rb"^[!-9;-~]+:[ \t]")
_MAIL_HEADERS = {
    b"from", b"to", b"subject", b"date", b"message-id", b"received", b"return-path",
    b"mime-version", b"content-type", b"cc", b"reply-to", b"delivered-to",
}

# What may come before a document's first element: white space, a BOM, comments, an XML declaration.
_PROLOGUE = re.compile(rb"(?:\s+|\xef\xbb\xbf|<!--.*?-->|<\?xml[^>]*>)*", re.DOTALL)
# an SVG drawing's start: the prologue, maybe a DOCTYPE (with its internal subset), then the <svg> root;
# possessive, so a head that is no drawing fails at once (a white space run split every way took 2^n steps)
_SVG_ROOT = re.compile(rb"(?:\s++|\xef\xbb\xbf|<!--.*?-->|<\?xml[^>]*+>|<!doctype\s+svg[^>\[]*+(?:\[.*?\])?\s*>)*+"
                       rb"<(?:svg:)?svg[\s>]", re.DOTALL | re.IGNORECASE)
SVG_MIME = "image/svg+xml"
LATEX_MIME = "text/x-tex"
# a LaTeX source: a line that opens with a command only LaTeX documents (or their chapters) open with
_LATEX_START = re.compile(rb"^[ \t]*\\(?:documentclass|begin\{document\}|chapter\*?\{|section\*?\{|usepackage)",
                          re.MULTILINE)
_DOCUMENT = re.compile(rb"<!doctype\s+html|<html[\s>]", re.IGNORECASE)
_MARKUP_RUN = re.compile(rb"<[^<>]*>")
_TAG = re.compile(rb"<(/?)([a-z][a-z0-9]*(?:-[a-z0-9-]*)?)(?=[\s/>])", re.IGNORECASE)
# Elements of HTML (the living standard, plus the obsolete ones still found in pages), and the SVG and
# MathML elements a page may hold. Custom elements (`<my-widget>`) are HTML too, but so are the look of
# a man page's `<record-options>`: names with a hyphen count for neither side.
HTML_ELEMENTS = frozenset(
    b"""a abbr acronym address area article aside audio b base bdi bdo big blink blockquote body br button
    canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt em
    embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr
    html i iframe img input ins kbd label legend li link main map mark marquee math menu meta meter nav
    nobr noframes noscript object ol optgroup option output p param picture pre progress q rp rt ruby s samp
    script search section select slot small source span strike strong style sub summary sup svg table tbody
    td template textarea tfoot th thead time title tr track tt u ul var video wbr
    circle clippath defs desc ellipse foreignobject g image line lineargradient marker mask path pattern
    polygon polyline radialgradient rect stop symbol text tspan use
    annotation mfrac mi mn mo mover mroot mrow ms mspace msqrt mstyle msub msubsup msup mtable mtd mtext mtr
    munder munderover semantics""".split()
)

_lock = threading.Lock()
_cookies: dict[str, Any] = {}


def _magic(which: str) -> Any:
    """The process's libmagic handle: "ours" (scanner.magic; None if this libmagic cannot load it) or "system"."""
    cookie = _cookies.get(which, False)
    if cookie is not False:
        return cookie
    import magic

    with _lock:
        if which not in _cookies:
            if which == "system":
                _cookies[which] = magic.Magic(mime=True)
            else:
                try:
                    _cookies[which] = magic.Magic(mime=True, magic_file=str(MAGIC_FILE))
                except magic.MagicException:  # an old libmagic that cannot read a rule: the system database for all
                    _cookies[which] = None
        return _cookies[which]


def system_mime(data: bytes) -> str:
    """What libmagic's system database alone says of `data` (its head)."""
    return (_magic("system").from_buffer(data[:MAGIC_HEAD]) or _UNKNOWN).lower()


def _our_mime(head: bytes) -> str | None:
    ours = _magic("ours")
    if ours is None:
        return None
    return (ours.from_buffer(head) or _UNKNOWN).lower()


def looks_like_mail(data: bytes) -> bool:
    """RFC 822 header block: every line a header or continuation, two known names."""
    block = data[:SNIFF].replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    known = 0
    for line in block.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            continue
        if not _HEADER_RE.match(line):
            return False
        known += line.split(b":", 1)[0].lower() in _MAIL_HEADERS
    return known >= 2


def looks_like_notebook(data: bytes) -> bool:
    """A JSON object holding a key of Jupyter's notebook format within the head (a text that does not open
    with `{` costs a look at its first bytes)."""
    return (data[:SNIFF].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
            and _NOTEBOOK_KEY.search(data, 0, MAGIC_HEAD) is not None)


def looks_like_html(head: bytes) -> bool:
    """Markup that makes text HTML: a document, or a fragment whose tags are HTML's and hold its text.

    A document's first element is an HTML doctype or <html> (after white space,
    comments, a BOM or an XML declaration: other XML is not HTML). A fragment opens with an element,
    at least 80 % of its tags are HTML elements, at least one element it
    opens is closed (`<p>...</p>`), and at most half of its text comes after
    its last tag. A man page that says `perf script [<options>] <script>` or
    `<head>` opens with a word, names elements that are not HTML's
    (`<options>`) and closes none: it is text. So is a page of plain text
    that opens with a link (`<a href=...><img ...></a>`): its text lies
    after the markup, not between it.
    """
    start = _PROLOGUE.match(head)
    rest = head[start.end() if start else 0:]
    if _DOCUMENT.match(rest):
        return True
    if not rest.startswith(b"<") or b"<?xml" in head[: start.end() if start else 0]:
        return False  # an XML document is HTML only by its doctype or <html> root
    if not _TAG.match(rest):
        return False
    tags = [(close, name.lower()) for close, name in _TAG.findall(head) if b"-" not in name]
    if len(tags) < 2:
        return False
    html = sum(name in HTML_ELEMENTS for _, name in tags)
    if html < 0.8 * len(tags):
        return False
    opened = {name for close, name in tags if not close and name in HTML_ELEMENTS}
    if not any(close and name in opened for close, name in tags):
        return False
    # its text lies between the tags: not mostly after the last one (a link, then a page of plain text)
    last = head.find(b">", head.rfind(b"<")) + 1 or len(head)
    text = len(_MARKUP_RUN.sub(b"", head).strip())
    return len(_MARKUP_RUN.sub(b"", head[last:]).strip()) <= 0.5 * text


def looks_like_text(data: bytes) -> bool:
    """The head decodes as text (any encoding `decode_text` knows), not binary."""
    from scanner.sources.extract.encoding import decode_text

    try:
        decode_text(data[:SNIFF])
    except ExtractionError:
        return False
    return True


def zip_mime(data: bytes) -> str | None:
    """The OOXML/ODF/EPUB type of a ZIP, from its members (not its file name)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            if "mimetype" in names and zf.getinfo("mimetype").file_size <= 200:
                declared = zf.read("mimetype").decode("ascii", "replace").strip()
                if declared:
                    return declared
            main_parts = (  # OOXML has no mimetype member: its main part names it
                ("word/document.xml", _DOCX),
                ("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
                ("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
                ("visio/document.xml", "application/vnd.ms-visio.drawing.main+xml"),
            )
            for member, mime in main_parts:
                if member in names:
                    return mime
            if any(name.lower().endswith((".fdseq", ".fpage")) for name in names):  # XPS, or OpenXPS by its rels
                rels = zf.read("_rels/.rels") if "_rels/.rels" in names and zf.getinfo("_rels/.rels").file_size \
                    <= 65536 else b""
                return "application/oxps" if b"schemas.openxps.org" in rels else "application/vnd.ms-xpsdocument"
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError, NotImplementedError):
        return None
    return None


_MBOX_SEPARATOR = re.compile(rb"From \S+[^\n]*\d\d:\d\d[^\n]*\r?\n")
# archives whose signature is text a document may open with ("070701,2024", "!<arch>" in a manual): their
# first header must follow, else they are text (an archive's reader would call the text a damaged archive)
_TEXT_LED_ARCHIVES = {
    "application/x-cpio": re.compile(rb"07070[12][0-9A-Fa-f]{104}|070707[0-7]{70}|\xc7\x71|\x71\xc7"),
    "application/x-archive": re.compile(rb"!<arch>\n(?:$|.{58}`\n)", re.DOTALL),
}
# Apple Mail's .emlx: the message's length in bytes on the first line, the message, then Mail's property list
EMLX_MIME = "message/x-emlx"
EMLX_LENGTH = re.compile(rb"(\d{1,10})[ \t]*\r?\n")


def looks_like_mbox(data: bytes) -> bool:
    """An mbox: a separator line ("From sender date-with-time") followed by a mail header block."""
    first = _MBOX_SEPARATOR.match(data[:SNIFF])
    return first is not None and looks_like_mail(data[first.end():])


def _refine_text(data: bytes, mime: str) -> str:
    """HTML, mail, a notebook or text for a head libmagic called text (or text-like, or HTML by the system's rules)."""
    head = data[:SNIFF]
    if mime.startswith("text/") or mime in _TEXTLIKE_APP or mime == "application/xhtml+xml":
        if looks_like_notebook(data):
            return NOTEBOOK_MIME
        if mime in XML_MIMES and _SVG_ROOT.match(head):
            return SVG_MIME
        if mime in ("text/plain", LATEX_MIME) and _LATEX_START.search(head):
            return LATEX_MIME
        if looks_like_html(head):
            return "text/html"
        if mime == "text/html":  # the system database's rules: `<head>` anywhere in the head
            return "text/plain"
        if mime == "text/plain" and looks_like_mail(data):
            return "message/rfc822"
        if mime == "text/plain" and (count := EMLX_LENGTH.match(head)) and looks_like_mail(data[count.end():]):
            return EMLX_MIME  # Apple Mail: the message's length in bytes on a line, then the message
        if mime == _UNKNOWN and looks_like_text(data):
            return "text/plain"
    return mime


IWA_MIME = "application/x-iwork-archive"


def looks_like_iwa(data: bytes) -> bool:
    """An iWork archive (`Index/Document.iwa` of a Pages, Numbers or Keynote file: protocol buffers in
    Snappy chunks, each a zero byte and a 24-bit length): its first chunk fits the file and inflates."""
    if len(data) < 8 or data[0] != 0:
        return False
    length = int.from_bytes(data[1:4], "little")
    if not 0 < length <= len(data) - 4:
        return False
    import cramjam

    try:
        return len(cramjam.snappy.decompress_raw(data[4:4 + length])) > 0
    except cramjam.DecompressionError:  # not Snappy, so not an archive
        return False


def detect_mime(data: bytes) -> str:
    """MIME type from content: the package's magic file first, the system database for what it cannot type.

    ZIP containers are named by their members, text is HTML only when its
    markup makes it HTML (`looks_like_html`), header-led text is mail, and
    unknown bytes that decode as text (BOM-less UTF-16, text with stray control bytes) are text/plain.
    """
    if not data:
        return "application/x-empty"
    if data.startswith(b"{\\rtf"):  # libmagic's CSV test runs before any rule: a comma-rich RTF would be CSV
        return "text/rtf"
    head = data[:MAGIC_HEAD]
    ours = _our_mime(head)
    if ours == "text/html":  # a document by the magic file's rules
        return ours
    mime = ours if ours and ours != _UNKNOWN else system_mime(head)
    if mime == "application/zip" or (mime in _ZIPLIKE and data.startswith(b"PK\x03\x04")):
        return zip_mime(data) or system_mime(head)
    if mime == _MBOX and not looks_like_mbox(data):  # prose that opens with "From "
        mime = "text/plain"
    if mime in _TEXT_LED_ARCHIVES and not _TEXT_LED_ARCHIVES[mime].match(data):  # text that opens like one
        mime = "text/plain"
    if data.startswith(_OLE2) and _MAPI_STREAM in data:  # an Outlook item, whatever CLSID its writer gave
        return _OUTLOOK
    if mime == _UNKNOWN and looks_like_iwa(data):
        return IWA_MIME
    if data.startswith(_OLE2) and mime in _OLE2_GENERIC:
        return next((typed for name, typed in _OLE2_STREAMS if name.encode("utf-16-le") in data), mime)
    return _refine_text(data, mime)
