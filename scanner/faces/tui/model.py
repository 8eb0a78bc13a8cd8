"""What the TUI shows, computed from the index without any Textual import.

Keeping this apart (toolong's `LogFile` habit) lets tests check the numbers
without a screen, and keeps the widgets thin.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.core.config import Params
from scanner.core.display import printable, visible
from scanner.core.model import place_at
from scanner.engine.align import condenses
from scanner.services.findings import HEAD_ROWS

if TYPE_CHECKING:  # the services load when the findings do, after the first frame
    from scanner.services.findings import DocumentFinding


@dataclass(frozen=True)
class FindingRow:
    """One suspected pair, as a table row.

    Passage rows beyond `SKETCH_ROWS` are scored from their passage shares instead of the sketches
    (`from_sketches` False, `edit_distance_estimate` -1): the first screen must not wait on thousands of
    sketch comparisons.
    """

    kind: str
    path_a: str
    sha_a: str
    path_b: str
    sha_b: str
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    edit_distance_estimate: int
    size_a: int
    size_b: int
    from_sketches: bool = True
    errors: tuple[float, float, float] = (0.0, 0.0, 0.0)  # 95 % half-widths of the three measures (0: exact)


# rows a table shows at once, after the filter and in the sort order: a stored head's rows (the first screen)
TABLE_ROWS = HEAD_ROWS


@dataclass(frozen=True)
class FindingsView:
    """What the Findings tab shows: counts for the summary, one row per suspected pair, and the documents
    view's rows (documents with passages found elsewhere, highest share first)."""

    documents: int
    files: int
    clusters: int
    rows: tuple[FindingRow, ...]
    document_rows: tuple[DocumentFinding, ...] = ()  # the findings' own records: Turnitin's list
    passage_pairs: int = 0
    min_words: int = 0  # of the passages counted
    unaligned: int = 0  # documents whose passages are not aligned yet (the documents view is incomplete)
    shares_only: int = 0  # passage rows scored from their shares, not from the sketches
    media_note: str = ""  # the index sits on read-only media and was opened read-only (Index.media_note)
    suspected: int = 0  # near-duplicate and containment pairs (passage pairs are counted apart)
    documents_found: int = 0  # documents with text found elsewhere (all of them, beyond document_rows)
    common_documents: int = 0  # documents holding very common text (`Findings.common_documents`)
    base_words: int = 0  # words of the base texts left out of every finding (`Findings.base`)
    widely_shared: int = 0  # documents pairing with nearly every other, when `Findings.template_note` says so
    partial: bool = False  # the first rows of each list only (`load_findings(head=True)`): the rest loads next

    @cached_property
    def common_folder(self) -> str:
        """The folder every path shares: the tables show paths below it, so the columns fit.

        Cached: `short` asks for it once per cell, and thousands of rows would make that quadratic."""
        import os

        paths = [p for r in self.rows for p in (r.path_a, r.path_b)]
        paths += [p for d in self.document_rows for p in (d.path, *(s.path for s in d.sources))]
        if len(paths) < 2:
            return ""
        # the strings between the least and the greatest share their common prefix: two comparisons of
        # strings, not a split of every path (os.path.commonpath took 4 s on the 219,000 paths of 100,000
        # documents' first screen)
        lowest, highest = min(paths), max(paths)
        common = os.path.commonprefix([lowest, highest])
        sep = os.sep
        whole = (len(lowest) > len(common) and lowest[len(common)] == sep
                 and len(highest) > len(common) and highest[len(common)] == sep)
        if not whole:  # cut back to the last whole folder
            common = common[:common.rfind(sep)] if sep in common else ""
        return "" if common in ("", sep) or common in set(paths) else common

    def short(self, path: str) -> str:
        """`path` without the common folder."""
        folder = self.common_folder
        return path[len(folder):].lstrip("/\\") if folder and path.startswith(folder) else path


    def histogram(self, bins: int = 10) -> list[int]:
        """Pairs per resemblance bin (0..1): a glance at how strong the findings are."""
        return _bins((row.resemblance for row in self.rows), bins)

    def share_histogram(self, bins: int = 10) -> list[int]:
        """Documents per share-found-elsewhere bin (0..1), for the documents view (not those listed for their
        very common text alone)."""
        return _bins((d.share for d in self.document_rows if d.share > 0), bins)


def _bins(values: Iterable[float], bins: int) -> list[int]:
    counts = [0] * bins
    for value in values:
        counts[min(max(int(value * bins), 0), bins - 1)] += 1
    return counts


