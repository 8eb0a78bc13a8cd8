"""Base text (MOSS's base files): an assignment's template that every submission holds counts in no finding.

Generated submissions (tests/corpus.py): each one the same template (a heading and 220 words of
instructions), then its own answer; into one of them 120 words of another's answer are lifted. A worksheet
whose form is most of every submission, too. The real CLI, the real index, the real passage step.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scanner.core.config import Params
from scanner.engine.base import base_fingerprints, base_shingle_mask, base_token_mask, shingle_mask
from scanner.engine.sketch import build_sketch, exact_resemblance, shingle_text, theorem1_estimates
from scanner.index.store import Index
from scanner.services.check import CheckOptions, check_text
from tests.clirun import run_cli, scanned_pairs
from tests.corpus import prose

STUDENTS = 12
LIFTED = 120  # words of student00's answer lifted into student01's


def _template() -> str:
    return ("Assignment 3: The history of public memory. Name: ______ Student number: ______\n\n"
            "Instructions. " + prose(999, 220, topic=3) + "\n\nPart A. Answer in your own words.\n\n")


@pytest.fixture(scope="module")
def classroom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("class")
    (root / "submissions").mkdir()
    (root / "template.txt").write_text(_template())
    answers = [prose(100 + i, 700, topic=i % 5) for i in range(STUDENTS)]
    lifted = answers[0].split()[200:200 + LIFTED]
    for i, answer in enumerate(answers):
        words = answer.split()
        if i == 1:
            words = words[:300] + lifted + words[300:]
        text = _template() + " ".join(words) + "\n\nPart B. " + prose(500 + i, 200, topic=i % 5)
        (root / "submissions" / f"student{i:02d}.txt").write_text(text)
    return root


def test_a_base_token_is_one_a_base_shingle_covers() -> None:
    params = Params()
    w = params.shingle_size
    base_text = "the quick brown fox jumps over the lazy dog near the river bank today"
    text = "my own opening words come first and then " + base_text + " and my own closing words end it all"
    base = base_fingerprints([shingle_text(base_text, params)])
    shingled = shingle_text(text, params)
    tokens = base_token_mask(shingled, base, w)
    assert tokens.tolist() == [False] * 8 + [True] * 14 + [False] * 8
    masked = base_shingle_mask(shingled, base, w)
    assert masked is not None
    assert masked.tolist() == shingle_mask(tokens, shingled.fingerprints.shape[0], w).tolist()
    # a shingle holding any base token is masked: those that end in the base text, or start in it
    assert int(np.flatnonzero(masked)[0]) == 8 - (w - 1) and int(np.flatnonzero(masked)[-1]) == 21
    assert base_shingle_mask(shingle_text("nothing of it here at all in these few words", params), base, w) is None


def test_theorem1_without_base_estimates_the_rest_of_the_two_sets() -> None:
    """Left out of the samples, base text leaves Broder's estimator unbiased: exact where a sketch held the
    whole set, within its sampling error where it was a bottom-s sample of more."""
    params = Params()
    # 40 + 24 words: fewer shingles than s, the sketches hold the whole sets; 300 + 1,000: ~100 samples stay
    for form_words, words, tolerance in ((40, 24, 0.0), (300, 1000, 0.12)):
        form = prose(7, form_words, topic=1)
        base = base_fingerprints([shingle_text(form, params)])
        shared = prose(8, words // 2, topic=2)
        a = form + " " + shared + " " + prose(9, words // 2, topic=3)
        b = form + " " + shared + " " + prose(10, words // 2, topic=4)
        sa, sb = shingle_text(a, params), shingle_text(b, params)
        rest_a = sa.distinct[~np.isin(sa.distinct, base)]
        rest_b = sb.distinct[~np.isin(sb.distinct, base)]
        truth = exact_resemblance(rest_a, rest_b)
        whole = max(sa.distinct.shape[0], sb.distinct.shape[0]) < params.sample_size
        assert whole == (tolerance == 0.0)
        with_form = theorem1_estimates(build_sketch(a, params, sa), build_sketch(b, params, sb),
                                       params.sample_size)[0].value
        without_form = theorem1_estimates(build_sketch(a, params, sa), build_sketch(b, params, sb),
                                          params.sample_size, excluded=base)[0].value
        assert with_form > truth + 0.1  # the form makes them look nearer than they are
        assert abs(without_form - truth) <= tolerance, (words, without_form, truth)
    everything = build_sketch(form, params)
    assert theorem1_estimates(everything, everything, params.sample_size, excluded=base)[0].value == 0.0


def test_a_class_that_shares_its_template_shows_only_the_lifted_passage(classroom: Path, tmp_path: Path) -> None:
    submissions = classroom / "submissions"
    found, pairs = scanned_pairs(submissions, tmp_path / "plain.db")
    assert len(pairs) == STUDENTS * (STUDENTS - 1) // 2  # every pair shares the template
    assert len(found["documents"]) == STUDENTS
    assert found["widely_shared_documents"] == STUDENTS  # and the scan says what may be why
    shown = run_cli("clusters", "--index", str(tmp_path / "plain.db")).stdout
    assert f"{STUDENTS} document(s) share passages with 80% or more of the others" in " ".join(shown.split())
    found, pairs = scanned_pairs(submissions, tmp_path / "base.db", "--base", str(classroom / "template.txt"))
    assert list(pairs) == [frozenset({"student00.txt", "student01.txt"})]
    pair = pairs[frozenset({"student00.txt", "student01.txt"})]
    assert LIFTED - 5 <= pair["shared_words"] <= LIFTED + 5
    assert sorted(Path(d["path"]).name for d in found["documents"]) == ["student00.txt", "student01.txt"]
    assert all(0.07 < d["share"] < 0.12 for d in found["documents"])  # the lift, not the template's ~21 %
    assert found["widely_shared_documents"] == 0
    assert [(b["label"], b["words"]) for b in found["base"]] == [(str(classroom / "template.txt"),
                                                                  len(_template().split()))]
    # a rescan keeps the base: the index holds it
    again, pairs = scanned_pairs(submissions, tmp_path / "base.db")
    assert list(pairs) == [frozenset({"student00.txt", "student01.txt"})] and again["base"] == found["base"]


def test_check_and_watch_leave_the_indexed_base_out(classroom: Path, tmp_path: Path) -> None:
    index_path = tmp_path / "i.db"
    scanned_pairs(classroom / "submissions", index_path, "--base", str(classroom / "template.txt"))
    done = run_cli("check", str(classroom / "submissions" / "student05.txt"), "--index", str(index_path), "--json")
    assert done.returncode == 0, done.stderr  # 0: no finding
    result = json.loads(done.stdout)["results"][0]
    template_tokens = len(shingle_text(_template(), Params()).tokens)  # "______" is no word
    assert result["matches"] == [] and result["base_tokens"] == template_tokens
    done = run_cli("check", str(classroom / "submissions" / "student01.txt"), "--index", str(index_path), "--json")
    result = json.loads(done.stdout)["results"][0]
    assert [Path(m["path"]).name for m in result["matches"]] == ["student00.txt"]  # its own copy apart
    assert LIFTED - 5 <= sum(len(p["text"].split()) for p in result["matches"][0]["passages"]) <= LIFTED + 5
    # what `watch` runs for each new file, against the same index: the template alone raises nothing
    with Index.open(index_path) as index:
        report = check_text(_template() + prose(77, 300, topic=1), index, index.params, CheckOptions())
        assert report.matches == () and report.base_tokens == template_tokens


def test_a_worksheet_whose_form_is_most_of_each_answer_is_no_cluster(tmp_path: Path) -> None:
    form = prose(4242, 700, topic=2)
    (tmp_path / "sheets").mkdir()
    (tmp_path / "form.txt").write_text(form)
    for i in range(6):
        answer = prose(300 + i, 80, topic=i % 5)
        if i == 5:  # s5 copies s0's answer, and adds a sentence
            answer = prose(300, 80, topic=0) + " I agree with every word of it and add nothing."
        (tmp_path / "sheets" / f"s{i}.txt").write_text(form + "\n\nAnswer: " + answer)
    found, pairs = scanned_pairs(tmp_path / "sheets", tmp_path / "plain.db")
    assert [len(c["members"]) for c in found["clusters"]] == [6] and len(pairs) == 15
    found, pairs = scanned_pairs(tmp_path / "sheets", tmp_path / "base.db", "--base", str(tmp_path / "form.txt"))
    assert [sorted(Path(m["path"]).name for m in c["members"]) for c in found["clusters"]] == [["s0.txt", "s5.txt"]]
    assert list(pairs) == [frozenset({"s0.txt", "s5.txt"})]
    # the pair view (TUI) measures them as the findings do: without the form
    from scanner.faces.tui.model import pair_from_index

    members = found["clusters"][0]["members"]
    with Index.open(tmp_path / "base.db") as index:
        view = pair_from_index(index, index.params, members[0]["path"], members[0]["sha256"], members[1]["path"],
                               members[1]["sha256"])
        form_shingles = base_fingerprints([shingle_text(form, index.params)])
        sets = [shingle_text((tmp_path / "sheets" / Path(m["path"]).name).read_text(), index.params).distinct
                for m in members]
        without = exact_resemblance(*(one[~np.isin(one, form_shingles)] for one in sets))
    assert view is not None and view.metrics["resemblance"] == f"{without:.3f}"
    assert without < 0.9 < exact_resemblance(*sets)  # with the form they would look all but identical
    # and so does `scanner compare --base`, from the files alone
    pair = [str(tmp_path / "sheets" / name) for name in ("s0.txt", "s5.txt")]
    plain = json.loads(run_cli("compare", *pair, "--exact", "--json").stdout)
    based = json.loads(run_cli("compare", *pair, "--exact", "--json", "--base", str(tmp_path / "form.txt")).stdout)
    assert plain["exact"]["resemblance"] == round(exact_resemblance(*sets), 6) and plain["base"] == []
    assert based["exact"]["resemblance"] == round(without, 6)
    assert abs(based["resemblance"] - without) <= 0.1  # the sketches' estimate, from the ~15 samples left
    assert [b["words"] for b in based["base"]] == [len(form.split())]


def test_the_base_command_lists_adds_and_removes(classroom: Path, tmp_path: Path) -> None:
    index_path = str(tmp_path / "i.db")
    scanned_pairs(classroom / "submissions", Path(index_path))
    with Index.open(index_path) as index:  # as an index aligned before base texts existed: kept by a rescan
        assert "base" not in (index.passages.key() or {"base": None})
    done = run_cli("base", "--index", index_path, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["base"] == []
    done = run_cli("base", str(classroom / "template.txt"), "--index", index_path, "--json")
    assert done.returncode == 0, done.stderr
    added = json.loads(done.stdout)
    assert [b["words"] for b in added["base"]] == [len(_template().split())] and added["rescan_needed"]
    assert json.loads(run_cli("info", "--index", index_path, "--json").stdout)["base"] == added["base"]
    # the stored passages were found with the template: they go, and the faces say so until the next scan
    done = run_cli("clusters", "--index", index_path, "--json")
    listed = json.loads(done.stdout)
    assert listed["passage_pairs"] == [] and listed["unaligned_documents"] == STUDENTS
    _, pairs = scanned_pairs(classroom / "submissions", Path(index_path))
    assert list(pairs) == [frozenset({"student00.txt", "student01.txt"})]
    done = run_cli("base", "--index", index_path, "--remove", "no-such-template")
    assert done.returncode == 2 and "no base text named 'no-such-template'" in done.stderr  # a usage error
    assert len(done.stderr.strip().splitlines()) == 1
    done = run_cli("base", "--index", index_path, "--remove", added["base"][0]["sha256"][:10], "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["base"] == []
    _, pairs = scanned_pairs(classroom / "submissions", Path(index_path))
    assert len(pairs) == STUDENTS * (STUDENTS - 1) // 2


def test_a_base_file_without_text_stops_the_scan_before_it_writes(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(prose(1, 200))
    (tmp_path / "empty.txt").write_text("")
    done = run_cli("scan", str(tmp_path / "docs"), "--index", str(tmp_path / "i.db"), "--base",
                   str(tmp_path / "empty.txt"))
    assert done.returncode != 0
    assert "base text" in done.stderr and "empty.txt" in done.stderr
    with Index.open(tmp_path / "i.db") as index:
        assert index.stats().files_live == 0 and index.base.listed() == []


@pytest.mark.parametrize("given", ["zip", "folder"])
def test_starter_files_in_a_zip_or_a_folder_are_each_base(tmp_path: Path, given: str) -> None:
    import zipfile

    starter = {"intro.txt": prose(61, 150, topic=1), "hints.txt": prose(62, 150, topic=2)}
    if given == "zip":
        with zipfile.ZipFile(tmp_path / "starter", "w") as archive:
            for name, text in starter.items():
                archive.writestr(name, text)
    else:
        (tmp_path / "starter").mkdir()
        for name, text in starter.items():
            (tmp_path / "starter" / name).write_text(text)
        (tmp_path / "starter" / "logo.bin").write_bytes(bytes(range(256)) * 8)  # no text: named, passed over
    (tmp_path / "docs").mkdir()
    for i in range(3):
        (tmp_path / "docs" / f"d{i}.txt").write_text(
            starter["intro.txt"] + "\n\n" + prose(70 + i, 300, topic=i) + "\n\n" + starter["hints.txt"])
    found, pairs = scanned_pairs(tmp_path / "docs", tmp_path / "i.db", "--base", str(tmp_path / "starter"))
    assert sorted(Path(b["label"]).name for b in found["base"]) == ["hints.txt", "intro.txt"]
    assert pairs == {} and found["clusters"] == []
    with Index.open(tmp_path / "i.db") as index:
        expected = base_fingerprints([shingle_text(text, index.params) for text in starter.values()])
        assert np.array_equal(index.base.fingerprints(index.params), expected)
    if given == "folder":
        done = run_cli("base", str(tmp_path / "starter"), "--index", str(tmp_path / "i.db"), "--json")
        assert json.loads(done.stdout)["without_text"] == [str(tmp_path / "starter" / "logo.bin")]
        (tmp_path / "pictures").mkdir()
        (tmp_path / "pictures" / "logo.bin").write_bytes(bytes(range(256)) * 8)
        done = run_cli("base", str(tmp_path / "pictures"), "--index", str(tmp_path / "i.db"))
        assert done.returncode == 3 and "no file of this folder gives text" in done.stderr


def test_every_report_names_the_base_it_left_out(classroom: Path, tmp_path: Path) -> None:
    import jsonschema

    from scanner.faces.report import load_schema

    index_path = str(tmp_path / "i.db")
    scanned_pairs(classroom / "submissions", Path(index_path), "--base", str(classroom / "template.txt"))
    done = run_cli("report", "--index", index_path, "--format", "json", "-o", str(tmp_path / "r.json"))
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, load_schema())
    with Index.open(index_path) as index:
        sha = index.base.listed()[0].sha256
    assert [b["sha256"] for b in report["selection"]["base"]] == [sha] and report["selection"]["template_note"] is None
    assert {frozenset(Path(p).name for p in (pair["a"]["path"], pair["b"]["path"])) for pair in report["pairs"]} \
        == {frozenset({"student00.txt", "student01.txt"})}
    done = run_cli("report", "--index", index_path, "--format", "html", "-o", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert "Base text left out of every finding" in page and sha in page
    plain = str(tmp_path / "plain.db")  # without it, the report says what may pair every submission
    scanned_pairs(classroom / "submissions", Path(plain))
    run_cli("report", "--index", plain, "--format", "json", "-o", str(tmp_path / "p.json"))
    note = json.loads((tmp_path / "p.json").read_text())["selection"]["template_note"]
    assert note.startswith(f"{STUDENTS} document(s) share passages") and "scanner base FILE" in note


@pytest.mark.asyncio
async def test_the_tui_lists_only_the_lift_and_names_the_base(classroom: Path, tmp_path: Path) -> None:
    from textual.widgets import DataTable, Static

    from tests.test_tui_documents import _app, _settle

    db = tmp_path / "i.db"
    scanned_pairs(classroom / "submissions", db, "--base", str(classroom / "template.txt"))
    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        summary = str(app.query_one("#summary", Static).render())
        assert f"{len(_template().split())} words of base text left out" in summary and "a template?" not in summary
        assert "1 passage pairs" in summary and "2 documents with text found elsewhere" in summary
        await pilot.press("d")
        await pilot.pause()
        assert app.query_one("#documents", DataTable).row_count == 2
    scanned_pairs(classroom / "submissions", tmp_path / "plain.db")  # without it: every pair, and the hint
    app = _app(tmp_path / "plain.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        summary = " ".join(str(app.query_one("#summary", Static).render()).split())
        assert f"{STUDENTS} documents share passages with nearly every other: a template?" in summary


def test_answers_that_each_revise_the_reading_share_it_through_the_reading(tmp_path: Path) -> None:
    """Each answer revises the handed-out reading its own way (40 % of its words changed): their rewordings
    of one base sentence are no evidence between them. An answer that copies another's revision is."""
    import random

    from tests.corpus import obfuscate

    reading = prose(11, 320, topic=2)
    (tmp_path / "answers").mkdir()
    (tmp_path / "reading.txt").write_text(reading)
    revisions = [obfuscate(reading, random.Random(i), 0.4) for i in range(5)]
    for i, revision in enumerate(revisions):
        (tmp_path / "answers" / f"a{i}.txt").write_text(
            prose(40 + i, 300, topic=i) + "\n\n" + revision + "\n\n" + prose(60 + i, 300, topic=i))
    (tmp_path / "answers" / "a5.txt").write_text(prose(45, 300, topic=4) + "\n\n" + revisions[1] + "\n\n"
                                                 + prose(65, 300, topic=4))
    _, pairs = scanned_pairs(tmp_path / "answers", tmp_path / "plain.db")
    assert len(pairs) >= 10  # every two revisions of the reading share passages of it
    _, pairs = scanned_pairs(tmp_path / "answers", tmp_path / "base.db", "--base", str(tmp_path / "reading.txt"))
    assert list(pairs) == [frozenset({"a1.txt", "a5.txt"})]
    assert pairs[frozenset({"a1.txt", "a5.txt"})]["reworded_passages"] == 0  # a verbatim copy of a1's revision
    # `check` leaves out the same: another revision of the reading is found nowhere, a copy of one is
    (tmp_path / "late.txt").write_text(prose(90, 300, topic=3) + "\n\n" + obfuscate(reading, random.Random(9), 0.4))
    (tmp_path / "copy.txt").write_text(prose(91, 300, topic=3) + "\n\n" + revisions[2])
    done = run_cli("check", str(tmp_path / "late.txt"), str(tmp_path / "copy.txt"), "--index",
                   str(tmp_path / "base.db"), "--json")
    late, copy = json.loads(done.stdout)["results"]
    assert late["matches"] == [] and late["base_tokens"] > 30  # the words its revision kept as they were
    assert Path(copy["matches"][0]["path"]).name == "a2.txt" and copy["matches"][0]["query_share"] > 0.3
    # what else it finds: at most a chance run of check's 7 words where two revisions changed the same way
    assert all(m["query_share"] < 0.02 for m in copy["matches"][1:])


