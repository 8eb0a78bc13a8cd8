"""Load: a scan of 20,000 small real-text files, with files/s and peak RSS (parent + workers).

    .venv/bin/python bench/bench_load.py [--files 20000] [--jobs 2] [--keep DIR]

The files are reproducible (seeded) passages of 150-450 words cut from the
PAN-13 and Clough-Stevenson texts in ../shared/corpora, with a few planted
copies so the findings stage has work. The scan is the real CLI in a
subprocess; /proc is polled every 50 ms for the RSS of the whole process tree
(CLI, forkserver, extraction workers), so peak memory is the sum at one moment
as well as the largest single process. Prints one JSON line at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"


def _words() -> list[str]:
    words: list[str] = []
    for folder in (CORPORA / "pan13-text-alignment-subset", CORPORA / "clough-stevenson"):
        for path in sorted(folder.rglob("*.txt")):
            text = path.read_bytes().decode("utf-8", "replace")
            if "\x00" not in text:
                words.extend(text.split())
    if not words:
        raise SystemExit(f"no corpus texts under {CORPORA}")
    return words


def make_tree(root: Path, n_files: int, seed: int = 1) -> int:
    """n_files small real-text files in folders of 500; returns the bytes written."""
    words = _words()
    rng = random.Random(seed)
    total = 0
    previous: list[str] = []
    for i in range(n_files):
        folder = root / f"d{i // 500:03d}"
        if i % 500 == 0:
            folder.mkdir(parents=True)
        if previous and i % 97 == 0:  # a planted near-copy of an earlier file
            body = rng.choice(previous).replace(" the ", " THE ", 3)
        else:
            start = rng.randrange(len(words) - 500)
            body = " ".join(words[start : start + rng.randrange(150, 450)])
            if i % 50 == 0:
                previous.append(body)
        data = f"File {i}\n\n{body}\n".encode()
        (folder / f"f{i:05d}.txt").write_bytes(data)
        total += len(data)
    return total


def _tree_rss(root_pid: int) -> tuple[int, int]:
    """(sum, max) of VmRSS in bytes over root_pid and all its descendants."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            with open(f"/proc/{entry}/statm", "rb") as handle:
                rss[int(entry)] = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total = largest = 0
    stack = [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        largest = max(largest, rss.get(pid, 0))
        stack.extend(children.get(pid, []))
    return total, largest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="work in DIR and keep it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="scanner-load-"))
    work.mkdir(parents=True, exist_ok=True)
    tree, db = work / "tree", work / "load.db"
    try:
        if tree.exists():
            shutil.rmtree(tree)
        t0 = time.monotonic()
        written = make_tree(tree, args.files)
        print(f"generated {args.files} files, {written / 1e6:.1f} MB in {time.monotonic() - t0:.1f} s", flush=True)
        for suffix in ("", "-wal", "-shm", ".lock"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "scanner", "scan", str(tree), "--index", str(db), "--json",
                                 "--jobs", str(args.jobs), "--quiet"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        peak_sum = peak_one = 0
        samples = 0
        done = threading.Event()

        def poll() -> None:
            nonlocal peak_sum, peak_one, samples
            while not done.is_set():
                total, largest = _tree_rss(proc.pid)
                peak_sum, peak_one = max(peak_sum, total), max(peak_one, largest)
                samples += 1
                done.wait(0.05)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        out, err = proc.communicate()
        seconds = time.monotonic() - start
        done.set()
        poller.join()
        if proc.returncode != 0:
            print(err, file=sys.stderr)
            return proc.returncode
        doc = json.loads(out)
        result = {
            "files": args.files, "jobs": args.jobs, "mb": round(written / 1e6, 1),
            "files_indexed": doc["files_indexed"], "errors": len(doc["errors"]), "skipped": len(doc["skipped"]),
            "clusters": len(doc["clusters"]), "containments": len(doc["containments"]),
            "scan_seconds": doc["seconds"], "wall_seconds": round(seconds, 1),
            "files_per_second": round(args.files / seconds, 1),
            "peak_rss_tree_mib": round(peak_sum / 2**20, 1), "peak_rss_one_process_mib": round(peak_one / 2**20, 1),
            "rss_samples": samples, "index_mib": round(db.stat().st_size / 2**20, 1),
        }
        print(json.dumps(result))
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
