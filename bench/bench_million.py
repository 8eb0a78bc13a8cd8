"""Scale curve: build an index of N documents (10k, 100k, 1M), then cluster it and query it.

Documents are generated reproducibly (document i depends only on the seed and i)
from a pool of real text: the corpora in `../shared/corpora/` (PAN-13 sources and
suspicious texts, Clough-Stevenson, SPDX licences), this machine's own
documentation (`/usr/share/doc`, gzip files decompressed) and the docstrings of
Python's standard library. Document i is a window of 170-700 words of the pool in
which half of the words are replaced by words drawn from the pool (by their
frequency), so it keeps real word order and lengths but, like a real collection,
shares few shingles with unrelated documents. Planted pairs:

* i % 100 == 1: near-duplicate of document i-1 (5 % of its words changed);
* i % 100 == 2: its own text plus a 150-word passage lifted from document i-2.

Documents go through the scan's own path (`outcome_from` -> `Index.add_documents`
+ `put_file`, one transaction per 1,000) with sketching in worker processes, as
`scanner scan` does, but without writing N files to disk. Each stage runs in its
own process so its peak RSS is its own:

    .venv/bin/python bench/bench_million.py --docs 100000 --db /tmp/m100k.db
    .venv/bin/python bench/bench_million.py --docs 1000000 --db /tmp/m1m.db --stages build
    .venv/bin/python bench/bench_million.py --docs 1000000 --db /tmp/m1m.db --stages similar,check
    .venv/bin/python bench/bench_million.py --docs 100000 --db /tmp/m100k.db --stages build,passages

The last line of each stage is a JSON object; the run ends with a Markdown row.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
POOL_CACHE = Path("/tmp/scanner_bench_pool.npz")
SEED = 20240613
CHUNK = 1000  # documents per generation task and per write transaction (fixed: part of the recipe)
RESAMPLE = 0.5
DOC_WORDS = (170, 700)
MAX_DOC_BYTES = 60_000_000  # of /usr/share/doc text taken into the pool
MAX_DOCSTRING_BYTES = 15_000_000


# --------------------------------------------------------------------------
# the text pool


def _decode(data: bytes) -> str | None:
    if b"\x00" in data[:4096]:
        return None
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return None


def _corpus_texts() -> list[str]:
    out = []
    patterns = [("pan13-text-alignment-subset/src", "*.txt"), ("pan13-text-alignment-subset/susp", "*.txt"),
                ("clough-stevenson/corpus-20090418", "*.txt"), ("spdx-license-list/src", "*")]
    for folder, pattern in patterns:
        for path in sorted((CORPORA / folder).glob(pattern)):
            if path.is_file() and path.stat().st_size < 5_000_000:
                text = _decode(path.read_bytes())
                if text:
                    out.append(text)
    return out


def _doc_texts(limit: int) -> list[str]:
    out, total = [], 0
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if total >= limit:
            break
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size > 4_000_000:
                continue
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        text = _decode(data)
        if text and len(text) > 500:
            out.append(text)
            total += len(text)
    return out


def _docstrings(limit: int) -> list[str]:
    out, total = [], 0
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if total >= limit or "test" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 200:
                    out.append(doc)
                    total += len(doc)
    return out


def load_pool() -> tuple[np.ndarray, np.ndarray]:
    """(word ids of the whole pool in order, vocabulary), cached in /tmp."""
    if POOL_CACHE.exists():
        data = np.load(POOL_CACHE, allow_pickle=True)
        return data["ids"], data["vocab"]
    texts = _corpus_texts() + _doc_texts(MAX_DOC_BYTES) + _docstrings(MAX_DOCSTRING_BYTES)
    index: dict[str, int] = {}
    ids: list[int] = []
    for text in texts:
        for word in text.split():
            ids.append(index.setdefault(word, len(index)))
    vocab = np.empty(len(index), dtype=object)
    for word, i in index.items():
        vocab[i] = word
    out = np.asarray(ids, dtype=np.int32)
    np.savez(POOL_CACHE, ids=out, vocab=vocab)
    return out, vocab


# --------------------------------------------------------------------------
# documents


def chunk_texts(chunk: int, pool: np.ndarray, vocab: np.ndarray) -> list[str]:
    """Documents chunk*CHUNK .. chunk*CHUNK+CHUNK-1: a pure function of (SEED, chunk)."""
    rng = np.random.default_rng([SEED, chunk])
    docs: list[np.ndarray] = []
    n_pool = pool.shape[0]
    for j in range(CHUNK):
        i = chunk * CHUNK + j
        length = int(rng.integers(*DOC_WORDS))
        start = int(rng.integers(0, n_pool - length))
        ids = pool[start:start + length].copy()
        mask = rng.random(length) < RESAMPLE
        ids[mask] = pool[rng.integers(0, n_pool, int(mask.sum()))]  # words by their pool frequency
        if i % 100 == 1:  # near-duplicate of the previous document
            ids = docs[-1].copy()
            mask = rng.random(ids.shape[0]) < 0.05
            ids[mask] = pool[rng.integers(0, n_pool, int(mask.sum()))]
        elif i % 100 == 2:  # lifts a passage from document i-2
            src = docs[-2]
            a = int(rng.integers(0, max(1, src.shape[0] - 150)))
            ids = np.concatenate([ids, src[a:a + 150]])
        docs.append(ids)
    return [" ".join(vocab[ids].tolist()) for ids in docs]


_POOL: tuple[np.ndarray, np.ndarray] | None = None


def _build_chunk(chunk: int) -> list[tuple]:
    """Worker: generate one chunk and run it through the scan's per-document path."""
    from scanner.core.config import Params
    from scanner.core.model import Extracted, FileRecord
    from scanner.services.ingest import outcome_from

    assert _POOL is not None
    params = Params()
    out = []
    for j, text in enumerate(chunk_texts(chunk, *_POOL)):
        data = text.encode()
        record = FileRecord(path=f"gen/{chunk:04d}/{chunk * CHUNK + j:07d}.txt", size=len(data), mtime_ns=0,
                            sha256=hashlib.sha256(data).hexdigest(), mime="text/plain")
        outcome = outcome_from(record, Extracted(text=text, extractor="text"), params, True)
        out.append((outcome.record, outcome.status, outcome.document))
    _WORKER_RSS["mib"] = _rss_mib()
    return out, _rss_mib()


