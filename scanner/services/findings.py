"""The findings of an index: clusters of near-duplicates and containment pairs (Broder et al. 1997),
and the passages documents share with each other (issue 20).

Pairs come from the postings (`Index.pair_count_arrays`: the <shingle, id> -> <id, id, count>
phases, in numpy over fingerprint ranges), are filtered by their shared count (`cluster.worth_scoring`), scored from the
sketches (Theorem 1), then joined by union-find. Passage pairs and each document's share found elsewhere
are read from the passages the scan stored (`services.passages`). The findings of the index's content are
stored once computed (`Index.store_findings`), so the CLI, the TUI and the reports read them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scanner.core.config import Params
from scanner.core.model import disk_first, plain
from scanner.engine.arrays import covered_by_group, difference, distinct
from scanner.engine.cluster import (
    ScoredPair,
    clusters_from,
    containments_from,
    min_shared_share,
    near_duplicate_links,
    worth_scoring,
)
from scanner.engine.sketch import theorem1_estimates
from scanner.index.base import BaseText
from scanner.index.passages import LivePassages
from scanner.index.store import Index

FINDINGS_FORMAT = 8  # of stored findings: bump when Findings or what they are made from changes (2: semantic
# passages; 3: heads; 4: no shingle held by 5 documents or fewer is very common; 5: each document's very common
# share; 6: the base texts left out; 7: containments' resemblance error; 8: clusters' lowest resemblance's error)
# a document without passages is still listed when at least this share of its fingerprints is very common:
# text too common to pair (Broder) is not evidence between two documents, but six essays of a class of sixty
# that each hold the same copied paragraph must not vanish from the list because the paragraph is "common"
COMMON_LISTED = 0.05
HEAD_ROWS = 2_000  # rows of each list a stored head keeps: a first screen's worth (the TUI's tables)
HEAD_SOURCES = 20  # sources of each document a head keeps (a document of a large index has hundreds)
_HEAD = "#head"  # suffix of a stored head's key


# a set of this many documents or more, where one shares passages with this share of the others or more, is
# told about base text (`Findings.template_note`): 12 essays on one template paired all 66 pairs
WIDELY_SHARED_MIN_DOCS = 4
WIDELY_SHARED = 0.8


def common_note(documents: int, limit: int | None) -> str | None:
    """What every face says of the very common text, when documents hold some: it is in no share found
    elsewhere, so the reader is told where it went."""
    if not documents:
        return None
    return (f"{documents} document(s) hold very common text (fingerprints more than {limit} documents hold), "
            f"which is evidence between no two of them and in no share found elsewhere; its share is shown as "
            f"\"common\", and a document where it makes {COMMON_LISTED:.0%} or more of the fingerprints is listed "
            f"even with no passage.")


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
    min_resemblance_error: float | None = None  # that estimate's 95 % half-width

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
    resemblance_error: float = 0.0  # the same, of the resemblance

    def to_json(self) -> dict[str, Any]:
        return {"contained": self.contained, "container": self.container,
                "containment": round(self.containment, 6), "containment_error": round(self.error, 3),
                "resemblance": round(self.resemblance, 6), "resemblance_error": round(self.resemblance_error, 3)}


@dataclass(frozen=True)
class PassagePairFinding:
    """MOSS's line: two documents and the words they share in passages of the minimum length or more."""

    a: Member
    b: Member
    shared_words: int  # on the side holding fewer
    share_a: float  # of A's tokens inside the passages
    share_b: float
    passages: int
    reworded: int  # of the passages, those found from reworded sentences rather than verbatim runs
    semantic: int = 0  # of the passages, those found by meaning (a sentence model), with few words in common

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.path, "b": self.b.path, "shared_words": self.shared_words,
                "share_a": round(self.share_a, 4), "share_b": round(self.share_b, 4), "passages": self.passages,
                "reworded_passages": self.reworded, "semantic_passages": self.semantic}


@dataclass(frozen=True)
class SourceFinding:
    path: str
    sha256: str
    share: float


