"""Sentence-level seeds for passages that were reworded (PAN's random obfuscation).

Verbatim reuse shares whole shingles; reworded reuse (words replaced,
shuffled, inserted or dropped) mostly does not, but its sentences still share
most of their content words. Both texts are cut into sentences, each sentence
becomes a set of content-word hashes weighted by idf (computed over the
sentences of the two texts, so words common in this pair weigh little), and
every pair of sentences whose weighted Dice *and* cosine reach a threshold is
a seed (after Sanchez-Perez et al., PAN 2014). The pair scores come from one
vectorized join over shared words, not from comparing sentences pairwise.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scanner.engine.arrays import contiguous, distinct, expand_ranges, joined_parts
from scanner.engine.canon import Tokens, canonicalize
from scanner.engine.kernels import compiled
from scanner.engine.stopwords import ENGLISH

_DENSE_CELLS = 2_000_000  # (partner, word) cells `best_pair_scores` holds at once
# a sentence ends after a run of end marks (closing quotes or brackets, then space), or at a blank line:
# r"[.!?;:]+[\"')\]]*\s+|\n\s*\n", written to begin with one character class, which lets `re` skip to the
# next candidate character (2.9x faster on PAN-13's texts; the same ends: tests/test_align.py), and to try a
# run of marks from its first only (where a run ends no sentence, none of its later marks does either: tried
# from each, 20,000 dots took 8 s)
_SENTENCE_END = re.compile(r"[.!?;:\n](?:(?<=[.!?;:])(?<![.!?;:].)[.!?;:]*[\"')\]]*\s+|(?<=\n)\s*\n)")


@dataclass(frozen=True)
class Sentences:
    """Sentence spans in token coordinates, and each sentence's content words."""

    token_start: np.ndarray  # int64 first token of each sentence
    token_end: np.ndarray  # int64 exclusive
    pair_sentence: np.ndarray  # (sentence, word) incidence, unique pairs
    pair_word: np.ndarray  # uint64 word hash
    sizes: np.ndarray  # content words per sentence
    # the text's vocabulary, made once per text so that a pair of texts only merges two sorted vocabularies:
    vocab: np.ndarray  # uint64 sorted distinct words
    word_sentences: np.ndarray  # int64 sentences holding each vocab word (its document frequency here)
    word_of_pair: np.ndarray  # int64 vocab index of each (sentence, word) pair
    by_word: np.ndarray  # int64 pair_sentence in word order (stable), each word's sentences a block
    word_first: np.ndarray  # int64 start of each vocab word's block in by_word

    def __len__(self) -> int:
        return int(self.token_start.shape[0])


@dataclass(frozen=True)
class SentenceSeeds:
    """Sentence pairs that share enough weighted content words."""

    query: np.ndarray  # int64 query sentence index
    doc: np.ndarray  # int64 doc sentence index
    dice: np.ndarray  # float64 idf-weighted Dice
    cosine: np.ndarray  # float64 idf-weighted cosine
    meaning: np.ndarray  # float64 centred cosine of the sentence vectors (`semantic`); zeros when not measured

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def take(self, keep: np.ndarray) -> "SentenceSeeds":
        return SentenceSeeds(self.query[keep], self.doc[keep], self.dice[keep], self.cosine[keep], self.meaning[keep])


@functools.lru_cache(maxsize=4)
def stopword_hashes() -> np.ndarray:
    """Sorted hashes of the stop words (memoized: the same value for every call)."""
    out = np.unique(canonicalize(" ".join(sorted(ENGLISH))).hashes)
    out.setflags(write=False)
    return out


def content_masks(tokens: Sequence[Tokens], stop: np.ndarray) -> list[np.ndarray]:
    """For each text's tokens, True for those that are not stop words: one search for all (a scan task's
    documents)."""
    if not tokens:
        return []
    mask = _not_stop(np.concatenate([one.hashes for one in tokens]), stop)
    return np.split(mask, np.cumsum([len(one) for one in tokens[:-1]], dtype=np.int64))


def _not_stop(hashes: np.ndarray, stop: np.ndarray) -> np.ndarray:
    if stop.shape[0] == 0 or hashes.shape[0] == 0:
        return np.ones(hashes.shape[0], dtype=bool)
    slots = np.minimum(np.searchsorted(stop, hashes), stop.shape[0] - 1)
    return stop[slots] != hashes


def split_sentences(text: str, tokens: Tokens, stop: np.ndarray, min_words: int = 4,
                    content: np.ndarray | None = None) -> Sentences:
    """Sentences of `text` as token spans; ones with fewer than `min_words` content words join the next."""
    return split_sentences_many([text], [tokens], stop, min_words, None if content is None else [content])[0]


