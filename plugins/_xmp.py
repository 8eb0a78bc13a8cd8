"""XMP packets (Adobe's Extensible Metadata Platform): the title, description, keywords and headline a
picture or a PDF carries in RDF, read by the pictures' and the PDFs' readers alike."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.core.errors import ExtractionError
from scanner_plugins._xml import local_name, parse_xml

# dc:title, dc:description, dc:subject (keywords), pdf:Keywords, photoshop:Headline: free text; not dc:creator,
# xmp:CreatorTool, dates, identifiers
_FIELDS = {"title", "description", "subject", "Keywords", "Headline"}
_START, _END = b"<x:xmpmeta", b"</x:xmpmeta>"
MAX_PACKETS = 64  # a PDF holds one for itself and one per picture that kept its own


def xmp_texts(packet: bytes) -> Iterator[str]:
    """The free text of one packet, a value at a time ("" never); nothing from a malformed one."""
    try:
        root = parse_xml(packet.strip(b"\0 \r\n\t"), "XMP")
    except ExtractionError:
        return
    for node in root.iter():
        if local_name(node.tag) in _FIELDS:
            yield from (text.strip() for text in node.itertext() if text.strip())


def xmp_packets(data: bytes) -> Iterator[bytes]:
    """The packets written as they are among a file's bytes (the XMP specification asks writers to leave a
    PDF's metadata stream unfiltered so that any tool can find it so); a compressed one is not found."""
    at = 0
    for _ in range(MAX_PACKETS):
        start = data.find(_START, at)
        if start < 0:
            return
        end = data.find(_END, start)
        if end < 0:
            return
        at = end + len(_END)
        yield data[start:at]
