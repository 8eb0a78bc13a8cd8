"""The first `check` in a fresh process against the later ones (issue 16: within 2x of a warm one).

Each run is a new Python process: it opens the index (default: `bench_check.py`'s 100,000-document one, OS
cache as it is), loads the sentence model when asked (timed apart: a process cost, not the index's), then
times four checks of different 10 KB PAN-13 suspicious texts. With the model, the index is opened first and
told a search by meaning is coming, as `scanner check` does (its vectors by meaning are then read on a
thread while the model loads); `--model-first` loads the model before opening the index, as a caller that
does not read ahead (the vectors are then read by the first check, on a thread while it looks its
candidates up). numpy's lazy import of numpy.ma (on its first
plain `np.unique`, ~15 ms) is paid before the index is opened and shown apart, as the model's load (which
includes warming its word cache on other text: PAN-13 sources the checks do not read). Prints
each run's first check, the median of the later ones and their ratio.

    .venv/bin/python bench/bench_first_check.py [--db /tmp/bench_check.db] [--runs 3] [--semantic]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import compile_package  # noqa: E402

_ONE_RUN = r"""
import json, sys, time
sys.path[:0] = [{root!r}, {bench!r}]
from common import PAN13, read_text
from scanner.index import Index
from scanner.services.check import CheckOptions, check_text
texts = [t for t in (read_text(p) for p in sorted((PAN13 / "susp").glob("*.txt"))[:40]) if len(t) > 3000]
import numpy as np
started = time.perf_counter()
np.unique(np.arange(3))  # numpy 2.x imports numpy.ma on the first plain unique (~15 ms): a process cost
warm_ms = (time.perf_counter() - started) * 1000
model, load_ms = None, None
index = None
if not {model_first!r}:
    index = Index.open({db!r})
    if {semantic!r}:
        index.read_meaning_ahead()  # as `scanner check` does before it loads the model
if {semantic!r}:
    from scanner.services.semantic import open_model
    started = time.perf_counter()
    model = open_model(True)  # as `scanner check` loads it: with one BLAS thread for the process
    # the model's word cache, warmed on other text (PAN-13 sources, none of which the checks below read):
    # encoding a word first seen costs the model, not the index
    from scanner.engine.canon import canonicalize
    from scanner.engine.semantic import sentence_vectors
    warm_text = " ".join(read_text(p) for p in sorted((PAN13 / "src").glob("*.txt"))[:20])
    warm_tokens = canonicalize(warm_text)
    sentence_vectors(model, warm_text, warm_tokens, np.array([0]), np.array([len(warm_tokens)]))
    load_ms = (time.perf_counter() - started) * 1000
times = []
with index if index is not None else Index.open({db!r}) as index:
    for text in texts[:4]:
        started = time.perf_counter()
        check_text(text[:10240], index, index.params, CheckOptions(semantic=model))
        times.append((time.perf_counter() - started) * 1000)
print(json.dumps({{"load_ms": load_ms, "warm_ms": warm_ms, "checks_ms": times}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="/tmp/bench_check.db")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--semantic", action="store_true", help="with the sentence model (the CLI's default)")
    parser.add_argument("--model-first", action="store_true", help="load the model before opening the index")
    args = parser.parse_args()
    compile_package()
    code = _ONE_RUN.format(root=str(ROOT), bench=str(ROOT / "bench"), semantic=args.semantic, db=args.db,
                           model_first=args.model_first)
    print(f"{args.db}, {'semantic pass on' if args.semantic else 'lexical only'}"
          f"{', model loaded before the index is opened' if args.model_first else ''}")
    print("| run | numpy.ma import ms | model load and warm-up ms | first check ms | later checks ms (median) "
          "| first / later |")
    print("|---:|---:|---:|---:|---:|---:|")
    for run in range(1, args.runs + 1):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        first, later = result["checks_ms"][0], statistics.median(result["checks_ms"][1:])
        load = f"{result['load_ms']:.0f}" if result["load_ms"] is not None else "-"
        print(f"| {run} | {result['warm_ms']:.0f} | {load} | {first:.1f} | {later:.1f} | {first / later:.2f}x |")


if __name__ == "__main__":
    main()
