"""Plain text in any common encoding (BOM, BOM-less UTF-16, UTF-8, legacy code pages), and JSON with its
strings' escapes undone."""

from __future__ import annotations

import json
import re

from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import NOTEBOOK_MIME, SVG_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "text"
JSON_NAME = "json"
JSON_MIMES = ("application/json", "application/x-ndjson")
# a JSON string literal, from its quote to its closing one, or to its line's end when it has none (a
# backslash there included): possessive, and matched whenever a quote starts it, so each character is read
# once whatever the file holds
_STRING = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+(?:"|\\?(?=\n)|\\?\Z)')


def extract_text(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Decode; line ends become \\n so offsets do not depend on the writer's OS.

    Also registered for application/octet-stream, so unknown bytes get a precise
    status ("only NUL bytes", "binary content") instead of a bare "unsupported", and for the formats whose
    own reader gives way to this one when a file does not parse (a damaged notebook, SVG drawing or XML
    document): it keeps every word of it.
    """
    text, encoding = decode_text(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Extracted(text=text, extractor=NAME, meta={"encoding": encoding})


def _unescaped(literal: re.Match[str]) -> str:
    written = literal.group()
    if "\\" not in written or len(written) < 2 or not written.endswith('"'):
        return written
    try:
        return f'"{json.loads(written)}"'
    except ValueError:  # an escape JSON does not have (`\x41`): as written
        return written


def extract_json(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """The text, each string's escapes undone (`\\u00e9`, `\\n`, `\\"`), JSON's structure kept.

    Python's `json.dump` writes every non-ASCII character as an escape by default, and a string's line breaks
    as `\\n`: read as written, `caf\\u00e9` is the words "caf" and "u00e9", and a chat export's or a
    translation file's French, Russian or Chinese matched nothing. Nothing else changes, so a file without
    escapes reads exactly as plain text; a file that is not valid JSON (JSON Lines, a cut-off export) is
    read the same way, string by string.
    """
    result = extract_text(data, mime, limits)
    if "\\" not in result.text:
        return Extracted(text=result.text, extractor=JSON_NAME, meta=result.meta)
    return Extracted(text=_STRING.sub(_unescaped, result.text), extractor=JSON_NAME,
                     meta={**result.meta, "json_escapes": "undone"})


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [
        Extractor(
            name=NAME,
            mimes=("text/", "application/xml", "application/javascript",
                   "application/octet-stream", NOTEBOOK_MIME, SVG_MIME),
            priority=10,
            extract=extract_text,
            verbatim=True,
        ),
        Extractor(name=JSON_NAME, mimes=JSON_MIMES, priority=20, extract=extract_json, verbatim=True),
    ]