async def _scan_in_tui(db: Path, folder: Path, base: Path) -> tuple[str, int]:
    """A scan of `folder` from the TUI's Scan tab with `base` as base file: its status line, and the rows of
    the Documents view it leads to."""
    from textual.widgets import DataTable, Input, Static

    from tests.test_tui_documents import _app, _settle

    app = _app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        await pilot.press("3")
        app.query_one("#scan-path", Input).value = str(folder)
        app.query_one("#scan-base", Input).value = str(base)
        await pilot.press("enter")
        await _settle(app, pilot)
        status = str(app.query_one("#scan-status", Static).render())
        await pilot.press("1", "d")
        await pilot.pause()
        return status, app.query_one("#documents", DataTable).row_count


@pytest.mark.asyncio
async def test_the_tuis_scan_tab_takes_base_files(classroom: Path, tmp_path: Path) -> None:
    db = tmp_path / "from-tui.db"
    status, rows = await _scan_in_tui(db, classroom / "submissions", classroom / "template.txt")
    assert f"done: {STUDENTS} seen, {STUDENTS} indexed" in status and rows == 2
    with Index.open(db) as index:
        assert [b.label for b in index.base.listed()] == [str(classroom / "template.txt")]
        assert index.passages.count() == 1
    (tmp_path / "empty.txt").write_text("")  # a base file that gives no text: the scan stops and says why
    status, rows = await _scan_in_tui(tmp_path / "other.db", classroom / "submissions", tmp_path / "empty.txt")
    assert "scan failed: base text" in status and "empty.txt" in status and rows == 0


