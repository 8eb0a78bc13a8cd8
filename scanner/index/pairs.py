"""Broder's divide-compute-merge for <id, id, count>, in numpy with bounded memory.

The SQL form (`Index.pair_counts`) makes SQLite materialise and sort every
<id, id> row of the self-join and hands them to Python one by one; past ~10^5
documents that is minutes and gigabytes of temp B-tree. Here:

1. divide: the postings are read in fingerprint ranges (the primary key
   order, so each range is one sequential B-tree walk of about `slice_rows`
   rows);
2. compute: in each range, the document frequency of every fingerprint is
   counted over *all* postings, fingerprints held by 2..limit documents keep
   their live rows, and every group of g documents emits its g(g-1)/2 pairs as
   one int64 key `a << 32 | b` (a < b, vectorised per group size); the range's
   keys are reduced, 4M at a time, to (key, count) and appended to one of
   `buckets` spill files chosen by `a` (documents' id range);
3. merge: each bucket file is read back alone, its keys sorted and counts
   summed: the <id, id, count> of every pair whose first document falls in the
   bucket. Memory is one range plus one step, or one bucket, at a time.

The pairs and counts are exactly those of the SQL form (same limit rule: a
fingerprint's frequency counts every posting, then only live documents pair),
which knows no base text: given one, its fingerprints are left out first.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from scanner.engine.arrays import distinct, in_sorted, run_lengths_of_sorted
from scanner.index.failures import spare_descriptors

_PAIRS_PER_STEP = 4_000_000  # pair keys generated per numpy step (32 MB)
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _ranges(n: int) -> list[tuple[int, int]]:
    """`n` half-open ranges covering the signed int64 space (fingerprints are uniform hashes)."""
    edges = [_I64_MIN + (2**64 * k) // n for k in range(n)] + [_I64_MAX]
    return list(zip(edges[:-1], edges[1:]))


def read_range(conn: sqlite3.Connection, lo: int, hi: int, last: bool) -> tuple[np.ndarray, np.ndarray]:
    """The postings (fp, doc_id) of one fingerprint range, sorted. Read as two lists of numbers SQLite joins
    into text and numpy parses: 1.7x faster than a Python tuple a posting (every posting is read here)."""
    op = "<=" if last else "<"
    fps, docs = conn.execute(f"SELECT group_concat(fp, ' '), group_concat(doc_id, ' ') FROM postings "
                             f"WHERE fp >= ? AND fp {op} ?", (lo, hi)).fetchone()
    if fps is None:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    fp_arr, doc_arr = np.fromstring(fps, dtype=np.int64, sep=" "), np.fromstring(docs, dtype=np.int64, sep=" ")
    order = np.lexsort((doc_arr, fp_arr))  # the buffer and each segment are sorted, their union is not
    return fp_arr[order], doc_arr[order]


def _group_pairs(docs: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> Iterator[np.ndarray]:
    """Keys a << 32 | b of every pair inside each group (docs sorted ascending within a group)."""
    for g in np.unique(sizes).tolist():
        first = starts[sizes == g]
        i, j = np.triu_indices(g, 1)
        per_group = i.shape[0]
        rows = max(1, _PAIRS_PER_STEP // per_group)
        for s in range(0, first.shape[0], rows):
            block = docs[first[s:s + rows, None] + np.arange(g)]
            if per_group <= _PAIRS_PER_STEP:
                yield ((block[:, i] << 32) | block[:, j]).ravel()
            else:  # one huge group: walk its pair list in steps
                for t in range(0, per_group, _PAIRS_PER_STEP):
                    ii, jj = i[t:t + _PAIRS_PER_STEP], j[t:t + _PAIRS_PER_STEP]
                    yield ((block[:, ii] << 32) | block[:, jj]).ravel()


def reduce_pair_keys(keys: np.ndarray, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys and their summed counts (Broder's *merge* step)."""
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    counts = np.ones(keys.shape[0], dtype=np.int64) if counts is None else counts[order]
    if keys.shape[0] == 0:
        return keys, counts
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return keys[starts], np.add.reduceat(counts, starts)


