"""Where the passage step's time goes (issue 20): one scanned index, its stored passages wiped, aligned again.

The scan is run once (`scanner scan ROOT... --index DB`); this copies DB, forgets its passages and runs
`align_index` with the given `--jobs`, timing its stages: candidate pairs, reading and shingling texts,
the verbatim pass, the sentence pass (and the bounds that spare most pairs of it), the documents'
vectors by meaning and their nearest partners, the rare-anchor filter and the writes. With `--jobs 0` the stages
are timed in this process (and `--profile` prints cProfile's top functions); with workers, only the
parent's stages and the whole step are timed.

    .venv/bin/python bench/profile_passages.py DB [--jobs N] [--profile] [--sort cumulative] [--compare] [--semantic]
                                               [--keep-vectors] [--save COPY]

With `--semantic` the documents' stored vectors by meaning are wiped too, so the step embeds every document
first, as a first scan's does (`--keep-vectors`: a rescan's step, which finds them stored).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.core.config import Params
from scanner.index import Index
from scanner.services import pair_alignment as aligner
from scanner.services import passages as step
from scanner.services import prepared


class StageTimer:
    """Seconds per named stage, summed over calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started
            self.calls[name] += 1

    def wrap(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return func(*args, **kwargs)
        return timed


def _instrument(timer: StageTimer) -> None:
    """Wrap the step's stages in this process (module attributes: what `align_pairs` calls)."""
    original_pair_passages = aligner.pair_passages

    def pair_passages(a: Any, b: Any, params: Params, options: Any, *rest: Any, **named: Any) -> Any:
        name = "sentence pass" if options.sentence_dice is not None else "verbatim pass"
        with timer.stage(name):
            return original_pair_passages(a, b, params, options, *rest, **named)

    aligner.pair_passages = pair_passages  # type: ignore[assignment]
    aligner.verbatim_runs_of = timer.wrap("verbatim runs", aligner.verbatim_runs_of)  # type: ignore[assignment]
    step.candidate_pairs = timer.wrap("candidate pairs", step.candidate_pairs)  # type: ignore[assignment]
    prepared.align_sides = timer.wrap("shingle + winnow", prepared.align_sides)  # type: ignore[assignment]
    aligner.embed_documents = timer.wrap("vectors by meaning", aligner.embed_documents)  # type: ignore[assignment]
    step.with_meaning_partners = timer.wrap("partners by meaning", step.with_meaning_partners)  # type: ignore[assignment]
    aligner.may_hold_anchor = timer.wrap("bounds (may_hold_anchor)", aligner.may_hold_anchor)  # type: ignore[assignment]
    aligner.anchors_close_enough_many = timer.wrap(  # type: ignore[assignment]
        "anchors close enough", aligner.anchors_close_enough_many)
    aligner._hold_rare_anchors = timer.wrap("rare-anchor filter", aligner._hold_rare_anchors)  # type: ignore[assignment]
    for name in ("common_fingerprints", "documents_with_text", "pairing_inputs", "texts"):
        setattr(Index, name, timer.wrap(name, getattr(Index, name)))
    from scanner.index.passages import PassageTable
    PassageTable.put_rows = timer.wrap("write (commits apart)", PassageTable.put_rows)  # type: ignore[method-assign]


def _stored_rows(index: Index) -> dict[tuple[int, int], tuple[int, int, bytes]]:
    rows = index._conn.execute("SELECT doc_a, doc_b, words_a, words_b, passages FROM passage_pairs")
    return {(a, b): (wa, wb, bytes(blob)) for a, b, wa, wb, blob in rows}


def _compare(before: dict[tuple[int, int], tuple[int, int, bytes]],
             after: dict[tuple[int, int], tuple[int, int, bytes]]) -> str:
    """Whether the step stored exactly the passages the scan's index holds."""
    same = sum(1 for key, row in after.items() if before.get(key) == row)
    return (f"  against the index's stored passages: {same} pairs identical, {len(after) - same} different or new, "
            f"{len(set(before) - set(after))} missing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path)
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--compare", action="store_true", help="compare the passages with those DB holds")
    parser.add_argument("--sort", default="tottime", help="cProfile order: tottime or cumulative")
    parser.add_argument("--semantic", action="store_true", help="with the semantic pass's sentence model")
    parser.add_argument("--keep-vectors", action="store_true",
                        help="keep the documents' stored vectors by meaning (a rescan's step; else embedded again)")
    parser.add_argument("--save", type=Path, help="keep the copy aligned again here (to --compare another tree's)")
    args = parser.parse_args()
    timer = StageTimer()
    _instrument(timer)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "copy.db"
        shutil.copy(args.db, db)
        with Index.open(db, readonly=False) as index:
            params = index.params
            index.passages.use_key({"wiped": True})
            if args.semantic and not args.keep_vectors:  # embedded again too, as a first scan does
                index.meaning.use_key({"wiped": True})
            profiler = cProfile.Profile() if args.profile else None
            started = time.perf_counter()
            if profiler:
                profiler.enable()
            model = None
            if args.semantic:
                from scanner.sources.models import load_model

                model = load_model()
            run = step.align_index(index, params, jobs=args.jobs, model=model)
            if profiler:
                profiler.disable()
            total = time.perf_counter() - started
            if args.compare:
                with Index.open(args.db) as stored:
                    print(_compare(_stored_rows(stored), _stored_rows(index)))
        if args.save is not None:
            shutil.copy(db, args.save)
    print(f"{args.db}: jobs {args.jobs}: {run.candidates} candidate pairs, {run.pairs} with passages, "
          f"{run.without_text} without text; step {total:.2f} s")
    for name, seconds in sorted(timer.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28s} {seconds:7.2f} s  {timer.calls[name]:7d} calls")
    if profiler:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)


if __name__ == "__main__":
    main()
