"""Sentences that mean the same: seeds for reworded, summarised and machine-paraphrased passages (issue 21).

A static embedding model (a table of one vector per subword token, as
WordLlama ships) turns a sentence into the mean of its tokens' vectors. Such a
mean carries a large component shared by all text; comparing raw means scores
unrelated sentences of one topic high. So the sentence vectors of a pair of
texts are centred on their joint mean before the cosine: what remains is what
sets a sentence apart within this pair, which is what a rewording keeps.
Measured on PAN-13 (docs/EVALUATION.md, "semantic pass"): centring cut the
share of unrelated sentences over a 0.5 cosine from 6 % to 0.6 %.

Speed: a sentence is embedded from the canonical words the sketch pipeline
already cut (lower-cased, as the tokenizer sees them after `canonicalize`), each
distinct word encoded once per model object and kept (`StaticModel.word_rows`):
a text costs a dictionary look-up per distinct word and one gather-and-sum,
not a subword tokenization of every sentence.

No I/O here: the model's table and tokenizer come in as a `StaticModel`
(`scanner.sources.models` loads the shipped one).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from scanner.engine.canon import Tokens
from scanner.engine.kernels import compiled

_TOKENS_PER_BLOCK = 65_536  # word vectors gathered at once when pooling: memory stays ~64 MB whatever the text
_PAIRS_PER_BLOCK = 1_000_000  # sentence-pair similarities computed at once (4 MB a block, with temporaries)


class StaticModel:
    """A static embedding model: `encode` maps words to subword ids (all the words' ids one after the other,
    and how many each word has), `table` maps an id to its vector.

    It keeps each word it has seen as the sum of its subwords' vectors and their count, so the object is
    made once per process and passed to whatever embeds (a cache, not shared state: nothing else sees it).
    """

    def __init__(self, name: str, version: str, table: np.ndarray,
                 encode: Callable[[list[str]], tuple[np.ndarray, np.ndarray]], max_words: int = 50_000) -> None:
        self.name = name  # recorded with the stored passages, so findings say what found them
        self.version = version
        # (vocabulary, dimensions), kept in the file's precision (float16: 16 MB, not 33): a word's subword
        # vectors are summed in float32 once, when the word is first met
        self.table = np.ascontiguousarray(table)
        self.encode = encode
        # words kept at most (1 KB each): a long-running watch meets new words (names, typos, identifiers)
        # for ever, so past this the cache starts again rather than growing without end
        self.max_words = max_words
        # the words seen, by key (`word_keys`: a word's canonical hash when the text spells it in plain ASCII
        # letters and digits, else a hash of its spelling), sorted, and each one's row of _sums
        self._known = np.empty(0, dtype=np.uint64)
        self._known_rows = np.empty(0, dtype=np.int64)
        # rows past the words seen are spare; room for max_words from the start, as zeros the system gives
        # only when written to (growing by doubling copied ~0.5 ms a check over a check's first 200 files)
        self._sums = np.zeros((max_words, self.table.shape[1]), dtype=np.float32)
        self._counts = np.zeros(max_words, dtype=np.float32)

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def dimensions(self) -> int:
        return int(self.table.shape[1])

    def word_rows(self, keys: np.ndarray, spelled: Callable[[np.ndarray], list[str]]) -> np.ndarray:
        """Rows (into `word_sums`) of words by key (`word_keys`); words not seen yet are encoded, as spelled
        by `spelled(indices into keys)`."""
        keys = np.asarray(keys, dtype=np.uint64)
        rows = np.full(keys.shape[0], -1, dtype=np.int64)
        if self._known.shape[0]:
            slots = np.minimum(np.searchsorted(self._known, keys), self._known.shape[0] - 1)
            hit = self._known[slots] == keys
            rows[hit] = self._known_rows[slots[hit]]
        missing = np.flatnonzero(rows < 0)
        if missing.shape[0] and self._known.shape[0] + missing.shape[0] > self.max_words:
            self._known = np.empty(0, dtype=np.uint64)  # full: start again (the rows of this call are all made anew)
            self._known_rows = np.empty(0, dtype=np.int64)
            rows[:] = -1
            missing = np.arange(keys.shape[0])
        if missing.shape[0]:
            new_keys, at, back = np.unique(keys[missing], return_index=True, return_inverse=True)
            ids, lengths = self.encode(spelled(missing[at]))
            first = self._known.shape[0]
            need = first + new_keys.shape[0]
            if need > self._sums.shape[0]:  # one text with more distinct words than max_words: room doubles
                grown = max(need, 2 * self._sums.shape[0])
                self._sums = np.concatenate((self._sums, np.zeros((grown - self._sums.shape[0], self.dimensions),
                                                                  dtype=np.float32)))
                self._counts = np.concatenate((self._counts, np.zeros(grown - self._counts.shape[0],
                                                                      dtype=np.float32)))
            _subword_sums(self.table, ids, lengths, self._sums[first:need], self._counts[first:need])
            new_rows = np.arange(first, need, dtype=np.int64)
            rows[missing] = new_rows[back.reshape(-1)]
            place = np.searchsorted(self._known, new_keys)  # new_keys sorted, none known
            self._known = np.insert(self._known, place, new_keys)
            self._known_rows = np.insert(self._known_rows, place, new_rows)
        return rows

    @property
    def word_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """(vector sums, subword counts) of the words seen, by row."""
        seen = self._known.shape[0]
        return self._sums[:seen], self._counts[:seen]


def _subword_sums(table: np.ndarray, ids: np.ndarray, lengths: np.ndarray, sums: np.ndarray,
                  counts: np.ndarray) -> None:
    """Each word's subword vectors summed into `sums` (an id past the table's last row takes the last) and
    its subword count into `counts`; from a float16 table, in compiled code (`loops.subword_sums`: the same
    bits, without gathering the rows and widening them first: each float16 value widened as numpy widens it,
    by a table of all 65,536)."""
    if compiled is not None and table.dtype == np.float16:
        compiled.subword_sums(table, _widened(), np.ascontiguousarray(ids, dtype=np.int64),
                              np.ascontiguousarray(lengths, dtype=np.int64), sums, counts)
        return
    sums[:] = _row_sums(table[np.minimum(ids, table.shape[0] - 1)].astype(np.float32), lengths)
    counts[:] = lengths


@functools.cache
def _widened() -> np.ndarray:
    """The float32 value of each float16 bit pattern (256 KB, made once: 0.1 ms)."""
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)


def _row_sums(rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sum of each group of consecutive rows (`lengths` rows a group; zeros for an empty group), in the
    order `np.add.reduceat` adds them (the first row plus the others added in turn): every group's k-th row
    at once, a pass per row of the longest group. A word has a few subwords: for a check's ~100 new words
    2.3x faster than `reduceat` along the rows (0.09 against 0.21 ms), the same float32 sums to the bit."""
    out = np.zeros((lengths.shape[0], rows.shape[1]), dtype=rows.dtype)
    rest = np.zeros_like(out)
    starts = np.cumsum(lengths) - lengths
    for k in range(1, int(lengths.max(initial=0))):
        longer = np.flatnonzero(lengths > k)
        rest[longer] += rows[starts[longer] + k]
    nonempty = np.flatnonzero(lengths > 0)
    out[nonempty] = rows[starts[nonempty]]
    several = np.flatnonzero(lengths > 1)
    out[several] += rest[several]
    return out


