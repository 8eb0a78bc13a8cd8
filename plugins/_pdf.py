"""Checks and helpers shared by the PDF backends (no PDF library imported here; OCR only for scanned pages)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import PROPERTIES_REGION
from scanner_plugins._xmp import xmp_packets, xmp_texts

PAGE_BREAK = "\f"


def check_pdf(data: bytes) -> None:
    """Refuse what is not a whole PDF before a parser repairs it into partial text.

    Both pdfminer and PDFium rebuild a missing cross-reference table, so a
    truncated file would "succeed" with the text of its first pages only; the
    %%EOF marker near the end is the cheap, reliable sign of a whole file
    (150 of the 151 corpus PDFs have it in their last 2 KiB).
    """
    if b"%PDF-" not in data[:1024]:
        raise ExtractionError("not a PDF: no %PDF- header", status="corrupt")
    if b"%%EOF" not in data[-2048:]:
        raise ExtractionError("truncated PDF: no %%EOF marker at the end", status="corrupt")


def join_pages(pages: list[str]) -> tuple[str, tuple[int, ...]]:
    """Pages joined by form feeds, and the character offset where each page starts."""
    starts: list[int] = []
    offset = 0
    for i, page in enumerate(pages):
        starts.append(offset)
        offset += len(page) + (len(PAGE_BREAK) if i < len(pages) - 1 else 0)
    return PAGE_BREAK.join(pages), tuple(starts)


# A page whose text layer has fewer non-blank characters than this is read as a scanned page (an image of text,
# perhaps with a page number or a stamp in the layer): it is rendered and OCRed when OCR can run.
MIN_LAYER_CHARS = 16


def layer_chars(text: str) -> int:
    """Non-blank characters: how much text a page's layer (or part of it) holds."""
    return sum(not ch.isspace() for ch in text)


def pdf_result(name: str, pages: list[str], limits: ExtractLimits, source: Any, clock: Any = None,
               password: str = "") -> Extracted:
    """A backend's pages as its result, its scanned pages read by OCR (`scanner_plugins.ocr`) when it can run.

    `source` is what the pages are rendered from: the PDF's bytes, or the backend's open pypdfium2 document.
    A page's OCR text replaces its (almost empty) layer when it has more characters, so there is still one page
    start per page. The file is `ocr` when most of its text came from OCR, else `ok` with meta saying which pages
    were OCRed; with no text at all, the reason says why the scanned pages gave none (OCR off, no Tesseract,
    blank pages, OCR failed). `clock`: the file's OCR budget (`ocr.OcrBudget`) when its pictures began it.
    `password`: what opened the PDF (rendering its bytes needs it again).
    """
    meta = {"pages": str(len(pages))}
    scanned = [i for i, text in enumerate(pages) if layer_chars(text) < MIN_LAYER_CHARS]
    text, starts = join_pages(pages)
    if not scanned:
        return Extracted(text=text, extractor=name, page_starts=starts, meta=meta)
    from scanner_plugins import ocr

    from_layer = sum(layer_chars(page) for page in pages)
    why_not = ocr.ocr_unavailable(limits)
    if why_not is not None:
        if not from_layer:
            return Extracted(text="", extractor=name, status=TextStatus.EMPTY, meta=meta,
                             reason=f"no text layer: scanned pages; {why_not}")
        meta |= {"scanned_pages": ocr.page_list(i + 1 for i in scanned),
                 "ocr": f"pages with almost no text layer not read: {why_not}"}
        return Extracted(text=text, extractor=name, page_starts=starts, meta=meta)

    results = ocr.ocr_pdf_pages(source, scanned, limits, clock, password)
    unread = sorted(i for i, r in results.items() if r.unread)
    spent = ocr.budget_spent(limits.ocr_seconds)
    # a page whose few characters are all it shows ("Hello World") keeps them: OCR must add to the layer
    read = {i: r for i, r in results.items() if layer_chars(r.text) > layer_chars(pages[i])}
    failed = {i: r for i, r in results.items() if r.error}
    if failed:
        meta["ocr_failed"] = "; ".join(f"page {i + 1}: {r.error}" for i, r in sorted(failed.items())[:3]) + (
            f"; and {len(failed) - 3} more" if len(failed) > 3 else "")
    if not read:
        if from_layer:  # short pages, and OCR found no more on them
            return Extracted(text=text, extractor=name, page_starts=starts, meta=meta)
        if failed:
            first = failed[min(failed)]
            return Extracted(text="", extractor=name, status=TextStatus(first.error_status or "error"), meta=meta,
                             reason=f"no text layer: scanned pages; OCR failed: {meta['ocr_failed']}")
        if unread:
            return Extracted(text="", extractor=name, status=TextStatus.TIMEOUT, meta=meta,
                             reason=f"no text layer: scanned pages; {len(unread)} not read: {spent}")
        why = "the scanned pages are blank" if all(r.blank for r in results.values()) else "OCR found no words"
        return Extracted(text="", extractor=name, status=TextStatus.EMPTY, meta=meta,
                         reason=f"no text layer: scanned pages; {why}")
    text, starts = join_pages([read[i].text if i in read else page for i, page in enumerate(pages)])
    ocr_chars = sum(layer_chars(r.text) for r in read.values())
    from_layer -= sum(layer_chars(pages[i]) for i in read)
    meta |= ocr.ocr_meta(read, limits)
    reason = ocr.ocr_reason(read, limits, len(pages))
    if unread:  # never silently: the pages past the OCR budget have no text, and the file says so
        meta["ocr_unread"] = ocr.page_list(i + 1 for i in unread)
        return Extracted(text=text, extractor=name, status=TextStatus.PARTIAL, page_starts=starts, meta=meta,
                         reason=f"{reason}; {len(unread)} more scanned page(s) not read: {spent} "
                                f"(pages {meta['ocr_unread']})")
    if ocr_chars > from_layer:
        return Extracted(text=text, extractor=name, status=TextStatus.OCR, reason=reason, page_starts=starts,
                         meta=meta)
    meta["ocr"] = f"{reason}; most text is from the text layer"
    return Extracted(text=text, extractor=name, page_starts=starts, meta=meta)