def bucket_edges(keys: np.ndarray, n_buckets: int, top: int) -> np.ndarray:
    """Bucket k of sorted pair keys is keys[edges[k]:edges[k + 1]]: the pairs whose first id a falls in the
    k-th of `n_buckets` equal ranges of [0, top)."""
    return np.searchsorted((keys >> 32) * n_buckets // max(1, top), np.arange(n_buckets + 1))


def _spill(files: list, parts: list[np.ndarray], n_buckets: int, top: int) -> None:
    """Reduce one step's keys to (key, count) and append them to their buckets' files."""
    keys, counts = reduce_pair_keys(np.concatenate(parts))
    edges = bucket_edges(keys, n_buckets, top)
    for k in range(n_buckets):
        a, b = edges[k], edges[k + 1]
        if b > a:
            np.stack([keys[a:b], counts[a:b]], axis=1).tofile(files[k])


def live_mask(live: np.ndarray) -> np.ndarray:
    """is_live[doc_id] for every id up to the largest live one."""
    is_live = np.zeros(int(live[-1]) + 1 if live.shape[0] else 0, dtype=bool)
    is_live[live] = True
    return is_live


def fingerprint_ranges(total_postings: int, slice_rows: int) -> list[tuple[int, int, bool]]:
    """(lo, hi, last) ranges of about `slice_rows` postings each: Broder's *divide* step."""
    ranges = _ranges(max(1, total_postings // slice_rows + 1))
    return [(lo, hi, n == len(ranges) - 1) for n, (lo, hi) in enumerate(ranges)]


def _live_rows(docs: np.ndarray, is_live: np.ndarray) -> np.ndarray:
    inside = docs < is_live.shape[0]
    live = inside.copy()
    live[inside] = is_live[docs[inside]]
    return live


def count_common_held(docs: np.ndarray, row_df: np.ndarray, live_row: np.ndarray, limit: int | None,
                      held: np.ndarray) -> None:
    """Add to `held[doc]` the live document's postings whose fingerprint more than `limit` documents hold:
    the very common text no pair is made of, which each document's findings must then show, not omit."""
    if limit is None or docs.shape[0] == 0:
        return
    common = docs[live_row & (row_df > limit)]
    if common.shape[0]:
        held += np.bincount(common, minlength=held.shape[0])[:held.shape[0]]


def without_base(fps: np.ndarray, docs: np.ndarray, base: np.ndarray | None,
                 base_held: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A range's postings without those of base text (`base`: sorted int64, as postings store fingerprints),
    whose holders they never pair; `base_held`: gets, a document, how many it had."""
    if base is None or base.shape[0] == 0 or fps.shape[0] == 0:
        return fps, docs
    in_base = in_sorted(fps, base)
    if base_held is not None and in_base.any():
        held = docs[in_base]
        held = held[held < base_held.shape[0]]
        base_held += np.bincount(held, minlength=base_held.shape[0])[:base_held.shape[0]]
    return fps[~in_base], docs[~in_base]


def range_pair_keys(fps: np.ndarray, docs: np.ndarray, is_live: np.ndarray,
                    limit: int | None, common_held: np.ndarray | None = None,
                    common_found: list[np.ndarray] | None = None, base: np.ndarray | None = None,
                    base_held: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """Pair keys a << 32 | b, in parts, from one fingerprint range's postings (sorted by fp, doc_id).

    Fingerprints held by 2..limit documents (over *all* postings, as the SQL
    form's window) take part, then only their live documents pair. `common_held`: also counts, a
    document, its postings too common to pair (`count_common_held`); `common_found`: also gets the range's
    fingerprints too common to pair (`common_fingerprints`), sorted. `base`, `base_held`: base text's
    fingerprints take no part, not even in the frequencies (`without_base`).
    """
    fps, docs = without_base(fps, docs, base, base_held)
    if fps.shape[0] < 2:
        return
    max_df = limit if limit is not None else 2**62
    row_df = run_lengths_of_sorted(fps)  # each posting's fingerprint's document frequency
    if common_found is not None:
        common_found.append(_too_common(fps, row_df, max_df))
    live_row = _live_rows(docs, is_live)
    if common_held is not None:
        count_common_held(docs, row_df, live_row, limit, common_held)
    keep = (row_df >= 2) & (row_df <= max_df) & live_row
    fps, docs = fps[keep], docs[keep]
    if fps.shape[0] < 2:
        return
    starts = np.flatnonzero(np.concatenate(([True], fps[1:] != fps[:-1])))
    sizes = np.diff(np.append(starts, fps.shape[0]))
    multi = sizes >= 2
    yield from _group_pairs(docs, starts[multi], sizes[multi])


def pair_count_arrays(conn: sqlite3.Connection, live: np.ndarray, limit: int | None, total_postings: int, *,
                      slice_rows: int = 250_000, buckets: int | None = None,
                      spill_dir: str | Path | None = None, common_held: np.ndarray | None = None,
                      common_found: list[np.ndarray] | None = None, base: np.ndarray | None = None,
                      base_held: np.ndarray | None = None
                      ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(a, b, shared) arrays, one bucket at a time, for every pair of live documents sharing a fingerprint.

    Args:
        live: sorted ids of the documents that may pair (live files, status ok).
        limit: largest document frequency a fingerprint may have (None: no limit).
        total_postings: postings in the index (sets the number of fingerprint ranges).
        slice_rows: postings read per fingerprint range.
        buckets: spill files, one per range of first ids (default: live documents / 400, 16..1024).
        common_held: an array by document id, filled, once every bucket is read, with each live
            document's postings too common to pair (`count_common_held`), from the same reading.
        common_found: a list that gets, once every bucket is read, the fingerprints too common to pair, a
            sorted array a range of two postings or more (`common_fingerprints`, from the same reading).
        base: sorted int64 fingerprints of base text, which pair no one (`without_base`); `base_held`: an
            array by document id that gets each document's postings of base text.
    """
    live = np.asarray(live, dtype=np.int64)
    if live.shape[0] < 2:
        return
    is_live = live_mask(live)
    ranges = fingerprint_ranges(total_postings, slice_rows)
    n_buckets = buckets or max(16, min(1024, live.shape[0] // 400))  # ~1 MB a bucket per 10^5 pairs
    if buckets is None:  # one open spill file a bucket: leave half of the spare descriptors to the rest
        n_buckets = max(1, min(n_buckets, spare_descriptors() // 2))
    top = is_live.shape[0]
    with tempfile.TemporaryDirectory(prefix="scanner-pairs-", dir=spill_dir) as tmp:
        files = [open(Path(tmp) / f"{k:04d}.bin", "wb") for k in range(n_buckets)]
        try:
            for lo, hi, last in ranges:
                parts: list[np.ndarray] = []
                held = 0
                for part in range_pair_keys(*read_range(conn, lo, hi, last), is_live, limit, common_held,
                                            common_found, base, base_held):
                    parts.append(part)
                    held += part.shape[0]
                    if held >= _PAIRS_PER_STEP:  # spill in steps: memory stays one step, not one range
                        _spill(files, parts, n_buckets, top)
                        parts, held = [], 0
                if parts:
                    _spill(files, parts, n_buckets, top)
        finally:
            for handle in files:
                handle.close()
        for k in range(n_buckets):
            data = np.fromfile(Path(tmp) / f"{k:04d}.bin", dtype=np.int64).reshape(-1, 2)
            if data.shape[0] == 0:
                continue
            keys, counts = reduce_pair_keys(data[:, 0], data[:, 1])
            del data
            yield keys >> 32, keys & 0xFFFFFFFF, counts


def common_fingerprints(conn: sqlite3.Connection, limit: int, total_postings: int,
                        slice_rows: int = 250_000, base: np.ndarray | None = None) -> np.ndarray:
    """Sorted fingerprints (as stored, int64) held by more than `limit` documents: Broder's very common
    shingles, read range by range like the pair counts (base text's apart: `without_base`)."""
    found = []
    for lo, hi, last in fingerprint_ranges(total_postings, slice_rows):
        fps, _ = without_base(*read_range(conn, lo, hi, last), base)
        found.append(_too_common(fps, run_lengths_of_sorted(fps), limit))
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _too_common(fps: np.ndarray, row_df: np.ndarray, limit: int) -> np.ndarray:
    """The distinct fingerprints of a range (sorted, each posting's document frequency in `row_df`) held by
    more than `limit` documents."""
    return distinct(fps[row_df > limit])


def common_held_counts(conn: sqlite3.Connection, live: np.ndarray, limit: int | None, total_postings: int,
                       size: int, slice_rows: int = 250_000, base: np.ndarray | None = None,
                       base_held: np.ndarray | None = None) -> np.ndarray:
    """`count_common_held` over the whole index, by document id (`size` ids): for a caller whose pairs are
    counted elsewhere (on a Dask cluster). `base`, `base_held`: as `range_pair_keys`."""
    held = np.zeros(size, dtype=np.int64)
    if (limit is None and base_held is None) or np.asarray(live).shape[0] == 0:
        return held
    is_live = live_mask(np.asarray(live, dtype=np.int64))
    for lo, hi, last in fingerprint_ranges(total_postings, slice_rows):
        fps, docs = without_base(*read_range(conn, lo, hi, last), base, base_held)
        count_common_held(docs, run_lengths_of_sorted(fps), _live_rows(docs, is_live), limit, held)
    return held


def bucketed_pair_counts(index_path: str, ranges: list[tuple[int, int, bool]], live: np.ndarray,
                         limit: int | None, n_buckets: int, base: np.ndarray | None = None
                         ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pair keys of a group of fingerprint ranges of the index file, reduced, cut by bucket of the first id.

    Opens its own read-only connection, so a Dask worker on the same machine (or one that sees a
    read-only copy) computes its share of the all-pairs step without the writer's connection.
    """
    from urllib.parse import quote

    is_live = live_mask(live)
    conn = sqlite3.connect(f"file:{quote(index_path)}?mode=ro", uri=True)
    try:
        parts = [part for lo, hi, last in ranges
                 for part in range_pair_keys(*read_range(conn, lo, hi, last), is_live, limit, base=base)]
    finally:
        conn.close()
    empty = np.empty(0, dtype=np.int64)
    keys, counts = reduce_pair_keys(np.concatenate(parts)) if parts else (empty, empty)
    edges = bucket_edges(keys, n_buckets, is_live.shape[0])
    return [(keys[edges[k]:edges[k + 1]], counts[edges[k]:edges[k + 1]]) for k in range(n_buckets)]
