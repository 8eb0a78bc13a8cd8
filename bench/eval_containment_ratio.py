"""Containment of a 2,000-character part in hosts 2x to 100x its size, by `scanner scan` (issue 15).

For each host size and share of the part taken from the host (100 % and 60 %), prints the exact
containment and what the scan's findings report: "before" with Broder's size-class samples alone
(L_i at the common modulus), "after" with the winnowed-fingerprint estimate for a thin sample.
Generated text (a Zipf vocabulary of made-up words), so it runs anywhere:

    .venv/bin/python bench/eval_containment_ratio.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import zipf_writer

import scanner.engine.sketch as sketch_module
from scanner.core.config import Params
from scanner.engine.sketch import exact_containment, shingle_text
from scanner.index import Index
from scanner.services.findings import find_similar
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

PART = 2000


def main() -> None:
    params = Params(min_containment=0.3)
    work = Path(tempfile.mkdtemp(prefix="containment-ratio-"))
    print("| host | ratio | share | exact | before (sketch only) | after |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for host_kb in (4, 16, 32, 64, 101, 200):
        for share in (1.0, 0.6):
            text = zipf_writer(host_kb * 10 + int(share * 10))
            host = text(host_kb * 1000)
            start = len(host) // 3
            inside = host[start:start + int(PART * share)]
            part = inside if share == 1.0 else inside + " " + text(int(PART * (1 - share)))
            folder = work / f"{host_kb}-{share}"
            folder.mkdir()
            (folder / "host.txt").write_text(host, encoding="utf-8")
            (folder / "part.txt").write_text(part, encoding="utf-8")
            exact = exact_containment(shingle_text(part, params).distinct, shingle_text(host, params).distinct)
            found = []
            for min_samples in (0, 48):  # 0: Theorem 1 on the size-class samples whatever their number
                sketch_module.MIN_SKETCH_SAMPLES = min_samples
                db = folder / f"i{min_samples}.db"
                with Index.open(db, readonly=False) as index:
                    run_scan([folder], index, make_plugin_manager(load_entry_points=False), params, jobs=0,
                             exclude=["*.db*"])
                    findings = find_similar(index, index.params)
                pairs = [f"{c.containment:.3f} ±{c.error:.3f}" for c in findings.containments]
                found.append(", ".join(pairs) or "not found")
            print(f"| {host_kb} KB | 1:{len(host) // PART} | {share:.0%} | {exact:.3f} | {found[0]} | {found[1]} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
