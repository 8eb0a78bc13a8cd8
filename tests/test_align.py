"""The passage aligner on real PAN-13 pairs, and its detection guarantee."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from scanner.core.config import Params
from scanner.core.model import Passage
from scanner.engine.align import AlignOptions, align, cluster
from scanner.engine.canon import canonicalize
from scanner.engine.sketch import shingle_text

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
PAN = CORPORA / "pan13-text-alignment-subset"

needs_pan = pytest.mark.skipif(not (PAN / "src").is_dir(), reason="PAN-13 subset not present")
PARAMS = Params()


def _pairs(folder: str) -> list[tuple[str, str]]:
    lines = (PAN / folder / "pairs").read_text().splitlines()
    return [(a, b) for a, b in (line.split() for line in lines if line.strip())]


def _cases(folder: str, susp: str, src: str) -> list[tuple[int, int, int, int]]:
    xml = PAN / folder / f"{Path(susp).stem}-{Path(src).stem}.xml"
    out = []
    for f in ET.parse(xml).getroot().iter("feature"):
        if f.get("name") == "plagiarism":
            t0, s0 = int(f.get("this_offset")), int(f.get("source_offset"))
            out.append((t0, t0 + int(f.get("this_length")), s0, s0 + int(f.get("source_length"))))
    return out


def _align(susp: str, src: str, options: AlignOptions = AlignOptions()) -> tuple[str, str, list[Passage]]:
    s_text = (PAN / "susp" / susp).read_text(encoding="utf-8")
    o_text = (PAN / "src" / src).read_text(encoding="utf-8")
    passages = align(shingle_text(s_text, PARAMS), s_text, shingle_text(o_text, PARAMS), o_text,
                     PARAMS.shingle_size, options)
    return s_text, o_text, passages


def _overlaps(p: Passage, c: tuple[int, int, int, int]) -> bool:
    return min(p.query_end, c[1]) > max(p.query_start, c[0]) and min(p.doc_end, c[3]) > max(p.doc_start, c[2])


@needs_pan
@pytest.mark.parametrize("options", [AlignOptions(), AlignOptions.verbatim()], ids=["default", "verbatim"])
def test_verbatim_case_matches_xml_offsets(options: AlignOptions) -> None:
    """A copied passage is found with the annotated bounds, to a few characters (PAN offsets may include
    the final punctuation and surrounding spaces; ours end at the last word)."""
    susp, src = "suspicious-document00044.txt", "source-document00955.txt"
    (t0, t1, s0, s1), = _cases("02-no-obfuscation", susp, src)
    _, _, passages = _align(susp, src, options)
    hits = [p for p in passages if _overlaps(p, (t0, t1, s0, s1))]
    assert len(hits) == 1
    p = hits[0]
    assert abs(p.query_start - t0) <= 3 and abs(p.query_end - t1) <= 3
    assert abs(p.doc_start - s0) <= 3 and abs(p.doc_end - s1) <= 3


@needs_pan
def test_every_verbatim_case_is_found_closely() -> None:
    """Over the whole no-obfuscation class: each case is detected, and its best passage covers >= 95% of it."""
    for susp, src in _pairs("02-no-obfuscation"):
        _, _, passages = _align(susp, src)
        for case in _cases("02-no-obfuscation", susp, src):
            hits = [p for p in passages if _overlaps(p, case)]
            assert hits, (susp, src, case)
            covered = max(min(p.query_end, case[1]) - max(p.query_start, case[0]) for p in hits)
            assert covered >= 0.95 * (case[1] - case[0]) - 3, (susp, src, case)


@needs_pan
def test_reworded_case_is_detected() -> None:
    """Random obfuscation (words shuffled, replaced, dropped) still yields a passage on the case."""
    susp, src = "suspicious-document00027.txt", "source-document02493.txt"
    cases = _cases("03-random-obfuscation", susp, src)
    _, _, passages = _align(susp, src)
    for case in cases:
        hits = [p for p in passages if _overlaps(p, case)]
        assert hits
        assert max(min(p.query_end, case[1]) - max(p.query_start, case[0]) for p in hits) >= 0.5 * (case[1] - case[0])


@needs_pan
def test_most_reworded_cases_are_detected() -> None:
    found = total = 0
    for susp, src in _pairs("03-random-obfuscation"):
        _, _, passages = _align(susp, src)
        for case in _cases("03-random-obfuscation", susp, src):
            total += 1
            found += any(_overlaps(p, case) for p in passages)
    assert found >= 0.9 * total


@needs_pan
def test_unrelated_pairs_give_no_passage() -> None:
    """01-no-plagiarism: topically related documents, no reuse; default options report nothing."""
    for susp, src in _pairs("01-no-plagiarism"):
        _, _, passages = _align(susp, src)
        assert passages == [], (susp, src)


@needs_pan
def test_verbatim_passages_slice_to_the_same_tokens() -> None:
    """Char offsets of verbatim passages point at the same canonical words on both sides.

    A passage starts and ends on shared runs (its first and last w words
    agree) unless runs within it go back by a few words; inside, it may bridge
    a small edit (max_gap). So the whole slices agree for nearly all, not all,
    passages on PAN's verbatim cases.
    """
    w = PARAMS.shingle_size
    checked = identical = ends_agree = total = 0
    for susp, src in _pairs("02-no-obfuscation"):
        s_text, o_text, passages = _align(susp, src, AlignOptions.verbatim())
        for p in passages:
            q = canonicalize(s_text[p.query_start:p.query_end]).hashes
            d = canonicalize(o_text[p.doc_start:p.doc_end]).hashes
            total += 1
            ends_agree += np.array_equal(q[:w], d[:w]) and np.array_equal(q[-w:], d[-w:])
            assert p.text == s_text[p.query_start:p.query_end]
            if any(_overlaps(p, c) for c in _cases("02-no-obfuscation", susp, src)):
                checked += 1
                identical += np.array_equal(q, d)
    assert checked >= 75 and identical >= 0.9 * checked
    assert ends_agree >= 0.95 * total


@needs_pan
def test_detection_guarantee_random_plantings() -> None:
    """Any run of params.guaranteed_run shared words, planted in unrelated text, is found."""
    t = PARAMS.guaranteed_run
    rng = np.random.default_rng(20030609)
    sources = sorted((PAN / "src").glob("*.txt"))
    options = AlignOptions(min_tokens=t)
    for trial in range(120):
        a, b = rng.choice(len(sources), size=2, replace=False)
        doc_text = sources[a].read_text(encoding="utf-8")
        host = sources[b].read_text(encoding="utf-8")
        doc = shingle_text(doc_text, PARAMS)
        host_tokens = canonicalize(host)
        if len(doc.tokens) < t + 1 or len(host_tokens) < 2:
            continue
        k = int(rng.integers(0, len(doc.tokens) - t + 1))
        run = doc_text[int(doc.tokens.starts[k]):int(doc.tokens.ends[k + t - 1])]
        at = int(host_tokens.ends[int(rng.integers(0, len(host_tokens)))])
        query_text = f"{host[:at]} {run} {host[at:]}"
        planted = (at + 1, at + 1 + len(run))
        passages = align(shingle_text(query_text, PARAMS), query_text, doc, doc_text, PARAMS.shingle_size, options)
        wanted = (planted[0], planted[1], int(doc.tokens.starts[k]), int(doc.tokens.ends[k + t - 1]))
        assert any(p.query_start <= wanted[0] and p.query_end >= wanted[1] and _overlaps(p, wanted)
                   for p in passages), (trial, run)


def test_guarantee_on_synthetic_words() -> None:
    """The same guarantee without the corpus: random words, one planted run of exactly t words."""
    t = PARAMS.guaranteed_run
    rng = np.random.default_rng(7)
    vocab = [f"w{i}x" for i in range(5000)]
    for _ in range(100):
        doc_words = list(rng.choice(vocab, size=300))
        host_words = list(rng.choice(vocab, size=300))
        k, at = int(rng.integers(0, 300 - t)), int(rng.integers(0, 300))
        query_words = host_words[:at] + doc_words[k:k + t] + host_words[at:]
        q_text, d_text = " ".join(query_words), " ".join(doc_words)
        passages = align(shingle_text(q_text, PARAMS), q_text, shingle_text(d_text, PARAMS), d_text,
                         PARAMS.shingle_size, AlignOptions(min_tokens=t))
        start = len(" ".join(host_words[:at])) + (1 if at else 0)
        assert any(p.query_start <= start and p.query_end >= start + len(" ".join(doc_words[k:k + t]))
                   for p in passages)


def test_cluster_splits_on_both_sides() -> None:
    """Seeds near in the query but far apart in the document end up in different fragments."""
    rects = np.array([[0, 10, 0, 10, 10, 0, 0],
                      [12, 20, 12, 20, 8, 0, 0],
                      [22, 30, 500, 508, 8, 0, 0]], dtype=np.int64)
    fragments = sorted(cluster(rects, gap=5), key=lambda p: p.doc_start)
    assert [(p.query_start, p.query_end, p.doc_start, p.doc_end) for p in fragments] == [(0, 20, 0, 20), (22, 30, 500, 508)]


def test_empty_texts() -> None:
    empty = shingle_text("", PARAMS)
    full = shingle_text("some words in a text that is long enough for shingles", PARAMS)
    assert align(empty, "", full, "x", PARAMS.shingle_size) == []
    assert align(full, "x", empty, "", PARAMS.shingle_size) == []