def _plain(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each span [start, end) of `text` holds only ASCII letters and digits."""
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    letter = codes | 32  # A-Z to a-z; nothing else lands in a-z
    word = ((codes >= 48) & (codes <= 57)) | ((letter >= 97) & (letter <= 122))
    other = np.concatenate(([0], np.cumsum(~word)))
    return other[ends] == other[starts]


def word_keys(text: str, canonical: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              spelled: Callable[[np.ndarray], list[str]]) -> np.ndarray:
    """The keys of words (spans of `text`, with their `canonical` token hashes) in the model's word cache:
    a word's vector depends on its spelling, not on the canonical form the sketches hash (keyed by that, the
    spelling a process met first would make the vectors, and so the findings, depend on what the process had
    read before). A word in plain ASCII letters and digits is its canonical form, lower-cased: its canonical
    hash is its key; any other word is keyed by a hash of its spelling (BLAKE2b, 64 bits)."""
    keys = np.array(canonical, dtype=np.uint64)
    other = np.flatnonzero(~_plain(text, starts, ends))
    if other.shape[0]:
        keys[other] = np.fromiter((int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogatepass"),
                                                                  digest_size=8).digest(), "little")
                                   for word in spelled(other)), dtype=np.uint64, count=other.shape[0])
    return keys


def sentence_vectors(model: StaticModel, text: str, tokens: Tokens, token_start: np.ndarray,
                     token_end: np.ndarray) -> np.ndarray:
    """Unit vectors (float32, one row per span [token_start, token_end) of `tokens`) of the mean of the
    spans' subword vectors; zero rows for spans whose words have no subword."""
    return sentence_vectors_many(model, [text], [tokens], [token_start], [token_end])[0]