@dataclass(frozen=True)
class DocumentFinding:
    """Turnitin's line: this share of the document lies in passages found in other documents."""

    path: str
    sha256: str
    share: float
    words: int
    n_tokens: int
    sources: tuple[SourceFinding, ...]
    other_paths: tuple[str, ...] = ()  # identical copies of it (the same document under other names)
    n_sources: int | None = None  # how many sources it has, when `sources` holds only the first (a head's)
    common: float = 0.0  # of its fingerprints, those more documents hold than the very-common limit: text no
    # pair is made of, so not inside `share`; shown beside it so that no figure leaves it out unsaid

    @property
    def source_count(self) -> int:
        return len(self.sources) if self.n_sources is None else self.n_sources

    def listed_at(self, min_share: float) -> bool:
        """Whether the list of documents shows it at `--min-share`: by its share found elsewhere, or by its
        very common text (`COMMON_LISTED`)."""
        return (self.share > 0 and self.share >= min_share) or self.common >= max(min_share, COMMON_LISTED)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "share": round(self.share, 4), "words": self.words,
                "tokens": self.n_tokens, "sources": [{"path": s.path, "sha256": s.sha256, "share": round(s.share, 4)}
                                                     for s in self.sources],
                "common_share": round(self.common, 4),
                **({"identical_copies": list(self.other_paths)} if self.other_paths else {})}


@dataclass(frozen=True)
class Findings:
    clusters: tuple[Cluster, ...]
    containments: tuple[ContainmentFinding, ...]
    pairs_considered: int
    pairs_scored: int
    threshold: float
    min_containment: float
    passage_pairs: tuple[PassagePairFinding, ...] = ()
    documents: tuple[DocumentFinding, ...] = ()
    min_words: int = 0  # of the passages counted
    unaligned: int = 0  # live documents whose passages the scan has not aligned yet (passages then incomplete)
    common_limit: int | None = None  # a fingerprint more documents hold is very common (None: none is)
    common_documents: int = 0  # live documents holding very common text (listed: those past COMMON_LISTED)
    totals: dict[str, int] = field(default_factory=dict)  # a head's (`head`) full counts; empty: all of it
    base: tuple[BaseText, ...] = ()  # the base texts no finding counts (`scanner scan --base`)
    widely_shared: int = 0  # documents sharing passages with nearly every other (`widely_shared`)

    def to_json(self) -> dict[str, Any]:
        return plain(self)

    def total(self, name: str) -> int:
        """How many `name` ("clusters", "containments", "passage_pairs", "documents") there are in all."""
        return self.totals.get(name, len(getattr(self, name)))

    @property
    def found_elsewhere(self) -> int:
        """Documents with text in a passage found in another (the list also holds documents listed for
        their very common text alone, after them)."""
        if "found_elsewhere" in self.totals:
            return self.totals["found_elsewhere"]
        return sum(1 for d in self.documents if d.share > 0)

    @property
    def suspected(self) -> int:
        """Near-duplicate and containment pairs: the non-identical members of clusters (each with the
        cluster's first) and the containments."""
        if "suspected" in self.totals:
            return self.totals["suspected"]
        return sum(1 for c in self.clusters if c.kind != "identical"
                   for m in c.members[1:] if m.sha256 != c.members[0].sha256) + len(self.containments)

    def common_note(self) -> str | None:
        return common_note(self.common_documents, self.common_limit)

    def template_note(self) -> str | None:
        """What every face says when most documents share passages with nearly every other: text they all
        hold by design pairs them all, and base text is the way to leave it out."""
        if self.widely_shared < WIDELY_SHARED_MIN_DOCS:
            return None
        held = "even with the base text left out" if self.base else "a template, starter code or a reading?"
        return (f"{self.widely_shared} document(s) share passages with {WIDELY_SHARED:.0%} or more of the others "
                f"({held}): text every document holds by design pairs them all; `scanner base FILE` (or `scan "
                f"--base FILE`) leaves it out of every finding.")

    def head(self, rows: int, **counts: int) -> "Findings":
        """The first `rows` of each list, with every list's full length (and `counts` of the index): what a
        first screen shows. Stored beside the findings, so it is read without parsing all of them."""
        lists = ("clusters", "containments", "passage_pairs", "documents")
        documents = tuple(replace(d, sources=d.sources[:HEAD_SOURCES], n_sources=d.source_count)
                          if len(d.sources) > HEAD_SOURCES else d for d in self.documents[:rows])
        return replace(self, clusters=self.clusters[:rows], containments=self.containments[:rows],
                       passage_pairs=self.passage_pairs[:rows], documents=documents,
                       totals={**{name: self.total(name) for name in lists}, "suspected": self.suspected,
                               "found_elsewhere": self.found_elsewhere, **counts})

    @property
    def is_head(self) -> bool:
        return any(self.total(name) > len(getattr(self, name))
                   for name in ("clusters", "containments", "passage_pairs", "documents"))

    def at_least(self, min_share: float) -> "Findings":
        """Only the documents, and the passage pairs, with at least `min_share` of a document found elsewhere
        (and the documents with that much very common text: `DocumentFinding.listed_at`)."""
        if min_share <= 0:
            return self
        return replace(self, documents=tuple(d for d in self.documents if d.listed_at(min_share)),
                       passage_pairs=tuple(p for p in self.passage_pairs if max(p.share_a, p.share_b) >= min_share))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Findings":
        def member(m: dict[str, Any]) -> Member:
            return Member(m["path"], m["sha256"])

        return cls(
            clusters=tuple(Cluster(c["id"], c["kind"], tuple(member(m) for m in c["members"]), c["min_resemblance"],
                                   c["min_resemblance_error"]) for c in data["clusters"]),
            containments=tuple(ContainmentFinding(**c) for c in data["containments"]),
            pairs_considered=data["pairs_considered"], pairs_scored=data["pairs_scored"],
            threshold=data["threshold"], min_containment=data["min_containment"],
            passage_pairs=tuple(PassagePairFinding(**{**p, "a": member(p["a"]), "b": member(p["b"])})
                                for p in data["passage_pairs"]),
            documents=tuple(DocumentFinding(**{**d, "sources": tuple(SourceFinding(**s) for s in d["sources"]),
                                               "other_paths": tuple(d["other_paths"])}) for d in data["documents"]),
            min_words=data["min_words"], unaligned=data["unaligned"], common_limit=data["common_limit"],
            common_documents=data["common_documents"],
            totals=dict(data.get("totals") or {}), base=tuple(BaseText(**b) for b in data["base"]),
            widely_shared=data["widely_shared"])


