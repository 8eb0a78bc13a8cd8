"""`scanner compare` end to end on the sample corpus (text, HTML and PDF)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scanner.core.config import Params
from scanner.engine.compare import compare_texts

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", "compare", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_json_fields_and_exact_values_for_text_vs_html() -> None:
    done = _compare(str(SAMPLE / "originals" / "declaration-of-independence.txt"),
                    str(SAMPLE / "submissions" / "declaration-reader.html"), "--exact", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) >= {"a", "b", "resemblance", "containment_a_in_b", "containment_b_in_a",
                        "edit_distance_estimate", "exact", "params"}
    assert set(doc["exact"]) == {"resemblance", "containment_a_in_b", "containment_b_in_a", "edit_distance"}
    # five small edits in ~500 words: a near-duplicate; boilerplate (nav, script, footer) removed
    assert 0.8 < doc["exact"]["resemblance"] < 0.97
    assert abs(doc["resemblance"] - doc["exact"]["resemblance"]) < 0.1
    assert 0 < doc["exact"]["edit_distance"] < 400
    assert doc["params"]["shingle_size"] == Params().shingle_size
    # the estimate says what it rests on: the union's bottom-128 sample, and its 95 % interval
    evidence = doc["resemblance_evidence"]
    assert (evidence["method"], evidence["samples"], evidence["value"]) == ("sketch", 128, doc["resemblance"])
    assert evidence["low"] < doc["resemblance"] < evidence["high"] and evidence["high"] - evidence["low"] < 0.2


def test_the_resemblance_interval_holds_the_exact_value_95_times_in_100() -> None:
    """Over 200 pairs of generated texts sharing 0-100 % of their sentences, the 95 % interval of the
    sketch's resemblance holds the exact value about 95 times in 100 (the union's bottom-s sample is a
    random sample of the union: a binomial share)."""
    import random

    from tests.corpus import prose

    params, rng, held, widths = Params(), random.Random(7), 0, []
    for k in range(200):
        shared = prose(1000 + k, rng.randrange(0, 600))
        a = shared + " " + prose(3000 + k, rng.randrange(50, 600))
        b = shared + " " + prose(5000 + k, rng.randrange(50, 600))
        report = compare_texts(a, b, params, exact=True)
        evidence = report.estimate.resemblance_of
        assert evidence is not None and report.exact is not None and evidence.method == "sketch"
        low, high = evidence.interval
        held += low <= report.exact.resemblance <= high
        widths.append(high - low)
    assert 180 <= held <= 200, held  # 95 % of 200 is 190; a binomial sd of ~3
    assert max(widths) < 0.2


def test_a_resemblance_of_two_short_texts_is_exact_and_says_so(tmp_path: Path) -> None:
    """Texts of fewer shingles than s: their sketches hold the whole sets, so the value has no error bar."""
    (tmp_path / "a.txt").write_text("one two three four five six seven\n")
    (tmp_path / "b.txt").write_text("one two three four five six eight\n")
    done = _compare(str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--json")
    doc = json.loads(done.stdout)
    assert doc["resemblance"] == 0.6 and doc["resemblance_evidence"] == {  # 3 shared of 5 four-word shingles
        "value": 0.6, "low": 0.6, "high": 0.6, "samples": 0, "method": "exact"}
    shown = _compare(str(tmp_path / "a.txt"), str(tmp_path / "b.txt")).stdout
    assert "exact (the sketches hold the whole sets)" in shown


def test_pdf_near_duplicate_and_shingle_size_option() -> None:
    base = [str(SAMPLE / "originals" / "declaration-of-independence.txt"),
            str(SAMPLE / "submissions" / "declaration-print.pdf"), "--exact", "--json"]
    w3 = json.loads(_compare(*base, "--shingle-size", "3").stdout)
    w8 = json.loads(_compare(*base, "--shingle-size", "8").stdout)
    assert w3["params"]["shingle_size"] == 3 and w8["params"]["shingle_size"] == 8
    # larger shingles are more sensitive to the same edits
    assert w3["exact"]["resemblance"] > w8["exact"]["resemblance"] > 0.7


def test_embedding_is_reported_for_a_licence_inside_a_readme() -> None:
    licence = (SAMPLE / "originals" / "mit-license.txt").read_text()
    readme = (SAMPLE / "submissions" / "tidewater-readme.md").read_text()
    report = compare_texts(licence, readme, Params(), exact=True)
    assert report.exact is not None and report.exact.containment_a_in_b == 1.0
    assert report.a_embedded_in_b and not report.b_embedded_in_a
    assert report.estimate.containment_a_in_b > 0.9


def test_unreadable_input_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "encrypted.pdf"
    bad.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 4)
    done = _compare(str(bad), str(SAMPLE / "originals" / "mit-license.txt"))
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "encrypted.pdf" in done.stderr


def test_help_lists_commands_without_heavy_imports() -> None:
    done = subprocess.run([sys.executable, "-m", "scanner", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    for name in ("scan", "check", "compare", "clusters", "info"):
        assert name in done.stdout
    probe = subprocess.run([sys.executable, "-c",
                            "import sys, scanner.faces.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                            "('textual', 'pdfminer', 'pypdfium2', 'numpy', 'rich')))"],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "[]"


def test_the_pair_view_of_two_books_gives_each_estimate_its_error() -> None:
    """Past EXACT_LIMIT characters the TUI's pair view shows the sketches' estimates (marked ~), each with its
    95 % error; below it, exact values, with none."""
    from scanner.faces.tui.model import EXACT_LIMIT, pair_texts
    from tests.corpus import prose

    shared = prose(11, 20_000)
    a, b = shared + " " + prose(12, 20_000), shared + " " + prose(13, 20_000)
    assert len(a) + len(b) > EXACT_LIMIT
    metrics = pair_texts(a, b, "a", "b", Params()).metrics
    value, error = metrics["resemblance"].lstrip("~").split("±")
    assert metrics["resemblance"].startswith("~") and 0 < float(error) < 0.15 and 0.2 < float(value) < 0.5, metrics
    # a containment the sketches could not estimate within 0.1 is exact (`compare_texts`), and shown as such
    assert metrics["A in B"] == metrics["B in A"] == "0.500"
    short = pair_texts(a[:2000], b[:2000], "a", "b", Params()).metrics
    assert "±" not in short["resemblance"] and not short["resemblance"].startswith("~")
