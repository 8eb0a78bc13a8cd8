"""Issue 18: how well and how fast does the OCR plugin read scanned pages?

Makes "scanned pages" out of the real PDFs of ../shared/corpora/pdf-samples (151 PDFs, see its SOURCE.md): N
pages with a text layer (default 30, at most one per PDF first, chosen with a fixed seed) are rendered with
pypdfium2 in grayscale (default 300 dpi), then degraded the way a scanner and a photocopier degrade them:

- clean:       as rendered (the best case: what an image-only PDF of a born-digital page gives);
- gaussian:    rotated 0.5-1.5 degrees (either way) and Gaussian noise (sigma 20 of 255);
- saltpepper:  rotated 0.5-1.5 degrees and 2 % of the pixels set black or white (salt and pepper).

Each image (a PNG stating its dpi) goes through the plugin as a scan would read it (`extract_bytes(png,
"image/png", pm)`), and its text is compared with the page's own text layer (PDFium's): word accuracy is
1 - word-level edit distance / reference words (rapidfuzz Levenshtein on token lists, floored at 0), word recall
the share of the reference's words (as a bag) found at all. Tokens are NFKC-casefolded `\\w+` runs with
letters or digits, with a hyphen at a line end joined on both sides. Only the OCR is timed (rendering and noise are
made beforehand); pages/s is per process, and with --jobs 2 the throughput of two worker processes.

    .venv/bin/python bench/eval_ocr.py [--pages 30] [--dpi 300] [--jobs 1] [--seed 18] [--show 5] [--omp-threads N]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import platform
import random
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import PDF_SAMPLES

CONDITIONS = ("clean", "gaussian", "saltpepper")
MIN_WORDS = 80  # a page with fewer words in its layer says little about accuracy
MAX_POINTS = 1300  # pages larger than A3 (in points) are left out: posters and drawings
_TOKEN = re.compile(r"\w+")
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)")


@dataclass(frozen=True)
class Page:
    """One chosen page: where it is from, and its text layer (the reference)."""

    pdf: str
    index: int
    text: str


@dataclass(frozen=True)
class Outcome:
    """What the plugin read from one degraded page."""

    page: Page
    condition: str
    status: str
    accuracy: float
    recall: float
    confidence: float | None
    seconds: float
    text: str


def tokens(text: str) -> list[str]:
    text = _HYPHEN_BREAK.sub(r"\1\2", unicodedata.normalize("NFKC", text).replace("\x02", ""))
    return [t for t in _TOKEN.findall(text.casefold()) if any(ch.isalnum() for ch in t)]


def word_accuracy(reference: list[str], found: list[str]) -> float:
    """1 - word-level edit distance / reference words, floored at 0 (junk can cost more than the page)."""
    from rapidfuzz.distance import Levenshtein

    return max(0.0, 1 - Levenshtein.distance(reference, found) / len(reference))


def word_recall(reference: list[str], found: list[str]) -> float:
    have = Counter(found)
    return sum(min(n, have[w]) for w, n in Counter(reference).items()) / len(reference)


def _latin(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(ch.isascii() for ch in letters) >= 0.95 * len(letters)


def choose_pages(root: Path, n: int, seed: int) -> list[Page]:
    """`n` pages with a real, mostly Latin text layer; one per PDF in a seeded order, then seconds ones."""
    import pypdfium2 as pdfium

    per_pdf: list[list[Page]] = []
    seen: set[str] = set()
    for path in sorted(root.rglob("*.pdf")):
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen:  # SOURCE.md: 11 pairs are byte-identical
            continue
        seen.add(digest)
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            continue  # encrypted or broken
        pages: list[Page] = []
        try:
            for index in range(min(len(document), 8)):
                page = document[index]
                try:
                    width, height = page.get_size()
                    textpage = page.get_textpage()
                    text = textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n")
                    textpage.close()
                finally:
                    page.close()
                if max(width, height) <= MAX_POINTS and len(tokens(text)) >= MIN_WORDS and _latin(text):
                    pages.append(Page(str(path.relative_to(root)), index, text))
        finally:
            document.close()
        if pages:
            per_pdf.append(pages)
    rng = random.Random(seed)
    rng.shuffle(per_pdf)
    for pages in per_pdf:
        rng.shuffle(pages)
    chosen: list[Page] = []
    round_ = 0
    while len(chosen) < n and any(len(p) > round_ for p in per_pdf):
        chosen += [pages[round_] for pages in per_pdf if len(pages) > round_][: n - len(chosen)]
        round_ += 1
    return chosen


def render(root: Path, page: Page, dpi: int) -> Any:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(root / page.pdf)
    try:
        pdf_page = document[page.index]
        bitmap = pdf_page.render(scale=dpi / 72, grayscale=True)
        image = bitmap.to_pil().convert("L")  # a copy, independent of the bitmap's buffer
        bitmap.close()
        pdf_page.close()
    finally:
        document.close()
    return image


def degrade(image: Any, condition: str, rng: random.Random) -> Any:
    """The page as a scanner gives it back: slightly rotated, with sensor or dust noise."""
    import numpy as np
    from PIL import Image

    if condition == "clean":
        return image
    angle = rng.uniform(0.5, 1.5) * rng.choice((-1, 1))
    rotated = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    pixels = np.asarray(rotated, dtype=np.float32)
    noise = np.random.default_rng(rng.randrange(2**32))
    if condition == "gaussian":
        pixels = pixels + noise.normal(0, 20, pixels.shape)
    else:
        spots = noise.random(pixels.shape)
        pixels[spots < 0.01] = 0
        pixels[spots > 0.99] = 255
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="L")


def png(image: Any, dpi: int) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", dpi=(dpi, dpi))
    return buf.getvalue()


_PM: Any = None


def ocr_one(data: bytes) -> tuple[str, str, float | None, float]:
    """(status, text, mean word confidence, seconds) of one PNG through the plugin."""
    global _PM  # one plugin manager per worker process
    from scanner.sources.extract import extract_bytes
    from scanner.sources.plugins import make_plugin_manager

    if _PM is None:
        _PM = make_plugin_manager(load_entry_points=False)
    start = time.perf_counter()
    result = extract_bytes(data, "image/png", _PM)
    seconds = time.perf_counter() - start
    confidence = result.meta.get("ocr_confidence")
    return result.status.value, result.text, float(confidence) if confidence else None, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=PDF_SAMPLES)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--dpi", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes running the OCR")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--show", type=int, default=5, help="list the N worst pages of each condition")
    parser.add_argument("--whole-pdfs", action="store_true",
                        help="then extract every corpus PDF with OCR off and on: statuses and seconds")
    parser.add_argument("--omp-threads", type=int, default=None,
                        help="OpenMP threads of each Tesseract run (default: the plugin's, 1)")
    args = parser.parse_args()
    if args.omp_threads is not None:
        os.environ["OMP_THREAD_LIMIT"] = str(args.omp_threads)  # before the plugin's default; workers inherit it

    from scanner_plugins.ocr import tesseract_version

    if tesseract_version() is None:
        sys.exit("Tesseract is not installed (apt install tesseract-ocr)")
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus} (../shared/corpora/pdf-samples, see docs/CORPORA.md)")
    conditions = [c for c in args.conditions.split(",") if c]
    pages = choose_pages(args.corpus, args.pages, args.seed)
    rng = random.Random(args.seed)
    images = {(i, c): png(degrade(render(args.corpus, page, args.dpi), c, rng), args.dpi)
              for i, page in enumerate(pages) for c in conditions}
    threads = os.environ.get("OMP_THREAD_LIMIT", "1 (the plugin's default)")
    print(f"{len(pages)} pages of {len({p.pdf for p in pages})} PDFs in {args.corpus}, {args.dpi} dpi grayscale; "
          f"Tesseract {tesseract_version()}, OMP_THREAD_LIMIT={threads}, "
          f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), --jobs {args.jobs}")
    print()
    print("| condition | pages | reference words | word accuracy mean | median | min | word recall | "
          "mean confidence | seconds | pages/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst: dict[str, list[Outcome]] = {}
    for condition in conditions:
        keys = [(i, condition) for i in range(len(pages))]
        start = time.perf_counter()
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                read = list(pool.map(ocr_one, [images[k] for k in keys]))
        else:
            read = [ocr_one(images[k]) for k in keys]
        wall = time.perf_counter() - start
        outcomes = []
        for (i, _), (status, text, confidence, seconds) in zip(keys, read):
            reference, found = tokens(pages[i].text), tokens(text)
            outcomes.append(Outcome(pages[i], condition, status, word_accuracy(reference, found),
                                    word_recall(reference, found), confidence, seconds, text))
        accuracy = [o.accuracy for o in outcomes]
        confidences = [o.confidence for o in outcomes if o.confidence is not None]
        words = sum(len(tokens(p.text)) for p in pages)
        print(f"| {condition} | {len(outcomes)} | {words:,} | {statistics.fmean(accuracy):.3f} | "
              f"{statistics.median(accuracy):.3f} | {min(accuracy):.3f} | "
              f"{statistics.fmean(o.recall for o in outcomes):.3f} | "
              f"{statistics.fmean(confidences) if confidences else 0:.1f} | {wall:.1f} | {len(outcomes) / wall:.2f} |")
        worst[condition] = sorted(outcomes, key=lambda o: o.accuracy)[: args.show]
    for condition, outcomes in worst.items() if args.show > 0 else ():
        print(f"\nworst {condition} pages:")
        for o in outcomes:
            conf = f"{o.confidence:.0f}" if o.confidence is not None else "-"
            print(f"  accuracy {o.accuracy:.3f} recall {o.recall:.3f} confidence {conf:>3} {o.status:<6} "
                  f"{o.seconds:5.1f}s  {o.page.pdf} page {o.page.index + 1}")
    if args.whole_pdfs:
        whole_pdfs(args.corpus)
    return 0


def whole_pdfs(root: Path) -> None:
    """What OCR changes for the corpus's PDFs as a scan reads them (default backend, one process)."""
    from scanner.sources.extract import extract_bytes
    from scanner.sources.limits import ExtractLimits
    from scanner.sources.plugins import make_plugin_manager

    pm = make_plugin_manager(load_entry_points=False)
    paths = sorted(root.rglob("*.pdf"))
    print(f"\n{len(paths)} PDFs of {root}, default backend:")
    print("| OCR | statuses | OCRed pages | seconds |")
    print("| --- | --- | ---: | ---: |")
    for on in (False, True):
        statuses: Counter[str] = Counter()
        ocr_pages = 0
        start = time.perf_counter()
        for path in paths:
            result = extract_bytes(path.read_bytes(), "application/pdf", pm, ExtractLimits(ocr=on))
            statuses[result.status.value] += 1
            for span in filter(None, result.meta.get("ocr_pages", "").split(", ")):
                first, _, last = span.partition("-")
                ocr_pages += int(last or first) - int(first) + 1
        seconds = time.perf_counter() - start
        shown = ", ".join(f"{status} {n}" for status, n in statuses.most_common())
        print(f"| {'on' if on else 'off'} | {shown} | {ocr_pages} | {seconds:.1f} |")


if __name__ == "__main__":
    raise SystemExit(main())
