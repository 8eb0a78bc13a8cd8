"""PDF text through PDFium (pypdfium2; imported only when a PDF is read).

PDFium is not thread-safe: call this from one thread at a time (or use processes).
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.limits import ExtractLimits, decrypted
from scanner.sources.plugins import Extractor, Member, Unpacker, hookimpl
from scanner_plugins._pdf import (
    MIN_LAYER_CHARS,
    check_pdf,
    layer_chars,
    pdf_result,
    properties_text,
    with_annotations,
    with_properties,
)

NAME = "pdfium"
PRIORITY = 40  # default: fastest, best recall on the corpus (docs/EXTRACTION.md)


def extract_pdfium(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Text of every page as PDFium lays it out, with page offsets; pages without a text layer by OCR."""
    check_pdf(data)
    document, opened_with = _open(data, limits)
    pages: list[str] = []
    notes: list[tuple[str, str]] = []
    fields_seen: set[str] = set()
    pictures = _Pictures(limits)
    chars = 0
    try:
        document.init_forms()  # before any page is loaded: a form's field values are read with it
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_bounded()
                    if layer_chars(text) >= MIN_LAYER_CHARS:  # a scanned page is OCRed whole (`pdf_result`)
                        pictures.read(page, textpage, index)
                finally:
                    textpage.close()
                comments, fields = _annotations(page, document.formenv, fields_seen)
                notes += [(f"the annotations of page {index + 1}", comments),
                          (f"the form fields of page {index + 1}", fields),
                          (f"the pictures of page {index + 1}", pictures.text.pop(index, ""))]
            finally:
                page.close()
            # PDFium marks a hyphen that ends a line as \x02 (and drops the
            # break): the word is joined, as a reader would read it.
            text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x02", "")
            pages.append(text)
            chars += len(text)
            if chars > limits.max_chars:
                break
        # scanned pages are OCRed from the open document
        result = pictures.told(with_annotations(pdf_result(NAME, pages, limits, document, pictures.clock), notes))
        result = with_properties(result, properties_text(document.get_metadata_dict(), data))
        return decrypted(result) if opened_with else result
    finally:
        document.close()


def _open(data: bytes, limits: ExtractLimits) -> tuple[Any, str]:
    """The PDF opened, and the password that opened it ("" when it needs none): each given one in turn."""
    import pypdfium2 as pdfium

    for password in ("", *limits.passwords):
        try:
            return pdfium.PdfDocument(data, password=password or None), password
        except pdfium.PdfiumError as exc:
            if "password" not in str(exc).lower():
                raise ExtractionError(f"unreadable PDF: {exc}", status="corrupt") from exc
    raise ExtractionError(limits.locked("encrypted PDF", "a user password is needed"), status="encrypted")


@dataclass
class _Pictures:
    """The pictures on a PDF's pages with a text layer, read by OCR (`ocr.pdf_page_pictures`): a screenshot of
    a page pasted into a report is pixels, in no text layer. Their text becomes a marked region a page
    ("the pictures of page 3"); pictures left unread (OCR off, the file's OCR budget spent, a failure) are
    said in the result's meta, and past the budget the file is read in part."""

    limits: ExtractLimits
    text: dict[int, str] = field(default_factory=dict)  # page index -> its pictures' text, until taken
    read_pages: list[int] = field(default_factory=list)
    unread: dict[int, int] = field(default_factory=dict)  # page index -> pictures not read
    why_unread: str = ""
    failures: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)  # every OcrResult, for the mean confidence
    clock: Any = None

    def read(self, page: Any, textpage: Any, index: int) -> None:
        from scanner_plugins import ocr

        found = ocr.pdf_page_pictures(page, textpage)
        if not found:
            return
        why_not = ocr.ocr_unavailable(self.limits)
        if why_not is not None:
            self.unread[index] = len(found)
            self.why_unread = why_not
            return
        if self.clock is None:
            self.clock = ocr.OcrBudget.start(self.limits)
        results = ocr.ocr_pdf_pictures(found, self.limits, self.clock, len(self.results))
        self.results += [r for r in results if not r.unread]
        if any(r.unread for r in results):
            self.unread[index] = sum(r.unread for r in results)
            self.why_unread = self.clock.why
        self.failures += [f"page {index + 1}: {r.error}" for r in results if r.error]
        words = [r.text for r in results if r.text.strip()]
        if words:
            self.text[index] = "\n\n".join(words)
            self.read_pages.append(index)

    def told(self, result: Extracted) -> Extracted:
        """`result` with what became of its pictures in its meta; read in part when the budget left some."""
        from scanner_plugins import ocr

        meta = dict(result.meta)
        if self.read_pages:
            confidence = ocr.mean_confidence(self.results)
            meta["ocr_pictures"] = (_on_pages(self.read_pages)
                                    + (f", mean word confidence {confidence:.0f} %" if confidence is not None else ""))
        if self.failures:
            meta["ocr_pictures_failed"] = "; ".join(self.failures[:3]) + (
                f"; and {len(self.failures) - 3} more" if len(self.failures) > 3 else "")
        if not self.unread:
            return dataclasses.replace(result, meta=meta) if meta != result.meta else result
        count = sum(self.unread.values())
        said = f"{count} picture(s) on {_on_pages(self.unread)} not read: {self.why_unread}"
        meta["ocr_pictures_unread"] = said
        if self.clock is not None and result.status in (TextStatus.OK, TextStatus.OCR):  # the budget, not a choice
            return dataclasses.replace(result, status=TextStatus.PARTIAL, meta=meta,
                                       reason="; ".join(r for r in (result.reason, said) if r))
        return dataclasses.replace(result, meta=meta)


