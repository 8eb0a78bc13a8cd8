"""Gather a `Report` from an index: findings, pair measures, passages and evidence.

Why here and not in each renderer: the passages of a pair cost an alignment
of two whole texts, so they are computed once and every format shows the same
numbers. Values are exact (full shingle sets of the stored texts) whenever the
index kept the texts, and sketch estimates otherwise; each pair says which.

The index's findings are read where the scan stored them (`stored_or_found`):
clusters and containments, the passage pairs (MOSS) and each document's share
found elsewhere (Turnitin). The passages of a "passages" pair are the ones the
scan aligned and stored, never aligned again.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from scanner import __version__
from scanner.core.config import Params
from scanner.core.model import place_at
from scanner.engine.align import AlignOptions
from scanner.engine.arrays import outside
from scanner.engine.sketch import (
    Shingled,
    compare_sketches,
    estimated_edit_distances,
    exact_measures,
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
    changes: dict[str, Any] = {k: v for k, v in (("resemblance_threshold", selection.threshold),
                                                 ("min_containment", selection.min_containment),
                                                 ("passage_words", selection.min_words)) if v is not None}
    return params.replace(**changes) if changes else params


def _stored_passage(p: Any, text_a: str | None, text_b: str | None, places_a: Sequence[tuple[int, int, str]],
                    places_b: Sequence[tuple[int, int, str]]) -> PairPassage:
    """A passage as the index stores it (`StoredPassage`), with the text it spans on each side, its kind,
    (a semantic one) its similarity, and where on each side it lies when not in the body (`places_a`, `_b`:
    each document's `DocumentInfo.places`)."""
    return PairPassage(p.a_start, p.a_end, p.b_start, p.b_end, text_a or "", text_b or "", p.kind, p.similarity,
                       place_at(places_a, p.a_start, p.a_end), place_at(places_b, p.b_start, p.b_end))


class _Measurer:
    """Per-report caches of texts, shingles and sketches, so a document in many pairs is read once."""

    def __init__(self, index: Any, params: Params, ocr: frozenset[str] = frozenset(), model: Any = None) -> None:
        self.index = index
        self.params = params
        self.model = model  # the semantic pass's sentence model, for the pairs aligned here
        self.base = index.base.prepared(params)  # the base text no measure counts, as the findings
        self.ocr = ocr  # SHA-256s of the documents whose text was read by OCR
        self.options = AlignOptions(min_tokens=params.guaranteed_run)  # what `check` uses: same passages
        self.texts: dict[str, str] = {}
        self._doc_ids: dict[str, int | None] = {}
        self._sides: dict[str, Any] = {}  # sha256 -> services.passages.AlignSide
        self._sketches: dict[int, Any] = {}
        self._places: dict[int, tuple[tuple[int, int, str], ...]] = {}
        self._pairs: dict[tuple[str, str, str], Pair] = {}

    def doc_id(self, sha256: str) -> int | None:
        if sha256 not in self._doc_ids:
            self._doc_ids[sha256] = self.index.doc_id_for_sha256(sha256)
        return self._doc_ids[sha256]

    def side(self, path: str, sha256: str) -> Side:
        return Side(path, sha256, self.doc_id(sha256), ocr=sha256 in self.ocr)

    def text(self, side: Side) -> str | None:
        if side.sha256 not in self.texts:
            if side.doc_id is None:
                return None
            text = self.index.text(side.doc_id)
            if text is None:
                return None
            self.texts[side.sha256] = text
        return self.texts[side.sha256]

    def side_of(self, sha256: str, text: str) -> Any:
        """The text ready to align (`AlignSide`: shingles, anchors, and its query preparation once made)."""
        from scanner.services.prepared import align_side

        if sha256 not in self._sides:
            self._sides[sha256] = align_side(text, self.params, self.base)
        return self._sides[sha256]

    def shingled(self, sha256: str, text: str) -> Shingled:
        return self.side_of(sha256, text).shingled

    def sketch(self, doc_id: int) -> Any:
        if doc_id not in self._sketches:
            self._sketches[doc_id] = self.index.sketch(doc_id)
        return self._sketches[doc_id]

    def pair(self, kind: str, a: Side, b: Side, shared_words: int | None = None) -> Pair:
        """Measure A against B once per (kind, sha, sha); other paths of the same contents reuse it."""
        key = (kind, a.sha256, b.sha256)
        if key not in self._pairs:
            self._pairs[key] = self._measure(kind, a, b)
        return dataclasses.replace(self._pairs[key], a=a, b=b, shared_words=shared_words)

    def aligned(self, a_sha: str, text_a: str, b_sha: str, text_b: str, options: AlignOptions) -> list[Any]:
        """A's and B's passages (A the aligner's query), each marked verbatim, reworded or semantic."""
        from scanner.services.pair_alignment import pair_passages

        return pair_passages(self.side_of(a_sha, text_a), self.side_of(b_sha, text_b), self.params, options,
                             model=self.model, base=self.base)

    def _passages(self, kind: str, a: Side, b: Side, text_a: str, text_b: str) -> tuple[PairPassage, ...]:
        if kind == "passages":  # the scan aligned them once and stored them: read, never align again
            stored = (self.index.passages.pair(a.doc_id, b.doc_id)
                      if a.doc_id is not None and b.doc_id is not None else None)
            found: Sequence[Any] = stored.passages if stored is not None else ()
        else:
            found = self.aligned(a.sha256, text_a, b.sha256, text_b, self.options)
        places_a, places_b = self.places(a), self.places(b)
        return tuple(_stored_passage(p, text_a, text_b, places_a, places_b) for p in found)

    def places(self, side: Side) -> tuple[tuple[int, int, str], ...]:
        """Where the side's text is not its body (`DocumentInfo.places`), read once a document."""
        if side.doc_id is None:
            return ()
        if side.doc_id not in self._places:
            self._places[side.doc_id] = self.index.document(side.doc_id).places
        return self._places[side.doc_id]

    def _measure(self, kind: str, a: Side, b: Side) -> Pair:
        """The pair's measures and passages; its edit-distance estimate comes after, with every pair's at
        once (`with_edit_distances`)."""
        text_a, text_b = self.text(a), self.text(b)
        if text_a is None or text_b is None:  # --no-text index: Theorem 1 estimates, no passages
            if a.doc_id is None or b.doc_id is None:
                nan = float("nan")
                return Pair(kind, a, b, nan, nan, nan, None, "estimate", resemblance_error=nan,
                            containment_a_in_b_error=nan, containment_b_in_a_error=nan)
            est = compare_sketches(self.sketch(a.doc_id), self.sketch(b.doc_id), self.params.sample_size,
                                   excluded=self.base.fingerprints)
            r_error, a_error, b_error = est.errors
            return Pair(kind, a, b, est.resemblance, est.containment_a_in_b, est.containment_b_in_a, None, "estimate",
                        resemblance_error=r_error, containment_a_in_b_error=a_error, containment_b_in_a_error=b_error)
        base = self.base.fingerprints
        resemblance, a_in_b, b_in_a = exact_measures(*(outside(self.shingled(sha, text).distinct, base)
                                                       for sha, text in ((a.sha256, text_a), (b.sha256, text_b))))
        return Pair(kind, a, b, resemblance, a_in_b, b_in_a, None, "exact", self._passages(kind, a, b, text_a, text_b))

    def with_edit_distances(self, pairs: list[Pair]) -> list[Pair]:
        """The pairs with Coates' estimate of their edit distance, all in one batched call on every core (those
        it was not given yet and whose documents are indexed): 120 us a pair of long manual pages."""
        todo = [(k, p.a.doc_id, p.b.doc_id) for k, p in enumerate(pairs)
                if p.edit_distance_estimate is None and p.a.doc_id is not None and p.b.doc_id is not None]
        estimates = estimated_edit_distances([(self.sketch(a), self.sketch(b)) for _, a, b in todo], workers=-1)
        out = list(pairs)
        for (k, _, _), estimate in zip(todo, estimates):
            out[k] = dataclasses.replace(out[k], edit_distance_estimate=estimate)
        return out


def _file_evidence(row: Any) -> FileEvidence:
    return FileEvidence(row.path, row.sha256, row.size, iso_utc(row.mtime_ns / 1e9), row.mtime_ns, row.mime,
                        row.status, row.reason)


def _copies(findings: Any) -> dict[str, list[str]]:
    """sha256 -> the live paths holding it, for contents found under two paths or more (identical copies)."""
    paths: dict[str, set[str]] = {}
    for cluster in findings.clusters:
        for member in cluster.members:
            paths.setdefault(member.sha256, set()).add(member.path)
    for document in findings.documents:
        paths.setdefault(document.sha256, set()).update((document.path, *document.other_paths))
    return {sha: sorted(found) for sha, found in paths.items() if len(found) > 1}


def _document_shares(findings: Any, min_share: float) -> tuple[DocumentShare, ...]:
    """Turnitin's line for every document with passages found elsewhere, or with enough very common text
    (`DocumentFinding.listed_at`), one row per path holding it.

    The shares are the stored passages' (`findings.documents`); a file with identical copies is, as ever,
    wholly found in each of them (share 1).
    """
    copies = _copies(findings)
    passages = {d.sha256: d for d in findings.documents}
    rows = []
    for sha in sorted(passages.keys() | copies.keys()):
        found = passages.get(sha)
        holders = copies.get(sha) or ([found.path] if found is not None else [])
        for path in holders:
            sources = [SourceShare(other, sha, 1.0) for other in holders if other != path]
            if found is not None:
                sources += [SourceShare(s.path, s.sha256, s.share) for s in found.sources]
            sources.sort(key=lambda s: (-s.share, s.path))
            share = 1.0 if len(holders) > 1 else found.share if found is not None else 0.0
            common = found.common if found is not None else 0.0
            if (sources and share >= min_share) or (found is not None and found.listed_at(min_share)):
                rows.append(DocumentShare(path, sha, share, len(sources), tuple(sources), common))
    return tuple(sorted(rows, key=lambda d: (-d.share, -d.common_share, d.path)))


def _passages_pairs(findings: Any, reported: set[frozenset[str]], measurer: _Measurer) -> list[Pair]:
    """A "passages" pair for every passage pair no other kind reports, most shared words first.

    Which of two documents took the text from the other cannot be told from the texts; B is the one the
    passages make up more of (the likelier borrower, and PAN's suspicious side as in the other kinds).
    """
    out = []
    for found in sorted(findings.passage_pairs, key=lambda p: -p.shared_words):  # stable: the findings' order
        if frozenset((found.a.sha256, found.b.sha256)) in reported or found.a.sha256 == found.b.sha256:
            continue
        a, b = found.a, found.b
        if found.share_a > found.share_b:
            a, b = b, a
        out.append(measurer.pair("passages", measurer.side(a.path, a.sha256), measurer.side(b.path, b.sha256),
                                 found.shared_words))
    return out


def _index_findings(index: Any, params: Params, selection: Selection, measurer: _Measurer
                    ) -> tuple[list[ClusterInfo], list[Pair], tuple[DocumentShare, ...], Any]:
    """Clusters, pairs and documents of the whole index, from its stored (or freshly computed) findings."""
    from scanner.services.findings import stored_or_found

    findings = stored_or_found(index, params)
    clusters: list[ClusterInfo] = []
    pairs: list[Pair] = []
    for cluster in findings.clusters:
        members = tuple(measurer.side(m.path, m.sha256) for m in cluster.members)
        clusters.append(ClusterInfo(cluster.id, cluster.kind, cluster.min_resemblance, members,
                                    cluster.min_resemblance_error))
        first = members[0]
        for member in members[1:]:  # a star around the first member keeps the pair count linear
            if member.sha256 == first.sha256:
                pairs.append(Pair("identical", first, member, 1.0, 1.0, 1.0, 0, "exact"))
            else:
                pairs.append(measurer.pair("near-duplicate", first, member))
    for c in findings.containments:
        pairs.append(measurer.pair("containment", measurer.side(c.contained, c.contained_sha256),
                                   measurer.side(c.container, c.container_sha256)))
    reported = {frozenset((p.a.sha256, p.b.sha256)) for p in pairs}
    pairs += _passages_pairs(findings.at_least(selection.min_share), reported, measurer)
    return clusters, measurer.with_edit_distances(pairs), _document_shares(findings, selection.min_share), findings


def _check_pairs(index: Any, params: Params, check: CheckedDocument, selection: Selection,
                 measurer: _Measurer) -> tuple[list[Pair], DocumentShare | None]:
    from scanner.services.check import CheckOptions, check_text, own_file_options

    options = own_file_options(CheckOptions(top=CHECK_TOP, threshold=selection.threshold,
                                            min_containment=selection.min_containment, semantic=selection.semantic),
                               index, check.path, check.sha256)
    result = check_text(check.text, index, params, options)
    measurer.texts[check.sha256] = check.text
    query = Side(check.path, check.sha256, None, ocr=check.ocr)
    pairs, shares = [], []
    for m in result.matches:
        doc = Side(m.path, m.sha256, m.doc_id, ocr=m.sha256 in measurer.ocr)
        doc_text = measurer.text(doc)
        r_error, a_error, b_error = m.errors
        pairs.append(Pair("check", query, doc, m.resemblance, m.containment_query_in_doc,
                          m.containment_doc_in_query, m.edit_distance_estimate,
                          "exact" if doc_text is not None else "estimate",
                          tuple(PairPassage(p.query_start, p.query_end, p.doc_start, p.doc_end, check.text,
                                            doc_text or "", p.kind, p.similarity, p.found_in, p.doc_found_in)
                                for p in m.passages), resemblance_error=r_error, containment_a_in_b_error=a_error,
                          containment_b_in_a_error=b_error))
        share = result.per_source_coverage.get(m.doc_id, 0.0) if m.doc_id is not None else 0.0
        if share > 0:
            shares.append(SourceShare(m.path, m.sha256, share))
    shares.sort(key=lambda s: (-s.share, s.path))
    document = (DocumentShare(check.path, check.sha256, result.coverage, len(shares), tuple(shares))
                if shares and result.coverage >= selection.min_share else None)
    return pairs, document


def _semantic_model(index: Any, selection: Selection) -> str | None:
    """The sentence model behind the report's semantic passages: for a check, the one given to align it;
    for the index, the one its scan stored the passages with (None: no semantic pass)."""
    if selection.check is not None:
        return None if selection.semantic is None else str(selection.semantic.key)
    stored = (index.passages.key() or {}).get("semantic")
    return str(stored) if stored else None


def build_report(index: Any, params: Params, selection: Selection | None = None, *, index_path: str = "",
                 command: str = "", clock: Callable[[], float] = time.time) -> Report:
    """The report of the whole index, or of one checked document (`selection.check`).

    Args:
        params: the index's parameters; the selection's thresholds and minimum passage length override them.
        index_path: as shown in the report (default: the index's own path), made absolute.
        command: the command line that re-creates the report.
        clock: seconds since the epoch, injected so tests can pin the time.
    """
    selection = selection or Selection()
    params = effective_params(params, selection)
    live = list(index.files(include_vanished=False))
    measurer = _Measurer(index, params, ocr=frozenset(row.sha256 for row in live if row.status == "ocr"),
                         model=selection.semantic)
    clusters: list[ClusterInfo] = []
    check = selection.check
    min_words: int | None = None
    unaligned = common_documents = 0
    common_limit = template_note = None
    if check is None:
        clusters, pairs, documents, findings = _index_findings(index, params, selection, measurer)
        template_note = findings.template_note()
        min_words, unaligned = findings.min_words, findings.unaligned
        common_limit, common_documents = findings.common_limit, findings.common_documents
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
        "passages_pairs": kinds.count("passages"),
        "documents_with_findings": len(documents),
        "passages": sum(len(p.passages) for p in pairs),
        "reworded_passages": sum(p.reworded for p in pairs),
        "semantic_passages": sum(p.semantic for p in pairs),
        "unaligned_documents": unaligned,
        "very_common_documents": common_documents,
    }
    checked = None if check is None else {
        "path": check.path, "sha256": check.sha256, "size": check.size, "mtime": iso_utc(check.mtime_ns / 1e9),
        "mtime_ns": check.mtime_ns}
    return Report(
        schema_version=REPORT_SCHEMA_VERSION, tool="scanner", version=__version__, generated_at=iso_utc(clock()),
        index=os.path.abspath(index_path or str(index.path)), command=command, guarantee=guarantee_text(params),
        params=params.to_dict(),
        selection={"mode": "index" if check is None else "check", "threshold": params.resemblance_threshold,
                   "min_containment": params.min_containment, "check": checked, "min_words": min_words,
                   "min_share": selection.min_share, "semantic_model": _semantic_model(index, selection),
                   "very_common_limit": common_limit,
                   "base": [b.to_json() for b in index.base.listed()], "template_note": template_note},
        summary=summary, files=files, clusters=tuple(clusters), pairs=tuple(pairs), documents=documents,
        texts=dict(measurer.texts))
