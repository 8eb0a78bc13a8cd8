"""Extraction and sketching on a Dask cluster, the index written by this process alone.

`scanner scan PATH --dask local` starts a `LocalCluster` (one single-threaded
worker process per `--jobs`); `--dask tcp://scheduler:8786` uses a running
cluster. Either way:

* the crawl and the incremental check (size + mtime) stay here, as in the
  embedded scan; files that need work are cut into batches of `batch_files`
  paths, and each batch is one `client.submit` task that hashes, extracts,
  canonicalizes, sketches and winnows its files on a worker
  (`scanner.services.ingest.process_files`, the same code as the process pool);
* at most `inflight` batches are outstanding (submitted and not yet written),
  so memory here is bounded whatever the corpus size;
* results are written in crawl order (a small reorder buffer over the
  in-flight window), through the scan's own `Writer`: the first file of a
  SHA-256 in crawl order gets the document and later copies are linked to it,
  exactly as in the embedded scan, so documents, sketches, postings and
  findings are identical (tests/test_dask.py).

Differences from the embedded pool, by design: a copy of a file is extracted
again on a worker when its first copy is still in flight (the index is the
same; only work is repeated), and the per-file wall-clock budget is not
enforced here; a worker that dies is restarted by its nanny and Dask retries
the batch (`allowed_failures`), after which its files are reported as errors.
Workers need the same scanner version and parameters (both are checked: the
task carries the `Params` and the worker's `scanner.__version__` must match)
and must see the files under the same paths.
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.core.config import Params
from scanner.core.errors import ScannerError
from scanner.core.model import TextStatus
from scanner.engine.cluster import worth_scoring
from scanner.services.ingest import Failure, FileResult, process_files, read_or_reason
from scanner.services.scan.dispatch import Dispatch, Task
from scanner.sources.extract.evidence import Evidence
from scanner.sources.limits import ExtractLimits

DEFAULT_BATCH_FILES = 32


def _require_dask() -> Any:
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ScannerError("--dask needs dask.distributed: pip install 'dask[distributed]'") from exc
    return distributed


@functools.lru_cache(maxsize=4)
def _worker_pm(pm_factory: Callable[[], Any]) -> Any:
    """One plugin manager per worker process (and factory), built on first use."""
    return pm_factory()


def process_batch(paths: list[str], params: Params, store_text: bool, limits: ExtractLimits | None,
                  pm_factory: Callable[[], Any], version: str) -> list[tuple[str, FileResult]]:
    """Runs on a worker: for each path, (sha256 or "", its outcome or failure)."""
    if version != __version__:
        raise ScannerError(f"worker runs scanner {__version__}, the client {version}: install the same version")
    pm = _worker_pm(pm_factory)
    out: list[tuple[str, FileResult]] = []
    readable: list[tuple[int, str, Evidence]] = []  # (slot in out, path, evidence)
    for path in paths:
        evidence, unreadable = read_or_reason(path, limits)
        if evidence is None:
            out.append(("", Failure(TextStatus.ERROR.value, unreadable)))
            continue
        readable.append((len(out), path, evidence))
        out.append((evidence.sha256, Failure(TextStatus.TOO_LARGE.value, "out of memory on the Dask worker")))
    results, _ = process_files([(path, evidence) for _, path, evidence in readable], pm, params, store_text,
                               limits)
    for (slot, _, _), result in zip(readable, results):
        if result is not None:  # None: not reached after running out of memory (the default above)
            out[slot] = (out[slot][0], result)
    return out


def connect(address: Any, jobs: int | None = None) -> tuple[Any, Callable[[], None]]:
    """(client, close): `address` is "local", a scheduler address, or an existing `distributed.Client`."""
    distributed = _require_dask()
    if isinstance(address, distributed.Client):
        return address, lambda: None
    if address == "local":
        cluster = distributed.LocalCluster(n_workers=max(1, jobs or os.cpu_count() or 1), threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    client = distributed.Client(address)
    return client, client.close


def run_dask(dispatch: Dispatch, params: Params, store_text: bool, limits: ExtractLimits | None, *,
             address: Any, jobs: int | None, pm_factory: Callable[[], Any], batch_files: int = DEFAULT_BATCH_FILES,
             inflight: int | None = None) -> None:
    """The Dask executor of `run_scan`: same tasks in, same outcomes to the writer, in crawl order."""
    distributed = _require_dask()
    next_task, writer, progress = dispatch.next_task, dispatch.writer, dispatch.progress
    client, close = connect(address, jobs)
    try:
        threads = sum(client.nthreads().values()) or 1
        window = inflight or 2 * threads
        pending: dict[Any, int] = {}  # future -> batch number
        batches: dict[int, list[Task]] = {}  # batch number -> its tasks
        finished: dict[int, Any] = {}  # batch number -> results (or an exception), waiting for their turn
        queue = distributed.as_completed()
        next_submit = next_write = 0
        exhausted = False

        def submit() -> bool:
            nonlocal next_submit, exhausted
            tasks: list[Task] = []
            while len(tasks) < batch_files and not exhausted:
                task = next_task()
                if task is None:
                    exhausted = True
                else:
                    tasks.append(task)
            if not tasks:
                return False
            future = client.submit(process_batch, [t.path for t in tasks], params, store_text, limits,
                                   pm_factory, __version__, pure=False)
            pending[future] = next_submit
            batches[next_submit] = tasks
            next_submit += 1
            queue.add(future)
            return True

        def write(tasks: list[Task], results: list[tuple[str, FileResult]] | BaseException) -> None:
            for i, task in enumerate(tasks):
                if isinstance(results, BaseException):
                    reason = f"Dask task failed: {type(results).__name__}: {results}"
                    writer.add(task.failed(TextStatus.ERROR.value, reason[:300]))
                    progress(task.path)
                    continue
                sha, result = results[i]
                task.sha256 = sha
                if sha:
                    writer.counts.bytes_read += task.size
                if isinstance(result, Failure):
                    writer.add(task.failed(result.status, result.reason))
                    progress(task.path)
                elif not dispatch.link_copy(task, sha):  # a copy of a document written meanwhile is linked
                    writer.add(replace(result, record=replace(result.record, path=task.display)))
                    progress(task.path)

        while next_submit - next_write < window and submit():
            pass
        while pending:
            future = next(queue)
            number = pending.pop(future)
            try:
                finished[number] = future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: its files become errors
                finished[number] = exc
            future.release()
            while next_write in finished:
                write(batches.pop(next_write), finished.pop(next_write))
                next_write += 1
            while next_submit - next_write < window and submit():
                pass
            progress()
    finally:
        close()


# --------------------------------------------------------------------------
# all-pairs: Broder's divide-compute-merge as a Dask job (issue 9)


def _range_group_task(index_path: str, ranges: list[tuple[int, int, bool]], live: Any, limit: int | None,
                      n_buckets: int, base: Any) -> list[tuple[Any, Any]]:
    """Divide + compute on a worker: pair keys of a group of fingerprint ranges, reduced, cut by bucket of a."""
    from scanner.index.pairs import bucketed_pair_counts

    return bucketed_pair_counts(index_path, ranges, live, limit, n_buckets, base)


def _merge_bucket_task(pieces: list[tuple[Any, Any]], n_fps: Any, min_shared_share: float) -> tuple[Any, Any, Any]:
    """Merge on a worker: one bucket's (a, b, shared), only the pairs worth scoring (`worth_scoring` with the
    share already computed from the thresholds: `cluster.min_shared_share`)."""
    import numpy as np

    from scanner.index.pairs import reduce_pair_keys

    keys, counts = reduce_pair_keys(np.concatenate([k for k, _ in pieces]), np.concatenate([c for _, c in pieces]))
    a, b = keys >> 32, keys & 0xFFFFFFFF
    keep = worth_scoring(counts, n_fps[a], n_fps[b], min_shared_share, min_shared_share, slack=1.0)
    return a[keep], b[keep], counts[keep]


def pair_count_arrays_dask(index: Any, common_share: float, client: Any, *, min_shared_share: float,
                           slice_rows: int = 250_000, postings_per_task: int = 4_000_000,
                           buckets: int = 32, base: Any = None, n_fps: Any = None) -> Any:
    """(a, b, shared) arrays, bucket by bucket, of the pairs `Index.pair_count_arrays` gives that share at
    least `min_shared_share` of the smaller document's fingerprints, computed on the cluster.

    Each task reads its fingerprint ranges of the index straight from SQLite (workers must see the index
    file: a LocalCluster, or a shared read-only copy), so no posting crosses the network; only reduced
    (key, count) pieces move, one bucket of first ids per merge task (a manual shuffle), and only the
    filtered pairs come back. The result equals the embedded computation filtered the same way
    (tests/test_dask.py). `base`: base text's fingerprints, as `Index.pair_count_arrays` takes them; `n_fps`:
    the documents' fingerprint counts the filter weighs shares with (default: the index's).
    """

    from scanner.index.pairs import fingerprint_ranges

    distributed = _require_dask()
    live, limit = index.pairing_inputs(common_share)
    if live.shape[0] < 2:
        return
    total = index.total_postings()
    ranges = fingerprint_ranges(total, slice_rows)
    n_tasks = max(1, min(len(ranges), total // postings_per_task + 1))
    groups = [ranges[k::n_tasks] for k in range(n_tasks)]
    n_fps = index.fingerprint_counts() if n_fps is None else n_fps
    live_f, n_fps_f, base_f = client.scatter([live, n_fps, base], hash=False)  # fetched by each worker once
    path = str(Path(index.path).resolve())
    divided = [client.submit(_range_group_task, path, group, live_f, limit, buckets, base_f, pure=False)
               for group in groups]
    merged = [client.submit(_merge_bucket_task, [client.submit(operator.getitem, d, k, pure=False) for d in divided],
                            n_fps_f, min_shared_share, pure=False) for k in range(buckets)]
    try:
        for future in distributed.as_completed(merged):
            yield future.result()
    finally:
        client.cancel(merged + divided)
