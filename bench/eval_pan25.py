"""PAN 2025 "Generated (LLM) plagiarism": are the LLM-paraphrased paragraphs found? (issue 21)

The official sample (`../shared/corpora/pan25-generated-plagiarism-samples`, five pairs of arXiv papers)
labels each candidate paragraph rewritten by an LLM from a source paragraph (`plagiarism`), rewritten
from elsewhere (`altered`, a hard negative), or the candidate's own. Each paper becomes one text
(paragraphs joined by blank lines); the candidate is aligned with its source, as `check` would, with and
without the semantic pass. A paragraph is found when passages cover at least `--cover` of its characters.

    .venv/bin/python bench/eval_pan25.py [--cover 0.5] [--through-index]

Prints, per pair and overall: plagiarised paragraphs found (recall), altered and own paragraphs touched
(false alarms), and the characters detected on the negative pair (000061, `original`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CORPORA

from scanner.core.config import Params
from scanner.engine.align import AlignOptions, align, covered_tokens
from scanner.engine.sketch import shingle_text

PAN25 = CORPORA / "pan25-generated-plagiarism-samples" / "clef25-transform-dataset-sample_raw"


@dataclass(frozen=True)
class Paper:
    text: str
    spans: list[tuple[int, int, str, str]]  # start, end, paragraph id, label ("plagiarism", "altered", "own")


def paper(doc: dict) -> Paper:
    """The paper's abstract and section paragraphs as one text, with each paragraph's span and label."""
    parts: list[str] = []
    spans = []
    at = 0
    paragraphs = [{"id": f"abstract{i}", "content": p} if isinstance(p, str) else p
                  for i, p in enumerate(doc.get("abstract") or [])]
    for section in doc.get("sections") or []:
        paragraphs += section.get("paragraphs") or []
    for para in paragraphs:
        content = (para.get("content") or "").strip()
        if not content:
            continue
        label = (para.get("plagiarism") or {}).get("type", "own")
        spans.append((at, at + len(content), str(para.get("id")), label))
        parts.append(content)
        at += len(content) + 2
    return Paper("\n\n".join(parts), spans)


def _cell(counts: list[int]) -> str:
    hit, total = counts
    return f"{hit}/{total}" + (f" ({hit / total:.2f})" if total else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cover", type=float, default=0.5, help="share of a paragraph's characters to count it")
    parser.add_argument("--through-index", action="store_true",
                        help="index the five source papers and run check_text on each candidate")
    args = parser.parse_args()
    params = Params()
    from scanner.sources.models import load_model

    model = load_model()
    pairs = []
    for path in sorted(PAN25.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        pairs.append((path.stem.split("-")[0], data["plagiarism"]["type"], paper(data["source"]),
                      paper(data["candidate"])))
    index = None
    if args.through_index:
        from scanner.index import Index
        from scanner.services.scan import run_scan
        from scanner.sources.plugins import make_plugin_manager

        folder = Path(tempfile.mkdtemp())
        for name, _, source, _ in pairs:
            (folder / f"{name}-source.txt").write_text(source.text, encoding="utf-8")
        db = folder / "pan25.db"
        with Index.open(db, readonly=False, params=params) as writer:
            run_scan([str(folder)], writer, make_plugin_manager(), params, jobs=0)
        index = Index.open(db)
    print(f"model {model.key}, a paragraph counts as found at {args.cover:.0%} of its characters"
          f"{', through an index of the five sources' if index else ''}")
    print("| pair | type | pass | plagiarised found | altered touched | own touched | chars detected | s |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    totals: dict[str, list[int]] = {}
    for name, kind, source, candidate in pairs:
        cand_sh = shingle_text(candidate.text, params)
        src_sh = shingle_text(source.text, params)
        for label, semantic in (("lexical", None), ("semantic", model)):
            started = time.perf_counter()
            if index is not None:
                from scanner.services.check import CheckOptions, check_text

                report = check_text(candidate.text, index, params, CheckOptions(top=10, semantic=semantic))
                passages = [p for m in report.matches if Path(m.path).name.startswith(name) for p in m.passages]
            else:
                passages = align(cand_sh, candidate.text, src_sh, source.text, params.shingle_size,
                                 AlignOptions(), model=semantic)
            seconds = time.perf_counter() - started
            # the candidate's characters inside a passage (the aligner's mask of [start, end) ranges)
            mask = covered_tokens([(p.query_start, p.query_end) for p in passages], len(candidate.text))
            counts = {"plagiarism": [0, 0], "altered": [0, 0], "own": [0, 0]}
            for start, end, _, para_label in candidate.spans:
                share = mask[start:end].mean() if end > start else 0.0
                counts[para_label][0] += int(share >= args.cover)
                counts[para_label][1] += 1
            for key, (hit, total) in counts.items():
                t = totals.setdefault(f"{label}:{key}", [0, 0])
                t[0] += hit
                t[1] += total
            totals.setdefault(f"{label}:negative chars", [0, 0])[0] += int(mask.sum()) if kind == "original" else 0

            print(f"| {name} | {kind} | {label} | {_cell(counts['plagiarism'])} | {_cell(counts['altered'])} | "
                  f"{_cell(counts['own'])} | {int(mask.sum())} | {seconds:.2f} |")
    for label in ("lexical", "semantic"):
        hit, total = totals[f"{label}:plagiarism"]
        alt_hit, alt_total = totals[f"{label}:altered"]
        own_hit, own_total = totals[f"{label}:own"]
        print(f"| all | | {label} | {hit}/{total} ({hit / total:.3f}) | {alt_hit}/{alt_total} | "
              f"{own_hit}/{own_total} | negative pair: {totals[f'{label}:negative chars'][0]} | |")


if __name__ == "__main__":
    main()