def split_sentences_many(texts: Sequence[str], tokens: Sequence[Tokens], stop: np.ndarray, min_words: int = 4,
                         contents: Sequence[np.ndarray] | None = None) -> list[Sentences]:
    """`split_sentences` of each text, the same arrays, from one pass of numpy calls for all (a check's
    candidates, a scan task's documents: ~15 calls a text otherwise). `contents`: each text's content mask,
    when the caller has them."""
    k = len(texts)
    if k == 0:
        return []
    n = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=k)
    token_offset = np.concatenate(([0], np.cumsum(n)))
    hashes = np.concatenate([t.hashes for t in tokens])
    content = _not_stop(hashes, stop) if contents is None else np.concatenate(contents)
    # each token's sentence, numbered through all texts: the cuts and token starts of a text shifted past the
    # texts before it, so one search numbers them all; + the text's number: a text's first sentence is never
    # the last one of the text before (which holds no cut after its last words)
    shift = np.concatenate(([0], np.cumsum([len(text) + 1 for text in texts])))
    cuts = _sentence_cuts(texts, shift)
    text_of_token = np.repeat(np.arange(k, dtype=np.int64), n)
    starts = np.concatenate([t.starts for t in tokens]).astype(np.int64) + shift[text_of_token]
    sentence_of_token = np.searchsorted(cuts, starts, side="right") + text_of_token
    sentence = np.empty(0, dtype=np.int64)  # each token's sentence once short ones are joined, through all texts
    if sentence_of_token.shape[0]:
        # the numbers rise token by token (cuts and starts both sorted): each run of one number is a sentence
        new = np.concatenate(([True], sentence_of_token[1:] != sentence_of_token[:-1]))
        first = np.flatnonzero(new)
        inverse = np.cumsum(new) - 1
        counts = np.bincount(inverse, weights=content, minlength=first.shape[0])
        # a sentence with too few content words joins the next one of its text
        begins = np.concatenate(([True], counts[:-1] >= min_words))
        begins[1:] |= text_of_token[first[1:]] != text_of_token[first[:-1]]
        sentence = (np.cumsum(begins.astype(np.int64)) - 1)[inverse]
    sentence_end = np.zeros(k, dtype=np.int64)  # past each text's last sentence (0: a text without tokens)
    has_tokens = np.flatnonzero(n > 0)
    sentence_end[has_tokens] = sentence[token_offset[1:][has_tokens] - 1] + 1
    sentence_offset = np.concatenate(([0], np.maximum.accumulate(sentence_end)))  # text i's: [offset[i], offset[i + 1])
    boundaries = np.searchsorted(sentence, np.arange(int(sentence_offset[-1]) + 1))
    # the (sentence, word) pairs, each once, in that order; a word stands for its rank among all the texts'
    # words, so that a pair is one int64 and one sort orders them (two-key lexsorts took 2x as long)
    vocabulary, rank = np.unique(hashes[content], return_inverse=True)  # a sort (with return_* numpy sorts)
    width = max(vocabulary.shape[0], 1)
    pair_key = distinct(sentence[content] * width + rank)
    sent, word_rank = pair_key // width, pair_key % width
    words = vocabulary[word_rank]
    sizes = np.bincount(sent, minlength=int(sentence_offset[-1]))
    text_of_pair = np.searchsorted(sentence_offset[1:], sent, side="right")
    pair_offset = np.concatenate(([0], np.cumsum(np.bincount(text_of_pair, minlength=k))))
    # each text's pairs by word, a word's in sentence order (a stable sort of pairs in sentence order)
    word_order = np.argsort(text_of_pair * width + word_rank, kind="stable")
    sorted_words, sorted_text = words[word_order], text_of_pair[word_order]
    new_word = np.ones(sorted_words.shape[0], dtype=bool)
    new_word[1:] = (sorted_words[1:] != sorted_words[:-1]) | (sorted_text[1:] != sorted_text[:-1])
    word_first = np.flatnonzero(new_word)
    word_sentences = np.diff(np.append(word_first, sorted_words.shape[0]))
    vocab_offset = np.concatenate(([0], np.cumsum(np.bincount(sorted_text[word_first], minlength=k))))
    word_of_pair = np.empty(words.shape[0], dtype=np.int64)
    word_of_pair[word_order] = np.repeat(np.arange(word_first.shape[0], dtype=np.int64), word_sentences)
    by_word = sent[word_order]
    out = []
    for s0, s1, p0, p1, v0, v1, t0 in zip(
            sentence_offset[:-1].tolist(), sentence_offset[1:].tolist(), pair_offset[:-1].tolist(),
            pair_offset[1:].tolist(), vocab_offset[:-1].tolist(), vocab_offset[1:].tolist(), token_offset.tolist()):
        out.append(Sentences(boundaries[s0:s1] - t0, boundaries[s0 + 1 : s1 + 1] - t0, sent[p0:p1] - s0,
                             words[p0:p1], sizes[s0:s1], sorted_words[word_first[v0:v1]],
                             word_sentences[v0:v1].astype(np.int64), word_of_pair[p0:p1] - v0,
                             by_word[p0:p1] - s0, word_first[v0:v1] - p0))
    return out


