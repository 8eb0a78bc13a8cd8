"""PAN text-alignment measures (Potthast et al. 2010): precision, recall,
granularity and plagdet over character-level cases and detections.

A case or detection is a pair of character ranges: one in the suspicious
document, one in a source document. A detection r detects a case s when they
share a suspicious document and a source and overlap in both ranges. Sizes
count characters on both sides, as PAN's own evaluator does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A reuse case or a detection: [start, end) in the suspicious doc and in the source."""

    suspicious: str
    source: str
    susp_start: int
    susp_end: int
    src_start: int
    src_end: int

    @property
    def size(self) -> int:
        return (self.susp_end - self.susp_start) + (self.src_end - self.src_start)


@dataclass(frozen=True)
class PanScores:
    precision: float
    recall: float
    granularity: float
    plagdet: float
    cases: int
    detections: int


def _overlap(a0: int, a1: int, b0: int, b1: int) -> tuple[int, int] | None:
    lo, hi = max(a0, b0), min(a1, b1)
    return (lo, hi) if lo < hi else None


def _detects(r: Span, s: Span) -> bool:
    return (r.suspicious == s.suspicious and r.source == s.source
            and _overlap(r.susp_start, r.susp_end, s.susp_start, s.susp_end) is not None
            and _overlap(r.src_start, r.src_end, s.src_start, s.src_end) is not None)


def _union_length(ranges: Iterable[tuple[int, int]]) -> int:
    ordered = sorted(ranges)
    if not ordered:
        return 0
    total = 0
    current_start, current_end = ordered[0]
    for start, end in ordered[1:]:
        if start > current_end:
            total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    return total + current_end - current_start


def _covered(target: Span, others: list[Span]) -> int:
    """|union over others of (target n other)| counting both sides."""
    susp, src = [], []
    for other in others:
        a = _overlap(target.susp_start, target.susp_end, other.susp_start, other.susp_end)
        b = _overlap(target.src_start, target.src_end, other.src_start, other.src_end)
        if a and b:
            susp.append(a)
            src.append(b)
    return _union_length(susp) + _union_length(src)


def pan_scores(cases: list[Span], detections: list[Span]) -> PanScores:
    by_pair: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for r in detections:
        by_pair[(r.suspicious, r.source)].append(r)
    cases_by_pair: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for s in cases:
        cases_by_pair[(s.suspicious, s.source)].append(s)
    recall_sum, granularity_sum, detected_cases = 0.0, 0, 0
    for s in cases:
        hits = [r for r in by_pair.get((s.suspicious, s.source), []) if _detects(r, s)]
        recall_sum += _covered(s, hits) / s.size if s.size else 0.0
        if hits:
            detected_cases += 1
            granularity_sum += len(hits)
    precision_sum = 0.0
    for r in detections:
        truths = [s for s in cases_by_pair.get((r.suspicious, r.source), []) if _detects(r, s)]
        precision_sum += _covered(r, truths) / r.size if r.size else 0.0
    precision = precision_sum / len(detections) if detections else (1.0 if not cases else 0.0)
    recall = recall_sum / len(cases) if cases else 1.0
    granularity = granularity_sum / detected_cases if detected_cases else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PanScores(precision, recall, granularity, f1 / math.log2(1 + granularity), len(cases), len(detections))
