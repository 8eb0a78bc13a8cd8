"""Where SQLite's postings stop: bytes written per document under three layouts (docs/SCALING.md).

Raw SQLite, the index's own settings (WAL, synchronous=NORMAL, 128 MiB cache),
218 random 64-bit fingerprints per document (the measured mean), one commit
per 1,000 documents, as bench_million.py writes them:

* `single`: today's `postings(fp, doc_id)` WITHOUT ROWID + index on doc_id;
* `staged`: the same table, fed from a small `postings_recent` tree that is
  merged into it (one sorted INSERT ... SELECT) whenever it holds 2M rows;
* `segments`: one postings table per 100,000 documents, never merged
  (a lookup probes every segment);
* `lsm`: `postings_recent` (2M rows, fits the page cache) is copied, already
  in key order, into a new immutable segment (an append into an empty tree);
  whenever 8 segments of one size exist they are merged into one (a sorted
  UNION ALL into an empty tree): size-tiered, log8 levels, as in LevelDB/Lucene.

Reports docs/s and GB written (from /proc/self/io) every 50,000 documents and
the latency of a 500-fingerprint lookup at the end.

    .venv/bin/python bench/bench_postings_layout.py --docs 300000 --layout single
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np

PER_DOC = 218
COMMIT = 1000
RECENT_MAX = 2_000_000
SEGMENT = 100_000


def written_gb() -> float:
    with open("/proc/self/io", encoding="ascii") as handle:
        fields = dict(line.split(": ") for line in handle.read().splitlines())
    return int(fields["write_bytes"]) / 1e9


def table(conn: sqlite3.Connection, name: str) -> None:
    conn.execute(f"CREATE TABLE IF NOT EXISTS {name} (fp INTEGER NOT NULL, doc_id INTEGER NOT NULL, "
                 f"PRIMARY KEY (fp, doc_id)) WITHOUT ROWID")
    conn.execute(f"CREATE INDEX IF NOT EXISTS {name}_doc ON {name}(doc_id)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=300_000)
    parser.add_argument("--layout", choices=("single", "staged", "segments", "lsm"), default="single")
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    db = args.db or Path(f"/tmp/postings_{args.layout}.db")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -131072")
    table(conn, "postings")
    if args.layout in ("staged", "lsm"):
        table(conn, "postings_recent")
    levels: dict[int, list[str]] = {}  # lsm: level -> segment tables
    serial = 0
    rng = np.random.default_rng(1)
    recent = 0
    started, base = time.perf_counter(), written_gb()
    for first in range(0, args.docs, COMMIT):
        fps = rng.integers(-(2**63), 2**63 - 1, size=COMMIT * PER_DOC, dtype=np.int64)
        docs = np.repeat(np.arange(first, first + COMMIT, dtype=np.int64), PER_DOC)
        order = np.lexsort((docs, fps))
        target = {"single": "postings", "staged": "postings_recent", "lsm": "postings_recent",
                  "segments": f"postings_{first // SEGMENT}"}[args.layout]
        if args.layout == "segments":
            table(conn, target)
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(f"INSERT INTO {target} (fp, doc_id) VALUES (?, ?)",
                         zip(fps[order].tolist(), docs[order].tolist()))
        recent += fps.shape[0]
        if args.layout == "staged" and recent >= RECENT_MAX:
            conn.execute("INSERT INTO postings SELECT fp, doc_id FROM postings_recent")
            conn.execute("DELETE FROM postings_recent")
            recent = 0
        if args.layout == "lsm" and recent >= RECENT_MAX:
            serial += 1
            name = f"seg_{serial}"
            table(conn, name)
            conn.execute(f"INSERT INTO {name} SELECT fp, doc_id FROM postings_recent")
            conn.execute("DELETE FROM postings_recent")
            recent = 0
            levels.setdefault(0, []).append(name)
            level = 0
            while len(levels.get(level, [])) >= 8:
                serial += 1
                merged = f"seg_{serial}"
                table(conn, merged)
                union = " UNION ALL ".join(f"SELECT fp, doc_id FROM {t}" for t in levels[level])
                conn.execute(f"INSERT INTO {merged} SELECT * FROM ({union}) ORDER BY fp, doc_id")
                for t in levels.pop(level):
                    conn.execute(f"DROP TABLE {t}")
                levels.setdefault(level + 1, []).append(merged)
                level += 1
        conn.execute("COMMIT")
        done = first + COMMIT
        if done % 50_000 == 0:
            elapsed = time.perf_counter() - started
            print(f"{args.layout} {done:,} docs {elapsed:.0f} s {done / elapsed:.0f} docs/s "
                  f"written {written_gb() - base:.1f} GB ({(written_gb() - base) * 1e9 / done / 1e3:.0f} KB/doc) "
                  f"db {db.stat().st_size / done:.0f} B/doc", flush=True)
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND (name LIKE 'postings%' OR name LIKE 'seg_%')")]
    timings = []
    for _ in range(50):
        probe = rng.integers(-(2**63), 2**63 - 1, size=500, dtype=np.int64).tolist()
        t = time.perf_counter()
        for name in tables:
            conn.execute(f"SELECT fp, doc_id FROM {name} WHERE fp IN ({','.join('?' * 500)})", probe).fetchall()
        timings.append((time.perf_counter() - t) * 1000)
    print(f"{args.layout}: 500-fp lookup over {len(tables)} table(s): p50 {statistics.median(timings):.1f} ms")


if __name__ == "__main__":
    main()
