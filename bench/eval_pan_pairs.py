"""PAN-13 text alignment, scored with PAN's measures per obfuscation class.

Two modes:
* pairs (default): align each (suspicious, source) pair of the class directly:
  the passage aligner alone;
* `--through-index`: index all 289 sources with the real scan, then run
  `check_text` on each suspicious document and keep the passages found for
  the class's pairs: retrieval (postings, candidate ranking) and alignment
  together, as `scanner check` does;
* `--from-scan`: scan sources and suspicious documents together, then read the
  passage pairs the scan stored (`scanner.services.passages`, issue 20): no
  `check` at all. `--passage-words N` sets the scan's minimum passage length.

    .venv/bin/python bench/eval_pan_pairs.py [--through-index | --from-scan] [--verbatim] [--halves] [--min-words N]

Without options: the AlignOptions defaults (reworded seeds on, min 15 words).
"""

from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.core.config import Params
from scanner.engine.align import AlignOptions, align
from scanner.engine.evaluation import Span, pan_scores
from scanner.engine.sketch import shingle_text

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


def _source_index(params: Params, model=None):
    """The sources indexed as `scanner scan` does, its passage step included (which stores the documents'
    vectors by meaning when a sentence model is given)."""
    import tempfile

    from scanner.index import Index
    from scanner.services.passages import align_index
    from scanner.services.scan import run_scan
    from scanner.sources.plugins import make_plugin_manager

    db = Path(tempfile.mkdtemp()) / "pan-sources.db"
    with Index.open(db, readonly=False, params=params) as index:
        run_scan([str(PAN / "src")], index, make_plugin_manager(), params, jobs=0)
        align_index(index, params, jobs=0, model=model)
    return Index.open(db)


def _scanned_index(params: Params, model=None):
    """Sources and suspicious documents in one index, passages aligned by the scan's step."""
    import tempfile

    from scanner.index import Index
    from scanner.services.passages import align_index
    from scanner.services.scan import run_scan

    db = Path(tempfile.mkdtemp()) / "pan-all.db"
    with Index.open(db, readonly=False, params=params) as index:
        run_scan([str(PAN / "src"), str(PAN / "susp")], index, None, params)
        started = time.perf_counter()
        step = align_index(index, params, model=model)
        print(f"passage step: {step.candidates} candidate pairs, {step.pairs} with passages, "
              f"{time.perf_counter() - started:.1f} s")
    return Index.open(db)


def _detections_from_scan(index, pairs: list[tuple[str, str]]) -> tuple[list[Span], int]:
    """The stored passages of the class's pairs (suspicious document as A), and how many pairs hold any."""
    out = []
    holding = 0
    for susp, src in pairs:
        a = index.doc_id_for_sha256(_sha(PAN / "susp" / susp))
        b = index.doc_id_for_sha256(_sha(PAN / "src" / src))
        stored = index.passages.pair(a, b) if a is not None and b is not None else None
        if stored is None:
            continue
        holding += 1
        out += [Span(susp, src, p.a_start, p.a_end, p.b_start, p.b_end) for p in stored.passages]
    return out, holding


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _detections_through_index(index, pairs: list[tuple[str, str]], args, model=None,
                              kinds: dict[Span, str] | None = None) -> list[Span]:
    from scanner.services.check import CheckOptions, check_text

    wanted: dict[str, set[str]] = {}
    for susp, src in pairs:
        wanted.setdefault(susp, set()).add(src)
    options = CheckOptions(top=50, min_words=args.min_words, max_gap=args.max_gap, verbatim=args.verbatim,
                           semantic=model)
    out = []
    for susp, sources in wanted.items():
        text = (PAN / "susp" / susp).read_text(encoding="utf-8")
        for match in check_text(text, index, index.params, options).matches:
            name = Path(match.path).name
            if name in sources:
                for p in match.passages:
                    out.append(Span(susp, name, p.query_start, p.query_end, p.doc_start, p.doc_end))
                    if kinds is not None:
                        kinds[out[-1]] = p.kind
    return out


def _outside(cls: str, cases: list[Span], detections: list[Span], kinds: dict[Span, str]) -> list[str]:
    """The detections that overlap no case of their pair (what the corpus does not label as reuse), each with
    its kind and both texts' first words, and the class's plagdet without them."""
    def overlaps(d: Span) -> bool:
        return any(c.suspicious == d.suspicious and c.source == d.source and c.susp_start < d.susp_end
                   and d.susp_start < c.susp_end for c in cases)

    lines = []
    for d in detections:
        if not overlaps(d):
            query = (PAN / "susp" / d.suspicious).read_text(encoding="utf-8")[d.susp_start : d.susp_end]
            source = (PAN / "src" / d.source).read_text(encoding="utf-8")[d.src_start : d.src_end]
            lines.append(f"- {cls} {d.suspicious} / {d.source}: {kinds.get(d, '?')}, {len(query.split())} words: "
                         f"\"{' '.join(query.split()[:14])} ...\" / \"{' '.join(source.split()[:14])} ...\"")
    inside = [d for d in detections if overlaps(d)]
    lines.append(f"- {cls}: {len(detections) - len(inside)} of {len(detections)} detections overlap no case; "
                 f"plagdet without them {pan_scores(cases, inside).plagdet:.3f}")
    return lines


