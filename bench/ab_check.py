"""`check` latency on two indexes, paired: each query checked on both, which goes first alternating.

A variant run second finds the pages the first run read still warm (the candidates' texts, rows and
postings), so an A/B that always runs it second shows a gain that is only the cache's: in session 15, three
changes measured that way looked 0.6-0.8 ms faster and were in fact as fast or slower. This script runs A
then B on even queries and B then A on odd ones, and prints the medians and the median and mean of the
per-query differences (B - A), and whether every report is the same on both (its matches' documents,
measures and passages).

    .venv/bin/python bench/ab_check.py A.db B.db [--queries 200] [--semantic]

Run it twice with the indexes swapped: a change that is real changes sign with them. The queries are
`bench_check.py`'s (10 KB of PAN-13 suspicious text each), so A and B are typically `bench_check.py`'s
index and a copy changed one way (sealed, compacted, rebuilt by another version).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_check import pan13_queries

from scanner.index import Index
from scanner.services.check import CheckOptions, check_text


def _summary(report) -> list[tuple]:
    """What a report found, without the document ids (two indexes of the same texts may number them apart)."""
    return [(m.sha256, round(m.resemblance, 9), round(m.containment_query_in_doc, 9),
             [(p.query_start, p.query_end, p.doc_start, p.doc_end, p.kind) for p in m.passages])
            for m in report.matches]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--semantic", action="store_true", help="with the sentence model (the CLI's default)")
    args = parser.parse_args()
    model = None
    if args.semantic:
        from scanner.services.semantic import open_model

        model = open_model(True)  # as `scanner check` loads it: with one BLAS thread for the process
    options = CheckOptions(semantic=model)
    queries = pan13_queries(args.queries)
    with Index.open(args.a) as first, Index.open(args.b) as second:
        indexes = (first, second)
        for query in queries[:3]:  # both warmed alike: the model's word cache, the filter, the vectors
            for index in indexes:
                check_text(query, index, index.params, options)
        seconds: tuple[list[float], list[float]] = ([], [])
        same = 0
        for number, query in enumerate(queries):
            found = {}
            for side in ((0, 1) if number % 2 == 0 else (1, 0)):
                index = indexes[side]
                started = time.perf_counter()
                found[side] = _summary(check_text(query, index, index.params, options))
                seconds[side].append(time.perf_counter() - started)
            same += found[0] == found[1]
    differences = [(b - a) * 1000 for a, b in zip(*seconds)]
    print(f"A {args.a}: p50 {statistics.median(seconds[0]) * 1000:.2f} ms; B {args.b}: p50 "
          f"{statistics.median(seconds[1]) * 1000:.2f} ms")
    print(f"B - A per query: median {statistics.median(differences):+.2f} ms, "
          f"mean {statistics.mean(differences):+.2f} ms; the same report for {same} of {len(queries)} queries")


if __name__ == "__main__":
    main()
