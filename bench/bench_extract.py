"""Extraction benchmark: pdfminer vs PDFium, and the HTML extractor against gold text.

Run:  .venv/bin/python bench/bench_extract.py
Prints markdown tables (figures go to docs/EXTRACTION.md). Needs ../shared/corpora.

PDF agreement is the token-set recall of a reference text in the extracted
text: pypdf's expected-text files (exact page text) and the LaTeX sources of
py-pdf/sample-files (approximate: markup stripped crudely, so only the
comparison between backends is meaningful). HTML is scored like the
Scrapinghub benchmark: bag-of-tokens precision, recall and F1 against the gold
article body (our extractor removes boilerplate tags but does no article
detection, so recall is what matters for containment).
"""

from __future__ import annotations

import json
import logging
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CORPORA, PDF_SAMPLES

from scanner.core.model import TextStatus
from scanner.sources.extract import extract_bytes
from scanner.sources.plugins import make_plugin_manager

PYPDF = PDF_SAMPLES / "pypdf" / "resources"
SAMPLES = PDF_SAMPLES / "py-pdf-sample-files"
ARTICLES = CORPORA / "html-article-extraction-benchmark"
READABILITY = CORPORA / "html-readability-test-pages" / "test-pages"
BACKENDS = ("pdfminer", "pdfium")

# (pdf, reference text, only the first page?)
EXPECTED = [
    (PYPDF / "crazyones.pdf", PYPDF / "crazyones.txt", True),
    (PYPDF / "toy.pdf", PYPDF / "toy.layout.txt", True),
    (SAMPLES / "026-latex-multicolumn" / "multicolumn.pdf", PYPDF / "multicolumn-lorem-ipsum.txt", True),
    (SAMPLES / "010-pdflatex-forms" / "pdflatex-forms.pdf", PYPDF / "010-pdflatex-forms.txt", True),
]
TEX = sorted(SAMPLES.glob("*/*.tex"))


def tokens(text: str) -> list[str]:
    """NFKC (ligatures), casefold, apostrophes dropped (pypdf's references lack them)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("'", "").replace("\u2019", "")
    return re.findall(r"\w+", text)


def detex(source: str) -> str:
    source = re.sub(r"(?<!\\)%.*", " ", source)
    source = re.sub(r"\\begin\{document\}", " ", source)
    source = source.split("\\end{document}")[0]
    source = re.sub(r"\\[a-zA-Z]+\*?(\[[^\]]*\])?", " ", source)
    return re.sub(r"[{}$\\&_^~]", " ", source)


def recall(reference: str, text: str) -> float:
    ref = set(tokens(reference))
    return len(ref & set(tokens(text))) / len(ref) if ref else 0.0


def first_page(text: str, starts: tuple[int, ...]) -> str:
    return text[: starts[1]] if len(starts) > 1 else text


def bench_pdf(pm) -> list[str]:
    rows = []
    all_pdfs = sorted(PDF_SAMPLES.rglob("*.pdf"))
    for backend in BACKENDS:
        pages = ok = empty = failed = encrypted = 0
        elapsed = 0.0
        for path in all_pdfs:
            data = path.read_bytes()
            t0 = time.perf_counter()
            result = extract_bytes(data, "application/pdf", pm, prefer=backend)
            elapsed += time.perf_counter() - t0
            if result.extractor != backend:  # fell back to the other backend
                failed += 1
                continue
            status = result.status
            if status in (TextStatus.OK, TextStatus.OCR):  # read, by its text layer or by OCR (issue 18)
                ok += 1
                pages += len(result.page_starts)
            elif status is TextStatus.EMPTY:
                empty += 1
                pages += int(result.meta.get("pages", "0"))
            elif status is TextStatus.ENCRYPTED:
                encrypted += 1
            else:
                failed += 1
        exp_recalls = []
        for pdf, ref, page1 in EXPECTED:
            result = extract_bytes(pdf.read_bytes(), "application/pdf", pm, prefer=backend)
            text = first_page(result.text, result.page_starts) if page1 else result.text
            exp_recalls.append(recall(ref.read_text(encoding="utf-8"), text))
        tex_recalls = []
        for tex in TEX:
            pdf = next(tex.parent.glob("*.pdf"))
            result = extract_bytes(pdf.read_bytes(), "application/pdf", pm, prefer=backend)
            tex_recalls.append(recall(detex(tex.read_text(encoding="utf-8", errors="replace")), result.text))
        rows.append(
            f"| {backend} | {len(all_pdfs)} | {ok} | {empty} | {encrypted} | {failed} | {pages} "
            f"| {elapsed:.1f} | {pages / elapsed:.1f} | {statistics.mean(exp_recalls):.3f} "
            f"({', '.join(f'{r:.2f}' for r in exp_recalls)}) | {statistics.mean(tex_recalls):.3f} |"
        )
    head = [
        "| backend | PDFs | ok | empty | encrypted | failed | pages | seconds | pages/s "
        "| recall vs pypdf expected text (crazyones, toy, multicolumn, forms) | recall vs .tex sources (6) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    return head + rows


def prf(gold: str, text: str) -> tuple[float, float, float]:
    g, t = Counter(tokens(gold)), Counter(tokens(text))
    common = sum((g & t).values())
    p = common / max(sum(t.values()), 1)
    r = common / max(sum(g.values()), 1)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bench_html(pm) -> list[str]:
    rows = ["| corpus | pages | precision | recall | F1 | min recall | seconds |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    gold = json.loads((ARTICLES / "ground-truth.json").read_text(encoding="utf-8"))
    scores = []
    t0 = time.perf_counter()
    for key in sorted(gold):
        result = extract_bytes((ARTICLES / "html" / f"{key}.html").read_bytes(), "text/html", pm)
        scores.append(prf(gold[key]["articleBody"], result.body))  # the body: regions follow it (issue 15)
    elapsed = time.perf_counter() - t0
    rows.append(_html_row("article-extraction-benchmark", scores, elapsed))
    scores = []
    t0 = time.perf_counter()
    for page in sorted(p for p in READABILITY.iterdir() if (p / "expected.html").exists()):
        expected = extract_bytes((page / "expected.html").read_bytes(), "text/html", pm).body
        result = extract_bytes((page / "source.html").read_bytes(), "text/html", pm)
        scores.append(prf(expected, result.body))
    elapsed = time.perf_counter() - t0
    rows.append(_html_row("readability-test-pages", scores, elapsed))
    return rows


def _html_row(name: str, scores: list[tuple[float, float, float]], elapsed: float) -> str:
    p, r, f = (statistics.mean(s[i] for s in scores) for i in range(3))
    return f"| {name} | {len(scores)} | {p:.3f} | {r:.3f} | {f:.3f} | {min(s[1] for s in scores):.3f} | {elapsed:.1f} |"


def main() -> int:
    if not CORPORA.is_dir():
        print(f"corpora not found at {CORPORA}", file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # pdfminer warns on every odd font
    pm = make_plugin_manager(load_entry_points=False)
    print("## PDF backends\n")
    print("\n".join(bench_pdf(pm)))
    print("\n## HTML extractor (token bag, macro-averaged)\n")
    print("\n".join(bench_html(pm)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
