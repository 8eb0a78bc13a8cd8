"""Base texts on real answers nobody here wrote: Clough & Stevenson's 95 short answers, with and without
their five source articles as base text.

The answers were written by 19 students to five questions, each question with a source excerpt from
Wikipedia that the students copied (cut), revised lightly or heavily, or did not use (non). No student
copied another: any passage two answers share came through the source, which is what a teacher who hands
out a reading leaves out. One `scanner scan --json` of the answers alone, then one with the five sources
as `--base`; pairs are counted by kind (the two answers' categories), and the documents listed as found
elsewhere with their mean share.

    .venv/bin/python bench/eval_base_clough.py [--git REV | --tree DIR]
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_evasion import REPO, Scanner, add_tree_options, scanner_tree

CLOUGH = REPO.parent / "shared" / "corpora" / "clough-stevenson"
CORPUS = CLOUGH / "corpus-20090418"


def categories() -> dict[str, tuple[str, str]]:
    """Answer file -> (task, category)."""
    with open(CLOUGH / "corpus-final09_File_list.csv", newline="") as handle:
        return {row["File"]: (row["Task"], row["Category"]) for row in csv.DictReader(handle)}


def measure(found: dict, labels: dict[str, tuple[str, str]]) -> dict[str, object]:
    kinds: Counter[str] = Counter()
    words = 0
    for pair in found["passage_pairs"]:
        (task_a, cat_a), (task_b, cat_b) = labels[Path(pair["a"]).name], labels[Path(pair["b"]).name]
        kinds["same task" if task_a == task_b else "other task"] += 1
        if task_a == task_b:
            kinds["-".join(sorted((cat_a, cat_b)))] += 1
        words += pair["shared_words"]
    listed = [d for d in found["documents"] if d["share"] > 0]
    return {"passage_pairs": len(found["passage_pairs"]), "shared_words": words,
            "documents_listed": len(listed),
            "mean_share_listed": round(sum(d["share"] for d in listed) / len(listed), 3) if listed else 0.0,
            "clusters": len(found["clusters"]), "containments": len(found["containments"]),
            **{f"pairs {kind}": count for kind, count in sorted(kinds.items())}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_options(parser)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    labels = categories()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tree, label = scanner_tree(args, work)
        answers = work / "answers"
        answers.mkdir()
        for name in labels:
            shutil.copyfile(CORPUS / name, answers / name)
        sources = [str(CORPUS / f"orig_task{task}.txt") for task in "abcde"]
        scanner = Scanner(tree, work)
        print(f"{label}: {len(labels)} answers of Clough & Stevenson")
        for title, extra in (("without base", []), ("sources as base", [x for s in sources for x in ("--base", s)])):
            started = time.perf_counter()
            found = scanner.json("scan", str(answers), "--index", str(work / f"{len(extra)}.db"), *extra)
            seconds = time.perf_counter() - started
            print(f"  {title} ({seconds:.1f} s):")
            for key, value in measure(found, labels).items():
                print(f"    {key:>24}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
