"""OCR (issue 18): images and image-only PDF pages read by Tesseract, and every way OCR cannot run said plainly.

The images are drawn here (Pillow, a TrueType font of the machine), so the expected text is known exactly. Tests
that run Tesseract skip when it is not installed; those that simulate its absence always run.
"""

from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from clirun import cli_env, run_cli
from pdfgen import picture_pdf_bytes, text_pdf_bytes

from scanner.core.model import TextStatus
from scanner.index import Index
from scanner.sources.extract import extract_bytes
from scanner.sources.extract.routing import detect_mime
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import choose_extractor, make_plugin_manager
from scanner_plugins import ocr

HAVE_TESSERACT = ocr.tesseract_version() is not None
needs_tesseract = pytest.mark.skipif(not HAVE_TESSERACT, reason="Tesseract is not installed")

SENTENCE = "The quick brown fox jumps over the lazy dog near the quiet river bank."
PARAGRAPH = (
    "Forensic examiners compare documents to find passages that were copied without credit. "
    "A scanned page holds no text layer, so its words must be read back from the picture by optical "
    "character recognition before any comparison can begin. The scanner renders each such page, "
    "reads it with Tesseract and indexes the words it finds together with their mean confidence."
)
FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
         "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf")


@pytest.fixture(scope="module")
def pm() -> Any:
    return make_plugin_manager()


def _font(size: int) -> Any:
    from PIL import ImageFont

    for path in FONTS:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


