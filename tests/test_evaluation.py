"""PAN measures on hand-built cases whose values are known by hand."""

from __future__ import annotations

import math

import pytest

from scanner.engine.evaluation import Span, pan_scores


def case(s0: int, s1: int, o0: int, o1: int, susp: str = "s.txt", src: str = "o.txt") -> Span:
    return Span(susp, src, s0, s1, o0, o1)


def test_perfect_detection_scores_one() -> None:
    cases = [case(0, 100, 200, 300), case(500, 600, 0, 100)]
    sc = pan_scores(cases, list(cases))
    assert (sc.precision, sc.recall, sc.granularity, sc.plagdet) == (1.0, 1.0, 1.0, 1.0)


def test_half_overlap_halves_precision_and_recall() -> None:
    """A detection shifted by half its length covers half of the case, and is half right."""
    sc = pan_scores([case(0, 100, 0, 100)], [case(50, 150, 50, 150)])
    assert sc.precision == pytest.approx(0.5)
    assert sc.recall == pytest.approx(0.5)
    assert sc.plagdet == pytest.approx(0.5)


def test_detection_inside_case_is_precise_but_partial() -> None:
    sc = pan_scores([case(0, 100, 0, 100)], [case(0, 50, 0, 50)])
    assert sc.precision == pytest.approx(1.0)
    assert sc.recall == pytest.approx(0.5)
    assert sc.plagdet == pytest.approx(2 * 0.5 / 1.5)


def test_split_case_has_granularity_two() -> None:
    sc = pan_scores([case(0, 100, 0, 100)], [case(0, 50, 0, 50), case(50, 100, 50, 100)])
    assert sc.granularity == 2.0
    assert sc.precision == pytest.approx(1.0) and sc.recall == pytest.approx(1.0)
    assert sc.plagdet == pytest.approx(1 / math.log2(3))


def test_plagdet_formula() -> None:
    """plagdet = F1(precision, recall) / log2(1 + granularity)."""
    cases = [case(0, 100, 0, 100), case(300, 400, 300, 400)]
    detections = [case(0, 40, 0, 40), case(40, 120, 40, 120), case(1000, 1100, 1000, 1100)]
    sc = pan_scores(cases, detections)
    f1 = 2 * sc.precision * sc.recall / (sc.precision + sc.recall)
    assert sc.plagdet == pytest.approx(f1 / math.log2(1 + sc.granularity))
    assert sc.granularity == 2.0  # the first case is split; the second is missed
    assert sc.recall == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    assert sc.precision == pytest.approx((1.0 + 120 / 160 + 0.0) / 3)


def test_wrong_source_detects_nothing() -> None:
    sc = pan_scores([case(0, 100, 0, 100)], [case(0, 100, 0, 100, src="other.txt")])
    assert sc.recall == 0.0 and sc.precision == 0.0 and sc.plagdet == 0.0


def test_overlap_needed_on_both_sides() -> None:
    """Same suspicious span, but another part of the source: not a detection of the case."""
    sc = pan_scores([case(0, 100, 0, 100)], [case(0, 100, 500, 600)])
    assert sc.recall == 0.0 and sc.precision == 0.0


def test_empty_cases_and_detections() -> None:
    assert pan_scores([], []).plagdet == 1.0
    assert pan_scores([case(0, 10, 0, 10)], []).plagdet == 0.0
    assert pan_scores([], [case(0, 10, 0, 10)]).precision == 0.0
