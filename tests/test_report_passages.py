"""Reports of the passages documents share (issue 20): hosts that lift 60-150 word passages from other
documents, scanned and aligned for real, then reported in every format."""

from __future__ import annotations

import csv
import dataclasses
import html as html_lib
import io
import json
import random
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from corpus import NOTICE, obfuscate, plant, prose

from scanner.core.config import Params
from scanner.engine.canon import canonical_words
from scanner.faces.cli import group
from scanner.faces.report import Selection, build_report, checked_document, load_schema, render
from scanner.faces.report.csv_format import CSV_FIELDS
from scanner.faces.report.model import Pair, Report
from scanner.index import Index
from scanner.services.passages import align_index
from scanner.services.scan.run import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"
FIXED_TIME = 1_700_000_000.0


@dataclasses.dataclass(frozen=True)
class Planted:
    """One passage a host lifted from a source; `span` is where it stands in the host."""

    host: str
    source: str
    text: str
    span: tuple[int, int]
    reworded: bool = False

    @property
    def words(self) -> int:
        return len(canonical_words(self.text))


def _sentences(text: str, skip_words: int, words: int) -> str:
    """Whole sentences of `text` (whitespace made single spaces) after `skip_words` words, about `words` long."""
    flat = " ".join(text.split())
    out: list[str] = []
    seen = count = 0
    for sentence in re.split(r"(?<=[.?!])\s+", flat):
        n = len(sentence.split())
        if seen >= skip_words and count < words:
            out.append(sentence)
            count += n
        seen += n
    return " ".join(out)


SOURCES = {f"source-{i}.txt": prose(100 + i, 900) for i in range(4)}
# (host, length of its own prose, [(source, skip words, passage words, reworded)]); hosts are shorter than
# their sources, so the passages make up more of the host: B of each "passages" pair, PAN's suspicious side
HOSTS = (
    ("host-0.txt", 300, [("source-0.txt", 100, 100, False)]),
    ("host-1.txt", 600, [("source-1.txt", 300, 62, False)]),
    ("host-2.txt", 400, [("source-2.txt", 200, 130, False), ("source-0.txt", 600, 70, False)]),
    ("host-3.txt", 400, [("source-3.txt", 300, 130, True)]),
)
UNRELATED = {"unrelated.txt": prose(300, 500)}


def _norm(text: str) -> str:
    """Up to whitespace (and the final punctuation a passage of word tokens stops before)."""
    return " ".join(text.split()).rstrip(".?!")


def _about(shared_words: int, p: Planted) -> bool:
    """The words a pair shares, against the planted passage's: a reworded one loses some to the rewording."""
    if p.reworded:
        return 0.75 * p.words <= shared_words <= p.words
    return abs(shared_words - p.words) <= 0.1 * p.words


def _build(folder: Path) -> tuple[dict[str, str], list[Planted]]:
    texts = dict(SOURCES)
    planted: list[Planted] = []
    rng = random.Random(20)
    for host, words, lifts in HOSTS:
        passages = []
        for source, skip, size, reworded in lifts:
            passage = _sentences(SOURCES[source], skip, size)
            passages.append(obfuscate(passage, random.Random(host), 0.3) if reworded else passage)
        text, spans = plant(prose(200 + len(texts), words), passages, rng)
        texts[host] = text
        planted += [Planted(host, source, passage, span, reworded)
                    for (source, _, _, reworded), passage, span in zip(lifts, passages, spans)]
    texts.update(UNRELATED)
    folder.mkdir()
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return texts, planted


@pytest.fixture(scope="module")
def planted_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str], list[Planted]]:
    root = tmp_path_factory.mktemp("passages")
    folder = root / "corpus"
    texts, planted = _build(folder)
    db = root / "index.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([folder], index, make_plugin_manager(), Params(), jobs=0)
        align_index(index, Params(), jobs=0)
    return db, folder, texts, planted


def _report(db: Path, selection: Selection | None = None) -> Report:
    with Index.open(db) as index:
        return build_report(index, index.params, selection, index_path=str(db), command="scanner report test",
                            clock=lambda: FIXED_TIME)


@pytest.fixture(scope="module")
def report(planted_index: tuple[Path, Path, dict[str, str], list[Planted]]) -> Report:
    return _report(planted_index[0])


