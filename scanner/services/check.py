"""`check`: where does a document's text come from, and how much of it?

The query is shingled like an indexed document; its winnowed fingerprints are
looked up in the postings (Broder's on-the-fly resemblance), the candidates
sharing most anchors are scored, and for each match the shared passages are
aligned. Because both sides store winnowed fingerprints, any run of
`params.guaranteed_run` shared tokens yields a shared anchor, so no such
passage can be missed at the candidate stage (the detection guarantee).
"""

from __future__ import annotations

import _thread
import functools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from scanner.core.config import MEANING_CANDIDATES, SENTENCE_ALIGNED_FIRST, Params
from scanner.core.model import Extracted, FileRecord, Match, Passage, TextStatus, place_at
from scanner.engine.align import (
    AlignOptions,
    PreparedQuery,
    PreparedSentences,
    align,
    covered_tokens,
    extend,
    may_hold_anchor,
    prepare_query,
    prepare_sentences,
    prepare_sentences_many,
    too_few_runs,
    verbatim_runs_of,
)
from scanner.engine.arrays import distinct, in_sorted
from scanner.engine.base import Base, base_token_mask, shingle_mask, unseeding_tokens
from scanner.engine.canon import Normalizations, normalizations
from scanner.engine.scramble import SwappedReadings, reordered_tokens
from scanner.engine.semantic import QuantizedVectors, StaticModel, document_vector
from scanner.engine.sketch import (
    Shingled,
    Sketch,
    build_sketch,
    compare_sketches,
    estimated_edit_distance,
    measures_of_shared,
    shingle_text,
    shingle_texts,
    winnow,
)
from scanner.services.prepared import PreparedSides, stored_sentences
from scanner.services.semantic import meaning_key
from scanner.sources.extract.containers import moved

