"""Time the whole-index findings of a scanned index (what a scan stores after its passage step, and what
`clusters` and the TUI read): clusters and containments, passage pairs, each document's share, their JSON.

Prints the seconds and a SHA-256 of the findings' JSON, so two versions of the code can be compared on the
same index (run it from each checkout in turn): the same hash is the same findings.

    .venv/bin/python bench/bench_findings.py DB [--runs N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.index import Index
from scanner.services.findings import find_similar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with Index.open(args.db) as index:
        for _ in range(args.runs):
            started = time.perf_counter()
            findings = find_similar(index, index.params)
            found = time.perf_counter()
            text = json.dumps(findings.to_json(), sort_keys=True)
            done = time.perf_counter()
            print(f"{args.db.name}: findings {found - started:.2f} s, JSON {done - found:.2f} s "
                  f"({len(text) / 1e6:.1f} MB); {len(findings.clusters)} clusters, {len(findings.containments)} "
                  f"containments, {len(findings.passage_pairs)} passage pairs, {len(findings.documents)} documents; "
                  f"sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
