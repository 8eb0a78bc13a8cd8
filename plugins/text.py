"""Plain text in any common encoding (BOM, BOM-less UTF-16, UTF-8, legacy code pages)."""

from __future__ import annotations

from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import NOTEBOOK_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "text"


def extract_text(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Decode; line ends become \\n so offsets do not depend on the writer's OS.

    Also registered for application/octet-stream, so unknown bytes get a precise
    status ("only NUL bytes", "binary content") instead of a bare "unsupported", and for notebooks, whose
    reader gives way to this one when the file is no valid notebook (it keeps every word of a damaged one).
    """
    text, encoding = decode_text(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Extracted(text=text, extractor=NAME, meta={"encoding": encoding})


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [
        Extractor(
            name=NAME,
            mimes=("text/", "application/json", "application/xml", "application/javascript",
                   "application/octet-stream", NOTEBOOK_MIME),
            priority=10,
            extract=extract_text,
            verbatim=True,
        )
    ]
