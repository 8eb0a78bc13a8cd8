"""Every lifted passage of an index (issue 20): the pairs of documents that share a passage, MOSS-style,
from which `findings` reads each document's share found elsewhere, Turnitin-style.

After a scan, the pairs the postings count (Broder's <id, id, count>) that may
share a passage of `params.min_passage_words` words (`candidate_pairs`: enough
winnowed anchors, close enough together; or a document's top partners, which
`check` would give its sentence pass) are aligned once, in parallel, with
`check`'s aligner; the passages are stored in the index
(`scanner/index/passages.py`). A rescan aligns only the pairs of documents it
has not aligned yet. Every face then reads the stored passages. This module
plans the step and stores what it finds; `pair_alignment` aligns its tasks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from scanner.core.config import ALGORITHM_VERSION, MEANING_CANDIDATES, SENTENCE_ALIGNED_FIRST, Params
from scanner.engine.arrays import difference, distinct, in_sorted
from scanner.engine.arrays import ranks as group_ranks
from scanner.engine.semantic import MeaningSpace, StaticModel
from scanner.index.passages import PASSAGE_BLOB_FORMAT, StepPlan, StoredPairRow
from scanner.index.store import Index
from scanner.services.semantic import LazyModel, meaning_key

if TYPE_CHECKING:
    from scanner.services.pair_alignment import StepFailure
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


def passages_key(params: Params, model: StaticModel | LazyModel | None = None,
                 base: str | None = None) -> dict[str, object]:
    """What stored passages depend on: a different key makes the next scan align every pair again.
    `model`: the semantic pass's sentence model (None: no semantic pass); `base`: the digest of the base
    texts left out (`BaseTable.digest`; None: none)."""
    key = {"format": PASSAGE_BLOB_FORMAT, "align": ALIGN_VERSION, "algorithm": ALGORITHM_VERSION,
           "sketch_key": params.sketch_key().hex(), "min_words": params.min_passage_words,
           "common_share": params.common_shingle_share, "semantic": model.key if model is not None else None}
    # named only when there is one: an index aligned before base texts existed keeps its passages
    return key if base is None else {**key, "base": base}


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
    base_digest = index.base.digest()
    index.passages.use_key(passages_key(params, model, base_digest))
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
            index.passages.use_key(passages_key(params, None, base_digest))
            fresh = difference(live, index.passages.aligned_ids())
            unembedded = np.empty(0, dtype=np.int64)
    # the aligner's modules, loaded only now that there is something to align (a rescan of unchanged files has
    # nothing: ~15 ms of its start-up)
    from scanner.services import pair_alignment as aligning
    from scanner.services.prepared import PreparedSides, cache_tokens

    workers = (os.cpu_count() or 1) if jobs is None else jobs
    # workers start up (imports, the index opened) while this process counts the candidate pairs
    semantic = model is not None
    busy = fresh.shape[0] + unembedded.shape[0] >= inline_below
    pool = aligning.AlignPool(str(index.path), params, workers, semantic) if workers > 1 and busy else None
    try:
        ranks = index.content_ranks()  # ties broken by content, not by ids (which follow the workers' order)
        plan_key = _plan_key(index, fresh)
        plan = index.passages.plan(plan_key)  # a step stopped half-way with the same inputs: go on from there
        very_common: list[np.ndarray] = []  # read with the pair counts
        pairs, worthy = (candidate_pairs(index, params, fresh, ranks, very_common) if plan is None
                         else (plan.pairs, plan.worthy))
        common = (np.sort(np.concatenate(very_common).view(np.uint64)) if very_common
                  else index.common_fingerprints(params.common_shingle_share, index.base.as_postings(params)))
        inline = pairs.shape[0] + unembedded.shape[0] < inline_below
        if inline or workers <= 1:
            if pool is not None:
                pool.close()
            pool = None
        elif pool is None:
            pool = aligning.AlignPool(str(index.path), params, workers, semantic)
        sides = (PreparedSides(index, params, model, cache_tokens(1), aligning.SENTENCE_MAX_TOKENS,
                               index.base.prepared(params)) if pool is None else None)

        def run(count: int, make: Callable[[int], aligning.PairsTask | aligning.EmbedTask],
                last: bool) -> Iterator[aligning.Aligned | aligning.Embedded]:
            """The results of tasks make(0), ..., make(count - 1) (made when sent: a step has ~30,000)."""
            if pool is not None:
                return pool.done(count, make, common, last)
            assert sides is not None
            return (aligning.do_task(sides, params, make(k), common) for k in range(count))

        embed_starts = range(0, unembedded.shape[0], _CHUNK_DOCUMENTS)
        progress = _Progress(on_progress, len(embed_starts) + len(range(0, pairs.shape[0], _CHUNK_PAIRS)))
        # first every document's vector by meaning: its nearest documents are then pairs worth the sentence
        # pass too, and a worker holds the documents' sentences for the pairs that follow
        failures: list[StepFailure] = []
        for result in run(len(embed_starts), lambda k: aligning.EmbedTask(
                unembedded[embed_starts[k] : embed_starts[k] + _CHUNK_DOCUMENTS].tolist()), last=False):
            assert isinstance(result, aligning.Embedded)
            failures += result.failed
            if result.doc_ids:
                index.meaning.put(result.doc_ids, result.vectors, result.sentences)
            progress.step()
        if unembedded.shape[0]:
            index.meaning.compact()  # documents embedded again (to store their sentence vectors) are held once
        if plan is None:
            plan = _plan(index, model, fresh, live, pairs, worthy, ranks, aligning.query_order)
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
            for result in run(len(todo), lambda k: aligning.PairsTask(
                    rows[todo[k] * chunk : (todo[k] + 1) * chunk].tolist(), todo[k]), last=True):
                assert isinstance(result, aligning.Aligned)
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
          worthy: np.ndarray, ranks: np.ndarray, order: Callable[[Index, np.ndarray], np.ndarray]) -> StepPlan:
    """The step's pairs, with each fresh document's partners by meaning, without those whose text is not
    stored, in the order the workers get them (`order`: `pair_alignment.query_order`, grouped by query)."""
    near = 0
    if model is not None:
        pairs, worthy, near = with_meaning_partners(index, fresh, live, pairs, worthy, ranks)
    with_text = np.asarray(index.documents_with_text(distinct(pairs).tolist()), dtype=np.int64)
    alignable = np.isin(pairs[:, 0], with_text) & np.isin(pairs[:, 1], with_text)
    pairs, worthy = pairs[alignable], worthy[alignable]
    rows = np.concatenate((pairs, worthy[:, None].astype(np.int64), ranks[pairs]), axis=1)
    ordered = order(index, rows)
    tasks = -(-pairs.shape[0] // _CHUNK_PAIRS)
    return StepPlan(pairs[ordered], worthy[ordered], np.zeros(tasks, dtype=np.bool_),
                    {"chunk": _CHUNK_PAIRS, "tasks": tasks, "without_text": int((~alignable).sum()),
                     "meaning_pairs": near})


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

    A pair is aligned when it shares `Params.passage_anchors` anchors (it may hold a verbatim passage of the
    minimum length) or when it is among either document's SENTENCE_ALIGNED_FIRST partners by shared
    anchors: the partners `check` would give the sentence alignment with this document as its query, where
    a reworded passage shares few anchors. Memory: the anchored pairs, the top partners' table and a bucket.
    """
    need = params.passage_anchors
    anchored: list[np.ndarray] = []
    top = _TopPartners(ranks)
    is_fresh = np.zeros(top.size, dtype=np.bool_)
    is_fresh[fresh] = True
    for pa, pb, shared in index.pair_count_arrays(params.common_shingle_share, common_found=common,
                                                  base=index.base.as_postings(params)):
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
