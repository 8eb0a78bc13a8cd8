"""Aligning the passage step's pairs (issue 20): tasks of pairs (or of documents to embed) done whole, or
one pair (document) at a time when a task raises; long-lived workers that keep their prepared documents from
task to task; and the alignment of a pair itself (verbatim runs first, reworded sentences where worth it,
the rare-anchor filter).

`services.passages` (the step: which pairs, in what order, what is stored) loads this module only when a step
has something to align, so a rescan of unchanged files never imports the aligner (~15 ms of its start-up).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, cast

import numpy as np

from scanner.core.config import Params
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
from scanner.engine.arrays import distinct, in_sorted
from scanner.engine.base import Base
from scanner.engine.semantic import MEANING_DIMENSIONS, QuantizedVectors, StaticModel, document_vector
from scanner.engine.sketch import winnow_batch
from scanner.index.passages import PassagePair, StoredPairRow, StoredPassage, covered_count, stored_row, swapped
from scanner.index.store import Index
from scanner.services.prepared import AlignSide, PreparedSides, cache_tokens
from scanner.services.semantic import open_model
from scanner.services.workers import Assign, Broken, WorkerProcess, serve_tasks

# Longest text (tokens) given the reworded-sentence pass; longer pairs get verbatim runs only. The sentence
# pass costs about 10x the verbatim one, and a scan has no per-pair time budget: a 50 MB log paired with
# the short texts it holds would otherwise hold up the whole step (`check` still runs it on any query).
SENTENCE_MAX_TOKENS = 200_000


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


def align_options(params: Params) -> AlignOptions:
    """`check`'s aligner (verbatim runs and reworded sentences), keeping passages of the minimum length.
    Summaries are looked for one way only, though the query is the longer text of the pair
    (`pair_passages`): both ways found PAN-13's summaries from a scan (05: 0.31 -> 0.50) but joined
    repeated lists of headlines in real pages into passages of half a document (`bench/eval_lifted.py`:
    share error 0.013 -> 0.056 mean, 0.497 max)."""
    return AlignOptions(min_tokens=params.min_passage_words)




@dataclass(frozen=True)
class PairsTask:
    """A task: pairs (a, b, worthy, rank a, rank b) to align; the step's `task`-th."""

    rows: list[list[int]]
    task: int = 0


@dataclass(frozen=True)
class EmbedTask:
    """A task: documents to give their vector by meaning."""

    doc_ids: list[int]


@dataclass(frozen=True)
class Aligned:
    """Worker to parent: the passage pairs of the step's `task`-th task, as stored (`stored_row`)."""

    rows: list[StoredPairRow]
    task: int = 0
    failed: tuple[StepFailure, ...] = ()


@dataclass(frozen=True)
class Embedded:
    """Worker to parent: the documents' vectors by meaning, a row each, and their sentence vectors."""

    doc_ids: list[int]
    vectors: np.ndarray
    sentences: list[QuantizedVectors | None]
    failed: tuple[StepFailure, ...] = ()


@dataclass(frozen=True)
class _Failed:
    """Worker to parent: a task raised (the parent stops the step: every pair must be aligned or counted)."""

    reason: str


def do_task(sides: PreparedSides, params: Params, task: PairsTask | EmbedTask,
            common: np.ndarray) -> Aligned | Embedded:
    """The task done whole; when that raises, its pairs (documents) one at a time, so that one which cannot be
    aligned (embedded) costs no other its passages (vector), and is reported with its error."""
    try:
        if isinstance(task, EmbedTask):
            return Embedded(task.doc_ids, *embed_documents(sides, task.doc_ids))
        return Aligned([stored_row(pair) for pair in align_pairs(sides, params, task.rows, common)], task.task)
    except Exception:  # noqa: BLE001 - narrowed down below to what raises
        pass
    failed: list[StepFailure] = []
    if isinstance(task, EmbedTask):
        done: list[tuple[int, np.ndarray, QuantizedVectors | None]] = []
        for doc_id in task.doc_ids:
            try:
                vectors, sentences = embed_documents(sides, [doc_id])
                done.append((doc_id, vectors[0], sentences[0]))
            except Exception as exc:  # noqa: BLE001 - reported; the document stays without a vector
                failed.append(StepFailure((doc_id,), _reason(exc)))
        return Embedded([d for d, _, _ in done], np.array([v for _, v, _ in done], dtype=np.float32).reshape(
            len(done), MEANING_DIMENSIONS), [q for _, _, q in done], tuple(failed))
    rows: list[StoredPairRow] = []
    for row in task.rows:
        try:
            rows += [stored_row(pair) for pair in align_pairs(sides, params, [row], common)]
        except Exception as exc:  # noqa: BLE001 - reported; the pair's documents stay not aligned
            failed.append(StepFailure((row[0], row[1]), _reason(exc)))
    return Aligned(rows, task.task, tuple(failed))


