"""PDF text through pdfminer.six (pure Python; imported only when a PDF is read)."""

from __future__ import annotations

import io
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits, decrypted
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._pdf import check_pdf, pdf_result, properties_text, with_properties

NAME = "pdfminer"
PRIORITY = 30  # fallback: 27x slower than PDFium on the corpus (docs/EXTRACTION.md)


def extract_pdfminer(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Text of every page in reading order (LAParams defaults), with page offsets; pages without a text layer
    by OCR."""
    check_pdf(data)
    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    document = None
    for password in ("", *limits.passwords):  # an owner password alone locks nothing a reader needs
        parser = PDFParser(io.BytesIO(data))
        try:
            document = PDFDocument(parser, password=password)
            break
        except PDFPasswordIncorrect:
            continue
        except PDFEncryptionError as exc:
            raise ExtractionError(f"encrypted PDF: {exc}", status="encrypted") from exc
    if document is None:
        raise ExtractionError(limits.locked("encrypted PDF", "a user password is needed"), status="encrypted")
    opened_with = password
    resources = PDFResourceManager(caching=True)
    out = io.StringIO()
    device = TextConverter(resources, out, laparams=LAParams())
    interpreter = PDFPageInterpreter(resources, device)
    pages: list[str] = []
    chars = 0
    try:
        for page in PDFPage.create_pages(document):
            out.seek(0)
            out.truncate()
            interpreter.process_page(page)
            text = out.getvalue().rstrip("\f")
            pages.append(text)
            chars += len(text)
            if chars > limits.max_chars:
                break
    finally:
        device.close()
    result = pdf_result(NAME, pages, limits, data, password=opened_with)  # scanned pages: PDFium and OCR
    result = with_properties(result, properties_text(_info(document), data))
    return decrypted(result) if opened_with else result


def _info(document: Any) -> dict[str, str]:
    """The document's Info dictionary, its text values decoded (PDFDocEncoding or UTF-16) as PDFium gives them."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    info: dict[str, str] = {}
    for entries in document.info:
        for key, value in entries.items():
            value = resolve1(value)
            if isinstance(value, bytes):
                info[key] = decode_text(value)
            elif isinstance(value, str):
                info[key] = value
    return info


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("application/pdf",), priority=PRIORITY, extract=extract_pdfminer)]
