"""The papers' own worked examples, through the real canonicalizer and fingerprints."""

from __future__ import annotations

import numpy as np
import pytest

from scanner.engine.canon import canonicalize
from scanner.engine.fingerprint import shingle_fingerprints
from scanner.engine.sketch import exact_containment, exact_resemblance

BRODER_A = "a rose is a rose is a rose"
BRODER_B = "a rose is a flower which is a rose"
SLIDES_A = "a rose is red a rose is white"
SLIDES_B = "a rose is white a rose is red"


def shingles(text: str, w: int, option: str = "set") -> np.ndarray:
    return np.unique(shingle_fingerprints(canonicalize(text).hashes, w, option))


@pytest.mark.parametrize(("w", "expected"), [(1, 0.60), (2, 0.50), (3, 3 / 7)])
def test_broder_option_b(w: int, expected: float) -> None:
    """Broder 1997 section 2: 60 %, 50 %, 42.85 % under option B."""
    assert exact_resemblance(shingles(BRODER_A, w), shingles(BRODER_B, w)) == pytest.approx(expected)


@pytest.mark.parametrize(("w", "expected"), [(1, 0.70), (2, 0.50), (3, 0.30)])
def test_broder_option_a(w: int, expected: float) -> None:
    """Broder 1997 section 2: 70 %, 50 %, 30 % under option A (labelled shingles)."""
    a, b = shingles(BRODER_A, w, "bag"), shingles(BRODER_B, w, "bag")
    assert exact_resemblance(a, b) == pytest.approx(expected)


@pytest.mark.parametrize(("w", "expected"), [(4, 0.25), (3, 3 / 7)])
def test_slides_rose_pair(w: int, expected: float) -> None:
    assert exact_resemblance(shingles(SLIDES_A, w), shingles(SLIDES_B, w)) == pytest.approx(expected)


def test_capitalization_and_punctuation_do_not_matter() -> None:
    noisy_a = "A ROSE is... a Rose; is, a rose!"
    noisy_b = "\"A\" rose -- is a FLOWER (which) is a rose."
    for w, expected in [(1, 0.60), (2, 0.50), (3, 3 / 7)]:
        assert exact_resemblance(shingles(noisy_a, w), shingles(noisy_b, w)) == pytest.approx(expected)


def test_four_shingling_bag_of_the_example() -> None:
    """(a,rose,is,a,rose,is,a,rose): 5 four-shingles, 3 distinct (option B)."""
    fps = shingle_fingerprints(canonicalize(BRODER_A).hashes, 4)
    assert fps.shape[0] == 5
    assert np.unique(fps).shape[0] == 3


def test_containment_of_contiguous_part_is_one() -> None:
    whole = "the quick brown fox jumps over the lazy dog near the river bank today"
    part = "brown fox jumps over the lazy dog"
    assert exact_containment(shingles(part, 3), shingles(whole, 3)) == 1.0
    assert exact_containment(shingles(whole, 3), shingles(part, 3)) == pytest.approx(5 / 12)


def test_offsets_point_into_original_text() -> None:
    text = "Ｈéllo, ﬁne STRASSE! 東京 e\u0301t\u00e9"
    tokens = canonicalize(text)
    pieces = [text[s:e] for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())]
    assert pieces == ["Ｈéllo", "ﬁne", "STRASSE", "東", "京", "e\u0301t\u00e9"]
    same = canonicalize("héllo fine straße 東 京 ÉTÉ")
    assert tokens.hashes.tolist() == same.hashes.tolist()
