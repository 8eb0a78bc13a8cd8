"""`check` latency of two checkouts on one index, paired: another checkout's package and this tree's.

`bench/ab_check.py` compares two indexes with one package; this compares two packages on one index (a change
of code): the other checkout's `scanner` is copied aside as `scanner_other` (`ab_step.py`), both open the
index in one process, and every query is checked by both, in both passes (lexical, then with the sentence
model, which first alternating from query to query, and which package first too), so the machine's drift
falls on both alike. Prints each side's medians, the median and mean of the per-query differences (this -
other), each side's semantic / lexical ratio, and whether every report is the same.

    .venv/bin/python bench/ab_check_trees.py OTHER_CHECKOUT [--db /tmp/bench_check.db] [--queries 200]

The index and the queries are `bench_check.py`'s (build it once with `bench_check.py --queries 1`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab_step import _RENAMED, _renamed_copy
from bench_check import pan13_queries

import scanner.index
import scanner.services.check
import scanner.services.semantic

_PASSES = ("lexical", "semantic")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its scanner/ is copied aside)")
    parser.add_argument("--db", type=Path, default=Path("/tmp/bench_check.db"))
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    queries = pan13_queries(args.queries)
    seconds: dict[tuple[str, str], list[float]] = {(side, mode): [] for side in ("other", "this") for mode in _PASSES}
    same = 0
    with tempfile.TemporaryDirectory() as scratch:
        _renamed_copy(args.other.resolve(), Path(scratch))
        sys.path.insert(0, scratch)
        modules = {"other": [__import__(f"{_RENAMED}.{name}", fromlist=["_"])
                             for name in ("index", "services.check", "services.semantic")],
                   "this": [scanner.index, scanner.services.check, scanner.services.semantic]}
        sides = {}
        for side, (index_module, check_module, semantic_module) in modules.items():
            index = index_module.Index.open(args.db)
            options = {"lexical": check_module.CheckOptions(),
                       "semantic": check_module.CheckOptions(semantic=semantic_module.open_model(True))}
            for mode in _PASSES:  # warm: the model's tables, the index's first pages
                check_module.check_text(queries[0], index, index.params, options[mode])
            sides[side] = (index, check_module, options)
        for n, query in enumerate(queries):
            for mode in _PASSES if n % 2 == 0 else tuple(reversed(_PASSES)):
                reports = {}
                for side in ("other", "this") if n % 4 < 2 else ("this", "other"):
                    index, check_module, options = sides[side]
                    started = time.perf_counter()
                    report = check_module.check_text(query, index, index.params, options[mode])
                    seconds[(side, mode)].append(time.perf_counter() - started)
                    reports[side] = repr(report.matches).replace(f"{_RENAMED}.", "scanner.")
                same += reports["other"] == reports["this"]
        for index, _, _ in sides.values():
            index.close()
    for mode in _PASSES:
        before, after = seconds[("other", mode)], seconds[("this", mode)]
        differences = [b - a for a, b in zip(before, after)]
        median, mean = statistics.median(differences) * 1e3, statistics.mean(differences) * 1e3
        print(f"{mode}: other p50 {statistics.median(before) * 1e3:.2f} ms, this {statistics.median(after) * 1e3:.2f}"
              f" ms; per query this - other: median {median:+.2f} ms, mean {mean:+.2f} ms")
    for side in ("other", "this"):
        ratio = statistics.median(seconds[(side, "semantic")]) / statistics.median(seconds[(side, "lexical")])
        print(f"{side}: semantic / lexical p50 {ratio:.3f}")
    print(f"the same reports: {same} / {len(_PASSES) * len(queries)}")


if __name__ == "__main__":
    main()
