"""Reports of a real index, with hostile documents in it."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scanner.canon import canonical_words
from scanner.config import Params
from scanner.errors import UsageError
from scanner.index import Index
from scanner.plugins import make_plugin_manager
from scanner.report import SCHEMA_PATH, write_report
from scanner.report.formats import safe_name
from scanner.scan import run_scan

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"
FILLER = (SAMPLE / "unrelated" / "field-notes-river-survey.txt").read_text(encoding="utf-8")
SCRIPT = "<script>document.title='pwned'</script>"
IMG = '"><img src=x onerror=alert(1)>'
STYLE = "</style><script>alert(2)</script>"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    corpus = root / "corpus"
    shutil.copytree(SAMPLE, corpus, ignore=shutil.ignore_patterns("SOURCES.md"))
    # markup-looking text that survives extraction: entities in an HTML page decode to it
    import html as html_lib

    hostile = (f"<html><body><p>Field report {html_lib.escape(SCRIPT)} with {html_lib.escape(IMG)} and "
               f"{html_lib.escape(STYLE)}.</p><p>{html_lib.escape(FILLER)}</p></body></html>")
    (corpus / "hostile.html").write_text(hostile, encoding="utf-8")
    (corpus / "hostile-copy.html").write_text(hostile.replace("spring survey", "autumn survey"), encoding="utf-8")
    db = root / "index.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(corpus)], index, make_plugin_manager(), Params(), jobs=0)
    return db, corpus


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.event_attributes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.event_attributes += [name for name, _ in attrs if name.startswith("on")]


def _write(indexed: tuple[Path, Path], fmt: str, out: Path, **kwargs) -> Path:
    db, _ = indexed
    with Index.open(db) as index:
        return write_report(index, index.params, fmt, out, index_path=str(db), command="scanner report test",
                            **kwargs)


def test_html_is_self_contained_escaped_and_names_every_file(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    out = _write(indexed, "html", tmp_path / "report.html")
    page = out.read_text(encoding="utf-8")
    parser = _Elements()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags and "link" not in parser.tags
    assert parser.event_attributes == []
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    with Index.open(indexed[0]) as index:
        for f in index.files(include_vanished=False):
            assert f.sha256 in page
    assert "<mark>" in page and "hostile-copy.html" in page
    assert "any run of at least 7 shared words is found" in page


def test_json_validates_against_its_schema(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(_write(indexed, "json", tmp_path / "report.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    kinds = {p["kind"] for p in doc["pairs"]}
    assert {"identical", "near-duplicate", "containment"} <= kinds
    licence = next(p for p in doc["pairs"] if p["kind"] == "containment"
                   and p["a"]["path"].endswith("mit-license.txt"))
    assert licence["containment_a_in_b"] == 1.0 and licence["b"]["path"].endswith("tidewater-readme.md")
    assert doc["summary"]["files"] == len(doc["files"]) == 13


def test_csv_rows_parse_and_formulas_are_neutralized(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    rows = list(csv.DictReader(_write(indexed, "csv", tmp_path / "pairs.csv").open(newline="")))
    assert set(rows[0]) == {"kind", "path_a", "sha256_a", "path_b", "sha256_b", "resemblance",
                            "containment_a_in_b", "containment_b_in_a", "edit_distance_estimate", "passages"}
    licence = [r for r in rows if r["kind"] == "containment" and r["path_a"].endswith("mit-license.txt")]
    assert licence and float(licence[0]["containment_a_in_b"]) == 1.0
    from scanner.report.formats import _cell

    assert _cell("=HYPERLINK(\"http://x\")").startswith("'=") and _cell("-2+3").startswith("'-")


def test_pan_offsets_point_at_the_shared_text(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    folder = _write(indexed, "pan", tmp_path / "pan")
    _, corpus = indexed
    readme = ET.parse(folder / "tidewater-readme.md.xml").getroot()
    assert readme.get("reference") == "tidewater-readme.md"
    feature = next(f for f in readme.iter("feature") if f.get("source_reference") == "mit-license.txt")
    this = (corpus / "submissions" / "tidewater-readme.md").read_text()
    source = (corpus / "originals" / "mit-license.txt").read_text()
    t0, tl = int(feature.get("this_offset")), int(feature.get("this_length"))
    s0, sl = int(feature.get("source_offset")), int(feature.get("source_length"))
    assert canonical_words(this[t0:t0 + tl]) == canonical_words(source[s0:s0 + sl])
    assert canonical_words(this[t0:t0 + tl])[:2] == ["mit", "license"]


def test_check_report_and_no_overwrite(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    essay = SAMPLE / "submissions" / "essay-on-public-memory.txt"
    text = essay.read_text(encoding="utf-8")
    own_sha = __import__("hashlib").sha256(essay.read_bytes()).hexdigest()
    out = _write(indexed, "json", tmp_path / "check.json", check=(str(indexed[1] / "submissions" / essay.name),
                                                                   own_sha, text))
    doc = json.loads(out.read_text())
    assert [p["kind"] for p in doc["pairs"]] == ["check"]
    assert doc["pairs"][0]["b"]["path"].endswith(("gettysburg-address.txt", "speech-backup-copy.txt"))
    assert 0.15 < doc["documents"][0]["share"] < 0.25
    with pytest.raises(UsageError):
        _write(indexed, "json", out, check=(str(essay), own_sha, text))
    _write(indexed, "json", out, check=(str(essay), own_sha, text), force=True)


def test_names_cannot_escape_the_output_folder() -> None:
    taken: set[str] = set()
    for hostile in ("../../etc/passwd", "/abs/path.txt", "a\x00b.txt", "..", "C:\\evil\\x.txt"):
        name = safe_name(hostile, taken)
        assert "/" not in name and "\\" not in name and "\x00" not in name and not name.startswith(".")
    assert len(taken) == 5


def test_cli_report_end_to_end(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = indexed
    out = tmp_path / "r.html"
    done = subprocess.run([sys.executable, "-m", "scanner", "report", "--index", str(db), "--format", "html",
                           "-o", str(out)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "scanner report --index" in out.read_text()
    again = subprocess.run([sys.executable, "-m", "scanner", "report", "--index", str(db), "-o", str(out)],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.skipif(_browser() is None, reason="chromium not installed (apt-get install chromium)")
def test_real_browser_renders_without_running_document_scripts(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    out = _write(indexed, "html", tmp_path / "browser.html")
    done = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", out.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert "<title>scanner report</title>" in done.stdout
    assert "pwned" not in done.stdout.split("</title>")[0]
    assert "Suspected pairs" in done.stdout
