"""Apple iWork documents (Pages, Numbers, Keynote since 2013): the text of their archives, carved.

A `.pages` file is a ZIP (or a folder) whose `Index/*.iwa` members hold the document as protocol buffers
in Snappy chunks (a zero byte and a 24-bit length, then raw Snappy: the format's community documentation,
obriensp/iWorkFileFormat). The ZIP is opened as any archive; each archive is typed by its first chunk
(`routing.looks_like_iwa`), inflated with cramjam (MIT), and its text carved from the protocol buffers'
bytes (`carve.carve_text`: runs that read as prose, a line each): no schema is needed to find a paragraph;
a string that does not read as prose (a label, a short table cell) is left out, as `meta["carved"]` says.
A ZIP's preview picture (`preview.jpg`) is a member too, read by OCR.
"""

from __future__ import annotations

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.carve import carve_text
from scanner.sources.extract.routing import IWA_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "iwork"
_HEADER = 4


def extract_iwa(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    chunks, cut = _chunks(data, limits.max_unzipped_bytes)
    inflated = b"".join(chunks)
    carved = carve_text(inflated)
    if not carved.text:
        return Extracted(text="", extractor=NAME, status=TextStatus.CORRUPT if cut else TextStatus.EMPTY,
                         reason=cut or "no prose in its protocol buffers")
    return Extracted(text=carved.text, extractor=NAME, status=TextStatus.PARTIAL if cut else TextStatus.OK,
                     reason=f"{cut}: what precedes it is read" if cut else "",
                     meta={"inflated": f"{len(inflated)} bytes from {len(data)}",
                           "carved": f"{carved.byte_runs} runs of prose carved from its protocol buffers; strings "
                                     "that are not prose (labels, short table cells) are not read"})


def _chunks(data: bytes, most: int) -> tuple[list[bytes], str]:
    """The archive's chunks inflated, at most `most` bytes in all, and why the reading stopped early ("" when
    it did not): a chunk cut short or damaged (`corrupt` when it is the first)."""
    import cramjam

    chunks: list[bytes] = []
    at = total = 0
    cut = ""
    while at + _HEADER <= len(data):
        kind, length = data[at], int.from_bytes(data[at + 1:at + _HEADER], "little")
        body = data[at + _HEADER:at + _HEADER + length]
        if kind != 0 or len(body) < length:
            cut = f"chunk {len(chunks) + 1} of the archive cut short or not a chunk"
            break
        try:
            chunk = bytes(cramjam.snappy.decompress_raw(body))
        except cramjam.DecompressionError as exc:
            cut = f"chunk {len(chunks) + 1} of the archive damaged: {exc}"
            break
        total += len(chunk)
        if total > most:
            raise ExtractionError(f"iWork archive inflates past {most} bytes", status="too_large")
        chunks.append(chunk)
        at += _HEADER + length
    if not chunks:
        raise ExtractionError(f"not an iWork archive: {cut or 'no Snappy chunk'}", status="corrupt")
    return chunks, cut


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=(IWA_MIME,), priority=50, extract=extract_iwa)]
