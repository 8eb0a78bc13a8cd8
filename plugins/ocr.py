"""Text of images and scanned PDF pages by OCR, through Tesseract (pytesseract and Pillow, imported only when an
image is read, so commands that never OCR pay nothing).

Tesseract is an optional program. Without it, or with `ExtractLimits.ocr` off, an image is `unsupported` and a
scanned PDF page keeps no text, and the reason says which of the two; nothing crashes. A scan extracts in worker
processes, so what Tesseract is installed is probed once a process (`functools.cache`, keyed by the command).
The PDF backends call `ocr_unavailable` and `ocr_pdf_pages` (through `scanner_plugins._pdf.pdf_result`), so
a page is read the same way whichever backend read the file.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import math
import os
import re
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._pdf import MIN_LAYER_CHARS, join_pages, layer_chars
from scanner_plugins._picture_metadata import PICTURE_METADATA_REGION, picture_metadata_text
from scanner_plugins._pillow import HEIF_MIMES, open_picture

NAME = "tesseract"
PRIORITY = 40
IMAGE_MIMES = ("image/png", "image/jpeg", "image/tiff", "image/gif", "image/webp", "image/bmp", "image/x-ms-bmp",
               "image/avif", *HEIF_MIMES)
PDF_DPI = 300  # what Tesseract reads best (its documentation: at least 300 dpi)
# seconds Tesseract may spend on one image or page; a 300 dpi page takes 0.5-5 s here (docs/EXTRACTION.md, "OCR")
PAGE_TIMEOUT = 60
PROBE_TIMEOUT = 10  # seconds for `tesseract --version` / `--list-langs`
BYTES_PER_PIXEL = 3  # an RGB pixel: what the pages of one file count against max_expanded_bytes
INSTALL_HINT = "apt install tesseract-ocr"
# Tesseract's OpenMP threads spin while they wait: on the 2-core dev box, under load, a page took 5-6x longer
# with them than with one thread (docs/EXTRACTION.md, "OCR"), and a scan already runs a worker per core.
# pytesseract runs Tesseract with this process's environment: the limit is set there for each call (unless the
# user set one) and removed after it.
THREAD_LIMIT = ("OMP_THREAD_LIMIT", "1")
_BLANK_SPREAD = 8  # a grayscale image whose darkest and lightest pixels differ less than this has no text



@dataclass(frozen=True)
class OcrBudget:
    """The OCR time one file may spend (`ExtractLimits.ocr_seconds`), from its first page on; the first page is
    always read, so a file past its budget still gives text."""

    seconds: float | None
    began: float

    @classmethod
    def start(cls, limits: ExtractLimits) -> "OcrBudget":
        return cls(limits.ocr_seconds, time.monotonic())

    def spent(self, pages_read: int) -> bool:
        return bool(pages_read) and self.seconds is not None and time.monotonic() - self.began > self.seconds

    @property
    def why(self) -> str:
        return budget_spent(self.seconds)


def budget_spent(seconds: float | None) -> str:
    """Why pages were left unread (the reason every budgeted OCR result gives)."""
    return f"the file's OCR time budget of {seconds:g} s was spent"

@contextlib.contextmanager
def _one_tesseract_thread() -> Iterator[None]:
    """The environment pytesseract hands Tesseract limits its threads for this call only (unless the user
    set a limit): nothing of it outlives the call."""
    name, value = THREAD_LIMIT
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


@dataclass(frozen=True)
class TesseractInfo:
    """The Tesseract a command runs: where it is, its version ("5.3.0") and installed language codes."""

    command: str
    path: str
    version: str
    languages: tuple[str, ...]


@dataclass(frozen=True)
class OcrResult:
    """What Tesseract read in one image or page.

    `confidence` is the mean of its word confidences (0-100; None without words). `blank`: nothing was drawn,
    so Tesseract was not run. `error` (with `error_status`, a TextStatus value) says why the page was not read.
    """

    text: str = ""
    words: int = 0
    confidence: float | None = None
    blank: bool = False
    error: str = ""
    error_status: str = ""
    seconds: float = 0.0
    unread: bool = False  # past the file's OCR time budget (`ExtractLimits.ocr_seconds`): not read at all


# --- what is installed -------------------------------------------------------------------------------------


def tesseract_command() -> str:
    """The command pytesseract runs (`pytesseract.pytesseract.tesseract_cmd`, "tesseract" on the PATH by default)."""
    import pytesseract

    return str(pytesseract.pytesseract.tesseract_cmd)


@functools.cache
def _probe(command: str) -> TesseractInfo | None:
    """Run `command --version` and `--list-langs` once a process; None when it cannot run."""
    try:
        version = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                                 check=False)
        langs = subprocess.run([command, "--list-langs"], capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                               check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if version.returncode != 0:
        return None
    first = (version.stdout or version.stderr).strip().splitlines()
    words = first[0].split() if first else []
    number = words[1] if len(words) > 1 and words[0].lower() == "tesseract" else "unknown"
    lines = (langs.stdout or langs.stderr).splitlines()
    languages = tuple(sorted(line.strip() for line in lines[1:] if line.strip() and " " not in line.strip()))
    return TesseractInfo(command=command, path=shutil.which(command) or command, version=number.lstrip("v"),
                         languages=languages)


def tesseract_info() -> TesseractInfo | None:
    """The installed Tesseract (None: not installed or not runnable)."""
    return _probe(tesseract_command())


def tesseract_version() -> str | None:
    """Tesseract's version ("5.3.0"), or None when it is not installed; cached per process."""
    info = tesseract_info()
    return info.version if info else None


