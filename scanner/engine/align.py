"""Passage evidence: the character spans two texts share.

Seed, extend, filter (our own take on Sanchez-Perez, Sidorov and Gelbukh, PAN 2014).

* Seeds. Verbatim seeds: every shingle present in both texts at (i, j); seeds
  adjacent on one diagonal are joined into runs with numpy, and runs into
  fragments across `max_gap` tokens (going forward on both sides). Reworded
  seeds (`sentence_dice`, on by default): sentence pairs whose idf-weighted
  content words agree (Dice and cosine, idf over the sentences of the pair,
  `sentences.py`); they catch passages whose words were replaced, shuffled,
  added or dropped. Anchors need `sentence_dice`; weaker pairs (`weak_dice`)
  only count inside a passage an anchor holds (hysteresis). A sentence mostly
  covered by verbatim runs gets no reworded seed (the runs say where it
  went), a sentence keeps only its best partners, and a weak seed reusing text
  of a long verbatim fragment on one side only is dropped: so a copied
  sentence does not also pair with its look-alike neighbours.
* Extend. Seeds are rectangles [q0, q1) x [d0, d1) in token coordinates,
  clustered by splitting alternately on the query and the document side
  wherever `sentence_gap` tokens separate them, until neither side splits.
  A summary pass clusters again with a wide document-side gap
  (`summary_gap`), and keeps fragments covering `summary_ratio` times more
  document than query: a summary condenses a long source passage. A wide
  cluster whose query side is mostly one fragment of the first pass (at
  `summary_explained` of it) is that fragment, not a summary: its other
  pieces are look-alike sentences spread over the document.
* Filter. A fragment must stand on `min_tokens` verbatim tokens or on
  `min_sentences` reworded seeds including an anchor; reworded ends are
  trimmed to the first and last content word found on the other side (never
  inside the verbatim runs); of fragments overlapping in the query, the
  largest is kept.
* Grow. A reworded passage takes in the sentence pair just past either end
  while the two sentences are each other's best partner by meaning
  (`neighbour_semantic`) and neither is a few words only (`neighbour_tokens`):
  a translation keeps its sentences in order, and its first and last ones are
  often the most garbled.

Defaults were chosen on the PAN-13 subset (docs/EVALUATION.md). Token ranges
become character spans through the tokens' offsets, so passages point into the
original extracted texts.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from scanner.core.model import Passage
from scanner.engine.arrays import contiguous, expand_ranges, joined_parts, run_lengths_of_sorted
from scanner.engine.kernels import compiled as loops
from scanner.engine.semantic import (
    QuantizedVectors,
    SimilarityParts,
    StaticModel,
    best_centred_cosines,
    centred_cosines,
    pair_centre,
    sentence_vectors,
    sentence_vectors_many,
    similar_sentences,
    similarity_parts,
    squared_norms,
    vector_sum,
)
from scanner.engine.sentences import (
    Sentences,
    SentenceSeeds,
    best_pair_scores,
    content_masks,
    sentence_pairs,
    split_sentences_many,
    stopword_hashes,
)
from scanner.engine.sketch import Shingled

# seed rectangles: q0, q1, d0, d1, verbatim tokens, reworded seeds, anchors, semantic seeds, meaning (thousandths),
# pieces (1 a rectangle: how many a cluster joined). Clusters, trimmed fragments and summaries are rows of these
# columns too (`TokenPassage`'s fields in order, but whether a summary): a pair of long pages makes thousands,
# of which a few stand and become objects
_RECT_COLUMNS = 10


@dataclass(frozen=True)
class AlignOptions:
    max_gap: int = 12  # tokens of unmatched text a verbatim passage may bridge
    min_tokens: int = 15  # passages shorter than this (in tokens) are dropped; fragments need this many verbatim tokens
    max_repeats: int = 16  # shingles repeated more often than this in either text are no seeds
    sentence_dice: float | None = 0.33  # reworded-sentence seeds at idf-weighted Dice >= this; None: verbatim only
    sentence_cosine: float = 0.33  # ... and idf-weighted cosine >= this
    sentence_gap: int = 30  # tokens between seeds of one reworded passage
    best_ratio: float = 0.8  # a sentence keeps partners scoring >= this share of its best partner
    covered_share: float = 0.5  # sentences this much covered by verbatim runs get no reworded seed
    min_sentences: int = 2  # reworded seeds a passage without min_tokens verbatim tokens needs
    doc_gap: int | None = None  # the gap on the document side, when it differs (summaries spread over more text)
    summary_gap: int | None = 500  # doc-side gap of the summary pass; None: no summary pass
    summary_ratio: float = 3.0  # a summary passage covers this many times more doc than query tokens
    summary_sentences: int = 3  # seeds (reworded sentences or verbatim fragments) a summary passage joins
    # a summary whose query side is at least this share one fragment that does not spread (a one-to-one
    # copy, translation or rewording) is left out for that fragment: PAN-13 translation chains 0.827 -> 0.838
    # through `check`, 0.873 -> 0.881 from a scan; summaries unchanged (docs/EVALUATION.md)
    summary_explained: float = 0.8
    # also summaries whose partners spread over the query (the query summarised in the document); off by
    # default, the scan included: see services/passages.align_options
    summary_both_ways: bool = False
    weak_dice: float = 0.25  # sentence pairs at Dice and cosine >= this extend passages anchored by stronger seeds
    # semantic seeds (issue 21), when the texts come with sentence vectors (`prepare_sentences(..., model)`):
    # sentence pairs whose centred cosine (`semantic.similar_sentences`) reaches `semantic` are anchors,
    # those reaching `weak_semantic` extend passages; None: no semantic seeds
    semantic: float | None = 0.65
    weak_semantic: float = 0.6
    semantic_passage: float = 0.65  # a passage found mostly by meaning needs this mean centred cosine
    # a reworded passage grows by the sentence pair just past either end while those two sentences are each
    # other's best partner by meaning at this centred cosine or more (`_grown_by_neighbours`); None: never.
    # Chosen on the even PAN-13 pairs (0.2-0.3 alike, 0.15 lower): translation chains 0.838 -> 0.850 through
    # `check` (odd pairs 0.771 -> 0.780), other classes within 0.002 (docs/EVALUATION.md)
    neighbour_semantic: float | None = 0.3
    # ... and when both have this many tokens: the mean vector of a few words is weak evidence (on manual pages
    # it took in headings such as "LIBRARY Math library (libm, -lm)"; 8 left PAN-13 as it was)
    neighbour_tokens: int = 8
    # sentence pairs a pair of texts may compare by meaning (~1 s of matrix products at 25 M): two texts of
    # 5,000 open sentences each get the lexical seeds only, not minutes of products
    semantic_max_pairs: int = 25_000_000

    @classmethod
    def verbatim(cls, **changes: object) -> "AlignOptions":
        """Verbatim runs only: every passage is exact evidence, and alignment is ~10x faster."""
        return cls(**{"sentence_dice": None, **changes})  # type: ignore[arg-type]


@dataclass(slots=True)
class TokenPassage:
    """A shared passage in token coordinates, [start, end) in each text. Not frozen: a scan's passage step
    makes hundreds of thousands (the passages kept; until then they are rows of `_RECT_COLUMNS`), and a frozen
    dataclass takes 4x as long to make; nothing changes one once made."""

    query_start: int
    query_end: int
    doc_start: int
    doc_end: int
    verbatim: int = 0  # tokens covered by verbatim runs inside (summed over runs)
    reworded: int = 0  # reworded sentence seeds inside
    anchors: int = 0  # reworded seeds inside at the full sentence_dice threshold
    semantic: int = 0  # of the reworded seeds, those found by meaning alone (too few shared words)
    meaning: int = 0  # the reworded seeds' centred cosines, summed, in thousandths
    pieces: int = 0  # seeds and verbatim fragments a cluster joined into this passage
    condensed: bool = False  # a summary: one side condenses much more text of the other (the summary passes)

    @property
    def kind(self) -> str:
        """verbatim, reworded (shared content words; or a summary, even one made of verbatim pieces: its two
        sides are no copy of each other), or semantic (most seeds found by meaning alone)."""
        if not self.reworded:
            return "reworded" if self.condensed else "verbatim"
        return "semantic" if 2 * self.semantic > self.reworded else "reworded"

    @property
    def similarity(self) -> float | None:
        """Mean centred cosine of the sentence seeds, when they were measured by meaning."""
        return round(self.meaning / self.reworded / 1000, 3) if self.reworded and self.meaning else None


@dataclass(frozen=True)
class QueryIndex:
    """The query's fingerprints sorted once, with each one's repeat count: shared by every document aligned."""

    order: np.ndarray  # int64 positions that sort the query's fingerprints
    sorted_fps: np.ndarray  # uint64
    repeats: np.ndarray  # int64, for each sorted entry: how often its value occurs in the query

    @classmethod
    def of(cls, query_fps: np.ndarray) -> "QueryIndex":
        q = np.asarray(query_fps, dtype=np.uint64)
        order = np.argsort(q, kind="stable")
        sorted_fps = q[order]
        return cls(order.astype(np.int64), sorted_fps, run_lengths_of_sorted(sorted_fps))


def _seeds_of(index: QueryIndex, docs: Sequence[QueryIndex], max_repeats: int = 16,
              query_mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (i, j, k) with the query's fingerprint i equal to document k's fingerprint j, sorted by document,
    then diagonal, then i: every document's seeds from one pass of numpy calls (a check's 25 candidates, a
    scan's task of pairs).

    A fingerprint repeated more than `max_repeats` times in either text seeds nothing. `query_mask`, when
    given, marks query shingles that may not seed (quoted text, bibliography, boilerplate). Each document's
    fingerprints are looked up in the sorted query in their own sorted order (`QueryIndex`, made once per
    text), which gives the document's repeats without another sort.
    """
    empty = np.empty(0, dtype=np.int64)
    sizes = np.fromiter((doc.sorted_fps.shape[0] for doc in docs), dtype=np.int64, count=len(docs))
    if index.sorted_fps.shape[0] == 0 or not sizes.any():
        return empty, empty, empty
    d = np.concatenate([doc.sorted_fps for doc in docs])
    lo = np.searchsorted(index.sorted_fps, d, side="left")
    hit = np.flatnonzero(index.sorted_fps[np.minimum(lo, index.sorted_fps.shape[0] - 1)] == d)
    if hit.shape[0] == 0:
        return empty, empty, empty
    lo = lo[hit]
    in_query = index.repeats[lo]
    usable = (in_query <= max_repeats) & (np.concatenate([doc.repeats for doc in docs])[hit] <= max_repeats)
    counts = np.where(usable, in_query, 0)
    dj = np.repeat(np.concatenate([doc.order for doc in docs])[hit], counts)
    dk = np.repeat(np.repeat(np.arange(len(docs), dtype=np.int64), sizes)[hit], counts)
    qi = index.order[expand_ranges(lo, counts)]
    if query_mask is not None:
        qmask = np.asarray(query_mask, dtype=bool)
        allowed = qi >= qmask.shape[0]
        allowed[~allowed] = ~qmask[qi[~allowed]]
        qi, dj, dk = qi[allowed], dj[allowed], dk[allowed]
    order = np.lexsort((qi, dj - qi, dk))
    return qi[order], dj[order], dk[order]


