"""Issue 20's case, on real texts: 80 essays, 20 of which lift one passage of 60-150 words from another
(5-15 % of the host). After one `scanner scan` (the real CLI, default options), how many of the 20 are
listed in `documents` with their source, how close their share is to the planted one, and what else is
listed.

The essays are PAN-13 source documents (`../shared/corpora`) cut at paragraph breaks into pieces of
6,000-7,000+ characters; each lifted passage is a run of whole words of another essay, inserted as a
paragraph of its own.

    .venv/bin/python bench/eval_lifted.py [--essays 80] [--lifts 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAN_SRC = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "pan13-text-alignment-subset" / "src"


def _essays_of(text: str, low: int = 6_000, high: int = 7_000) -> list[str]:
    """A source document cut at paragraph breaks into essays of `low` to about `high` characters."""
    out, current = [], ""
    for paragraph in text.split("\n"):  # PAN's texts: one paragraph a line
        current = f"{current}\n{paragraph}" if current else paragraph
        if len(current) >= high:
            out.append(current)
            current = ""
    if len(current) >= low:
        out.append(current)
    return [essay for essay in out if len(essay) >= low]


def build(folder: Path, essays: int, lifts: int, seed: int) -> dict[str, tuple[str, float]]:
    """Write the essays; returns host -> (source, planted share of the host's words)."""
    rng = random.Random(seed)
    texts = [essay for p in sorted(PAN_SRC.glob("*.txt")) for essay in _essays_of(p.read_text(encoding="utf-8"))]
    rng.shuffle(texts)
    texts = texts[:essays]
    planted: dict[str, tuple[str, float]] = {}
    hosts = rng.sample(range(essays), lifts)
    for host in hosts:
        host_words = len(texts[host].split())
        share = rng.uniform(0.05, 0.15)
        words = max(60, min(150, round(share * host_words / (1 - share))))
        source = rng.choice([i for i in range(essays) if i != host and i not in hosts])
        tokens = texts[source].split()
        start = rng.randrange(0, len(tokens) - words)
        paragraphs = texts[host].split("\n")
        at = rng.randrange(1, max(2, len(paragraphs)))
        texts[host] = "\n".join(paragraphs[:at] + [" ".join(tokens[start:start + words])] + paragraphs[at:])
        planted[f"essay-{host:02d}.txt"] = (f"essay-{source:02d}.txt", words / len(texts[host].split()))
    for i, text in enumerate(texts):
        (folder / f"essay-{i:02d}.txt").write_text(text, encoding="utf-8")
    return planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--essays", type=int, default=80)
    parser.add_argument("--lifts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eval-lifted-"))
    folder = work / "essays"
    folder.mkdir()
    planted = build(folder, args.essays, args.lifts, args.seed)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "scanner", "scan", str(folder), "--index", str(work / "i.db"),
                           "--json"], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(done.stderr)
    result = json.loads(done.stdout)
    listed = {Path(d["path"]).name: d for d in result["documents"]}
    found, errors = 0, []
    for host, (source, share) in sorted(planted.items()):
        row = listed.get(host)
        sources = [Path(s["path"]).name for s in row["sources"]] if row else []
        hit = row is not None and source in sources
        found += hit
        if hit:
            errors.append(abs(row["share"] - share))
        print(f"{host} <- {source}: planted {share:.3f}, listed "
              f"{row['share']:.3f} from {', '.join(sources)}" if row else f"{host} <- {source}: NOT LISTED")
    sources_of_lifts = {source for source, _ in planted.values()}
    others = sorted(set(listed) - set(planted) - sources_of_lifts)
    print()
    print("| essays | lifts | listed with their source | max share error | mean share error | other documents "
          "listed | passage pairs | scan s (whole CLI) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.essays} | {args.lifts} | {found} | {max(errors, default=0):.3f} | "
          f"{sum(errors) / max(len(errors), 1):.3f} | {len(others)} | {len(result['passage_pairs'])} | {seconds:.1f} |")
    if others:
        print("other documents listed:", ", ".join(others))


if __name__ == "__main__":
    main()
