"""The findings of an index: clusters of near-duplicates and containment pairs (Broder et al. 1997).

Pairs come from the postings (`Index.pair_count_arrays`: the <shingle, id> -> <id, id, count>
phases, in numpy over fingerprint ranges), are filtered by their shared count (`cluster.worth_scoring`), scored from the
sketches (Theorem 1), then joined by union-find. Used by the CLI, the TUI and the reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from scanner.core.config import Params
from scanner.engine.cluster import (
    ScoredPair,
    clusters_from,
    containments_from,
    min_shared_share,
    near_duplicate_links,
    worth_scoring,
)
from scanner.engine.sketch import theorem1_estimates
from scanner.index.store import Index


@dataclass(frozen=True)
class Member:
    path: str
    sha256: str


@dataclass(frozen=True)
class Cluster:
    id: int
    kind: str  # "identical" | "lexical" | "near-duplicate"
    members: tuple[Member, ...]
    min_resemblance: float | None  # lowest scored resemblance linking it (None: equivalences only)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind,
                "members": [{"path": m.path, "sha256": m.sha256} for m in self.members]}


@dataclass(frozen=True)
class ContainmentFinding:
    contained: str
    container: str
    containment: float
    resemblance: float
    contained_sha256: str
    container_sha256: str
    error: float = 0.0  # 95 % half-width of the estimate

    def to_json(self) -> dict[str, Any]:
        return {"contained": self.contained, "container": self.container,
                "containment": round(self.containment, 6), "containment_error": round(self.error, 3)}


@dataclass(frozen=True)
class Findings:
    clusters: tuple[Cluster, ...]
    containments: tuple[ContainmentFinding, ...]
    pairs_considered: int
    pairs_scored: int
    threshold: float
    min_containment: float


def find_similar(index: Index, params: Params, *, sketch_cache: int = 50_000, dask: Any = None) -> Findings:
    """Clusters and containment pairs among the live documents of `index`.

    Identical files (same SHA-256) share a document; lexically-equivalent
    documents are joined next; only one representative of each such group is
    scored. Pairs come from the postings (`Index.pair_count_arrays`, or the
    same computation on a Dask cluster when `dask` is a `distributed.Client`),
    are filtered by their shared count, then scored from the sketches (Theorem 1).
    """
    threshold, min_c = params.resemblance_threshold, params.min_containment
    if dask is None:
        pair_arrays = index.pair_count_arrays(params.common_shingle_share)
    else:
        from scanner.services.scan.dask import pair_count_arrays_dask

        pair_arrays = pair_count_arrays_dask(index, params.common_shingle_share, dask,
                                             min_shared_share=min_shared_share(threshold, min_c))
    # Memory stays proportional to the findings, not to the index (issue 9: at 1M documents, per-document
    # Python dicts cost more than the pair counting): lexical groups and multi-file documents come from SQL,
    # fingerprint counts as one numpy array, file rows only for the documents that end up in a finding.
    rep_of = index.lexical_representatives()  # only documents sharing their canonical text with another
    n_fps = index.fingerprint_counts()
    candidates: dict[tuple[int, int], int] = {}  # pair -> winnowed fingerprints it shares
    considered = 0
    for pa, pb, shared in pair_arrays:
        considered += int(pa.shape[0])
        keep = worth_scoring(shared, n_fps[pa], n_fps[pb], threshold, min_c)
        for a, b, n in zip(pa[keep].tolist(), pb[keep].tolist(), shared[keep].tolist()):
            a, b = rep_of.get(a, a), rep_of.get(b, b)
            if a != b:
                key = (a, b) if a < b else (b, a)
                candidates[key] = max(candidates.get(key, 0), n)

    scored = list(_score(index, sorted(candidates.items()), n_fps, params, sketch_cache))
    linked = near_duplicate_links(scored, threshold)  # a lopsided pair is a containment, not also a link
    contained = list(containments_from(scored, threshold, min_c))
    involved = set(rep_of) | set(rep_of.values()) | index.documents_with_copies()
    involved |= {d for p in linked for d in (p.a, p.b)} | {d for c in contained for d in (c.contained, c.container)}
    by_doc: dict[int, list[Member]] = {}
    for path, sha, doc_id in index.live_files_of(sorted(involved)):
        by_doc.setdefault(doc_id, []).append(Member(path, sha))

    lowest: dict[int, float] = {}  # document -> lowest resemblance of a pair linking it
    for pair in linked:
        for d in (pair.a, pair.b):
            lowest[d] = min(lowest.get(d, 1.0), pair.resemblance)
    groups: list[tuple[str, tuple[Member, ...], float | None]] = []
    for group in clusters_from(sorted(involved), rep_of.items(), linked, threshold, min_size=1):
        members = tuple(sorted((m for d in group for m in by_doc.get(d, [])), key=lambda m: m.path))
        if len(members) < 2:
            continue
        if len({m.sha256 for m in members}) == 1:
            kind = "identical"
        elif len({rep_of.get(d, d) for d in group}) == 1:
            kind = "lexical"
        else:
            kind = "near-duplicate"
        min_res = min((lowest[d] for d in group if d in lowest), default=None)
        groups.append((kind, members, min_res if kind == "near-duplicate" else None))
    by_sha_nodoc: dict[str, list[Member]] = {}  # identical files with no document (too short, errors...)
    for path, sha in index.identical_files_without_document():
        by_sha_nodoc.setdefault(sha, []).append(Member(path, sha))
    for sha, copies in by_sha_nodoc.items():
        if len(copies) > 1 and sha != _EMPTY_SHA256:
            groups.append(("identical", tuple(copies), None))
    groups.sort(key=lambda g: (-len(g[1]), g[1][0].path))
    clusters = tuple(Cluster(i + 1, kind, members, mr) for i, (kind, members, mr) in enumerate(groups))

    first = {d: ms[0] for d, ms in by_doc.items() if ms}
    containments = tuple(
        ContainmentFinding(first[c.contained].path, first[c.container].path, c.containment, c.resemblance,
                           first[c.contained].sha256, first[c.container].sha256, c.error)
        for c in contained if c.contained in first and c.container in first)
    return Findings(clusters, containments, considered, len(scored), threshold, min_c)


_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _score(index: Index, pairs: Sequence[tuple[tuple[int, int], int]], n_fps: Any, params: Params,
           cache_size: int) -> Iterator[ScoredPair]:
    """Theorem 1 estimates of candidate pairs (containment of a much smaller document from the winnowed
    fingerprints the pair shares), reading sketches in batches with a bounded cache."""
    cache: dict[int, Any] = {}
    step = 2000
    for start in range(0, len(pairs), step):
        chunk = pairs[start : start + step]
        need = sorted({d for pair, _ in chunk for d in pair} - cache.keys())
        if len(cache) + len(need) > cache_size:
            cache.clear()
            need = sorted({d for pair, _ in chunk for d in pair})
        cache.update(index.sketches(need))
        for (a, b), shared in chunk:
            resemblance, in_b, in_a = theorem1_estimates(cache[a], cache[b], params.sample_size, shared,
                                                         (int(n_fps[a]), int(n_fps[b])))
            yield ScoredPair(a, b, shared, resemblance, in_b.value, in_a.value, in_b.error, in_a.error)


def findings_json(findings: Findings) -> dict[str, Any]:
    return {"clusters": [c.to_json() for c in findings.clusters],
            "containments": [c.to_json() for c in findings.containments]}