@dataclass(frozen=True)
class PairTexts:
    """Two texts and their shared passages, for the pair view."""

    title_a: str
    title_b: str
    text_a: str
    text_b: str
    passages: tuple[tuple[int, int, int, int], ...]  # (a_start, a_end, b_start, b_end)
    metrics: dict[str, str]
    profile: tuple[float, ...]
    kinds: tuple[str, ...] = ()  # of each passage: "verbatim", "reworded" or "semantic"
    stored: bool = False  # the passages are those the scan stored, not aligned for this view
    similarities: tuple[float | None, ...] = ()  # of each passage when stored: a semantic one's, else None
    places_a: tuple[tuple[int, int, str], ...] = ()  # where A's text is not its body (`DocumentInfo.places`)
    places_b: tuple[tuple[int, int, str], ...] = ()

    def where(self, number: int) -> str:
        """Where passage `number` lies on each side when not in its body ("; B in hidden text", "" in both
        bodies), as the status line says it: someone opening the file would not find it on the page."""
        a0, a1, b0, b1 = self.passages[number]
        found = [(side, place) for side, place in (("A", place_at(self.places_a, a0, a1)),
                                                   ("B", place_at(self.places_b, b0, b1))) if place]
        return "".join(f"; {side} in {place}" for side, place in found)

    def kind(self, number: int) -> str:
        """How passage `number` was found ("" when not known: passages aligned for this view are verbatim)."""
        return self.kinds[number] if number < len(self.kinds) else ""

    def label(self, number: int) -> str:
        """Passage `number`'s kind in words, its similarity with it when semantic ("" when not known)."""
        similarity = self.similarities[number] if number < len(self.similarities) else None
        a0, a1, b0, b1 = self.passages[number]
        return passage_label(self.kind(number), similarity, condenses(a1 - a0, b1 - b0))


def passage_label(kind: str, similarity: float | None = None, summary: bool = False) -> str:
    """A passage's kind as the TUI shows it: a reworded or semantic one says what it is, never a copy;
    `summary`: its sides are a summary's (`align.condenses`)."""
    if kind == "semantic":
        shown = "" if similarity is None else f" {round(similarity, 3):g}"
        return f"semantic{shown}: the same meaning in other words, not a verbatim copy"
    if kind == "reworded":
        what = "a summary of much longer text" if summary else "the same sentences in other words"
        return f"reworded: {what}, not a verbatim copy"
    return kind


def shown_as_copy(kind: str) -> bool:
    """Whether a passage of this kind may be shown as the same text on both sides ("=", not "≈")."""
    return kind in ("", "verbatim")


SKETCH_ROWS = 500  # passage rows scored from the sketches (~0.15 ms each); the rest from their shares


