"""Indexed documents made ready to align, kept from one pair or one check to the next.

A document is read, shingled, winnowed, split into sentences and embedded once per process, not once per
pair (the scan's passage step, where a document has many partners) nor once per check (`watch` and the
TUI check many files against the same protected documents).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from scanner.core.config import Params
from scanner.engine.align import (
    AlignOptions,
    PreparedQuery,
    PreparedSentences,
    prepare_query,
    prepare_sentences,
    prepare_sentences_many,
)
from scanner.engine.arrays import SortedLookup, distinct
from scanner.engine.base import Base, base_masks, reworded_base_tokens
from scanner.engine.semantic import QuantizedVectors, StaticModel
from scanner.engine.sketch import Shingled, shingle_texts, winnow_batch
from scanner.services.semantic import meaning_key

_CACHE_TOKENS = 2_000_000  # tokens of prepared documents a process keeps (~110 bytes a token), at least
_MAX_CACHE_TOKENS = 16_000_000  # and at most, whatever the memory
_CACHE_MEMORY_SHARE = 16  # the processes aligning at once keep a sixteenth of the machine's memory between them
_BYTES_A_TOKEN = 110  # measured: 10,000 bench_million documents (4.4 M tokens) all kept took 256 MB more than 2 M
# what a process checking file after file keeps of its sources (a watch worker, `scanner check` of many files)
CHECK_CACHE_TOKENS = 500_000


class TextSource(Protocol):
    """What preparing documents reads from an index (`scanner.index.Index` provides it)."""

    def text(self, doc_id: int) -> str | None: ...
    def texts(self, doc_ids: Sequence[int]) -> list[str | None]: ...
    def token_counts(self, doc_ids: Sequence[int]) -> dict[int, int]: ...
    def sentence_vectors(self, doc_id: int, key: dict[str, object]) -> QuantizedVectors | None: ...


def stored_sentences(read: Callable[[int, dict[str, object]], QuantizedVectors | None], doc_id: int,
                     model: StaticModel) -> Callable[[], QuantizedVectors | None]:
    """How to read a document's sentence vectors as the index keeps them (`read`: `Index.sentence_vectors`),
    made by `model`: what `prepare_sentences` reads instead of embedding the document again."""
    return functools.partial(read, doc_id, meaning_key(model))


def cache_tokens(processes: int, memory: int | None = None) -> int:
    """Tokens of prepared documents each of `processes` processes aligning at once keeps (`PreparedSides`):
    a share of `memory` (bytes; default: the machine's physical memory) between them, from 2 M to 16 M. A
    document prepared, dropped and needed again is read, shingled and split again: at 10,000 documents (one
    process, `bench/profile_passages.py`) the step took 79.7 s keeping 2 M tokens, 61.0 s keeping them all."""
    if memory is None:
        try:
            memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, OSError, ValueError):  # no such figure here (Windows): the least
            memory = 0
    share = memory // _CACHE_MEMORY_SHARE // max(processes, 1) // _BYTES_A_TOKEN
    return int(min(max(share, _CACHE_TOKENS), _MAX_CACHE_TOKENS))


@dataclass
class AlignSide:
    """A document ready to align: its text, shingles, and winnowed anchors with their shingle positions;
    its sorted shingles and its sentences are made once, when first needed, whichever side it takes."""

    text: str
    shingled: Shingled
    anchors: np.ndarray
    positions: np.ndarray
    verbatim_query: PreparedQuery | None = None
    query: PreparedQuery | None = None
    sentences: PreparedSentences | None = None
    stored: Callable[[], QuantizedVectors | None] | None = None  # its sentence vectors as the index keeps them
    base_mask: np.ndarray | None = None  # its shingles holding base text, which seed nothing (None: none)
    base_tokens: np.ndarray | None = None  # its tokens a base shingle covers (None: none)
    reworded_base: np.ndarray | None = None  # `sentence_mask`, made when first asked for

    def sentence_mask(self, base: Base, options: AlignOptions) -> np.ndarray | None:
        """Its tokens whose sentences may not seed a reworded passage: base text, and its sentences that
        reword a base sentence at the anchors' thresholds (`engine.base.reworded_base_tokens`); None: none."""
        if not base or base.sentences is None or self.sentences is None or options.sentence_dice is None:
            return self.base_tokens
        if self.reworded_base is None:
            reworded = reworded_base_tokens(self.sentences.sentences, base.sentences, len(self.shingled.tokens),
                                            options.sentence_dice, options.sentence_cosine)
            self.reworded_base = reworded if self.base_tokens is None else reworded | self.base_tokens
        return self.reworded_base

    @functools.cached_property
    def anchor_lookup(self) -> SortedLookup:
        """Its anchors sorted once: which of them another document holds then costs a search a anchor of the
        other, however long this one is (a 4 M-word log paired with hundreds of short files)."""
        return SortedLookup.of(self.anchors)

    @functools.cached_property
    def distinct_anchors(self) -> np.ndarray:
        """Its anchors sorted, each once: what another document looks up among its own (a document meets
        hundreds of partners in a scan's passage step)."""
        return distinct(self.anchors)

    def as_query(self, sentences: bool, model: StaticModel | None = None) -> PreparedQuery:
        if self.verbatim_query is None:
            self.verbatim_query = prepare_query(self.shingled, self.text, with_sentences=False)
        if not sentences:
            return self.verbatim_query
        if self.query is None:
            split = self.as_document(model)
            self.query = PreparedQuery(self.verbatim_query.index, split)
        return self.query

    def as_document(self, model: StaticModel | None = None) -> PreparedSentences:
        """Its sentences, embedded by `model` when given (the same model every call: `PreparedSides.model`)."""
        if self.sentences is None:
            self.sentences = prepare_sentences(self.shingled, self.text, model, self.stored)
        return self.sentences


def align_side(text: str, params: Params, base: Base | None = None) -> AlignSide:
    return align_sides([text], params, base)[0]


def align_sides(texts: list[str], params: Params, base: Base | None = None) -> list[AlignSide]:
    """`align_side` of each text, bit-identical, in a few numpy passes for all (`shingle_texts`,
    `winnow_batch`): a task of the passage step meets ~100 short documents, ~0.3 ms each one at a time.
    `base`: the base text each side's masks mark (`AlignSide.base_mask`)."""
    shingled = shingle_texts(texts, params)
    if not shingled:
        return []
    offsets = np.concatenate(([0], np.cumsum([s.fingerprints.shape[0] for s in shingled]))).astype(np.int64)
    anchors, positions, cuts = winnow_batch(np.concatenate([s.fingerprints for s in shingled]), offsets,
                                            params.winnow_window)
    sides = [AlignSide(text, one, anchors[lo:hi], positions[lo:hi])
             for text, one, lo, hi in zip(texts, shingled, cuts[:-1].tolist(), cuts[1:].tolist())]
    if base:
        for side in sides:
            masks = base_masks(side.shingled, base.fingerprints, params.shingle_size)
            if masks is not None:
                side.base_tokens, side.base_mask = masks
    return sides


class PreparedSides:
    """The documents one process aligns, each read and prepared once (`AlignSide`), kept up to `max_tokens`
    tokens, least recently used out first, but never the two used last (the pair being aligned: a document
    longer than the whole budget, paired with hundreds of others, would otherwise be read again for each).
    `model`: the sentence model their sentences are embedded with (None: not embedded), the same for every
    document; `base`: the index's base text (`BaseTable.prepared`), whose shingles each document's
    `base_mask` marks."""

    def __init__(self, index: TextSource, params: Params, model: StaticModel | None = None,
                 max_tokens: int = _CACHE_TOKENS, split_below: int | None = None,
                 base: Base | None = None) -> None:
        self.index = index
        self.params = params
        self.model = model
        self.base = base if base is not None else Base.of([], params)
        self.max_tokens = max_tokens
        # documents of at most this many tokens prepared in a batch (`prepare`) are split into sentences in
        # it too (None: each when first needed): nearly all a scan's step prepares get the sentence pass
        self.split_below = split_below
        self._sides: dict[int, AlignSide] = {}  # in order of last use
        self._tokens = 0

    def __call__(self, doc_id: int, text: str | None = None) -> AlignSide:
        """The document prepared; `text`: its text when the caller has read it already (else read here; a
        document without stored text is prepared as empty)."""
        side = self._sides.pop(doc_id, None)
        if side is None:
            side = self._new(doc_id, align_side(text if text is not None else self.index.text(doc_id) or "",
                                                self.params, self.base))
        self._keep(doc_id, side)
        return side

    def prepare(self, doc_ids: Sequence[int], tokens: dict[int, int] | None = None, split: bool = True) -> None:
        """Read and prepare at once those of these documents not kept yet (one query, one batch of numpy
        passes), as many as half the budget holds in the order given; the others, when asked for. `tokens`:
        their token counts (`TextSource.token_counts`), when the caller has read them. `split`: split them into
        sentences too (`split`), else each when first needed or when `split` is called."""
        missing = list(dict.fromkeys(int(d) for d in doc_ids if int(d) not in self._sides))
        if len(missing) < 2:
            return
        if tokens is None:
            tokens = self.index.token_counts(missing)
        room, chosen = self.max_tokens // 2, []
        for doc_id in missing:
            room -= tokens.get(doc_id, 0)
            if room < 0:
                break
            chosen.append(doc_id)
        texts = [text or "" for text in self.index.texts(chosen)]
        made = [self._new(doc_id, side) for doc_id, side in zip(chosen, align_sides(texts, self.params, self.base))]
        if split:
            self.split(made)
        for doc_id, side in zip(chosen, made):
            self._keep(doc_id, side)

    def split(self, sides: Sequence[AlignSide]) -> None:
        """Split into sentences at once those of these documents not split yet, of at most `split_below`
        tokens (none without it): one batch of numpy passes (`prepare_sentences_many`), the same sentences."""
        if self.split_below is None:
            return
        below = self.split_below
        chosen = list({id(side): side for side in sides
                       if side.sentences is None and len(side.shingled.tokens) <= below}.values())
        for side, sentences in zip(chosen, prepare_sentences_many(
                [side.shingled for side in chosen], [side.text for side in chosen], self.model,
                [side.stored for side in chosen])):
            side.sentences = sentences

    def _new(self, doc_id: int, side: AlignSide) -> AlignSide:
        if self.model is not None:
            side.stored = stored_sentences(self.index.sentence_vectors, doc_id, self.model)
        self._tokens += len(side.shingled.tokens)
        return side

    def _keep(self, doc_id: int, side: AlignSide) -> None:
        """Keep it as the one used last; the least recently used go while over budget."""
        self._sides[doc_id] = side
        while len(self._sides) > 2 and self._tokens > self.max_tokens:
            self._tokens -= len(self._sides.pop(next(iter(self._sides))).shingled.tokens)