def _sentence_cuts(texts: Sequence[str], shift: np.ndarray) -> np.ndarray:
    """Where `_SENTENCE_END` matches end in each text, shifted by the text's `shift`: compiled
    (`loops.sentence_ends`, 4x faster than the pattern's matches), else the pattern itself, the reference."""
    if compiled is not None:
        return np.frombuffer(compiled.sentence_ends(list(texts)), dtype=np.int64)
    return np.concatenate([np.fromiter((m.end() for m in _SENTENCE_END.finditer(text)), dtype=np.int64) + shift[i]
                           for i, text in enumerate(texts)])


def sentence_pairs(q: Sentences, d: Sentences, min_dice: float = 0.33, min_cosine: float = 0.33,
                   max_word_sentences: int = 50, q_open: np.ndarray | None = None,
                   d_open: np.ndarray | None = None) -> SentenceSeeds:
    """Every sentence pair with idf-weighted Dice >= min_dice and cosine >= min_cosine; with `q_open` and
    `d_open` (a boolean per sentence), only the pairs of open sentences, scored as among all (the idf and
    each sentence's mass still count every sentence): a pair of texts sharing long verbatim runs then joins
    only the sentences those runs leave open.

    Words found in more than `max_word_sentences` doc sentences are skipped in
    the join (they carry almost no idf weight anyway), which bounds its size.
    """
    empty = np.empty(0, np.int64)
    if q.pair_word.shape[0] == 0 or d.pair_word.shape[0] == 0:
        return SentenceSeeds(empty, empty, np.empty(0), np.empty(0), np.empty(0))
    n_q, n_d = q.sizes.shape[0], d.sizes.shape[0]
    if compiled is not None:  # the merge, then the join a query sentence at a time (the same sums, the same bits)
        return _scored_compiled(q, d, min_dice, min_cosine, max_word_sentences, q_open, d_open)
    at = np.minimum(np.searchsorted(d.vocab, q.vocab), d.vocab.shape[0] - 1)  # both sorted: one merge
    in_d = d.vocab[at] == q.vocab
    in_d_sentences = np.where(in_d, d.word_sentences[at], 0)  # doc sentences holding each query word
    # idf over the sentences of both texts: words found everywhere weigh little
    q_df = q.word_sentences + in_d_sentences
    d_df = d.word_sentences.copy()
    d_df[at[in_d]] += q.word_sentences[in_d]
    q_idf = np.log((n_q + n_d + 1) / q_df)[q.word_of_pair]
    d_idf = np.log((n_q + n_d + 1) / d_df)[d.word_of_pair]
    counts = np.where(in_d_sentences <= max_word_sentences, in_d_sentences, 0)[q.word_of_pair]
    if q_open is not None:
        counts = np.where(q_open[q.pair_sentence], counts, 0)
    d_first = d.word_first[at][q.word_of_pair]
    return _scored_in_python(q, d, q_idf, d_idf, counts, d.by_word[expand_ranges(d_first, counts)], d_open,
                             min_dice, min_cosine)


def _scored_compiled(q: Sentences, d: Sentences, min_dice: float, min_cosine: float, max_word_sentences: int,
                     q_open: np.ndarray | None, d_open: np.ndarray | None) -> SentenceSeeds:
    """`sentence_pairs` by `loops.sentence_frequencies` and `loops.sentence_pairs`; only the idf's logarithms
    are numpy's (taken of the same quotients, so the same bits)."""
    assert compiled is not None  # the caller's check

    def flags(a: np.ndarray | None) -> np.ndarray:
        return np.empty(0, dtype=np.uint8) if a is None else contiguous(a, np.uint8)

    n_q, n_d = q.sizes.shape[0], d.sizes.shape[0]
    v_q = q.vocab.shape[0]
    q_df, in_d, at = (np.empty(v_q, dtype=np.int64) for _ in range(3))
    d_df = np.empty(d.vocab.shape[0], dtype=np.int64)
    join = compiled.sentence_frequencies(contiguous(q.vocab, np.uint64), contiguous(q.word_sentences),
                                         contiguous(d.vocab, np.uint64), contiguous(d.word_sentences),
                                         max_word_sentences, q_df, d_df, in_d, at)
    room = min(join, n_q * n_d)
    qs, ds = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    dice, cosine = np.empty(room), np.empty(room)
    found = compiled.sentence_pairs(
        contiguous(q.pair_sentence), contiguous(q.word_of_pair), np.log((n_q + n_d + 1) / q_df), in_d, at,
        max_word_sentences, flags(q_open), contiguous(d.word_first), contiguous(d.by_word), contiguous(d.pair_sentence),
        contiguous(d.word_of_pair),
        np.log((n_q + n_d + 1) / d_df), flags(d_open), n_q, n_d, float(min_dice), float(min_cosine), qs, ds, dice,
        cosine)
    return SentenceSeeds(qs[:found], ds[:found], dice[:found], cosine[:found], np.zeros(found))