def findings_key(index: Index, params: Params) -> str:
    """What stored findings were computed from: the index's generation, then every decision parameter."""
    decisions = {"format": FINDINGS_FORMAT, "threshold": params.resemblance_threshold,
                 "min_containment": params.min_containment, "common_share": params.common_shingle_share,
                 "min_words": params.min_passage_words, "passages": index.passages.key(),
                 "base": index.base.digest(),
                 "aligned": index.passages.aligned_count()}  # an alignment finished later tells more
    return f"{index.generation()}:{json.dumps(decisions, sort_keys=True)}"


def stored_or_found(index: Index, params: Params, *, dask: Any = None) -> Findings:
    """The findings of the index's present content: stored ones when they exist, else computed (and stored
    when the index is open for writing). What every face calls."""
    key = findings_key(index, params)
    stored = index.stored_findings(key)
    if stored is not None:
        findings = Findings.from_json(json.loads(stored))
    else:
        findings = find_similar(index, params, dask=dask)
        if not index.readonly:
            index.store_findings(key, json.dumps(findings.to_json()), index.generation())
    if not index.readonly and not index.has_stored_findings(key + _HEAD):
        index.store_findings(key + _HEAD, json.dumps(_head_of(index, findings).to_json()), index.generation())
    return findings


def stored_head(index: Index, params: Params, *, dask: Any = None) -> Findings:
    """The first HEAD_ROWS of each list of the findings, with the full counts (`Findings.head`), and the
    index's live documents and files: read alone when stored (a 100,000-document index's findings take
    seconds to parse; their head, milliseconds), else from `stored_or_found`."""
    stored = index.stored_findings(findings_key(index, params) + _HEAD)
    if stored is not None:
        return Findings.from_json(json.loads(stored))
    return stored_or_found(index, params, dask=dask)  # all of it (and its head stored, when the index is writable)


def _head_of(index: Index, findings: Findings) -> Findings:
    stats = index.stats()
    return findings.head(HEAD_ROWS, documents_ok=stats.documents_ok, files_live=stats.files_live)


