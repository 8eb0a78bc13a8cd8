"""FRASH-style fragment detection: a fragment of x% of a real document embedded in unrelated text.

For each x, every trial takes a PAN-13 source document D, cuts a contiguous
fragment of x% of its characters, and embeds it at a random place inside an
unrelated real document of about the same size. A tool "detects" when it
relates the result to D:

* scanner: `check_text` against an index of all the sources finds D with at
  least one shared passage (the same path `scanner check` takes);
* ssdeep (ppdeep): compare(hash(D), hash(result)) > 0;
* TLSH (py-tlsh): diff(hash(D), hash(result)) <= 100 (a common "related" cut-off).

All three run on the same trials in the same run.

    .venv/bin/python bench/eval_fragments.py [--trials 40]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import PAN13, read_text

from scanner.core.config import Params
from scanner.index import Index
from scanner.services.check import CheckOptions, check_text
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

SHARES = (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)


def main() -> None:
    import ppdeep
    import tlsh

    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    sources = sorted(p for p in (PAN13 / "src").glob("*.txt") if p.stat().st_size > 4000)
    hosts = [read_text(p) for p in sorted((PAN13 / "susp").glob("*.txt"))]
    hosts = [h for h in hosts if len(h) > 4000]
    rng = random.Random(13)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sources.db"
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan([str(PAN13 / "src")], index, make_plugin_manager(), Params(), jobs=0)
        with Index.open(db) as index:
            print("| fragment of D | trials | scanner check | ssdeep > 0 | TLSH diff <= 100 |")
            print("|---|---|---|---|---|")
            for share in SHARES:
                hits = {"scanner": 0, "ssdeep": 0, "tlsh": 0}
                for _ in range(args.trials):
                    path = rng.choice(sources)
                    doc = read_text(path)
                    length = max(1, int(share * len(doc)))
                    start = rng.randrange(0, len(doc) - length + 1)
                    fragment = doc[start:start + length]
                    host = rng.choice(hosts)[: len(doc)]
                    cut = host.rfind(" ", 0, rng.randrange(0, len(host))) + 1
                    mixed = host[:cut] + fragment + " " + host[cut:]
                    report = check_text(mixed, index, index.params, CheckOptions(top=20))
                    hits["scanner"] += any(m.path.endswith(path.name) and m.passages for m in report.matches)
                    hits["ssdeep"] += ppdeep.compare(ppdeep.hash(doc), ppdeep.hash(mixed)) > 0
                    a, b = tlsh.hash(doc.encode()), tlsh.hash(mixed.encode())
                    hits["tlsh"] += a not in ("", "TNULL") and b not in ("", "TNULL") and tlsh.diff(a, b) <= 100
                n = args.trials
                print(f"| {100 * share:g}% | {n} | {hits['scanner'] / n:.2f} | {hits['ssdeep'] / n:.2f} | "
                      f"{hits['tlsh'] / n:.2f} |")


if __name__ == "__main__":
    main()