def _row(label: str, n_pairs: int, cases: list[Span], detections: list[Span], seconds: float) -> str:
    sc = pan_scores(cases, detections)
    chars = sum(d.susp_end - d.susp_start for d in detections)  # suspicious-side characters detected
    return (f"| {label} | {n_pairs} | {sc.cases} | {sc.detections} | {sc.precision:.3f} | {sc.recall:.3f} | "
            f"{sc.granularity:.3f} | {sc.plagdet:.3f} | {chars} | {seconds:.2f} |")


def main() -> None:
    defaults = AlignOptions()
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-gap", type=int, default=defaults.max_gap)
    parser.add_argument("--min-words", type=int, default=defaults.min_tokens)
    parser.add_argument("-w", type=int, default=Params().shingle_size)
    parser.add_argument("--dice", type=float, default=defaults.sentence_dice,
                        help="reworded anchor threshold (Dice and cosine)")
    parser.add_argument("--weak-dice", type=float, default=defaults.weak_dice)
    parser.add_argument("--sentence-gap", type=int, default=defaults.sentence_gap)
    parser.add_argument("--verbatim", action="store_true", help="verbatim seeds only (AlignOptions.verbatim())")
    parser.add_argument("--through-index", action="store_true", help="retrieve sources through a real index")
    parser.add_argument("--from-scan", action="store_true", help="read the passage pairs a scan stored")
    parser.add_argument("--passage-words", type=int, default=Params().passage_words)
    parser.add_argument("--no-semantic", action="store_true", help="no semantic seeds (issue 21)")
    parser.add_argument("--semantic", type=float, default=defaults.semantic, help="semantic anchor cosine")
    parser.add_argument("--weak-semantic", type=float, default=defaults.weak_semantic)
    parser.add_argument("--semantic-passage", type=float, default=defaults.semantic_passage)
    parser.add_argument("--outside", action="store_true",
                        help="with --through-index: list the detections that overlap no case (reuse the corpus does "
                             "not label?), and each class's plagdet without them")
    parser.add_argument("--halves", action="store_true",
                        help="also score the even- and odd-numbered pairs of each class apart (stability)")
    args = parser.parse_args()
    params = Params(shingle_size=args.w, passage_words=args.passage_words)
    options = AlignOptions(max_gap=args.max_gap, min_tokens=args.min_words, sentence_dice=args.dice,
                           sentence_cosine=args.dice if args.dice is not None else defaults.sentence_cosine,
                           weak_dice=args.weak_dice, sentence_gap=args.sentence_gap,
                           semantic=None if args.no_semantic else args.semantic, weak_semantic=args.weak_semantic,
                           semantic_passage=args.semantic_passage)
    model = None
    if not args.no_semantic and not args.verbatim:
        from scanner.sources.models import load_model

        model = load_model()
    if args.verbatim:
        options = AlignOptions.verbatim(max_gap=args.max_gap, min_tokens=args.min_words)
    cache: dict[str, tuple[str, object]] = {}

    def load(kind: str, name: str):
        key = f"{kind}/{name}"
        if key not in cache:
            text = (PAN / kind / name).read_text(encoding="utf-8")
            cache[key] = (text, shingle_text(text, params))
        return cache[key]

    print(f"w={args.w} {options}{' through the index' if args.through_index else ''}")
    print("| class | pairs | cases | detections | precision | recall | granularity | plagdet | chars | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    index = _source_index(params, model) if args.through_index else None
    scanned = _scanned_index(params, model) if args.from_scan else None
    halves: list[str] = []
    outside: list[str] = []
    kinds: dict[Span, str] = {}
    for cls in CLASSES:
        pairs, cases = load_cases(PAN / cls)
        started = time.perf_counter()
        detections = []
        if scanned is not None:
            detections, holding = _detections_from_scan(scanned, pairs)
            print(f"<!-- {cls}: {holding} of {len(pairs)} pairs hold stored passages -->")
            pairs_for_alignment: list[tuple[str, str]] = []
        elif index is not None:
            detections = _detections_through_index(index, pairs, args, model, kinds)
            if args.outside:
                outside += _outside(cls, cases, detections, kinds)
            pairs_for_alignment = []
        else:
            pairs_for_alignment = pairs
        for susp, src in pairs_for_alignment:
            s_text, s_sh = load("susp", susp)
            o_text, o_sh = load("src", src)
            for p in align(s_sh, s_text, o_sh, o_text, params.shingle_size, options, model=model):
                detections.append(Span(susp, src, p.query_start, p.query_end, p.doc_start, p.doc_end))
        print(_row(cls, len(pairs), cases, detections, time.perf_counter() - started))
        for parity, name in ((0, "even"), (1, "odd")):
            half = {pair for k, pair in enumerate(pairs) if k % 2 == parity}
            halves.append(_row(f"{cls} ({name} pairs)", len(half),
                               [c for c in cases if (c.suspicious, c.source) in half],
                               [d for d in detections if (d.suspicious, d.source) in half], 0.0))
    if outside:
        print()
        print("\n".join(outside))
    if args.halves:
        print()
        print("| half | pairs | cases | detections | precision | recall | granularity | plagdet | chars | s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(halves))


if __name__ == "__main__":
    main()