def _diagonal_runs(qi: np.ndarray, dj: np.ndarray, dk: np.ndarray, w: int, documents: int) -> list[np.ndarray]:
    """Each document's runs of seeds adjacent on a diagonal (seeds as `_seeds_of` gives them), as rows
    (q0, q1, d0, d1, verbatim_length, reworded_count)."""
    if qi.shape[0] == 0:
        return [np.empty((0, 6), dtype=np.int64) for _ in range(documents)]
    diag = dj - qi
    breaks = np.ones(qi.shape[0], dtype=bool)
    breaks[1:] = (diag[1:] != diag[:-1]) | (qi[1:] != qi[:-1] + 1) | (dk[1:] != dk[:-1])
    starts = np.flatnonzero(breaks)
    ends = np.concatenate((starts[1:], [qi.shape[0]])) - 1
    lengths = qi[ends] - qi[starts] + w
    runs = np.stack((qi[starts], qi[ends] + w, dj[starts], dj[ends] + w, lengths, np.zeros_like(lengths)), axis=1)
    cuts = np.searchsorted(dk[starts], np.arange(documents + 1)).tolist()
    return [runs[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def extend(rectangles: np.ndarray, max_gap: int, overlap: int = 4) -> np.ndarray:
    """Join seed rectangles into fragments in query order (a loop over seeds, not tokens; compiled,
    `loops.extend`, when the package was built with it, else `_extended_in_python`): int64 rows (q0, q1,
    d0, d1, verbatim_length, reworded_count), as arrays, since pairs sharing many short runs by chance make
    ~160 fragments of which one or two can stand (`_standing_fragments`), and an object a fragment cost more
    than the loop.

    Rows are (q0, q1, d0, d1, verbatim_length, reworded_count). A seed joins
    the fragment whose ends are within `max_gap` tokens on both sides, going
    forward on both (by at most `overlap` tokens back: a seed reusing text
    already inside the fragment is a repeated phrase, not more of it); of
    several, the cheapest (the newest of equals). Fragments ending `8 *
    max_gap` tokens before a seed are out of sight, and so is every fragment
    older than the newest of them. A hot loop of the scan's passage step:
    the fragments in sight are kept sorted by where they end in the query,
    so a seed looks only at those ending within its reach (pairs sharing
    many short runs by chance have ~25 fragments in sight a seed, ~0.2 in
    reach).
    """
    if rectangles.shape[0] == 0:
        return np.empty((0, 6), dtype=np.int64)
    seeds = _run_rows(rectangles)
    if loops is None:
        return _extended_in_python(seeds[np.lexsort((seeds[:, 2], seeds[:, 0]))], max_gap, overlap)
    out = np.empty_like(seeds)
    count = loops.extend(seeds, max_gap, overlap, out)  # sorted there as numpy's lexsort sorts
    return out[:count]


def _rect_rows(rows: np.ndarray) -> np.ndarray:
    """Rows of other widths (`extend`'s fragments: 6 columns) as rows of `_RECT_COLUMNS`, the columns they lack
    0 (the passages' defaults)."""
    out = np.zeros((rows.shape[0], _RECT_COLUMNS), dtype=np.int64)
    out[:, :min(rows.shape[1], _RECT_COLUMNS)] = rows[:, :_RECT_COLUMNS]
    return out


def _passages_of(rows: np.ndarray, condensed: np.ndarray | None = None) -> list[TokenPassage]:
    """Rows of `_RECT_COLUMNS` as passages; `condensed`: which are summaries (None: none)."""
    flags = [False] * rows.shape[0] if condensed is None else condensed.tolist()
    return [TokenPassage(q0, q1, d0, d1, verbatim, reworded, anchors, semantic, meaning, pieces, summary)
            for (q0, q1, d0, d1, verbatim, reworded, anchors, semantic, meaning, pieces), summary
            in zip(rows.tolist(), flags)]


def _standing_fragments(rows: np.ndarray, min_tokens: int) -> np.ndarray:
    """The fragments of `extend`'s rows that `resolve_overlaps` may keep, as rows of `_RECT_COLUMNS`: joined
    verbatim runs hold no anchored reworded seed, so they stand on `min_tokens` verbatim tokens alone."""
    return _rect_rows(rows[(rows[:, 1] - rows[:, 0] >= min_tokens) & (rows[:, 4] >= min_tokens)])


def _extended_in_python(seeds: np.ndarray, max_gap: int, overlap: int) -> np.ndarray:
    """`extend` of seeds in (q0, d0) order, as Python: what `loops.extend` does, and its reference."""
    fragments: list[list[int]] = []
    far = 8 * max_gap
    ends: list[int] = []  # where the fragments in sight end in the query, sorted
    owners: list[int] = []  # which fragment each of those is
    horizon = -1  # the newest fragment out of sight: neither it nor any older one is looked at again
    for q0, q1, d0, d1, verbatim, reworded in seeds.tolist():
        if ends and ends[0] < q0 - far:  # out of sight for good: seeds come in query order
            cut = bisect.bisect_left(ends, q0 - far)
            horizon = max(horizon, max(owners[:cut]))
            del ends[:cut], owners[:cut]
        best, best_cost = -1, 0
        for k in range(bisect.bisect_left(ends, q0 - max_gap), bisect.bisect_right(ends, q0 + overlap)):
            index = owners[k]
            if index <= horizon:
                continue
            f = fragments[index]
            d_end = f[3]
            d_gap = d0 - d_end
            # d1 <= d_end: the seed adds no document text (a phrase repeated in the query, matched again to
            # the text the fragment already holds): joining would count query words the document lacks
            if d_gap > max_gap or d_gap < -max_gap or d1 <= d_end:
                continue
            q_gap = q0 - f[1]
            cost = ((q_gap if q_gap > 0 else 0) + (d_gap if d_gap > 0 else 0)
                    + (q_gap - d_gap if q_gap > d_gap else d_gap - q_gap))
            if best < 0 or cost < best_cost or (cost == best_cost and index > best):
                best, best_cost = index, cost
        if best < 0:
            at = bisect.bisect_right(ends, q1)
            ends.insert(at, q1)
            owners.insert(at, len(fragments))
            fragments.append([q0, q1, d0, d1, verbatim, reworded])
            continue
        f = fragments[best]
        if q1 > f[1]:  # it ends further on: moved in the sorted ends
            at = bisect.bisect_left(ends, f[1])
            while owners[at] != best:
                at += 1
            del ends[at], owners[at]
            at = bisect.bisect_right(ends, q1)
            ends.insert(at, q1)
            owners.insert(at, best)
            f[1] = q1
        if q0 < f[0]:
            f[0] = q0
        if d0 < f[2]:
            f[2] = d0
        if d1 > f[3]:
            f[3] = d1
        f[4] += verbatim
        f[5] += reworded
    return np.array(fragments, dtype=np.int64).reshape(-1, 6)


def _split_axis(index: list[int], starts: list[int], ends: list[int], gap: int) -> list[list[int]]:
    """Groups of rectangles (`index` into `starts` and `ends`, their spans on one axis) whose spans come
    within `gap` tokens, each in the order of its starts (a stable sort: ties keep their order)."""
    order = sorted(index, key=starts.__getitem__)
    group = [order[0]]
    groups = [group]
    reach = ends[order[0]]
    for i in order[1:]:
        if starts[i] > reach + gap:
            group = [i]
            groups.append(group)
        else:
            group.append(i)
        if ends[i] > reach:
            reach = ends[i]
    return groups


def cluster(rects: np.ndarray, gap: int, doc_gap: int | None = None, min_pieces: int = 0) -> np.ndarray:
    """Fragments from seeds split alternately on the query and the doc side until neither splits.

    Splitting on one side alone would merge seeds that are near in the query
    but far apart in the document (a sentence matched by chance elsewhere);
    alternating until stable keeps together only seeds near on both sides,
    in whatever order (reworded text may reorder sentences). Compiled,
    `loops.cluster`, when the package was built with it, else
    `_clustered_in_python`: rows of `_RECT_COLUMNS`, the fragments joining `min_pieces` pieces or more (a
    fragment of no standing piece has 0).
    """
    rows = np.ascontiguousarray(rects, dtype=np.int64) if rects.shape[1] == _RECT_COLUMNS else _rect_rows(rects)
    if rows.shape[0] == 0:
        return rows
    if loops is None:
        found = _clustered_in_python(rows, gap, doc_gap)
    else:
        out = np.empty_like(rows)
        found = out[:loops.cluster(rows, gap, gap if doc_gap is None else doc_gap, out)]
    return found[found[:, 9] >= min_pieces] if min_pieces > 0 else found


def _clustered_in_python(rects: np.ndarray, gap: int, doc_gap: int | None) -> np.ndarray:
    """`cluster` as Python: what `loops.cluster` does, and its reference. A pair has tens of seeds, split
    many times over: plain lists cost less than arrays here."""
    rows = rects.tolist()
    columns = list(zip(*rows))
    axes = ((list(columns[0]), list(columns[1]), gap),
            (list(columns[2]), list(columns[3]), gap if doc_gap is None else doc_gap))  # starts, ends, gap
    out: list[list[int]] = []
    stack: list[tuple[list[int], int, bool]] = [(list(range(len(rows))), 0, False)]
    while stack:
        index, axis, other_settled = stack.pop()
        if len(index) == 1:  # one seed splits on neither side (what the steps below would find, in 2 calls)
            out.append(rows[index[0]])
            continue
        groups = _split_axis(index, *axes[axis])
        if len(groups) > 1:
            stack.extend((group, 1 - axis, False) for group in groups)
        elif not other_settled:
            stack.append((index, 1 - axis, True))
        else:
            members = list(zip(*(rows[i] for i in index)))
            out.append([min(members[0]), max(members[1]), min(members[2]), max(members[3]),
                        *(sum(column) for column in members[4:])])
    return np.array(out, dtype=np.int64).reshape(-1, rects.shape[1])


def resolve_overlaps(passages: np.ndarray, min_tokens: int, min_sentences: int = 2) -> np.ndarray:
    """Drop short or weak fragments, then keep the largest of any that overlap in the query: the rows kept
    (their places in `passages`, rows of `_RECT_COLUMNS`), in query then document order. Compiled,
    `loops.overlaps_resolved` (most of `check`'s pairs have one to three fragments: one call, where numpy took
    ~15 of a few microseconds each), else numpy's stable sorts and `_kept_greedily`.

    A fragment stands on `min_tokens` tokens of verbatim runs, or on
    `min_sentences` reworded sentences; a single reworded sentence alone is
    too often chance. Of fragments overlapping in the query by more than half
    the smaller one's length, the one tried first (the largest: query plus
    document tokens; of equals, the one first in `passages`) is kept.
    """
    if loops is not None:
        places = np.empty(passages.shape[0], dtype=np.int64)
        return places[:loops.overlaps_resolved(np.ascontiguousarray(passages, dtype=np.int64), min_tokens,
                                               min_sentences, places)]
    q0, q1, d0, d1, verbatim, reworded, anchors = passages[:, :7].T
    candidates = ((q1 - q0 >= min_tokens) & ((verbatim >= min_tokens)
                                             | ((reworded >= min_sentences) & (anchors >= 1)))).nonzero()[0]
    size = (q1 - q0 + d1 - d0)[candidates]
    candidates = candidates[np.argsort(-size, kind="stable")]  # the largest first, ties as they came
    kept = candidates[_kept_greedily(q0[candidates].tolist(), q1[candidates].tolist())]
    return kept[np.lexsort((d0[kept], q0[kept]))]


def _kept_greedily(starts: list[int], ends: list[int]) -> np.ndarray:
    """Which query spans are kept, each in turn, unless it overlaps one kept before by more than half its
    length: what `loops.overlaps_resolved` does (comparing a span only with the kept ones that may reach it:
    two changelogs sharing thousands of fragments took seconds a pair here), and its reference."""
    chosen = np.zeros(len(starts), dtype=bool)
    kept: list[tuple[int, int]] = []
    for row, (start, end) in enumerate(zip(starts, ends)):
        if not any(min(end, k_end) - max(start, k_start) > (end - start) // 2 for k_start, k_end in kept):
            kept.append((start, end))
            chosen[row] = True
    return chosen


def _run_rows(runs: np.ndarray) -> np.ndarray:
    """Verbatim runs as the kernels read them: contiguous int64 rows of their 6 columns."""
    if runs.ndim != 2 or runs.shape[1] != 6:
        raise ValueError(f"runs of 6 columns expected, not {runs.shape}")
    return np.ascontiguousarray(runs, dtype=np.int64)


def _open_sentences(runs: np.ndarray, n: int, axis: int, sentences: Sentences, covered_share: float) -> np.ndarray:
    """Whether each sentence of one side (of its `n` tokens) is open: less than `covered_share` of its tokens
    inside verbatim runs. Compiled, `loops.open_sentences`, else from `_run_cover`."""
    starts, ends = sentences.token_start, sentences.token_end
    if loops is not None:
        out = np.empty(starts.shape[0], dtype=np.bool_)
        loops.open_sentences(_run_rows(runs), axis, n, np.ascontiguousarray(starts, dtype=np.int64),
                             np.ascontiguousarray(ends, dtype=np.int64), covered_share, out)
        return out
    cover = _run_cover(runs, n, axis)
    return ((cover[ends] - cover[starts]) / np.maximum(ends - starts, 1)) < covered_share


def _run_cover(runs: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Prefix sums of the tokens covered by verbatim runs on one side (n + 1 values)."""
    if runs.shape[0] == 0:
        return np.zeros(n + 1, dtype=np.int64)
    delta = (np.bincount(np.minimum(runs[:, 2 * axis], n), minlength=n + 1)
             - np.bincount(np.minimum(runs[:, 2 * axis + 1], n), minlength=n + 1))
    return np.concatenate(([0], np.cumsum(np.cumsum(delta[:-1]) > 0)))


def _best_partners(found: SentenceSeeds, ratio: float) -> np.ndarray:
    """Keep pairs scoring >= ratio x the best pair of their query sentence and of their doc sentence."""
    score = found.dice + found.cosine + found.meaning
    keep = np.ones(len(found), dtype=bool)
    for side in (found.query, found.doc):
        best = np.zeros(int(side.max()) + 1)
        np.maximum.at(best, side, score)
        keep &= score >= ratio * best[side]
    return keep


_PAIRWISE_CELLS = 1 << 20  # rectangle x rectangle comparisons made at once (a few MB of booleans)
_TRIM_TOKENS = 1 << 22  # tokens of fragments trimmed at once (~100 MB of temporaries at most)


def _row_blocks(rows: int, columns: int) -> Iterator[slice]:
    """Slices of `rows` small enough that each block compared with `columns` items stays in _PAIRWISE_CELLS."""
    step = max(1, _PAIRWISE_CELLS // max(columns, 1))
    return (slice(lo, lo + step) for lo in range(0, rows, step))


def _first_and_last(positions: np.ndarray, group: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's first and last position (-1 for a group with none); items in group order, then position."""
    first = np.full(groups, -1, dtype=np.int64)
    last = np.full(groups, -1, dtype=np.int64)
    if group.shape[0]:
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
        stops = np.concatenate((starts[1:], [group.shape[0]])) - 1
        first[group[starts]] = positions[starts]
        last[group[stops]] = positions[stops]
    return first, last


def _words_found(bounds: np.ndarray, q_hashes: np.ndarray, q_content: np.ndarray, d_hashes: np.ndarray,
                 d_content: np.ndarray) -> np.ndarray:
    """For fragments (q0, q1, d0, d1 rows): the first and last content word of each side found in the other
    side's span, as (q_first, q_last, d_first, d_last) rows, -1 where none is. A word is found when the same
    (fragment, word) key occurs on both sides: one sort for all fragments (`loops.words_found`, a set of
    words a fragment, when the package was built with it)."""
    if loops is not None:
        out = np.empty((bounds.shape[0], 4), dtype=np.int64)
        loops.words_found(np.ascontiguousarray(bounds, dtype=np.int64), np.ascontiguousarray(q_hashes),
                          np.ascontiguousarray(q_content), np.ascontiguousarray(d_hashes),
                          np.ascontiguousarray(d_content), out)
        return out
    # numpy's: fragments in blocks of at most _TRIM_TOKENS tokens between them (a huge pair's wide summary
    # clusters would otherwise all be expanded at once), each block one sort
    widths = np.cumsum((bounds[:, 1] - bounds[:, 0]) + (bounds[:, 3] - bounds[:, 2]))
    cuts = [0]
    while cuts[-1] < bounds.shape[0]:
        done = int(widths[cuts[-1] - 1]) if cuts[-1] else 0
        cuts.append(max(cuts[-1] + 1, int(np.searchsorted(widths, done + _TRIM_TOKENS, side="right"))))
    return np.concatenate([_words_found_in_python(bounds[lo:hi], q_hashes, q_content, d_hashes, d_content)
                           for lo, hi in zip(cuts, cuts[1:])])


def _words_found_in_python(bounds: np.ndarray, q_hashes: np.ndarray, q_content: np.ndarray, d_hashes: np.ndarray,
                           d_content: np.ndarray) -> np.ndarray:
    """`_words_found` as numpy: what `loops.words_found` does, and its reference."""
    sides = []
    for start, hashes, content in ((0, q_hashes, q_content), (2, d_hashes, d_content)):
        lengths = bounds[:, start + 1] - bounds[:, start]
        positions = expand_ranges(bounds[:, start], lengths)
        fragment = np.repeat(np.arange(bounds.shape[0], dtype=np.int64), lengths)
        words = content[positions]  # a stop word is a stop word on both sides: content words meet content words
        sides.append((positions[words], fragment[words], hashes[positions[words]]))
    (q_pos, q_frag, q_words), (d_pos, d_frag, d_words) = sides
    fragment, words = np.concatenate((q_frag, d_frag)), np.concatenate((q_words, d_words))
    order = np.lexsort((words, fragment))  # each (fragment, word) key a block
    fragment, words, on_query = fragment[order], words[order], order < q_pos.shape[0]
    opens = np.ones(order.shape[0], dtype=bool)
    opens[1:] = (fragment[1:] != fragment[:-1]) | (words[1:] != words[:-1])
    key = np.cumsum(opens) - 1
    held = np.zeros((int(key[-1]) + 1 if key.shape[0] else 0, 2), dtype=bool)  # the key's sides
    held[key, on_query.astype(np.int64)] = True
    hit = np.empty(order.shape[0], dtype=bool)
    hit[order] = held[key].all(axis=1)
    q_hit, d_hit = hit[: q_pos.shape[0]], hit[q_pos.shape[0]:]
    return np.stack(_first_and_last(q_pos[q_hit], q_frag[q_hit], bounds.shape[0])
                    + _first_and_last(d_pos[d_hit], d_frag[d_hit], bounds.shape[0]), axis=1)


def _cores(bounds: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """For fragments (q0, q1, d0, d1 rows): the span of the verbatim runs each holds whole, as (q0, q1, d0, d1)
    rows; a fragment holding none gets an empty span (q0 and d0 past any token, q1 and d1 at -1). Compiled,
    `loops.fragment_cores`, else numpy's comparisons of every fragment with every run."""
    far = np.iinfo(np.int64).max
    if loops is not None:
        found = np.empty((bounds.shape[0], 4), dtype=np.int64)
        loops.fragment_cores(np.ascontiguousarray(bounds, dtype=np.int64), _run_rows(runs), found)
        return found
    out = np.empty((bounds.shape[0], 4), dtype=np.int64)
    for rows in _row_blocks(bounds.shape[0], runs.shape[0]):
        b = bounds[rows]
        inside = ((runs[None, :, 0] >= b[:, None, 0]) & (runs[None, :, 1] <= b[:, None, 1])
                  & (runs[None, :, 2] >= b[:, None, 2]) & (runs[None, :, 3] <= b[:, None, 3]))
        for column in (0, 2):
            out[rows, column] = np.where(inside, runs[None, :, column], far).min(axis=1, initial=far)
            out[rows, column + 1] = np.where(inside, runs[None, :, column + 1], -1).max(axis=1, initial=-1)
    return out


def _trim(passages: np.ndarray, q_hashes: np.ndarray, q_content: np.ndarray, d_hashes: np.ndarray,
          d_content: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shrink each fragment (rows of `_RECT_COLUMNS`) to its first and last content word found on the other
    side; and whether each has such words (a fragment without them is dropped).

    Reworded seeds are whole sentences, and a sentence can run far past the
    reused words (web text often lacks punctuation); the verbatim runs inside
    a fragment are never cut. All fragments of a pair at once.
    """
    if passages.shape[0] == 0:
        return passages, np.zeros(0, dtype=bool)
    bounds = np.ascontiguousarray(passages[:, :4])
    found, cores = _words_found(bounds, q_hashes, q_content, d_hashes, d_content), _cores(bounds, runs)
    out = passages.copy()
    out[:, 0], out[:, 2] = np.minimum(found[:, 0], cores[:, 0]), np.minimum(found[:, 2], cores[:, 2])
    out[:, 1], out[:, 3] = np.maximum(found[:, 1] + 1, cores[:, 1]), np.maximum(found[:, 3] + 1, cores[:, 3])
    return out, (found[:, 0] >= 0) & (found[:, 2] >= 0)


@dataclass(frozen=True)
class PreparedSentences:
    """A text's content-word mask and sentences: the same on either side of a pair, so a text aligned with
    many others (as query or as document) is split once. Its sentence vectors are made (or read) when a pair
    first needs them (a text whose pairs are all covered by verbatim runs is never embedded)."""

    content: np.ndarray
    sentences: Sentences
    # its sentence vectors in their stored form (`semantic.QuantizedVectors`); None: no semantic seeds
    embed: Callable[[], QuantizedVectors] | None = field(default=None, compare=False)

    @functools.cached_property
    def quantized(self) -> QuantizedVectors | None:
        return None if self.embed is None else self.embed()

    @functools.cached_property
    def vectors(self) -> np.ndarray | None:
        """float32 sentence vectors (`semantic.sentence_vectors` through `QuantizedVectors`), or None
        without a model."""
        quantized = self.quantized
        return None if quantized is None else quantized.vectors()

    @property
    def is_made(self) -> bool:
        """Whether its vectors are made (or read) already."""
        return "quantized" in self.__dict__  # where the cached property keeps its value

    def made(self, vectors: QuantizedVectors) -> None:
        """Take `vectors` as what `quantized` would make (`embed_many` made them for many texts at once)."""
        self.__dict__["quantized"] = vectors

    @functools.cached_property
    def vector_sum(self) -> np.ndarray | None:
        """`semantic.vector_sum` of the vectors: each pair's centre is made of two of these."""
        vectors = self.vectors
        return None if vectors is None else vector_sum(vectors)

    @functools.cached_property
    def squared_norms(self) -> np.ndarray | None:
        """`semantic.squared_norms` of the vectors: each pair's centred norms are made of these."""
        vectors = self.vectors
        return None if vectors is None else squared_norms(vectors)


def prepare_sentences(shingled: Shingled, text: str, model: StaticModel | None = None,
                      stored: Callable[[], QuantizedVectors | None] | None = None) -> PreparedSentences:
    """`model`: the sentences can be embedded too, for semantic seeds. `stored`: the text's sentence vectors
    as an index keeps them (None when it keeps none), read instead of embedding when they fit its sentences."""
    return prepare_sentences_many([shingled], [text], model, [stored])[0]


def prepare_sentences_many(shingled: Sequence[Shingled], texts: Sequence[str], model: StaticModel | None = None,
                           stored: Sequence[Callable[[], QuantizedVectors | None] | None] | None = None
                           ) -> list[PreparedSentences]:
    """`prepare_sentences` of each text, split in one batch (`split_sentences_many`)."""
    stop = stopword_hashes()
    contents = content_masks([one.tokens for one in shingled], stop)
    splits = split_sentences_many(texts, [one.tokens for one in shingled], stop, contents=contents)
    if model is None:
        return [PreparedSentences(content, sentences) for content, sentences in zip(contents, splits)]
    reads = stored if stored is not None else [None] * len(texts)
    return [PreparedSentences(content, sentences, _embedding(one, text, sentences, model, read))
            for one, text, content, sentences, read in zip(shingled, texts, contents, splits, reads)]


def embed_many(prepared: Sequence[PreparedSentences], shingled: Sequence[Shingled], texts: Sequence[str],
               model: StaticModel) -> None:
    """The sentence vectors of these texts (prepared with `model`) not made yet, embedded at once
    (`semantic.sentence_vectors_many`: the same bits as each alone): a scan's step embeds its new documents
    256 at a time. Vectors an index stores are not read: these are texts it holds none for."""
    todo = [k for k, one in enumerate(prepared) if one.embed is not None and not one.is_made]
    made = sentence_vectors_many(model, [texts[k] for k in todo], [shingled[k].tokens for k in todo],
                                 [prepared[k].sentences.token_start for k in todo],
                                 [prepared[k].sentences.token_end for k in todo])
    for k, vectors in zip(todo, made):
        prepared[k].made(QuantizedVectors.of(vectors))


def _embedding(shingled: Shingled, text: str, sentences: Sentences, model: StaticModel,
               stored: Callable[[], QuantizedVectors | None] | None) -> Callable[[], QuantizedVectors]:
    """How a text's sentence vectors are made when first needed: read as stored when they fit its sentences,
    else embedded."""

    def embed() -> QuantizedVectors:
        found = stored() if stored is not None else None
        if found is not None and found.codes.shape == (sentences.token_start.shape[0], model.dimensions):
            return found
        return QuantizedVectors.of(sentence_vectors(model, text, shingled.tokens, sentences.token_start,
                                                    sentences.token_end))

    return embed


@dataclass(frozen=True)
class PreparedQuery:
    """What aligning one query with many documents would otherwise redo for each: made by `prepare_query`."""

    index: QueryIndex
    split: PreparedSentences | None  # None when only verbatim runs are aligned

    @property
    def content(self) -> np.ndarray | None:
        return None if self.split is None else self.split.content

    @property
    def sentences(self) -> Sentences | None:
        return None if self.split is None else self.split.sentences

    @property
    def semantic(self) -> bool:
        """Whether its sentences can be embedded (prepared with a model)."""
        return self.split is not None and self.split.embed is not None


def prepare_query(query: Shingled, query_text: str, with_sentences: bool = True,
                  model: StaticModel | None = None) -> PreparedQuery:
    split = prepare_sentences(query, query_text, model) if with_sentences else None
    return PreparedQuery(QueryIndex.of(query.fingerprints), split)


def _with_meaning(found: SentenceSeeds, q_vectors: np.ndarray, d_vectors: np.ndarray, weak: float,
                  q_rows: np.ndarray, d_rows: np.ndarray, sums: tuple[np.ndarray, np.ndarray],
                  squares: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[SentenceSeeds, np.ndarray]:
    """The lexical seeds (pairs of sentences among `q_rows` x `d_rows`, in query then doc order, as
    `sentence_pairs` gives them) and the pairs at `weak` centred cosine or more, together, with each one's
    cosine (the lexical seeds' measured too: the best-partner rule weighs both signals); and which of them
    are lexical. `sums`, `squares`: both texts' `vector_sum`s and `squared_norms`. Every cosine is read from
    one product of the rows (`similarity_parts`, a block at a time), the lexical seeds' too."""
    centre = pair_centre(q_vectors, d_vectors, sums)
    n_d = d_rows.shape[0]
    # the lexical seeds as cells of the q_rows x d_rows table, in the same order (rows and seeds both sorted)
    q_cell = np.zeros(q_vectors.shape[0], dtype=np.int64)
    d_cell = np.zeros(d_vectors.shape[0], dtype=np.int64)
    q_cell[q_rows], d_cell[d_rows] = np.arange(q_rows.shape[0]), np.arange(n_d)
    lexical_cells = q_cell[found.query] * n_d + d_cell[found.doc]
    parts = similarity_parts(q_vectors, d_vectors, q_rows, d_rows, centre, squares)
    blocks = [_meaning_cells(parts, lo, weak, lexical_cells) for lo in range(0, q_rows.shape[0], parts.block_rows)]
    cells, meaning, lexical = (list(column) for column in zip(*blocks))
    out_cells = np.concatenate(cells)
    is_lexical = np.concatenate(lexical)
    dice, cosine = np.zeros(out_cells.shape[0]), np.zeros(out_cells.shape[0])
    dice[is_lexical], cosine[is_lexical] = found.dice, found.cosine
    return SentenceSeeds(q_rows[out_cells // n_d], d_rows[out_cells % n_d], dice, cosine,
                         np.concatenate(meaning)), is_lexical


def _meaning_cells(parts: SimilarityParts, lo: int, weak: float, lexical_cells: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block of `_with_meaning`'s table (query rows lo on, `parts.block_rows` of them): its cells (numbered
    across the whole table) that are lexical seeds (`lexical_cells`, sorted) or at `weak` or more, in order,
    with their cosines and whether lexical. Compiled, `loops.meaning_seeds` (the same bits), else numpy."""
    step, n_d = parts.block_rows, parts.doc.shape[0]
    first = lo * n_d
    if loops is not None:
        products = parts.products(lo)
        room = products.size
        cells, meaning, lexical = np.empty(room, dtype=np.int64), np.empty(room), np.empty(room, dtype=np.bool_)
        found = loops.meaning_seeds(
            products, np.ascontiguousarray(parts.query_dots[lo:lo + step]), parts.doc_dots, parts.centre_square,
            np.ascontiguousarray(parts.query_norms[lo:lo + step]), parts.doc_norms, weak, lexical_cells, first,
            cells, meaning, lexical)
        return cells[:found], meaning[:found], lexical[:found]
    sims = parts.cosines(lo)
    at = slice(*np.searchsorted(lexical_cells, (first, first + sims.size)).tolist())
    mark = (sims >= weak).ravel()
    seeds = np.zeros(sims.size, dtype=bool)
    seeds[lexical_cells[at] - first] = True
    block = np.flatnonzero(mark | seeds)
    return block + first, sims.ravel()[block].astype(np.float64), seeds[block]


def _sentence_rects(query: Shingled, qs: PreparedSentences, doc: Shingled, ds: PreparedSentences,
                    runs: np.ndarray, options: AlignOptions, query_mask: np.ndarray | None, need_anchor: bool,
                    doc_mask: np.ndarray | None = None) -> np.ndarray:
    """Reworded seeds as rectangles (q0, q1, d0, d1, 0, 1, is_anchor, by_meaning_alone, meaning, 1).

    need_anchor: the runs alone cannot make a passage, so without an anchor no passage can stand
    (`resolve_overlaps`): none is returned then, and the filters below are skipped. A seed whose sentence is
    mostly masked, on the query's side (`query_mask`) or the document's (`doc_mask`), is dropped.
    """
    none = np.empty((0, _RECT_COLUMNS), dtype=np.int64)
    strong = float(options.sentence_dice or 0.0)
    qs_, ds_ = qs.sentences, ds.sentences
    # sentences mostly covered by verbatim runs are placed by those runs already: they get no reworded seed
    q_open = _open_sentences(runs, len(query.tokens), 0, qs_, options.covered_share)
    d_open = _open_sentences(runs, len(doc.tokens), 1, ds_, options.covered_share)
    # sentences mostly covered by the runs get no seed: only the open ones are joined
    found = sentence_pairs(qs_, ds_, min(options.weak_dice, strong), min(options.weak_dice, options.sentence_cosine),
                           q_open=q_open, d_open=d_open)
    lexical = np.ones(len(found), dtype=bool)
    strong_meaning = np.inf
    threshold = options.semantic
    compared = np.count_nonzero(q_open) * np.count_nonzero(d_open)
    if threshold is not None and qs.embed is not None and ds.embed is not None and 0 < compared \
            <= options.semantic_max_pairs:
        q_vectors, d_vectors = qs.vectors, ds.vectors  # embedded now, once a pair has sentences left open
        if q_vectors is not None and d_vectors is not None:
            q_sum, d_sum, q_squares, d_squares = qs.vector_sum, ds.vector_sum, qs.squared_norms, ds.squared_norms
            assert q_sum is not None and d_sum is not None and q_squares is not None and d_squares is not None
            found, lexical = _with_meaning(found, q_vectors, d_vectors, min(options.weak_semantic, threshold),
                                           np.flatnonzero(q_open), np.flatnonzero(d_open), (q_sum, d_sum),
                                           (q_squares, d_squares))
            strong_meaning = threshold

    def anchors(seeds: SentenceSeeds) -> np.ndarray:
        return ((seeds.dice >= strong) & (seeds.cosine >= options.sentence_cosine)) | (seeds.meaning >= strong_meaning)

    if len(found) == 0 or (need_anchor and not anchors(found).any()):
        return none
    uncovered = q_open[found.query] & d_open[found.doc]
    found, lexical = found.take(uncovered), lexical[uncovered]
    if len(found) == 0:
        return none
    best = _best_partners(found, options.best_ratio)
    found, lexical = found.take(best), lexical[best]
    rects = np.empty((len(found), _RECT_COLUMNS), dtype=np.int64)
    rects[:, 0], rects[:, 1] = qs_.token_start[found.query], qs_.token_end[found.query]
    rects[:, 2], rects[:, 3] = ds_.token_start[found.doc], ds_.token_end[found.doc]
    rects[:, 4], rects[:, 5], rects[:, 9] = 0, 1, 1
    rects[:, 6], rects[:, 7] = anchors(found), ~lexical
    rects[:, 8] = np.rint(np.maximum(found.meaning, 0) * 1000)
    for mask, column in ((query_mask, 0), (doc_mask, 2)):
        if mask is not None and mask.shape[0]:
            covered = np.concatenate(([0], np.cumsum(mask.astype(np.int64))))
            last = np.minimum(rects[:, column + 1], mask.shape[0])
            first = np.minimum(rects[:, column], mask.shape[0])
            rects = rects[(covered[last] - covered[first]) * 2 < (last - first + 1)]
    return rects


_BOUND_MARGIN = 1e-3  # what the batched bounds leave for float sums taken in another order


def may_hold_anchor(text: PreparedSentences, partners: list[PreparedSentences], options: AlignOptions) -> np.ndarray:
    """For each partner, whether one of its sentence pairs with `text` could be an anchor (a reworded seed at
    `sentence_dice` and `sentence_cosine`, or one by meaning at `semantic`), from bounds made for all the
    partners at once. False is certain: a pair whose verbatim runs are too few to make a passage alone then
    has nothing to find (`token_passages` stops there), so such pairs are ruled out in batches instead of one
    sentence alignment each. The bounds are symmetric: either text may be the query."""
    if options.sentence_dice is None or not partners:
        return np.zeros(len(partners), dtype=bool)
    lexical = best_pair_scores(text.sentences, [p.sentences for p in partners])
    out = lexical >= min(options.sentence_dice, options.sentence_cosine) - _BOUND_MARGIN
    if options.semantic is not None and text.embed is not None and all(p.embed is not None for p in partners):
        vectors = text.vectors
        partner_vectors = [p.vectors for p in partners]
        if vectors is not None and all(v is not None for v in partner_vectors):
            meaning = best_centred_cosines(vectors, partner_vectors)  # type: ignore[arg-type]
            out |= meaning >= options.semantic - _BOUND_MARGIN
    return out


def too_few_runs(runs: np.ndarray, options: AlignOptions) -> bool:
    """Whether even all verbatim runs joined could not make a passage: only reworded anchors then can."""
    return int(runs[:, 4].sum()) < options.min_tokens


def _drop_shadowed(rects: np.ndarray, min_tokens: int) -> np.ndarray:
    """Drop weak seeds that overlap a strong verbatim fragment on one side only.

    A strong fragment (>= min_tokens verbatim tokens) says where its text went;
    a short run or a sentence pair reusing the same query (or doc) text
    elsewhere is a repeated phrase, and would stretch the fragment if kept.
    """
    strong = rects[:, 4] >= min_tokens
    if not strong.any():
        return rects
    if loops is not None:  # each weak seed compared until the first strong fragment that shadows it
        kept = np.ones(rects.shape[0], dtype=np.uint8)
        loops.unshadowed(np.ascontiguousarray(rects, dtype=np.int64), min_tokens, kept)
        return rects[kept.view(np.bool_)]
    s = rects[strong]
    weak = np.flatnonzero(~strong)
    keep = np.ones(rects.shape[0], dtype=bool)
    for rows in _row_blocks(weak.shape[0], s.shape[0]):
        r = rects[weak[rows]]
        q_hit = np.minimum(s[None, :, 1], r[:, None, 1]) > np.maximum(s[None, :, 0], r[:, None, 0])
        d_hit = np.minimum(s[None, :, 3], r[:, None, 3]) > np.maximum(s[None, :, 2], r[:, None, 2])
        keep[weak[rows]] = ~(q_hit ^ d_hit).any(axis=1)
    return rects[keep]


def verbatim_runs(query: Shingled, doc: Shingled, w: int, options: AlignOptions = AlignOptions(),
                  query_mask: np.ndarray | None = None, prepared: PreparedQuery | None = None,
                  doc_index: QueryIndex | None = None) -> np.ndarray:
    """The pair's verbatim seeds joined into diagonal runs: what both passes start from.
    `doc_index`: `QueryIndex.of(doc.fingerprints)`, when the caller aligns the document with many."""
    return verbatim_runs_of(query, [doc], w, options, query_mask, prepared, [doc_index])[0]


def verbatim_runs_of(query: Shingled, docs: Sequence[Shingled], w: int, options: AlignOptions = AlignOptions(),
                     query_mask: np.ndarray | None = None, prepared: PreparedQuery | None = None,
                     doc_indexes: Sequence[QueryIndex | None] | None = None) -> list[np.ndarray]:
    """`verbatim_runs` of the query with each document: compiled (`loops.verbatim_runs`: each document's
    fingerprints merged with the query's, its seeds sorted apart), else in one pass of numpy calls for all (a
    pair's own pass cost ~50 us of calls however few its seeds). `doc_indexes`: each document's `QueryIndex`
    where the caller keeps one (None: made here)."""
    index = prepared.index if prepared is not None else QueryIndex.of(query.fingerprints)
    kept = doc_indexes if doc_indexes is not None else [None] * len(docs)
    indexes = [found if found is not None else QueryIndex.of(doc.fingerprints) for doc, found in zip(docs, kept)]
    if loops is not None and indexes:  # each document's seeds found by a merge and sorted apart (the same runs)
        counts = np.empty(len(indexes), dtype=np.int64)
        sorted_fps, offsets = joined_parts([found.sorted_fps for found in indexes], np.uint64)
        made = loops.verbatim_runs(
            contiguous(index.sorted_fps, np.uint64), contiguous(index.order), contiguous(index.repeats), sorted_fps,
            joined_parts([found.order for found in indexes])[0], joined_parts([found.repeats for found in indexes])[0],
            offsets, options.max_repeats,
            np.empty(0, dtype=np.uint8) if query_mask is None else contiguous(query_mask, np.uint8), w, counts)
        runs = np.frombuffer(made, dtype=np.int64).reshape(-1, 6)
        cuts = np.concatenate(([0], np.cumsum(counts))).tolist()
        return [runs[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    qi, dj, dk = _seeds_of(index, indexes, options.max_repeats, query_mask)
    return _diagonal_runs(qi, dj, dk, w, len(docs))


def token_passages(query: Shingled, query_text: str, doc: Shingled, doc_text: str, w: int,
                   options: AlignOptions = AlignOptions(), query_mask: np.ndarray | None = None,
                   prepared: PreparedQuery | None = None, doc_sentences: PreparedSentences | None = None,
                   runs: np.ndarray | None = None, model: StaticModel | None = None,
                   fragments: np.ndarray | None = None,
                   sentence_masks: tuple[np.ndarray | None, np.ndarray | None] | None = None) -> list[TokenPassage]:
    """Shared passages in token coordinates (see the module docstring for the steps).

    `prepared`: `prepare_query(query, query_text)`, when the caller aligns one query with many documents;
    `doc_sentences`: `prepare_sentences(doc, doc_text)`, when the caller aligns the document with many;
    `runs`: `verbatim_runs` of this pair with the same `max_repeats` and `query_mask`, when a verbatim pass
    already made them;
    `model`: the sentence model, for semantic seeds (`options.semantic`) when the query was not prepared
    with it; a document prepared without vectors gets none;
    `fragments`: `extend(runs, options.max_gap)`, when a verbatim pass before this one made them (they are
    both passes' first step: a pair whose verbatim passages call for the sentence pass joins its runs once);
    `sentence_masks`: the query's and the document's tokens whose sentences may not seed a reworded passage
    (default: `query_mask` for the query, none for the document); a scan's pair masks both sides' base text
    and the sentences that reword it, where verbatim seeds need only the query's mask.
    """
    model = model if options.semantic is not None and options.sentence_dice is not None else None
    if prepared is None or (prepared.sentences is None and options.sentence_dice is not None) or (
            model is not None and not prepared.semantic):
        prepared = prepare_query(query, query_text, with_sentences=options.sentence_dice is not None, model=model)
    if runs is None:
        runs = verbatim_runs(query, doc, w, options, query_mask, prepared)
    few_runs = too_few_runs(runs, options)
    if options.sentence_dice is None or len(query.tokens) == 0 or len(doc.tokens) == 0:
        if few_runs:
            return []
        rows = extend(runs, options.max_gap) if fragments is None else fragments
        stand = _standing_fragments(rows, options.min_tokens)
        return _passages_of(stand[resolve_overlaps(stand, options.min_tokens, options.min_sentences)])
    query_sentences = prepared.split
    if query_sentences is None:
        raise ValueError("a query prepared without sentences cannot be aligned by sentence")
    q_content = query_sentences.content
    if doc_sentences is None:
        doc_sentences = prepare_sentences(doc, doc_text, model if prepared.semantic else None)
    d_content = doc_sentences.content
    q_mask, d_mask = sentence_masks if sentence_masks is not None else (query_mask, None)
    sentence_rects = _sentence_rects(query, query_sentences, doc, doc_sentences, runs, options, q_mask,
                                     need_anchor=few_runs, doc_mask=d_mask)
    if few_runs and not sentence_rects[:, 6].any():
        return []  # no fragment can stand on min_tokens verbatim tokens nor on an anchored reworded seed
    # verbatim runs first joined tightly, so their fragments keep exact bounds
    verbatim = extend(runs, options.max_gap) if fragments is None else fragments
    # a verbatim fragment counts as a piece of a summary when it could stand as a passage alone
    rects = np.zeros((verbatim.shape[0], _RECT_COLUMNS), dtype=np.int64)
    rects[:, :5] = verbatim[:, :5]
    rects[:, 9] = verbatim[:, 4] >= options.min_tokens
    rects = _drop_shadowed(np.concatenate((rects, sentence_rects)), options.min_tokens)
    passes = [_clusters_at(rects, verbatim, options.sentence_gap, options.doc_gap)]
    ratio, gap, wide = options.summary_ratio, options.sentence_gap, options.summary_gap
    if wide is not None:
        # summaries: few query sentences whose partners spread over much more document text; and, as a scan
        # makes the longer text the query, few document sentences whose partners spread over the query
        few_pieces = int(rects[:, 9].sum()) < options.summary_sentences  # then no cluster has enough
        passes.append(rects[:0] if few_pieces
                      else _clusters_at(rects, verbatim, gap, wide, min_pieces=options.summary_sentences))
        if options.summary_both_ways:
            passes.append(passes[-1] if few_pieces else
                          _clusters_at(rects, verbatim, wide, gap, spread_query=True,
                                       min_pieces=options.summary_sentences))
    is_reworded = [found[:, 5] > 0 for found in passes]
    cuts = list(itertools.accumulate((int(np.count_nonzero(rows)) for rows in is_reworded), initial=0))
    if cuts[-1]:  # the reworded fragments of every pass trimmed at once
        trimmed, has_words = _trim(np.concatenate([found[rows] for found, rows in zip(passes, is_reworded)]),
                                   query.tokens.hashes, q_content, doc.tokens.hashes, d_content, runs)
        passes = [_standing(found, rows, trimmed[lo:hi], has_words[lo:hi], options.semantic_passage)
                  for found, rows, lo, hi in zip(passes, is_reworded, cuts, cuts[1:])]
    passages, *wider = passes
    condensed = None  # which passages are summaries
    if any(found.shape[0] for found in wider):
        spreads = wider[0][:, 3] - wider[0][:, 2] >= ratio * (wider[0][:, 1] - wider[0][:, 0])
        condensing = wider[0][spreads]
        summaries = (condensing[~_explained(condensing, passages, ratio, options.summary_explained)]
                     if condensing.shape[0] else condensing)
        spread = (wider[1][wider[1][:, 1] - wider[1][:, 0] >= ratio * (wider[1][:, 3] - wider[1][:, 2])]
                  if len(wider) > 1 else passages[:0])
        if summaries.shape[0] or spread.shape[0]:  # the fragments a summary holds give way to it
            spans = passages[:, :4]
            held = _inside_any(spans, summaries[:, :4], both_sides=False) | _inside_any(spans, spread[:, :4],
                                                                                        both_sides=True)
            passages = np.concatenate((passages[~held], summaries, spread))
            condensed = np.arange(passages.shape[0]) >= passages.shape[0] - summaries.shape[0] - spread.shape[0]
    kept = resolve_overlaps(passages, options.min_tokens, options.min_sentences)
    return _grown_by_neighbours(_passages_of(passages[kept], None if condensed is None else condensed[kept]),
                                query_sentences, doc_sentences, options)


def _standing(found: np.ndarray, reworded: np.ndarray, trimmed: np.ndarray, has_words: np.ndarray,
              semantic_passage: float) -> np.ndarray:
    """A pass's fragments, the `reworded` ones replaced by their `_trim`med rows; those without words found
    dropped, and a passage found mostly by meaning unless its mean similarity reaches `semantic_passage`
    (before a summary can take the place of the fragments it holds)."""
    if trimmed.shape[0] == 0:  # verbatim fragments only: they stand here (`resolve_overlaps` decides)
        return found
    stands = has_words.copy()
    by_meaning = (stands & (2 * trimmed[:, 7] > trimmed[:, 5])).nonzero()[0]  # kind "semantic"
    if by_meaning.shape[0]:
        stands[by_meaning] = _strong_enough(trimmed[by_meaning, 8], trimmed[by_meaning, 5], semantic_passage)
    out = found.copy()
    out[reworded] = trimmed
    if stands.all():
        return out
    keep = np.ones(out.shape[0], dtype=bool)
    keep[reworded] = stands
    return out[keep]


def _clusters_at(rects: np.ndarray, verbatim: np.ndarray, gap: int, doc_gap: int | None, spread_query: bool = False,
                 min_pieces: int = 0) -> np.ndarray:
    """The fragments of the seed `rects`' clusters at these gaps (`_RECT_COLUMNS`), those joining at least
    `min_pieces` pieces (trimming keeps a fragment's pieces, so a summary pass skips the smaller ones before
    it); reworded ones are trimmed after, all passes' at once. A cluster of verbatim fragments only whose query
    side far outgrows its document side (a phrase the query repeats, matched twice to the same document text)
    is not bridged: it gives its `verbatim` fragments (`extend`'s rows) instead, unless `spread_query`."""
    found = cluster(rects, gap, doc_gap, min_pieces)
    if spread_query:
        return found
    parts, last = [], 0
    for row, (q0, q1, d0, d1, _, reworded) in enumerate(found[:, :6].tolist()):  # a few rows: lists beat ufuncs
        if reworded or q1 - q0 <= 2 * (d1 - d0):
            continue
        inside = (q0 <= verbatim[:, 0]) & (verbatim[:, 1] <= q1) & (d0 <= verbatim[:, 2]) & (verbatim[:, 3] <= d1)
        parts += [found[last:row], _rect_rows(verbatim[inside])]
        last = row + 1
    return np.concatenate(parts + [found[last:]]) if parts else found


def _strong_enough(meaning: np.ndarray, seeds: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each passage's `TokenPassage.similarity` (its mean seed cosine, rounded to 3 decimals; none
    without a cosine) reaches `threshold`: decided in numpy, Python's rounding asked only within a thousandth
    of the threshold (a pair of long pages has thousands of such fragments)."""
    # as Python divides (int64 values below 2**53 are exact floats); no cosine counts as 0
    mean = np.where(meaning != 0, meaning / np.maximum(seeds, 1) / 1000, 0.0)
    out = mean >= threshold
    close = (np.abs(mean - threshold) < 1e-3).nonzero()[0]  # rounding moves a value by half a thousandth at most
    out[close] = [round(value, 3) >= threshold for value in mean[close].tolist()]
    return out


def _grown_by_neighbours(passages: list[TokenPassage], qs: PreparedSentences, ds: PreparedSentences,
                         options: AlignOptions) -> list[TokenPassage]:
    """Reworded passages grown at either end by one sentence pair at a time: the query sentence just before
    (after) the passage and the document sentence just before (after) it, while each is the other's best
    partner by centred cosine, at `neighbour_semantic` or more, both hold `neighbour_tokens` tokens, and
    neither reaches into another passage. A passage's seeds stay as they were (its kind and similarity say
    what found it); only its bounds move."""
    threshold = options.neighbour_semantic
    if threshold is None or options.semantic is None or not any(p.reworded for p in passages) \
            or len(qs.sentences) * len(ds.sentences) > options.semantic_max_pairs:
        return passages
    q_vectors, d_vectors = qs.vectors, ds.vectors
    if q_vectors is None or d_vectors is None or q_vectors.shape[0] == 0 or d_vectors.shape[0] == 0:
        return passages
    centre = pair_centre(q_vectors, d_vectors, (qs.vector_sum, ds.vector_sum))  # type: ignore[arg-type]
    q_squares, d_squares = qs.squared_norms, ds.squared_norms
    assert q_squares is not None and d_squares is not None  # as the vectors
    squares = (q_squares, d_squares)
    q_bounds = (qs.sentences.token_start, qs.sentences.token_end)
    d_bounds = (ds.sentences.token_start, ds.sentences.token_end)

    def best_partner(row: int, of_query: bool) -> int:
        rows = np.array([row])
        if of_query:
            _, partners, cosines = similar_sentences(q_vectors, d_vectors, -np.inf, rows, None, centre, squares)
        else:
            partners, _, cosines = similar_sentences(q_vectors, d_vectors, -np.inf, None, rows, centre, squares)
        return int(partners[int(np.argmax(cosines))])

    out = list(passages)

    def free(start: int, end: int, axis: int, own: int) -> bool:
        spans = ((p.query_start, p.query_end) if axis == 0 else (p.doc_start, p.doc_end)
                 for k, p in enumerate(out) if k != own)
        return all(end <= first or last <= start for first, last in spans)

    may_grow = _first_steps_worth_trying(out, q_bounds, d_bounds, q_vectors, d_vectors, centre, options)
    for k, passage in enumerate(out):
        if not passage.reworded:
            continue
        for before in (True, False):
            if not may_grow[k, int(before)]:
                continue
            while True:
                q_next = _next_sentence(q_bounds, passage.query_start, passage.query_end, before)
                d_next = _next_sentence(d_bounds, passage.doc_start, passage.doc_end, before)
                if q_next is None or d_next is None or min(
                        int(q_bounds[1][q_next] - q_bounds[0][q_next]),
                        int(d_bounds[1][d_next] - d_bounds[0][d_next])) < options.neighbour_tokens:
                    break
                # the pair's own cosine first (most neighbours stop there), then whether each is the other's best
                if centred_cosines(q_vectors, d_vectors, np.array([q_next]), np.array([d_next]), centre)[0] \
                        < threshold or best_partner(q_next, True) != d_next or best_partner(d_next, False) != q_next:
                    break
                q_span = (int(q_bounds[0][q_next]), int(q_bounds[1][q_next]))
                d_span = (int(d_bounds[0][d_next]), int(d_bounds[1][d_next]))
                if not (free(*q_span, 0, k) and free(*d_span, 1, k)):
                    break
                passage = (replace(passage, query_start=q_span[0], doc_start=d_span[0]) if before
                           else replace(passage, query_end=q_span[1], doc_end=d_span[1]))
                out[k] = passage
    return out


def _first_steps_worth_trying(passages: list[TokenPassage], q_bounds: tuple[np.ndarray, np.ndarray],
                              d_bounds: tuple[np.ndarray, np.ndarray], q_vectors: np.ndarray, d_vectors: np.ndarray,
                              centre: np.ndarray, options: AlignOptions) -> np.ndarray:
    """For each passage, after (column 0) and before (column 1) it, whether its first step of growth passes
    the tests that stop most (a neighbour on both sides, long enough, their own cosine at the threshold): all
    at once, where each was a few numpy calls (two changelogs hold thousands of reworded passages). A step's
    neighbours depend only on the end it grows, which growth at the other end leaves as it was."""
    spans = _spans(passages)
    # the sentence just after: the one after the last starting before the end; just before: the one before the
    # first ending past the start (`_next_sentence`)
    q_after = np.searchsorted(q_bounds[0], spans[:, 1], side="left")
    d_after = np.searchsorted(d_bounds[0], spans[:, 3], side="left")
    q_before = np.searchsorted(q_bounds[1], spans[:, 0], side="right") - 1
    d_before = np.searchsorted(d_bounds[1], spans[:, 2], side="right") - 1
    q_next = np.stack((q_after, q_before), axis=1)
    d_next = np.stack((d_after, d_before), axis=1)
    exists = (q_next >= 0) & (q_next < q_bounds[0].shape[0]) & (d_next >= 0) & (d_next < d_bounds[0].shape[0])
    q_at, d_at = np.where(exists, q_next, 0), np.where(exists, d_next, 0)
    long_enough = np.minimum(q_bounds[1][q_at] - q_bounds[0][q_at], d_bounds[1][d_at] - d_bounds[0][d_at]) \
        >= options.neighbour_tokens
    worth = exists & long_enough & np.array([p.reworded > 0 for p in passages], dtype=bool)[:, None]
    rows, sides = np.nonzero(worth)
    cosines = centred_cosines(q_vectors, d_vectors, q_at[rows, sides], d_at[rows, sides], centre)
    worth[rows[cosines < options.neighbour_semantic], sides[cosines < options.neighbour_semantic]] = False
    return worth


def _next_sentence(bounds: tuple[np.ndarray, np.ndarray], start: int, end: int, before: bool) -> int | None:
    """The sentence just before (after) the sentences that tokens [start, end) touch; None at the text's edge."""
    starts, ends = bounds
    if before:
        touched = int(np.searchsorted(ends, start, side="right"))  # the first sentence ending past `start`
        return touched - 1 if touched >= 1 else None
    touched = int(np.searchsorted(starts, end, side="left")) - 1  # the last sentence starting before `end`
    return touched + 1 if touched + 1 < starts.shape[0] else None


def condenses(span_a: int, span_b: int, ratio: float = AlignOptions.summary_ratio) -> bool:
    """Whether a passage whose sides span these lengths is a summary: one side `ratio` times the other or
    more (what the summary passes find); every face says so rather than show the two as the same text."""
    shorter, longer = sorted((span_a, span_b))
    return longer >= ratio * max(shorter, 1)


def _spans(passages: Sequence[TokenPassage]) -> np.ndarray:
    """(query_start, query_end, doc_start, doc_end) rows."""
    return np.array([(p.query_start, p.query_end, p.doc_start, p.doc_end) for p in passages],
                    dtype=np.int64).reshape(len(passages), 4)


def _inside_any(inner: np.ndarray, outer: np.ndarray, both_sides: bool) -> np.ndarray:
    """Which `_spans` rows of `inner` lie inside some row of `outer` on the query side (and on the document
    side too, with `both_sides`): blocks of comparisons, where a loop over pairs of passages took seconds on
    two changelogs sharing thousands of fragments."""
    found = np.zeros(inner.shape[0], dtype=bool)
    if outer.shape[0] == 0:
        return found
    for rows in _row_blocks(inner.shape[0], outer.shape[0]):
        r = inner[rows]
        hit = (outer[None, :, 0] <= r[:, None, 0]) & (r[:, None, 1] <= outer[None, :, 1])
        if both_sides:
            hit &= (outer[None, :, 2] <= r[:, None, 2]) & (r[:, None, 3] <= outer[None, :, 3])
        found[rows] = hit.any(axis=1)
    return found


def _explained(summaries: np.ndarray, fragments: np.ndarray, ratio: float, share: float) -> np.ndarray:
    """For each summary, whether one fragment inside its query side, spreading less than a summary does,
    covers `share` of it: the query text is then matched one to one, and the summary's other pieces are
    sentences alike by chance spread over the document (a summary condenses: no single piece holds most of
    it)."""
    s, f = summaries[:, :4], fragments[:, :4]
    f = f[f[:, 3] - f[:, 2] < ratio * (f[:, 1] - f[:, 0])]
    length = f[:, 1] - f[:, 0]
    least = share * (s[:, 1] - s[:, 0])
    found = np.zeros(s.shape[0], dtype=bool)
    if f.shape[0] == 0:
        return found
    for rows in _row_blocks(s.shape[0], f.shape[0]):
        r = s[rows]
        found[rows] = ((r[:, None, 0] <= f[None, :, 0]) & (f[None, :, 1] <= r[:, None, 1])
                       & (length[None, :] >= least[rows, None])).any(axis=1)
    return found


def align(query: Shingled, query_text: str, doc: Shingled, doc_text: str, w: int,
          options: AlignOptions = AlignOptions(), query_mask: np.ndarray | None = None,
          prepared: PreparedQuery | None = None, model: StaticModel | None = None,
          doc_sentences: PreparedSentences | None = None, runs: np.ndarray | None = None,
          fragments: np.ndarray | None = None,
          sentence_masks: tuple[np.ndarray | None, np.ndarray | None] | None = None) -> list[Passage]:
    """Shared passages as character spans in both texts (text taken from the query); `doc_sentences`,
    `runs`, `fragments` and `sentence_masks` as `token_passages` takes them."""
    out = []
    n_q, n_d = len(query.tokens), len(doc.tokens)
    for p in token_passages(query, query_text, doc, doc_text, w, options, query_mask, prepared, doc_sentences, runs,
                            model, fragments, sentence_masks):
        q_end, d_end = min(p.query_end, n_q), min(p.doc_end, n_d)
        q_start_char = int(query.tokens.starts[p.query_start])
        q_end_char = int(query.tokens.ends[q_end - 1])
        out.append(Passage(
            query_start=q_start_char,
            query_end=q_end_char,
            doc_start=int(doc.tokens.starts[p.doc_start]),
            doc_end=int(doc.tokens.ends[d_end - 1]),
            text=query_text[q_start_char:q_end_char],
            kind=p.kind,
            similarity=p.similarity if p.kind == "semantic" else None,
        ))
    return out


def covered_tokens(passages_token_ranges: list[tuple[int, int]], n_tokens: int) -> np.ndarray:
    """Boolean mask of query tokens covered by any of the [start, end) ranges."""
    delta = np.zeros(n_tokens + 1, dtype=np.int64)
    for start, end in passages_token_ranges:
        delta[max(start, 0)] += 1
        delta[min(end, n_tokens)] -= 1
    return np.cumsum(delta[:-1]) > 0
