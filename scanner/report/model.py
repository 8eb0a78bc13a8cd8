"""The content of a report, gathered from an index as plain data.

Every format (HTML, JSON, CSV, PAN XML) renders the same `Report`, so the
figures in one always agree with the others. Nothing here formats or escapes:
that is each renderer's job.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from scanner import __version__, coates
from scanner.align import align
from scanner.config import Params
from scanner.sketch import exact_containment, exact_resemblance, shingle_text

REPORT_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FileEvidence:
    path: str
    sha256: str
    size: int
    mtime: str  # UTC ISO 8601
    mime: str
    status: str
    reason: str


@dataclass(frozen=True)
class Side:
    path: str
    sha256: str
    doc_id: int | None


@dataclass(frozen=True)
class PairPassage:
    a_start: int
    a_end: int
    b_start: int
    b_end: int
    text: str  # as it stands in A


@dataclass(frozen=True)
class Pair:
    kind: str  # "identical" | "near-duplicate" | "containment" | "check"
    a: Side
    b: Side
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    edit_distance_estimate: int | None
    passages: tuple[PairPassage, ...] = ()


@dataclass(frozen=True)
class DocumentShare:
    """The similarity-report line teachers know: x% of this document found in n sources."""

    path: str
    sha256: str
    share: float
    sources: int


@dataclass(frozen=True)
class Report:
    schema_version: int
    tool: str
    version: str
    generated_at: str
    index: str
    command: str
    guarantee: str
    params: dict[str, Any]
    summary: dict[str, int]
    files: tuple[FileEvidence, ...]
    clusters: tuple[dict[str, Any], ...]
    pairs: tuple[Pair, ...]
    documents: tuple[DocumentShare, ...]
    texts: dict[str, str] = field(default_factory=dict, repr=False)  # sha256 -> text, for rendering passages

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("texts")
        return data


def iso(ns_or_seconds: float, *, nanoseconds: bool = False) -> str:
    seconds = ns_or_seconds / 1e9 if nanoseconds else ns_or_seconds
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _measure(kind: str, a: Side, b: Side, text_a: str | None, text_b: str | None, sig_a: Any, sig_b: Any,
             params: Params) -> Pair:
    edit = coates.estimated_edit_distance(sig_a, sig_b) if sig_a is not None and sig_b is not None else None
    if text_a is None or text_b is None:
        return Pair(kind, a, b, float("nan"), float("nan"), float("nan"), edit)
    sa, sb = shingle_text(text_a, params), shingle_text(text_b, params)
    da, db = sa.distinct, sb.distinct
    passages = tuple(PairPassage(p.query_start, p.query_end, p.doc_start, p.doc_end, p.text)
                     for p in align(sa, text_a, sb, text_b, params.shingle_size))
    return Pair(kind, a, b, exact_resemblance(da, db), exact_containment(da, db), exact_containment(db, da), edit,
                passages)


def _coverage(text: str, spans: list[tuple[int, int]]) -> float:
    if not text:
        return 0.0
    covered = np.zeros(len(text), dtype=bool)
    for start, end in spans:
        covered[start:end] = True
    letters = np.array([ch.isalnum() for ch in text], dtype=bool)
    return float((covered & letters).sum() / max(int(letters.sum()), 1))


def build_report(index: Any, params: Params, *, index_path: str, command: str,
                 check: tuple[str, str, str] | None = None,
                 threshold: float | None = None, min_containment: float | None = None) -> Report:
    """Gather the report of the whole index, or of one checked document (`check` = path, sha256, text)."""
    from scanner.query import CheckOptions, check_text, own_document_ids
    from scanner.scan import find_similar

    params = params.replace(**{k: v for k, v in (("resemblance_threshold", threshold),
                                                  ("min_containment", min_containment)) if v is not None})
    files = tuple(FileEvidence(f.path, f.sha256, f.size, iso(f.mtime_ns, nanoseconds=True), f.mime, f.status,
                               f.reason) for f in index.files(include_vanished=False))
    texts: dict[str, str] = {}

    def side_of(doc_id: int | None, path: str, sha256: str) -> Side:
        return Side(path, sha256, doc_id)

    def text_of(doc_id: int | None, sha256: str) -> str | None:
        if doc_id is None:
            return None
        if sha256 not in texts:
            text = index.text(doc_id)
            if text is None:
                return None
            texts[sha256] = text
        return texts[sha256]

    pairs: list[Pair] = []
    clusters: list[dict[str, Any]] = []
    if check is not None:
        path, sha256, text = check
        texts[sha256] = text
        report = check_text(text, index, params,
                            CheckOptions(top=50, skip_doc_ids=own_document_ids(index, path, sha256)))
        query_side = Side(path, sha256, None)
        for m in report.matches:
            info = index.document(m.doc_id)
            text_of(m.doc_id, info.sha256)
            pairs.append(Pair("check", query_side, Side(m.path, m.sha256, m.doc_id), m.resemblance,
                              m.containment_query_in_doc, m.containment_doc_in_query, m.edit_distance_estimate,
                              tuple(PairPassage(p.query_start, p.query_end, p.doc_start, p.doc_end, p.text)
                                    for p in m.passages)))
    else:
        findings = find_similar(index, params)
        sketches: dict[int, Any] = {}

        def signature(doc_id: int | None) -> Any:
            if doc_id is None:
                return None
            if doc_id not in sketches:
                sketches[doc_id] = index.sketch(doc_id).coates
            return sketches[doc_id]

        for cluster in findings.clusters:
            clusters.append({"id": cluster.id, "kind": cluster.kind,
                             "members": [{"path": m.path, "sha256": m.sha256} for m in cluster.members]})
            first = cluster.members[0]
            first_id = index.doc_id_for_sha256(first.sha256)
            for member in cluster.members[1:]:  # a star around the first member keeps it linear
                if member.sha256 == first.sha256:
                    pairs.append(Pair("identical", side_of(first_id, first.path, first.sha256),
                                      side_of(first_id, member.path, member.sha256), 1.0, 1.0, 1.0, 0))
                    continue
                other_id = index.doc_id_for_sha256(member.sha256)
                pairs.append(_measure("near-duplicate", side_of(first_id, first.path, first.sha256),
                                      side_of(other_id, member.path, member.sha256),
                                      text_of(first_id, first.sha256), text_of(other_id, member.sha256),
                                      signature(first_id), signature(other_id), params))
        for c in findings.containments:
            a_id, b_id = index.doc_id_for_sha256(c.contained_sha256), index.doc_id_for_sha256(c.container_sha256)
            pairs.append(_measure("containment", side_of(a_id, c.contained, c.contained_sha256),
                                  side_of(b_id, c.container, c.container_sha256),
                                  text_of(a_id, c.contained_sha256), text_of(b_id, c.container_sha256),
                                  signature(a_id), signature(b_id), params))
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    sources: dict[tuple[str, str], set[str]] = {}
    for pair in pairs:
        if pair.kind == "identical":
            continue
        for mine, other, use_a in ((pair.a, pair.b, True), (pair.b, pair.a, False)):
            if not pair.passages:
                continue
            key = (mine.path, mine.sha256)
            spans.setdefault(key, []).extend((p.a_start, p.a_end) if use_a else (p.b_start, p.b_end)
                                             for p in pair.passages)
            sources.setdefault(key, set()).add(other.sha256)
    documents = tuple(sorted((DocumentShare(path, sha, _coverage(texts.get(sha, ""), spans[(path, sha)]),
                                            len(sources[(path, sha)])) for path, sha in spans),
                             key=lambda d: (-d.share, d.path)))
    suspected = sum(1 for p in pairs if p.kind != "identical")
    summary = {"files": len(files), "documents": int(index.stats().documents_ok), "clusters": len(clusters),
               "pairs": len(pairs),
               "suspected_copies": suspected,
               "containments": sum(1 for p in pairs if p.kind == "containment")}
    return Report(
        schema_version=REPORT_SCHEMA_VERSION, tool="scanner", version=__version__, generated_at=iso(time.time()),
        index=index_path, command=command,
        guarantee=f"any run of at least {params.guaranteed_run} shared words is found",
        params=params.to_dict(), summary=summary, files=files, clusters=tuple(clusters), pairs=tuple(pairs),
        documents=documents, texts=texts)
