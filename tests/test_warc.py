"""Web archives (WARC): each page a crawl kept is a member named by its URL, its HTTP encodings undone. Before,
a WARC was text: record and HTTP headers and markup were indexed as words, and a page sent gzip-compressed or
in chunks as bytes that matched nothing. Archives written here by the format's rules (ISO 28500), and by
`wget --warc-file` from a local web server when wget is installed."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import threading
import zlib
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from carriers import CARRIERS
from corpus import prose

from scanner.core.model import TextStatus
from scanner.sources.extract import detect_mime, extract_file
from scanner.sources.plugins import make_plugin_manager


def record(kind: str, uri: str, block: bytes, content_type: str = "application/http; msgtype=response") -> bytes:
    identity = zlib.crc32(f"{kind} {uri}".encode())
    head = (f"WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2026-11-29T10:00:00Z\r\n"
            f"WARC-Record-ID: <urn:uuid:{identity:032x}>\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(block)}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def http(body: bytes, *headers: str) -> bytes:
    return ("HTTP/1.1 200 OK\r\n" + "".join(f"{h}\r\n" for h in headers) + "\r\n").encode() + body


def chunked(body: bytes, size: int = 100) -> bytes:
    parts = [body[at:at + size] for at in range(0, len(body), size)]
    return b"".join(b"%x\r\n" % len(part) + part + b"\r\n" for part in parts) + b"0\r\n\r\n"


PAGE = prose(91, 300)
NOTE = prose(92, 120)


def crawl() -> list[bytes]:
    html = f"<html><body><h1>Minutes</h1><p>{PAGE}</p></body></html>".encode()
    return [
        record("warcinfo", "", b"software: test\r\n", "application/warc-fields"),
        record("request", "https://example.org/minutes", b"GET /minutes HTTP/1.1\r\nHost: example.org\r\n\r\n",
               "application/http; msgtype=request"),
        record("response", "https://example.org/minutes",  # gzip-compressed, then sent in chunks
               http(chunked(gzip.compress(html)), "Content-Type: text/html", "Content-Encoding: gzip",
                    "Transfer-Encoding: chunked")),
        record("resource", "https://example.org/note.txt", NOTE.encode(), "text/plain"),
        record("revisit", "https://example.org/minutes", b"", "application/http; msgtype=response"),
        record("response", "dns:example.org", b"20261129100000\nexample.org. 300 IN A 192.0.2.1\n", "text/dns"),
    ]


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager()


def _pages(path: Path, pm) -> dict[str, tuple[TextStatus, str]]:
    def walk(result):
        for found, got in result.members:
            yield found.path.split("!/")[-1], got
            yield from walk(got)
    return {name: (got.status, got.text) for name, got in walk(extract_file(path, pm)[1])
            if got.status is not TextStatus.CONTAINER}


def test_each_page_of_a_crawl_is_a_member_with_its_encodings_undone(pm, tmp_path: Path) -> None:
    data = b"".join(crawl())
    assert detect_mime(data) == "application/warc"
    (tmp_path / "site.warc").write_bytes(data)
    pages = _pages(tmp_path / "site.warc", pm)
    assert list(pages) == ["https://example.org/minutes", "https://example.org/note.txt"]  # no request, DNS
    status, text = pages["https://example.org/minutes"]
    assert status is TextStatus.OK and text.startswith("Minutes") and " ".join(PAGE.split()) in " ".join(text.split())
    assert pages["https://example.org/note.txt"] == (TextStatus.OK, NOTE)
    compressed = b"".join(gzip.compress(one) for one in crawl())  # .warc.gz: a gzip member a record
    (tmp_path / "site.warc.gz").write_bytes(compressed)
    assert _pages(tmp_path / "site.warc.gz", pm) == pages


def test_a_cut_crawl_keeps_its_pages_before_the_cut_and_says_so(pm, tmp_path: Path) -> None:
    data = b"".join(crawl()[:4])
    (tmp_path / "cut.warc").write_bytes(data[:-40])
    _, result = extract_file(tmp_path / "cut.warc", pm)
    assert result.status is TextStatus.CORRUPT
    assert result.reason.startswith("WARC record 4 cut short: ") and result.reason.endswith(
        "; the 1 member(s) before it were read")
    assert [found.path.split("!/")[-1] for found, _ in result.members] == ["https://example.org/minutes"]


@pytest.mark.skipif(shutil.which("wget") is None, reason="wget is not installed")
def test_a_crawl_written_by_wget(pm, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    leak = prose(93, 250)
    (site / "index.html").write_text(f"<html><body><p>{leak}</p><a href='speech.txt'>speech</a></body></html>")
    (site / "speech.txt").write_text(NOTE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        done = subprocess.run(["wget", "-q", "--warc-file=crawl", "--no-warc-compression", "-r", "-l", "1",
                               f"{url}/index.html"], cwd=tmp_path, capture_output=True, timeout=60, check=False)
    finally:
        server.shutdown()
    assert (tmp_path / "crawl.warc").exists(), done.stderr
    pages = _pages(tmp_path / "crawl.warc", pm)
    assert " ".join(leak.split()) in " ".join(pages[f"{url}/index.html"][1].split())
    assert pages[f"{url}/speech.txt"] == (TextStatus.OK, NOTE)
    assert not any(name.startswith("metadata:") for name in pages)  # wget's arguments and log are not pages


def test_the_warc_carrier_holds_the_leak_in_a_compressed_page(pm, tmp_path: Path) -> None:
    leak = prose(94, 200)
    carrier = CARRIERS["warc"](leak, 0)
    (tmp_path / carrier.filename).write_bytes(carrier.data)
    texts = " ".join(text for _, text in _pages(tmp_path / carrier.filename, pm).values())
    assert " ".join(leak.split()[:15]) in " ".join(texts.split())
