"""Base text: what every document of a set may hold by design (an assignment's template, starter code, a form
to fill in), and which is therefore no evidence between two of them: MOSS's base files, the template a
plagiarism service is told to leave out.

A token is base text when a shingle of a base text covers it: its place in the document holds a w-word run
that the base holds. A shingle of the base pairs no documents and is left out of the Theorem 1 samples; a
shingle holding any base token (the base's, and those straddling its edges) seeds no passage, and a
sentence that rewords a base sentence seeds no reworded one. Leaving a set T out of the samples keeps
Broder's estimators unbiased: the
elements of MIN_s(A) not in T are the smallest of A \\ T (any smaller one would have been in MIN_s(A)), so
they are a bottom-k sample of A \\ T with k what is left; and L_i(A) \\ T is exactly L_i(A \\ T).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scanner.core.config import Params
from scanner.engine.align import prepare_sentences
from scanner.engine.arrays import distinct, in_sorted
from scanner.engine.sentences import Sentences, sentence_pairs
from scanner.engine.sketch import Shingled, shingle_text, shingle_texts


@dataclass(frozen=True)
class Base:
    """Base text as the findings and the aligner use it: every shingle of it, and its sentences."""

    fingerprints: np.ndarray  # sorted uint64 (`base_fingerprints`)
    sentences: Sentences | None  # of all the base texts (None: none)

    @classmethod
    def of(cls, texts: Sequence[str], params: Params) -> "Base":
        if not texts:
            return cls(np.empty(0, dtype=np.uint64), None)
        joined = "\n\n".join(texts)  # sentences end at a blank line: none spans two texts
        return cls(base_fingerprints(shingle_texts(list(texts), params)),
                   prepare_sentences(shingle_text(joined, params), joined).sentences)

    def __bool__(self) -> bool:
        return bool(self.fingerprints.shape[0])


def base_fingerprints(texts: Sequence[Shingled]) -> np.ndarray:
    """Every shingle fingerprint of the base texts, sorted, each once (uint64, as `Shingled` holds them):
    all of them, not the winnowed ones, so that no w-word run of a base text is missed."""
    if not texts:
        return np.empty(0, dtype=np.uint64)
    return distinct(np.concatenate([np.asarray(one.fingerprints, dtype=np.uint64) for one in texts]))


def shingle_mask(token_mask: np.ndarray, n_shingles: int, w: int) -> np.ndarray:
    """A shingle is masked when any of its w tokens is (a text shorter than w has one shingle, of them all)."""
    if n_shingles == 0:
        return np.zeros(0, dtype=bool)
    prefix = np.concatenate(([0], np.cumsum(token_mask.astype(np.int64))))
    width = min(w, token_mask.shape[0])
    return (prefix[width : width + n_shingles] - prefix[:n_shingles]) > 0


def base_token_mask(shingled: Shingled, base: np.ndarray, w: int) -> np.ndarray:
    """The tokens of a text that a shingle of the base covers (`base`: `base_fingerprints`)."""
    n_tokens = len(shingled.tokens)
    fps = np.asarray(shingled.fingerprints, dtype=np.uint64)
    if base.shape[0] == 0 or fps.shape[0] == 0 or n_tokens == 0:
        return np.zeros(n_tokens, dtype=bool)
    hits = np.flatnonzero(in_sorted(fps, base))
    return spans_mask(hits, hits + min(w, n_tokens), n_tokens)


def base_masks(shingled: Shingled, base: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray] | None:
    """A text's tokens a base shingle covers (`base_token_mask`) and its shingles that hold one of them
    (`shingle_mask`); None when no token is base text (what most documents give, and what the aligner takes
    for "nothing masked")."""
    tokens = base_token_mask(shingled, base, w)
    if not tokens.any():
        return None
    return tokens, shingle_mask(tokens, int(shingled.fingerprints.shape[0]), w)


def base_shingle_mask(shingled: Shingled, base: np.ndarray, w: int) -> np.ndarray | None:
    """The shingles of a text that hold a base token (`base_masks`); None when none does."""
    masks = base_masks(shingled, base, w)
    return None if masks is None else masks[1]


def spans_mask(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """The positions of [0, n) inside any of the spans [starts[k], ends[k])."""
    edges = np.zeros(n + 1, dtype=np.int64)
    np.add.at(edges, np.minimum(starts, n), 1)
    np.add.at(edges, np.minimum(ends, n), -1)
    return np.cumsum(edges[:-1]) > 0


def reworded_base_tokens(sentences: Sentences, base: Sentences, n_tokens: int, min_dice: float,
                         min_cosine: float) -> np.ndarray:
    """The tokens of a text's sentences that reword a sentence of the base (idf-weighted Dice and cosine at
    least these): two answers that each revised the same sentence of a handed-out reading share it through
    the reading, not through each other, and such a sentence seeds no reworded passage (verbatim runs it
    holds still do: a copy of another's revision is a copy)."""
    found = sentence_pairs(sentences, base, min_dice, min_cosine)
    rewording = distinct(found.query)
    return spans_mask(sentences.token_start[rewording], sentences.token_end[rewording], n_tokens)


def unseeding_tokens(shingled: Shingled, sentences: Sentences, base: Base, w: int, min_dice: float,
                     min_cosine: float) -> np.ndarray:
    """The tokens of a text whose sentences may not seed a reworded passage: its base text, and its sentences
    that reword a base sentence (`reworded_base_tokens`)."""
    assert base.sentences is not None
    return (base_token_mask(shingled, base.fingerprints, w)
            | reworded_base_tokens(sentences, base.sentences, len(shingled.tokens), min_dice, min_cosine))
