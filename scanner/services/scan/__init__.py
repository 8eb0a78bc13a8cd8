"""The scan service: crawl, extract and sketch in worker processes, index with one writer.

* `run` — `run_scan`, the entry point: crawl, skip what is unchanged, hand the rest to an executor;
* `dispatch` — batches, SHA-256s in flight, copies linked instead of extracted; the inline executor;
* `pool` — the process pool (memory and time budgets, a dead or hung worker's file blamed and reported);
* `dask` — the same on a Dask cluster, and the all-pairs step there;
* `writer` — the single writer: complete files committed in batches;
* `resketch` — an index of an earlier algorithm version sketched again from its stored texts.

What a file becomes (read once, extracted, sketched) is `scanner.services.ingest`; the findings of an
index are `scanner.services.findings`.
"""

from scanner.services.scan.resketch import Resketch, resketch_index
from scanner.services.scan.run import (
    DEFAULT_MEMORY,
    DEFAULT_TIMEOUT,
    ScanProgress,
    ScanResult,
    run_scan,
    shortage_explained,
)
from scanner.services.scan.writer import FileIssue

__all__ = ["DEFAULT_MEMORY", "DEFAULT_TIMEOUT", "FileIssue", "Resketch", "ScanProgress", "ScanResult",
           "resketch_index", "run_scan", "shortage_explained"]
