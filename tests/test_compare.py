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
