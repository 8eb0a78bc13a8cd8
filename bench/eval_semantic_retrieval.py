"""Would candidates found by meaning reach the sources that share no phrase? (issue 21, the next step)

For every PAN-13 class-04 (translation chain) pair with a reuse case, the suspicious document is compared
with all 289 sources by brute force: a source scores the number of the document's sentences that have a
partner in it at centred cosine >= 0.65 (the semantic pass's anchor). Prints where the true source ranks,
against the rankings `check` uses (shared winnowed anchors, `_candidate_ids`, and the documents' stored
vectors by meaning, `Index.nearest_in_meaning`) on a real index.

    .venv/bin/python bench/eval_semantic_retrieval.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_pan_pairs import PAN, _sha, _source_index, load_cases

from scanner.core.config import Params
from scanner.engine.align import AlignOptions, prepare_sentences
from scanner.engine.semantic import document_vector, similar_sentences
from scanner.engine.sketch import shingle_text
from scanner.services.check import _candidate_ids
from scanner.services.semantic import meaning_key, open_model


def summary(label: str, ranks: list[int | None]) -> str:
    found = [r for r in ranks if r is not None]
    return (f"| {label} | {sum(r == 0 for r in found)} | {sum(r < 3 for r in found)} | "
            f"{sum(r < 10 for r in found)} | {len(ranks) - len(found)} |")


def main() -> None:
    params = Params()
    model = open_model(True)
    if model is None:
        raise SystemExit("the sentence model is not installed")
    threshold = AlignOptions().semantic or 0.65
    vectors = {}
    for path in sorted((PAN / "src").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        vectors[path.name] = prepare_sentences(shingle_text(text, params), text, model).vectors
    index = _source_index(params, model)  # as `scanner scan` makes it: with the documents' vectors by meaning
    pairs, cases = load_cases(PAN / "04-translation-obfuscation")
    by_meaning: list[int | None] = []
    by_anchors: list[int | None] = []
    by_vector: list[int | None] = []
    for susp, src in pairs:
        if not any(c.suspicious == susp and c.source == src for c in cases):
            continue
        text = (PAN / "susp" / susp).read_text(encoding="utf-8")
        shingled = shingle_text(text, params)
        query = prepare_sentences(shingled, text, model).vectors
        scores = {name: len(set(similar_sentences(query, v, threshold)[0].tolist())) for name, v in vectors.items()}
        by_meaning.append(sorted(scores, key=lambda n: (-scores[n], n)).index(src))
        found = _candidate_ids(index, shingled, np.zeros(len(shingled.tokens), dtype=bool), params, 50)
        wanted = index.doc_id_for_sha256(_sha(PAN / "src" / src))
        ranks = [k for k, (doc_id, _) in enumerate(found) if doc_id == wanted]
        by_anchors.append(ranks[0] if ranks else None)
        nearest = index.nearest_in_meaning(document_vector(query), len(vectors), meaning_key(model))
        by_vector.append(nearest.index(wanted) if wanted in nearest else None)
    print(f"{len(by_meaning)} class-04 pairs; the true source's rank among the 289 sources")
    print("| ranking | first | top 3 | top 10 | not a candidate |")
    print("|---|---:|---:|---:|---:|")
    print(summary("shared winnowed anchors (check today)", by_anchors))
    print(summary("sentences alike in meaning (brute force)", by_meaning))
    print(summary("document vectors by meaning (stored; what `check` adds)", by_vector))


if __name__ == "__main__":
    main()