def _lost(task: PairsTask | EmbedTask, reason: str) -> Aligned | Embedded:
    """A task whose worker died, as its result: every pair (document) of it failed."""
    if isinstance(task, EmbedTask):
        return Embedded([], np.empty((0, MEANING_DIMENSIONS), dtype=np.float32), [],
                         tuple(StepFailure((doc_id,), reason) for doc_id in task.doc_ids))
    return Aligned([], task.task, tuple(StepFailure((row[0], row[1]), reason) for row in task.rows))


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
        index = Index.open(path, readonly=True, params=params)
        return PreparedSides(index, params, model, max_tokens, SENTENCE_MAX_TOKENS, index.base.prepared(params))

    def handle(sides: PreparedSides, _task_id: int, payload: tuple[PairsTask | EmbedTask, np.ndarray]) -> bool:
        task, common = payload
        try:
            conn.send(do_task(sides, params, task, common))
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


class AlignPool:
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

    def done(self, count: int, make: Callable[[int], PairsTask | EmbedTask], common: np.ndarray,
             last: bool = True) -> Iterator[Aligned | Embedded]:
        """The result of each task make(0), ..., make(count - 1), as workers finish them (one task in flight
        per worker: memory stays a few tasks' worth). Each worker takes its own run of neighbouring tasks
        (`_Runs`). When the tasks run out the workers end, or, unless `last`, wait for the next call's tasks (a
        step in phases: every document embedded before its pairs are chosen). A worker that dies (killed for
        memory, a crash) is replaced, and its task's pairs are tried again one at a time, so that only a pair
        whose own worker dies too is given as failed (a task of documents to embed: every one of them)."""
        runs = _Runs(count, list(self._running))
        in_flight: dict[Connection, PairsTask | EmbedTask] = {}
        retry: deque[PairsTask] = deque()  # single pairs of tasks whose worker died
        parts: dict[int, list[Aligned]] = {}  # such a task's pairs done so far, given as one result when all are
        sizes: dict[int, int] = {}

        def send_next(conn: Connection) -> None:
            task: PairsTask | EmbedTask
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

        def finished(result: Aligned | Embedded) -> Aligned | Embedded | None:
            """The result to give: a part of a task tried pair by pair is held until the last one."""
            if not isinstance(result, Aligned) or result.task not in sizes:
                return result
            held = parts[result.task]
            held.append(result)
            if len(held) < sizes[result.task]:
                return None
            del parts[result.task], sizes[result.task]
            return Aligned([row for part in held for row in part.rows], result.task,
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
                    if isinstance(lost, PairsTask) and len(lost.rows) > 1 and lost.task not in sizes:
                        sizes[lost.task], parts[lost.task] = len(lost.rows), []
                        retry.extend(PairsTask([row], lost.task) for row in lost.rows)
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
                if isinstance(message, (Aligned, Embedded)) and (given := finished(message)) is not None:
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


def query_order(index: Index, rows: np.ndarray) -> np.ndarray:
    """The order that puts together the pairs of one query (`align_pairs`: the longer text of a pair, of two
    as long the one first by content), so that a worker prepares each document about once as a query, not
    once a pair: a 4 M-word log paired with hundreds of files took ~0.6 s to read, cut and sort each time."""
    ids = distinct(rows[:, :2])
    counts = index.token_counts(ids.tolist())
    tokens = np.zeros(int(ids[-1]) + 1 if ids.shape[0] else 0, dtype=np.int64)
    tokens[ids] = np.fromiter((counts.get(int(d), 0) for d in ids.tolist()), dtype=np.int64, count=ids.shape[0])
    a, b = rows[:, 0], rows[:, 1]
    b_first = second_is_query(tokens[a], tokens[b], rows[:, 3], rows[:, 4])
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


def second_is_query(tokens_a: Any, tokens_b: Any, rank_a: Any, rank_b: Any) -> Any:
    """Whether B, not A, is a pair's query (`pair_passages`): the longer text; of two as long, the one first
    by content (`Index.content_ranks`), never by id. Of numbers, or element-wise of arrays."""
    return (tokens_b > tokens_a) | ((tokens_b == tokens_a) & (rank_b < rank_a))


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
        if second_is_query(len(first.shingled.tokens), len(second.shingled.tokens), rank_a, rank_b):
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
                                                                fragments=fragments, base=sides.base)
        if found[row] and sentences_worth_it:
            sentence_pass.append((row, runs, fragments))
    # the documents of the pairs the sentences are for, split at once (most pairs of a task need none)
    sides.split([side for row, *_ in sentence_pass for side in oriented[row][1:4:2]]
                + [side for pair in waiting for side in pair[1:4:2]])
    for row, runs, fragments in sentence_pass:
        found[row] = pair_passages(oriented[row][1], oriented[row][3], params, options, runs, sides.model, fragments,
                                   sides.base)
    for row in sorted(found):
        a, first, b, second, _ = oriented[row]
        _keep(out, a, first, b, second, found[row], common, params)
    for key, group in _by_shared_document(waiting).items():
        shared = sides(key).as_document(sides.model)
        partners = [(second if a == key else first).as_document(sides.model) for a, first, _, second, _ in group]
        for (a, first, b, second, runs), hopeful in zip(group, may_hold_anchor(shared, partners, options)):
            if hopeful:
                _keep(out, a, first, b, second, pair_passages(first, second, params, options, runs, sides.model,
                                                              base=sides.base), common, params)
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
                                                    params.shingle_size, options, query.base_mask,
                                                    prepared=query.as_query(False),
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
    """Whether `Params.passage_anchors` of the anchors A shares with B lie within one passage of the minimum length:
    inside a shared run both texts select the same anchors, so a verbatim passage of `min_passage_words`
    words holds that many within its `min_passage_words - w + 1` shingles. The postings count a pair's shared
    anchors wherever they lie; this tells apart the pairs whose few shared phrases are scattered."""
    return bool(anchors_close_enough_many(a, [b], params)[0])