PDF_PROPERTIES = ("Title", "Subject", "Keywords")  # the Info dictionary's free text (not names, tools, dates)


def properties_text(info: Mapping[str, str], data: bytes) -> str:
    """A PDF's document properties, a line a value, each once: `PDF_PROPERTIES` of its Info dictionary, then
    the free text of its XMP packets (the document's, which PDF 2.0 keeps instead of the Info dictionary, and
    its pictures'; `_xmp.xmp_packets`)."""
    values = [str(info.get(key) or "") for key in PDF_PROPERTIES]
    values += [text for packet in xmp_packets(data) for text in xmp_texts(packet)]
    lines = dict.fromkeys(" ".join(value.split()) for value in values)
    return "\n".join(line for line in lines if any(ch.isalpha() for ch in line))


def with_properties(result: Extracted, text: str) -> Extracted:
    """`result` with its document properties after everything else, a marked region, when its pages or
    notes gave text: properties alone are no reading of a scanned PDF (its status says why it has none)."""
    if not text or not result.status.has_text:
        return result
    return result.with_regions([(PROPERTIES_REGION, text)])


def with_annotations(result: Extracted, notes: list[tuple[str, str]]) -> Extracted:
    """`result` with a PDF's annotations and form fields after its pages, as marked regions. A file whose
    pages gave no text (scanned, not OCRed) but whose fields hold some is read in part, not empty."""
    if not any(text for _, text in notes) or not (result.status.has_text or result.status is TextStatus.EMPTY):
        return result  # a PDF whose pages timed out keeps that status, and no text
    if result.status is TextStatus.EMPTY:
        return dataclasses.replace(result, status=TextStatus.PARTIAL,
                                   reason=f"{result.reason}; read: its annotations and form fields only"
                                   ).with_regions(notes)
    return result.with_regions(notes)