def find_similar(index: Index, params: Params, *, sketch_cache: int = 50_000, dask: Any = None) -> Findings:
    """Clusters and containment pairs among the live documents of `index`.

    Identical files (same SHA-256) share a document; lexically-equivalent
    documents are joined next; only one representative of each such group is
    scored. Pairs come from the postings (`Index.pair_count_arrays`, or the
    same computation on a Dask cluster when `dask` is a `distributed.Client`),
    are filtered by their shared count, then scored from the sketches (Theorem 1).
    """
    threshold, min_c = params.resemblance_threshold, params.min_containment
    base = index.base.fingerprints(params)  # base text counts in no pair, no share, no sample
    stored_base = index.base.as_postings(params)
    n_fps = index.fingerprint_counts()
    if base.shape[0]:  # each document's winnowed fingerprints less its base text's, read first
        base_held = np.zeros(n_fps.shape[0], dtype=np.int64)
        index.common_held(params.common_shingle_share, n_fps.shape[0], base=stored_base, base_held=base_held)
        n_fps = n_fps - base_held
    if dask is None:  # the very common fingerprints of each document counted in the same reading
        common_held = np.zeros(n_fps.shape[0], dtype=np.int64)
        pair_arrays = index.pair_count_arrays(params.common_shingle_share, common_held=common_held, base=stored_base)
    else:
        from scanner.services.scan.dask import pair_count_arrays_dask

        pair_arrays = pair_count_arrays_dask(index, params.common_shingle_share, dask,
                                             min_shared_share=min_shared_share(threshold, min_c), base=stored_base,
                                             n_fps=n_fps)
        common_held = index.common_held(params.common_shingle_share, n_fps.shape[0], base=stored_base)
    # Memory stays proportional to the findings, not to the index (issue 9: at 1M documents, per-document
    # Python dicts cost more than the pair counting): lexical groups and multi-file documents come from SQL,
    # fingerprint counts as one numpy array, file rows only for the documents that end up in a finding.
    rep_of = index.lexical_representatives()  # only documents sharing their canonical text with another
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

    scored = list(_score(index, sorted(candidates.items()), n_fps, params, sketch_cache, base))
    linked = near_duplicate_links(scored, threshold)  # a lopsided pair is a containment, not also a link
    contained = list(containments_from(scored, threshold, min_c))
    involved = set(rep_of) | set(rep_of.values()) | index.documents_with_copies()
    involved |= {d for p in linked for d in (p.a, p.b)} | {d for c in contained for d in (c.contained, c.container)}
    by_doc: dict[int, list[Member]] = {}
    for path, sha, doc_id in index.live_files_of(sorted(involved)):
        by_doc.setdefault(doc_id, []).append(Member(path, sha))

    lowest: dict[int, tuple[float, float]] = {}  # document -> lowest resemblance of a pair linking it, its error
    for pair in linked:
        for d in (pair.a, pair.b):
            lowest[d] = min(lowest.get(d, (1.0, 0.0)), (pair.resemblance, pair.resemblance_error))
    groups: list[tuple[str, tuple[Member, ...], tuple[float, float] | None]] = []
    for group in clusters_from(sorted(involved), rep_of.items(), linked, threshold, min_size=1):
        members = tuple(sorted((m for d in group for m in by_doc.get(d, [])), key=lambda m: disk_first(m.path)))
        if len(members) < 2:
            continue
        if len({m.sha256 for m in members}) == 1:
            kind = "identical"
        elif len({rep_of.get(d, d) for d in group}) == 1:
            kind = "lexical"
        else:
            kind = "near-duplicate"
        min_res = min((lowest[d] for d in group if d in lowest), default=None)  # with its error
        groups.append((kind, members, min_res if kind == "near-duplicate" else None))
    by_sha_nodoc: dict[str, list[Member]] = {}  # identical files with no document (too short, errors...)
    for path, sha in index.identical_files_without_document():
        by_sha_nodoc.setdefault(sha, []).append(Member(path, sha))
    for sha, copies in by_sha_nodoc.items():
        if len(copies) > 1 and sha != _EMPTY_SHA256:
            groups.append(("identical", tuple(copies), None))
    groups.sort(key=lambda g: (-len(g[1]), g[1][0].path))
    clusters = tuple(Cluster(i + 1, kind, members, *(low if low is not None else (None, None)))
                     for i, (kind, members, low) in enumerate(groups))

    first = {d: ms[0] for d, ms in by_doc.items() if ms}
    containments = tuple(sorted((
        ContainmentFinding(first[c.contained].path, first[c.container].path, c.containment, c.resemblance,
                           first[c.contained].sha256, first[c.container].sha256, c.error, c.resemblance_error)
        for c in contained if c.contained in first and c.container in first),
        key=lambda c: (-c.containment, c.contained, c.container)))  # ties by path, never by id
    common = np.divide(common_held, n_fps, out=np.zeros(n_fps.shape[0]), where=n_fps > 0)  # read once consumed
    live, limit = index.pairing_inputs(params.common_shingle_share)
    passage_pairs, documents, min_words, widely = _passage_findings(index, params, common, int(live.shape[0]))
    unaligned = int(difference(live, index.passages.aligned_ids()).shape[0])
    return Findings(clusters, containments, considered, len(scored), threshold, min_c, passage_pairs, documents,
                    min_words, unaligned, limit, int(np.count_nonzero(common_held)), base=tuple(index.base.listed()),
                    widely_shared=widely)


