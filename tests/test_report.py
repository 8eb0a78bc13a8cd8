"""Reports of a real index holding real texts, planted copies and hostile documents."""

from __future__ import annotations

import csv
import hashlib
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from corpus import text_alignment_pairs
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scanner.core.config import Params
from scanner.core.errors import UsageError
from scanner.engine.canon import canonical_words
from scanner.faces.report import SCHEMA_PATH, Selection, checked_document, load_schema, write_report
from scanner.faces.report.csv_format import CSV_FIELDS, cell
from scanner.faces.report.html import CSP, render_html
from scanner.faces.report.json_format import render_json
from scanner.faces.report.model import (
    REPORT_SCHEMA_VERSION,
    ClusterInfo,
    DocumentShare,
    FileEvidence,
    Pair,
    PairPassage,
    Report,
    Side,
    SourceShare,
)
from scanner.faces.report.pan import safe_name, safe_target
from scanner.index import Index
from scanner.services.passages import align_index
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"
# a PAN-style pair (tests/corpus.py) with three verbatim cases that hold most of the source, so the pair is
# a containment finding of the index (as PAN-13's suspicious-document00119 and source-document01611 were);
# the planted offsets are the ground truth
PAN_PAIR = next(p for p in text_alignment_pairs(12, "none", seed=7, cases=(3, 3), words=(600, 700), passage=(120, 200))
                if len(p.cases) == 3 and sum(c.source_length for c in p.cases) > 0.7 * len(p.src))
PAN_SUSP, PAN_SRC = PAN_PAIR.susp_name, PAN_PAIR.src_name
FILLER = (SAMPLE / "unrelated" / "field-notes-river-survey.txt").read_text(encoding="utf-8")
SCRIPT = "<script>document.title='pwned'</script>"
IMG = '"><img src=x onerror=alert(1)>'
STYLE = "</style><script>alert(2)</script>"
TEXTAREA = "</textarea><iframe src=javascript:alert(3)></iframe>"
HOSTILE_NAME = '"><img src=x onerror=alert(4)>.txt'  # a file name is hostile too
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "div", "table", "tr", "th",
                "td", "code", "span", "b", "br", "pre", "mark", "em", "a", "svg", "rect", "text", "line"}
FIXED_TIME = 1_700_000_000.0


def _corpus(root: Path) -> Path:
    corpus = root / "corpus"
    shutil.copytree(SAMPLE, corpus, ignore=shutil.ignore_patterns("SOURCES.md"))
    half = len(FILLER) // 2
    hostile = f"{FILLER[:half]} {SCRIPT} {IMG} {STYLE} {TEXTAREA} {FILLER[half:]}"
    (corpus / "hostile").mkdir()
    (corpus / "hostile" / "markup.txt").write_text(hostile, encoding="utf-8")
    (corpus / "hostile" / HOSTILE_NAME).write_text(hostile.replace("river", "creek"), encoding="utf-8")
    # a .txt with markup is sniffed as HTML and its tags dropped; entities in a page decode to markup text
    page = f"<html><body><p>{html_lib.escape(hostile)}</p></body></html>"
    (corpus / "hostile" / "entities.html").write_text(page, encoding="utf-8")
    (corpus / "pan").mkdir()
    (corpus / "pan" / PAN_SUSP).write_text(PAN_PAIR.susp, encoding="utf-8")
    (corpus / "pan" / PAN_SRC).write_text(PAN_PAIR.src, encoding="utf-8")
    return corpus


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    corpus = _corpus(root)
    db = root / "index.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(corpus)], index, make_plugin_manager(), Params(), jobs=0)
        align_index(index, Params(), jobs=0)  # what `scanner scan` does: the report reads the stored passages
    return db, corpus


def _write(indexed: tuple[Path, Path], fmt: str, out: Path, **kwargs) -> Path:
    db, _ = indexed
    with Index.open(db) as index:
        return write_report(index, index.params, fmt, out, index_path=str(db), command="scanner report test",
                            clock=lambda: FIXED_TIME, **kwargs)


