"""Paired timing of a whole `scanner` command: another checkout's package against this tree's, alternating.

    .venv/bin/python bench/ab_cli.py OTHER_CHECKOUT [--rounds 10] [--fresh INDEX] -- scan FOLDER --index INDEX ...

Each run is a new process (`python -m scanner ARGS`) with the checkout first on PYTHONPATH, started from an
empty working folder: `python -m` puts the working folder first on `sys.path`, so a run started inside a
checkout would load that checkout's package whatever PYTHONPATH says (session 25's paired start-up figures
were this tree against itself for that reason). Which checkout runs first alternates every round, since this
machine's speed moves by the minute. `--fresh INDEX`: delete that index (and its WAL, shared memory and lock
files) before every run, so each one creates it (a scan of an empty folder "with index creation").
The other checkout needs this tree's compiled loops beside its engine (`scanner/engine/loops*.so`) to be
compared fairly; they are linked there when missing (copy its own build there to compare the loops too, and
always for a checkout older than f2e3080, whose aligner calls `kept_fragments`, which this tree's lack).
Both trees are byte-compiled first: with PYTHONDONTWRITEBYTECODE set, an uncompiled tree compiles every
module it imports in every run (a first session-27 comparison showed `check` 20 % faster for that alone).
The built-in plugins are the installed ones (`scanner_plugins`, this tree's `plugins/`) on both sides.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from common import compile_package  # noqa: E402


def _link_loops(tree: Path) -> None:
    engine = tree / "scanner" / "engine"
    if not list(engine.glob("loops*.so")):
        for built in (REPO / "scanner" / "engine").glob("loops*.so"):
            (engine / built.name).symlink_to(built)


def _remove_index(index: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (a git worktree of an earlier commit)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--fresh", type=Path, default=None, help="an index to delete before every run")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, command = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    if not command:
        parser.error("no scanner command given (after --)")
    trees = {"other": args.other.resolve(), "this": REPO}
    _link_loops(trees["other"])
    for tree in trees.values():  # a tree left uncompiled compiles every module it imports in every run
        compile_package(tree)
    seconds: dict[str, list[float]] = {"other": [], "this": []}
    with tempfile.TemporaryDirectory() as neutral:
        for k in range(args.rounds):
            for name in ("other", "this") if k % 2 == 0 else ("this", "other"):
                if args.fresh is not None:
                    _remove_index(args.fresh)
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "scanner", *command], cwd=neutral, env=env, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                seconds[name].append(time.perf_counter() - started)
    for name in ("other", "this"):
        runs = seconds[name]
        print(f"{name:5s} {trees[name]}: mean {statistics.mean(runs):.3f} s, median {statistics.median(runs):.3f} s, "
              f"min {min(runs):.3f} s ({len(runs)} runs)")
    print(f"this / other: {statistics.median(seconds['this']) / statistics.median(seconds['other']):.3f} (medians)")


if __name__ == "__main__":
    main()