def _scored_in_python(q: Sentences, d: Sentences, q_idf: np.ndarray, d_idf: np.ndarray, counts: np.ndarray,
                      d_rep: np.ndarray, d_open: np.ndarray | None, min_dice: float, min_cosine: float
                      ) -> SentenceSeeds:
    """`sentence_pairs` past its idf weights, as numpy (`loops.sentence_pairs`'s reference): each query
    (sentence, word) pair repeated for the `counts` doc sentences `d_rep` of its word, those open kept, then
    each pair of sentences met scored."""
    n_q, n_d = q.sizes.shape[0], d.sizes.shape[0]
    q_mass = np.bincount(q.pair_sentence, weights=q_idf, minlength=n_q)
    d_mass = np.bincount(d.pair_sentence, weights=d_idf, minlength=n_d)
    q_norm = np.sqrt(np.bincount(q.pair_sentence, weights=q_idf ** 2, minlength=n_q))
    d_norm = np.sqrt(np.bincount(d.pair_sentence, weights=d_idf ** 2, minlength=n_d))
    q_rep = np.repeat(q.pair_sentence, counts)
    shared_idf = np.repeat(q_idf, counts)
    if d_open is not None:
        joined = d_open[d_rep]
        q_rep, d_rep, shared_idf = q_rep[joined], d_rep[joined], shared_idf[joined]
    codes, inverse = np.unique(q_rep * n_d + d_rep, return_inverse=True)
    mass = np.bincount(inverse, weights=shared_idf)
    square = np.bincount(inverse, weights=shared_idf ** 2)
    qs, ds = codes // n_d, codes % n_d
    dice = 2.0 * mass / np.maximum(q_mass[qs] + d_mass[ds], 1e-12)
    cosine = square / np.maximum(q_norm[qs] * d_norm[ds], 1e-12)
    keep = (dice >= min_dice) & (cosine >= min_cosine)
    return SentenceSeeds(qs[keep], ds[keep], dice[keep], cosine[keep], np.zeros(int(keep.sum())))