T = TypeVar("T")
_QUOTED = re.compile(r"\"[^\"\n]{1,2000}?\"|“[^”]{1,2000}?”|«[^»]{1,2000}?»|„[^“”]{1,2000}?[“”]")
_BIBLIOGRAPHY = re.compile(
    r"^[ \t#*\d.]*(references|bibliography|works cited|literature cited|sources|reference list)[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


class DocumentSource(Protocol):
    """What `check` needs from an index (scanner.index.Index provides it)."""

    def candidates(self, fps: np.ndarray, max_doc_share: float | None = None,
                   top: int | None = None) -> list[tuple[int, int]]: ...
    def sha256s(self, doc_ids: Sequence[int]) -> dict[int, str]: ...
    def first_by_content(self, doc_ids: Sequence[int], count: int) -> dict[int, str]: ...
    def sketch(self, doc_id: int) -> Sketch: ...
    def text(self, doc_id: int) -> str | None: ...
    def texts(self, doc_ids: Sequence[int]) -> list[str | None]: ...
    def document(self, doc_id: int): ...
    def documents_of(self, doc_ids: Sequence[int]) -> dict[int, Any]: ...
    def sketches(self, doc_ids: Sequence[int]) -> dict[int, Sketch]: ...
    def meaning_search(self, key: dict[str, object]) -> Callable[[np.ndarray, int], list[int]]: ...
    def read_meaning_ahead(self) -> None: ...
    def sentence_vectors(self, doc_id: int, key: dict[str, object]) -> QuantizedVectors | None: ...
    def sentence_vectors_of(self, doc_ids: Sequence[int], key: dict[str, object]) -> dict[int, QuantizedVectors]: ...
    def base_text(self, params: Params) -> Base: ...


class IndexedSource(DocumentSource, Protocol):
    """A source that also finds a document by its SHA-256 (to tell a checked file's own copy)."""

    def doc_id_for_sha256(self, sha256: str) -> int | None: ...


@dataclass(frozen=True)
class CheckOptions:
    top: int = 10
    max_candidates: int = 50
    min_words: int | None = None  # default: params.guaranteed_run, so the guarantee holds end to end
    max_gap: int = 12
    exclude_quotes: bool = False
    exclude_bibliography: bool = False
    threshold: float | None = None  # only matches with resemblance >= this (when set)
    min_containment: float | None = None  # only matches with a containment >= this (when set)
    verbatim: bool = False  # verbatim runs only: every passage exact shared text, no reworded sentences
    skip_doc_ids: frozenset[int] = frozenset()  # e.g. the query's own document when it is indexed
    own_path: str | None = None  # the query's real path as the index names it: a match is shown under another
    semantic: StaticModel | None = None  # the sentence model of the semantic pass (issue 21); None: no such pass
    # indexed documents kept prepared from one check to the next (a watch, the TUI, a check of many files);
    # used when made with the same sentence model as `semantic`
    documents: PreparedSides | None = field(default=None, compare=False)


@dataclass(frozen=True)
class CheckReport:
    """Matches of one query text, and the share of its tokens found elsewhere."""

    n_tokens: int
    matches: tuple[Match, ...]
    coverage: float  # share of query tokens inside some passage
    excluded_tokens: int  # tokens masked by quote/bibliography/boilerplate exclusion, base text included
    guaranteed_run: int
    per_source_coverage: dict[int, float] = field(default_factory=dict)
    base_tokens: int = 0  # of the excluded tokens, those of the index's base text (`engine/base.py`)

    @property
    def sources(self) -> int:
        return len(self.matches)

    @property
    def without_text(self) -> int:
        """Matches whose text the index does not keep (scanned with --no-text): no passage can be aligned
        with them, so the share found in them is not measured, and their measures are sketch estimates."""
        return sum(m.measure == "estimate" for m in self.matches)

    def share_sentence(self, what: str = "document") -> str:
        """The headline every face prints after the query's name: its share found elsewhere, or, when no
        source keeps its text, that the share could not be measured (a 0 % there would say what no one saw)."""
        sources = f"{self.sources} source{'s' if self.sources != 1 else ''}"
        if self.sources and self.without_text == self.sources:
            return f"this {what} matches {sources}; the share found in {'it' if self.sources == 1 else 'them'} " \
                   f"is not measured"
        kept = f" ({self.sources - self.without_text} keeping their text)" if self.without_text else ""
        return f"{100 * self.coverage:.1f}% of this {what} is found in {sources}{kept}"

    def share_in(self, match: Match) -> float | None:
        """The share of the query found in one match's passages; None where no passage could be looked for."""
        if match.measure != "exact":
            return None
        return self.per_source_coverage.get(match.doc_id, 0.0) if match.doc_id is not None else 0.0

    def unmeasured_note(self) -> str | None:
        """What every face says beside the share found elsewhere when some sources keep no text: that share
        leaves them out, it does not say none of the document is in them."""
        if not self.without_text:
            return None
        return (f"{self.without_text} of the {self.sources} source(s) keep no text in this index (scanned with "
                f"--no-text): no passage is looked for in them; their resemblance and containment are estimated "
                f"from sketches (with their 95 % error)")


def file_and_members(path: str, shown: str, record: FileRecord, extracted: Extracted
                     ) -> list[tuple[str, FileRecord, Extracted]]:
    """What checking one file checks: the file, then each member of it (an archive's, a mail's), every one
    under the name a scan gives it (`shown`, then `shown!/member`); `path` opened it. A container without
    members is one empty piece, so it is said to have no text rather than passed over."""
    if extracted.status is TextStatus.CONTAINER and not extracted.members:
        return [(shown, record, replace(extracted, status=TextStatus.EMPTY, reason="an empty container"))]
    return [(shown, record, extracted)] + [(moved(m.path, path, shown), m, e) for m, e in extracted.members]


def exclusion_mask(text: str, shingled: Shingled, *, quotes: bool, bibliography: bool) -> np.ndarray:
    """Query tokens that must not count: inside quotation marks, or after a final bibliography heading."""
    starts = shingled.tokens.starts
    masked = np.zeros(starts.shape[0], dtype=bool)
    if quotes:
        spans = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
        if spans:
            bounds = np.asarray(spans, dtype=np.int64)
            slot = np.searchsorted(bounds[:, 0], starts, side="right") - 1
            inside = slot >= 0
            masked[inside] |= starts[inside] < bounds[slot[inside], 1]
    if bibliography:
        headings = [m.start() for m in _BIBLIOGRAPHY.finditer(text) if m.start() >= len(text) // 3]
        if headings:
            masked |= starts >= headings[-1]
    return masked


def _token_ranges(passages: Sequence[Passage], shingled: Shingled) -> list[tuple[int, int]]:
    starts, ends = shingled.tokens.starts, shingled.tokens.ends
    ranges = []
    for p in passages:
        first = int(np.searchsorted(starts, p.query_start, side="left"))
        last = int(np.searchsorted(ends, p.query_end, side="left"))
        ranges.append((first, last + 1))
    return ranges


def _swapped(query: Shingled, params: Params) -> SwappedReadings | None:
    """The query read with neighbouring words swapped back, when its tokens are words."""
    if params.token_unit != "word":
        return None
    return SwappedReadings.of(query.tokens.hashes, params.shingle_size, params.shingle_option, params.seed,
                              query.fingerprints)


def _candidate_ids(source: DocumentSource, query: Shingled, token_mask: np.ndarray, params: Params,
                   limit: int, swapped: SwappedReadings | None) -> tuple[list[tuple[int, int]], dict[int, str]]:
    """Documents sharing the query's winnowed anchors, most first; also those of the query read with
    neighbouring words swapped back (a word-order scramble shares no shingle otherwise: engine/scramble.py).
    With the SHA-256 of each: ties go by content, never by id (ids follow the order a scan's workers
    finished), so the same files indexed give the same candidates, and the same ones the sentence alignment."""
    w = params.shingle_size
    readings = [(query.fingerprints, token_mask)]
    if swapped is not None:
        readings += [(fps, token_mask[order]) for order, fps in zip(swapped.orders, swapped.fingerprints)]
    found_anchors = []
    for fps, mask in readings:
        anchors, positions = winnow(fps, params.winnow_window)
        usable = ~shingle_mask(mask, fps.shape[0], w)
        found_anchors.append(anchors[usable[positions]] if usable.shape[0] else anchors)
    anchors = np.concatenate(found_anchors)
    if anchors.shape[0] == 0:
        return [], {}
    found = source.candidates(distinct(anchors), top=limit)  # and those tied with the last one kept
    content: dict[int, str] = {}
    if len(found) > limit:  # of those tied at the cut, the index picks the first by content
        cut = found[limit - 1][1]
        above = [item for item in found if item[1] > cut]
        content = source.first_by_content([doc_id for doc_id, shared in found if shared == cut], limit - len(above))
        found = above + [item for item in found if item[1] == cut and item[0] in content]
    content.update(source.sha256s([doc_id for doc_id, _ in found if doc_id not in content]))
    found.sort(key=lambda item: (-item[1], content[item[0]]))
    return found, content


def _masked_by_source(source: DocumentSource, text: str, query: Shingled, params: Params,
                      options: CheckOptions, token_mask: np.ndarray) -> np.ndarray:
    """Tokens of the query that appear in a boilerplate index: they never count."""
    mask = token_mask.copy()
    align_options = AlignOptions(max_gap=options.max_gap, min_tokens=params.shingle_size)
    for doc_id, _ in _candidate_ids(source, query, token_mask, params, options.max_candidates,
                                    _swapped(query, params))[0]:
        doc_text = source.text(doc_id)
        if doc_text is None:
            continue
        passages = align(query, text, shingle_text(doc_text, params), doc_text, params.shingle_size, align_options)
        for start, end in _token_ranges(passages, query):
            mask[start:end] = True
    return mask


def _exact_measures(query_set: np.ndarray, doc_sets: Sequence[np.ndarray]) -> list[tuple[float, float, float]]:
    """Resemblance and both containments of each document's sorted distinct set with the query's, from one
    search of all the documents' values at once (50 searches cost more in calls than in work)."""
    if not doc_sets:
        return []
    values = np.concatenate(doc_sets)
    bounds = np.concatenate(([0], np.cumsum([d.shape[0] for d in doc_sets])))
    found = np.concatenate(([0], np.cumsum(in_sorted(values, query_set), dtype=np.int64)))
    return [measures_of_shared(int(found[stop] - found[first]), int(query_set.shape[0]), stop - first)
            for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


class _Background(Generic[T]):
    """A call run on a bare thread while the caller goes on (`result` waits for it, and raises its error):
    `threading.Thread.start` waits until the new thread runs and then for the GIL that thread holds (0.37 ms
    a check, against 0.07 alone)."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._done = _thread.allocate_lock()  # held until the call ends
        self._done.acquire()
        _thread.start_new_thread(self._run, (call,))

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._value = call()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self._error = exc
        finally:
            self._done.release()

    def result(self) -> T:
        with self._done:  # the call has ended
            pass
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def _nearest_in_meaning(search: Callable[[np.ndarray, int], list[int]], prepared: PreparedQuery,
                        skipped: frozenset[int]) -> Callable[[set[int]], list[int]]:
    """The documents nearest the query by meaning, searched now (`search`: `DocumentSource.meaning_search`);
    the call returned gives up to MEANING_CANDIDATES of those not in `taken` (the same as searched with
    `taken` known: it is at most SENTENCE_ALIGNED_FIRST candidates and the skipped documents, and enough
    more are searched)."""
    vectors = prepared.split.vectors if prepared.split is not None else None
    found = [] if vectors is None else search(document_vector(vectors),
                                              MEANING_CANDIDATES + SENTENCE_ALIGNED_FIRST + len(skipped))
    return lambda taken: [doc_id for doc_id in found if doc_id not in taken][:MEANING_CANDIDATES]


def check_text(text: str, source: DocumentSource, params: Params, options: CheckOptions = CheckOptions(),
               exclude: DocumentSource | None = None) -> CheckReport:
    min_words = options.min_words if options.min_words is not None else params.guaranteed_run
    align_options = (AlignOptions.verbatim(max_gap=options.max_gap, min_tokens=min_words) if options.verbatim
                     else AlignOptions(max_gap=options.max_gap, min_tokens=min_words))
    reworded = align_options.sentence_dice is not None
    model = options.semantic if reworded else None
    if model is not None:
        source.read_meaning_ahead()  # read while the candidates are looked up
    query = shingle_text(text, params)
    n_tokens = len(query.tokens)
    token_mask = exclusion_mask(text, query, quotes=options.exclude_quotes, bibliography=options.exclude_bibliography)
    base = source.base_text(params)  # the index's base text never counts (what its scan left out)
    base_tokens = base_token_mask(query, base.fingerprints, params.shingle_size) if base else None
    if base_tokens is not None:
        token_mask |= base_tokens
    if exclude is not None:
        token_mask = _masked_by_source(exclude, text, query, params, options, token_mask)
    # with the semantic pass, the candidates are looked up on a thread of their own (mostly reads, which let
    # this thread run) while this one embeds the query and searches by meaning: ~-0.5 ms a check (medians of
    # five paired runs over bench_check's queries, -0.15 to -0.92, against the search on the thread); without
    # it, what there is to overlap (the query's sentences) gains less than the thread costs (+0.2 to +0.4 ms)
    swapped = _swapped(query, params)
    look_up = functools.partial(_candidate_ids, source, query, token_mask, params, options.max_candidates, swapped)
    # what the search by meaning reads of the index, read before the look-up's thread uses its connection
    # (one sqlite3 connection used by two threads at once can crash the module)
    search = source.meaning_search(meaning_key(model)) if model is not None else None
    lookup = _Background(look_up) if model is not None else None
    shingle_masked = shingle_mask(token_mask, query.fingerprints.shape[0], params.shingle_size)
    usable = ~shingle_masked
    query_sketch = build_sketch(text, params, query)
    query_set = distinct(query.fingerprints[usable])
    prepared: PreparedQuery | None = None
    nearest: Callable[[set[int]], list[int]] | None = None
    if search is not None:  # the query embedded, and searched by meaning, while the look-up reads
        prepared = prepare_query(query, text, with_sentences=True, model=model)
        nearest = _nearest_in_meaning(search, prepared, options.skip_doc_ids)
    # Measures first, for every candidate (cheap); then passages in the final rank order, only until `top`
    # matches are found: alignment is the costly part, and a candidate past the top N is never shown.
    candidates, content = lookup.result() if lookup is not None else look_up()
    found = [(doc_id, shared) for doc_id, shared in candidates if doc_id not in options.skip_doc_ids]
    if prepared is None and found:  # without the semantic pass, prepared only when there is a source to align
        prepared = prepare_query(query, text, with_sentences=reworded)
    worthy = {doc_id for doc_id, _ in found[:SENTENCE_ALIGNED_FIRST]}
    for doc_id in nearest(worthy | options.skip_doc_ids) if nearest is not None else []:
        if doc_id not in {d for d, _ in found}:
            found.append((doc_id, 0))
        worthy.add(doc_id)
    doc_texts = source.texts([doc_id for doc_id, _ in found])
    sides = options.documents if options.documents is not None and options.documents.model is model else None
    prepared_docs = ({doc_id: sides(doc_id, t) for (doc_id, _), t in zip(found, doc_texts) if t is not None}
                     if sides is not None else {})
    # the sentence vectors of those sure to get the sentence alignment, read at once (others when they need them)
    read_ahead = (source.sentence_vectors_of(sorted(worthy - prepared_docs.keys()), meaning_key(model))
                  if model is not None else {})
    shingled = iter(shingle_texts([t for (doc_id, _), t in zip(found, doc_texts)  # one batch: fewer numpy calls
                                   if t is not None and doc_id not in prepared_docs], params))
    docs = [None if doc_text is None else prepared_docs[doc_id].shingled if doc_id in prepared_docs
            else next(shingled) for (doc_id, _), doc_text in zip(found, doc_texts)]
    exact = iter(_exact_measures(query_set, [doc.distinct for doc in docs if doc is not None]))
    measured = []
    errors: dict[int, tuple[float, float, float]] = {}  # the estimates' (exact measures have none)
    for (doc_id, _), doc_text, doc in zip(found, doc_texts, docs):
        if doc is not None:
            resemblance, c_q_in_d, c_d_in_q = next(exact)
        else:  # --no-text index: Theorem 1 estimates only (with their errors), no passages
            estimate = compare_sketches(query_sketch, source.sketch(doc_id), params.sample_size,
                                        excluded=base.fingerprints if base else None)
            resemblance, c_q_in_d, c_d_in_q = (estimate.resemblance, estimate.containment_a_in_b,
                                               estimate.containment_b_in_a)
            errors[doc_id] = estimate.errors
        above = max(c_q_in_d, c_d_in_q, resemblance) >= min(params.min_containment, params.resemblance_threshold)
        measured.append((-c_q_in_d, -resemblance, doc_id, c_d_in_q, above, doc_id in worthy, doc_text, doc))
    content.update(source.sha256s([doc_id for doc_id, _ in found if doc_id not in content]))  # by meaning
    measured.sort(key=lambda m: (m[0], m[1], content[m[2]]))  # ties by content, as the candidates'
    verbatim_options = AlignOptions.verbatim(max_gap=options.max_gap, min_tokens=min_words)
    # the candidates' verbatim runs, and the sentences of those sure to get the sentence alignment, in
    # batches of `top`, in rank order, as the loop below reaches them (it stops at `top` matches: runs made
    # for all ~25 candidates at once cost more than they saved)
    runs_of: dict[int, np.ndarray] = {}
    sentences_of: dict[int, PreparedSentences] = {}
    hopeless: set[int] = set()  # sentence alignment certain to find nothing
    # with each candidate, whether it is sure to get the sentence alignment
    with_text = [(doc_id, doc, doc_text, reworded and (above or sentence_worthy))
                 for _, _, doc_id, _, above, sentence_worthy, doc_text, doc in measured
                 if doc is not None and doc_text is not None]

    def stored(doc_id: int) -> Callable[[], QuantizedVectors | None] | None:
        """The source's sentence vectors as the index keeps them, rather than embedded again."""
        if model is None:
            return None
        return (functools.partial(read_ahead.get, doc_id) if doc_id in worthy
                else stored_sentences(source.sentence_vectors, doc_id, model))

    def sentences_for(doc_id: int, doc: Shingled, doc_text: str) -> PreparedSentences:
        """A candidate's sentences: kept prepared, split with its batch, or split now."""
        side = prepared_docs.get(doc_id)
        if side is not None:
            return side.as_document(model)
        return sentences_of.get(doc_id) or prepare_sentences(doc, doc_text, model, stored(doc_id))

    query_rewording: list[np.ndarray] = []  # made when a candidate first needs it

    def base_sentence_masks(doc: Shingled, doc_sentences: PreparedSentences) -> tuple[np.ndarray, np.ndarray]:
        """The query's and a candidate's tokens whose sentences may not seed a reworded passage: what is
        masked, and the sentences that reword a base sentence (as a scan's passage step masks them)."""
        assert prepared is not None and prepared.split is not None
        dice, cosine, w = align_options.sentence_dice or 0.0, align_options.sentence_cosine, params.shingle_size
        if not query_rewording:
            query_rewording.append(token_mask | unseeding_tokens(query, prepared.split.sentences, base, w, dice,
                                                                 cosine))
        return query_rewording[0], unseeding_tokens(doc, doc_sentences.sentences, base, w, dice, cosine)

    def next_batch() -> None:
        batch = with_text[len(runs_of) : len(runs_of) + max(options.top, 1)]
        runs_of.update(zip((d for d, *_ in batch), verbatim_runs_of(
            query, [doc for _, doc, _, _ in batch], params.shingle_size, verbatim_options, shingle_masked, prepared,
            [prepared_docs[d].as_query(False).index if d in prepared_docs else None for d, *_ in batch])))
        # split at once: those sure to get the sentence alignment, and those whose verbatim runs may make a
        # passage (which then calls for it): one at a time, ~0.5 ms each (2.3 a check of bench_check's)
        split = [(d, doc, doc_text) for d, doc, doc_text, sure in batch if d not in prepared_docs
                 and (sure or (reworded and not too_few_runs(runs_of[d], verbatim_options)))]
        sentences_of.update(zip((d for d, _, _ in split), prepare_sentences_many(
            [doc for _, doc, _ in split], [doc_text for _, _, doc_text in split], model,
            [stored(d) for d, _, _ in split])))
        # of those sure to get it, the ones whose runs cannot make a passage alone need an anchor: with the
        # semantic pass, bounds for them all at once rule out those without one (`may_hold_anchor`: certain)
        # instead of a sentence alignment each that finds nothing (mostly the candidates by meaning): -0.8 ms
        # a check (paired, bench_check's queries); without it those alignments cost less than the bounds
        anchorless = [(d, doc, doc_text) for d, doc, doc_text, sure in batch
                      if sure and too_few_runs(runs_of[d], verbatim_options)]
        if anchorless and model is not None and prepared is not None and prepared.split is not None:
            hopes = may_hold_anchor(prepared.split, [sentences_for(*a) for a in anchorless], align_options)
            hopeless.update(d for (d, _, _), hope in zip(anchorless, hopes.tolist()) if not hope)
    found_matches: list[tuple[int, float, float, float, list[Passage]]] = []  # their records read after
    coverage_by_doc: dict[int, np.ndarray] = {}
    reordered: dict[int, np.ndarray] = {}  # query tokens a source shares only with neighbours swapped back
    doc_normalized: dict[int, Normalizations] = {}  # the same in the source: a copy of a Cyrillic text is no evasion
    for neg_c, neg_r, doc_id, c_d_in_q, above, sentence_worthy, doc_text, doc in measured:
        if len(found_matches) == options.top:
            break
        c_q_in_d, resemblance = -neg_c, -neg_r
        passages: list[Passage] = []
        if doc is not None and doc_text is not None:  # a --no-text index has neither: no passages
            if doc_id not in runs_of:
                next_batch()
            runs = runs_of[doc_id]
            # Reworded sentences where there is evidence to extend (a verbatim passage, a measure over the
            # threshold) and for the candidates sharing the most fingerprints; the sentence alignment of every
            # other candidate would double the latency for little (docs/EVALUATION.md, "check latency").
            sentences = reworded and (above or sentence_worthy)
            fragments = None
            if not sentences:
                # both passes' first step (none without enough runs: the verbatim pass stops before it)
                fragments = None if too_few_runs(runs, verbatim_options) else extend(runs, options.max_gap)
                passages = align(query, text, doc, doc_text, params.shingle_size, verbatim_options, shingle_masked,
                                 prepared, runs=runs, fragments=fragments)
                sentences = reworded and bool(passages)
            if sentences and doc_id not in hopeless:
                doc_sentences = sentences_for(doc_id, doc, doc_text)
                passages = align(query, text, doc, doc_text, params.shingle_size, align_options, shingle_masked,
                                 prepared, model, doc_sentences, runs, fragments,
                                 base_sentence_masks(doc, doc_sentences) if base else None)
        if not passages and not above:
            continue
        if options.threshold is not None and resemblance < options.threshold and (
                options.min_containment is None or max(c_q_in_d, c_d_in_q) < options.min_containment):
            continue
        if options.min_containment is not None and max(c_q_in_d, c_d_in_q) < options.min_containment and (
                options.threshold is None or resemblance < options.threshold):
            continue
        coverage_by_doc[doc_id] = covered_tokens(_token_ranges(passages, query), n_tokens)
        if passages and doc is not None and doc_text is not None:
            doc_normalized[doc_id] = normalizations(doc_text, doc.tokens)
            if swapped is not None:
                reordered[doc_id] = reordered_tokens(swapped, doc.distinct, params.shingle_size,
                                                     coverage_by_doc[doc_id])  # its passages' tokens
        found_matches.append((doc_id, resemblance, c_q_in_d, c_d_in_q, passages))
    # the matches' records and sketches, read at once (before: two statements a match, and one for its sketch)
    records = source.documents_of([doc_id for doc_id, *_ in found_matches])
    sketches = source.sketches([doc_id for doc_id, *_ in found_matches])
    matches: list[Match] = []
    for doc_id, resemblance, c_q_in_d, c_d_in_q, passages in found_matches:
        record = records[doc_id]
        paths = getattr(record, "paths", None) or (str(doc_id),)
        doc_places = getattr(record, "places", ())  # where the document's text is not its body
        if doc_places:
            passages = [replace(p, doc_found_in=place) if (place := place_at(doc_places, p.doc_start, p.doc_end))
                        else p for p in passages]
        matches.append(Match(
            path=next((p for p in paths if options.own_path is None or os.path.realpath(p) != options.own_path),
                      paths[0]),
            sha256=record.sha256,
            resemblance=resemblance,
            containment_query_in_doc=c_q_in_d,
            containment_doc_in_query=c_d_in_q,
            edit_distance_estimate=estimated_edit_distance(query_sketch, sketches.get(doc_id) or source.sketch(doc_id)),
            passages=tuple(passages),
            doc_id=doc_id,
            errors=errors.get(doc_id, (0.0, 0.0, 0.0)),
            measure="estimate" if doc_id in errors else "exact",
        ))
    if any(m.passages for m in matches):  # what each match's passages needed: evidence of an evasion
        normalized = normalizations(text, query.tokens)
        matches = [replace(m, normalizations=_needed(normalized, doc_normalized.get(found_id), m, query,
                                                     reordered.get(found_id), params))
                   if (found_id := m.doc_id) is not None else m for m in matches]
    kept = {m.doc_id for m in matches}
    countable = max(n_tokens - int(token_mask.sum()), 1)
    union = np.zeros(n_tokens, dtype=bool)
    per_source = {}
    for doc_id, covered in coverage_by_doc.items():
        if doc_id in kept:
            union |= covered
            per_source[doc_id] = float((covered & ~token_mask).sum()) / countable
    return CheckReport(
        n_tokens=n_tokens,
        matches=tuple(matches),
        coverage=float((union & ~token_mask).sum()) / countable if n_tokens else 0.0,
        excluded_tokens=int(token_mask.sum()),
        guaranteed_run=params.guaranteed_run,
        per_source_coverage=per_source,
        base_tokens=int(base_tokens.sum()) if base_tokens is not None else 0,
    )


def _needed(normalized: Normalizations, doc_normalized: Normalizations | None, match: Match, query: Shingled,
            reordered: np.ndarray | None, params: Params) -> dict[str, int]:
    """What a match's passages needed to match (its evidence of an evasion): look-alike characters mapped,
    letter-spaced words rejoined, invisible characters dropped, in the words that the source does not hold
    in the same form (Normalizations.needed: a copy of a Russian text is no evasion); words read with their
    neighbour swapped back ("reordered", counted when at least two shingles' worth)."""
    spans = [(p.query_start, p.query_end) for p in match.passages]
    counts = (normalized.counts(spans) if doc_normalized is None
              else normalized.needed(spans, doc_normalized, [(p.doc_start, p.doc_end) for p in match.passages]))
    if reordered is not None:
        inside = covered_tokens(_token_ranges(match.passages, query), reordered.shape[0])
        words = int((reordered & inside).sum())
        if words >= 2 * params.shingle_size:
            counts["reordered"] = words
    return counts




def check_extracted(extracted: Extracted, source: DocumentSource, params: Params,
                    options: CheckOptions = CheckOptions(), exclude: DocumentSource | None = None) -> CheckReport:
    """`check_text` of an extracted file, each passage labelled with where in the file it was found when
    that is not the body: a marked region (an HTML comment, `<nav>`, an alt attribute...) or the raw text
    of a file whose extractor kept too little. Text hidden from a reader is evidence, and says so."""
    report = check_text(extracted.text, source, params, options, exclude)
    places = extracted.places

    def label(passage: Passage) -> Passage:
        found_in = place_at(places, passage.query_start, passage.query_end)
        return replace(passage, found_in=found_in) if found_in else passage

    matches = tuple(replace(m, passages=tuple(label(p) for p in m.passages)) for m in report.matches)
    return replace(report, matches=matches)


def own_file_options(options: CheckOptions, source: IndexedSource, path: str, sha256: str) -> CheckOptions:
    """`options` for checking a file that may itself be indexed.

    Its own document is not a source of itself when this path is the only one that holds it. An
    identical file at another path is still reported, under that path: it is evidence.
    """
    from scanner.sources.crawl import printable_realpath

    # the index keeps display paths (undecodable bytes and control characters escaped): compare like with like
    own = printable_realpath(path)
    doc_id = source.doc_id_for_sha256(sha256)
    alone: set[int] = set()  # its own document, when this path is the only one holding it
    if doc_id is not None:
        paths = getattr(source.document(doc_id), "paths", ())
        if paths and all(os.path.realpath(p) == own for p in paths):
            alone.add(doc_id)
    return replace(options, own_path=own, skip_doc_ids=options.skip_doc_ids | alone)


def is_finding(match: Match, params: Params) -> bool:
    """Above threshold: what makes `check` exit with 1."""
    return (match.resemblance >= params.resemblance_threshold
            or max(match.containment_query_in_doc, match.containment_doc_in_query) >= params.min_containment)