def _name(path: str) -> str:
    return Path(path).name


def _passages_pair(report: Report, host: str, source: str) -> Pair:
    found = [p for p in report.pairs if p.kind == "passages" and {_name(p.a.path), _name(p.b.path)} == {host, source}]
    assert len(found) == 1, (host, source, [(p.kind, p.a.path, p.b.path) for p in report.pairs])
    return found[0]


def test_the_planted_corpus_is_what_the_tests_say(planted_index) -> None:
    _, _, texts, planted = planted_index
    assert len(planted) == 5
    for p in planted:
        assert 60 <= len(p.text.split()) <= 150, (p.host, len(p.text.split()))
        assert texts[p.host][p.span[0]:p.span[1]] == p.text
        assert len(canonical_words(texts[p.host])) < len(canonical_words(texts[p.source]))


# ---------------------------------------------------------------------------- the teachers' view


def test_every_host_is_a_document_with_the_share_it_lifted(planted_index, report: Report) -> None:
    """Turnitin's line for each host: its share found elsewhere, and each source's, within 0.01 of the planted."""
    _, _, texts, planted = planted_index
    documents = {_name(d.path): d for d in report.documents}
    for host, _, _ in HOSTS:
        words = len(canonical_words(texts[host]))
        mine = [p for p in planted if p.host == host]
        row = documents[host]
        assert row.share == pytest.approx(sum(p.words for p in mine) / words, abs=0.01), host
        by_source = {_name(s.path): s.share for s in row.by_source}
        assert set(by_source) == {p.source for p in mine} and row.sources == len(mine)
        for p in mine:
            assert by_source[p.source] == pytest.approx(p.words / words, abs=0.01), (host, p.source)
    assert "unrelated.txt" not in documents
    assert [d.share for d in report.documents] == sorted((d.share for d in report.documents), reverse=True)
    assert report.summary["documents_with_findings"] == len(report.documents) == 8  # 4 hosts, 4 sources


def test_a_passages_pair_per_host_and_source_holds_the_planted_text(planted_index, report: Report) -> None:
    db, _, texts, planted = planted_index
    with Index.open(db) as index:
        for p in planted:
            pair = _passages_pair(report, p.host, p.source)
            assert (_name(pair.a.path), _name(pair.b.path)) == (p.source, p.host)  # B: the side they make up more of
            assert pair.measure == "exact" and 0 < pair.containment_b_in_a < 0.5
            assert pair.shared_words is not None and _about(pair.shared_words, p)
            assert len(pair.passages) == 1
            passage = pair.passages[0]
            assert texts[p.host][passage.b_start:passage.b_end] == passage.text_b
            assert texts[p.source][passage.a_start:passage.a_end] == passage.text
            stored = index.passages.pair(pair.a.doc_id, pair.b.doc_id)  # the scan's passages, not aligned again
            assert stored is not None
            assert [(s.a_start, s.a_end, s.b_start, s.b_end, s.kind) for s in stored.passages] == [
                (q.a_start, q.a_end, q.b_start, q.b_end, q.kind) for q in pair.passages]
            if p.reworded:  # never shown as a verbatim copy
                assert passage.kind == "reworded" and pair.reworded == 1
                start, end = p.span
                inside = max(0, min(end, passage.b_end) - max(start, passage.b_start))
                assert inside > 0.8 * (end - start) and inside > 0.8 * (passage.b_end - passage.b_start)
            else:
                assert passage.kind == "verbatim"
                assert _norm(passage.text_b) == _norm(p.text) == _norm(passage.text)
    sharing = [p for p in report.pairs if p.kind == "passages"]
    assert len(sharing) == len(planted) == report.summary["passages_pairs"]
    assert [p.shared_words for p in sharing] == sorted((p.shared_words or 0 for p in sharing), reverse=True)
    assert report.summary["reworded_passages"] == 1 and report.summary["unaligned_documents"] == 0
    assert report.selection["min_words"] == Params().min_passage_words and report.selection["min_share"] == 0