OCR_LANGUAGE_CODES = re.compile(r"[a-z][a-z0-9_]*(?:\+[a-z][a-z0-9_]*)*")  # Tesseract's: "eng", "deu+fra", "chi_sim"


def languages_problem(languages: str) -> str | None:
    """Why `languages` cannot be read with (not Tesseract's codes joined by "+", or data Tesseract lacks), or
    None; asked before a scan, a check or a watch reads any file: a scanned Russian letter read with English
    data alone gives words that match nothing, so a language it lacks is an error, not a quiet fallback."""
    if not OCR_LANGUAGE_CODES.fullmatch(languages):
        return f"{languages!r}: Tesseract's language codes joined by '+' (eng+deu)"
    if tesseract_info() is None:
        return None  # said once as "Tesseract not found", and each picture says it was not read
    return ocr_unavailable(ExtractLimits(ocr_languages=languages))


def ocr_unavailable(limits: ExtractLimits) -> str | None:
    """Why OCR cannot run under `limits` ("OCR is off (--no-ocr)", "Tesseract is not installed ..."), or None."""
    if not limits.ocr:
        return "OCR is off (--no-ocr)"
    info = tesseract_info()
    if info is None:
        return f"Tesseract is not installed ({INSTALL_HINT})"
    missing = [lang for lang in limits.ocr_languages.split("+") if lang and lang not in info.languages]
    if missing:
        return (f"Tesseract has no language data for {', '.join(missing)} "
                f"(apt install {' '.join('tesseract-ocr-' + lang for lang in missing)})")
    return None


def max_pixels(limits: ExtractLimits) -> int:
    """The pixel cap of one image or page."""
    return max(1, limits.max_image_pixels)


# --- one image -----------------------------------------------------------------------------------------------


def check_pixels(width: int, height: int, limits: ExtractLimits, what: str = "image") -> None:
    """Refuse an image over the pixel cap before it is decoded (a decompression bomb is a few KB of PNG)."""
    cap = max_pixels(limits)
    if width * height > cap:
        raise ExtractionError(f"{what}: {width}x{height} pixels > the cap of {cap:,} (max_image_pixels)",
                              status="too_large")


