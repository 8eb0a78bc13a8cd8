"""Every lifted passage of an index (issue 20): the pairs of documents that share a passage, and each
document's share found elsewhere, MOSS- and Turnitin-style.

After a scan, the pairs the postings count (Broder's <id, id, count>) that may
share a passage of `params.min_passage_words` words (`candidate_pairs`: enough
winnowed anchors, close enough together; or a document's top partners, which
`check` would give its sentence pass) are aligned once, in parallel, with
`check`'s aligner; the passages are stored in the index
(`scanner/index/passages.py`). A rescan aligns only the pairs of documents it
has not aligned yet. Every face then reads the stored passages.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing as mp
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from scanner.core.config import ALGORITHM_VERSION, Params
from scanner.core.errors import ScannerError
from scanner.engine.align import (
    AlignOptions,
    embed_many,
    extend,
    may_hold_anchor,
    token_passages,
    too_few_runs,
    verbatim_runs_of,
)
from scanner.engine.arrays import difference, distinct, in_sorted
from scanner.engine.arrays import ranks as group_ranks
from scanner.engine.semantic import (
    MEANING_DIMENSIONS,
    MeaningSpace,
    QuantizedVectors,
    StaticModel,
    document_vector,
)
from scanner.engine.sketch import winnow_batch
from scanner.index.passages import (
    PASSAGE_BLOB_FORMAT,
    PassagePair,
    StepPlan,
    StoredPairRow,
    StoredPassage,
    covered_count,
    stored_row,
    swapped,
)
from scanner.index.store import Index
from scanner.services.check import MEANING_CANDIDATES, SENTENCE_ALIGNED_FIRST
from scanner.services.prepared import AlignSide, PreparedSides, cache_tokens
from scanner.services.semantic import LazyModel, meaning_key, open_model
from scanner.services.workers import Assign, Broken, WorkerProcess, serve_tasks

if TYPE_CHECKING:
    from scanner.services.scan.writer import FileIssue

# Bump when the same texts and parameters would give other passages.
ALIGN_VERSION = 9  # 2: semantic seeds (issue 21), summaries joining verbatim fragments; 3: summaries both ways;
# 4: no shingle held by 5 documents or fewer is very common (the rare-anchor filter); 5: summaries one way again;
# 6: a document's top partners chosen over all its partners (they were up to 10 among those with a larger id
# and 10 among those with a smaller one), ties broken by content instead of id; 7: a passage's rare anchors
# selected by windows inside it (an anchor at a common notice's edge was rare by luck and paired its holders);
# 8: a summary whose query side is mostly one fragment gives way to it (`AlignOptions.summary_explained`);
# 9: reworded passages grow by neighbouring sentence pairs alike in meaning (`AlignOptions.neighbour_semantic`),
# and a summary made of verbatim pieces is labelled reworded, not verbatim (`TokenPassage.condensed`)
_CHUNK_PAIRS = 128  # pairs one worker aligns per task, sorted by their first document
_CHUNK_DOCUMENTS = 256  # documents one worker embeds per task
# Longest text (tokens) given the reworded-sentence pass; longer pairs get verbatim runs only. The sentence
# pass costs about 10x the verbatim one, and a scan has no per-pair time budget: a 50 MB log paired with
# the short texts it holds would otherwise hold up the whole step (`check` still runs it on any query).
SENTENCE_MAX_TOKENS = 200_000
_INLINE_PAIRS = 64  # fewer pairs than this are aligned in this process: a pool would cost more than it saves
# seconds of tasks' passages written in one transaction (a transaction a task cost the parent ~1.7 ms each: 50 s of
# 100,000 documents' 30,000 tasks); a step stopped in between aligns those tasks again
_COMMIT_SECONDS = 1.0


@dataclass(frozen=True)
class PassageRun:
    """What one alignment step did."""

    documents: int  # documents whose pairs it aligned (new or changed since the last step)
    candidates: int  # pairs that may hold a passage (`candidate_pairs`)
    pairs: int  # of those, pairs that share a passage of the minimum length
    without_text: int  # candidate pairs not aligned: a side's text is not stored (--no-text)
    seconds: float
    embedded: int = 0  # documents given their vector by meaning (`Index.meaning`; semantic pass on)
    meaning_pairs: int = 0  # pairs added as a fresh document's nearest by meaning (-1: too many documents, none added)
    resumed: int = 0  # of the candidates, pairs a step stopped half-way had aligned (their passages stored then)
    failures: tuple[StepFailure, ...] = ()  # pairs it could not align, documents it could not embed


@dataclass(frozen=True)
class StepFailure:
    """A pair the step could not align (two documents), or a document it could not embed (one), and why.
    Neither document of such a pair is marked aligned, and a document is embedded only when it succeeds, so
    the next scan tries them again (and says so again); every face meanwhile counts them as not aligned."""

    documents: tuple[int, ...]
    reason: str

    @property
    def pair(self) -> bool:
        return len(self.documents) == 2


def passages_key(params: Params, model: StaticModel | LazyModel | None = None) -> dict[str, object]:
    """What stored passages depend on: a different key makes the next scan align every pair again.
    `model`: the semantic pass's sentence model (None: no semantic pass)."""
    return {"format": PASSAGE_BLOB_FORMAT, "align": ALIGN_VERSION, "algorithm": ALGORITHM_VERSION,
            "sketch_key": params.sketch_key().hex(), "min_words": params.min_passage_words,
            "common_share": params.common_shingle_share, "semantic": model.key if model is not None else None}


