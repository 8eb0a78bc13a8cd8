"""Checks and helpers shared by the PDF backends (no PDF library imported here)."""

from __future__ import annotations

from scanner.core.errors import ExtractionError

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
