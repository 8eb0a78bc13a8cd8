"""Gather a `Report` from an index: findings, pair measures, passages and evidence.

Why here and not in each renderer: the passages of a pair cost an alignment
of two whole texts, so they are computed once and every format shows the same
numbers. Values are exact (full shingle sets of the stored texts) whenever the
index kept the texts, and sketch estimates otherwise; each pair says which.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scanner import __version__
from scanner.core.config import Params
from scanner.engine.align import AlignOptions, align
from scanner.engine.sketch import (
    Shingled,
    compare_sketches,
    estimated_edit_distance,
    exact_containment,
    exact_resemblance,
    shingle_text,
)
from scanner.faces.report.model import (
    REPORT_SCHEMA_VERSION,
    CheckedDocument,
    ClusterInfo,
    DocumentShare,
    FileEvidence,
    Pair,
    PairPassage,
    Report,
    Selection,
    Side,
    SourceShare,
    iso_utc,
)

CHECK_TOP = 50  # sources listed for a checked document; more are noise in a report meant for people


def guarantee_text(params: Params) -> str:
    unit = "words" if params.token_unit == "word" else "letters or digits"
    return f"any run of at least {params.guaranteed_run} shared {unit} is found"


def effective_params(params: Params, selection: Selection) -> Params:
    changes = {k: v for k, v in (("resemblance_threshold", selection.threshold),
                                 ("min_containment", selection.min_containment)) if v is not None}
    return params.replace(**changes) if changes else params


class _Measurer:
    """Per-report caches of texts, shingles and sketches, so a document in many pairs is read once."""

    def __init__(self, index: Any, params: Params) -> None:
        self.index = index
        self.params = params
        self.options = AlignOptions(min_tokens=params.guaranteed_run)  # what `check` uses: same passages
        self.texts: dict[str, str] = {}
        self._doc_ids: dict[str, int | None] = {}
        self._shingled: dict[str, Shingled] = {}
        self._sketches: dict[int, Any] = {}
        self._pairs: dict[tuple[str, str, str], Pair] = {}

    def doc_id(self, sha256: str) -> int | None:
        if sha256 not in self._doc_ids:
            self._doc_ids[sha256] = self.index.doc_id_for_sha256(sha256)
        return self._doc_ids[sha256]

    def side(self, path: str, sha256: str) -> Side:
        return Side(path, sha256, self.doc_id(sha256))

    def text(self, side: Side) -> str | None:
        if side.sha256 not in self.texts:
            if side.doc_id is None:
                return None
            text = self.index.text(side.doc_id)
            if text is None:
                return None
            self.texts[side.sha256] = text
        return self.texts[side.sha256]

    def shingled(self, sha256: str, text: str) -> Shingled:
        if sha256 not in self._shingled:
            self._shingled[sha256] = shingle_text(text, self.params)
        return self._shingled[sha256]

    def sketch(self, doc_id: int) -> Any:
        if doc_id not in self._sketches:
            self._sketches[doc_id] = self.index.sketch(doc_id)
        return self._sketches[doc_id]

    def pair(self, kind: str, a: Side, b: Side) -> Pair:
        """Measure A against B once per (kind, sha, sha); other paths of the same contents reuse it."""
        key = (kind, a.sha256, b.sha256)
        if key not in self._pairs:
            self._pairs[key] = self._measure(kind, a, b)
        return dataclasses.replace(self._pairs[key], a=a, b=b)

    def _measure(self, kind: str, a: Side, b: Side) -> Pair:
        edit = None
        if a.doc_id is not None and b.doc_id is not None:
            edit = estimated_edit_distance(self.sketch(a.doc_id), self.sketch(b.doc_id))
        text_a, text_b = self.text(a), self.text(b)
        if text_a is None or text_b is None:  # --no-text index: Theorem 1 estimates, no passages
            if a.doc_id is None or b.doc_id is None:
                nan = float("nan")
                return Pair(kind, a, b, nan, nan, nan, edit, "estimate")
            est = compare_sketches(self.sketch(a.doc_id), self.sketch(b.doc_id), self.params.sample_size)
            return Pair(kind, a, b, est.resemblance, est.containment_a_in_b, est.containment_b_in_a, edit, "estimate")
        sa, sb = self.shingled(a.sha256, text_a), self.shingled(b.sha256, text_b)
        da, db = sa.distinct, sb.distinct
        passages = tuple(PairPassage(p.query_start, p.query_end, p.doc_start, p.doc_end, p.text,
                                     text_b[p.doc_start:p.doc_end])
                         for p in align(sa, text_a, sb, text_b, self.params.shingle_size, self.options))
        return Pair(kind, a, b, exact_resemblance(da, db), exact_containment(da, db), exact_containment(db, da),
                    edit, "exact", passages)


def _file_evidence(row: Any) -> FileEvidence:
    return FileEvidence(row.path, row.sha256, row.size, iso_utc(row.mtime_ns / 1e9), row.mtime_ns, row.mime,
                        row.status, row.reason)


def _token_mask(shingled: Shingled, spans: list[tuple[int, int]]) -> np.ndarray:
    """Tokens lying wholly inside one of the character spans."""
    starts = np.asarray(shingled.tokens.starts)
    ends = np.asarray(shingled.tokens.ends)
    mask = np.zeros(starts.shape[0], dtype=bool)
    for start, end in spans:
        first = int(np.searchsorted(starts, start, side="left"))
        last = int(np.searchsorted(ends, end, side="right"))
        if last > first:
            mask[first:last] = True
    return mask


def _document_shares(pairs: list[Pair], measurer: _Measurer) -> tuple[DocumentShare, ...]:
    """Per file: share of its tokens inside passages shared with other files, overall and per source."""
    per_source: dict[tuple[str, str], dict[tuple[str, str], list[tuple[int, int]]]] = {}
    for pair in pairs:
        for mine, other, use_a in ((pair.a, pair.b, True), (pair.b, pair.a, False)):
            text = measurer.texts.get(mine.sha256)
            if text is None:
                continue
            if pair.kind == "identical":
                spans = [(0, len(text))]
            else:
                spans = [(p.a_start, p.a_end) if use_a else (p.b_start, p.b_end) for p in pair.passages]
            if spans:
                per_source.setdefault((mine.path, mine.sha256), {}).setdefault(
                    (other.path, other.sha256), []).extend(spans)
    out = []
    for (path, sha), sources in per_source.items():
        shingled = measurer.shingled(sha, measurer.texts[sha])
        n = max(len(shingled.tokens), 1)
        union = np.zeros(len(shingled.tokens), dtype=bool)
        shares = []
        for (src_path, src_sha), spans in sources.items():
            mask = _token_mask(shingled, spans)
            union |= mask
            if mask.any():
                shares.append(SourceShare(src_path, src_sha, float(mask.sum()) / n))
        shares.sort(key=lambda s: (-s.share, s.path))
        if shares:
            out.append(DocumentShare(path, sha, float(union.sum()) / n, len(shares), tuple(shares)))
    return tuple(sorted(out, key=lambda d: (-d.share, d.path)))


def _index_pairs(index: Any, params: Params, measurer: _Measurer) -> tuple[list[ClusterInfo], list[Pair]]:
    from scanner.services.findings import find_similar

    findings = find_similar(index, params)
    clusters: list[ClusterInfo] = []
    pairs: list[Pair] = []
    for cluster in findings.clusters:
        members = tuple(measurer.side(m.path, m.sha256) for m in cluster.members)
        clusters.append(ClusterInfo(cluster.id, cluster.kind, cluster.min_resemblance, members))
        first = members[0]
        for member in members[1:]:  # a star around the first member keeps the pair count linear
            if member.sha256 == first.sha256:
                pairs.append(Pair("identical", first, member, 1.0, 1.0, 1.0, 0, "exact"))
            else:
                pairs.append(measurer.pair("near-duplicate", first, member))
    for c in findings.containments:
        pairs.append(measurer.pair("containment", measurer.side(c.contained, c.contained_sha256),
                                   measurer.side(c.container, c.container_sha256)))
    return clusters, pairs


def _check_pairs(index: Any, params: Params, check: CheckedDocument, selection: Selection,
                 measurer: _Measurer) -> tuple[list[Pair], DocumentShare | None]:
    from scanner.services.check import CheckOptions, check_text, own_file_options

    options = own_file_options(CheckOptions(top=CHECK_TOP, threshold=selection.threshold,
                                            min_containment=selection.min_containment),
                               index, check.path, check.sha256)
    result = check_text(check.text, index, params, options)
    measurer.texts[check.sha256] = check.text
    query = Side(check.path, check.sha256, None)
    pairs, shares = [], []
    for m in result.matches:
        doc = Side(m.path, m.sha256, m.doc_id)
        doc_text = measurer.text(doc)
        pairs.append(Pair("check", query, doc, m.resemblance, m.containment_query_in_doc,
                          m.containment_doc_in_query, m.edit_distance_estimate,
                          "exact" if doc_text is not None else "estimate",
                          tuple(PairPassage(p.query_start, p.query_end, p.doc_start, p.doc_end, p.text,
                                            (doc_text or "")[p.doc_start:p.doc_end]) for p in m.passages)))
        share = result.per_source_coverage.get(m.doc_id, 0.0) if m.doc_id is not None else 0.0
        if share > 0:
            shares.append(SourceShare(m.path, m.sha256, share))
    shares.sort(key=lambda s: (-s.share, s.path))
    document = (DocumentShare(check.path, check.sha256, result.coverage, len(shares), tuple(shares))
                if shares else None)
    return pairs, document


def build_report(index: Any, params: Params, selection: Selection | None = None, *, index_path: str = "",
                 command: str = "", clock: Callable[[], float] = time.time) -> Report:
    """The report of the whole index, or of one checked document (`selection.check`).

    Args:
        params: the index's parameters; the selection's thresholds override them.
        index_path: as shown in the report (default: the index's own path), made absolute.
        command: the command line that re-creates the report.
        clock: seconds since the epoch, injected so tests can pin the time.
    """
    selection = selection or Selection()
    params = effective_params(params, selection)
    measurer = _Measurer(index, params)
    live = list(index.files(include_vanished=False))
    clusters: list[ClusterInfo] = []
    check = selection.check
    if check is None:
        clusters, pairs = _index_pairs(index, params, measurer)
        documents = _document_shares(pairs, measurer)
        files = tuple(_file_evidence(row) for row in live)
    else:
        pairs, document = _check_pairs(index, params, check, selection, measurer)
        documents = (document,) if document else ()
        matched = {p.b.sha256 for p in pairs}
        files = (FileEvidence(check.path, check.sha256, check.size, iso_utc(check.mtime_ns / 1e9), check.mtime_ns,
                              check.mime, "checked", ""),
                 *(_file_evidence(row) for row in live if row.sha256 in matched))
    kinds = [p.kind for p in pairs]
    summary = {
        "files": len(files),
        "documents": int(index.stats().documents_ok),
        "clusters": len(clusters),
        "pairs": len(pairs),
        "suspected_copies": len(pairs),
        "identical": kinds.count("identical"),
        "near_duplicates": kinds.count("near-duplicate"),
        "containments": kinds.count("containment"),
        "check_matches": kinds.count("check"),
        "documents_with_findings": len(documents),
        "passages": sum(len(p.passages) for p in pairs),
    }
    checked = None if check is None else {
        "path": check.path, "sha256": check.sha256, "size": check.size, "mtime": iso_utc(check.mtime_ns / 1e9),
        "mtime_ns": check.mtime_ns}
    return Report(
        schema_version=REPORT_SCHEMA_VERSION, tool="scanner", version=__version__, generated_at=iso_utc(clock()),
        index=os.path.abspath(index_path or str(index.path)), command=command, guarantee=guarantee_text(params),
        params=params.to_dict(),
        selection={"mode": "index" if check is None else "check", "threshold": params.resemblance_threshold,
                   "min_containment": params.min_containment, "check": checked},
        summary=summary, files=files, clusters=tuple(clusters), pairs=tuple(pairs), documents=documents,
        texts=dict(measurer.texts))