def ocr_image(image: Any, limits: ExtractLimits, dpi: int | None = None) -> OcrResult:
    """Words of one PIL image by Tesseract (`image_to_data`: the words and their confidences in one run).

    Raises:
        ExtractionError: over the pixel cap (too_large), Tesseract missing (unsupported), over
            PAGE_TIMEOUT (timeout), or Tesseract failed (error).
    """
    import pytesseract

    check_pixels(image.width, image.height, limits)
    start = time.monotonic()
    gray = _grayscale(image)
    low, high = gray.getextrema()
    if high - low < _BLANK_SPREAD:
        return OcrResult(blank=True, seconds=time.monotonic() - start)
    config = f"--dpi {dpi}" if dpi and 50 <= dpi <= 2400 else ""
    try:
        with _one_tesseract_thread():
            data = pytesseract.image_to_data(gray, lang=limits.ocr_languages, config=config,
                                             output_type=pytesseract.Output.DICT, timeout=PAGE_TIMEOUT)
    except pytesseract.TesseractNotFoundError as exc:
        raise ExtractionError(f"Tesseract is not installed ({INSTALL_HINT})", status="unsupported") from exc
    except pytesseract.TesseractError as exc:
        raise ExtractionError(f"Tesseract failed: {exc.message or exc.status}", status="error") from exc
    except RuntimeError as exc:  # pytesseract's timeout_manager: "Tesseract process timeout"
        if "timeout" not in str(exc).lower():
            raise
        raise ExtractionError(f"Tesseract took over {PAGE_TIMEOUT} s", status="timeout") from exc
    text, confidences = _words(data)
    return OcrResult(text=text, words=len(confidences),
                     confidence=sum(confidences) / len(confidences) if confidences else None,
                     seconds=time.monotonic() - start)