def sentence_vectors_many(model: StaticModel, texts: Sequence[str], tokens: Sequence[Tokens],
                          token_starts: Sequence[np.ndarray], token_ends: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`sentence_vectors` of each text, the same bits, from one pass of numpy calls for all but the sums a
    span (a scan embeds its new documents 256 at a time: ~45 calls a text otherwise, and a search of the
    word cache each)."""
    k = len(texts)
    if k == 0:
        return []
    n_tokens = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=k)
    token_offset = np.concatenate(([0], np.cumsum(n_tokens)))
    spans = np.fromiter((s.shape[0] for s in token_starts), dtype=np.int64, count=k)
    span_offset = np.concatenate(([0], np.cumsum(spans)))
    out = np.zeros((int(span_offset[-1]), model.dimensions), dtype=np.float32)
    if token_offset[-1] == 0 or span_offset[-1] == 0:
        return [out[a:b] for a, b in zip(span_offset[:-1].tolist(), span_offset[1:].tolist())]
    hashes = np.concatenate([t.hashes for t in tokens])
    text_of_token = np.repeat(np.arange(k, dtype=np.int64), n_tokens)
    # each distinct word of each text, as that text first spells it (a stable sort: the first comes first)
    order = np.lexsort((hashes, text_of_token))
    new = np.ones(order.shape[0], dtype=bool)
    new[1:] = (hashes[order][1:] != hashes[order][:-1]) | (text_of_token[order][1:] != text_of_token[order][:-1])
    first = order[new]
    inverse = np.empty(order.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    word_text = text_of_token[first]
    starts = np.concatenate([t.starts for t in tokens]).astype(np.int64)[first]
    ends = np.concatenate([t.ends for t in tokens]).astype(np.int64)[first]

    def spelled(indices: np.ndarray) -> list[str]:
        return [texts[t][a:b].lower() for t, a, b in zip(word_text[indices].tolist(), starts[indices].tolist(),
                                                         ends[indices].tolist())]

    # the texts one after the other, a character apart, so that one pass tells the plain words of all
    shift = np.concatenate(([0], np.cumsum([len(text) + 1 for text in texts])))
    joined = "\n".join(texts)
    keys = word_keys(joined, hashes[first], starts + shift[word_text], ends + shift[word_text], spelled)
    rows = model.word_rows(keys, spelled)[inverse]
    sums, counts = model.word_sums
    # subword counts summed along all the texts: exact (whole numbers in float64), so a span's count is a
    # difference of two, as in one text alone
    token_counts = np.concatenate(([0.0], np.cumsum(counts[rows], dtype=np.float64)))
    span_text = np.repeat(np.arange(k, dtype=np.int64), spans)
    lo_all = np.clip(np.concatenate(token_starts).astype(np.int64), 0, n_tokens[span_text])
    hi_all = np.clip(np.concatenate(token_ends).astype(np.int64), lo_all, n_tokens[span_text])
    lo_all, hi_all = lo_all + token_offset[:-1][span_text], hi_all + token_offset[:-1][span_text]
    index = np.flatnonzero(hi_all > lo_all)
    if compiled is not None:  # each span's mean made where its rows lie (`loops.span_means`: the same bits)
        n = token_counts[hi_all[index]] - token_counts[lo_all[index]]
        compiled.span_means(sums, np.ascontiguousarray(rows, dtype=np.int64), lo_all[index], hi_all[index], n, index,
                            model.dimensions, out)
    else:
        _sums_by_blocks(out, index, lo_all, hi_all, sums, rows, token_counts)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return [out[a:b] for a, b in zip(span_offset[:-1].tolist(), span_offset[1:].tolist())]


def _sums_by_blocks(out: np.ndarray, index: np.ndarray, lo_all: np.ndarray, hi_all: np.ndarray, sums: np.ndarray,
                    rows: np.ndarray, token_counts: np.ndarray) -> None:
    """`sentence_vectors_many`'s span means as numpy (`loops.span_means`'s reference), into `out`."""
    # the spans by start, and how far the spans up to each reach: a block of them gathers the rows from its
    # first start to its furthest end (sentences come in order, apart; other spans may overlap or nest)
    index = index[np.argsort(lo_all[index], kind="stable")]
    reach = np.maximum.accumulate(hi_all[index])
    block_first = 0
    while block_first < index.shape[0]:  # blocks of whole spans: a long text never gathers all its vectors
        lo = int(lo_all[index[block_first]])
        stop = int(np.searchsorted(reach, lo + _TOKENS_PER_BLOCK, side="right"))
        stop = max(stop, block_first + 1)
        block = index[block_first:stop]
        hi = int(reach[stop - 1])
        gathered = sums[rows[lo:hi]]
        totals = np.empty((block.shape[0], sums.shape[1]), dtype=np.float32)
        # a sum a span (any spans: overlapping, with gaps), over its rows: 3x faster than np.add.reduceat
        # along the rows, and no per-token work in Python
        for j, (first_row, stop_row) in enumerate(zip((lo_all[block] - lo).tolist(), (hi_all[block] - lo).tolist())):
            np.add.reduce(gathered[first_row:stop_row], axis=0, out=totals[j])
        n = token_counts[hi_all[block]] - token_counts[lo_all[block]]
        out[block] = np.divide(totals, n[:, None], out=np.zeros(totals.shape, np.float64), where=n[:, None] > 0)
        block_first = stop


QUANTIZED_FORMAT = 1  # int8 codes, row after row, and a little-endian float32 scale a row


@dataclass(frozen=True)
class QuantizedVectors:
    """Sentence vectors in the form they are stored in (256 + 4 bytes a sentence, not 1 KB): int8 codes and
    a scale a row. Every sentence vector an alignment uses goes through this form, computed or read back
    (`vectors`), so a finding never depends on whether a process embedded a text or read its vectors.
    Unit rows lose ~0.002 of cosine to it."""

    codes: np.ndarray  # int8, (sentences, dimensions)
    scales: np.ndarray  # float32, a row's largest magnitude over 127 (0 for a zero row)

    @classmethod
    def of(cls, vectors: np.ndarray) -> "QuantizedVectors":
        vectors = np.asarray(vectors, dtype=np.float32)
        scales = (np.abs(vectors).max(axis=1, initial=0.0) / np.float32(127)).astype(np.float32)
        scaled = np.divide(vectors, scales[:, None], out=np.zeros_like(vectors), where=scales[:, None] > 0)
        return cls(np.clip(np.rint(scaled), -127, 127).astype(np.int8), scales)

    @classmethod
    def from_bytes(cls, codes: bytes, scales: bytes) -> "QuantizedVectors":
        """The stored form read back; a `ValueError` when the two do not fit together."""
        scale_rows = np.frombuffer(scales, dtype="<f4").astype(np.float32)
        if scale_rows.shape[0] == 0 or len(codes) % scale_rows.shape[0]:
            raise ValueError("sentence vectors: codes and scales do not fit together")
        return cls(np.frombuffer(codes, dtype=np.int8).reshape(scale_rows.shape[0], -1), scale_rows)

    def to_bytes(self) -> tuple[bytes, bytes]:
        """(codes, scales) as stored."""
        return np.ascontiguousarray(self.codes).tobytes(), self.scales.astype("<f4").tobytes()

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])

    def vectors(self) -> np.ndarray:
        """float32 vectors, a row each."""
        return self.codes.astype(np.float32) * self.scales[:, None]


def vector_sum(vectors: np.ndarray) -> np.ndarray:
    """A text's sentence vectors summed (float64): what its pairs' centres are made of (`pair_centre`), so a
    text aligned with many others sums its vectors once."""
    return vectors.sum(axis=0, dtype=np.float64)


def pair_centre(query: np.ndarray, doc: np.ndarray, sums: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The centre of a pair: the mean of both texts' sentence vectors; `sums`: their `vector_sum`s, when
    the caller keeps them."""
    q_sum, d_sum = sums if sums is not None else (vector_sum(query), vector_sum(doc))
    return ((q_sum + d_sum) / (query.shape[0] + doc.shape[0])).astype(np.float32)