def page_image(text: str, width: int = 2000, size: int = 40, mode: str = "L") -> Any:
    """`text` drawn in black on white, wrapped to the width, with margins (a clean scan)."""
    from PIL import Image, ImageDraw

    font = _font(size)
    lines: list[str] = []
    for word in text.split():
        if lines and font.getlength(lines[-1] + " " + word) < width - 160:
            lines[-1] += " " + word
        else:
            lines.append(word)
    step = int(size * 1.5)
    image = Image.new(mode, (width, 160 + step * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((80, 80 + i * step), line, font=font, fill="black")
    return image


def image_bytes(image: Any, fmt: str, **options: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt, **options)
    return buf.getvalue()


def scanned_pdf(*texts: str) -> bytes:
    """An image-only PDF (Pillow writes each image as a page, no text layer), one page per text, at 200 dpi."""
    images = [page_image(t, width=1700, size=36) for t in texts]
    return image_bytes(images[0], "PDF", resolution=200, save_all=True, append_images=images[1:])


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def word_accuracy(reference: str, found: str) -> float:
    """1 - word-level edit distance / reference words."""
    from rapidfuzz.distance import Levenshtein

    ref = words(reference)
    return 1 - Levenshtein.distance(ref, words(found)) / len(ref)


# --- images ----------------------------------------------------------------------------------------------------


@needs_tesseract
class TestImages:
    def test_the_image_extractor_is_registered(self, pm: Any) -> None:
        for mime in ocr.IMAGE_MIMES:
            chosen = choose_extractor(pm, mime)
            assert chosen is not None and chosen.name == "tesseract"

    def test_a_clean_png_is_read_word_for_word(self, pm: Any) -> None:
        data = image_bytes(page_image(PARAGRAPH, mode="RGB"), "PNG")
        assert detect_mime(data) == "image/png"
        result = extract_bytes(data, "image/png", pm)
        assert result.status is TextStatus.OCR and TextStatus(result.status).has_text
        assert word_accuracy(PARAGRAPH, result.text) >= 0.9, result.text
        assert result.extractor == "tesseract"
        assert re.fullmatch(r"OCR \(Tesseract [\d.]+, eng\): 1 page, mean word confidence \d+ %", result.reason)
        assert 50 < float(result.meta["ocr_confidence"]) <= 100
        assert result.meta["ocr_pages"] == "1"
        assert result.meta["ocr_engine"] == f"tesseract {ocr.tesseract_version()}"

    # HEIF: a phone's photograph (an iPhone saves HEIC), written by pillow-heif; AVIF by Pillow itself
    @pytest.mark.parametrize("fmt", ["JPEG", "GIF", "WEBP", "BMP", "HEIF", "AVIF"])
    def test_other_formats(self, pm: Any, fmt: str) -> None:
        if fmt == "HEIF":
            from pillow_heif import register_heif_opener

            register_heif_opener()
        data = image_bytes(page_image(SENTENCE, mode="RGB"), fmt)
        mime = detect_mime(data)
        assert mime in ocr.IMAGE_MIMES and mime == {"HEIF": "image/heic", "AVIF": "image/avif"}.get(fmt, mime)
        result = extract_bytes(data, mime, pm)
        assert result.status is TextStatus.OCR, result.reason
        assert word_accuracy(SENTENCE, result.text) >= 0.9, result.text

    def test_every_page_of_a_tiff(self, pm: Any) -> None:
        second = "Every page of a multi page TIFF is read and starts a page of its own."
        data = image_bytes(page_image(SENTENCE), "TIFF", save_all=True, append_images=[page_image(second)])
        assert detect_mime(data) == "image/tiff"
        result = extract_bytes(data, "image/tiff", pm)
        assert result.status is TextStatus.OCR and result.meta["ocr_pages"] == "1-2"
        assert len(result.page_starts) == 2 and "2 pages" in result.reason
        first_page, second_page = result.text[: result.page_starts[1]], result.text[result.page_starts[1]:]
        assert word_accuracy(SENTENCE, first_page) >= 0.9 and word_accuracy(second, second_page) >= 0.9
        # past the file's OCR time budget the pages left are named: the file is partial, never silently short
        hurried = extract_bytes(data, "image/tiff", pm, ExtractLimits(ocr_seconds=0.0))
        assert hurried.status is TextStatus.PARTIAL and word_accuracy(SENTENCE, hurried.text) >= 0.9
        assert hurried.meta["ocr_skipped"] == "1 more page(s) not read: the file's OCR time budget of 0 s was spent"

    def test_transparent_png_is_read_over_white(self, pm: Any) -> None:
        from PIL import Image

        drawn = page_image(SENTENCE)
        image = Image.new("RGBA", drawn.size, (0, 0, 0, 0))
        image.putalpha(drawn.point(lambda v: 255 - v))  # black text on nothing
        result = extract_bytes(image_bytes(image, "PNG"), "image/png", pm)
        assert result.status is TextStatus.OCR and word_accuracy(SENTENCE, result.text) >= 0.9

    def test_a_blank_image_is_empty_with_a_reason(self, pm: Any) -> None:
        from PIL import Image

        result = extract_bytes(image_bytes(Image.new("L", (800, 600), 255), "PNG"), "image/png", pm)
        assert result.status is TextStatus.EMPTY and result.reason == "image: no text: the image is blank"

    def test_a_truncated_image_is_corrupt(self, pm: Any) -> None:
        data = image_bytes(page_image(SENTENCE), "PNG")
        result = extract_bytes(data[: len(data) // 2], "image/png", pm)
        assert result.status is TextStatus.CORRUPT and result.reason.startswith("image:")

    def test_tesseract_over_its_time_is_a_timeout(self, pm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(ocr, "PAGE_TIMEOUT", 0.001)
        result = extract_bytes(image_bytes(page_image(SENTENCE), "PNG"), "image/png", pm)
        assert result.status is TextStatus.TIMEOUT and "Tesseract took over" in result.reason


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims width x height 1-bit pixels with a few bytes of data: a decompression bomb's header."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


class TestLimits:
    @needs_tesseract
    def test_a_decompression_bomb_is_refused_before_decoding(self, pm: Any) -> None:
        result = extract_bytes(_png_header_only(100_000, 100_000), "image/png", pm)
        assert result.status is TextStatus.TOO_LARGE
        assert "\n" not in result.reason and result.reason.startswith("image:")

    @needs_tesseract
    def test_the_pixel_cap_follows_the_limits(self, pm: Any) -> None:
        data = image_bytes(page_image(SENTENCE), "PNG")
        small = ExtractLimits(max_image_pixels=10_000)
        result = extract_bytes(data, "image/png", pm, small)
        assert result.status is TextStatus.TOO_LARGE and "> the cap of 10,000" in result.reason

    def test_ocr_off_is_unsupported_with_the_reason(self, pm: Any) -> None:
        result = extract_bytes(image_bytes(page_image(SENTENCE), "PNG"), "image/png", pm, ExtractLimits(ocr=False))
        assert result.status is TextStatus.UNSUPPORTED and result.reason == "image: OCR is off (--no-ocr)"

    def test_ocr_off_leaves_a_scanned_pdf_empty_and_says_why(self, pm: Any) -> None:
        for backend in ("pdfium", "pdfminer"):
            result = extract_bytes(scanned_pdf(SENTENCE), "application/pdf", pm, ExtractLimits(ocr=False),
                                   prefer=backend)
            assert result.status is TextStatus.EMPTY and result.extractor == backend
            assert result.reason.startswith("no text layer: scanned pages; OCR is off")

    def test_missing_tesseract_is_unsupported_never_a_crash(self, pm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        import pytesseract

        monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
        assert ocr.tesseract_version() is None
        image = extract_bytes(image_bytes(page_image(SENTENCE), "PNG"), "image/png", pm)
        assert image.status is TextStatus.UNSUPPORTED
        assert image.reason == "image: Tesseract is not installed (apt install tesseract-ocr)"
        pdf = extract_bytes(scanned_pdf(SENTENCE), "application/pdf", pm)
        assert pdf.status is TextStatus.EMPTY
        assert pdf.reason.startswith("no text layer: scanned pages; Tesseract is not installed")

    @needs_tesseract
    def test_a_language_without_data_is_named(self, pm: Any) -> None:
        result = extract_bytes(image_bytes(page_image(SENTENCE), "PNG"), "image/png", pm,
                               ExtractLimits(ocr_languages="eng+xyz"))
        assert result.status is TextStatus.UNSUPPORTED and "no language data for xyz" in result.reason


# --- scanned PDF pages -------------------------------------------------------------------------------------------


@needs_tesseract
@pytest.mark.parametrize("backend", ["pdfium", "pdfminer"])
class TestScannedPdf:
    def test_an_image_only_pdf_is_read_by_ocr(self, pm: Any, backend: str) -> None:
        second = "The second scanned page is read as well and keeps its own page start."
        data = scanned_pdf(PARAGRAPH, second)
        result = extract_bytes(data, "application/pdf", pm, prefer=backend)
        assert result.status is TextStatus.OCR and result.extractor == backend
        assert result.meta["ocr_pages"] == "1-2" and float(result.meta["ocr_confidence"]) > 50
        assert re.fullmatch(r"OCR \(Tesseract [\d.]+, eng\): 2 pages, mean word confidence \d+ %", result.reason)
        assert len(result.page_starts) == 2
        pages = result.text[: result.page_starts[1]], result.text[result.page_starts[1]:]
        assert word_accuracy(PARAGRAPH, pages[0]) >= 0.9 and word_accuracy(second, pages[1]) >= 0.9

    def test_a_scanned_page_among_text_pages(self, pm: Any, backend: str) -> None:
        import pypdfium2 as pdfium

        layer = " ".join(f"Text layer sentence number {i} of the born digital page." for i in range(60))
        document = pdfium.PdfDocument(text_pdf_bytes(layer))
        scanned = pdfium.PdfDocument(scanned_pdf(SENTENCE))
        document.import_pages(scanned)
        buf = io.BytesIO()
        document.save(buf)
        scanned.close()
        document.close()
        result = extract_bytes(buf.getvalue(), "application/pdf", pm, prefer=backend)
        # most words come from the text layer: ok, and meta says which page was OCRed
        assert result.status is TextStatus.OK
        assert result.meta["ocr_pages"] == "2" and "most text is from the text layer" in result.meta["ocr"]
        assert len(result.page_starts) == 2 and "sentence number 59" in result.text[: result.page_starts[1]]
        assert word_accuracy(SENTENCE, result.text[result.page_starts[1]:]) >= 0.9

    def test_a_blank_page_is_not_sent_to_tesseract(self, pm: Any, backend: str) -> None:
        from PIL import Image

        blank = image_bytes(Image.new("L", (1700, 2200), 255), "PDF", resolution=200)
        result = extract_bytes(blank, "application/pdf", pm, prefer=backend)
        assert result.status is TextStatus.EMPTY
        assert result.reason == "no text layer: scanned pages; the scanned pages are blank"


    @needs_tesseract
    def test_a_long_scan_gives_its_first_pages_and_says_what_it_did_not_read(self, pm: Any, backend: str) -> None:
        """Past the file's OCR time budget the remaining pages are not read: the file is `partial`, with its
        first pages' text and the pages it left, instead of timing out with no text at all."""
        data = scanned_pdf(SENTENCE, "A second page about the harbour and its boats.", "A third page.")
        result = extract_bytes(data, "application/pdf", pm, ExtractLimits(ocr_seconds=0.0), prefer=backend)
        assert result.status is TextStatus.PARTIAL and result.extractor == backend, result.reason
        assert word_accuracy(SENTENCE, result.text[:result.page_starts[1]]) >= 0.9
        assert "2 more scanned page(s) not read" in result.reason and result.meta["ocr_unread"] == "2-3"
        assert len(result.page_starts) == 3  # every page keeps its start, the unread ones empty


@needs_tesseract
def test_an_image_read_again_is_not_ocred_again(pm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same picture in many documents (a letterhead's logo) is OCRed once a process: its result is kept
    by content, for the same limits; another image, or other limits, is read."""
    data = image_bytes(page_image(SENTENCE), "PNG")
    first = extract_bytes(data, "image/png", pm)
    calls: list[int] = []
    monkeypatch.setattr(ocr, "ocr_image", lambda *a, **k: calls.append(1) or ocr.OcrResult(text="other", words=1))
    assert extract_bytes(data, "image/png", pm) is first and calls == []
    assert word_accuracy(SENTENCE, first.text) >= 0.9
    assert extract_bytes(data, "image/png", pm, ExtractLimits(ocr_languages="eng+eng")).text == "other"
    assert extract_bytes(data + b"\0", "image/png", pm).text == "other" and calls == [1, 1]


# --- pictures on PDF pages with a text layer -------------------------------------------------------------------


def _screenshot_pdf(*texts: str) -> bytes:
    """A page of prose with each of `texts` as a picture at its foot, side by side."""
    images = [page_image(text, width=1600, size=40) for text in texts]
    prose = " ".join(f"The born digital report says in its sentence number {i} what it says." for i in range(25))
    return picture_pdf_bytes(prose, [(image.width, image.height, image.tobytes()) for image in images])


@needs_tesseract
def test_a_picture_on_a_page_with_a_text_layer_is_read_by_ocr(pm: Any) -> None:
    """A screenshot pasted into a report is pixels, in no text layer: read by OCR as a marked region of its
    page, the page's own text kept as it was."""
    result = extract_bytes(_screenshot_pdf(PARAGRAPH), "application/pdf", pm)
    assert result.status is TextStatus.OK and result.meta["ocr_pictures"].startswith("page 1, mean word confidence")
    [(start, end, label)] = result.regions
    assert label == "the pictures of page 1" and word_accuracy(PARAGRAPH, result.text[start:end]) >= 0.9
    assert "sentence number 24 what it says" in result.text[:start]


def test_pictures_unread_are_said(pm: Any) -> None:
    """With OCR off, a page's pictures are named as not read, in the result's meta: no text dropped silently."""
    result = extract_bytes(_screenshot_pdf(SENTENCE, SENTENCE), "application/pdf", pm, ExtractLimits(ocr=False))
    assert result.status is TextStatus.OK and result.regions == ()
    assert result.meta["ocr_pictures_unread"] == "2 picture(s) on page 1 not read: OCR is off (--no-ocr)"


@needs_tesseract
def test_pictures_past_the_ocr_budget_leave_the_file_read_in_part(pm: Any) -> None:
    """The file's OCR time budget bounds its pictures as it bounds scanned pages: the first is read, the
    rest are named, and the file is partial (a picture read before in the process costs none of it)."""
    pictures = ("A first picture of the budget test.", "A second picture about the harbour and its boats.")
    result = extract_bytes(_screenshot_pdf(*pictures), "application/pdf", pm, ExtractLimits(ocr_seconds=0.0))
    assert result.status is TextStatus.PARTIAL and len(result.regions) == 1
    assert result.reason.endswith("1 picture(s) on page 1 not read: the file's OCR time budget of 0 s was spent")


# --- the command line -----------------------------------------------------------------------------------------


@needs_tesseract
def test_scan_pairs_a_scanned_page_with_its_text(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "scanned.pdf").write_bytes(scanned_pdf(PARAGRAPH))
    (tree / "typed.txt").write_text(PARAGRAPH + "\n", encoding="utf-8")
    (tree / "other.txt").write_text("An unrelated note about gardening, tomatoes and the autumn rain. " * 5,
                                    encoding="utf-8")
    proc = run_cli("scan", "tree", "--index", "i.db", "--json", "--jobs", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Tesseract not found" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and doc["skipped"] == [] and doc["files_indexed"] == 3
    pair = {"tree/scanned.pdf", "tree/typed.txt"}
    clustered = any(pair <= {m["path"] for m in c["members"]} for c in doc["clusters"])
    contained = any({c["contained"], c["container"]} == pair for c in doc["containments"])
    assert clustered or contained, doc

    # the file row says how its text was read, and every report format marks the OCR side
    for fmt in ("json", "html", "csv"):
        done = run_cli("report", "--index", "i.db", "--format", fmt, "-o", f"r.{fmt}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    files = {f["path"]: f for f in report["files"]}
    assert files["tree/scanned.pdf"]["status"] == "ocr"
    assert "mean word confidence" in files["tree/scanned.pdf"]["reason"]
    [paired] = [p for p in report["pairs"] if {p["a"]["path"], p["b"]["path"]} == pair]
    sides = {paired["a"]["path"]: paired["a"]["ocr"], paired["b"]["path"]: paired["b"]["ocr"]}
    assert sides == {"tree/scanned.pdf": True, "tree/typed.txt": False}
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert re.search(r"OCR text</span> [AB] read from images", html)
    import csv

    rows = list(csv.DictReader((tmp_path / "r.csv").read_text(encoding="utf-8").splitlines()))
    assert any((row["ocr_a"], row["ocr_b"]) in (("1", "0"), ("0", "1")) for row in rows)

    off = run_cli("scan", "tree", "--index", "off.db", "--json", "--jobs", "0", "--no-ocr", cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    skipped = {s["path"]: s["reason"] for s in json.loads(off.stdout)["skipped"]}
    assert "OCR is off" in skipped["tree/scanned.pdf"]


def test_scan_without_tesseract_says_so_once(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "scanned.pdf").write_bytes(scanned_pdf(SENTENCE))
    (tree / "photo.png").write_bytes(image_bytes(page_image(SENTENCE), "PNG"))
    (tmp_path / "bin").mkdir()
    env = {**cli_env(), "PATH": str(tmp_path / "bin")}  # no tesseract on the PATH
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", "tree", "--index", "i.db", "--json"],
                          cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    notices = [line for line in proc.stderr.splitlines() if "Tesseract not found" in line]
    assert notices == ["scanner: Tesseract not found: images and scanned pages get no text "
                       "(apt install tesseract-ocr)"]
    skipped = {s["path"]: s["reason"] for s in json.loads(proc.stdout)["skipped"]}
    assert "Tesseract is not installed" in skipped["tree/scanned.pdf"]
    assert "Tesseract is not installed" in skipped["tree/photo.png"]
    quiet = subprocess.run([sys.executable, "-m", "scanner", "scan", "tree", "--index", "i.db", "--quiet"],
                           cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120)
    assert quiet.returncode == 0 and "Tesseract" not in quiet.stderr


def test_info_lists_tesseract(tmp_path: Path) -> None:
    proc = run_cli("info", "--index", "none.db", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    from scanner.sources.models import model_key
    from scanner_plugins.doc import antiword_version
    from scanner_plugins.libarchive_formats import libarchive_module

    key = model_key()  # "name@version" of the semantic pass's model
    libarchive = libarchive_module()
    number = libarchive.ffi.version_number() if libarchive is not None else 0
    assert doc["tools"] == {"tesseract": ocr.tesseract_version(), "antiword": antiword_version(),
                            "libarchive": f"{number // 1_000_000}.{number // 1000 % 1000}.{number % 1000}"
                            if libarchive is not None else None,
                            "wordllama": key.split("@")[1] if key else None}
    if HAVE_TESSERACT:
        assert "eng" in doc["tool_details"]["tesseract"]


@needs_tesseract
def test_ocr_languages_reach_tesseract_and_one_it_lacks_is_an_error(tmp_path: Path) -> None:
    """Pictures were read with English data whatever their language (a scanned Russian letter gives words
    that match nothing): `--ocr-languages` chooses, and a language whose data is missing stops the command
    before any file is read, saying what to install."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "page.png").write_bytes(image_bytes(page_image(SENTENCE), "PNG"))
    lacking = run_cli("scan", "tree", "--index", "i.db", "--ocr-languages", "eng+xyz", cwd=tmp_path)
    assert lacking.returncode == 2 and not (tmp_path / "i.db").exists()
    assert ("Invalid value for --ocr-languages: Tesseract has no language data for xyz (apt install "
            "tesseract-ocr-xyz)") in lacking.stderr
    odd = run_cli("check", "tree/page.png", "--index", "i.db", "--ocr-languages", "eng;rm -rf", cwd=tmp_path)
    assert odd.returncode == 2 and "Tesseract's language codes joined by '+'" in odd.stderr
    info = ocr.tesseract_info()
    if info is None or "osd" not in info.languages:
        pytest.skip("Tesseract has only English data here")  # a second language's data to choose
    chosen = run_cli("scan", "tree", "--index", "i.db", "--ocr-languages", "eng+osd", "--json", cwd=tmp_path)
    assert chosen.returncode == 0, chosen.stderr
    with Index.open(tmp_path / "i.db") as index:
        [(status, reason)] = [(row.status, row.reason) for row in index.files()]
    assert status == "ocr" and reason.startswith(f"OCR (Tesseract {ocr.tesseract_version()}, eng+osd): 1 page")


@needs_tesseract
def test_compare_reads_pictures_in_the_languages_chosen(tmp_path: Path) -> None:
    """`compare` read pictures with English data whatever was chosen elsewhere: it takes `--ocr-languages`
    (a language Tesseract lacks stops it) and `--no-ocr` as the other commands do."""
    (tmp_path / "page.png").write_bytes(image_bytes(page_image(SENTENCE), "PNG"))
    (tmp_path / "typed.txt").write_text(SENTENCE + "\n", encoding="utf-8")
    lacking = run_cli("compare", "page.png", "typed.txt", "--ocr-languages", "eng+xyz", cwd=tmp_path)
    assert lacking.returncode == 2 and "Tesseract has no language data for xyz" in lacking.stderr
    read = run_cli("compare", "page.png", "typed.txt", "--json", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["resemblance"] > 0.5
    unread = run_cli("compare", "page.png", "typed.txt", "--no-ocr", cwd=tmp_path)
    assert unread.returncode != 0 and "OCR" in unread.stderr


@needs_tesseract
@pytest.mark.asyncio
async def test_tui_scan_tab_takes_the_ocr_languages(tmp_path: Path) -> None:
    from textual.widgets import Input, Static

    from scanner.faces.tui import make_app

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "page.png").write_bytes(image_bytes(page_image(SENTENCE), "PNG"))
    db = tmp_path / "index.db"
    app = make_app(str(db), scan_jobs=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(tree)
        app.query_one("#scan-ocr-languages", Input).value = "eng+xyz"
        app.query_one("#scan-ocr-languages", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.query_one("#scan-status", Static).render()) == (
            "cannot scan: OCR languages Tesseract has no language data for xyz (apt install tesseract-ocr-xyz)")
        assert not app.scanning
        info = ocr.tesseract_info()
        if info is None or "osd" not in info.languages:
            return  # a second language's data to choose: none here
        app.query_one("#scan-ocr-languages", Input).value = "eng+osd"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    with Index.open(db) as index:
        [reason] = [row.reason for row in index.files()]
    assert reason.startswith(f"OCR (Tesseract {ocr.tesseract_version()}, eng+osd): 1 page")


@needs_tesseract
@pytest.mark.asyncio
async def test_tui_checks_read_pictures_as_its_ocr_options_say(tmp_path: Path) -> None:
    """The Check tab read pictures with English data whatever was chosen, and with OCR on whatever `scanner
    tui --no-ocr` said: it reads them as the interface's OCR options say (the Scan tab's languages once a
    scan takes them)."""
    from textual.widgets import Input, Static

    from scanner.faces.tui import make_app

    info = ocr.tesseract_info()
    if info is None or "osd" not in info.languages:
        pytest.skip("Tesseract has only English data here")  # a second language's data to choose
    (tmp_path / "typed.txt").write_text(PARAGRAPH + "\n", encoding="utf-8")
    (tmp_path / "page.png").write_bytes(image_bytes(page_image(PARAGRAPH), "PNG"))
    db = tmp_path / "index.db"
    assert run_cli("scan", "typed.txt", "--index", str(db), "--quiet", cwd=tmp_path).returncode == 0
    for ocr_on, said in ((False, "OCR is off"), (True, "of this file is found in 1 source")):
        app = make_app(str(db), scan_jobs=0, ocr=ocr_on, ocr_languages="eng+osd")
        assert app.ocr_languages == "eng+osd"
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.press("2")
            app.query_one("#check-path", Input).value = str(tmp_path / "page.png")
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            summary = str(app.query_one("#check-summary", Static).render())
            assert said in summary, summary
            assert app.query_one("#scan-ocr-languages", Input).placeholder == "OCR languages: eng+osd"
