"""`scanner watch`: latency from a complete file to its alert, and a burst of files dropped at once.

The protected index holds every PAN-13 source document (289 real texts),
indexed by the scan service. A real watchdog observer watches a temporary
folder; the default `WatchOptions` (settle 0.25 s, 2 worker processes) are used.

* latency: a 100 KB text (PAN-13 suspicious texts, with one protected
  paragraph pasted in the middle) appears complete in the watched folder,
  either by rename (how browsers and `rsync` finish a file) or written in
  place in one `write`; the clock runs from the moment the file is complete
  to the `on_alert` callback;
* a slow writer: one file written in six pieces over 3 s with pauses of 0.5 s,
  held open throughout: alerts raised for it (one, for its final content) and
  the delay from its close to the alert;
* copies: one leak copied under 500 names at once: alert groups raised (one)
  and the follow-up lines naming the copies;
* unrelated: 1,000 files of generated prose (tests/corpus.py) moved in at once: no alert;
* burst: N files (1 % planted leaks, the rest 1-4 KB windows of the PAN-13
  suspicious documents of the no-plagiarism class) moved in at once; wall
  time until all are checked, checks per file, and the peak RSS of the
  watcher process and of its workers.

    .venv/bin/python bench/bench_watch.py --trials 10 --burst 1000
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # corpus.prose: unrelated text

from common import PAN13, read_text

from scanner.core.config import Params
from scanner.index import Index
from scanner.services.passages import align_index
from scanner.services.scan import run_scan
from scanner.services.semantic import lazy_model
from scanner.services.watch import Alert, Watcher, WatchEvent, WatchOptions
from scanner.sources.plugins import make_plugin_manager


class Sink:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.alerts: dict[str, float] = {}
        self.raised: list[Alert] = []  # every alert and follow-up, in order
        self.checked: list[str] = []

    def alert(self, alert: Alert) -> None:
        with self.lock:
            self.raised.append(alert)
            if not alert.followup:
                self.alerts.setdefault(alert.path, time.monotonic())

    def event(self, event: WatchEvent) -> None:
        if event.kind == "checked":
            with self.lock:
                self.checked.append(event.path)


def peak_rss_of_descendants() -> list[int]:
    """VmHWM (MiB) of every live process below this one (the forkserver and the workers)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
    mine, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - mine
        mine |= frontier
    peaks = []
    for pid in sorted(mine):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) // 1024)
    return sorted(peaks, reverse=True)


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return condition()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=WatchOptions().jobs)
    parser.add_argument("--copies", type=int, default=500, help="copies of one leak dropped at once")
    parser.add_argument("--unrelated", type=int, default=1000, help="unrelated files dropped at once")
    args = parser.parse_args()
    rng = random.Random(6)
    work = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    try:
        sources = sorted((PAN13 / "src").glob("*.txt"))
        db = work / "protected.db"
        began = time.monotonic()
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan([str(PAN13 / "src")], index, make_plugin_manager(), Params(), jobs=os.cpu_count() or 1)
            # as `scanner scan` leaves it: passages, and the documents' vectors by meaning (issue 21)
            align_index(index, Params(), model=lazy_model(True))
        print(f"protected index: {len(sources)} PAN-13 sources in {time.monotonic() - began:.1f} s "
              f"(passage step included)")
        # unrelated text: suspicious documents of the no-plagiarism class (the others reuse the sources)
        clean = sorted({line.split()[0] for line in (PAN13 / "01-no-plagiarism" / "pairs").read_text().splitlines()
                        if line.strip()})
        filler = "\n".join(read_text(PAN13 / "susp" / name) for name in clean)
        paragraph_source = max(sources, key=lambda p: p.stat().st_size)
        src_text = read_text(paragraph_source)
        paragraph = src_text[1000:1700]

        watched, staging = work / "watched", work / "staging"
        watched.mkdir()
        staging.mkdir()
        sink = Sink()
        watcher = Watcher(str(db), [str(watched)], WatchOptions(jobs=args.jobs), on_alert=sink.alert,
                          on_event=sink.event)
        watcher.start()
        watcher.wait_idle(30)
        time.sleep(1.0)  # workers up
        latencies: dict[str, list[float]] = {"rename": [], "write": []}
        for trial in range(args.trials):
            start = rng.randrange(0, len(filler) - 120_000)
            text = filler[start:start + 50_000] + "\n\n" + paragraph + "\n\n" + filler[start + 50_000:start + 100_000]
            for how in ("rename", "write"):
                text = text + f"\n{how}\n"  # a content of its own: the same content alerts once (alert groups)
                target = watched / f"{how}-{trial:03d}.txt"
                if how == "rename":
                    staged = staging / target.name
                    staged.write_text(text, encoding="utf-8")
                    complete = time.monotonic()
                    os.rename(staged, target)
                else:
                    with open(target, "w", encoding="utf-8") as handle:
                        handle.write(text)
                    complete = time.monotonic()
                if not wait_for(lambda target=target: str(target) in sink.alerts, 30):
                    raise SystemExit(f"no alert for {target}")
                latencies[how].append(sink.alerts[str(target)] - complete)
        size = len(text.encode("utf-8"))
        for how, values in latencies.items():
            values.sort()
            print(f"latency ({how}, {size // 1000} KB): median {statistics.median(values):.3f} s, "
                  f"max {values[-1]:.3f} s over {len(values)} trials")

        # a slow writer: six pieces over 3 s, pauses of 0.5 s, the file held open (a download, a slow copy)
        with sink.lock:
            sink.raised.clear()
        slow = watched / "slow-writer.txt"
        text = filler[:30_000] + "\n\n" + paragraph + "\n\n" + filler[30_000:60_000]
        with open(slow, "w", encoding="utf-8") as handle:
            step = len(text) // 6 + 1
            for i in range(6):
                handle.write(text[i * step:(i + 1) * step])
                handle.flush()
                time.sleep(0.5)
        closed = time.monotonic()
        wait_for(lambda: str(slow) in sink.alerts, 30)
        time.sleep(2.0)
        mine = [a for a in sink.raised if a.path == str(slow)]
        final = hashlib.sha256(slow.read_bytes()).hexdigest()
        print(f"slow writer (6 pieces over 3 s, held open): {len(mine)} alert(s), "
              f"{sum(a.sha256 == final for a in mine)} for the final content, "
              f"{sink.checked.count(str(slow))} check(s); alert {sink.alerts[str(slow)] - closed:.3f} s after close")

        # 500 copies of one leak, dropped at once: one alert group, the copies named in follow-ups
        with sink.lock:
            sink.raised.clear()
            sink.checked.clear()
        leak = filler[70_000:72_000] + "\n\n" + paragraph
        for i in range(args.copies):
            (staging / f"copy-{i:04d}.txt").write_text(leak, encoding="utf-8")
        for i in range(args.copies):
            os.rename(staging / f"copy-{i:04d}.txt", watched / f"copy-{i:04d}.txt")
        wait_for(lambda: len(sink.checked) >= args.copies, 300)
        time.sleep(WatchOptions().followup_every + 1.0)
        groups = [a for a in sink.raised if not a.followup]
        followups = [a for a in sink.raised if a.followup]
        named = len(groups[0].paths) + sum(len(a.paths) for a in followups) if groups else 0
        print(f"{args.copies} copies of one leak: {len(groups)} alert group(s), {len(followups)} follow-up line(s) "
              f"naming {named} paths in all")

        # 1,000 unrelated files (generated English-like prose, tests/corpus.py): no alert at all
        from corpus import prose

        with sink.lock:
            sink.raised.clear()
            sink.checked.clear()
        for i in range(args.unrelated):
            (staging / f"u{i:05d}.txt").write_text(prose(40_000 + i, 400), encoding="utf-8")
        for i in range(args.unrelated):
            os.rename(staging / f"u{i:05d}.txt", watched / f"u{i:05d}.txt")
        wait_for(lambda: len(sink.checked) >= args.unrelated, 300)
        time.sleep(1.0)
        print(f"{args.unrelated} unrelated files: {len(set(sink.checked))} checked, {len(sink.raised)} alert(s)")
        for alert in sink.raised:  # what an unrelated text shares with a source, if anything
            for match in alert.matches:
                passages = "; ".join(repr(p["text"][:120]) for p in match["passages"])
                print(f"  {Path(alert.path).name} ~ {Path(match['path']).name}: {match['rules']} {passages}")

        # burst
        with sink.lock:
            sink.checked.clear()
            sink.alerts.clear()
        names = []
        for i in range(args.burst):
            if i % 100 == 7:
                body = filler[i * 97:i * 97 + 2000] + "\n\n" + paragraph
            else:
                start = rng.randrange(0, len(filler) - 5000)
                body = filler[start:start + rng.randrange(1000, 4000)]
            name = f"b{i:05d}.txt"
            (staging / name).write_text(body, encoding="utf-8")
            names.append(name)
        began = time.monotonic()
        for name in names:
            os.rename(staging / name, watched / name)
        ok = wait_for(lambda: len(sink.checked) >= args.burst, 600)
        elapsed = time.monotonic() - began
        time.sleep(1.0)
        workers = peak_rss_of_descendants()
        watcher.stop()
        checked = list(sink.checked)
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"burst: {args.burst} files moved in at once, {len(checked)} checks of {len(set(checked))} files "
              f"({'all' if ok else 'NOT all'} checked) in {elapsed:.1f} s = {len(checked) / elapsed:.0f} files/s; "
              f"jobs={args.jobs}")
        planted = {str(watched / names[i]) for i in range(7, args.burst, 100)}
        print(f"alerts: {len(planted & set(sink.alerts))} of {len(planted)} planted leaks, and "
              f"{len(set(sink.alerts) - planted)} files whose PAN-13 text really shares a passage of "
              f"{WatchOptions().min_words}+ words with a source (Wikipedia boilerplate, census paragraphs)")
        print(f"peak RSS: watcher process {own} MiB, workers {', '.join(f'{w} MiB' for w in workers)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
