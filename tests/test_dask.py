"""`scan --dask`: the same index and findings as the embedded scan (issue 9).

The evidence tree of tests/test_scan.py (generated texts and web pages, real PDFs
with a password-protected one, planted near-duplicate, copy and lifted passage, junk)
is scanned by the embedded process pool and by Dask workers, and every stored
row is compared by content (document ids may differ between executors, since
the pool numbers documents in completion order).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rawsql import raw

distributed = pytest.importorskip("distributed")

from clirun import run_cli  # noqa: E402
from test_scan import build_tree  # noqa: E402

from scanner.core.config import Params  # noqa: E402
from scanner.index import Index  # noqa: E402
from scanner.services.findings import find_similar, findings_json  # noqa: E402
from scanner.services.scan import run_scan  # noqa: E402
from scanner.sources.plugins import make_plugin_manager  # noqa: E402


def snapshot(db: Path) -> dict[str, Any]:
    """Every row that a scan writes, keyed by content instead of by row id."""
    with Index.open(db) as index:
        conn = raw(index)
        sha_of = dict(conn.execute("SELECT id, sha256 FROM documents"))
        documents = sorted(conn.execute(
            """SELECT sha256, size, status, extractor, mime, n_tokens, n_shingles, n_fps, text_length,
                      lexical_digest, shingle_digest, text, page_starts FROM documents"""))
        sketches = sorted((sha_of[d], blob) for d, blob in conn.execute("SELECT doc_id, blob FROM sketches"))
        postings = sorted((fp, sha_of[d]) for fp, d in conn.execute("SELECT fp, doc_id FROM postings"))
        files = sorted((p, size, mtime, sha, mime, status, reason, extractor, sha_of.get(d)) for
                       p, size, mtime, sha, mime, status, reason, extractor, d in conn.execute(
                           """SELECT path, size, mtime_ns, sha256, mime, status, reason, extractor, doc_id
                              FROM files"""))
        findings = findings_json(find_similar(index, index.params))
    return {"documents": documents, "sketches": sketches, "postings": postings, "files": files,
            "findings": findings}


def scan(tree: Path, db: Path, **options: Any) -> Any:
    params = Params()
    with Index.open(db, readonly=False, params=params) as index:
        return run_scan([str(tree)], index, make_plugin_manager(), params, **options)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dask") / "evidence"
    build_tree(root)
    return root


@pytest.fixture(scope="module")
def embedded(tree: Path) -> tuple[Any, dict[str, Any]]:
    db = tree.parent / "embedded.db"
    result = scan(tree, db, jobs=2)
    return result, snapshot(db)


class TestThreadsCluster:
    """LocalCluster(processes=False): fast enough for CI, same task code as a real cluster."""

    def test_identical_index_and_findings(self, tree: Path, embedded: tuple[Any, dict[str, Any]]) -> None:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            result = scan(tree, tree.parent / "dask.db", dask=client)
        expected_result, expected = embedded
        got = snapshot(tree.parent / "dask.db")
        for table in ("documents", "sketches", "postings", "files"):
            assert got[table] == expected[table], table
        assert got["findings"] == expected["findings"]
        assert expected["findings"]["clusters"], "the planted near-duplicate and copy must cluster"
        for name in ("files_seen", "files_indexed", "files_unchanged", "files_linked", "errors", "skipped",
                     "too_short"):
            assert getattr(result, name) == getattr(expected_result, name), name

    def test_small_batches_keep_crawl_order(self, tree: Path, embedded: tuple[Any, dict[str, Any]]) -> None:
        """Batches of 2 files, 2 in flight: results come back out of order and are written in order."""
        from scanner.services.scan import dask as executor

        db = tree.parent / "dask-small.db"
        original = executor.DEFAULT_BATCH_FILES
        executor.DEFAULT_BATCH_FILES = 2
        try:
            with distributed.LocalCluster(n_workers=1, threads_per_worker=3, processes=False,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                scan(tree, db, dask=client)
        finally:
            executor.DEFAULT_BATCH_FILES = original
        assert snapshot(db) == embedded[1]

    def test_rescan_is_incremental(self, tree: Path, embedded: tuple[Any, dict[str, Any]]) -> None:
        """A dask rescan of an index another scan made (a copy of the embedded one: no test order assumed)."""
        db = tree.parent / "rescanned.db"
        shutil.copyfile(tree.parent / "embedded.db", db)
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            result = scan(tree, db, dask=client)
        assert result.files_unchanged == result.files_seen


def test_all_pairs_on_the_cluster_equal_the_embedded_pairs(embedded: tuple[Any, dict[str, Any]],
                                                          tree: Path) -> None:
    """Broder's divide-compute-merge as a Dask job: the same filtered <id, id, count> as in one process, with
    the ranges cut into several tasks and several merge buckets; and the same findings."""
    import numpy as np

    from scanner.services.scan.dask import pair_count_arrays_dask

    params = Params()
    share = 0.5 * min(params.resemblance_threshold, params.min_containment)
    with Index.open(tree.parent / "embedded.db") as index:
        expected = set()
        n_fps = dict(raw(index).execute("SELECT id, n_fps FROM documents").fetchall())
        for pa, pb, shared in index.pair_count_arrays(params.common_shingle_share, slice_rows=500):
            for a, b, n in zip(pa.tolist(), pb.tolist(), shared.tolist()):
                if n >= share * min(n_fps[a], n_fps[b]) > 0:
                    expected.add((a, b, n))
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            got = set()
            for pa, pb, shared in pair_count_arrays_dask(index, params.common_shingle_share, client,
                                                         min_shared_share=share, slice_rows=500,
                                                         postings_per_task=2_000, buckets=5):
                assert isinstance(pa, np.ndarray)
                got |= set(zip(pa.tolist(), pb.tolist(), shared.tolist()))
            assert findings_json(find_similar(index, params, dask=client)) == embedded[1]["findings"]
    assert len(expected) >= 5 and got == expected


def test_cli_dask_local(tree: Path, embedded: tuple[Any, dict[str, Any]]) -> None:
    """`scanner scan --dask local`: a LocalCluster of worker processes, same JSON findings."""
    work = tree.parent
    proc = run_cli("scan", str(tree), "--index", str(work / "cli.db"), "--json", "--dask", "local", "--jobs", "1",
               cwd=work)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    expected = {key: embedded[1]["findings"][key] for key in ("clusters", "containments")}
    assert {"clusters": document["clusters"], "containments": document["containments"]} == expected
    assert snapshot(work / "cli.db")["postings"] == embedded[1]["postings"]


def test_findings_with_base_text_on_the_cluster_equal_the_embedded_ones(embedded: tuple[Any, dict[str, Any]],
                                                                        tree: Path) -> None:
    """Base text is left out of the all-pairs job on the cluster as in one process (the postings read by
    the tasks, the documents' counts the merge filters with)."""
    db = tree.parent / "with-base.db"
    shutil.copyfile(tree.parent / "embedded.db", db)
    clustered = embedded[1]["findings"]["clusters"][0]["members"][0]["path"]
    with Index.open(db, readonly=False) as index:
        doc_id = index.doc_ids_at(clustered)[0]
        index.base.add("the first cluster's first member", index.text(doc_id) or "")
        with_base = findings_json(find_similar(index, index.params))
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            assert findings_json(find_similar(index, index.params, dask=client)) == with_base
    assert with_base["clusters"] != embedded[1]["findings"]["clusters"] and with_base["base"]
