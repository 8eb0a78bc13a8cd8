"""Pair-level PAN-13 text alignment: align each (suspicious, source) pair directly.

Measures the passage aligner alone (no retrieval). Usage:
    .venv/bin/python bench/eval_pan_pairs.py [--max-gap N] [--min-words N] [-w W]
"""

from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.align import AlignOptions, align  # noqa: E402
from scanner.config import Params  # noqa: E402
from scanner.evaluation import Span, pan_scores  # noqa: E402
from scanner.sketch import shingle_text  # noqa: E402

PAN = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "pan13-text-alignment-subset"
CLASSES = ["01-no-plagiarism", "02-no-obfuscation", "03-random-obfuscation",
           "04-translation-obfuscation", "05-summary-obfuscation"]


def load_cases(folder: Path) -> tuple[list[tuple[str, str]], list[Span]]:
    pairs = [tuple(line.split()) for line in (folder / "pairs").read_text().splitlines() if line.strip()]
    cases = []
    for susp, src in pairs:
        xml = folder / f"{Path(susp).stem}-{Path(src).stem}.xml"
        for feature in ET.parse(xml).getroot().iter("feature"):
            if feature.get("name") != "plagiarism":
                continue
            t0, tl = int(feature.get("this_offset")), int(feature.get("this_length"))
            s0, sl = int(feature.get("source_offset")), int(feature.get("source_length"))
            cases.append(Span(susp, feature.get("source_reference"), t0, t0 + tl, s0, s0 + sl))
    return pairs, cases


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-gap", type=int, default=AlignOptions().max_gap)
    parser.add_argument("--min-words", type=int, default=AlignOptions().min_tokens)
    parser.add_argument("-w", type=int, default=Params().shingle_size)
    parser.add_argument("--dice", type=float, default=None)
    parser.add_argument("--reworded", action="store_true", help="AlignOptions.reworded() settings")
    parser.add_argument("--sentence-gap", type=int, default=AlignOptions().sentence_gap)
    args = parser.parse_args()
    params = Params(shingle_size=args.w)
    options = AlignOptions(max_gap=args.max_gap, min_tokens=args.min_words, sentence_dice=args.dice,
                           sentence_gap=args.sentence_gap)
    if args.reworded:
        options = AlignOptions.reworded(max_gap=args.max_gap, min_tokens=args.min_words)
    cache: dict[str, tuple[str, object]] = {}

    def load(kind: str, name: str):
        key = f"{kind}/{name}"
        if key not in cache:
            text = (PAN / kind / name).read_text(encoding="utf-8")
            cache[key] = (text, shingle_text(text, params))
        return cache[key]

    print(f"w={args.w} {options}")
    print("| class | pairs | cases | detections | precision | recall | granularity | plagdet | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cls in CLASSES:
        pairs, cases = load_cases(PAN / cls)
        started = time.perf_counter()
        detections = []
        for susp, src in pairs:
            s_text, s_sh = load("susp", susp)
            o_text, o_sh = load("src", src)
            for p in align(s_sh, s_text, o_sh, o_text, params.shingle_size, options):
                detections.append(Span(susp, src, p.query_start, p.query_end, p.doc_start, p.doc_end))
        sc = pan_scores(cases, detections)
        print(f"| {cls} | {len(pairs)} | {sc.cases} | {sc.detections} | {sc.precision:.3f} | {sc.recall:.3f} | "
              f"{sc.granularity:.3f} | {sc.plagdet:.3f} | {time.perf_counter() - started:.2f} |")


if __name__ == "__main__":
    main()
