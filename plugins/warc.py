"""Web archives (WARC, ISO 28500): what `wget --warc-file`, Webrecorder, Heritrix and the Internet Archive keep
of a crawled site, every page as the server sent it. A WARC was typed text: its record headers, HTTP headers
and the pages' markup were indexed as words, and a page sent compressed or in chunks as bytes that match
nothing. Each page (a `response` record's HTTP body, its transfer and content encodings undone, or a
`resource` record's content) is now a member named by its URL, read by whichever plugin reads its type;
requests, metadata, revisits, the archive's own information and what a crawler records of its own work
(DNS look-ups, its arguments and log) are not documents. A `.warc.gz` is a gzip
stream of records, opened by the archives plugin, whose one member is this WARC.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl

MIMES = ("application/warc",)
_RECORD_START = re.compile(rb"WARC/1\.[01]\r?\n")
_HEADER = re.compile(rb"([!-9;-~]+):[ \t]*(.*?)\r?$", re.MULTILINE)
_PAGES = (b"response", b"resource")
_BLANK = re.compile(rb"\r?\n\r?\n")
# what crawlers record of their own work, not of the site: DNS look-ups (Heritrix), wget's arguments and log
_TOOLS_OWN = ("dns:", "metadata:")


def _headers(block: bytes) -> dict[bytes, bytes]:
    return {name.lower(): value.strip() for name, value in _HEADER.findall(block)}


def _dechunked(body: bytes) -> bytes:
    """An HTTP body sent with `Transfer-Encoding: chunked`, joined (a chunk cut short keeps what it holds)."""
    out, at = bytearray(), 0
    while at < len(body):
        line_end = body.find(b"\n", at)
        if line_end < 0:
            break
        try:
            size = int(body[at:line_end].split(b";")[0].strip(), 16)
        except ValueError:
            break
        if size == 0:
            break
        out += body[line_end + 1:line_end + 1 + size]
        at = line_end + 1 + size + 2  # the chunk's CRLF
    return bytes(out)


def _http_body(block: bytes, uri: str) -> Member:
    """The page in a response record: the HTTP headers off, its transfer and content encodings undone."""
    split = _BLANK.search(block)
    if split is None:
        return Member(uri, None, "corrupt", "a response record without the end of its HTTP headers")
    headers, body = _headers(block[:split.start()]), block[split.end():]
    if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        body = _dechunked(body)
    encoding = headers.get(b"content-encoding", b"").lower()
    if encoding in (b"gzip", b"x-gzip", b"deflate"):
        window = zlib.MAX_WBITS if encoding == b"deflate" else zlib.MAX_WBITS | 32  # zlib, or a gzip header
        try:
            body = zlib.decompressobj(window).decompress(body)
        except zlib.error as exc:
            return Member(uri, None, "corrupt", f"a page sent {encoding.decode()} that does not inflate: {exc}")
    elif encoding not in (b"", b"identity"):
        return Member(uri, None, "unsupported", f"a page sent with content encoding {encoding.decode()!r}")
    return Member(uri, body)


def unpack_warc(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """Each page of the archive, in record order, named by its URL (its record id when it has none)."""
    at, number = 0, 0
    while at < len(data):
        start = _RECORD_START.match(data, at)
        if start is None:
            if not data[at:].strip():
                return
            raise ExtractionError(f"WARC record {number + 1} does not start with a WARC version line (byte {at})",
                                  status="corrupt")
        split = _BLANK.search(data, start.end())
        if split is None:
            raise ExtractionError(f"WARC record {number + 1} cut short in its headers", status="corrupt")
        number += 1
        headers = _headers(data[start.end():split.start()])
        try:
            length = int(headers.get(b"content-length", b""))
        except ValueError as exc:
            raise ExtractionError(f"WARC record {number} without a Content-Length", status="corrupt") from exc
        block = data[split.end():split.end() + length]
        if len(block) < length:
            raise ExtractionError(f"WARC record {number} cut short: {length} bytes declared, {len(block)} remain",
                                  status="corrupt")
        at = split.end() + length
        kind = headers.get(b"warc-type", b"").lower()
        uri = (headers.get(b"warc-target-uri") or headers.get(b"warc-record-id") or b"").decode(
            "utf-8", "replace").strip("<>") or f"record {number}"
        if kind in _PAGES and block and not uri.startswith(_TOOLS_OWN):
            http = kind == b"response" and b"application/http" in headers.get(b"content-type", b"").lower()
            member = _http_body(block, uri) if http else Member(uri, block)
            if member.data is not None:
                budget.take(len(member.data), f"page {uri!r}")
            yield member
        while at < len(data) and data[at] in b"\r\n":  # the blank lines between records
            at += 1


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="warc", mimes=MIMES, priority=50, unpack=unpack_warc)]
