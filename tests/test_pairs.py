"""Broder's <id,id,count> in numpy (scanner/index/pairs.py) equals the SQL form, in any slicing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rawsql import raw

from scanner.core.config import Params
from scanner.core.model import FileRecord
from scanner.index import Index
from scanner.index.store import NewDocument


def _document(i: int, fps: np.ndarray) -> NewDocument:
    return NewDocument(sha256=f"{i:064x}", size=1, mime="text/plain", status="ok", extractor="text",
                       sketch_blob=b"", n_tokens=100, n_shingles=100, text_length=1, lexical_digest=f"{i:064x}",
                       shingle_digest=f"{i:064x}", fingerprints=fps)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 documents over a 400-fingerprint vocabulary: frequencies from 1 to ~40, some above the 5 % limit."""
    path = tmp_path_factory.mktemp("pairs") / "idx.db"
    rng = np.random.default_rng(3)
    vocabulary = rng.integers(0, 2**64 - 1, size=400, dtype=np.uint64)
    weights = 1.0 / np.arange(1, 401)
    with Index.open(path, readonly=False, params=Params()) as index:
        for i in range(60):
            fps = rng.choice(vocabulary, size=40, replace=False, p=weights / weights.sum())
            doc_id = index.add_document(_document(i, fps))
            index.put_file(FileRecord(f"d/{i}.txt", 1, 0, f"{i:064x}", "text/plain"), readers=1, status="ok",
                           doc_id=doc_id)
        raw(index).execute("UPDATE files SET vanished = 1 WHERE path IN ('d/7.txt', 'd/8.txt')")
    return path


@pytest.mark.parametrize("slice_rows, buckets", [(1_000_000, 1), (50, 3), (7, 16)])
def test_same_pairs_as_sql(db: Path, slice_rows: int, buckets: int) -> None:
    with Index.open(db, readonly=False) as index:
        gone = {r[0] for r in raw(index).execute("SELECT doc_id FROM files WHERE vanished = 1")}
        expected = [(p.a, p.b, p.shared) for p in index.pair_counts(0.05)]
        got, common = [], []
        for a, b, shared in index.pair_count_arrays(0.05, slice_rows=slice_rows, buckets=buckets,
                                                    common_found=common):
            got.extend(zip(a.tolist(), b.tolist(), shared.tolist()))
        very_common = index.common_fingerprints(0.05)
    assert expected and got == expected
    # the very common fingerprints, read with the pairs: those a reading of their own finds
    assert very_common.shape[0] > 0 and np.array_equal(np.sort(np.concatenate(common).view(np.uint64)), very_common)
    assert len(gone) == 2 and not gone & {d for pair in got for d in pair[:2]}, "vanished documents do not pair"
