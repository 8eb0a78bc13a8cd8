"""`check` of many files against the same sources, with and without the sources kept prepared from one check
to the next (`CheckOptions.documents`: what a watch worker and a many-file `scanner check` do).

The index holds the 289 PAN-13 sources as `scanner scan` makes it (passage step, vectors by meaning); the
queries are the first 100 PAN-13 suspicious documents, checked each way in turn, twice. Prints ms a check
and whether every report is the same both ways.

    .venv/bin/python bench/bench_check_prepared.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_pan_pairs import PAN, _source_index

from scanner.core.config import Params
from scanner.services.check import CheckOptions, check_text
from scanner.services.prepared import PreparedSides
from scanner.services.semantic import open_model


def main() -> None:
    params = Params()
    model = open_model(True)
    index = _source_index(params, model)
    texts = [p.read_text(encoding="utf-8") for p in sorted((PAN / "susp").glob("*.txt"))[:100]]
    fresh = CheckOptions(semantic=model)
    kept = CheckOptions(semantic=model, documents=PreparedSides(index, params, model, max_tokens=500_000))
    for text in texts[:5]:
        check_text(text, index, params, fresh)  # the model's word cache and SQLite's pages warm for both
    same = True
    reference = None
    for label, options in (("sources read each check", fresh), ("sources kept prepared", kept)) * 2:
        started = time.perf_counter()
        reports = [check_text(text, index, params, options) for text in texts]
        print(f"{label}: {(time.perf_counter() - started) / len(texts) * 1000:.1f} ms a check")
        if reference is None:
            reference = reports
        same &= reports == reference
    print(f"every report identical both ways: {same}")


if __name__ == "__main__":
    main()
