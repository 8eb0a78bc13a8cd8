"""Coates (2011) section 4.2 replicated on a real 13,508-character English text.

Run:  .venv/bin/python bench/coates_experiments.py [--trials 5] [--ns 4,8]

The document is the first PAN-13 source of at least 13,508 characters, cut to
that size (Coates used a LaTeX draft of his paper). "Max LD" is the true
Levenshtein distance of two unrelated same-size PAN-13 texts, and Error is
(true LD - estimated LD) / Max LD as in Coates' tables. True LDs come from
rapidfuzz. Each row is printed for seed 0 (one trial, like Coates), and the
mean |Error| over `trials` seeds is given per (c, n).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from common import coates_documents, insert_blocks, substitute
from rapidfuzz.distance import Levenshtein

from scanner import coates

COATES_SUBST = {  # (c, %) -> (true LD, est LD, error) from Coates' table 4.2.1
    (50, 1): (136, 333, 0.0267), (50, 5): (777, 1000, 0.0864), (50, 10): (1438, 2416, 0.1943),
    (50, 20): (2689, 2350, 0.1890), (50, 30): (4083, 3700, 0.2976),
    (100, 1): (119, 66, 0.0483), (100, 5): (764, 600, 0.2976), (100, 10): (1451, 1066, 0.0859),
    (100, 20): (2740, 1666, 0.1343), (100, 30): (3981, 1833, 0.1478),
    (200, 1): (115, 66, 0.0053), (200, 5): (814, 200, 0.0161), (200, 10): (1461, 266, 0.0322),
    (200, 20): (2841, 800, 0.0645),
}
COATES_BLOCKS = {  # (c, blocks) -> (true LD, est LD, error) from Coates' table 4.2.2
    (200, 1): (500, 200, 0.0274), (200, 5): (2500, 2200, 0.0245), (200, 10): (5000, 6000, -0.2401),
    (100, 1): (500, 700, -0.0182), (100, 5): (2500, 2800, -0.0246), (100, 10): (5000, 4700, -0.0145),
    (50, 1): (500, 700, -0.0182), (50, 5): (2500, 2100, 0.0327), (50, 10): (5000, 5450, -0.0690),
}
SUBST_PERCENTS = (1, 5, 10, 20, 30)
BLOCK_COUNTS = (1, 5, 10)


def variants(original: str, seed: int) -> list[tuple[str, int, str]]:
    """(kind, amount, modified text) for every corruption of section 4.2, seeded."""
    rng = random.Random(seed)
    out = [("subst", p, substitute(original, p / 100, rng)) for p in SUBST_PERCENTS]
    out += [("blocks", b, insert_blocks(original, b, 500, rng)) for b in BLOCK_COUNTS]
    return out


def max_ld(length: int, unrelated: list[str]) -> int:
    """True LD between the document's unrelated peers cut to `length` (Coates' Max LD)."""
    return Levenshtein.distance(unrelated[0][:length], unrelated[1][:length])


def run(c: int, n: int, original: str, cases: list[tuple[str, int, str, int]], maxes: dict[int, int],
        seed: int = 0) -> list[dict]:
    """Estimated vs true LD for each prepared case (kind, amount, text, true LD)."""
    sig = coates.signature(original, c, n, 0, seed)
    rows = []
    for kind, amount, text, true in cases:
        est = coates.estimated_edit_distance(sig, coates.signature(text, c, n, 0, seed))
        m = maxes[len(text)]
        rows.append({"kind": kind, "amount": amount, "true": true, "est": est, "max": m, "error": (true - est) / m})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--cs", default="50,100,200")
    parser.add_argument("--ns", default="4")
    parser.add_argument("--documents", type=int, default=1,
                        help="also repeat the mean-error summary with each of the next N-1 PAN-13 sources as the "
                             "document (robustness of a (c, n) choice beyond one text)")
    args = parser.parse_args()
    cs = [int(x) for x in args.cs.split(",")]
    ns = [int(x) for x in args.ns.split(",")]
    docs = coates_documents(3, min_source=13_508 + 5_000)
    original = docs[0][:13_508]
    long_peers = [d for d in docs[1:]]
    trials = []
    for seed in range(args.trials):
        prepared = [(k, a, t, Levenshtein.distance(original, t)) for k, a, t in variants(original, seed)]
        trials.append(prepared)
    lengths = {len(t) for prepared in trials for _, _, t, _ in prepared}
    maxes = {length: max_ld(length, long_peers) for length in lengths}
    print(f"document: {len(original)} chars; Max LD of unrelated same-size texts: {maxes[len(original)]:,}")
    outer = docs[1][:13_508] + original + docs[2][:13_508]
    summary = []
    for n in ns:
        for c in cs:
            print(f"\n### c={c}, n={n} (signature of the document: {len(coates.signature(original, c, n))} bits)\n")
            print("| C | N | change | true LD | est LD | max LD | error | Coates: true / est / error |")
            print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
            for row in run(c, n, original, trials[0], maxes):
                ref = (COATES_SUBST if row["kind"] == "subst" else COATES_BLOCKS).get((c, row["amount"]))
                label = f"{row['amount']}% subst" if row["kind"] == "subst" else f"{row['amount']} x 500 inserted"
                theirs = f"{ref[0]:,} / {ref[1]:,} / {ref[2]:+.4f}" if ref else "-"
                print(f"| {c} | {n} | {label} | {row['true']:,} | {row['est']:,} | {row['max']:,} | "
                      f"{row['error']:+.4f} | {theirs} |")
            errors = [abs(r["error"]) for prepared in trials for r in run(c, n, original, prepared, maxes)]
            sub_err = [abs(r["error"]) for prepared in trials for r in run(c, n, original, prepared, maxes)
                       if r["kind"] == "subst"]
            blk_err = [abs(r["error"]) for prepared in trials for r in run(c, n, original, prepared, maxes)
                       if r["kind"] == "blocks"]
            inner, whole = coates.signature(original, c, n), coates.signature(outer, c, n)
            emb = coates.embedding_distance(inner, whole)
            summary.append((c, n, len(inner), float(np.mean(sub_err)), float(np.mean(blk_err)), float(np.mean(errors)),
                            float(np.max(errors)), emb))
            print(f"\nembedding: document inside an equal-length text before and after: "
                  f"embedding_distance = {emb:,} (of {len(inner) * c:,} for no overlap); "
                  f"plain estimated LD = {coates.estimated_edit_distance(inner, whole):,} (true {2 * 13_508:,})")
    print(f"\n### mean |error| over {args.trials} seeded trials\n")
    print("| C | N | bits | subst mean | blocks mean | all mean | all max | embedding distance |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c, n, bits, sub, blk, mean, worst, emb in summary:
        print(f"| {c} | {n} | {bits} | {sub:.4f} | {blk:.4f} | {mean:.4f} | {worst:.4f} | {emb:,} |")
    if args.documents > 1:
        others = coates_documents(args.documents + 2)
        print(f"\n### mean |error| on {args.documents} documents ({args.trials} trials each)\n")
        print("| C | N | all mean | worst document mean | all max |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for n in ns:
            for c in cs:
                per_doc, worst = [], 0.0
                for k in range(args.documents):
                    doc, peers = others[k], [others[k + 1], others[k + 2]]
                    doc_maxes = {}
                    errors = []
                    for seed in range(args.trials):
                        cases = [(kind, a, t, Levenshtein.distance(doc, t)) for kind, a, t in variants(doc, seed)]
                        for length in {len(t) for _, _, t, _ in cases} - doc_maxes.keys():
                            doc_maxes[length] = max_ld(length, peers)
                        errors += [abs(r["error"]) for r in run(c, n, doc, cases, doc_maxes)]
                    per_doc.append(float(np.mean(errors)))
                    worst = max(worst, float(np.max(errors)))
                print(f"| {c} | {n} | {np.mean(per_doc):.4f} | {np.max(per_doc):.4f} | {worst:.4f} |")
    coates_all = [abs(v[2]) for v in COATES_SUBST.values()] + [abs(v[2]) for v in COATES_BLOCKS.values()]
    print(f"\nCoates' own tables: mean |error| {np.mean(coates_all):.4f}, max {np.max(coates_all):.4f}")


if __name__ == "__main__":
    main()
