"""`check` against a real SQLite index built by the real scan service."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from corpus import documents, text_alignment_pairs

from scanner.core.config import Params
from scanner.engine.sketch import shingle_text
from scanner.index import Index
from scanner.services.check import CheckOptions, check_text, exclusion_mask, is_finding
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_corpus"


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("check") / "sample.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(SAMPLE / "originals")], index, make_plugin_manager(), Params(), jobs=0)
    return db


def test_lifted_passage_is_found_with_offsets(sample_index: Path) -> None:
    essay = (SAMPLE / "submissions" / "essay-on-public-memory.txt").read_text(encoding="utf-8")
    with Index.open(sample_index) as index:
        report = check_text(essay, index, index.params)
    assert [m.path.rsplit("/", 1)[-1] for m in report.matches] == ["gettysburg-address.txt"]
    match = report.matches[0]
    source = (SAMPLE / "originals" / "gettysburg-address.txt").read_text(encoding="utf-8")
    (passage,) = match.passages
    lifted = "It is rather for us to be here dedicated to the great task remaining before us"
    assert essay[passage.query_start:passage.query_end].startswith(lifted)
    assert source[passage.doc_start:passage.doc_end].startswith(lifted)
    assert passage.text.endswith("shall not have died in vain")
    # the lifted sentence is 52 of the essay's 288 words
    assert 0.15 < report.coverage < 0.22
    assert 0.15 < match.containment_query_in_doc < 0.25
    assert not is_finding(match, index.params if False else Params())


def test_unrelated_text_has_no_match(sample_index: Path) -> None:
    text = (SAMPLE / "unrelated" / "recipe-rye-bread.md").read_text(encoding="utf-8")
    with Index.open(sample_index) as index:
        report = check_text(text, index, index.params)
    assert report.matches == ()
    assert report.coverage == 0.0


def test_near_duplicate_is_a_finding(sample_index: Path) -> None:
    html_text = (SAMPLE / "originals" / "declaration-of-independence.txt").read_text(encoding="utf-8")
    edited = html_text.replace("a candid world", "an impartial world").replace("hath shewn", "has shown")
    with Index.open(sample_index) as index:
        report = check_text(edited, index, index.params)
        best = report.matches[0]
        assert best.path.endswith("declaration-of-independence.txt")
        assert best.resemblance > 0.9
        assert is_finding(best, index.params)
        assert report.coverage > 0.95


def test_quotes_and_bibliography_are_excluded() -> None:
    params = Params()
    text = ('He wrote that "the brave men living and dead who struggled here have consecrated it" and left.\n'
            "Body text continues here with more words.\n\nReferences\n\nLincoln, A. Gettysburg Address.\n")
    shingled = shingle_text(text, params)
    masked = exclusion_mask(text, shingled, quotes=True, bibliography=True)
    words = [text[s:e] for s, e in zip(shingled.tokens.starts, shingled.tokens.ends)]
    masked_words = [w for w, m in zip(words, masked) if m]
    assert masked_words[:3] == ["the", "brave", "men"]
    assert "wrote" not in masked_words and "Body" not in masked_words
    assert masked_words[-3:] == ["A", "Gettysburg", "Address"]


def test_quoted_passage_does_not_count_when_excluded(sample_index: Path) -> None:
    lifted = ("that from these honored dead we take increased devotion to that cause for which they gave "
              "the last full measure of devotion")
    text = f'My essay about rivers and bread. As the speech says, "{lifted}", which I find moving and true.'
    with Index.open(sample_index) as index:
        plain = check_text(text, index, index.params)
        excluded = check_text(text, index, index.params, CheckOptions(exclude_quotes=True))
    assert plain.matches and plain.coverage > 0.5
    assert excluded.matches == ()


def test_boilerplate_index_never_counts(tmp_path: Path, sample_index: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    shutil.copy(SAMPLE / "originals" / "gettysburg-address.txt", base / "speech.txt")
    base_db = tmp_path / "base.db"
    with Index.open(base_db, readonly=False, params=Params()) as index:
        run_scan([str(base)], index, make_plugin_manager(), Params(), jobs=0)
    essay = (SAMPLE / "submissions" / "essay-on-public-memory.txt").read_text(encoding="utf-8")
    with Index.open(sample_index) as index, Index.open(base_db) as boilerplate:
        report = check_text(essay, index, index.params, exclude=boilerplate)
    assert report.matches == ()
    assert report.excluded_tokens >= 52


def test_detection_guarantee_on_real_text(sample_index: Path) -> None:
    """Any run of guaranteed_run shared words planted in unrelated text is found, wherever it comes from."""
    source = (SAMPLE / "originals" / "declaration-of-independence.txt").read_text(encoding="utf-8")
    filler = (SAMPLE / "unrelated" / "field-notes-river-survey.txt").read_text(encoding="utf-8")
    params = Params()
    words = source.split()
    rng = np.random.default_rng(7)
    with Index.open(sample_index) as index:
        t = index.params.guaranteed_run
        for _ in range(25):
            start = int(rng.integers(0, len(words) - t))
            run = " ".join(words[start:start + t])
            cut = int(rng.integers(0, len(filler)))
            cut = filler.rfind(" ", 0, cut) + 1
            text = filler[:cut] + " zzq " + run + " qqz " + filler[cut:]
            report = check_text(text, index, index.params, CheckOptions(min_words=t))
            hits = [m for m in report.matches if m.path.endswith("declaration-of-independence.txt")]
            assert hits, f"run of {t} words not found: {run!r}"
    assert params.guaranteed_run == t


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_cli_check_json_and_exit_codes(sample_index: Path, tmp_path: Path) -> None:
    near = tmp_path / "near.txt"
    near.write_text((SAMPLE / "originals" / "mit-license.txt").read_text().replace("2019", "2024"))
    done = _cli("check", str(near), str(SAMPLE / "unrelated" / "recipe-rye-bread.md"), "--index",
                str(sample_index), "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    first, second = doc["results"]
    assert first["matches"][0]["path"].endswith("mit-license.txt")
    assert set(first["matches"][0]) >= {"path", "sha256", "resemblance", "containment_query_in_doc",
                                        "containment_doc_in_query", "edit_distance_estimate", "passages"}
    passage = first["matches"][0]["passages"][0]
    assert set(passage) == {"query_start", "query_end", "doc_start", "doc_end", "text", "kind"}
    assert passage["kind"] == "verbatim"
    assert second["matches"] == []
    assert "guarantee" in doc
    clean = _cli("check", str(SAMPLE / "unrelated" / "recipe-rye-bread.md"), "--index", str(sample_index))
    assert clean.returncode == 0, clean.stderr
    assert "0.0% of this document is found in 0 sources" in clean.stdout
    # the error is one line naming the whole path, however long the path and narrow the console
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3) / "nope.txt"
    missing = _cli("check", str(deep), "--index", str(sample_index))
    assert missing.returncode == 3
    assert missing.stderr.splitlines()[0] == f"scanner: {deep}: No such file or directory"


def test_an_indexed_file_is_no_source_of_itself_but_its_copies_are(tmp_path: Path) -> None:
    """`check` of a file that is itself indexed: alone, it has no source; with an identical copy elsewhere,
    the copy is reported under its own path (same document, other path: evidence). Also for a name with
    bytes that are not UTF-8, which the index keeps escaped."""
    folder = tmp_path / "share"
    folder.mkdir()
    speech = (SAMPLE / "originals" / "gettysburg-address.txt").read_bytes()
    alone = folder / "license.txt"
    alone.write_bytes((SAMPLE / "originals" / "mit-license.txt").read_bytes())
    original, copy = folder / "speech.txt", folder / os.fsdecode(b"backup-\xff.txt")
    original.write_bytes(speech)
    copy.write_bytes(speech)
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
    done = _cli("check", str(alone), str(original), str(copy), "--index", str(db), "--json")
    assert done.returncode == 1, done.stderr
    by_alone, by_original, by_copy = json.loads(done.stdout)["results"]
    assert by_alone["matches"] == []
    assert [m["path"] for m in by_original["matches"]] == [str(folder / "backup-\\xff.txt")]
    assert [m["path"] for m in by_copy["matches"]] == [str(original)]
    assert by_copy["query"] == str(folder / "backup-\\xff.txt")  # named as the index names it
    assert by_original["matches"][0]["resemblance"] == 1.0


def test_cli_check_add_puts_the_file_in_the_index(tmp_path: Path, sample_index: Path) -> None:
    db = tmp_path / "copy.db"
    shutil.copy(sample_index, db)
    (tmp_path / "inbox").mkdir()
    new = tmp_path / "inbox" / "new.txt"
    new.write_text((SAMPLE / "unrelated" / "field-notes-river-survey.txt").read_text())
    assert _cli("check", str(new), "--index", str(db), "--add").returncode == 0
    again = tmp_path / "again.txt"
    again.write_text(new.read_text())
    done = _cli("check", str(again), "--index", str(db), "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["results"][0]["matches"][0]["resemblance"] == 1.0
    # a scan of its folder, spelled otherwise, finds it indexed: not a second row, not a copy of itself
    scanned = json.loads(_cli("scan", "inbox", "--index", str(db), "--json", cwd=tmp_path).stdout)
    assert (scanned["files_indexed"], scanned["files_unchanged"]) == (0, 1)


def test_pan_style_verbatim_case_through_the_index(tmp_path: Path) -> None:
    """A PAN-style pair (tests/corpus.py): its source among 20 others in an index; check finds the planted
    passage at its offsets."""
    pair = next(p for p in text_alignment_pairs(10, "none", seed=4) if len(p.cases) == 1)
    (case,) = pair.cases
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / pair.src_name).write_text(pair.src, encoding="utf-8")
    for i, other in enumerate(documents(20, seed=9)):
        (src_dir / f"other-{i:02d}.txt").write_text(other, encoding="utf-8")
    db = tmp_path / "pan.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(src_dir)], index, make_plugin_manager(), Params(), jobs=0)
    with Index.open(db) as index:
        report = check_text(pair.susp, index, index.params, CheckOptions(min_words=15))
    assert [Path(m.path).name for m in report.matches] == [pair.src_name]
    this_offset, this_length = case.this_offset, case.this_length
    best = max(report.matches[0].passages,
               key=lambda p: min(p.query_end, this_offset + this_length) - max(p.query_start, this_offset))
    assert abs(best.query_start - this_offset) < 10
    assert abs(best.query_end - (this_offset + this_length)) < 10
    assert abs(best.doc_start - case.source_offset) < 10


def test_reworded_sentences_count_unless_verbatim_is_asked(sample_index: Path) -> None:
    """A paraphrase of the Gettysburg Address (own rewording): reworded sentences extend the passage."""
    text = ("My notes for the history seminar, written in my own words.\n\n"
            "Eighty-seven years before, our fathers created upon this continent a new nation, born in liberty, "
            "and devoted to the idea that every man is created equal. "
            "At present we are caught in a great civil conflict, testing whether that nation, or any nation so "
            "born and so devoted, can long survive. "
            "We have met upon a great battle-field of that conflict. We came to dedicate a part of that field, as "
            "a last resting place for the men who here gave their lives so that the nation could live. "
            "It is entirely fitting and right that we should do so.\n\nThe seminar meets again on Thursday.")
    with Index.open(sample_index) as index:
        default = check_text(text, index, index.params, CheckOptions())
        verbatim = check_text(text, index, index.params, CheckOptions(verbatim=True))
    for report in (default, verbatim):
        assert [Path(m.path).name for m in report.matches] == ["gettysburg-address.txt"]
    assert default.coverage > 0.8 > 0.7 > verbatim.coverage > 0.4
    first = default.matches[0].passages[0]
    shared = text[first.query_start:first.query_end]
    assert shared.startswith("seven years before, our fathers") and "so that the nation could live" in shared


def test_sources_kept_prepared_from_check_to_check_change_nothing(sample_index: Path) -> None:
    """`CheckOptions.documents`: the sources a check prepared are kept for the next (a watch worker, the CLI
    checking many files); every report is the one a fresh check gives, and a second check reuses them."""
    from scanner.services.prepared import PreparedSides

    submissions = sorted((SAMPLE / "submissions").glob("*.txt"))
    texts = [p.read_text(encoding="utf-8") for p in submissions]
    with Index.open(sample_index) as index:
        kept = PreparedSides(index, index.params)
        cached = CheckOptions(documents=kept)
        first = [check_text(t, index, index.params, cached) for t in texts]
        assert first == [check_text(t, index, index.params) for t in texts]
        assert any(report.matches for report in first)
        doc_id = next(m.doc_id for report in first for m in report.matches if m.doc_id is not None)
        before = kept(doc_id)
        assert [check_text(t, index, index.params, cached) for t in texts] == first
        assert kept(doc_id) is before  # prepared once, not again


def test_tied_candidates_are_the_same_whatever_the_ids(tmp_path: Path) -> None:
    """Sixty documents hold the same sentence of the query and nothing else of it: as many shared anchors
    each, past the 50 candidates a check measures. The ones checked are chosen by content, so two indexes of
    the same files, whose documents got their ids in opposite orders, give the same matches."""
    from corpus import prose

    query = prose(5100, 400)
    sentence = " ".join(query.split()[120:132])  # 12 words of the query, in every document below
    found = []
    for reverse in (False, True):
        folder = tmp_path / f"tied-{reverse}"
        folder.mkdir()
        for i in range(60):
            name = f"doc-{59 - i if reverse else i:02d}.txt"
            (folder / name).write_text(f"{prose(5200 + i, 150)}\n\n{sentence}\n\n{prose(5300 + i, 150)}",
                                       encoding="utf-8")
        with Index.open(tmp_path / f"tied-{reverse}.db", readonly=False, params=Params()) as index:
            run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
            report = check_text(query, index, index.params, CheckOptions(top=60))
            found.append(({m.sha256 for m in report.matches}, [m.sha256 for m in report.matches],
                          {m.sha256: m.doc_id for m in report.matches}))
            every = sorted(index.sha256s(list(range(1, 200))).values())
            by_content = sorted(index.sha256s(list(range(1, 200))).items(), key=lambda item: item[1])
            # the documents' ids among others no document has, over several batches of an IN list (each
            # batch's first 7, then the first 7 of those)
            asked = [x for d in range(60, 0, -1) for x in (d, *range(1_000 + 40 * d, 1_039 + 40 * d))]
            assert list(index.first_by_content(asked, 7).items()) == by_content[:7]
    (first, first_order, first_ids), (second, second_order, second_ids) = found
    assert len(first) == CheckOptions().max_candidates  # a cut through the tie: 50 of the 60
    assert len(every) == 60 and first == set(every[:50])  # the first 50 by SHA-256
    assert first_ids != second_ids  # the documents got other ids
    assert first == second and first_order == second_order


def test_exact_measures_of_many_documents_are_those_of_their_sets() -> None:
    """One search for all candidates: each one's resemblance and containments as set arithmetic gives them,
    empty sets included."""
    from scanner.services.check import _exact_measures

    rng = np.random.default_rng(4)
    query = np.unique(rng.integers(0, 500, 200))
    docs = [np.unique(rng.integers(0, 500, k)) for k in (50, 0, 300, 1)] + [query, np.array([900, 901])]
    for doc, (r, q_in_d, d_in_q) in zip(docs, _exact_measures(query, docs)):
        shared = len(set(query.tolist()) & set(doc.tolist()))
        if doc.shape[0] == 0:
            assert (r, q_in_d, d_in_q) == (0.0, 0.0, 0.0)
            continue
        assert r == shared / len(set(query.tolist()) | set(doc.tolist()))
        assert (q_in_d, d_in_q) == (shared / query.shape[0], shared / doc.shape[0])
    assert _exact_measures(query[:0], docs[:1]) == [(0.0, 0.0, 0.0)] and _exact_measures(query, []) == []