def _on_pages(indices: Iterable[int]) -> str:
    """0-based page indices as "page 3" or "pages 1-2, 5"."""
    from scanner_plugins import ocr

    numbers = sorted({i + 1 for i in indices})
    return f"{'page' if len(numbers) == 1 else 'pages'} {ocr.page_list(numbers)}"


def _annotations(page: Any, formenv: Any, fields_seen: set[str]) -> tuple[str, str]:
    """(comments, form field values) of a page, a line each. Neither is in the page's text layer: a sticky
    note, a highlight's comment or a text box drawn on the page (FreeText) is an annotation, and a filled-in
    field's value lives in the form; both were read nowhere. A link's text is its address and a popup's its
    parent's again: left out. A field shown on several pages is read once; ticks and radio buttons are not
    text."""
    import pypdfium2.raw as raw

    typed = (raw.FPDF_FORMFIELD_TEXTFIELD, raw.FPDF_FORMFIELD_COMBOBOX, raw.FPDF_FORMFIELD_LISTBOX)
    comments: list[str] = []
    fields: list[str] = []
    for number in range(raw.FPDFPage_GetAnnotCount(page.raw)):
        annotation = raw.FPDFPage_GetAnnot(page.raw, number)
        try:
            kind = raw.FPDFAnnot_GetSubtype(annotation)
            if kind == raw.FPDF_ANNOT_WIDGET and formenv is not None:
                name = _utf16(raw.FPDFAnnot_GetFormFieldName, formenv.raw, annotation)
                if raw.FPDFAnnot_GetFormFieldType(formenv.raw, annotation) in typed and (
                        not name or name not in fields_seen):  # fields without a name are each their own
                    fields_seen.add(name)
                    fields.append(_utf16(raw.FPDFAnnot_GetFormFieldValue, formenv.raw, annotation))
            elif kind not in (raw.FPDF_ANNOT_LINK, raw.FPDF_ANNOT_POPUP, raw.FPDF_ANNOT_WIDGET):
                comments.append(_utf16(raw.FPDFAnnot_GetStringValue, annotation, b"Contents"))
        finally:
            raw.FPDFPage_CloseAnnot(annotation)
    return _lines(comments), _lines(fields)


def _lines(texts: list[str]) -> str:
    return "\n".join(text.strip() for text in texts if text.strip())


def _utf16(call: Any, *args: Any) -> str:
    """A PDFium string getter's UTF-16LE value (asked for its length first)."""
    size = call(*args, None, 0)
    if size <= 2:
        return ""
    buffer = (ctypes.c_ushort * (size // 2))()
    call(*args, buffer, size)
    return bytes(buffer)[: size - 2].decode("utf-16-le", errors="replace")


def unpack_attachments(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """A PDF's attached files (its EmbeddedFiles, the reader's paper-clip panel: an invoice's XML, a report's
    sources): members of it, each read by the plugin for its type. No page shows their text; it was read
    nowhere. A PDF that cannot be opened has none here: its extraction says why."""
    import pypdfium2 as pdfium

    try:
        document, _ = _open(data, budget.limits)
    except ExtractionError:
        return
    try:
        for number in range(document.count_attachments()):
            attachment = document.get_attachment(number)
            name = attachment.get_name() or f"attachment {number + 1}"
            try:
                content = bytes(attachment.get_data())
            except pdfium.PdfiumError as exc:
                yield Member(name, None, "corrupt", f"attachment not readable: {exc}")
                continue
            budget.take(len(content), f"attachment {name!r}")
            yield Member(name, content)
    finally:
        document.close()


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=("application/pdf",), priority=PRIORITY, extract=extract_pdfium)]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [Unpacker(name="pdf-attachments", mimes=("application/pdf",), priority=50, unpack=unpack_attachments,
                     has_text=True)]
