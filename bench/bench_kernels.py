"""The semantic pass's compiled kernels against another build of them, or their numpy forms, in one run.

Two kernels, each both ways, alternating, best of `--runs`, on real inputs:
  * `loops.subword_sums`: 20,000 words of 1-3 subword rows of the shipped model's float16 table summed
    (what a process pays for each word it meets first); the sums compared to the bit;
  * the search by meaning (`semantic.MeaningSpace.nearest`, whose first stage is `loops.meaning_candidates`):
    200 searches for 15 among the vectors by meaning of an index (default: `bench_check.py`'s 100,000);
    the rows found compared.

The other side is the numpy form of each (`semantic.compiled` set to None), or, with `--other-build
PATH.so`, another build of the loops module (a worktree's, say: the same kernels before a change).

    .venv/bin/python bench/bench_kernels.py [--db /tmp/bench_check.db] [--runs 3] [--other-build PATH.so]
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import best_seconds_interleaved

from scanner.engine import semantic
from scanner.engine.semantic import MeaningSpace
from scanner.index import Index
from scanner.sources.models import load_model


def _other_build(path: Path) -> ModuleType:
    """A loops module built elsewhere, loaded beside this one under another name."""
    loader = importlib.machinery.ExtensionFileLoader("loops", str(path))
    spec = importlib.util.spec_from_file_location("loops", str(path), loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/bench_check.db"),
                        help="an index with vectors by meaning (bench_check.py's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--other-build", type=Path, default=None)
    args = parser.parse_args()
    this = semantic.compiled
    if this is None:
        raise SystemExit("the compiled loops were not built: nothing to compare")
    other = _other_build(args.other_build) if args.other_build is not None else None
    other_name = f"build {args.other_build}" if other is not None else "numpy forms"

    def use(module: ModuleType | None) -> None:
        setattr(semantic, "compiled", module)  # noqa: B010 - a module global swapped for the run

    table = load_model().table
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, 4, 20_000)
    ids = rng.integers(0, table.shape[0], int(lengths.sum()))
    sums = {side: np.empty((lengths.shape[0], table.shape[1]), dtype=np.float32) for side in ("this", "other")}
    counts = np.empty(lengths.shape[0], dtype=np.float32)

    def summed(side: str, module: ModuleType | None) -> None:
        use(module)
        semantic._subword_sums(table, ids, lengths, sums[side], counts)

    this_s, other_s = best_seconds_interleaved([lambda: summed("this", this), lambda: summed("other", other)],
                                               args.runs)
    same_sums = sums["this"].tobytes() == sums["other"].tobytes()

    with Index.open(args.db) as index:
        _, vectors = index.meaning.vectors()
    space = MeaningSpace.of(vectors)
    use(this)
    space.prepare_search()
    probes = vectors[rng.integers(0, vectors.shape[0], 200)] + rng.normal(0, 0.01, (200, vectors.shape[1])).astype(
        np.float32)
    found: dict[str, list[list[int]]] = {}

    def searched(side: str, module: ModuleType | None) -> None:
        use(module)
        found[side] = [space.nearest(probe, 15).tolist() for probe in probes]

    this_n, other_n = best_seconds_interleaved([lambda: searched("this", this), lambda: searched("other", other)],
                                               args.runs)
    use(this)
    same_rows = sum(a == b for a, b in zip(found["this"], found["other"]))
    print(f"{len(lengths):,} words; {vectors.shape[0]:,} vectors by meaning of {vectors.shape[1]} dimensions; "
          f"best of {args.runs}")
    print(f"| kernel | this build | {other_name} | other / this |")
    print("|---|---:|---:|---:|")
    print(f"| subword sums | {this_s / len(lengths) * 1e6:.3f} us a word | "
          f"{other_s / len(lengths) * 1e6:.3f} us a word | {other_s / this_s:.2f}x |")
    print(f"| search by meaning (15 of {vectors.shape[0]:,}) | {this_n / len(probes) * 1e3:.3f} ms | "
          f"{other_n / len(probes) * 1e3:.3f} ms | {other_n / this_n:.2f}x |")
    print(f"the same sums to the bit: {same_sums}; the same rows found for {same_rows} / {len(probes)} searches")


if __name__ == "__main__":
    main()