def load_findings(index: Any, params: Params, *, sketch_rows: int = SKETCH_ROWS, head: bool = False) -> FindingsView:
    """The Findings tab's content: the findings the scan stored (`stored_or_found` computes them only when
    none are stored), as rows scored from the sketches.

    Rows: clusters as star pairs around their first member, containment pairs, then passage pairs in MOSS's
    order (most shared words first). Sketches are read in one batch; passage rows past `sketch_rows` take
    their passage shares instead, so the first screen of a large index does not wait on sketch comparisons.
    `head`: only the first rows of each list, with the full counts (`stored_head`): the first screen, read
    in milliseconds whatever the index's size; the view says it is `partial`.
    """
    from scanner.engine.sketch import compare_sketches
    from scanner.services.findings import stored_head, stored_or_found

    findings = stored_head(index, params) if head else stored_or_found(index, params)
    shas = {m.sha256 for c in findings.clusters for m in c.members}
    shas |= {s for c in findings.containments for s in (c.contained_sha256, c.container_sha256)}
    shas |= {s for p in findings.passage_pairs for s in (p.a.sha256, p.b.sha256)}
    sizes: dict[str, int] = index.file_sizes(shas)
    wanted: list[tuple[str, str, str, str, str]] = []  # (kind, path A, sha A, path B, sha B)
    for cluster in findings.clusters:
        first = cluster.members[0]
        for member in cluster.members[1:]:
            kind = "identical" if member.sha256 == first.sha256 else cluster.kind
            wanted.append((kind, first.path, first.sha256, member.path, member.sha256))
    for c in findings.containments:
        wanted.append(("containment", c.contained, c.contained_sha256, c.container, c.container_sha256))
    scored = findings.passage_pairs[:sketch_rows]
    for p in scored:
        wanted.append(("passages", p.a.path, p.a.sha256, p.b.path, p.b.sha256))

    doc_ids = {sha: index.doc_id_for_sha256(sha) for w in wanted for sha in (w[2], w[4])}
    sketches = index.sketches(sorted({d for d in doc_ids.values() if d is not None}))

    def sketch(sha: str) -> Any:
        doc_id = doc_ids[sha]
        return None if doc_id is None else sketches.get(doc_id)

    def row(kind: str, path_a: str, sha_a: str, path_b: str, sha_b: str) -> FindingRow:
        a, b = sketch(sha_a), sketch(sha_b)
        if sha_a == sha_b or a is None or b is None:
            return FindingRow(kind, path_a, sha_a, path_b, sha_b, 1.0, 1.0, 1.0, 0, sizes.get(sha_a, 0),
                              sizes.get(sha_b, 0))
        est = compare_sketches(a, b, params.sample_size, excluded=base)  # measured as the findings were
        return FindingRow(kind, path_a, sha_a, path_b, sha_b, est.resemblance, est.containment_a_in_b,
                          est.containment_b_in_a, est.edit_distance_estimate, sizes.get(sha_a, 0),
                          sizes.get(sha_b, 0), errors=est.errors)

    base = index.base.fingerprints(params) if findings.base else None
    rows = [row(*w) for w in wanted]
    n_clusters = len(rows) - len(findings.containments) - len(scored)
    for i, c in enumerate(findings.containments, n_clusters):
        # the scan's containment: a small part's sketch sample may be too thin
        rows[i] = replace(rows[i], containment_a_in_b=c.containment, errors=(rows[i].errors[0], c.error,
                                                                              rows[i].errors[2]))
    tokens = {d.sha256: d.n_tokens for d in findings.documents}
    for p in findings.passage_pairs[sketch_rows:]:
        rows.append(_share_row(p, tokens, sizes))
    documents = tuple(findings.documents)
    if "documents_ok" in findings.totals:  # counted when the head was stored: no count over the whole index
        n_documents, n_files = findings.totals["documents_ok"], findings.totals["files_live"]
    else:
        stats = index.stats()
        n_documents, n_files = stats.documents_ok, stats.files_live
    return FindingsView(documents=n_documents, files=n_files, clusters=findings.total("clusters"),
                        rows=tuple(rows), document_rows=documents, passage_pairs=findings.total("passage_pairs"),
                        min_words=findings.min_words, unaligned=findings.unaligned,
                        shares_only=max(findings.total("passage_pairs") - sketch_rows, 0),
                        media_note=getattr(index, "media_note", ""), suspected=findings.suspected,
                        documents_found=findings.found_elsewhere, common_documents=findings.common_documents,
                        base_words=sum(b.words for b in findings.base),
                        widely_shared=findings.widely_shared if findings.template_note() else 0,
                        partial=findings.is_head)


def _share_row(p: Any, tokens: dict[str, int], sizes: dict[str, int]) -> FindingRow:
    """A passage pair scored from its passages: A in B and B in A are the shares of each document inside
    them, the resemblance the words shared over the words of both (Jaccard on words)."""
    n_a, n_b = tokens.get(p.a.sha256, 0), tokens.get(p.b.sha256, 0)
    shared = (p.share_a * n_a + p.share_b * n_b) / 2
    union = n_a + n_b - shared
    return FindingRow("passages", p.a.path, p.a.sha256, p.b.path, p.b.sha256,
                      shared / union if union > 0 else 0.0, p.share_a, p.share_b, -1,
                      sizes.get(p.a.sha256, 0), sizes.get(p.b.sha256, 0), from_sketches=False)


