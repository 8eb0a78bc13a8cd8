"""Sentence-level seeds for passages that were reworded (PAN's random obfuscation).

Verbatim reuse shares whole shingles; reworded reuse (words replaced,
shuffled, inserted or dropped) mostly does not, but its sentences still share
most of their content words. Both texts are cut into sentences, each sentence
becomes a set of content-word hashes, and every pair of sentences whose Dice
coefficient reaches a threshold is a seed. The pair counts come from one
vectorized join over shared words, not from comparing sentences pairwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from scanner.canon import Tokens, canonicalize
from scanner.stopwords import ENGLISH

_SENTENCE_END = re.compile(r"[.!?;:]+[\"')\]]*\s+|\n\s*\n")


@dataclass(frozen=True)
class Sentences:
    """Sentence spans in token coordinates, and each sentence's content words."""

    token_start: np.ndarray  # int64 first token of each sentence
    token_end: np.ndarray  # int64 exclusive
    pair_sentence: np.ndarray  # (sentence, word) incidence, unique pairs
    pair_word: np.ndarray  # uint64 word hash
    sizes: np.ndarray  # content words per sentence


def stopword_hashes() -> np.ndarray:
    return np.unique(canonicalize(" ".join(sorted(ENGLISH))).hashes)


def split_sentences(text: str, tokens: Tokens, stop: np.ndarray, min_words: int = 4) -> Sentences:
    n = len(tokens)
    cuts = np.asarray([m.end() for m in _SENTENCE_END.finditer(text)], dtype=np.int64)
    sentence_of_token = np.searchsorted(cuts, tokens.starts, side="right")
    content = ~np.isin(tokens.hashes, stop)
    # merge sentences with too few content words into the next one
    if n:
        ids, first = np.unique(sentence_of_token, return_index=True)
        counts = np.bincount(sentence_of_token, weights=content, minlength=int(ids.max()) + 1)[ids]
        merged_id = np.cumsum(np.concatenate(([1], (counts[:-1] >= min_words).astype(np.int64)))) - 1
        sentence_of_token = merged_id[np.searchsorted(ids, sentence_of_token)]
    n_sent = int(sentence_of_token.max()) + 1 if n else 0
    boundaries = np.searchsorted(sentence_of_token, np.arange(n_sent + 1))
    sent = sentence_of_token[content]
    words = tokens.hashes[content]
    if sent.shape[0]:
        order = np.lexsort((words, sent))
        sent, words = sent[order], words[order]
        keep = np.ones(sent.shape[0], dtype=bool)
        keep[1:] = (sent[1:] != sent[:-1]) | (words[1:] != words[:-1])
        sent, words = sent[keep], words[keep]
    sizes = np.bincount(sent, minlength=n_sent)
    return Sentences(boundaries[:-1].astype(np.int64), boundaries[1:].astype(np.int64), sent.astype(np.int64),
                     words, sizes)


def sentence_seeds(q: Sentences, d: Sentences, min_dice: float = 0.33, max_word_sentences: int = 50) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query sentence, doc sentence, dice) for every pair with Dice >= min_dice."""
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if q.pair_word.shape[0] == 0 or d.pair_word.shape[0] == 0:
        return empty
    d_order = np.argsort(d.pair_word, kind="stable")
    d_words = d.pair_word[d_order]
    d_sents = d.pair_sentence[d_order]
    lo = np.searchsorted(d_words, q.pair_word, side="left")
    hi = np.searchsorted(d_words, q.pair_word, side="right")
    counts = hi - lo
    counts = np.where(counts <= max_word_sentences, counts, 0)
    q_rep = np.repeat(q.pair_sentence, counts)
    firsts = np.repeat(lo, counts)
    within = np.arange(q_rep.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    d_rep = d_sents[firsts + within]
    n_d = d.sizes.shape[0]
    # idf over the sentences of both texts: words found everywhere weigh little
    words = np.concatenate((q.pair_word, d.pair_word))
    vocab, df = np.unique(words, return_counts=True)
    n_sent = q.sizes.shape[0] + n_d
    idf = np.log((n_sent + 1) / df)
    q_idf = idf[np.searchsorted(vocab, q.pair_word)]
    d_idf = idf[np.searchsorted(vocab, d.pair_word)]
    q_mass = np.bincount(q.pair_sentence, weights=q_idf, minlength=q.sizes.shape[0])
    d_mass = np.bincount(d.pair_sentence, weights=d_idf, minlength=n_d)
    q_norm = np.sqrt(np.bincount(q.pair_sentence, weights=q_idf ** 2, minlength=q.sizes.shape[0]))
    d_norm = np.sqrt(np.bincount(d.pair_sentence, weights=d_idf ** 2, minlength=n_d))
    shared_idf = np.repeat(q_idf, counts)
    codes, inverse = np.unique(q_rep * n_d + d_rep, return_inverse=True)
    mass = np.bincount(inverse, weights=shared_idf)
    square = np.bincount(inverse, weights=shared_idf ** 2)
    qs, ds = codes // n_d, codes % n_d
    dice = 2.0 * mass / np.maximum(q_mass[qs] + d_mass[ds], 1e-12)
    cosine = square / np.maximum(q_norm[qs] * d_norm[ds], 1e-12)
    keep = (dice >= min_dice) & (cosine >= min_dice)
    return qs[keep], ds[keep], dice[keep]
