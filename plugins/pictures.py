"""Pictures written inside documents that are not ZIP packages, as members read by OCR: an HTML page's images
given as data URIs (a page saved whole, a mail's HTML body), an RTF document's `\\pict` groups (a screenshot
pasted into WordPad or into a Word document saved as RTF), and the PNG and JPEG pictures of Word, PowerPoint
and Excel 97-2003 files, found by their signatures in the compound file's stream that stores them. Their text
is pixels in no part of the page or document, and was read nowhere. A picture too small to hold a line is not
one (`ocr.too_small_to_read`); one OCR finds no text in is counted by its document, not listed
(`Member.picture`)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl
from scanner_plugins._ole import open_compound_file, read_stream

HTML_MIMES = ("text/html", "application/xhtml+xml")
RTF_MIMES = ("text/rtf", "application/rtf")
# where Office 97-2003 keeps a document's pictures (OfficeArt BLIP records: a header, then the file's bytes)
OLE_PICTURE_STREAMS = {"application/msword": "Data", "application/vnd.ms-powerpoint": "Pictures",
                       "application/vnd.ms-excel": "Workbook"}
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"
# a data URI of a raster picture, to the end of its base64 (an attribute's quote, a parenthesis in CSS)
_DATA_URI = re.compile(rb"data:image/(png|jpe?g|gif|webp|bmp|tiff?)\s*;\s*base64\s*,\s*([A-Za-z0-9+/=\s]+)",
                       re.IGNORECASE)
_EXTENSIONS = {b"jpg": "jpeg", b"tif": "tiff"}
# an RTF token: a control word and its parameter, a control symbol, a brace, a run of hex digits and blanks
_RTF_TOKEN = re.compile(rb"\\([a-zA-Z]+)(-?\d+)? ?|\\.|([{}])|([0-9a-fA-F\s]+)|[^\\{}]", re.DOTALL)
_RTF_PICTURE = re.compile(rb"\{\\pict\b")
# the raster formats a \pict group holds (a metafile or a bitmap without header is no file OCR opens)
_RTF_BLIPS = {b"pngblip": "png", b"jpegblip": "jpeg"}


def picture_member(name: str, content: bytes, carved: bool = False) -> Iterator[Member]:
    """The member of a picture large enough to hold a line (or with words in its metadata); `carved`: found by
    its signature among other bytes, so one Pillow cannot open is no picture (a written one is a damaged
    picture, and said so)."""
    from scanner_plugins.ocr import picture_size, worth_reading

    size = picture_size(content)
    if (size is not None or not carved) and worth_reading(content, size):
        yield Member(name, content, picture=True)


def unpack_html_pictures(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """An HTML page's pictures given as data URIs, each once (an icon repeated down a page is one picture)."""
    if b"data:image" not in data and b"DATA:IMAGE" not in data:  # most pages: a byte search, not the pattern's
        return
    seen: set[bytes] = set()
    for number, found in enumerate(_DATA_URI.finditer(data), 1):
        encoded = re.sub(rb"\s+", b"", found.group(2))
        if encoded in seen:
            continue
        seen.add(encoded)
        try:
            content = base64.b64decode(encoded + b"=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError) as exc:
            yield Member(f"picture {number}", None, "corrupt", f"data URI not base64: {exc}", picture=True)
            continue
        budget.take(len(content), f"picture {number}")
        kind = found.group(1).lower()
        yield from picture_member(f"picture {number}.{_EXTENSIONS.get(kind, kind.decode())}", content)


def unpack_rtf_pictures(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """An RTF document's PNG and JPEG pictures (`{\\pict ... \\pngblip <hex>}`); Word writes each again as a
    metafile for older readers (`\\nonshppict`), which is not read twice. Each group is read once, the next
    looked for after its end (a group never closed ends the search): linear in the file, whatever its nesting."""
    number, position = 0, 0
    while (start := _RTF_PICTURE.search(data, position)) is not None:
        depth, kind, hex_runs, closed = 0, "", [], False
        position = start.end()
        for token in _RTF_TOKEN.finditer(data, start.start()):
            word, _, brace, hex_run = token.groups()
            if brace is not None:
                depth += 1 if brace == b"{" else -1
                if depth == 0:
                    closed, position = True, token.end()
                    break
            elif depth == 1 and word is not None:
                if word == b"bin":  # raw bytes follow: a form no writer of pictures uses
                    kind = ""
                    closed = True
                    break
                kind = _RTF_BLIPS.get(word, kind)
            elif depth == 1 and hex_run is not None:
                hex_runs.append(hex_run)
        if not closed:
            return
        if not kind:
            continue
        number += 1
        try:
            content = bytes.fromhex(b"".join(hex_runs).decode("ascii"))
        except ValueError as exc:
            yield Member(f"picture {number}", None, "corrupt", f"picture data not hexadecimal: {exc}", picture=True)
            continue
        budget.take(len(content), f"picture {number}")
        yield from picture_member(f"picture {number}.{kind}", content)


_CARVING_STEPS = 1_000_000  # chunks and segments followed in one stream: a few hundred a real picture


def _png_end(data: bytes, start: int, steps: list[int]) -> int | None:
    """Where the PNG starting at `start` ends: after its IEND chunk, its chunks followed by their lengths
    (each a step taken from `steps`)."""
    position = start + len(_PNG)
    while position + 12 <= len(data) and steps[0] > 0:
        steps[0] -= 1
        length, kind = int.from_bytes(data[position:position + 4], "big"), data[position + 4:position + 8]
        position += 12 + length
        if kind == b"IEND":
            return position if position <= len(data) else None
    return None


def _jpeg_end(data: bytes, start: int, steps: list[int]) -> int | None:
    """Where the JPEG starting at `start` ends: its segments followed by their lengths up to the scan (each a
    step taken from `steps`), then the first end-of-image marker (a thumbnail's, inside an earlier segment, is
    not it)."""
    position = start + 2
    while position + 4 <= len(data) and data[position] == 0xFF and steps[0] > 0:
        steps[0] -= 1
        marker = data[position + 1]
        if marker == 0xDA:  # the scan: entropy-coded bytes, then EOI
            end = data.find(b"\xff\xd9", position)
            return None if end < 0 else end + 2
        if marker == 0xD9:
            return position + 2
        position += 2 + int.from_bytes(data[position + 2:position + 4], "big")
    return None


def carved_pictures(data: bytes) -> Iterator[tuple[str, bytes]]:
    """(extension, bytes) of the whole PNG and JPEG files found in `data` by their signatures, in order; a
    signature without a whole file after it is passed over. Linear in `data` whatever it holds: a kind is
    looked for no more once no file of it can end after the search (no IEND, no end-of-image marker), and
    at most _CARVING_STEPS chunks and segments are followed in all."""
    position, steps = 0, [_CARVING_STEPS]
    kinds = {"png": (_PNG, b"IEND", _png_end), "jpeg": (_JPEG, b"\xff\xd9", _jpeg_end)}
    next_start: dict[str, int] = {}  # each kind's next signature, and the next ending after it: each byte
    next_ending: dict[str, int] = {}  # searched once for each, however many signatures fail
    while kinds and steps[0] > 0:
        for kind, (signature, ending, _) in list(kinds.items()):
            if next_start.get(kind, -1) < position:
                next_start[kind] = data.find(signature, position)
            if next_start[kind] < 0:
                del kinds[kind]
            elif next_ending.get(kind, -1) < next_start[kind]:
                next_ending[kind] = data.find(ending, next_start[kind])
                if next_ending[kind] < 0:  # none of this kind can end after here
                    del kinds[kind]
        if not kinds:
            return
        start, kind = min((next_start[kind], kind) for kind in kinds)
        end = kinds[kind][2](data, start, steps)
        if end is None:
            position = start + 1
            continue
        yield kind, data[start:end]
        position = end


def unpack_ole_pictures(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """A Word, PowerPoint or Excel 97-2003 file's PNG and JPEG pictures, from the stream that stores them
    (`OLE_PICTURE_STREAMS`), each once. A file olefile cannot open has none here: its extraction says why."""
    try:
        ole = open_compound_file(data, "compound file")
    except ExtractionError:
        return
    try:
        name = OLE_PICTURE_STREAMS[mime]
        if not ole.exists(name):
            return
        stream = read_stream(ole, name, len(data), "compound file")
    except (OSError, ValueError, IndexError, ExtractionError):
        return
    finally:
        ole.close()
    budget.take(len(stream), f"stream {name!r}")
    seen: set[bytes] = set()
    for number, (kind, content) in enumerate(carved_pictures(stream), 1):
        if content not in seen:
            seen.add(content)
            yield from picture_member(f"picture {number}.{kind}", content, carved=True)


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="html-pictures", mimes=HTML_MIMES, priority=50, unpack=unpack_html_pictures, has_text=True),
            Unpacker(name="rtf-pictures", mimes=RTF_MIMES, priority=50, unpack=unpack_rtf_pictures, has_text=True),
            Unpacker(name="ole-pictures", mimes=tuple(OLE_PICTURE_STREAMS), priority=50, unpack=unpack_ole_pictures,
                     has_text=True)]