def pair_texts(text_a: str, text_b: str, title_a: str, title_b: str, params: Params,
               stored: tuple[Any, ...] | None = None, places_a: tuple[tuple[int, int, str], ...] = (),
               places_b: tuple[tuple[int, int, str], ...] = (), base: Any = None) -> PairTexts:
    """Two texts and their passages: the `stored` ones (`StoredPassage`s, A first) when the scan aligned
    the pair, else aligned here; `places_a`, `places_b`: each text's places outside its body, when indexed;
    `base`: the index's base text (`engine.base.Base`), left out of the measures and of the passages aligned
    here, as the findings leave it out."""
    from scanner.engine.compare import compare_texts

    if stored:
        ordered = sorted(stored, key=lambda p: (p.a_start, p.b_start))
        passages = tuple((p.a_start, p.a_end, p.b_start, p.b_end) for p in ordered)
        kinds = tuple(str(p.kind) for p in ordered)
        similarities = tuple(getattr(p, "similarity", None) for p in ordered)
    else:
        from scanner.engine.align import align
        from scanner.engine.base import base_shingle_mask
        from scanner.engine.sketch import shingle_text

        shingled_a = shingle_text(text_a, params)
        mask = base_shingle_mask(shingled_a, base.fingerprints, params.shingle_size) if base else None
        found = align(shingled_a, text_a, shingle_text(text_b, params), text_b, params.shingle_size,
                      query_mask=mask)
        passages = tuple((p.query_start, p.query_end, p.doc_start, p.doc_end) for p in found)
        kinds = tuple(p.kind for p in found)  # a reworded passage aligned here is no copy either
        similarities = tuple(p.similarity for p in found)
    # exact values need the full shingle sets: cheap for documents, skipped for books
    report = compare_texts(text_a, text_b, params, exact=len(text_a) + len(text_b) <= EXACT_LIMIT,
                           excluded=base.fingerprints if base else None)
    values: Any = report.exact or report.estimate

    def shown(value: float, evidence: Any) -> str:
        """A value; an estimate (books: their exact sets are not made) marked ~, with its 95 % error."""
        if report.exact is not None or evidence is None or evidence.method == "exact":
            return f"{value:.3f}"
        return f"~{value:.3f}±{evidence.error:.3f}"

    estimate = report.estimate
    metrics = {
        "resemblance": shown(values.resemblance, estimate.resemblance_of),
        "A in B": shown(values.containment_a_in_b, estimate.containment_a),
        "B in A": shown(values.containment_b_in_a, estimate.containment_b),
        "est. edits": f"{report.estimate.edit_distance_estimate:,}",
        "passages": f"{len(passages)}{' (stored)' if stored else ''}",
        "sizes": f"{len(text_a):,} / {len(text_b):,} chars",
    }
    # shown with every character a terminal could act on replaced one for one: passages still line up
    return PairTexts(printable(title_a), printable(title_b), visible(text_a), visible(text_b), passages, metrics,
                     tuple(float(v) for v in report.difference_profile), kinds, bool(stored), similarities,
                     places_a, places_b)


def pair_from_index(index: Any, params: Params, path_a: str, sha_a: str, path_b: str, sha_b: str
                    ) -> PairTexts | None:
    """The pair view of two indexed documents (None when a text is not stored), with the passages the scan
    stored for them when there are any: no aligning again, and the same passages every face shows."""
    a_id, b_id = index.doc_id_for_sha256(sha_a), index.doc_id_for_sha256(sha_b)
    text_a = index.text(a_id) if a_id is not None else None
    text_b = index.text(b_id) if b_id is not None else None
    if text_a is None or text_b is None:
        return None
    stored = index.passages.pair(a_id, b_id) if a_id != b_id else None
    return pair_texts(text_a, text_b, path_a, path_b, params, stored.passages if stored is not None else None,
                      index.document(a_id).places, index.document(b_id).places, index.base.prepared(params))


EXACT_LIMIT = 400_000  # characters of both texts together below which the pair view computes exact values
BLOCKS = " ▁▂▃▄▅▆▇█"


def resample(profile: tuple[float, ...], width: int) -> list[float]:
    """Stretch or shrink a profile to `width` cells (each cell: the max of the slices it covers)."""
    if not profile or width <= 0:
        return []
    n = len(profile)
    return [max(profile[i * n // width: max((i + 1) * n // width, i * n // width + 1)]) for i in range(width)]


def profile_strip(profile: tuple[float, ...], width: int | None = None) -> str:
    """The difference profile as block characters (height = share of differences in that slice)."""
    values = resample(profile, width) if width else list(profile)
    return "".join(BLOCKS[min(int(round(v * (len(BLOCKS) - 1))), len(BLOCKS) - 1)] for v in values)


def line_spans(text: str, spans: tuple[tuple[int, int], ...]) -> dict[int, list[tuple[int, int]]]:
    """Character spans of `text` cut at newlines: line number -> [(start column, end column)].

    The pair view paints shared passages line by line (TextArea renders lines).
    """
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    out: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        row = bisect_right(starts, start) - 1
        while row < len(starts) and starts[row] < end:
            line_end = starts[row + 1] - 1 if row + 1 < len(starts) else len(text)
            a, b = max(start, starts[row]), min(end, line_end)
            if b > a:
                out.setdefault(row, []).append((a - starts[row], b - starts[row]))
            row += 1
    return out


def path_suggestion(value: str) -> str | None:
    """Complete a path prefix from the file system (first match, sorted); names a terminal could act on
    (ESC, bidi overrides: `printable` would change them) are never offered, the field shows them raw."""
    if not value:
        return None
    path = Path(value).expanduser()
    parent, stem = (path, "") if value.endswith("/") else (path.parent, path.name)
    try:
        names = sorted(p.name for p in parent.iterdir()
                       if p.name.startswith(stem) and not p.name.startswith(".") and printable(p.name) == p.name)
    except OSError:
        return None
    if not names:
        return None
    found = parent / names[0]
    head = value if value.endswith("/") else value[: len(value) - len(stem)]
    return head + names[0] + ("/" if found.is_dir() else "")
