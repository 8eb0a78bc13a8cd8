"""How long the TUI takes to show its first screen on an index, and then all of its findings (issue 20).

The real app under Textual's Pilot (headless, 160x48): the time from starting it until the Findings tab
has drawn its first screen (the stored head of the findings: summary, histogram, tables), and until the
rest of the findings has loaded and the tables were filled again (a fresh process each run). Run it on an
index that a scan wrote (its findings and their head are stored); on an index without them, the first run
computes them.

    .venv/bin/python bench/bench_tui_first_screen.py DB [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.faces.tui import make_app
from scanner.faces.tui.app import ScannerApp


async def one_run(db: str) -> tuple[float, float, int, int]:
    """(seconds to the first screen, seconds to all findings, rows then shown, rows in all)."""
    marks: list[tuple[float, int]] = []
    shown = ScannerApp.on_findings_loaded

    def record(self: ScannerApp, message) -> None:  # type: ignore[no-untyped-def]
        shown(self, message)
        rows = len(message.view.rows) if message.view is not None else 0
        marks.append((time.perf_counter(), rows))

    ScannerApp.on_findings_loaded = record  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        app = make_app(db, scan_jobs=0)
        async with app.run_test(size=(160, 48)) as pilot:
            while not marks:
                await pilot.pause(0.01)
            await app.workers.wait_for_complete()
            await pilot.pause()
    finally:
        ScannerApp.on_findings_loaded = shown  # type: ignore[method-assign]
    return marks[0][0] - started, marks[-1][0] - started, marks[0][1], marks[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one run, in this process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(one_run(args.db))))
        return
    print("| run | first screen s | all findings s | rows first | rows in all |")
    print("|---|---:|---:|---:|---:|")
    for run in range(1, args.runs + 1):  # a fresh process each, as a user starts the TUI
        out = subprocess.run([sys.executable, __file__, args.db, "--one"], capture_output=True, text=True,
                             check=True).stdout
        first, whole, rows_first, rows_all = json.loads(out.strip().splitlines()[-1])
        print(f"| {run} | {first:.2f} | {whole:.2f} | {rows_first:,} | {rows_all:,} |")


if __name__ == "__main__":
    main()