def test_passages_hold_their_documents_texts_once_not_a_copy_each(report: Report) -> None:
    """A document in many pairs is one text in memory: each passage cuts its text out when read (a report of
    the 153,898 pairs of /usr/share/doc's index held 7 GB of passage copies), and reads the same as a copy."""
    by_document: dict[str, set[int]] = {}
    for pair in report.pairs:
        for passage in pair.passages:
            by_document.setdefault(pair.a.sha256, set()).add(id(passage.text_of_a))
            by_document.setdefault(pair.b.sha256, set()).add(id(passage.text_of_b))
            assert passage.text == report.texts[pair.a.sha256][passage.a_start:passage.a_end] != ""
            assert passage.text_b == report.texts[pair.b.sha256][passage.b_start:passage.b_end] != ""
    assert len(by_document) >= 2 and all(len(held) == 1 for held in by_document.values())
    plain_passage = report.to_json()["pairs"][0]["passages"][0]
    assert list(plain_passage)[:6] == ["a_start", "a_end", "b_start", "b_end", "text", "text_b"]
    assert "text_of_a" not in plain_passage and "text_of_b" not in plain_passage


def test_passages_pairs_are_read_not_aligned_again(planted_index, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only near-duplicates and containments are aligned by the report; this index has none."""
    import scanner.services.pair_alignment as aligner

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report aligned a pair whose passages the scan stored")

    monkeypatch.setattr(aligner, "pair_passages", refuse)
    monkeypatch.setattr(aligner, "token_passages", refuse)
    again = _report(planted_index[0])
    assert again.summary["passages_pairs"] == 5 and all(p.passages for p in again.pairs)


# ---------------------------------------------------------------------------- every format


def test_json_holds_the_passages_pairs_and_validates(planted_index, report: Report) -> None:
    _, _, _, planted = planted_index
    doc = json.loads(str(render(report, "json")))
    jsonschema.validate(doc, load_schema())
    sharing = [p for p in doc["pairs"] if p["kind"] == "passages"]
    assert len(sharing) == len(planted) == doc["summary"]["passages_pairs"]
    kinds = {(_name(p["b"]["path"]), q["kind"]) for p in sharing for q in p["passages"]}
    assert ("host-3.txt", "reworded") in kinds and ("host-0.txt", "verbatim") in kinds
    assert all(isinstance(p["shared_words"], int) for p in sharing)
    documents = {_name(d["path"]): d for d in doc["documents"]}
    assert {h for h, _, _ in HOSTS} <= set(documents)
    assert doc["selection"]["min_share"] == 0.0 and doc["selection"]["min_words"] == Params().min_passage_words


def test_csv_has_a_row_per_passages_pair(planted_index, report: Report) -> None:
    _, _, _, planted = planted_index
    rows = list(csv.DictReader(io.StringIO(str(render(report, "csv")))))
    assert tuple(rows[0]) == CSV_FIELDS
    sharing = {(_name(r["path_a"]), _name(r["path_b"])): r for r in rows if r["kind"] == "passages"}
    assert set(sharing) == {(p.source, p.host) for p in planted}
    for p in planted:
        row = sharing[(p.source, p.host)]
        assert row["passages"] == "1" and row["reworded_passages"] == ("1" if p.reworded else "0")
        assert _about(int(row["shared_words"]), p)


def test_html_shows_each_passages_pair_and_the_kind_of_each_passage(planted_index, report: Report) -> None:
    _, _, texts, planted = planted_index
    page = render(report, "html")
    assert isinstance(page, str)
    section = page[page.index("<h2 id=passages>Shared passages</h2>"):page.index("<h2>Evidence: files</h2>")]
    assert section.count("<span class=kind>passages</span>") == len(planted)
    assert section.count("<span class=kind>verbatim</span>") == 4
    assert section.count("reworded: the same sentences in other words, not a verbatim copy") == 1
    assert section.count("<mark class=rw>") == 2  # both sides of the reworded passage, in their own colour
    for p in planted:
        assert html_lib.escape(p.host) in section and html_lib.escape(p.source) in section
        if not p.reworded:
            first = " ".join(p.text.split()[:8])
            assert html_lib.escape(first) in " ".join(section.split())
    documents = page[page.index("<table id=documents>"):page.index("<h2>Clusters</h2>")]
    for host, _, _ in HOSTS:
        assert html_lib.escape(host) in documents
    assert "<tr><th>pairs sharing passages</th><td class=num>5</td></tr>" in page
    assert "<script" not in page


def test_pan_detections_point_at_the_planted_passages(planted_index, report: Report) -> None:
    _, _, texts, planted = planted_index
    files = render(report, "pan")
    assert isinstance(files, dict)
    for p in planted:
        root = ET.fromstring(files[p.host.replace(".txt", ".xml")])
        assert root.get("reference") == p.host
        features = [f for f in root.iter("feature") if f.get("source_reference") == p.source]
        assert len(features) == 1
        f = features[0]
        t0, tl = int(f.get("this_offset", -1)), int(f.get("this_length", -1))
        s0, sl = int(f.get("source_offset", -1)), int(f.get("source_length", -1))
        start, end = p.span
        inside = max(0, min(end, t0 + tl) - max(start, t0))
        assert inside > 0.8 * (end - start) and inside > 0.8 * tl
        if not p.reworded:
            assert _norm(texts[p.host][t0:t0 + tl]) == _norm(p.text) == _norm(texts[p.source][s0:s0 + sl])
    assert not any(name.startswith("source-") for name in files)  # the sources took nothing in


# ---------------------------------------------------------------------------- --min-share, --min-words


def test_min_share_keeps_only_documents_and_pairs_with_that_much_found_elsewhere(planted_index) -> None:
    full = _report(planted_index[0])
    strict = _report(planted_index[0], Selection(min_share=0.15))
    assert strict.documents and all(d.share >= 0.15 for d in strict.documents)
    assert {_name(d.path) for d in strict.documents} == {_name(d.path) for d in full.documents if d.share >= 0.15}
    names = {_name(d.path) for d in strict.documents}
    assert "host-1.txt" not in names and {"host-0.txt", "host-2.txt"} <= names
    pairs = {frozenset((_name(p.a.path), _name(p.b.path))) for p in strict.pairs if p.kind == "passages"}
    assert frozenset(("host-1.txt", "source-1.txt")) not in pairs and frozenset(("host-0.txt", "source-0.txt")) in pairs
    assert 0 < strict.summary["passages_pairs"] < full.summary["passages_pairs"]
    assert strict.selection["min_share"] == 0.15


def test_min_words_counts_only_longer_passages(planted_index) -> None:
    longer = _report(planted_index[0], Selection(min_words=110))
    pairs = {frozenset((_name(p.a.path), _name(p.b.path))) for p in longer.pairs if p.kind == "passages"}
    assert pairs == {frozenset(("host-0.txt", "source-0.txt")), frozenset(("host-2.txt", "source-2.txt")),
                     frozenset(("host-3.txt", "source-3.txt"))}
    assert longer.selection["min_words"] == 110 and longer.params["passage_words"] == 110
    assert "host-1.txt" not in {_name(d.path) for d in longer.documents}
    none = _report(planted_index[0], Selection(min_words=400))
    assert none.summary["passages_pairs"] == 0 and none.documents == ()


def test_cli_min_share_and_min_words(planted_index, tmp_path: Path) -> None:
    db = planted_index[0]
    out = tmp_path / "report.json"
    runner = CliRunner()
    done = runner.invoke(group, ["report", "--index", str(db), "--format", "json", "-o", str(out),
                                 "--min-share", "0.15", "--quiet"])
    assert done.exit_code == 0, (done.output, done.exception)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["command"].endswith("--min-words 15 --min-share 0.15")
    assert doc["documents"] and all(d["share"] >= 0.15 for d in doc["documents"])
    assert "host-1.txt" not in {_name(p["b"]["path"]) for p in doc["pairs"]}
    out2 = tmp_path / "long.csv"
    done = runner.invoke(group, ["report", "--index", str(db), "--format", "csv", "-o", str(out2),
                                 "--min-words", "400", "-q"])
    assert done.exit_code == 0, (done.output, done.exception)
    assert out2.read_bytes().count(b"\r\n") == 1  # the header alone: no passage that long
    shown = runner.invoke(group, ["report", "--help"])
    assert "--min-words" in shown.output and "--min-share" in shown.output


def test_very_common_text_is_reported_in_every_format(tmp_path: Path) -> None:
    """A notice 7 of 25 documents hold pairs none of them (the very-common limit is 5), so no share found
    elsewhere holds it; `scan --json`, `clusters` and the JSON and HTML reports list its holders with the
    share of their fingerprints it makes, and say why it is in no share."""
    folder = tmp_path / "notices"
    folder.mkdir()
    for i in range(25):
        (folder / f"doc-{i:02d}.txt").write_text(prose(400 + i, 500) + ("\n\n" + NOTICE if i < 7 else ""),
                                                  encoding="utf-8")
    db = tmp_path / "index.db"
    runner = CliRunner()
    done = runner.invoke(group, ["scan", str(folder), "--index", str(db), "--jobs", "0", "--json", "--quiet"])
    assert done.exit_code == 0, (done.output, done.exception)
    scanned = json.loads(done.output)
    assert scanned["very_common"] == {"limit": 5, "documents": 7}
    common = {_name(d["path"]): d["common_share"] for d in scanned["documents"]}
    assert set(common) == {f"doc-{i:02d}.txt" for i in range(7)} and all(0.05 <= c < 0.2 for c in common.values())
    assert all(d["share"] == 0 and not d["sources"] for d in scanned["documents"])

    report = _report(db)
    doc = json.loads(str(render(report, "json")))
    jsonschema.validate(doc, load_schema())
    assert doc["selection"]["very_common_limit"] == 5 and doc["summary"]["very_common_documents"] == 7
    assert {_name(d["path"]): round(d["common_share"], 4) for d in doc["documents"]} == common
    assert all(d["sources"] == 0 and d["by_source"] == [] for d in doc["documents"])
    page = str(render(report, "html"))
    assert re.search(r'id=very-common>7 document\(s\) hold very common text \(fingerprints more than 5 documents',
                     page)
    assert page.count("very common text: ") == 7 and page.count("found in no other document") == 7

    listed = runner.invoke(group, ["clusters", "--index", str(db)], terminal_width=250)
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert "common" in listed.output and "7 document(s) hold very common text" in " ".join(listed.output.split())
    assert f"{common['doc-00.txt']:.0%}" in listed.output


# ---------------------------------------------------------------------------- a checked document


def test_check_report_marks_reworded_passages(planted_index) -> None:
    """`check`'s passages do not say how they were found; the report still never calls a reworded one verbatim."""
    db, folder, _, _ = planted_index
    for host, kind in (("host-3.txt", "reworded"), ("host-0.txt", "verbatim")):
        checked = _report(db, Selection(checked_document(folder / host)))
        source = "source-3.txt" if host == "host-3.txt" else "source-0.txt"
        pair = next(p for p in checked.pairs if _name(p.b.path) == source)
        assert pair.kind == "check" and pair.passages
        assert {q.kind for q in pair.passages} == {kind}, host


# ---------------------------------------------------------------------------- the sample corpus


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    root = tmp_path_factory.mktemp("sample")
    corpus = root / "corpus"
    shutil.copytree(SAMPLE, corpus, ignore=shutil.ignore_patterns("SOURCES.md"))
    db = root / "index.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([corpus], index, make_plugin_manager(), Params(), jobs=0)
        align_index(index, Params(), jobs=0)
    return _report(db)


def test_the_essay_quotes_the_gettysburg_address(sample_report: Report) -> None:
    speech = ("gettysburg-address.txt", "speech-backup-copy.txt")
    essay = next(d for d in sample_report.documents if d.path.endswith("essay-on-public-memory.txt"))
    assert 0.17 <= essay.share <= 0.19 and essay.sources == 1
    assert _name(essay.by_source[0].path) in speech and 0.17 <= essay.by_source[0].share <= 0.19
    pair = next(p for p in sample_report.pairs if p.kind == "passages" and "essay-on-public-memory.txt"
                in (_name(p.a.path), _name(p.b.path)))
    assert {_name(p) for p in (pair.a.path, pair.b.path)} & set(speech) and pair.passages
    # identical copies stay wholly found in each other, as before the passages
    for name in speech:
        row = next(d for d in sample_report.documents if _name(d.path) == name)
        assert row.share == 1.0 and {_name(s.path) for s in row.by_source} >= set(speech) - {name}