@dataclass(frozen=True)
class SourceShare:
    doc_id: int
    share: float  # of the document's tokens inside passages shared with this source
    words: int


@dataclass(frozen=True)
class DocumentShare:
    """Turnitin's line: this share of the document is found in these sources."""

    doc_id: int
    n_tokens: int
    share: float  # of its tokens inside a passage shared with any other document
    words: int
    sources: tuple[SourceShare, ...]


def document_shares(index: Index, live: LivePassages) -> list[DocumentShare]:
    """Every document of the live passage pairs (`PassageTable.live_arrays`), with its share, highest first:
    its ranges in passages with each source, and with all of them, each counted once."""
    if live.pair.shape[0] == 0:
        return []
    doc = np.concatenate((live.doc_a[live.pair], live.doc_b[live.pair]))
    source = np.concatenate((live.doc_b[live.pair], live.doc_a[live.pair]))
    first, stop = np.concatenate((live.a_first, live.b_first)), np.concatenate((live.a_stop, live.b_stop))
    docs, doc_row = np.unique(doc, return_inverse=True)
    words = covered_by_group(doc_row, first, stop, docs.shape[0])
    width = int(source.max()) + 1
    keys, key_row = np.unique(doc_row * width + source, return_inverse=True)  # (document, source)
    with_source = covered_by_group(key_row, first, stop, keys.shape[0])
    tokens = index.token_counts(docs.tolist())
    n = np.maximum(np.fromiter((tokens.get(d, 0) for d in docs.tolist()), dtype=np.int64, count=docs.shape[0]), 1)
    key_doc, key_source = keys // width, keys % width
    source_share = with_source / n[key_doc]
    order = np.lexsort((key_source, -source_share, key_doc))  # each document's sources, highest share first
    bounds = np.searchsorted(key_doc[order], np.arange(docs.shape[0] + 1))
    sources = [SourceShare(src, share, count) for src, share, count in
               zip(key_source[order].tolist(), source_share[order].tolist(), with_source[order].tolist())]
    share = words / n
    out = [DocumentShare(d, count, fraction, held, tuple(sources[lo:hi])) for d, count, fraction, held, lo, hi in
           zip(docs.tolist(), n.tolist(), share.tolist(), words.tolist(), bounds[:-1].tolist(), bounds[1:].tolist())]
    out.sort(key=lambda d: (-d.share, d.doc_id))
    return out


def widely_shared(doc_a: np.ndarray, doc_b: np.ndarray, n_live: int) -> int:
    """How many documents share passages with WIDELY_SHARED of the others or more (none below
    WIDELY_SHARED_MIN_DOCS documents): what text every document holds by design (a template, a handed-out
    reading) makes of a small set, where no text is "very common"."""
    if n_live < WIDELY_SHARED_MIN_DOCS or doc_a.shape[0] == 0:
        return 0
    partners = np.bincount(np.concatenate((doc_a, doc_b)))
    return int(np.count_nonzero(partners >= WIDELY_SHARED * (n_live - 1)))