def anchors_close_enough_many(a: AlignSide, partners: Sequence[AlignSide], params: Params) -> np.ndarray:
    """`anchors_close_enough(a, b)` for each partner b, in one batch of numpy calls (a call a pair cost ~0.1
    ms of the passage step's ~0.3 ms a pair that shares no passage): each partner's distinct anchors searched
    among A's (A: the query, the longer text), A's anchors found sorted by partner and place."""
    need = params.passage_anchors
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
    passage of `min_passage_words` words keeps `Params.passage_anchors` such windows: its guarantee is unchanged."""
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
                  fragments: np.ndarray | None = None, base: Base | None = None) -> list[StoredPassage]:
    """Passages of A and B in characters and tokens, each marked verbatim or reworded.

    The aligner is not symmetric (its reworded-sentence seeds and trimming work from the query's
    sentences); a scan has no query, so the longer text takes that part: on PAN-13's verbatim class the
    passages are then as precise as `check`'s (0.961 against 0.899 the other way round, docs/EVALUATION.md).
    `runs`: the pair's `verbatim_runs`, when already made; `model`: the semantic pass's sentence model;
    `fragments`: `extend(runs, options.max_gap)`, when a verbatim pass made them; `base`: the base text the
    sides were made with (`align_sides(base=)`), whose sentences' rewordings seed nothing either.
    """
    out = []
    n_a, n_b = len(a.shingled.tokens), len(b.shingled.tokens)
    sentences = options.sentence_dice is not None
    prepared, doc_sentences = a.as_query(sentences, model), b.as_document(model) if sentences else None
    found = token_passages(a.shingled, a.text, b.shingled, b.text, params.shingle_size, options, a.base_mask,
                           prepared=prepared, doc_sentences=doc_sentences, runs=runs, fragments=fragments,
                           sentence_masks=(a.sentence_mask(base, options), b.sentence_mask(base, options))
                           if base else None)
    for p in found:
        a_stop, b_stop = min(p.query_end, n_a), min(p.doc_end, n_b)
        out.append(StoredPassage(int(a.shingled.tokens.starts[p.query_start]), int(a.shingled.tokens.ends[a_stop - 1]),
                                 int(b.shingled.tokens.starts[p.doc_start]), int(b.shingled.tokens.ends[b_stop - 1]),
                                 p.query_start, a_stop, p.doc_start, b_stop, p.kind,
                                 p.similarity if p.kind == "semantic" else None, runs_only=not p.reworded))
    return out