def squared_norms(vectors: np.ndarray) -> np.ndarray:
    """Each vector's squared length (float32): with `vector_sum`, what a text aligned with many others
    computes once for all its pairs (`similarity_blocks`; the same bits for a row whichever rows are taken)."""
    return (vectors * vectors).sum(axis=1)


@dataclass(frozen=True)
class SimilarityParts:
    """What the centred cosines of sentences `query_rows` x `doc_rows` are made of (`similarity_parts`): the
    rows' vectors, their dot products with the centre m, m.m, and their centred lengths; a block's cosines are
    then (q.d - q.m - d.m + m.m) / (|q - m| |d - m|), in that order of float32 operations."""

    query: np.ndarray
    doc: np.ndarray
    query_dots: np.ndarray
    doc_dots: np.ndarray
    centre_square: float
    query_norms: np.ndarray
    doc_norms: np.ndarray

    @property
    def block_rows(self) -> int:
        """Query rows a block: at most _PAIRS_PER_BLOCK pairs."""
        return max(1, _PAIRS_PER_BLOCK // self.doc.shape[0])

    def products(self, lo: int) -> np.ndarray:
        """The plain dot products of the block of query rows from `lo` on with every doc row."""
        return self.query[lo:lo + self.block_rows] @ self.doc.T

    def cosines(self, lo: int) -> np.ndarray:
        """The centred cosines of that block (float32)."""
        step = self.block_rows
        sims = self.products(lo)
        sims -= self.query_dots[lo:lo + step, None]
        sims -= self.doc_dots[None, :]
        sims += self.centre_square
        sims /= self.query_norms[lo:lo + step, None] * self.doc_norms[None, :]
        return sims


def similarity_parts(query: np.ndarray, doc: np.ndarray, query_rows: np.ndarray, doc_rows: np.ndarray,
                     centre: np.ndarray, squares: tuple[np.ndarray, np.ndarray] | None = None) -> SimilarityParts:
    """`SimilarityParts` of `query_rows` x `doc_rows` (both non-empty): the vectors are never copied centred.
    `squares`: both texts' `squared_norms`, when the caller keeps them."""
    mm = float(centre @ centre)
    q, d = query[query_rows], doc[doc_rows]
    qm, dm = q @ centre, d @ centre
    q_square, d_square = ((squares[0][query_rows], squares[1][doc_rows]) if squares is not None
                          else (squared_norms(q), squared_norms(d)))
    return SimilarityParts(q, d, qm, dm, mm, np.sqrt(np.maximum(q_square - 2 * qm + mm, 1e-12)),
                           np.sqrt(np.maximum(d_square - 2 * dm + mm, 1e-12)))


def similarity_blocks(query: np.ndarray, doc: np.ndarray, query_rows: np.ndarray, doc_rows: np.ndarray,
                      centre: np.ndarray, squares: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> Iterator[tuple[int, np.ndarray]]:
    """The centred cosines of the sentences `query_rows` x `doc_rows` (both non-empty), as (first row, block)
    of at most _PAIRS_PER_BLOCK pairs: a block's rows are query_rows[first:first + len(block)], its columns
    `doc_rows` (`similarity_parts`)."""
    parts = similarity_parts(query, doc, query_rows, doc_rows, centre, squares)
    for lo in range(0, parts.query.shape[0], parts.block_rows):
        yield lo, parts.cosines(lo)


def similar_sentences(query: np.ndarray, doc: np.ndarray, min_similarity: float,
                      query_rows: np.ndarray | None = None, doc_rows: np.ndarray | None = None,
                      centre: np.ndarray | None = None, squares: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query sentence, doc sentence, centred cosine) of every pair at `min_similarity` or more, in query then
    doc order.

    The centre is the mean of all sentence vectors of both texts (`pair_centre`, made here unless given);
    only the sentences in `query_rows` and `doc_rows` (default: all) are compared (`similarity_blocks`, with
    `squares`).
    """
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if query.shape[0] == 0 or doc.shape[0] == 0:
        return empty
    q_rows = np.arange(query.shape[0]) if query_rows is None else query_rows
    d_rows = np.arange(doc.shape[0]) if doc_rows is None else doc_rows
    if q_rows.shape[0] == 0 or d_rows.shape[0] == 0:
        return empty
    mean = pair_centre(query, doc) if centre is None else centre
    found_q, found_d, found_s = [], [], []
    for lo, sims in similarity_blocks(query, doc, q_rows, d_rows, mean, squares):
        qi, dj = np.nonzero(sims >= min_similarity)
        found_q.append(q_rows[qi + lo])
        found_d.append(d_rows[dj])
        found_s.append(sims[qi, dj].astype(np.float64))
    return (np.concatenate(found_q).astype(np.int64), np.concatenate(found_d).astype(np.int64),
            np.concatenate(found_s))


def centred_cosines(query: np.ndarray, doc: np.ndarray, q_index: np.ndarray, d_index: np.ndarray,
                    centre: np.ndarray | None = None) -> np.ndarray:
    """The centred cosine (as `similar_sentences`, with the same `centre`) of given sentence pairs
    (q_index[k], d_index[k])."""
    if q_index.shape[0] == 0:
        return np.zeros(0)
    mean = pair_centre(query, doc) if centre is None else centre
    q, d = query[q_index] - mean, doc[d_index] - mean
    norms = np.linalg.norm(q, axis=1) * np.linalg.norm(d, axis=1)
    dots = np.einsum("ij,ij->i", q, d)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0).astype(np.float64)


def best_centred_cosines(query: np.ndarray, partners: list[np.ndarray]) -> np.ndarray:
    """For each partner text, the highest centred cosine (as `similar_sentences`, each pair centred on its
    own joint mean) of its sentences with the query's: one matrix product for all partners, where
    `similar_sentences` is one a pair. Float32 sums in another order: equal to theirs within ~1e-5.
    -inf for a partner without sentences. The numpy form below is the compiled one's reference."""
    out = np.full(len(partners), -np.inf)
    if query.shape[0] == 0 or not partners:
        return out
    if compiled is not None and query.dtype == np.float32 and all(p.dtype == np.float32 for p in partners):
        # a partner at a time, every sum in one compiled call (`loops.best_centred`: ~10 numpy calls a block
        # of ~5 partners of ~20 sentences cost 0.4 ms, the products themselves 0.05)
        compiled.best_centred(np.ascontiguousarray(query), [np.ascontiguousarray(p) for p in partners],
                              query.shape[1], out)
        return out
    sizes = np.fromiter((p.shape[0] for p in partners), dtype=np.int64, count=len(partners))
    q_sum = vector_sum(query)
    q_square = squared_norms(query)
    first = 0
    while first < len(partners):  # blocks of whole partners: at most _PAIRS_PER_BLOCK similarities at once
        stop = first + 1
        while stop < len(partners) and (sizes[first:stop + 1].sum()) * query.shape[0] <= _PAIRS_PER_BLOCK:
            stop += 1
        block = [p for p in partners[first:stop] if p.shape[0]]
        owners = np.flatnonzero(sizes[first:stop]) + first
        if block:
            docs = np.concatenate(block)
            owner_of_row = np.repeat(np.arange(len(block)), sizes[owners])
            means = np.stack([pair_centre(query, p, (q_sum, vector_sum(p))) for p in block])
            mm = squared_norms(means)
            qm = query @ means.T  # (query sentences, partners)
            dm = np.einsum("ij,ij->i", docs, means[owner_of_row])
            d_norm = np.sqrt(np.maximum(squared_norms(docs) - 2 * dm + mm[owner_of_row], 1e-12))
            q_norm = np.sqrt(np.maximum(q_square[:, None] - 2 * qm + mm[None, :], 1e-12))
            best = np.full(docs.shape[0], -np.inf, dtype=np.float32)
            step = max(1, _PAIRS_PER_BLOCK // docs.shape[0])  # one partner longer than the block: query rows
            for lo in range(0, query.shape[0], step):
                rows = slice(lo, lo + step)
                sims = query[rows] @ docs.T - qm[rows, owner_of_row] - dm[None, :] + mm[owner_of_row][None, :]
                sims /= q_norm[rows][:, owner_of_row] * d_norm[None, :]
                np.maximum(best, sims.max(axis=0), out=best)
            starts = np.concatenate(([0], np.cumsum(sizes[owners])[:-1]))
            out[owners] = np.maximum.reduceat(best, starts)
        first = stop
    return out


MEANING_DIMENSIONS = 64  # what a document's vector keeps of the model's: 128 bytes stored a document


@functools.lru_cache(maxsize=4)
def meaning_projection(dimensions: int, out: int = MEANING_DIMENSIONS, seed: int = 21) -> np.ndarray:
    """A fixed random projection (Johnson-Lindenstrauss): cosines between projected vectors stay close to
    the originals', at a quarter of the size. The same matrix every call (it is part of the stored format)."""
    matrix = np.random.default_rng(seed).standard_normal((dimensions, out)).astype(np.float32)
    matrix.setflags(write=False)
    return matrix


def document_vector(sentence_vectors: np.ndarray) -> np.ndarray:
    """What a text is about, for finding the documents that may say the same (issue 21's candidates by
    meaning): the mean of its unit sentence vectors, projected (`meaning_projection`); float32."""
    projection = meaning_projection(sentence_vectors.shape[1])
    if sentence_vectors.shape[0] == 0:
        return np.zeros(projection.shape[1], dtype=np.float32)
    return (sentence_vectors.mean(axis=0, dtype=np.float64).astype(np.float32) @ projection).astype(np.float32)


_SCORED_ROWS = 16_384  # rows scored at once without the bounds: an 8 MB float64 block


@dataclass(frozen=True)
class MeaningSpace:
    """Document vectors made ready for nearest-neighbour queries by centred cosine (centred on their mean,
    as sentences are centred on their pair's: what all text shares says nothing). Zero vectors (documents
    without sentences) are left out. Nothing the size of the documents is made for a query: a document's
    centred cosine with a centred query q is (d.q - c.q) / |d - c|, and |d - c| comes from d.d, d.c and c.c,
    in float64 (a fresh process read 100,000 documents' space in 22-62 ms when it centred and scaled a copy
    of them; now ~6 ms, and ~6 more for the int8 `codes` the search bounds scores with)."""

    centre: np.ndarray  # float32
    documents: np.ndarray  # float32, a row for each nonzero document vector
    rows: np.ndarray  # int64: which document vector each row of `documents` is
    inverse_norms: np.ndarray  # float32: 1 / |d - c| a row

    @classmethod
    def of(cls, documents: np.ndarray) -> "MeaningSpace":
        documents = np.asarray(documents, dtype=np.float32)
        squares = np.einsum("ij,ij->i", documents, documents)
        rows = np.flatnonzero(squares > 0)
        if rows.shape[0] == 0:
            empty = np.empty(0, dtype=np.float32)
            return cls(np.zeros(documents.shape[1], dtype=np.float32), documents[:0], rows, empty)
        if rows.shape[0] < documents.shape[0]:
            documents, squares = documents[rows], squares[rows]
        centre = (documents.sum(axis=0) / rows.shape[0]).astype(np.float32)  # numpy sums pairwise: float32 is enough
        squared_norms = squares.astype(np.float64) - 2.0 * (documents @ centre) + float(centre @ centre)
        inverse = (1.0 / np.sqrt(np.maximum(squared_norms, 1e-24))).astype(np.float32)
        return cls(centre, documents, rows.astype(np.int64), inverse)

    @functools.cached_property
    def unit(self) -> np.ndarray:
        """The centred documents scaled to unit length, one row each (for all pairs at once: the scan)."""
        unit = self.documents - self.centre
        unit /= np.maximum(np.sqrt(np.einsum("ij,ij->i", unit, unit)), 1e-12)[:, None]
        return unit

    @functools.cached_property
    def codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The documents as int8 codes with a scale a row (d = scale x codes, within half a scale a
        component), and each row's sum of |codes| (`loops.quantize`, ~6 ms for 100,000 rows): bounds on
        every score from a quarter of the bytes (`loops.meaning_candidates`)."""
        assert compiled is not None  # only the compiled search reads them
        n, width = self.documents.shape
        codes, scales, sums = np.empty((n, width), dtype=np.int8), np.empty(n), np.empty(n)
        compiled.quantize(np.ascontiguousarray(self.documents), codes, scales, sums)
        return codes, scales, sums

    def prepare_search(self) -> None:
        """Make what `nearest` reads now (the codes): the thread that reads the vectors ahead of a check does,
        so that the check does not."""
        if compiled is not None and self.documents.shape[0]:
            self.codes  # noqa: B018 - a cached property, made here

    def nearest(self, query: np.ndarray, count: int) -> np.ndarray:
        """Document vectors (their rows in what `of` was given) nearest `query` by centred cosine, best first
        (ties: lower row); at most `count`. Scored in float64, a row at a time (`_scores`); with the compiled
        kernels, only the rows that bounds from the int8 `codes` cannot rule out (~30 of 100,000 for 15: the
        product over all float32 rows read 25.6 MB, which a check had pushed out of the cache, ~1.5 ms)."""
        n = self.documents.shape[0]
        count = min(count, n)
        if count <= 0:
            return np.empty(0, dtype=np.int64)
        centred = np.asarray(query, dtype=np.float64) - self.centre
        centre_dot = float(self.centre.astype(np.float64) @ centred)
        magnitudes = np.abs(centred)
        top = float(magnitudes.max())
        if compiled is not None and top > 0 and n > 4 * count:
            codes, scales, sums = self.codes
            query_scale = top / 32767.0
            rows = np.empty(n, dtype=np.int64)
            found = compiled.meaning_candidates(codes, scales, sums, self.inverse_norms,
                                                np.rint(centred / query_scale).astype(np.int16), query_scale,
                                                float(magnitudes.sum()), centre_dot, count, 1e-6, rows)
            rows = rows[:found]
        else:
            rows = np.arange(n, dtype=np.int64)
        scores = self._scores(rows, centred, centre_dot)
        best = np.lexsort((rows, -scores))[:count]
        return self.rows[rows[best]]

    def _scores(self, rows: np.ndarray, centred: np.ndarray, centre_dot: float) -> np.ndarray:
        """The centred cosines of `rows` with the centred query, in float64 a row at a time (einsum's loop,
        not BLAS, whose last rows of a matrix may round otherwise: a row's score is the same whichever rows
        are scored with it, so equal documents tie, and the lower row comes first)."""
        out = np.empty(rows.shape[0])
        for lo in range(0, rows.shape[0], _SCORED_ROWS):
            block = self.documents[rows[lo : lo + _SCORED_ROWS]].astype(np.float64)
            out[lo : lo + _SCORED_ROWS] = np.einsum("ij,j->i", block, centred)
        return (out - centre_dot) * self.inverse_norms[rows]
