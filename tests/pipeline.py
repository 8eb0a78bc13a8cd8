"""The engine's outputs for a list of texts, by the single-document functions or the batch API, and a
sha256 over all of them: what tests/test_batch.py compares and pins on generated texts, and
bench/check_corpora.py pins on PAN-13."""

from __future__ import annotations

import hashlib

import numpy as np

from scanner.core.config import Params
from scanner.engine.canon import canonicalize, canonicalize_many
from scanner.engine.sketch import (
    Shingled,
    Sketch,
    build_sketch,
    shingle_text,
    shingle_texts,
    sketch_and_winnow,
    winnow,
)

# one text's outputs: its shingles, its sketch, its winnowed (fingerprints, positions)
Outputs = tuple[Shingled, Sketch, tuple[np.ndarray, np.ndarray]]


def single_outputs(texts: list[str], params: Params) -> list[Outputs]:
    """Text by text: shingle_text, build_sketch on those shingles, winnow of their fingerprints."""
    outputs = []
    for t in texts:
        s = shingle_text(t, params)
        outputs.append((s, build_sketch(t, params, s), winnow(s.fingerprints, params.winnow_window)))
    return outputs


def batch_outputs(texts: list[str], params: Params) -> list[Outputs]:
    """All texts at once: shingle_texts, and sketch_and_winnow."""
    return [(sh, sk, w) for sh, (sk, w) in zip(shingle_texts(texts, params), sketch_and_winnow(texts, params))]


def corpus_digest(texts: list[str], params: Params, batch: bool) -> str:
    """sha256 over every output (tokens, fingerprints, sketches, Coates bits, winnowed anchors, character
    tokens) of the batch API (`batch`) or of the single-document functions."""
    h = hashlib.sha256()
    if batch:
        triples = batch_outputs(texts, params)
        chars = canonicalize_many(texts, "char")
    else:
        triples = single_outputs(texts, params)
        chars = [canonicalize(t, "char") for t in texts]
    for (sh, sk, (f, p)), c in zip(triples, chars):
        for a in (sh.tokens.hashes, sh.tokens.starts, sh.tokens.ends, sh.fingerprints):
            h.update(np.ascontiguousarray(a, "<u8").tobytes())
        h.update(sk.to_bytes())
        h.update(sk.coates.bits.encode())
        h.update(np.ascontiguousarray(f, "<u8").tobytes())
        h.update(np.ascontiguousarray(p, "<i8").tobytes())
        for a in (c.hashes, c.starts, c.ends):
            h.update(np.ascontiguousarray(a, "<u8").tobytes())
    return h.hexdigest()
