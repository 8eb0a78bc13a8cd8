"""Latency of `check` for a 10 KB document against a large index built from real text.

The index holds N synthetic documents cut reproducibly from the PAN-13 source
texts: random 1-4 KB windows in which a share of the words (`--resample`,
default 0.3) is replaced by words drawn from the corpus vocabulary, so every
document keeps real sentence structure and word frequencies but is distinct.
Queries are 10 KB windows of the PAN-13 *suspicious* texts (which do reuse
passages of the sources, as real submissions would); every 10th query also
has a planted near-duplicate and a lifted passage in the index.
Documents are written through the same path a scan uses (`outcome_from` +
`Index.add_document`), without crawling files, so building 100,000 takes
minutes, not hours. The query latency measured is `check_text` alone: the
extracted text in, matches with passages out.

    .venv/bin/python bench/bench_check.py --docs 100000 --queries 200 [--semantic]

`--semantic` times every query twice, without and with the semantic pass (issue 21), one after the other
(which goes first alternating from query to query), and prints both rows and the ratio of their medians.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import PAN13, read_text

from scanner.core.config import Params
from scanner.core.model import Extracted, FileRecord
from scanner.index import Index
from scanner.services.check import CheckOptions, check_text
from scanner.services.ingest import outcome_from


def synthetic_documents(texts: list[str], count: int, resample: float, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    words_pool = [t.split() for t in texts if len(t) > 2000]
    vocabulary = [w for ws in words_pool for w in ws]
    docs = []
    for _ in range(count):
        words = rng.choice(words_pool)
        length = rng.randint(170, 700)  # about 1-4 KB
        start = rng.randint(0, max(0, len(words) - length))
        chunk = words[start:start + length]
        for position in rng.sample(range(len(chunk)), int(resample * len(chunk))):
            chunk[position] = rng.choice(vocabulary)
        docs.append(" ".join(chunk))
    return docs


def build_index(db: Path, docs: list[str], params: Params) -> float:
    started = time.perf_counter()
    with Index.open(db, readonly=False, params=params) as index:
        batch = []
        for i, text in enumerate(docs):
            data = text.encode()
            sha = hashlib.sha256(data).hexdigest()
            record = FileRecord(path=f"synthetic/{i:07d}.txt", size=len(data), mtime_ns=0, sha256=sha,
                                mime="text/plain")
            batch.append(outcome_from(record, Extracted(text=text, extractor="text"), params, True))
            if len(batch) == 2000 or i == len(docs) - 1:
                with index.transaction():
                    for outcome in batch:
                        doc_id = index.add_document(outcome.document)
                        index.put_file(outcome.record, readers=1, status=outcome.status, doc_id=doc_id)
                batch.clear()
                print(f"\r  indexed {i + 1:,}/{len(docs):,}", end="", file=sys.stderr)
        index.seal_postings()  # as a scan leaves its index
    print(file=sys.stderr)
    return time.perf_counter() - started


def embed_documents_missing(db: Path, model) -> None:
    """The documents' vectors by meaning, as a scan's passage step stores them (issue 21), for the documents
    of this index that have none (this benchmark writes documents without the passage step)."""
    from scanner.services.pair_alignment import embed_documents
    from scanner.services.prepared import PreparedSides
    from scanner.services.semantic import meaning_key

    with Index.open(db, readonly=False) as index:
        index.meaning.use_key(meaning_key(model))
        index.meaning.compact()  # as a scan's passage step leaves them
        ids = [r[0] for r in index._conn.execute("SELECT id FROM documents WHERE status = 'ok' ORDER BY id")]
        missing = index.meaning.missing(np.asarray(ids, dtype=np.int64)).tolist()
        if not missing:
            return
        started = time.perf_counter()
        sides = PreparedSides(index, index.params, model, max_tokens=0)  # each document read once, in id order
        for i in range(0, len(missing), 1024):
            block = missing[i : i + 1024]
            index.meaning.put(block, *embed_documents(sides, block))
        index.meaning.compact()
        seconds = time.perf_counter() - started
        print(f"vectors by meaning for {len(missing):,} documents in {seconds:.1f} s "
              f"({len(missing) / seconds:,.0f} documents/s, one process)")


def pan13_queries(count: int) -> list[str]:
    """`count` 10 KB queries, each real text from several PAN-13 suspicious documents (the same every run)."""
    texts = [read_text(p) for p in sorted((PAN13 / "susp").glob("*.txt"))]
    texts = [t for t in texts if len(t) > 3000]
    rng = random.Random(2)
    queries = []
    for _ in range(count):
        parts, size = [], 0
        while size < 10_000:
            t = rng.choice(texts)
            a = rng.randrange(0, max(1, len(t) - 2500))
            parts.append(t[a:a + 2500])
            size += len(parts[-1])
        queries.append("\n\n".join(parts)[:10_240])
    return queries


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--db", type=Path, default=Path("/tmp/bench_check.db"))
    parser.add_argument("--reuse", action="store_true", help="reuse an existing --db")
    parser.add_argument("--resample", type=float, default=0.3)
    parser.add_argument("--semantic", action="store_true", help="also time the semantic pass (same queries)")
    args = parser.parse_args()
    params = Params()
    sources = [read_text(p) for p in sorted((PAN13 / "src").glob("*.txt"))]
    queries = pan13_queries(args.queries)
    if not (args.reuse and args.db.exists()):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{args.db}{suffix}").unlink(missing_ok=True)
        docs = synthetic_documents(sources, args.docs, args.resample)
        # plant: every 10th query has a near-duplicate and a lifted passage in the index
        for i, q in enumerate(queries[::10]):
            docs[i * 7] = q.replace(" the ", " a ", 3)
            docs[i * 7 + 1] = docs[i * 7 + 1] + " " + q[3000:4200]
        seconds = build_index(args.db, docs, params)
        print(f"built {args.docs:,} documents in {seconds:.1f} s ({args.docs / seconds:,.0f} docs/s), "
              f"{os.path.getsize(args.db) / args.docs:,.0f} bytes/doc")
    modes = {"lexical": CheckOptions()}
    if args.semantic:
        from scanner.services.semantic import open_model

        model = open_model(True)  # as `scanner check` loads it: with one BLAS thread for the process
        assert model is not None, "the sentence model is not installed"
        modes["semantic"] = CheckOptions(semantic=model)
        embed_documents_missing(args.db, model)
    timings: dict[str, list[float]] = {mode: [] for mode in modes}
    matched = dict.fromkeys(modes, 0)
    with Index.open(args.db) as index:
        for options in modes.values():
            check_text(queries[0], index, index.params, options)  # warm caches (and the model's word cache)
        for number, q in enumerate(queries):
            # which pass goes first alternates: the second finds the query's candidates' pages warm
            order = list(modes.items()) if number % 2 == 0 else list(reversed(modes.items()))
            for mode, options in order:
                started = time.perf_counter()
                report = check_text(q, index, index.params, options)
                timings[mode].append((time.perf_counter() - started) * 1000)
                matched[mode] += bool(report.matches)
    print("| index documents | pass | queries | p50 ms | p90 ms | p99 ms | queries with matches |")
    print("|---|---|---|---|---|---|---|")
    for mode, found in timings.items():
        found.sort()
        p90 = found[int(0.9 * len(found))]
        p99 = found[min(len(found) - 1, int(0.99 * len(found)))]
        print(f"| {args.docs:,} | {mode} | {len(queries)} | {statistics.median(found):.1f} | {p90:.1f} | "
              f"{p99:.1f} | {matched[mode]} |")
    if args.semantic:
        ratio = statistics.median(timings["semantic"]) / statistics.median(timings["lexical"])
        print(f"semantic / lexical p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()