def _passage_findings(index: Index, params: Params, common: np.ndarray, n_live: int) -> tuple[
        tuple[PassagePairFinding, ...], tuple[DocumentFinding, ...], int, int]:
    """Passage pairs, most shared words first, and every document's share found elsewhere, from the stored
    passages, with its very common share (`common`, by id); the documents named by their first live path
    (their other paths are identical copies). A document without passages is listed by its very common
    share alone (`COMMON_LISTED`). Last, `widely_shared` of the `n_live` documents."""
    stored_key = index.passages.key() or {}
    stored_min = stored_key.get("min_words", 0)
    min_words = max(params.min_passage_words, stored_min if isinstance(stored_min, int) else 0)  # none shorter stored
    stored = index.passages.live_arrays(min_words)
    shares = document_shares(index, stored)
    with_passages = distinct(np.concatenate((stored.doc_a, stored.doc_b)))
    common_only = difference(np.flatnonzero(common >= COMMON_LISTED), with_passages)
    involved = distinct(np.concatenate((with_passages, common_only))).tolist()
    paths: dict[int, list[Member]] = {}
    for path, sha, doc_id in index.live_files_of(involved):
        paths.setdefault(doc_id, []).append(Member(path, sha))
    tokens = {d.doc_id: d.n_tokens for d in shares}
    found = []
    for doc_a, doc_b, words_a, words_b, held, reworded, semantic in zip(
            stored.doc_a.tolist(), stored.doc_b.tolist(), stored.words_a.tolist(), stored.words_b.tolist(),
            stored.passage_counts().tolist(), stored.kind_counts("reworded").tolist(),
            stored.kind_counts("semantic").tolist()):
        if doc_a in paths and doc_b in paths:
            sides = [(paths[doc_a][0], words_a / max(tokens.get(doc_a, 1), 1)),
                     (paths[doc_b][0], words_b / max(tokens.get(doc_b, 1), 1))]
            (a, share_a), (b, share_b) = sorted(sides, key=lambda side: side[0].path)  # not by id (below)
            found.append(PassagePairFinding(a, b, min(words_a, words_b), share_a, share_b, held, reworded,
                                            semantic))
    # ties in paths, never in ids: ids follow the order a scan's workers finished, and the same folder
    # scanned again must list the same findings in the same order
    found.sort(key=lambda f: (-f.shared_words, f.a.path, f.b.path))
    passage_pairs = tuple(found)
    found_elsewhere = [
        DocumentFinding(paths[d.doc_id][0].path, paths[d.doc_id][0].sha256, d.share, d.words, d.n_tokens,
                        tuple(sorted((SourceFinding(paths[s.doc_id][0].path, paths[s.doc_id][0].sha256, s.share)
                                      for s in d.sources if s.doc_id in paths), key=lambda s: (-s.share, s.path))),
                        tuple(m.path for m in paths[d.doc_id][1:]), common=float(common[d.doc_id]))
        for d in shares if d.doc_id in paths]
    only_common = [
        DocumentFinding(paths[d][0].path, paths[d][0].sha256, 0.0, 0, n_tokens, (),
                        tuple(m.path for m in paths[d][1:]), common=float(common[d]))
        for d, n_tokens in index.token_counts(common_only.tolist()).items() if d in paths]
    documents = tuple(sorted(found_elsewhere + only_common, key=lambda d: (-d.share, -d.common, d.path)))
    return passage_pairs, documents, min_words, widely_shared(stored.doc_a, stored.doc_b, n_live)


_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _score(index: Index, pairs: Sequence[tuple[tuple[int, int], int]], n_fps: Any, params: Params,
           cache_size: int, base: np.ndarray) -> Iterator[ScoredPair]:
    """Theorem 1 estimates of candidate pairs (containment of a much smaller document from the winnowed
    fingerprints the pair shares), reading sketches in batches with a bounded cache; base text (`base`,
    sorted uint64) left out of the samples."""
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
                                                         (int(n_fps[a]), int(n_fps[b])), base)
            yield ScoredPair(a, b, shared, resemblance.value, in_b.value, in_a.value, in_b.error, in_a.error,
                             resemblance.error)


def findings_json(findings: Findings) -> dict[str, Any]:
    return {"clusters": [c.to_json() for c in findings.clusters],
            "containments": [c.to_json() for c in findings.containments],
            "passage_pairs": [p.to_json() for p in findings.passage_pairs],
            "documents": [d.to_json() for d in findings.documents],
            "min_words": findings.min_words, "unaligned_documents": findings.unaligned,
            "very_common": {"limit": findings.common_limit, "documents": findings.common_documents},
            "base": [b.to_json() for b in findings.base], "widely_shared_documents": findings.widely_shared}
