"""Throughput of the sketch pipeline against datasketch and rensa, on one core.

Run:  .venv/bin/python bench/bench_sketch.py [--repeat 5] [--batch-chars N]

All are fed the same PAN-13 texts (every src and susp .txt, ~4.7 MB).
datasketch and rensa get the usual preparation, document by document:
lower-case, split on non-word characters, join w words into a shingle string,
then update (update_batch for datasketch). Our figures are the whole pipeline
as a scan runs it: canonicalize + shingle + build_sketch (MIN_s, L_i,
supershingles, digests and the Coates signature) + winnowing, both through
the batch API (`sketch_and_winnow`, many documents per numpy pass, what a scan runs) and
document by document (`shingle_text` + `build_sketch` + `winnow`). Best of
`repeat` runs.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from common import (
    best_seconds,
    best_seconds_interleaved,
    coates_documents,
    pan13_texts,
    script_texts,
    substitute,
    total_mb,
)
from rapidfuzz.distance import Levenshtein

from scanner.core.config import Params
from scanner.engine import canon, coates
from scanner.engine.canon import canonicalize, canonicalize_many
from scanner.engine.sketch import (
    build_sketch,
    build_sketches,
    shingle_text,
    shingle_texts,
    sketch_and_winnow,
    winnow,
)

_WORD = re.compile(r"\w+")


def _shingle_strings(text: str, w: int) -> list[bytes]:
    words = _WORD.findall(text.lower())
    return [" ".join(words[i : i + w]).encode("utf-8") for i in range(max(len(words) - w + 1, 1))]


def run_datasketch(texts: list[str], w: int) -> None:
    from datasketch import MinHash

    for text in texts:
        m = MinHash(num_perm=128)
        m.update_batch(_shingle_strings(text, w))


def run_rensa(texts: list[str], w: int) -> None:
    from rensa import RMinHash

    for text in texts:
        words = _WORD.findall(text.lower())
        m = RMinHash(num_perm=128, seed=42)
        m.update([" ".join(words[i : i + w]) for i in range(max(len(words) - w + 1, 1))])
        m.digest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch-chars", type=int, default=canon.BATCH_CHARS,
                        help=f"characters per batch of the batch API (default {canon.BATCH_CHARS})")
    args = parser.parse_args()
    canon.BATCH_CHARS = args.batch_chars
    params = Params()
    texts = pan13_texts()
    mb = total_mb(texts)
    print(f"corpus: {len(texts)} PAN-13 documents, {mb:.2f} MB; params w={params.shingle_size} "
          f"s={params.sample_size} c={params.coates_c} n={params.coates_n} winnow={params.winnow_window}; "
          f"batch {canon.BATCH_CHARS:,} chars")

    rows: list[tuple[str, float]] = []

    def measure(name: str, fn) -> float:
        seconds = best_seconds(fn, args.repeat)
        rows.append((name, mb / seconds))
        return mb / seconds

    def single_pipeline() -> None:
        for t in texts:
            shingled = shingle_text(t, params)
            build_sketch(t, params, shingled)
            winnow(shingled.fingerprints, params.winnow_window)

    # the rows behind the ratios take turns (see best_seconds_interleaved)
    headline = [
        ("scanner batch pipeline (sketch_and_winnow: canonicalize+shingle+sketch+winnow, what a scan runs)",
         lambda: sketch_and_winnow(texts, params)),
        ("scanner batch sketch pipeline (build_sketches: canonicalize+shingle+MIN_s+L_i+supershingles"
         "+digests+Coates, no winnowing)", lambda: build_sketches(texts, params)),
        ("datasketch MinHash(num_perm=128) update_batch", lambda: run_datasketch(texts, params.shingle_size)),
        ("rensa RMinHash(num_perm=128)", lambda: run_rensa(texts, params.shingle_size)),
    ]
    timed = best_seconds_interleaved([fn for _, fn in headline], args.repeat)
    batch, sketch_only, ds, rs = (mb / seconds for seconds in timed)
    rows.extend((name, mb / seconds) for (name, _), seconds in zip(headline, timed))
    measure("  of which canonicalize_many", lambda: canonicalize_many(texts))
    measure("  of which shingle_texts (canonicalize+shingle)", lambda: shingle_texts(texts, params))
    measure("  of which coates.signatures_many",
            lambda: coates.signatures_many(texts, params.coates_c, params.coates_n))
    single = measure("scanner pipeline document by document (shingle_text+build_sketch+winnow)", single_pipeline)
    measure("  of which canonicalize", lambda: [canonicalize(t) for t in texts])
    measure("  of which canonicalize+shingle", lambda: [shingle_text(t, params) for t in texts])
    measure("  of which Coates signature",
            lambda: [coates.signature(t, params.coates_c, params.coates_n) for t in texts])
    whole = "\n".join(texts)
    measure("scanner single-document pipeline, corpus as one document", lambda: build_sketch(whole, params))

    print("\n| what | MB/s (1 core) |\n| --- | ---: |")
    for name, rate in rows:
        print(f"| {name} | {rate:,.1f} |")
    print(f"\nratio batch / datasketch: {batch / ds:.1f}x; batch / rensa: {batch / rs:.2f}x; "
          f"batch / document by document: {batch / single:.2f}x")
    print(f"ratio sketch pipeline (no winnowing) / datasketch: {sketch_only / ds:.1f}x; "
          f"/ rensa: {sketch_only / rs:.2f}x")
    print(f"ratio document by document / datasketch: {single / ds:.1f}x; / rensa: {single / rs:.2f}x")

    # other scripts: the non-ASCII paths (wide points, CJK cuts, expansions) on real text
    print("\nOther scripts (real article text, repeated to 1 MB, 10 KB documents; both sides timed in turn):")
    print("| script | scanner build_sketches MB/s | datasketch MB/s | ratio |\n| --- | ---: | ---: | ---: |")
    for script, docs in script_texts().items():
        ours, theirs = best_seconds_interleaved(
            [functools.partial(build_sketches, docs, params),
             functools.partial(run_datasketch, docs, params.shingle_size)], args.repeat)
        size = total_mb(docs)
        print(f"| {script} | {size / ours:.1f} | {size / theirs:.1f} | {theirs / ours:.1f}x |")

    # Coates 4.1: pairs of 13,508-character documents
    docs = coates_documents(2)
    import random

    rng = random.Random(7)
    a, b = docs[0], substitute(docs[0], 0.05, rng)
    unrelated = docs[1]
    sigs = [coates.signature(x, params.coates_c, params.coates_n) for x in (a, b, unrelated)]
    exact_pairs = 20
    t_exact = best_seconds(lambda: [Levenshtein.distance(a, unrelated) for _ in range(exact_pairs)], args.repeat)
    est_pairs = 20_000
    t_est = best_seconds(lambda: [coates.estimated_edit_distance(sigs[0], sigs[2]) for _ in range(est_pairs)],
                         args.repeat)
    batch_pairs = [(sigs[0], sigs[2])] * est_pairs
    t_batch = best_seconds(lambda: coates.estimated_edit_distances(batch_pairs, workers=1), args.repeat)
    cores = os.cpu_count() or 1
    t_threads = best_seconds(lambda: coates.estimated_edit_distances(batch_pairs, workers=-1), args.repeat)
    t_sig = best_seconds(lambda: [coates.signature(x, params.coates_c, params.coates_n) for x in docs * 200],
                         args.repeat)
    print(f"\nCoates 4.1 on 13,508-char unrelated pairs (c={params.coates_c}, n={params.coates_n}, "
          f"signature {len(sigs[0])} bits):")
    print("| what | rate |\n| --- | ---: |")
    print(f"| exact Levenshtein (rapidfuzz) | {exact_pairs / t_exact:,.0f} pairs/s |")
    print(f"| estimated LD (signatures given) | {est_pairs / t_est:,.0f} pairs/s |")
    print(f"| estimated LD, batch (`estimated_edit_distances`, 1 thread) | {est_pairs / t_batch:,.0f} pairs/s |")
    print(f"| estimated LD, batch ({cores} threads) | {est_pairs / t_threads:,.0f} pairs/s |")
    print(f"| signatures of 13.5 KB texts | {400 / t_sig:,.0f} docs/s ({400 * len(a) / t_sig / 1e6:,.0f} MB/s) |")
    for c in (50, 100, 200):
        s1, s2 = (coates.signature(x, c, 4) for x in (a, unrelated))
        t = best_seconds(lambda s1=s1, s2=s2: [coates.estimated_edit_distance(s1, s2) for _ in range(est_pairs)],
                         args.repeat)
        print(f"| estimated LD, c={c} n=4 ({len(s1)} bits) | {est_pairs / t:,.0f} pairs/s |")
    _ = np  # numpy is imported for the pipeline's sake


if __name__ == "__main__":
    main()
