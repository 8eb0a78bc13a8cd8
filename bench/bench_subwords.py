"""Words to subword ids: the compiled encoder (scanner/engine/subwords.py) against the tokenizers library, in one run.

Three figures, each both ways, alternating, best of `--runs`:
  * loading the sentence model (the tokenizer's tables against the library's loader);
  * encoding every distinct word of the PAN-13 texts (what a process meets for the first time), the ids
    compared word for word;
  * embedding 1,000 PAN-13 texts with a fresh model, 256 at a time as a scan's step does (word encoding,
    sums, sentence vectors), the vectors compared to the bit.

    .venv/bin/python bench/bench_subwords.py [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import PAN13, read_text

from scanner.engine import semantic, subwords
from scanner.engine.canon import canonicalize
from scanner.sources.models import load_model


def _library(use: bool) -> None:
    """Make load_model take the tokenizers library (use) or the compiled encoder."""
    subwords.compiled = None if use else _COMPILED


_COMPILED = subwords.compiled


def _embed_all(texts: list[str], tokens: list, spans: list) -> tuple[float, list[bytes]]:
    model = load_model()
    started = time.perf_counter()
    out: list[bytes] = []
    for lo in range(0, len(texts), 256):
        batch = spans[lo : lo + 256]
        made = semantic.sentence_vectors_many(model, texts[lo : lo + 256], tokens[lo : lo + 256],
                                              [s for s, _ in batch], [e for _, e in batch])
        out += [m.tobytes() for m in made]
    return time.perf_counter() - started, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if _COMPILED is None:
        sys.exit("the compiled module was not built: nothing to compare")
    files = sorted(PAN13.rglob("*.txt"))[:1000]
    texts = [read_text(f) for f in files]
    words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
    tokens = [canonicalize(t) for t in texts]
    spans = [(np.arange(0, len(t), 20), np.minimum(np.arange(0, len(t), 20) + 20, len(t))) for t in tokens]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    best: dict[str, dict[str, float]] = {"load": {}, "encode": {}, "embed": {}}
    ids: dict[str, list[list[int]]] = {}
    vectors: dict[str, list[bytes]] = {}
    for _ in range(args.runs):
        for side in ("compiled", "library"):
            _library(side == "library")
            try:
                started = time.perf_counter()
                model = load_model()
                loaded = time.perf_counter() - started
                started = time.perf_counter()
                flat, lengths = model.encode(words)
                encoded = time.perf_counter() - started
                ids[side] = [part.tolist() for part in np.split(flat, np.cumsum(lengths)[:-1])]
                embedded, vectors[side] = _embed_all(texts, tokens, spans)
            finally:
                _library(False)
            for name, seconds in (("load", loaded), ("encode", encoded), ("embed", embedded)):
                best[name][side] = min(best[name].get(side, seconds), seconds)
    same_ids = sum(a == b for a, b in zip(ids["compiled"], ids["library"]))
    same_vectors = sum(a == b for a, b in zip(vectors["compiled"], vectors["library"]))
    print(f"{len(words):,} distinct words; {len(texts):,} texts, {megabytes:.1f} MB; best of {args.runs}")
    print("| step | compiled | tokenizers library | library / compiled |")
    print("|---|---:|---:|---:|")
    load, encode, embed = best["load"], best["encode"], best["embed"]
    print(f"| load the model | {load['compiled'] * 1e3:.0f} ms | {load['library'] * 1e3:.0f} ms | "
          f"{load['library'] / load['compiled']:.1f}x |")
    print(f"| encode each word once | {encode['compiled'] / len(words) * 1e6:.2f} us a word | "
          f"{encode['library'] / len(words) * 1e6:.2f} us a word | {encode['library'] / encode['compiled']:.1f}x |")
    print(f"| embed the texts, fresh model | {megabytes / embed['compiled']:.1f} MB/s | "
          f"{megabytes / embed['library']:.1f} MB/s | {embed['library'] / embed['compiled']:.1f}x |")
    print(f"the same ids for {same_ids:,} / {len(words):,} words; the same vectors for {same_vectors:,} / "
          f"{len(texts):,} texts")


if __name__ == "__main__":
    main()
