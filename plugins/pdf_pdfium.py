"""PDF text through PDFium (pypdfium2; imported only when a PDF is read).

PDFium is not thread-safe: call this from one thread at a time (or use processes).
"""

from __future__ import annotations

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._pdf import check_pdf, pdf_result

NAME = "pdfium"
PRIORITY = 40  # default: fastest, best recall on the corpus (docs/EXTRACTION.md)


def extract_pdfium(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Text of every page as PDFium lays it out, with page offsets; pages without a text layer by OCR."""
    check_pdf(data)
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise ExtractionError("encrypted PDF: a user password is needed", status="encrypted") from exc
        raise ExtractionError(f"unreadable PDF: {exc}", status="corrupt") from exc
    pages: list[str] = []
    chars = 0
    try:
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_bounded()
                finally:
                    textpage.close()
            finally:
                page.close()
            # PDFium marks a hyphen that ends a line as \x02 (and drops the
            # break): the word is joined, as a reader would read it.
            text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x02", "")
            pages.append(text)
            chars += len(text)
            if chars > limits.max_chars:
                break
        return pdf_result(NAME, pages, limits, document)  # scanned pages are OCRed from the open document
    finally:
        document.close()


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("application/pdf",), priority=PRIORITY, extract=extract_pdfium)]