@pytest.fixture(scope="module")
def json_report(indexed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = _write(indexed, "json", tmp_path_factory.mktemp("json") / "report.json")
    return json.loads(out.read_text(encoding="utf-8"))


class _Elements(HTMLParser):
    """Every element and attribute a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _assert_inert(page: str) -> _Elements:
    """No element, attribute or URL that a document could have smuggled in."""
    parser = _Elements()
    parser.feed(page)
    parser.close()
    assert set(parser.tags) <= ALLOWED_TAGS, set(parser.tags) - ALLOWED_TAGS
    assert "script" not in parser.tags and "img" not in parser.tags and "iframe" not in parser.tags
    assert parser.tags.count("style") == 1 and parser.tags.count("title") == 1
    assert [name for name, _ in parser.attributes if name.startswith("on")] == []
    for name, value in parser.attributes:
        if name == "href":
            assert value is not None and re.fullmatch(r"#pair-\d+", value), value
        assert name not in ("src", "srcdoc", "action", "formaction", "background")
    return parser


# ---------------------------------------------------------------------------- HTML


def test_html_is_inert_escaped_and_self_contained(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    """Hostile text and file names show as text; no script, handler or URL reaches the page."""
    page = _write(indexed, "html", tmp_path / "report.html").read_text(encoding="utf-8")
    parser = _assert_inert(page)
    shown = "".join(parser.text)
    assert SCRIPT in shown and IMG in shown and TEXTAREA in shown  # visible as text, in the passages
    assert HOSTILE_NAME in shown
    assert html_lib.escape(SCRIPT, quote=True) in page
    assert f'<meta http-equiv="Content-Security-Policy" content="{html_lib.escape(CSP)}">' in page
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    urls = [(name, value) for name, value in parser.attributes if value and "//" in value]
    assert urls == [("xmlns", "http://www.w3.org/2000/svg")]  # no attribute loads anything
    assert "<svg" in page and "<mark>" in page


def test_html_names_every_file_and_the_evidence(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    page = _write(indexed, "html", tmp_path / "report.html").read_text(encoding="utf-8")
    with Index.open(indexed[0]) as index:
        rows = list(index.files(include_vanished=False))
        guaranteed = index.params.guaranteed_run
    assert len(rows) >= 15
    for row in rows:
        assert row.sha256 in page and html_lib.escape(row.path, quote=True) in page
        assert f"<td class=num>{row.size}</td>" in page
    assert f"any run of at least {guaranteed} shared words is found" in page
    assert "2023-11-14T22:13:20Z" in page  # generated_at, from the injected clock
    assert html_lib.escape(str(indexed[0])) in page and "scanner report test" in page
    assert "Suspected pairs" in page and "found in" in page and "estimated edit distance" in page


def _report_holding(text: str, path: str) -> Report:
    """A report whose every field, path and passage holds `text` or `path`."""
    doc_text = f"{text} shared words of a passage {text}"
    a, b = Side(path, "a" * 64, 1), Side(path + "<", "b" * 64, 2)
    passage = PairPassage(0, len(doc_text), 0, len(doc_text), doc_text, doc_text)
    return Report(REPORT_SCHEMA_VERSION, "scanner", "0", "2023-01-01T00:00:00Z", path, path, "g",
                  {"p": path}, {"mode": "index", "threshold": 0.5, "min_containment": 0.5, "check": None,
                                "base": [{"label": path, "sha256": "c" * 64, "words": 3}]},
                  {k: 0 for k in ("files", "documents", "clusters", "pairs", "suspected_copies", "identical",
                                  "near_duplicates", "containments", "check_matches",
                                  "documents_with_findings", "passages")},
                  (FileEvidence(path, "a" * 64, 1, "2023-01-01T00:00:00Z", 0, path, path, path),),
                  (ClusterInfo(1, "near-duplicate", 0.5, (a, b)),),
                  (Pair("near-duplicate", a, b, 0.5, 0.5, float("nan"), 3, "exact", (passage,)),),
                  (DocumentShare(path, "a" * 64, 0.5, 1, (SourceShare(path, "b" * 64, 0.5),)),),
                  {"a" * 64: doc_text, "b" * 64: doc_text})


def test_html_shows_the_first_pairs_of_a_large_report_and_says_how_many_more() -> None:
    """A page shows at most PAIRS_SHOWN pairs a section and says how many it leaves to the JSON and CSV, which
    keep them all; the documents table links only to pairs on the page."""
    from scanner.faces.report.html import PAIRS_SHOWN

    base = _report_holding("a shared passage of text", "/evidence/a.txt")
    near = base.pairs[0]
    extra = 3
    sharing = tuple(replace(near, kind="passages", a=Side(f"/evidence/{k}.txt", f"{k:064x}", k + 10), shared_words=50)
                    for k in range(PAIRS_SHOWN + extra))
    report = replace(base, pairs=(near, *sharing),
                     documents=(DocumentShare(f"/evidence/{PAIRS_SHOWN + 1}.txt", f"{PAIRS_SHOWN + 1:064x}", 0.5, 1,
                                              (SourceShare("/evidence/a.txt", "b" * 64, 0.5),)),))
    page = render_html(report)
    _assert_inert(page)
    assert page.count('<div class=pair id="pair-') == 1 + PAIRS_SHOWN
    assert f"<b>{extra} more pairs</b>" in page and page.count("class=more-pairs") == 1
    assert f'href="#pair-{PAIRS_SHOWN + 3}"' not in page  # that document's pair is not on the page
    assert len(json.loads(render_json(report))["pairs"]) == 1 + PAIRS_SHOWN + extra


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=200), path=st.text(min_size=1, max_size=60))
def test_html_stays_inert_for_any_text_and_path(text: str, path: str) -> None:
    """Whatever a document holds (markup, quotes, controls, surrogates), the page has only our elements."""
    page = render_html(_report_holding(text, path))
    page.encode("utf-8")  # no lone surrogate survives
    _assert_inert(page)


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=200), path=st.text(min_size=1, max_size=60))
@example(text="caf\udce9 au lait", path=os.fsdecode(b"/evidence/r\xe9sum\xe9.txt"))  # undecodable bytes
def test_json_is_utf8_and_gives_back_any_text_and_path(text: str, path: str) -> None:
    """Any path (a name with undecodable bytes holds lone surrogates) and text: valid UTF-8, and read back
    the same; one line a top-level item."""
    report = _report_holding(text, path)
    rendered = render_json(report)
    rendered.encode("utf-8")
    data = json.loads(rendered)
    assert data == json.loads(json.dumps(report.to_json()))
    assert data["files"][0]["path"] == path and data["pairs"][0]["passages"][0]["text"].startswith(text)
    assert rendered.count("\n") == len(data) + 2 + sum(len(v) + 1 for v in data.values()
                                                             if isinstance(v, list) and v)


# ---------------------------------------------------------------------------- JSON


def test_json_validates_against_its_schema(json_report: dict) -> None:
    schema = load_schema()
    try:
        import jsonschema
    except ImportError:  # minimal structural check
        assert set(schema["required"]) <= set(json_report)
    else:
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(json_report, schema)
    assert json_report["schema_version"] == REPORT_SCHEMA_VERSION == schema["properties"]["schema_version"]["const"]
    assert SCHEMA_PATH.is_file()


def test_json_content(indexed: tuple[Path, Path], json_report: dict) -> None:
    doc = json_report
    assert {"identical", "near-duplicate", "containment"} <= {p["kind"] for p in doc["pairs"]}
    licence = next(p for p in doc["pairs"] if p["kind"] == "containment" and p["a"]["path"].endswith("mit-license.txt")
                   and p["b"]["path"].endswith("tidewater-readme.md"))
    assert licence["containment_a_in_b"] == 1.0 and licence["measure"] == "exact"
    assert licence["edit_distance_estimate"] >= 0 and licence["passages"]
    with Index.open(indexed[0]) as index:
        rows = {r.path: r for r in index.files(include_vanished=False)}
    assert doc["summary"]["files"] == len(doc["files"]) == len(rows)
    for f in doc["files"]:
        row = rows[f["path"]]
        assert (f["sha256"], f["size"], f["mtime_ns"]) == (row.sha256, row.size, row.mtime_ns)
    assert doc["selection"]["mode"] == "index" and doc["index"] == str(indexed[0])
    assert doc["guarantee"] == "any run of at least 7 shared words is found"
    # passages: offsets point at the text they quote, on both sides
    texts = {}
    with Index.open(indexed[0]) as index:
        for pair in doc["pairs"]:
            for side in ("a", "b"):
                if pair[side]["doc_id"] is not None:
                    texts[pair[side]["sha256"]] = index.text(pair[side]["doc_id"])
    for pair in doc["pairs"]:
        for p in pair["passages"]:
            assert texts[pair["a"]["sha256"]][p["a_start"]:p["a_end"]] == p["text"]
            assert texts[pair["b"]["sha256"]][p["b_start"]:p["b_end"]] == p["text_b"]
    # the teachers' view: every file of a pair with passages is listed, with its sources
    shares = {d["path"]: d for d in doc["documents"]}
    readme = next(d for path, d in shares.items() if path.endswith("tidewater-readme.md"))
    assert 0.3 < readme["share"] < 1.0 and readme["sources"] == len(readme["by_source"]) >= 1


# ---------------------------------------------------------------------------- CSV


def test_csv_has_one_row_per_pair(indexed: tuple[Path, Path], json_report: dict, tmp_path: Path) -> None:
    out = _write(indexed, "csv", tmp_path / "pairs.csv")
    with out.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == CSV_FIELDS
        rows = list(reader)
    assert len(rows) == len(json_report["pairs"])
    for row, pair in zip(rows, json_report["pairs"]):
        assert (row["path_a"], row["sha256_b"], row["kind"]) == (pair["a"]["path"], pair["b"]["sha256"], pair["kind"])
        assert float(row["containment_b_in_a"]) == pytest.approx(pair["containment_b_in_a"], abs=1e-6)
        assert int(row["edit_distance_estimate"]) == pair["edit_distance_estimate"]
        assert int(row["passages"]) == len(pair["passages"])
    hostile = [r for r in rows if HOSTILE_NAME in r["path_a"] + r["path_b"]]
    assert hostile


def test_csv_cells_never_become_formulas() -> None:
    for dangerous in ("=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"):
        assert cell(dangerous).startswith("'")
    assert cell("plain/path.txt") == "plain/path.txt" and cell(0.5) == "0.500000" and cell(12) == "12"
    assert cell(float("nan")) == "" and cell(None) == ""


# ---------------------------------------------------------------------------- PAN


def _features(root: ET.Element) -> list[tuple[int, int, str, int, int]]:
    return [(int(f.get("this_offset")), int(f.get("this_length")), f.get("source_reference"),
             int(f.get("source_offset")), int(f.get("source_length"))) for f in root.iter("feature")]


def test_pan_offsets_point_at_the_shared_text(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    folder = _write(indexed, "pan", tmp_path / "pan")
    _, corpus = indexed
    readme = ET.parse(folder / "tidewater-readme.xml").getroot()
    assert readme.tag == "document" and readme.get("reference") == "tidewater-readme.md"
    this = (corpus / "submissions" / "tidewater-readme.md").read_text(encoding="utf-8")
    source = (corpus / "originals" / "mit-license.txt").read_text(encoding="utf-8")
    features = [f for f in _features(readme) if f[2] == "mit-license.txt"]
    assert features
    for t0, tl, _, s0, sl in features:
        assert canonical_words(this[t0:t0 + tl]) == canonical_words(source[s0:s0 + sl])
        assert canonical_words(this[t0:t0 + tl])[:2] == ["mit", "license"]
    for path in folder.iterdir():  # every file parses, names stay plain
        assert re.fullmatch(r"[A-Za-z0-9._-]+\.xml", path.name)
        ET.parse(path)


def test_pan_finds_planted_cases_at_their_offsets(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    """A PAN-style verbatim pair with three cases: our detections cover the planted cases."""
    folder = _write(indexed, "pan", tmp_path / "pan13")
    ours = ET.parse(folder / PAN_SUSP.replace(".txt", ".xml")).getroot()
    assert ours.get("reference") == PAN_SUSP
    detected = [f for f in _features(ours) if f[2] == PAN_SRC]
    truth = [(c.this_offset, c.this_length, PAN_SRC, c.source_offset, c.source_length) for c in PAN_PAIR.cases]
    assert detected and len(truth) == 3
    susp, src = PAN_PAIR.susp, PAN_PAIR.src
    for t0, tl, _, s0, sl in detected:  # the same words on both sides (a side may reach a little further:
        this, source = canonical_words(susp[t0:t0 + tl]), canonical_words(src[s0:s0 + sl])  # sentence seeds)
        short, long = sorted((this, source), key=len)
        assert any(long[i:i + len(short)] == short for i in range(len(long) - len(short) + 1))
        assert len(short) > 0.9 * len(long)
    for side, first, length in (("this", 0, 1), ("source", 3, 4)):  # PAN's character precision and recall
        found = {i for f in detected for i in range(f[first], f[first] + f[length])}
        truth_chars = {i for f in truth for i in range(f[first], f[first] + f[length])}
        assert len(found & truth_chars) / len(truth_chars) > 0.95, side
        assert len(found & truth_chars) / len(found) > 0.95, side


def test_pan_names_cannot_leave_the_output_folder(tmp_path: Path) -> None:
    taken: set[str] = set()
    for hostile in ("../../etc/passwd", "/abs/path.txt", "a\x00b.txt", "..", ".", "C:\\evil\\x.txt", "",
                    "..\\..\\x.txt", ".hidden", "a/../../b.txt", HOSTILE_NAME):
        name = safe_name(hostile, taken)
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.xml", name), name
        assert safe_target(tmp_path, name).parent == tmp_path
    assert len(taken) == 11
    for bad in ("../x.xml", "/etc/x.xml", "a\x00.xml", "..", ".", "a/b.xml", "a\\b.xml", "C:x.xml", ""):
        with pytest.raises(UsageError):
            safe_target(tmp_path, bad)


# ---------------------------------------------------------------------------- selection, overwrite


def test_check_report_of_one_document(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    essay = indexed[1] / "submissions" / "essay-on-public-memory.txt"
    check = checked_document(essay)
    out = _write(indexed, "json", tmp_path / "check.json", selection=Selection(check))
    doc = json.loads(out.read_text(encoding="utf-8"))
    import jsonschema

    jsonschema.validate(doc, load_schema())
    assert doc["selection"]["mode"] == "check" and doc["selection"]["check"]["sha256"] == check.sha256
    assert {p["kind"] for p in doc["pairs"]} == {"check"}
    assert all(p["a"]["path"] == str(essay) for p in doc["pairs"])
    assert any(p["b"]["path"].endswith(("gettysburg-address.txt", "speech-backup-copy.txt")) for p in doc["pairs"])
    first = doc["files"][0]
    assert (first["path"], first["sha256"], first["size"], first["status"]) == (
        str(essay), hashlib.sha256(essay.read_bytes()).hexdigest(), essay.stat().st_size, "checked")
    assert {f["sha256"] for f in doc["files"][1:]} == {p["b"]["sha256"] for p in doc["pairs"]}
    assert 0.1 < doc["documents"][0]["share"] < 0.4
    # the TUI's shorthand gives the same pairs
    legacy = _write(indexed, "json", tmp_path / "legacy.json", check=(str(essay), check.sha256, check.text))
    assert json.loads(legacy.read_text())["pairs"] == doc["pairs"]


def test_thresholds_select_pairs(indexed: tuple[Path, Path], json_report: dict, tmp_path: Path) -> None:
    strict = json.loads(_write(indexed, "json", tmp_path / "strict.json", threshold=0.95,
                               min_containment=0.99).read_text())
    assert strict["selection"]["threshold"] == 0.95 and strict["params"]["min_containment"] == 0.99
    assert 0 < len(strict["pairs"]) < len(json_report["pairs"])


@pytest.mark.parametrize("fmt", ["html", "json", "csv"])
def test_never_overwrites_without_force(indexed: tuple[Path, Path], tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"existing.{fmt}"
    out.write_text("keep me")
    with pytest.raises(UsageError, match="--force"):
        _write(indexed, fmt, out)
    assert out.read_text() == "keep me"
    _write(indexed, fmt, out, force=True)
    assert out.read_text() != "keep me"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left behind


def test_a_report_written_in_pieces_is_whole_or_absent(tmp_path: Path) -> None:
    """`write_new` given pieces as they are made (a large JSON report): all of them, in order; an error while
    they are made leaves no file and no temporary file beside it."""
    from scanner.faces.report.output import write_new

    out = tmp_path / "r.json"
    write_new(out, (f"{k}\n".encode() for k in range(1000)), force=False)
    assert out.read_text() == "".join(f"{k}\n" for k in range(1000))

    def failing():
        yield b"{"
        raise RuntimeError("the report could not be made")

    broken = tmp_path / "broken.json"
    with pytest.raises(RuntimeError):
        write_new(broken, failing(), force=False)
    assert not broken.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_pan_never_overwrites_without_force(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    folder = tmp_path / "pan"
    folder.mkdir()
    (folder / "tidewater-readme.xml").write_text("keep me")
    with pytest.raises(UsageError, match="--force"):
        _write(indexed, "pan", folder)
    assert [p.name for p in folder.iterdir()] == ["tidewater-readme.xml"]  # all or nothing
    _write(indexed, "pan", folder, force=True)
    assert ET.parse(folder / "tidewater-readme.xml").getroot().tag == "document"
    with pytest.raises(UsageError):
        _write(indexed, "pan", folder / "tidewater-readme.xml")  # -o must be a folder
    with pytest.raises(UsageError):
        _write(indexed, "html", tmp_path / "bad\x00name.html")


# ---------------------------------------------------------------------------- CLI and a real browser


def test_cli_report_end_to_end(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = indexed
    out = tmp_path / "r.html"
    env = {**os.environ, "SCANNER_INDEX": str(db)}
    done = subprocess.run([sys.executable, "-m", "scanner", "report", "--format", "html", "-o", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    expected = (f"scanner report --index {db} --format html -o {out} --threshold 0.5 --min-containment 0.5")
    assert html_lib.escape(expected) in page  # the index came from $SCANNER_INDEX: the command names it
    again = subprocess.run([sys.executable, "-m", "scanner", "report", "-o", str(out)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr and len(again.stderr.splitlines()) == 1


def _browser() -> str | None:
    for candidate in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(candidate)
        if found:
            return found
    return None


@pytest.mark.skipif(_browser() is None, reason="no chromium/google-chrome installed (apt-get install chromium)")
def test_real_browser_renders_without_running_document_scripts(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    out = _write(indexed, "html", tmp_path / "browser.html")
    done = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", out.as_uri()],
                          capture_output=True, text=True, timeout=60)
    dom = done.stdout
    assert "</html>" in dom, done.stderr[-2000:]
    assert re.search(r"<title>(.*?)</title>", dom).group(1) == "scanner report"  # the planted script never ran
    assert "<script" not in dom.lower() and "<img" not in dom.lower() and "<iframe" not in dom.lower()
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom  # shown as text instead
    assert 'id="summary"' in dom and "Suspected pairs" in dom and "found in" in dom