def _init_worker() -> None:
    global _POOL
    _POOL = load_pool()


# --------------------------------------------------------------------------
# stages


def _rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def stage_build(db: Path, n_docs: int, jobs: int) -> dict:
    import multiprocessing as mp

    from scanner.core.config import Params
    from scanner.index import Index

    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    load_pool()  # build the cache once, before forking
    chunks = list(range((n_docs + CHUNK - 1) // CHUNK))
    started = time.perf_counter()
    write_seconds = 0.0
    done = 0
    ctx = mp.get_context("forkserver")
    with ctx.Pool(jobs, initializer=_init_worker) as pool, \
            Index.open(db, readonly=False, params=Params()) as index:
        pending = []
        queue = iter(chunks)
        for chunk in queue:  # keep 2 chunks per worker in flight: bounded memory
            pending.append(pool.apply_async(_build_chunk, (chunk,)))
            if len(pending) < 2 * jobs:
                continue
            done += _write(index, pending.pop(0).get())
            write_seconds = _log(started, done, n_docs, write_seconds)
        for result in pending:
            done += _write(index, result.get())
            write_seconds = _log(started, done, n_docs, write_seconds)
        index.seal_postings()  # as a scan leaves its index
        index.checkpoint()
    seconds = time.perf_counter() - started
    size = db.stat().st_size
    return {"stage": "build", "docs": done, "seconds": round(seconds, 1), "docs_per_s": round(done / seconds, 1),
            "index_bytes": size, "bytes_per_doc": round(size / done),
            "written_gb": round(_written_gb(), 1), "rss_mib": round(_rss_mib()),
            "worker_rss_mib": round(_WORKER_RSS["mib"]), **table_sizes(db, done)}


_WRITE = {"seconds": 0.0}
_WORKER_RSS = {"mib": 0.0}


def _write(index, result: tuple[list[tuple], float]) -> int:
    rows, worker_rss = result
    _WORKER_RSS["mib"] = max(_WORKER_RSS["mib"], worker_rss)
    t = time.perf_counter()
    with index.transaction():
        ids = index.add_documents([doc for _, _, doc in rows])
        for (record, status, _), doc_id in zip(rows, ids):
            index.put_file(record, readers=1, status=status, extractor="text", doc_id=doc_id)
    _WRITE["seconds"] += time.perf_counter() - t
    return len(rows)


def _log(started: float, done: int, total: int, _: float) -> float:
    if done % 10_000 == 0 or done == total:
        elapsed = time.perf_counter() - started
        print(f"  {done:,}/{total:,} docs {elapsed:.0f} s {done / elapsed:.0f} docs/s, writer busy "
              f"{_WRITE['seconds']:.0f} s, written {_written_gb():.1f} GB, rss {_rss_mib():.0f} MiB",
              file=sys.stderr, flush=True)
    return _WRITE["seconds"]


def _written_gb() -> float:
    """Bytes this process has written to storage (WAL, checkpoints), from /proc."""
    try:
        with open("/proc/self/io", encoding="ascii") as handle:
            fields = dict(line.split(": ") for line in handle.read().splitlines())
        return int(fields["write_bytes"]) / 1e9
    except (OSError, KeyError, ValueError):
        return 0.0


def table_sizes(db: Path, n_docs: int) -> dict:
    """Bytes per document of each table and index (dbstat, when SQLite has it)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    except sqlite3.DatabaseError:
        return {}
    finally:
        postings = None
    conn2 = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    postings = conn2.execute("SELECT count(*) FROM postings").fetchone()[0]
    conn2.close()
    conn.close()
    return {"postings_per_doc": round(postings / n_docs, 1),
            "table_bytes_per_doc": {name: round(size / n_docs) for name, size in rows if size > 0.01 * n_docs}}


def stage_similar(db: Path) -> dict:
    from scanner.index import Index
    from scanner.services.findings import find_similar

    with Index.open(db, readonly=False) as index:
        n_docs = index.document_count(None)
        started = time.perf_counter()
        findings = find_similar(index, index.params)
        seconds = time.perf_counter() - started
    planted = 0
    for cluster in findings.clusters:
        numbers = sorted(int(m.path.rsplit("/", 1)[1][:7]) for m in cluster.members)
        planted += sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1 and b % 100 == 1)
    lifted = sum(1 for c in findings.containments
                 if int(c.contained.rsplit("/", 1)[1][:7]) % 100 == 0
                 and int(c.container.rsplit("/", 1)[1][:7]) % 100 == 2)
    return {"stage": "similar", "docs": n_docs, "seconds": round(seconds, 1),
            "pairs_considered": findings.pairs_considered, "pairs_scored": findings.pairs_scored,
            "clusters": len(findings.clusters), "planted_near_duplicates_found": planted,
            "planted_near_duplicates": n_docs // 100, "containments": len(findings.containments),
            "lifted_found": lifted, "rss_mib": round(_rss_mib())}


def stage_passages(db: Path, jobs: int) -> dict:
    """Issue 20: the passage step a scan runs after indexing (every pair that may share a passage, aligned
    once), against the build's own time; and how many planted lifts (document i % 100 == 2 holds 150 words
    of document i - 2) it lists with their source."""
    from scanner.index import Index
    from scanner.services.findings import find_similar
    from scanner.services.passages import align_index

    with Index.open(db, readonly=False) as index:
        started = time.perf_counter()
        step = align_index(index, index.params, jobs=jobs)
        seconds = time.perf_counter() - started
        findings = find_similar(index, index.params)
    number = lambda path: int(path.rsplit("/", 1)[1][:7])  # noqa: E731
    lifted = sum(1 for d in findings.documents if number(d.path) % 100 == 2
                 and any(number(s.path) == number(d.path) - 2 for s in d.sources))
    return {"stage": "passages", "seconds": round(seconds, 1), "candidate_pairs": step.candidates,
            "pairs": step.pairs, "documents_listed": len(findings.documents), "lifted_found": lifted,
            "rss_mib": round(_rss_mib()), "children_rss_mib": round(_rss_mib(resource.RUSAGE_CHILDREN))}


def queries(n_docs: int, count: int) -> list[str]:
    """10 KB queries of real text (PAN-13 suspicious documents); every 10th holds a planted index document."""
    rng = np.random.default_rng([SEED, 7])
    texts = [t for t in (_decode(p.read_bytes()) for p in sorted(
        (CORPORA / "pan13-text-alignment-subset" / "susp").glob("*.txt"))) if t and len(t) > 3000]
    pool = load_pool()
    out = []
    for q in range(count):
        parts, size = [], 0
        while size < 10_000:
            t = texts[int(rng.integers(0, len(texts)))]
            a = int(rng.integers(0, max(1, len(t) - 2500)))
            parts.append(t[a:a + 2500])
            size += len(parts[-1])
        text = "\n\n".join(parts)[:10_240]
        if q % 10 == 0:
            chunk = int(rng.integers(0, max(1, n_docs // CHUNK)))
            doc = chunk_texts(chunk, *pool)[int(rng.integers(0, CHUNK))]
            text = text[:6000] + "\n\n" + doc
        out.append(text)
    return out


def stage_check(db: Path, count: int) -> dict:
    from scanner.index import Index
    from scanner.services.check import CheckOptions, check_text

    with Index.open(db) as index:
        n_docs = index.document_count(None)
        qs = queries(n_docs, count)
        check_text(qs[0], index, index.params)  # warm the page cache
        timings, matched = [], 0
        for q in qs:
            started = time.perf_counter()
            report = check_text(q, index, index.params, CheckOptions())
            timings.append((time.perf_counter() - started) * 1000)
            matched += bool(report.matches)
    timings.sort()
    return {"stage": "check", "docs": n_docs, "queries": len(qs), "p50_ms": round(statistics.median(timings), 1),
            "p90_ms": round(timings[int(0.9 * len(timings))], 1),
            "p99_ms": round(timings[min(len(timings) - 1, int(0.99 * len(timings)))], 1),
            "queries_with_matches": matched, "rss_mib": round(_rss_mib())}


# --------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--stages", default="build,similar,check")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one stage in this process
    args = parser.parse_args()
    db = args.db or Path(f"/tmp/bench_million_{args.docs}.db")
    if args.one:
        result = {"build": lambda: stage_build(db, args.docs, args.jobs), "similar": lambda: stage_similar(db),
                  "passages": lambda: stage_passages(db, args.jobs),
                  "check": lambda: stage_check(db, args.queries)}[args.one]()
        print(json.dumps(result))
        return
    results = {}
    for stage in args.stages.split(","):
        proc = subprocess.run([sys.executable, __file__, "--docs", str(args.docs), "--db", str(db), "--jobs",
                               str(args.jobs), "--queries", str(args.queries), "--one", stage],
                              stdout=subprocess.PIPE, text=True, check=True)
        results[stage] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(results[stage]), flush=True)
    b, s, c = results.get("build", {}), results.get("similar", {}), results.get("check", {})
    print("| documents | build docs/s | index bytes/doc | find_similar s | check p50 ms | check p99 ms | "
          "peak RSS MiB (build writer / worker, similar, check) |")
    print(f"| {args.docs:,} | {b.get('docs_per_s', '-')} | {b.get('bytes_per_doc', '-')} | {s.get('seconds', '-')} | "
          f"{c.get('p50_ms', '-')} | {c.get('p99_ms', '-')} | "
          f"{b.get('rss_mib', '-')} / {b.get('worker_rss_mib', '-')}, "
          f"{s.get('rss_mib', '-')}, {c.get('rss_mib', '-')} |")


if __name__ == "__main__":
    main()