def _grayscale(image: Any) -> Any:
    """8-bit grayscale, transparency over white (a transparent PNG's text is often black on nothing)."""
    from PIL import Image

    if image.mode == "L":
        return image.copy()
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):  # 16/32-bit scans: scale to 8 bits, not clip
        low, high = image.getextrema()
        span = (high - low) or 1
        return image.point(lambda v: (v - low) * 255 / span).convert("L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("L")
    return image.convert("L")


def _words(data: dict[str, list[Any]]) -> tuple[str, list[float]]:
    """Tesseract's TSV rows as text (a line per line, a blank line between paragraphs) and word confidences."""
    lines: list[str] = []
    confidences: list[float] = []
    line_key: tuple[int, ...] | None = None
    para_key: tuple[int, ...] | None = None
    current: list[str] = []
    for i, level in enumerate(data.get("level", ())):
        word = str(data["text"][i]).strip()
        if int(level) != 5 or not word:
            continue
        para = (int(data["page_num"][i]), int(data["block_num"][i]), int(data["par_num"][i]))
        line = (*para, int(data["line_num"][i]))
        if line != line_key and current:
            lines.append(" ".join(current))
            current = []
            if para != para_key:
                lines.append("")
        line_key, para_key = line, para
        current.append(word)
        try:
            confidence = float(data["conf"][i])
        except (TypeError, ValueError):
            continue
        if confidence >= 0:
            confidences.append(confidence)
    if current:
        lines.append(" ".join(current))
    return "\n".join(lines), confidences


# --- reasons and meta shared by images and PDFs ----------------------------------------------------------------


def page_list(numbers: Iterable[int]) -> str:
    """1-based page numbers as ranges: [1, 2, 3, 5] -> "1-3, 5"."""
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def mean_confidence(results: Iterable[OcrResult]) -> float | None:
    """The mean word confidence over several pages (each page weighted by its words)."""
    pairs = [(r.confidence, r.words) for r in results if r.confidence is not None and r.words]
    words = sum(w for _, w in pairs)
    return sum(c * w for c, w in pairs) / words if words else None


def ocr_meta(read: dict[int, OcrResult], limits: ExtractLimits) -> dict[str, str]:
    """meta of a result with OCR text: the OCRed page numbers (0-based keys), mean confidence, engine."""
    confidence = mean_confidence(read.values())
    return {
        "ocr_pages": page_list(i + 1 for i in read),
        "ocr_confidence": f"{confidence:.1f}" if confidence is not None else "",
        "ocr_engine": f"tesseract {tesseract_version() or 'unknown'}",
        "ocr_languages": limits.ocr_languages,
    }


def ocr_reason(read: dict[int, OcrResult], limits: ExtractLimits, of_pages: int | None = None) -> str:
    """"OCR (Tesseract 5.3.0, eng): 1 page, mean word confidence 91 %"."""
    confidence = mean_confidence(read.values())
    pages = f"{len(read)} page{'s' if len(read) != 1 else ''}"
    if of_pages is not None and of_pages != len(read):
        pages = f"{len(read)} of {of_pages} pages"
    mean = f"mean word confidence {confidence:.0f} %" if confidence is not None else "no word confidence"
    return f"OCR (Tesseract {tesseract_version() or 'unknown'}, {limits.ocr_languages}): {pages}, {mean}"


# --- images ------------------------------------------------------------------------------------------------------


class _KeptByContent:
    """The results of the last images read in this process, by their content's SHA-256: the same picture in
    many documents (a letterhead's logo in every report of a folder, a member of each, or drawn on each PDF's
    first page) is OCRed once a process. Only what OCR read whole is kept (an image's text, or none), never a
    timeout or a failure; a few hundred bytes each."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.results: collections.OrderedDict[tuple[bytes, Any], Any] = collections.OrderedDict()

    def get(self, content: bytes, how: Any) -> Any:
        key = (hashlib.sha256(content).digest(), how)
        found = self.results.get(key)
        if found is not None:
            self.results.move_to_end(key)
        return found

    def put(self, content: bytes, how: Any, result: Any) -> None:
        self.results[(hashlib.sha256(content).digest(), how)] = result
        if len(self.results) > self.size:
            self.results.popitem(last=False)


_images_read = _KeptByContent(512)  # image files and office documents' pictures: Extracted results
_pictures_read = _KeptByContent(512)  # pictures on PDF pages: OcrResults, by their pixels


def extract_image(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """Text of an image by OCR; every page of a TIFF, the first frame of other formats (an animation's
    frames repeat their text); then the words of its metadata (`picture_metadata_text`), a marked region."""
    metadata = picture_metadata_text(data)
    why_not = ocr_unavailable(limits)
    if why_not is not None:
        if not metadata:
            raise ExtractionError(f"image: {why_not}", status="unsupported")
        return _metadata_only(Extracted(text="", extractor=NAME, status=TextStatus.EMPTY, reason=f"image: {why_not}"),
                              metadata)
    kept = _images_read.get(data, (mime, limits))
    if kept is None:
        kept = _image_text(data, mime, limits)
        if kept.status in (TextStatus.OCR, TextStatus.EMPTY):
            _images_read.put(data, (mime, limits), kept)
    if kept.status is TextStatus.EMPTY:
        return _metadata_only(kept, metadata)
    return kept.with_regions([(PICTURE_METADATA_REGION, metadata)]) if metadata else kept


def _metadata_only(result: Extracted, metadata: str) -> Extracted:
    """An image whose pixels gave no text (or were not read) but whose metadata holds words: read in part."""
    if not metadata:
        return result
    return replace(result, status=TextStatus.PARTIAL, reason=f"{result.reason}; read: its metadata only"
                               ).with_regions([(PICTURE_METADATA_REGION, metadata)])


def _image_text(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    from PIL import Image

    with warnings.catch_warnings():
        # a hostile file's warnings (corrupt EXIF...) are no one's to read in a worker's stderr; the pixel cap is
        # the guard, and Pillow's own (a warning, then an error at twice its size) is made an error
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        results, skipped, why_skipped = _ocr_frames(data, mime, limits)
    if not results:
        raise ExtractionError(f"image: {skipped} pages not read: {why_skipped}", status="too_large")
    read = {i: r for i, r in results.items() if r.text.strip()}
    if not read:
        blank = all(r.blank for r in results.values())
        what = "the image" if len(results) == 1 else f"all {len(results)} pages"
        why = f"{what} {'is' if len(results) == 1 else 'are'} blank" if blank else f"OCR found no words in {what}"
        return Extracted(text="", extractor=NAME, status=TextStatus.EMPTY, reason=f"image: no text: {why}",
                         meta={"pages": str(len(results))})
    text, starts = join_pages([results[i].text for i in range(len(results))])
    meta = {"pages": str(len(results)), **ocr_meta(read, limits)}
    reason = ocr_reason(read, limits, len(results))
    if skipped:  # never silently: the pages left have no text, and the file says so
        meta["ocr_skipped"] = f"{skipped} more page(s) not read: {why_skipped}"
        return Extracted(text=text, extractor=NAME, status=TextStatus.PARTIAL, meta=meta,
                         reason=f"{reason}; {meta['ocr_skipped']}", page_starts=starts if len(results) > 1 else ())
    return Extracted(text=text, extractor=NAME, status=TextStatus.OCR, reason=reason,
                     page_starts=starts if len(results) > 1 else (), meta=meta)


def _ocr_frames(data: bytes, mime: str, limits: ExtractLimits) -> tuple[dict[int, OcrResult], int, str]:
    """OCR of each page (0-based) within the file's pixel and time budgets; how many pages were left, and why."""
    from PIL import Image, UnidentifiedImageError

    try:
        image = open_picture(data)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ExtractionError(f"image: decompression bomb: {exc}", status="too_large") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ExtractionError(f"image: unreadable {mime}: {exc}", status="corrupt") from exc
    results: dict[int, OcrResult] = {}
    with image:
        frames = getattr(image, "n_frames", 1) if mime.lower() == "image/tiff" else 1
        budget = max(1, limits.max_expanded_bytes // BYTES_PER_PIXEL)  # all the pages of one file together
        clock = OcrBudget.start(limits)
        for index in range(frames):
            if clock.spent(len(results)):
                return results, frames - index, clock.why
            try:
                if index:
                    image.seek(index)
                check_pixels(image.width, image.height, limits, f"image page {index + 1}" if frames > 1 else "image")
                budget -= image.width * image.height
                if budget < 0:
                    return results, frames - index, f"over the pixel budget (max_expanded_bytes / {BYTES_PER_PIXEL})"
                results[index] = ocr_image(image, limits, _dpi(image))
            except ExtractionError as exc:
                raise ExtractionError(exc.reason if exc.reason.startswith("image") else f"image: {exc.reason}",
                                      status=exc.status) from exc
            except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
                raise ExtractionError(f"image: decompression bomb: {exc}", status="too_large") from exc
            except (OSError, ValueError, SyntaxError, EOFError) as exc:
                raise ExtractionError(f"image: unreadable {mime} page {index + 1}: {exc}", status="corrupt") from exc
    return results, 0, ""


def _dpi(image: Any) -> int | None:
    """The resolution the file states (Tesseract guesses, often badly, without one)."""
    dpi = image.info.get("dpi")
    try:
        return round(float(dpi[0])) if dpi else None
    except (TypeError, ValueError, IndexError):
        return None


# --- scanned PDF pages ----------------------------------------------------------------------------------------


def ocr_pdf_page(page: Any, limits: ExtractLimits) -> OcrResult:
    """One pypdfium2 page rendered in grayscale at PDF_DPI (less when the page is too big for the pixel cap:
    a huge MediaBox is read coarser, not refused) and read by Tesseract."""
    width, height = page.get_size()  # points
    cap = max_pixels(limits)
    scale = min(PDF_DPI / 72, math.sqrt(cap / max(width * height, 1.0)))
    while scale > 0.01 and math.ceil(width * scale) * math.ceil(height * scale) > cap:  # PDFium rounds up
        scale *= 0.99
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        return ocr_image(bitmap.to_pil(), limits, dpi=round(scale * 72))
    finally:
        bitmap.close()


# A picture drawn smaller than this on its page (points, 1/72 inch) holds no line a reader could copy (an icon, a
# rule, a bullet), and one of fewer pixels is too coarse for Tesseract: neither is OCRed.
PICTURE_MIN_POINTS = (100.0, 30.0)
PICTURE_MIN_PIXELS = (200, 40)


def picture_size(data: bytes) -> tuple[int, int] | None:
    """A picture's (width, height) by its header, or None when Pillow cannot open it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            width, height = open_picture(data).size  # the header only
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None
    return width, height


def too_small_to_read(size: tuple[int, int] | None) -> bool:
    """Whether a picture of this `picture_size` has fewer pixels than PICTURE_MIN_PIXELS (an icon, a bullet, a
    rule): no line of text to read in it. A picture Pillow cannot open (None) is not: its reader says why."""
    return size is not None and (size[0] < PICTURE_MIN_PIXELS[0] or size[1] < PICTURE_MIN_PIXELS[1])


def worth_reading(data: bytes, size: tuple[int, int] | None) -> bool:
    """Whether a picture inside a document is one of its members: large enough to hold a line, or holding words
    in its metadata (an icon's pixels hold none, its caption may)."""
    return not too_small_to_read(size) or bool(picture_metadata_text(data))


def pdf_page_pictures(page: Any, textpage: Any) -> list[Any]:
    """The pictures of a page with a text layer that OCR should read: drawn large enough to hold a line, with
    pixels enough, and under no text of the layer (a searchable scan's page image lies under its OCR layer,
    which is read already). A screenshot of a page pasted into a report is such a picture."""
    import pypdfium2.raw as raw

    found = []
    for picture in page.get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        left, bottom, right, top = picture.get_bounds()
        width, height = picture.get_px_size()
        if (right - left < PICTURE_MIN_POINTS[0] or top - bottom < PICTURE_MIN_POINTS[1]
                or width < PICTURE_MIN_PIXELS[0] or height < PICTURE_MIN_PIXELS[1]):
            continue
        if layer_chars(textpage.get_text_bounded(left, bottom, right, top)) < MIN_LAYER_CHARS:
            found.append(picture)
    return found


def ocr_pdf_pictures(pictures: Sequence[Any], limits: ExtractLimits, clock: OcrBudget, read_before: int
                     ) -> list[OcrResult]:
    """OCR of a page's pictures (`pdf_page_pictures`) at their own pixels, within the file's budget `clock`
    (`read_before`: the file's pictures read already; the first is always read; one read before in this process
    costs none of it)."""
    import pypdfium2 as pdfium

    out: list[OcrResult] = []
    for picture in pictures:
        try:
            width, height = picture.get_px_size()
            check_pixels(width, height, limits, "picture")
            # Pillow's image views the bitmap's buffer: the bitmap is held until the OCR is done, then freed by
            # pypdfium2's finalizer (it warns against closing a picture's bitmap by hand)
            bitmap = picture.get_bitmap(render=True)  # its masks applied (a transparent screenshot), at its own pixels
            image = bitmap.to_pil()
            pixels, how = image.tobytes(), (image.mode, image.size, limits)
            result = _pictures_read.get(pixels, how)
            if result is None and clock.spent(read_before + len(out)):
                result = OcrResult(unread=True)
            elif result is None:
                result = ocr_image(image, limits)
                if not result.error:
                    _pictures_read.put(pixels, how, result)
            out.append(result)
            del image, bitmap
        except ExtractionError as exc:
            out.append(OcrResult(error=exc.reason, error_status=exc.status))
        except (pdfium.PdfiumError, ValueError, OSError) as exc:
            out.append(OcrResult(error=f"cannot decode the picture: {exc}", error_status="corrupt"))
    return out


def ocr_pdf_pages(source: bytes | Any, indices: Sequence[int], limits: ExtractLimits,
                  clock: OcrBudget | None = None, password: str = "") -> dict[int, OcrResult]:
    """OCR of the pages `indices` (0-based) of a PDF: its bytes (opened with `password` when one opened it) or
    an open `pypdfium2.PdfDocument` (which stays open), within the file's budget `clock` (begun here unless its
    pictures began it: one budget a file). A page that cannot be rendered or read gets an `error`; the others
    are still read."""
    import pypdfium2 as pdfium

    own = isinstance(source, (bytes, bytearray))
    document: Any
    try:
        document = pdfium.PdfDocument(bytes(source), password=password or None) if own else source
    except pdfium.PdfiumError as exc:
        return {i: OcrResult(error=f"cannot render the page: {exc}", error_status="corrupt") for i in indices}
    out: dict[int, OcrResult] = {}
    clock = clock or OcrBudget.start(limits)
    try:
        for index in indices:
            if clock.spent(len(out)):
                out[index] = OcrResult(unread=True)  # the budget is spent (the first page is always read)
                continue
            try:
                page = document[index]
            except (pdfium.PdfiumError, IndexError) as exc:
                out[index] = OcrResult(error=f"cannot render the page: {exc}", error_status="corrupt")
                continue
            try:
                out[index] = ocr_pdf_page(page, limits)
            except ExtractionError as exc:
                out[index] = OcrResult(error=exc.reason, error_status=exc.status)
            except pdfium.PdfiumError as exc:
                out[index] = OcrResult(error=f"cannot render the page: {exc}", error_status="corrupt")
            finally:
                page.close()
    finally:
        if own:
            document.close()
    return out


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=IMAGE_MIMES, priority=PRIORITY, extract=extract_image)]
