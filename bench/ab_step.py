"""The passage step's alignment, paired: another checkout's package and this tree's align the same tasks.

Whole-step timings on this project's shared machines move by 10-25 % from one hour to the next (the same
code took 953 s one day and 847 s the next at 100,000 documents), which hides a 5-10 % change, and a
first A/B of 40 tasks once showed a change as a gain that was a loss. Here both packages run in one
process: the other checkout's `scanner` is copied aside as `scanner_other` (its imports renamed), each
side opens the index and keeps its own prepared documents, and task after task is aligned by both, which
goes first alternating; each side's CPU seconds are summed, and the passages compared task by task.

    .venv/bin/python bench/ab_step.py DB OTHER_TREE [--starts 1000,8000,15000,22000,28000] [--count 30] [--semantic]

DB: an index a scan (or `bench_million.py --stages build`) made. Its step's plan (the candidate pairs and
which get the sentence pass) and its very common fingerprints are computed once by this tree and kept
beside it (DB.plan.npz, DB.common.npy). OTHER_TREE: a checkout (`git worktree add /tmp/old COMMIT`); its
compiled loops are taken from this tree when it has none built. They only ever gained functions, but one:
`kept_fragments` became `overlaps_resolved` in session 28 (f2e3080), so a checkout older than that needs its
own build copied into its `scanner/engine/` (`cp` of the `.so` its commit built).
`--semantic`: each side loads its own sentence model and aligns with it, as a scan's step does by default
(without it, the lexical passes alone).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from scanner.index import Index
from scanner.services import pair_alignment
from scanner.services import passages as step

_RENAMED = "scanner_other"


def _renamed_copy(tree: Path, into: Path) -> None:
    """`tree`'s scanner package as `scanner_other` under `into`, importing itself under that name."""
    target = into / _RENAMED
    shutil.copytree(tree / "scanner", target, ignore=shutil.ignore_patterns("__pycache__"))
    for source in target.rglob("*.py"):
        text = source.read_text()
        text = re.sub(r"\bscanner\.", f"{_RENAMED}.", text)
        text = re.sub(r"\bfrom scanner import\b", f"from {_RENAMED} import", text)
        text = re.sub(r"^import scanner$", f"import {_RENAMED}", text, flags=re.MULTILINE)
        source.write_text(text)
    engine = target / "engine"
    if not list(engine.glob("loops*.so")):
        for built in (Path(__file__).resolve().parents[1] / "scanner" / "engine").glob("loops*.so"):
            shutil.copy(built, engine)


def _plan(db: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The step's candidate pairs, whether each gets the sentence pass, and the very common fingerprints."""
    plan_file, common_file = Path(f"{db}.plan.npz"), Path(f"{db}.common.npy")
    with Index.open(db, readonly=True) as index:
        params = index.params
        if not plan_file.exists():
            ranks = index.content_ranks()
            live, _ = index.pairing_inputs(params.common_shingle_share)
            pairs, worthy = step.candidate_pairs(index, params, live, ranks)
            plan = step._plan(index, None, live, live, pairs, worthy, ranks, pair_alignment.query_order)
            np.savez(plan_file, pairs=plan.pairs, worthy=plan.worthy)
        if not common_file.exists():
            np.save(common_file, index.common_fingerprints(params.common_shingle_share))
    saved = np.load(plan_file)
    return saved["pairs"], saved["worthy"], np.load(common_file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("other", type=Path, help="the other checkout (its scanner/ is copied aside)")
    parser.add_argument("--starts", default="1000,8000,15000,22000,28000", help="first task of each run")
    parser.add_argument("--count", type=int, default=30, help="tasks a run")
    parser.add_argument("--semantic", action="store_true", help="with each side's sentence model")
    args = parser.parse_args()
    pairs, worthy, common = _plan(args.db)
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as opened:
        _renamed_copy(args.other.resolve(), Path(scratch))
        sys.path.insert(0, scratch)
        from scanner.services import prepared
        # the aligner is `services.pair_alignment` since session 26, `services.passages` before
        aligner = ("services.pair_alignment" if (args.other / "scanner/services/pair_alignment.py").exists()
                   else "services.passages")
        from scanner.sources import models
        other = [__import__(f"{_RENAMED}.{name}", fromlist=["_"])
                 for name in ("index", aligner, "services.prepared", "sources.models")]
        sides = {}
        for name, (index_module, step_module, prepared_module, models_module) in (
                ("other", other), ("this", (sys.modules["scanner.index"], pair_alignment, prepared, models))):
            index = opened.enter_context(index_module.Index.open(args.db, readonly=True))
            model = models_module.load_model() if args.semantic else None
            cache = prepared_module.PreparedSides(index, index.params, model, prepared_module.cache_tokens(2),
                                                  step_module.SENTENCE_MAX_TOKENS)
            sides[name] = (step_module, cache, index.params, index.content_ranks())
        ranks = sides["this"][3]
        rows = np.concatenate((pairs, worthy[:, None].astype(np.int64), ranks[pairs]), axis=1)
        chunk = step._CHUNK_PAIRS
        tasks = [int(first) + k for first in args.starts.split(",") for k in range(args.count)]
        seconds: dict[str, list[float]] = {"other": [], "this": []}
        same = found = 0
        for n, task in enumerate(tasks):
            chosen = rows[task * chunk:(task + 1) * chunk].tolist()
            out = {}
            for name in ("other", "this") if n % 2 == 0 else ("this", "other"):
                step_module, cache, params, _ = sides[name]
                started = time.process_time()
                out[name] = step_module.align_pairs(cache, params, chosen, common)
                seconds[name].append(time.process_time() - started)
            same += repr(out["other"]).replace(f"{_RENAMED}.", "scanner.") == repr(out["this"])
            found += len(out["this"])
    before, after = np.array(seconds["other"]), np.array(seconds["this"])
    print(f"{len(tasks)} tasks of {chunk} pairs, {found} pairs with passages; the same passages in {same} / "
          f"{len(tasks)} tasks")
    print(f"CPU: other {before.sum():.2f} s, this {after.sum():.2f} s: this / other {after.sum() / before.sum():.3f} "
          f"(task by task, median {statistics.median((after / np.maximum(before, 1e-9)).tolist()):.3f})")


if __name__ == "__main__":
    main()
