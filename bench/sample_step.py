"""Where a large passage step's time goes, from a sample of its tasks (issue 20).

`profile_passages.py` aligns a whole step again, which takes twenty minutes on real folders whose documents
share boilerplate (the Rust standard library's pages, `/usr/share/doc`). This aligns every `--every`-th task
of the step's plan in this process, as a worker does (with the sentence model unless `--lexical`), and prints
the stage timers of `profile_passages.py`, the slowest tasks, and with `--profile` cProfile's top functions.

    .venv/bin/python bench/sample_step.py DB [--every 50] [--lexical] [--profile] [--sort tottime]

DB: an index a scan made; its step's plan and very common fingerprints are computed once and kept beside it
(DB.plan.npz, DB.common.npy, as `ab_step.py` keeps them).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from ab_step import _plan
from profile_passages import StageTimer, _instrument

from scanner.index import Index
from scanner.services import pair_alignment as aligner
from scanner.services import passages as step
from scanner.services.prepared import PreparedSides, cache_tokens
from scanner.sources.models import load_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--every", type=int, default=50, help="align every N-th task of the plan")
    parser.add_argument("--lexical", action="store_true", help="without the sentence model")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime", help="cProfile order: tottime or cumulative")
    args = parser.parse_args()
    pairs, worthy, common = _plan(args.db)
    timer = StageTimer()
    _instrument(timer)
    model = None if args.lexical else load_model()
    profiler = cProfile.Profile()
    with Index.open(args.db, readonly=True) as index:
        ranks = index.content_ranks()
        rows = np.concatenate((pairs, worthy[:, None].astype(np.int64), ranks[pairs]), axis=1)
        chunk = step._CHUNK_PAIRS
        tasks = -(-rows.shape[0] // chunk)
        sides = PreparedSides(index, index.params, model, cache_tokens(2), aligner.SENTENCE_MAX_TOKENS)
        seconds: list[tuple[float, int, int]] = []
        for task in range(0, tasks, args.every):
            started = time.perf_counter()
            if args.profile:
                profiler.enable()
            done = aligner.do_task(sides, index.params, aligner.PairsTask(rows[task * chunk:(task + 1) * chunk]
                                                                          .tolist(), task), common)
            if args.profile:
                profiler.disable()
            assert isinstance(done, aligner.Aligned)  # a task of pairs
            seconds.append((time.perf_counter() - started, task, len(done.rows)))
    total = sum(spent for spent, _, _ in seconds)
    print(f"{len(seconds)} of {tasks} tasks of {chunk} pairs: {total:.1f} s in this process "
          f"(x {args.every}: ~{total * args.every:.0f} s for the whole step on one core)")
    for spent, task, found in sorted(seconds, reverse=True)[:8]:
        print(f"  task {task}: {spent:.2f} s, {found} pairs with passages")
    for name, spent in sorted(timer.seconds.items(), key=lambda item: -item[1]):
        print(f"  {name:28s} {spent:7.2f} s  {timer.calls[name]:7d} calls")
    if args.profile:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(30)


if __name__ == "__main__":
    main()
