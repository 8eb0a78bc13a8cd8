"""Passage evidence: the character spans two texts share.

Seed, extend, filter.

* Seeds. Verbatim seeds: every shingle present in both texts at (i, j); seeds
  adjacent on one diagonal are joined into runs with numpy. Reworded seeds
  (optional, `sentence_dice`): pairs of sentences sharing most of their content
  words (`sentences.py`), which catch passages whose words were replaced,
  shuffled, added or dropped.
* Extend. Seeds are rectangles [q0, q1) x [d0, d1) in token coordinates. In
  query order, a seed joins the fragment whose ends are within `max_gap`
  tokens on both sides, so a passage survives small edits that break a few
  shingles or a sentence.
* Filter. Fragments shorter than `min_tokens` are dropped; of fragments that
  overlap in the query (repeated text gives several parallel ones), the
  largest is kept.

Token ranges become character spans through the tokens' offsets, so passages
point into the original extracted texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scanner.model import Passage
from scanner.sentences import sentence_seeds, split_sentences, stopword_hashes
from scanner.sketch import Shingled


@dataclass(frozen=True)
class AlignOptions:
    max_gap: int = 12  # tokens of unmatched text a passage may bridge
    min_tokens: int = 8  # passages shorter than this (in tokens) are dropped
    max_repeats: int = 16  # shingles repeated more often than this in either text are no seeds
    sentence_dice: float | None = None  # e.g. 0.4 to add reworded-sentence seeds; None: verbatim only
    sentence_gap: int = 30  # gap allowed between reworded seeds

    @classmethod
    def reworded(cls, **changes: object) -> "AlignOptions":
        """Settings that also find reworded passages (PAN-13 random obfuscation plagdet 0.87,
        no obfuscation 0.91; the verbatim default gives 0.30 and 0.996): docs/EVALUATION.md."""
        return cls(**{"sentence_dice": 0.3, "sentence_gap": 60, **changes})  # type: ignore[arg-type]


@dataclass(frozen=True)
class TokenPassage:
    """A shared passage in token coordinates, [start, end) in each text."""

    query_start: int
    query_end: int
    doc_start: int
    doc_end: int
    verbatim: int = 0  # tokens covered by verbatim runs inside (summed over runs)
    reworded: int = 0  # reworded sentence seeds inside


def seeds(query_fps: np.ndarray, doc_fps: np.ndarray, max_repeats: int = 16,
          query_mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) with query_fps[i] == doc_fps[j], sorted by diagonal then i.

    `query_mask`, when given, marks query shingles that may not seed (quoted
    text, bibliography, boilerplate).
    """
    q = np.asarray(query_fps, dtype=np.uint64)
    d = np.asarray(doc_fps, dtype=np.uint64)
    if q.shape[0] == 0 or d.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    d_order = np.argsort(d, kind="stable")
    d_sorted = d[d_order]
    lo = np.searchsorted(d_sorted, q, side="left")
    hi = np.searchsorted(d_sorted, q, side="right")
    counts = hi - lo
    q_vals, q_counts = np.unique(q, return_counts=True)
    q_repeat = q_counts[np.searchsorted(q_vals, q)]
    usable = (counts > 0) & (counts <= max_repeats) & (q_repeat <= max_repeats)
    if query_mask is not None:
        usable &= ~query_mask[: q.shape[0]]
    counts = np.where(usable, counts, 0)
    qi = np.repeat(np.arange(q.shape[0], dtype=np.int64), counts)
    firsts = np.repeat(lo, counts)
    within = np.arange(qi.shape[0], dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    dj = d_order[firsts + within].astype(np.int64)
    order = np.lexsort((qi, dj - qi))
    return qi[order], dj[order]


def diagonal_runs(qi: np.ndarray, dj: np.ndarray, w: int) -> np.ndarray:
    """Runs of seeds adjacent on a diagonal, as token rectangles (q0, q1, d0, d1)."""
    if qi.shape[0] == 0:
        return np.empty((0, 6), dtype=np.int64)
    diag = dj - qi
    breaks = np.ones(qi.shape[0], dtype=bool)
    breaks[1:] = (diag[1:] != diag[:-1]) | (qi[1:] != qi[:-1] + 1)
    starts = np.flatnonzero(breaks)
    ends = np.concatenate((starts[1:], [qi.shape[0]])) - 1
    lengths = qi[ends] - qi[starts] + w
    return np.stack((qi[starts], qi[ends] + w, dj[starts], dj[ends] + w, lengths, np.zeros_like(lengths)), axis=1)


def extend(rectangles: np.ndarray, max_gap: int) -> list[TokenPassage]:
    """Join seed rectangles into fragments (a loop over seeds, not tokens).

    Rows are (q0, q1, d0, d1, verbatim_length, reworded_count).
    """
    order = np.lexsort((rectangles[:, 2], rectangles[:, 0])) if rectangles.shape[0] else []
    fragments: list[list[int]] = []
    for q0, q1, d0, d1, verbatim, reworded in rectangles[order].tolist():
        best, best_cost = -1, None
        for index in range(len(fragments) - 1, -1, -1):
            f = fragments[index]
            q_gap = q0 - f[1]
            if q_gap > max_gap:
                if q_gap > 8 * max_gap:
                    break
                continue
            d_gap = d0 - f[3] if d0 >= f[2] else f[2] - d1
            if d_gap > max_gap or d0 < f[2] - max_gap:
                continue
            cost = max(q_gap, 0) + max(d_gap, 0) + abs(q_gap - d_gap)
            if best_cost is None or cost < best_cost:
                best, best_cost = index, cost
        if best >= 0:
            f = fragments[best]
            f[0], f[1] = min(f[0], q0), max(f[1], q1)
            f[2], f[3] = min(f[2], d0), max(f[3], d1)
            f[4], f[5] = f[4] + verbatim, f[5] + reworded
        else:
            fragments.append([q0, q1, d0, d1, verbatim, reworded])
    return [TokenPassage(*f) for f in fragments]


def resolve_overlaps(passages: list[TokenPassage], min_tokens: int) -> list[TokenPassage]:
    """Drop short or weak fragments, then keep the largest of any that overlap in the query.

    A fragment stands on a verbatim run of `min_tokens`, or on two reworded
    sentences; a single reworded sentence alone is too often chance.
    """
    candidates = [p for p in passages if p.query_end - p.query_start >= min_tokens
                  and (p.verbatim >= min_tokens or p.reworded >= 2)]
    candidates.sort(key=lambda p: -((p.query_end - p.query_start) + (p.doc_end - p.doc_start)))
    kept: list[TokenPassage] = []
    for p in candidates:
        length = p.query_end - p.query_start
        clash = any(min(p.query_end, k.query_end) - max(p.query_start, k.query_start) > length // 2 for k in kept)
        if not clash:
            kept.append(p)
    return sorted(kept, key=lambda p: (p.query_start, p.doc_start))


def trim(passages: list[TokenPassage], query: Shingled, doc: Shingled, stop: np.ndarray) -> list[TokenPassage]:
    """Shrink each fragment to its first and last content word found on the other side.

    Reworded seeds are whole sentences, and a sentence can run far past the
    reused words (web text often lacks punctuation); trimming keeps only the
    span both sides support.
    """
    out = []
    for p in passages:
        if p.reworded == 0:
            out.append(p)
            continue
        q_words = query.tokens.hashes[p.query_start:p.query_end]
        d_words = doc.tokens.hashes[p.doc_start:p.doc_end]
        q_hits = np.flatnonzero(np.isin(q_words, d_words) & ~np.isin(q_words, stop))
        d_hits = np.flatnonzero(np.isin(d_words, q_words) & ~np.isin(d_words, stop))
        if q_hits.shape[0] == 0 or d_hits.shape[0] == 0:
            continue
        out.append(TokenPassage(p.query_start + int(q_hits[0]), p.query_start + int(q_hits[-1]) + 1,
                                p.doc_start + int(d_hits[0]), p.doc_start + int(d_hits[-1]) + 1,
                                p.verbatim, p.reworded))
    return out


def token_passages(query: Shingled, query_text: str, doc: Shingled, doc_text: str, w: int,
                   options: AlignOptions = AlignOptions(), query_mask: np.ndarray | None = None) -> list[TokenPassage]:
    qi, dj = seeds(query.fingerprints, doc.fingerprints, options.max_repeats, query_mask)
    rectangles = diagonal_runs(qi, dj, w)
    if options.sentence_dice is None:
        return resolve_overlaps(extend(rectangles, options.max_gap), options.min_tokens)
    stop = stopword_hashes()
    qs = split_sentences(query_text, query.tokens, stop)
    ds = split_sentences(doc_text, doc.tokens, stop)
    sq, sd, _ = sentence_seeds(qs, ds, options.sentence_dice)
    if sq.shape[0]:
        sentence_rects = np.stack((qs.token_start[sq], qs.token_end[sq], ds.token_start[sd], ds.token_end[sd],
                                   np.zeros_like(sq), np.ones_like(sq)), axis=1).astype(np.int64)
        if query_mask is not None and query_mask.shape[0]:
            covered = np.concatenate(([0], np.cumsum(query_mask.astype(np.int64))))
            last = np.minimum(sentence_rects[:, 1], query_mask.shape[0])
            first = np.minimum(sentence_rects[:, 0], query_mask.shape[0])
            sentence_rects = sentence_rects[(covered[last] - covered[first]) * 2 < (last - first + 1)]
        rectangles = np.concatenate((rectangles, sentence_rects))
    fragments = extend(rectangles, max(options.max_gap, options.sentence_gap))
    return resolve_overlaps(trim(fragments, query, doc, stop), options.min_tokens)


def align(query: Shingled, query_text: str, doc: Shingled, doc_text: str, w: int,
          options: AlignOptions = AlignOptions(), query_mask: np.ndarray | None = None) -> list[Passage]:
    """Shared passages as character spans in both texts (text taken from the query)."""
    out = []
    n_q, n_d = len(query.tokens), len(doc.tokens)
    for p in token_passages(query, query_text, doc, doc_text, w, options, query_mask):
        q_end, d_end = min(p.query_end, n_q), min(p.doc_end, n_d)
        q_start_char = int(query.tokens.starts[p.query_start])
        q_end_char = int(query.tokens.ends[q_end - 1])
        out.append(Passage(
            query_start=q_start_char,
            query_end=q_end_char,
            doc_start=int(doc.tokens.starts[p.doc_start]),
            doc_end=int(doc.tokens.ends[d_end - 1]),
            text=query_text[q_start_char:q_end_char],
        ))
    return out


def covered_tokens(passages_token_ranges: list[tuple[int, int]], n_tokens: int) -> np.ndarray:
    """Boolean mask of query tokens covered by any of the [start, end) ranges."""
    delta = np.zeros(n_tokens + 1, dtype=np.int64)
    for start, end in passages_token_ranges:
        delta[max(start, 0)] += 1
        delta[min(end, n_tokens)] -= 1
    return np.cumsum(delta[:-1]) > 0
