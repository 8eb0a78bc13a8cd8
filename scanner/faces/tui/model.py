"""What the TUI shows, computed from the index without any Textual import.

Keeping this apart (toolong's `LogFile` habit) lets tests check the numbers
without a screen, and keeps the widgets thin.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scanner.core.config import Params
from scanner.core.display import printable, visible


@dataclass(frozen=True)
class FindingRow:
    """One suspected pair, as a table row."""

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


@dataclass(frozen=True)
class FindingsView:
    """What the Findings tab shows: counts for the summary and one row per suspected pair."""

    documents: int
    files: int
    clusters: int
    rows: tuple[FindingRow, ...]

    @property
    def common_folder(self) -> str:
        """The folder every path shares: the table shows paths below it, so both columns fit."""
        import os

        paths = [p for r in self.rows for p in (r.path_a, r.path_b)]
        if len(paths) < 2:
            return ""
        try:
            common = os.path.commonpath(paths)
        except ValueError:  # relative and absolute paths mixed
            return ""
        return "" if common in paths else common

    def short(self, path: str) -> str:
        """`path` without the common folder."""
        folder = self.common_folder
        return path[len(folder):].lstrip("/\\") if folder and path.startswith(folder) else path

    @property
    def suspected(self) -> int:
        return sum(1 for r in self.rows if r.kind != "identical")

    def histogram(self, bins: int = 10) -> list[int]:
        """Pairs per resemblance bin (0..1): a glance at how strong the findings are."""
        counts = [0] * bins
        for row in self.rows:
            counts[min(int(row.resemblance * bins), bins - 1)] += 1
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


def load_findings(index: Any, params: Params) -> FindingsView:
    """Clusters as star pairs around their first member, and containment pairs, scored from sketches."""
    from scanner.engine.sketch import compare_sketches
    from scanner.services.findings import find_similar

    findings = find_similar(index, params)
    sketches: dict[int, Any] = {}
    sizes: dict[str, int] = {f.sha256: f.size for f in index.files(include_vanished=False)}

    def sketch(sha: str) -> tuple[int | None, Any]:
        doc_id = index.doc_id_for_sha256(sha)
        if doc_id is not None and doc_id not in sketches:
            sketches[doc_id] = index.sketch(doc_id)
        return doc_id, sketches.get(doc_id) if doc_id is not None else None

    def row(kind: str, path_a: str, sha_a: str, path_b: str, sha_b: str) -> FindingRow:
        _, a = sketch(sha_a)
        _, b = sketch(sha_b)
        if sha_a == sha_b or a is None or b is None:
            return FindingRow(kind, path_a, sha_a, path_b, sha_b, 1.0, 1.0, 1.0, 0, sizes.get(sha_a, 0),
                              sizes.get(sha_b, 0))
        est = compare_sketches(a, b, params.sample_size)
        return FindingRow(kind, path_a, sha_a, path_b, sha_b, est.resemblance, est.containment_a_in_b,
                          est.containment_b_in_a, est.edit_distance_estimate, sizes.get(sha_a, 0),
                          sizes.get(sha_b, 0))

    rows = []
    for cluster in findings.clusters:
        first = cluster.members[0]
        for member in cluster.members[1:]:
            kind = "identical" if member.sha256 == first.sha256 else cluster.kind
            rows.append(row(kind, first.path, first.sha256, member.path, member.sha256))
    for c in findings.containments:  # the scan's containment: a small part's sketch sample may be too thin
        found = row("containment", c.contained, c.contained_sha256, c.container, c.container_sha256)
        rows.append(replace(found, containment_a_in_b=c.containment))
    stats = index.stats()
    return FindingsView(documents=stats.documents_ok, files=stats.files_live, clusters=len(findings.clusters),
                        rows=tuple(rows))


def pair_texts(text_a: str, text_b: str, title_a: str, title_b: str, params: Params) -> PairTexts:
    from scanner.engine.align import align
    from scanner.engine.compare import compare_texts
    from scanner.engine.sketch import shingle_text

    passages = align(shingle_text(text_a, params), text_a, shingle_text(text_b, params), text_b,
                     params.shingle_size)
    # exact values need the full shingle sets: cheap for documents, skipped for books
    report = compare_texts(text_a, text_b, params, exact=len(text_a) + len(text_b) <= EXACT_LIMIT)
    values: Any = report.exact or report.estimate
    tag = "" if report.exact else "~"
    metrics = {
        "resemblance": f"{tag}{values.resemblance:.3f}",
        "A in B": f"{tag}{values.containment_a_in_b:.3f}",
        "B in A": f"{tag}{values.containment_b_in_a:.3f}",
        "est. edits": f"{report.estimate.edit_distance_estimate:,}",
        "passages": str(len(passages)),
        "sizes": f"{len(text_a):,} / {len(text_b):,} chars",
    }
    # shown with every character a terminal could act on replaced one for one: passages still line up
    return PairTexts(printable(title_a), printable(title_b), visible(text_a), visible(text_b),
                     tuple((p.query_start, p.query_end, p.doc_start, p.doc_end) for p in passages), metrics,
                     tuple(float(v) for v in report.difference_profile))


def pair_from_index(index: Any, params: Params, row: FindingRow) -> PairTexts | None:
    a_id, b_id = index.doc_id_for_sha256(row.sha_a), index.doc_id_for_sha256(row.sha_b)
    text_a = index.text(a_id) if a_id is not None else None
    text_b = index.text(b_id) if b_id is not None else None
    if text_a is None or text_b is None:
        return None
    return pair_texts(text_a, text_b, row.path_a, row.path_b, params)


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