def sentence_seeds(q: Sentences, d: Sentences, min_dice: float = 0.33) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query sentence, doc sentence, dice) for every pair with Dice and cosine >= min_dice."""
    found = sentence_pairs(q, d, min_dice, min_dice)
    return found.query, found.doc, found.dice


def best_pair_scores(q: Sentences, partners: list[Sentences], max_join: int = 4_000_000) -> np.ndarray:
    """For each partner text, an upper bound of min(Dice, cosine) over its sentence pairs with Q, as
    `sentence_pairs` scores them (idf over the sentences of Q and that partner): compiled, a partner at a time
    with nothing made in Python (`loops.pair_bounds`: 0.61 -> 0.13 ms a call in the scan's step; its logs
    are libm's, which may differ from numpy's in the last bit: bounds are taken with a margin); else one
    vectorized join for all partners.

    A bound, not the scores: every shared word joins here (`sentence_pairs` skips words held by more than
    `max_word_sentences` document sentences, which only lowers its scores), so the bound is the same whichever
    text is the query. A partner whose join would pass `max_join` sentence pairs gets +inf (no bound).
    What it serves: ruling out, many at once, the pairs with no reworded seed at a threshold
    (`align.sentence_anchor_bounds`).
    """
    k = len(partners)
    out = np.zeros(k)
    if k == 0 or q.pair_word.shape[0] == 0:
        return out
    n_q = len(q)
    if compiled is not None:  # a partner at a time, nothing the size of all of them made (the logs: libm's)
        def joined(field: str) -> np.ndarray:
            return joined_parts([getattr(p, field) for p in partners])[0]

        vocab, vocab_offsets = joined_parts([p.vocab for p in partners], np.uint64)
        pair_sentence, pair_offsets = joined_parts([p.pair_sentence for p in partners])
        compiled.pair_bounds(
            contiguous(q.vocab, np.uint64), contiguous(q.word_sentences), contiguous(q.word_of_pair),
            contiguous(q.pair_sentence), contiguous(q.by_word), contiguous(q.word_first), n_q, vocab,
            joined("word_sentences"), joined("word_first"), joined("word_of_pair"), pair_sentence, joined("by_word"),
            np.fromiter((len(p) for p in partners), dtype=np.int64, count=k), vocab_offsets, pair_offsets, max_join,
            out)
        return out
    words = distinct(np.concatenate([q.vocab] + [p.vocab for p in partners]))
    if k > 1 and k * words.shape[0] > _DENSE_CELLS:  # the dense (partner, word) tables stay ~32 MB
        half = k // 2
        return np.concatenate((best_pair_scores(q, partners[:half], max_join),
                               best_pair_scores(q, partners[half:], max_join)))
    q_id = np.searchsorted(words, q.vocab)
    p_ids = [np.searchsorted(words, p.vocab) for p in partners]
    in_partner = np.zeros((k, words.shape[0]), dtype=np.int64)  # sentences of partner k holding each word
    block_start = np.zeros((k, words.shape[0]), dtype=np.int64)  # where its sentences start in `by_word`
    n_d = np.fromiter((len(p) for p in partners), dtype=np.int64, count=k)
    sentence_offset = np.concatenate(([0], np.cumsum(n_d)))
    pair_offset = 0
    for j, (p, ids) in enumerate(zip(partners, p_ids)):
        in_partner[j, ids] = p.word_sentences
        block_start[j, ids] = p.word_first + pair_offset
        pair_offset += p.by_word.shape[0]
    by_word = np.concatenate([p.by_word + sentence_offset[j] for j, p in enumerate(partners)])
    in_query = np.zeros(words.shape[0], dtype=np.int64)
    in_query[q_id] = q.word_sentences
    total = (n_q + n_d + 1).astype(np.float64)  # per partner
    # the query's (sentence, word) pairs weighed for every partner: idf over Q and that partner
    q_word = q_id[q.word_of_pair]
    q_idf = np.log(total[:, None] / (in_query[q_word][None, :] + in_partner[:, q_word]))  # (k, query pairs)
    rows = np.arange(k)[:, None] * n_q + q.pair_sentence[None, :]
    q_mass = np.bincount(rows.ravel(), weights=q_idf.ravel(), minlength=k * n_q)
    q_norm = np.sqrt(np.bincount(rows.ravel(), weights=(q_idf ** 2).ravel(), minlength=k * n_q))
    d_partner = np.repeat(np.arange(k), [p.pair_sentence.shape[0] for p in partners])
    d_word = np.concatenate([ids[p.word_of_pair] for p, ids in zip(partners, p_ids)])
    d_sentence = np.concatenate([p.pair_sentence + sentence_offset[j] for j, p in enumerate(partners)])
    d_idf = np.log(total[d_partner] / (in_partner[d_partner, d_word] + in_query[d_word]))
    n_all = int(sentence_offset[-1])
    d_mass = np.bincount(d_sentence, weights=d_idf, minlength=n_all)
    d_norm = np.sqrt(np.bincount(d_sentence, weights=d_idf ** 2, minlength=n_all))
    counts = in_partner[:, q_word]  # (k, query pairs): the partner's sentences each query pair joins
    join = counts.sum(axis=1)
    unbounded = join > max_join
    counts[unbounded] = 0
    out[unbounded] = np.inf
    starts = block_start[:, q_word]
    flat = counts.ravel()
    q_rep = np.repeat(np.broadcast_to(q.pair_sentence, counts.shape).ravel(), flat)
    d_rep = by_word[expand_ranges(starts.ravel(), flat)]
    shared_idf = np.repeat(q_idf.ravel(), flat)
    if d_rep.shape[0] == 0:
        return out
    codes, inverse = np.unique(q_rep * n_all + d_rep, return_inverse=True)
    mass = np.bincount(inverse, weights=shared_idf)
    square = np.bincount(inverse, weights=shared_idf ** 2)
    qs, ds = codes // n_all, codes % n_all
    partner = np.repeat(np.arange(k), n_d)[ds]
    q_row = partner * n_q + qs
    dice = 2.0 * mass / np.maximum(q_mass[q_row] + d_mass[ds], 1e-12)
    cosine = square / np.maximum(q_norm[q_row] * d_norm[ds], 1e-12)
    np.maximum.at(out, partner, np.minimum(dice, cosine))
    return out
