"""PAN 2026 "Generative plagiarism detection" spot check: is each LLM-written paper's source found? (issue 21)

The official spot-check sample (`../shared/corpora/pan25-generated-plagiarism-samples/clef26-spot-check-dataset`):
4 suspicious papers an LLM wrote from one of 2 real arXiv papers, and 10 candidate sources (the 2 papers and 8
small distractors), with TREC relevance judgements. Each candidate is written to a file and scanned into a new
index; each paper is checked with `scanner check --json`, with and without the semantic pass. Printed per
query: the rank of its source among the matches (by share of the query found in it), the share, the passages'
kinds, and whether a distractor is matched.

    .venv/bin/python bench/eval_pan26_spot.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from common import CORPORA

SPOT = CORPORA / "pan25-generated-plagiarism-samples" / "clef26-spot-check-dataset"
REPO = Path(__file__).resolve().parents[1]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=REPO, capture_output=True, text=True)


def main() -> None:
    corpus, queries = _lines(SPOT / "corpus.jsonl"), _lines(SPOT / "queries.jsonl")
    judged = (line.split() for line in (SPOT / "qrels.txt").read_text().splitlines() if line.strip())
    relevant = {qid: doc for qid, _, doc, grade in judged if int(grade) > 0}
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        (root / "corpus").mkdir()
        for doc in corpus:
            name = f"{doc['doc_id'].replace('/', '_')}.md"
            (root / "corpus" / name).write_text(doc["default_text"], encoding="utf-8")
        files = []
        for query in queries:
            files.append(root / f"query-{query['qid']}.md")
            files[-1].write_text(query["query"], encoding="utf-8")
        index = root / "index.db"
        scanned = _cli("scan", str(root / "corpus"), "--index", str(index), "--quiet")
        assert scanned.returncode == 0, scanned.stderr
        print("| pass | query | source | its rank | share of the query found in it | passages (kinds) "
              "| distractors matched |")
        print("|---|---|---|---:|---:|---|---:|")
        for semantic in ("--no-semantic", "--semantic"):
            checked = _cli("check", *map(str, files), "--index", str(index), "--json", "--quiet", semantic)
            assert checked.returncode in (0, 1), checked.stderr
            for query, result in zip(queries, json.loads(checked.stdout)["results"]):
                source = relevant[query["qid"]].replace("/", "_")
                matches = result["matches"]
                names = [Path(m["path"]).stem for m in matches]
                rank = names.index(source) + 1 if source in names else None
                match = matches[rank - 1] if rank else None
                kinds = Counter(p["kind"] for p in match["passages"]) if match else Counter()
                distractors = sum(name.startswith("doc-") for name in names)
                share = f"{100 * match['query_share']:.1f} %" if match and match["query_share"] is not None else "-"
                print(f"| {semantic.lstrip('-')} | {query['qid']} | {relevant[query['qid']]} | {rank or 'not found'} "
                      f"| {share} | {sum(kinds.values())} ({', '.join(f'{k} {n}' for k, n in kinds.items()) or '-'}) "
                      f"| {distractors} |")


if __name__ == "__main__":
    main()