def test_watch_raises_no_alert_for_the_protected_sets_base_text(tmp_path: Path) -> None:
    """Protected memos written on a company template: a new file holding only the template is no leak; one
    holding a protected memo's own text is. (Two memos: a text three protected documents hold is the set's
    own boilerplate to `watch` anyway.)"""
    template = ("CONFIDENTIAL. Prepared by the records office for internal use. " + prose(31, 200, topic=1))
    (tmp_path / "protected").mkdir()
    (tmp_path / "template.txt").write_text(template)
    bodies = [prose(200 + i, 500, topic=i) for i in range(2)]
    for i, body in enumerate(bodies):
        (tmp_path / "protected" / f"memo{i}.txt").write_text(template + "\n\n" + body)
    db = str(tmp_path / "p.db")
    assert run_cli("scan", str(tmp_path / "protected"), "--index", db, "--base",
                   str(tmp_path / "template.txt")).returncode == 0
    (tmp_path / "outbox").mkdir()
    (tmp_path / "outbox" / "new-memo.txt").write_text(template + "\n\n" + prose(300, 500, topic=4))
    (tmp_path / "outbox" / "leak.txt").write_text(prose(301, 300, topic=3) + "\n\n" + bodies[1][:1500])
    done = run_cli("watch", str(tmp_path / "outbox"), "--index", db, "--once", "--jsonl")
    alerts = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1, done.stderr
    assert [Path(a["path"]).name for a in alerts] == ["leak.txt"]
    assert Path(alerts[0]["matches"][0]["path"]).name == "memo1.txt"