def anchors_needed(params: Params) -> int:
    """Distinct winnowed anchors two documents share at least when they share a passage of
    `min_passage_words` words: its n shingles hold n // window disjoint winnowing windows, each of which
    selects one shingle of the passage in both documents (a passage that repeats a shingle may hold fewer)."""
    shingles = params.min_passage_words - params.shingle_size + 1
    return max(1, shingles // params.winnow_window)


def align_options(params: Params) -> AlignOptions:
    """`check`'s aligner (verbatim runs and reworded sentences), keeping passages of the minimum length.
    Summaries are looked for one way only, though the query is the longer text of the pair
    (`pair_passages`): both ways found PAN-13's summaries from a scan (05: 0.31 -> 0.50) but joined
    repeated lists of headlines in real pages into passages of half a document (`bench/eval_lifted.py`:
    share error 0.013 -> 0.056 mean, 0.497 max)."""
    return AlignOptions(min_tokens=params.min_passage_words)


def align_index(index: Index, params: Params, *, jobs: int | None = None,
                on_progress: Callable[[int, int], None] | None = None, inline_below: int = _INLINE_PAIRS,
                model: StaticModel | LazyModel | None = None) -> PassageRun:
    """Align the pairs of every document not aligned yet, and store their passages; with a sentence model,
    also give every document without one its vector by meaning (what `check` searches for sources that share
    no phrase), in the same workers, which then have its sentences ready for its pairs.

    jobs: worker processes (default: the cores; 0: this process). Fewer than `inline_below` pairs are
    aligned in this process whatever `jobs` says.
    model: the sentence model of the semantic pass (None: none), or a LazyModel, loaded only when there is
    something to align or embed; workers load the same one themselves.
    """
    start = time.monotonic()
    index.passages.use_key(passages_key(params, model))
    live, _ = index.pairing_inputs(params.common_shingle_share)
    fresh = difference(live, index.passages.aligned_ids())
    unembedded = np.empty(0, dtype=np.int64)
    if model is not None:
        index.meaning.use_key(meaning_key(model))
        unembedded = index.meaning.missing(live)
    if fresh.shape[0] == 0 and unembedded.shape[0] == 0:
        return PassageRun(0, 0, 0, 0, time.monotonic() - start)
    if isinstance(model, LazyModel):
        model = model.get()
        if model is None:  # installed but unreadable (said already): the passages are keyed without it
            index.passages.use_key(passages_key(params, None))
            fresh = difference(live, index.passages.aligned_ids())
            unembedded = np.empty(0, dtype=np.int64)
    workers = mp.cpu_count() if jobs is None else jobs
    # workers start up (imports, the index opened) while this process counts the candidate pairs
    semantic = model is not None
    busy = fresh.shape[0] + unembedded.shape[0] >= inline_below
    pool = _AlignPool(str(index.path), params, workers, semantic) if workers > 1 and busy else None
    try:
        ranks = index.content_ranks()  # ties broken by content, not by ids (which follow the workers' order)
        plan_key = _plan_key(index, fresh)
        plan = index.passages.plan(plan_key)  # a step stopped half-way with the same inputs: go on from there
        very_common: list[np.ndarray] = []  # read with the pair counts
        pairs, worthy = (candidate_pairs(index, params, fresh, ranks, very_common) if plan is None
                         else (plan.pairs, plan.worthy))
        common = (np.sort(np.concatenate(very_common).view(np.uint64)) if very_common
                  else index.common_fingerprints(params.common_shingle_share))
        inline = pairs.shape[0] + unembedded.shape[0] < inline_below
        if inline or workers <= 1:
            if pool is not None:
                pool.close()
            pool = None
        elif pool is None:
            pool = _AlignPool(str(index.path), params, workers, semantic)
        sides = PreparedSides(index, params, model, cache_tokens(1), SENTENCE_MAX_TOKENS) if pool is None else None

        def run(count: int, make: Callable[[int], _Pairs | _Embed], last: bool) -> Iterator[_Aligned | _Embedded]:
            """The results of tasks make(0), ..., make(count - 1) (made when sent: a step has ~30,000)."""
            if pool is not None:
                return pool.done(count, make, common, last)
            assert sides is not None
            return (_do(sides, params, make(k), common) for k in range(count))

        embed_starts = range(0, unembedded.shape[0], _CHUNK_DOCUMENTS)
        progress = _Progress(on_progress, len(embed_starts) + len(range(0, pairs.shape[0], _CHUNK_PAIRS)))
        # first every document's vector by meaning: its nearest documents are then pairs worth the sentence
        # pass too, and a worker holds the documents' sentences for the pairs that follow
        failures: list[StepFailure] = []
        for result in run(len(embed_starts), lambda k: _Embed(
                unembedded[embed_starts[k] : embed_starts[k] + _CHUNK_DOCUMENTS].tolist()), last=False):
            assert isinstance(result, _Embedded)
            failures += result.failed
            if result.doc_ids:
                index.meaning.put(result.doc_ids, result.vectors, result.sentences)
            progress.step()
        if unembedded.shape[0]:
            index.meaning.compact()  # documents embedded again (to store their sentence vectors) are held once
        if plan is None:
            plan = _plan(index, model, fresh, live, pairs, worthy, ranks)
            index.passages.start_plan(plan_key, plan)
        chunk = plan.notes["chunk"]
        rows = np.concatenate((plan.pairs, plan.worthy[:, None].astype(np.int64), ranks[plan.pairs]), axis=1)
        todo = np.flatnonzero(~plan.done).tolist()
        earlier = np.flatnonzero(plan.done)  # tasks a step stopped half-way had done
        resumed = int(np.minimum(chunk, plan.pairs.shape[0] - earlier * chunk).sum())
        progress.total = len(embed_starts) + len(todo)
        found = 0
        writes = _Writes(index)
        try:
            for result in run(len(todo), lambda k: _Pairs(rows[todo[k] * chunk : (todo[k] + 1) * chunk].tolist(),
                                                          todo[k]), last=True):
                assert isinstance(result, _Aligned)
                plan.done[result.task] = True
                failures += result.failed
                # a task with failures is not stored as done: a step stopped after it and resumed aligns it
                # again, and so knows its failures, rather than marking their documents aligned at its end
                writes.put(result.rows, None if result.failed else result.task)
                found += len(result.rows)
                progress.step()
        finally:
            writes.commit()  # whatever stopped the step (Ctrl-C), the tasks it finished stay stored
    finally:
        if pool is not None:
            pool.close()
    not_aligned = {doc_id for failure in failures if failure.pair for doc_id in failure.documents}
    index.passages.end_plan([doc_id for doc_id in fresh.tolist() if doc_id not in not_aligned])
    return PassageRun(int(fresh.shape[0]), plan.pairs.shape[0] + plan.notes["without_text"], found,
                      plan.notes["without_text"], time.monotonic() - start, int(unembedded.shape[0]),
                      plan.notes["meaning_pairs"], resumed, tuple(failures))


def failure_issues(index: Index, failures: Sequence[StepFailure]) -> tuple[FileIssue, ...]:
    """The passage step's failures as errors of the documents' first files (what a scan, in either face,
    lists with the files it could not read)."""
    from scanner.services.scan.writer import FileIssue  # the scan's own modules only when there is one

    records = index.documents_of(sorted({doc_id for failure in failures for doc_id in failure.documents}))

    def path(doc_id: int) -> str:
        paths = getattr(records.get(doc_id), "paths", None)
        return paths[0] if paths else f"document {doc_id}"

    again = "tried again at the next scan"
    return tuple(FileIssue(path(failure.documents[0]), "passages not aligned",
                           f"with {path(failure.documents[1])}: {failure.reason}; {again}") if failure.pair
                 else FileIssue(path(failure.documents[0]), "no vector by meaning", f"{failure.reason}; {again}")
                 for failure in failures)


class _Writes:
    """The tasks' passages, a transaction for the tasks of `_COMMIT_SECONDS` rather than one a task."""

    def __init__(self, index: Index) -> None:
        self._index = index
        self._open: contextlib.AbstractContextManager[None] | None = None
        self._since = 0.0

    def put(self, rows: list[StoredPairRow], task: int | None) -> None:
        if self._open is None:
            self._open = self._index.transaction()
            self._open.__enter__()
            self._since = time.monotonic()
        self._index.passages.put_rows(rows, task=task)
        if time.monotonic() - self._since >= _COMMIT_SECONDS:
            self.commit()

    def commit(self) -> None:
        opened, self._open = self._open, None
        if opened is not None:
            opened.__exit__(None, None, None)


def _plan_key(index: Index, fresh: np.ndarray) -> dict[str, object]:
    """What a step's plan depends on: the stored passages' key, the index's content, the documents to align."""
    return {"passages": index.passages.key(), "generation": index.generation(),
            "fresh": hashlib.sha256(np.ascontiguousarray(fresh, dtype="<i8").tobytes()).hexdigest()}


def _plan(index: Index, model: StaticModel | None, fresh: np.ndarray, live: np.ndarray, pairs: np.ndarray,
          worthy: np.ndarray, ranks: np.ndarray) -> StepPlan:
    """The step's pairs, with each fresh document's partners by meaning, without those whose text is not
    stored, in the order the workers get them (grouped by query)."""
    near = 0
    if model is not None:
        pairs, worthy, near = with_meaning_partners(index, fresh, live, pairs, worthy, ranks)
    with_text = np.asarray(index.documents_with_text(distinct(pairs).tolist()), dtype=np.int64)
    alignable = np.isin(pairs[:, 0], with_text) & np.isin(pairs[:, 1], with_text)
    pairs, worthy = pairs[alignable], worthy[alignable]
    rows = np.concatenate((pairs, worthy[:, None].astype(np.int64), ranks[pairs]), axis=1)
    order = _by_query(index, rows)
    tasks = -(-pairs.shape[0] // _CHUNK_PAIRS)
    return StepPlan(pairs[order], worthy[order], np.zeros(tasks, dtype=np.bool_),
                    {"chunk": _CHUNK_PAIRS, "tasks": tasks, "without_text": int((~alignable).sum()),
                     "meaning_pairs": near})


def _by_query(index: Index, rows: np.ndarray) -> np.ndarray:
    """The order that puts together the pairs of one query (`align_pairs`: the longer text of a pair, of two
    as long the one first by content), so that a worker prepares each document about once as a query, not
    once a pair: a 4 M-word log paired with hundreds of files took ~0.6 s to read, cut and sort each time."""
    ids = distinct(rows[:, :2])
    counts = index.token_counts(ids.tolist())
    tokens = np.zeros(int(ids[-1]) + 1 if ids.shape[0] else 0, dtype=np.int64)
    tokens[ids] = np.fromiter((counts.get(int(d), 0) for d in ids.tolist()), dtype=np.int64, count=ids.shape[0])
    a, b = rows[:, 0], rows[:, 1]
    b_first = _second_is_query(tokens[a], tokens[b], rows[:, 3], rows[:, 4])
    query, other = np.where(b_first, b, a), np.where(b_first, a, b)
    place = _walk_places(a, b, tokens.shape[0])
    return np.lexsort((place[other], place[query]))


def _walk_places(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """Each document's place (indexed by id, below `size`) in a breadth-first walk of the graph the pairs
    (a, b) make (Cuthill-McKee: each part from a document of fewest partners, a document's partners by fewest
    partners first, ties by id): documents paired together get near places, so the queries a worker aligns
    one after the other share partners, which it then finds prepared. On 10,000 `bench_million` documents
    whose worker keeps a sixth of them prepared (as at 100,000): 93,440 -> 63,014 documents prepared,
    81.7 -> 74.3 s, the same passages."""
    ids = distinct(np.concatenate((a, b)))
    node = np.full(size, -1, dtype=np.int64)
    node[ids] = np.arange(ids.shape[0])
    n = ids.shape[0]
    head, tail = np.concatenate((node[a], node[b])), np.concatenate((node[b], node[a]))
    degree = np.bincount(head, minlength=n)
    starts = np.concatenate(([0], np.cumsum(degree)))
    # each node's partners, fewest partners first: one sort of (node, partner's degree, partner) keys while
    # they fit in 63 bits (three sorts past ~2 M documents)
    width = int(degree.max(initial=0)) + 1
    if n * width * n < 2**63:
        neighbours = np.sort((head * width + degree[tail]) * n + tail) % n
    else:
        neighbours = tail[np.lexsort((tail, degree[tail], head))]
    seen = np.zeros(n, dtype=bool)
    walk: list[int] = []
    for root in np.argsort(degree, kind="stable").tolist():
        if seen[root]:
            continue
        seen[root] = True
        queue = deque([root])
        while queue:
            at = queue.popleft()
            walk.append(at)
            new = neighbours[starts[at]:starts[at + 1]]
            new = new[~seen[new]]
            if new.shape[0]:
                new = new[np.sort(np.unique(new, return_index=True)[1])]  # a pair listed twice: once
                seen[new] = True
                queue.extend(new.tolist())
    place = np.full(size, -1, dtype=np.int64)
    place[ids[np.asarray(walk, dtype=np.int64)]] = np.arange(len(walk))
    return place


def _second_is_query(tokens_a: Any, tokens_b: Any, rank_a: Any, rank_b: Any) -> Any:
    """Whether B, not A, is a pair's query (`pair_passages`): the longer text; of two as long, the one first
    by content (`Index.content_ranks`), never by id. Of numbers, or element-wise of arrays."""
    return (tokens_b > tokens_a) | ((tokens_b == tokens_a) & (rank_b < rank_a))


@dataclass
class _Progress:
    """Tasks done of how many (the total grows once the pairs are known)."""

    report: Callable[[int, int], None] | None
    total: int
    done: int = 0

    def step(self) -> None:
        self.done += 1
        if self.report is not None:
            self.report(self.done, max(self.total, self.done))


# fresh documents x indexed documents compared by meaning at most (64 dimensions each: ~0.5 s of products);
# past it the scan looks for no partners by meaning (`check` still searches them) and says so
MEANING_PAIRS_LIMIT = 100_000_000


def with_meaning_partners(index: Index, fresh: np.ndarray, live: np.ndarray, pairs: np.ndarray,
                          worthy: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The candidate pairs plus each fresh document's MEANING_CANDIDATES nearest documents by meaning (the
    partners `check` adds: a translation or a summary may share no anchor), all worth the sentence pass;
    and how many pairs that added (-1: too many documents to compare, none added). The documents are taken
    in the order of their `ranks` (`Index.content_ranks`): the centre's float sums and the ties among
    equal scores then come out the same whatever ids a scan gave them."""
    ids, vectors = index.meaning.vectors()
    canonical = np.argsort(ranks[ids], kind="stable")
    ids, vectors = ids[canonical], vectors[canonical]
    space = MeaningSpace.of(vectors)
    pairable = np.isin(ids[space.rows], live)  # vanished documents pair with nothing
    targets = space.unit[pairable]
    target_ids = ids[space.rows][pairable]
    at = {int(d): k for k, d in enumerate(target_ids.tolist())}
    mine = np.sort(np.asarray([at[int(d)] for d in fresh.tolist() if int(d) in at], dtype=np.int64))
    if mine.shape[0] == 0 or target_ids.shape[0] < 2:
        return pairs, worthy, 0
    if mine.shape[0] * target_ids.shape[0] > MEANING_PAIRS_LIMIT:
        return pairs, worthy, -1
    k = min(MEANING_CANDIDATES, target_ids.shape[0] - 1)
    block = max(1, 10_000_000 // target_ids.shape[0])
    found = []
    for lo in range(0, mine.shape[0], block):
        rows = mine[lo : lo + block]
        scores = targets[rows] @ targets.T
        scores[np.arange(rows.shape[0]), rows] = -np.inf  # not itself
        best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        found.append(np.stack((np.repeat(target_ids[rows], k), target_ids[best.ravel()]), axis=1))
    near = np.concatenate(found)
    near = np.stack((near.min(axis=1), near.max(axis=1)), axis=1)
    merged = np.concatenate((pairs, near))
    keys, first, inverse = np.unique(merged[:, 0] * (int(merged.max()) + 1) + merged[:, 1], return_index=True,
                                     return_inverse=True)
    is_worthy = np.zeros(keys.shape[0], dtype=np.bool_)
    np.logical_or.at(is_worthy, inverse.reshape(-1), np.concatenate((worthy, np.ones(near.shape[0], dtype=np.bool_))))
    out = merged[first]
    order = np.lexsort((out[:, 1], out[:, 0]))
    return out[order], is_worthy[order], int(keys.shape[0] - pairs.shape[0])


def candidate_pairs(index: Index, params: Params, fresh: np.ndarray, ranks: np.ndarray,
                    common: list[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs with a fresh document worth aligning, as (a, b) rows (a < b, sorted), and which of them are
    also worth the reworded-sentence pass whatever the verbatim one finds. `common`: a list that gets the
    very common fingerprints met in the same reading of the postings (`pair_count_arrays(common_found=)`).

    A pair is aligned when it shares `anchors_needed` anchors (it may hold a verbatim passage of the
    minimum length) or when it is among either document's SENTENCE_ALIGNED_FIRST partners by shared
    anchors: the partners `check` would give the sentence alignment with this document as its query, where
    a reworded passage shares few anchors. Memory: the anchored pairs, the top partners' table and a bucket.
    """
    need = anchors_needed(params)
    anchored: list[np.ndarray] = []
    top = _TopPartners(ranks)
    is_fresh = np.zeros(top.size, dtype=np.bool_)
    is_fresh[fresh] = True
    for pa, pb, shared in index.pair_count_arrays(params.common_shingle_share, common_found=common):
        mine = is_fresh[pa] | is_fresh[pb]
        pa, pb, shared = pa[mine], pb[mine], shared[mine]
        top.add(pa, pb, shared)
        rich = shared >= need
        anchored.append(top.pair_keys(pa[rich], pb[rich]))
    worth_sentences = top.pairs()
    keys = distinct(np.concatenate(anchored + [worth_sentences]))
    return np.stack((keys // top.size, keys % top.size), axis=1), in_sorted(keys, worth_sentences)


_NO_PARTNER = np.iinfo(np.int64).max  # an empty slot of `_TopPartners`: a key larger than any partner's


class _TopPartners:
    """Each document's SENTENCE_ALIGNED_FIRST partners sharing the most anchors among the pairs added so far
    (ties: the partner first by `Index.content_ranks`, so the same files give the same partners whatever
    their ids), in a table by id. The top partners over all pairs are the top among the parts' top partners,
    so the buckets of the pair counts merge in one by one: no pass over all pairs, ~80 bytes a document.
    (Thinning the held pairs whenever they grew, as before, re-sorted them ~20 times at 100,000 documents:
    38 of the 94 s the candidate pairs took there.)"""

    def __init__(self, ranks: np.ndarray) -> None:
        self.size = max(ranks.shape[0], 1)
        self._ranks = ranks
        self._rank_bits = self.size.bit_length()
        self._most = (1 << (62 - self._rank_bits)) - 1  # shared anchors a key holds (a document's anchors, at most)
        self._by_rank = np.zeros(self.size, dtype=np.int64)
        used = np.flatnonzero(ranks >= 0)
        self._by_rank[ranks[used]] = used
        # (most - shared) << rank bits | the partner's rank: the best partner has the smallest key
        self._keys = np.full((self.size, SENTENCE_ALIGNED_FIRST), _NO_PARTNER, dtype=np.int64)

    def pair_keys(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """One int64 a pair, ordered as (smaller id, larger id)."""
        return np.minimum(a, b) * self.size + np.maximum(a, b)

    def add(self, pa: np.ndarray, pb: np.ndarray, shared: np.ndarray) -> None:
        """Pairs (pa[i], pb[i]) sharing shared[i] anchors; no pair added twice."""
        doc, partner = np.concatenate((pa, pb)), np.concatenate((pb, pa))  # each pair seen from both documents
        both = np.concatenate((shared, shared))
        keys = ((self._most - both) << self._rank_bits) | self._ranks[partner]
        better = keys < self._keys[doc, -1]  # than a document's tenth so far (most documents' are full)
        doc, partner, both, keys = doc[better], partner[better], both[better], keys[better]
        if doc.shape[0] == 0:
            return
        order, place = _partner_places(doc, partner, both, self._ranks)
        best = order[place < SENTENCE_ALIGNED_FIRST]  # the part's top partners, by document then best first
        doc, place, keys = doc[best], place[place < SENTENCE_ALIGNED_FIRST], keys[best]
        docs, row = np.unique(doc, return_inverse=True)
        held = np.full((docs.shape[0], SENTENCE_ALIGNED_FIRST), _NO_PARTNER, dtype=np.int64)
        held[row, place] = keys
        merged = np.sort(np.concatenate((self._keys[docs], held), axis=1), axis=1)
        self._keys[docs] = merged[:, :SENTENCE_ALIGNED_FIRST]

    def pairs(self) -> np.ndarray:
        """The sorted keys (`pair_keys`) of the pairs among either document's top partners."""
        doc, slot = np.nonzero(self._keys != _NO_PARTNER)
        partner = self._by_rank[self._keys[doc, slot] & ((1 << self._rank_bits) - 1)]
        return distinct(self.pair_keys(doc, partner))


def _partner_places(doc: np.ndarray, partner: np.ndarray, shared: np.ndarray,
                    ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts the entries by document, most shared first, then by the partner's content rank;
    and each sorted entry's place among its document's."""
    fewer = int(shared.max()) - shared  # most shared first
    rank_bits, fewer_bits = max(ranks.shape[0], 1).bit_length(), int(fewer.max()).bit_length()
    if int(doc.max()).bit_length() + fewer_bits + rank_bits <= 62:  # one key, one sort (3x a three-key lexsort)
        order = np.argsort((doc << (fewer_bits + rank_bits)) | (fewer << rank_bits) | ranks[partner])
    else:
        order = np.lexsort((ranks[partner], fewer, doc))
    ranked = doc[order]
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
    return order, group_ranks(np.diff(np.append(starts, ranked.shape[0])))


@dataclass(frozen=True)
class _Pairs:
    """A task: pairs (a, b, worthy, rank a, rank b) to align; the step's `task`-th."""

    rows: list[list[int]]
    task: int = 0


@dataclass(frozen=True)
class _Embed:
    """A task: documents to give their vector by meaning."""

    doc_ids: list[int]


@dataclass(frozen=True)
class _Aligned:
    """Worker to parent: the passage pairs of the step's `task`-th task, as stored (`stored_row`)."""

    rows: list[StoredPairRow]
    task: int = 0
    failed: tuple[StepFailure, ...] = ()


@dataclass(frozen=True)
class _Embedded:
    """Worker to parent: the documents' vectors by meaning, a row each, and their sentence vectors."""

    doc_ids: list[int]
    vectors: np.ndarray
    sentences: list[QuantizedVectors | None]
    failed: tuple[StepFailure, ...] = ()


@dataclass(frozen=True)
class _Failed:
    """Worker to parent: a task raised (the parent stops the step: every pair must be aligned or counted)."""

    reason: str


def _do(sides: PreparedSides, params: Params, task: _Pairs | _Embed, common: np.ndarray) -> _Aligned | _Embedded:
    """The task done whole; when that raises, its pairs (documents) one at a time, so that one which cannot be
    aligned (embedded) costs no other its passages (vector), and is reported with its error."""
    try:
        if isinstance(task, _Embed):
            return _Embedded(task.doc_ids, *embed_documents(sides, task.doc_ids))
        return _Aligned([stored_row(pair) for pair in align_pairs(sides, params, task.rows, common)], task.task)
    except Exception:  # noqa: BLE001 - narrowed down below to what raises
        pass
    failed: list[StepFailure] = []
    if isinstance(task, _Embed):
        done: list[tuple[int, np.ndarray, QuantizedVectors | None]] = []
        for doc_id in task.doc_ids:
            try:
                vectors, sentences = embed_documents(sides, [doc_id])
                done.append((doc_id, vectors[0], sentences[0]))
            except Exception as exc:  # noqa: BLE001 - reported; the document stays without a vector
                failed.append(StepFailure((doc_id,), _reason(exc)))
        return _Embedded([d for d, _, _ in done], np.array([v for _, v, _ in done], dtype=np.float32).reshape(
            len(done), MEANING_DIMENSIONS), [q for _, _, q in done], tuple(failed))
    rows: list[StoredPairRow] = []
    for row in task.rows:
        try:
            rows += [stored_row(pair) for pair in align_pairs(sides, params, [row], common)]
        except Exception as exc:  # noqa: BLE001 - reported; the pair's documents stay not aligned
            failed.append(StepFailure((row[0], row[1]), _reason(exc)))
    return _Aligned(rows, task.task, tuple(failed))


def _lost(task: _Pairs | _Embed, reason: str) -> _Aligned | _Embedded:
    """A task whose worker died, as its result: every pair (document) of it failed."""
    if isinstance(task, _Embed):
        return _Embedded([], np.empty((0, MEANING_DIMENSIONS), dtype=np.float32), [],
                         tuple(StepFailure((doc_id,), reason) for doc_id in task.doc_ids))
    return _Aligned([], task.task, tuple(StepFailure((row[0], row[1]), reason) for row in task.rows))


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__


def _worker_main(conn: Connection, path: str, fields: dict[str, object], semantic: bool, max_tokens: int) -> None:
    """A worker: it opens the index read-only (the scan's writer has committed) and keeps its prepared
    documents from task to task (up to `max_tokens` tokens of them: `prepared.cache_tokens`), so a document
    is read and prepared once per worker, not once per task. `semantic`: load the sentence model (the parent
    loaded it: it is there)."""
    params = Params.from_dict(fields)

    def setup() -> PreparedSides:
        model = open_model(semantic)
        return PreparedSides(Index.open(path, readonly=True, params=params), params, model, max_tokens,
                             SENTENCE_MAX_TOKENS)

    def handle(sides: PreparedSides, _task_id: int, payload: tuple[_Pairs | _Embed, np.ndarray]) -> bool:
        task, common = payload
        try:
            conn.send(_do(sides, params, task, common))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops the step
            conn.send(_Failed(_reason(exc)))
            return False
        return True

    serve_tasks(conn, setup, None, handle)


class _Runs:
    """Task numbers 0..count - 1 cut into contiguous runs, one a worker. A worker takes the next task of its
    run, and once that is done the last task of the longest run left: neighbouring tasks, whose queries share
    partners (`_walk_places`), go to the same worker, which holds them prepared, and no worker waits while
    any task is left."""

    def __init__(self, count: int, workers: Sequence[object]) -> None:
        cuts = [count * k // max(len(workers), 1) for k in range(len(workers) + 1)]
        self._runs = {worker: [cuts[k], cuts[k + 1]] for k, worker in enumerate(workers)}

    def take(self, worker: object) -> int | None:
        run = self._runs.get(worker)
        if run is None or run[0] >= run[1]:
            run = max(self._runs.values(), key=lambda r: r[1] - r[0], default=None)
            if run is None or run[0] >= run[1]:
                return None
            run[1] -= 1
            return run[1]
        run[0] += 1
        return run[0] - 1


class _AlignPool:
    """Long-lived alignment workers rather than a pool's tasks: their prepared documents outlive a task, and
    they start while the parent still counts the candidate pairs."""

    def __init__(self, path: str, params: Params, workers: int, semantic: bool) -> None:
        self._ctx = mp.get_context("forkserver")
        self._args = (path, params.to_dict(), semantic, cache_tokens(workers))
        self._running: dict[Connection, WorkerProcess] = {}
        self._idle: set[Connection] = set()  # workers with no task, waiting for the next phase's
        try:
            for _ in range(workers):
                self._start_worker()
        except BaseException:
            self.close()
            raise

    def _start_worker(self) -> None:
        worker = WorkerProcess(self._ctx, _worker_main, self._args)
        self._running[worker.conn] = worker

    def done(self, count: int, make: Callable[[int], _Pairs | _Embed], common: np.ndarray,
             last: bool = True) -> Iterator[_Aligned | _Embedded]:
        """The result of each task make(0), ..., make(count - 1), as workers finish them (one task in flight
        per worker: memory stays a few tasks' worth). Each worker takes its own run of neighbouring tasks
        (`_Runs`). When the tasks run out the workers end, or, unless `last`, wait for the next call's tasks (a
        step in phases: every document embedded before its pairs are chosen). A worker that dies (killed for
        memory, a crash) is replaced, and its task's pairs are tried again one at a time, so that only a pair
        whose own worker dies too is given as failed (a task of documents to embed: every one of them)."""
        runs = _Runs(count, list(self._running))
        in_flight: dict[Connection, _Pairs | _Embed] = {}
        retry: deque[_Pairs] = deque()  # single pairs of tasks whose worker died
        parts: dict[int, list[_Aligned]] = {}  # such a task's pairs done so far, given as one result when all are
        sizes: dict[int, int] = {}

        def send_next(conn: Connection) -> None:
            task: _Pairs | _Embed
            if retry:
                one = retry.popleft()
                k, task = one.task, one
            else:
                taken = runs.take(conn)
                if taken is None:
                    self._idle.add(conn)
                    return
                k, task = taken, make(taken)
            in_flight[conn] = task
            with contextlib.suppress(OSError):  # a worker just dead: its pipe's end says so below, task and all
                self._running[conn].conn.send(Assign(k, (task, common)))

        def finished(result: _Aligned | _Embedded) -> _Aligned | _Embedded | None:
            """The result to give: a part of a task tried pair by pair is held until the last one."""
            if not isinstance(result, _Aligned) or result.task not in sizes:
                return result
            held = parts[result.task]
            held.append(result)
            if len(held) < sizes[result.task]:
                return None
            del parts[result.task], sizes[result.task]
            return _Aligned([row for part in held for row in part.rows], result.task,
                            tuple(failure for part in held for failure in part.failed))

        for waiting in list(self._idle):  # workers left waiting by the phase before
            self._idle.remove(waiting)
            send_next(waiting)
            if waiting in self._idle:
                break
        while len(self._idle) < len(self._running):
            for ready in wait([c for c in self._running if c not in self._idle]):
                conn = cast(Connection, ready)
                worker = self._running[conn]
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    worker.kill()
                    del self._running[conn]
                    lost = in_flight.pop(conn, None)
                    if lost is None:  # died before its first task: its start-up fails
                        raise ScannerError("a passage alignment worker ended unexpectedly") from None
                    self._start_worker()
                    if isinstance(lost, _Pairs) and len(lost.rows) > 1 and lost.task not in sizes:
                        sizes[lost.task], parts[lost.task] = len(lost.rows), []
                        retry.extend(_Pairs([row], lost.task) for row in lost.rows)
                        for waiting in list(self._idle):  # idle workers help
                            self._idle.remove(waiting)
                            send_next(waiting)
                        continue
                    reason = f"its worker ended unexpectedly (exit code {worker.process.exitcode})"
                    if (given := finished(_lost(lost, reason))) is not None:
                        yield given
                    continue
                if isinstance(message, (Broken, _Failed)):
                    raise ScannerError(f"passage alignment failed: {message.reason}")
                in_flight.pop(conn, None)
                send_next(conn)  # out before this one's result is stored
                if isinstance(message, (_Aligned, _Embedded)) and (given := finished(message)) is not None:
                    yield given
        if last:
            self.close()

    def close(self) -> None:
        """End the workers: those waiting for a task are told to stop, any other (the step stopped early)
        is killed."""
        while self._running:
            conn, worker = self._running.popitem()
            if conn in self._idle:
                worker.stop()
            else:
                worker.kill()
        self._idle.clear()


def align_pairs(sides: PreparedSides, params: Params, pairs: Sequence[Sequence[int]],
                common: np.ndarray) -> list[PassagePair]:
    """The passages of each pair (a, b, worthy: see `candidate_pairs`, and the two documents' content ranks:
    of two texts as long, the query is the one ranked first), those that share any.

    `common`: sorted very common fingerprints (`Index.common_fingerprints`). A passage of verbatim runs alone
    (a summary of verbatim pieces too) whose shared anchors are all very common (`_hold_rare_anchors`) is
    boilerplate that many documents hold, and is dropped, as such shingles are for pairing (Broder); a
    reworded passage has no such anchors and is kept.
    """
    options = align_options(params)
    verbatim = AlignOptions.verbatim(max_gap=options.max_gap, min_tokens=options.min_tokens)
    out: list[PassagePair] = []
    # pairs whose verbatim runs cannot make a passage alone, worth the sentence pass: most of them share a
    # few words by chance; bounds over all of one document's partners at once rule those out (`may_hold_anchor`)
    waiting: list[tuple[int, AlignSide, int, AlignSide, np.ndarray]] = []
    sides.prepare([doc_id for row in pairs for doc_id in row[:2]], split=False)  # split: those the sentences need
    every: list[tuple[int, AlignSide, int, AlignSide, bool]] = []  # the query first
    for a, b, worthy, rank_a, rank_b in pairs:
        first, second = sides(int(a)), sides(int(b))
        if _second_is_query(len(first.shingled.tokens), len(second.shingled.tokens), rank_a, rank_b):
            (a, first), (b, second) = (b, second), (a, first)
        every.append((int(a), first, int(b), second, bool(worthy)))
    # the others only when their shared anchors lie close enough to hold one verbatim passage of the minimum
    # length; checked a query's partners at once
    close = np.ones(len(every), dtype=np.bool_)
    for rows in _rows_by_query(every, [row for row, pair in enumerate(every) if not pair[4]]).values():
        close[rows] = anchors_close_enough_many(every[rows[0]][1], [every[row][3] for row in rows], params)
    oriented = [pair for pair, kept in zip(every, close.tolist()) if kept]
    # as `check`: verbatim runs first (10x faster), each query's with all its partners at once; the sentences
    # too where they found some, or for the pairs worth it whatever they find (`candidate_pairs`); both
    # passes start from the same runs
    found: dict[int, list[StoredPassage]] = {}  # by row of `oriented`
    sentence_pass: list[tuple[int, np.ndarray, np.ndarray | None]] = []  # rows, their runs and fragments
    for row, ((a, first, b, second, worthy), runs) in enumerate(zip(oriented, _verbatim_runs(oriented, params,
                                                                                             verbatim))):
        sentences_worth_it = max(len(first.shingled.tokens), len(second.shingled.tokens)) <= SENTENCE_MAX_TOKENS
        few_runs = too_few_runs(runs, options)  # then the verbatim pass finds nothing: a passage needs the runs
        if worthy and sentences_worth_it:  # the sentence pass whatever the verbatim one would find
            if few_runs:
                waiting.append((a, first, b, second, runs))
            else:
                sentence_pass.append((row, runs, None))
            continue
        fragments = None if few_runs else extend(runs, options.max_gap)  # both passes' first step
        found[row] = [] if fragments is None else pair_passages(first, second, params, verbatim, runs,
                                                                fragments=fragments)
        if found[row] and sentences_worth_it:
            sentence_pass.append((row, runs, fragments))
    # the documents of the pairs the sentences are for, split at once (most pairs of a task need none)
    sides.split([side for row, *_ in sentence_pass for side in oriented[row][1:4:2]]
                + [side for pair in waiting for side in pair[1:4:2]])
    for row, runs, fragments in sentence_pass:
        found[row] = pair_passages(oriented[row][1], oriented[row][3], params, options, runs, sides.model, fragments)
    for row in sorted(found):
        a, first, b, second, _ = oriented[row]
        _keep(out, a, first, b, second, found[row], common, params)
    for key, group in _by_shared_document(waiting).items():
        shared = sides(key).as_document(sides.model)
        partners = [(second if a == key else first).as_document(sides.model) for a, first, _, second, _ in group]
        for (a, first, b, second, runs), hopeful in zip(group, may_hold_anchor(shared, partners, options)):
            if hopeful:
                _keep(out, a, first, b, second, pair_passages(first, second, params, options, runs, sides.model),
                      common, params)
    return out


def _verbatim_runs(oriented: list[tuple[int, AlignSide, int, AlignSide, bool]], params: Params,
                   options: AlignOptions) -> list[np.ndarray]:
    """Each pair's `verbatim_runs` (its first document the query), in the order given: the pairs of one
    query made in one batch (`verbatim_runs_of`; a chunk's pairs mostly share their first document)."""
    out: list[np.ndarray] = [np.empty(0)] * len(oriented)
    for rows in _rows_by_query(oriented, range(len(oriented))).values():
        query = oriented[rows[0]][1]
        partners = [oriented[row][3] for row in rows]
        for row, runs in zip(rows, verbatim_runs_of(query.shingled, [p.shingled for p in partners],
                                                    params.shingle_size, options, prepared=query.as_query(False),
                                                    doc_indexes=[p.as_query(False).index for p in partners])):
            out[row] = runs
    return out


def _rows_by_query(oriented: list[tuple[int, AlignSide, int, AlignSide, bool]],
                   rows: Iterable[int]) -> dict[int, list[int]]:
    """These rows of the pairs, grouped by their query (first document), in the order given."""
    by_query: dict[int, list[int]] = {}
    for row in rows:
        by_query.setdefault(oriented[row][0], []).append(row)
    return by_query


def _by_shared_document(waiting: list[tuple[int, AlignSide, int, AlignSide, np.ndarray]]
                        ) -> dict[int, list[tuple[int, AlignSide, int, AlignSide, np.ndarray]]]:
    """The pairs grouped by a document they hold, the one of the two in more of them: fewer, larger batches
    of bounds (a chunk's pairs share their first document, and a document's partners by meaning the second)."""
    held = Counter(d for a, _, b, _, _ in waiting for d in (a, b))
    groups: dict[int, list[tuple[int, AlignSide, int, AlignSide, np.ndarray]]] = {}
    for pair in waiting:
        a, b = pair[0], pair[2]
        groups.setdefault(a if (held[a], -a) >= (held[b], -b) else b, []).append(pair)
    return groups


def _keep(out: list[PassagePair], a: int, first: AlignSide, b: int, second: AlignSide, found: list[StoredPassage],
          common: np.ndarray, params: Params) -> None:
    """Add the pair's passages to `out`, if any stand the rare-anchor filter (see `align_pairs`)."""
    verbatim = [k for k, p in enumerate(found) if p.runs_only]
    if verbatim:
        rare = _hold_rare_anchors([found[k] for k in verbatim], first, second, common, params)
        dropped = {k for k, holds in zip(verbatim, rare) if not holds}
        found = [p for k, p in enumerate(found) if k not in dropped]
    if found:
        pair = PassagePair(a, b, covered_count((p.a_first, p.a_stop) for p in found),
                           covered_count((p.b_first, p.b_stop) for p in found), tuple(found))
        out.append(pair if pair.doc_a < pair.doc_b else swapped(pair))


def embed_documents(sides: PreparedSides, doc_ids: Sequence[int]) -> tuple[np.ndarray, list[QuantizedVectors | None]]:
    """The documents' vectors by meaning (`semantic.document_vector`), a row each, and their sentence vectors
    (what the index stores beside them: `Index.meaning`); zeros and None without a model, and for a document
    longer than SENTENCE_MAX_TOKENS (a 50 MB log is about nothing in particular, and its sentences would hold
    up the step: it is never a candidate by meaning, and never read here)."""
    out = np.zeros((len(doc_ids), MEANING_DIMENSIONS), dtype=np.float32)
    sentences: list[QuantizedVectors | None] = [None] * len(doc_ids)
    tokens = sides.index.token_counts(list(doc_ids))
    rows = [row for row, doc_id in enumerate(doc_ids) if tokens.get(int(doc_id), 0) <= SENTENCE_MAX_TOKENS]
    sides.prepare([doc_ids[row] for row in rows], tokens)
    prepared = [sides(int(doc_ids[row])) for row in rows]
    splits = [side.as_document(sides.model) for side in prepared]
    if sides.model is not None:  # all at once (the same vectors as one at a time)
        embed_many(splits, [side.shingled for side in prepared], [side.text for side in prepared], sides.model)
    for row, split in zip(rows, splits):
        if split.vectors is not None:
            out[row] = document_vector(split.vectors)
            sentences[row] = split.quantized
    return out, sentences


def anchors_close_enough(a: AlignSide, b: AlignSide, params: Params) -> bool:
    """Whether `anchors_needed` of the anchors A shares with B lie within one passage of the minimum length:
    inside a shared run both texts select the same anchors, so a verbatim passage of `min_passage_words`
    words holds that many within its `min_passage_words - w + 1` shingles. The postings count a pair's shared
    anchors wherever they lie; this tells apart the pairs whose few shared phrases are scattered."""
    return bool(anchors_close_enough_many(a, [b], params)[0])


def anchors_close_enough_many(a: AlignSide, partners: Sequence[AlignSide], params: Params) -> np.ndarray:
    """`anchors_close_enough(a, b)` for each partner b, in one batch of numpy calls (a call a pair cost ~0.1
    ms of the passage step's ~0.3 ms a pair that shares no passage): each partner's distinct anchors searched
    among A's (A: the query, the longer text), A's anchors found sorted by partner and place."""
    need = anchors_needed(params)
    span = params.min_passage_words - params.shingle_size  # first to last shingle of one passage
    held = [b.distinct_anchors for b in partners]
    anchor, found = a.anchor_lookup.matches(np.concatenate(held) if held else np.empty(0, dtype=np.uint64))
    # which of A's anchors, partner after partner
    owner = np.repeat(np.repeat(np.arange(len(partners), dtype=np.int64), [h.shape[0] for h in held]), found)
    order = np.argsort(owner * max(a.anchors.shape[0], 1) + anchor)
    owner, positions = owner[order], a.positions[anchor[order]]
    close = np.zeros(len(partners), dtype=np.bool_)
    if positions.shape[0] >= need:
        last = positions.shape[0] - need + 1
        within = (positions[need - 1 :] - positions[:last] <= span) & (owner[need - 1 :] == owner[:last])
        close[owner[:last][within]] = True
    return close


def _hold_rare_anchors(passages: list[StoredPassage], a: AlignSide, b: AlignSide, common: np.ndarray,
                       params: Params) -> list[bool]:
    """For each passage, whether a winnowing window lying wholly inside it (on A's side) selects a shingle
    shared with B and not very common.

    Only such a window selects the same shingle in every document that holds the passage's text. A window
    reaching past the passage's edge into the text around it selects by luck: a shingle at the edge of a
    notice that many documents hold is then an anchor of a few of them only, looks rare in the postings, and
    paired exactly those few on the notice (which ones, the hashes of the words around it decided). A rare
    passage of `min_passage_words` words keeps `anchors_needed` such windows: its guarantee is unchanged."""
    w = params.shingle_size
    firsts = np.array([p.a_first for p in passages], dtype=np.int64)
    lengths = np.maximum(np.array([p.a_stop - w + 1 for p in passages], dtype=np.int64) - firsts, 0)  # shingles
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    inside = np.repeat(firsts - offsets[:-1], lengths) + np.arange(int(offsets[-1]))
    selected, _, cuts = winnow_batch(a.shingled.fingerprints[inside], offsets, params.winnow_window)
    rare = in_sorted(selected, b.shingled.distinct) & ~in_sorted(selected, common)
    held = np.concatenate(([0], np.cumsum(rare)))
    return (held[cuts[1:]] > held[cuts[:-1]]).tolist()


def pair_passages(a: AlignSide, b: AlignSide, params: Params, options: AlignOptions,
                  runs: np.ndarray | None = None, model: StaticModel | None = None,
                  fragments: np.ndarray | None = None) -> list[StoredPassage]:
    """Passages of A and B in characters and tokens, each marked verbatim or reworded.

    The aligner is not symmetric (its reworded-sentence seeds and trimming work from the query's
    sentences); a scan has no query, so the longer text takes that part: on PAN-13's verbatim class the
    passages are then as precise as `check`'s (0.961 against 0.899 the other way round, docs/EVALUATION.md).
    `runs`: the pair's `verbatim_runs`, when already made; `model`: the semantic pass's sentence model;
    `fragments`: `extend(runs, options.max_gap)`, when a verbatim pass made them.
    """
    out = []
    n_a, n_b = len(a.shingled.tokens), len(b.shingled.tokens)
    sentences = options.sentence_dice is not None
    found = token_passages(a.shingled, a.text, b.shingled, b.text, params.shingle_size, options,
                           prepared=a.as_query(sentences, model),
                           doc_sentences=b.as_document(model) if sentences else None, runs=runs,
                           fragments=fragments)
    for p in found:
        a_stop, b_stop = min(p.query_end, n_a), min(p.doc_end, n_b)
        out.append(StoredPassage(int(a.shingled.tokens.starts[p.query_start]), int(a.shingled.tokens.ends[a_stop - 1]),
                                 int(b.shingled.tokens.starts[p.doc_start]), int(b.shingled.tokens.ends[b_stop - 1]),
                                 p.query_start, a_stop, p.doc_start, b_stop, p.kind,
                                 p.similarity if p.kind == "semantic" else None, runs_only=not p.reworded))
    return out
