"""Issue 20: one scan lists every lifted passage, MOSS- and Turnitin-style.

Generated essays (tests/corpus.py) of 1,000-1,400 words; into some of them a passage of 60-150 words
from another essay is planted (5-15 % of the host). Two more essays share only one set sentence
of 14 words (boilerplate). The real scan, the real alignment step and the real stored findings.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.core.config import Params
from scanner.engine.arrays import in_sorted
from scanner.index.passages import KINDS
from scanner.index.store import Index
from scanner.services import pair_alignment
from scanner.services import passages as passages_step
from scanner.services import prepared as prepared_sides
from scanner.services.findings import find_similar, findings_key, stored_or_found
from scanner.services.pair_alignment import anchors_close_enough
from scanner.services.passages import align_index
from scanner.services.prepared import align_side
from scanner.services.scan.run import run_scan
from scanner.sources.plugins import make_plugin_manager
from tests.clirun import run_cli
from tests.corpus import NOTICE, prose, zipf_writer
from tests.rawsql import raw

BOILERPLATE = "You will be prompted if you do not supply one on the command line."
ESSAYS = 30
LIFTS = {  # host essay -> (source essay, words lifted)
    3: (11, 60), 5: (12, 90), 8: (13, 150), 14: (20, 75), 17: (21, 120), 22: (2, 100), 25: (28, 65), 27: (0, 140),
}
QUIET = (29, 26)  # essays that share only BOILERPLATE


def _lift(source: str, words: int, rng: random.Random) -> str:
    """`words` consecutive words of `source`, starting at a word boundary."""
    tokens = source.split()
    start = rng.randrange(0, len(tokens) - words)
    return " ".join(tokens[start : start + words])


def _essays() -> tuple[dict[str, str], dict[str, tuple[str, float]]]:
    """Texts by file name, and for each host: its source's name and the share of its words lifted."""
    rng = random.Random(20)
    texts = [prose(700 + i, rng.randint(1000, 1400)) for i in range(ESSAYS)]
    expected = {}
    for host, (source, words) in LIFTS.items():
        passage = _lift(texts[source], words, rng)
        paragraphs = texts[host].split("\n\n")
        at = rng.randrange(1, len(paragraphs))
        texts[host] = "\n\n".join(paragraphs[:at] + [passage] + paragraphs[at:])
        expected[f"essay-{host:02d}.txt"] = (f"essay-{source:02d}.txt", words / len(texts[host].split()))
    for quiet in QUIET:
        texts[quiet] = texts[quiet].replace("\n\n", f"\n\n{BOILERPLATE}\n\n", 1)
    return {f"essay-{i:02d}.txt": text for i, text in enumerate(texts)}, expected


@pytest.fixture(scope="module")
def essays(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[str, float]]]:
    folder = tmp_path_factory.mktemp("essays")
    texts, expected = _essays()
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder, expected


@pytest.fixture(scope="module")
def scanned(essays, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder, _ = essays
    db = tmp_path_factory.mktemp("index") / "essays.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
        step = align_index(index, Params(), jobs=0)
        assert step.documents == ESSAYS and step.without_text == 0
        stored_or_found(index, Params())
    return db


def _names(findings) -> dict[str, object]:
    return {Path(d.path).name: d for d in findings.documents}


def test_every_lifted_passage_is_listed_with_its_source_and_share(scanned: Path, essays) -> None:
    _, expected = essays
    with Index.open(scanned) as index:
        findings = find_similar(index, Params())
    listed = _names(findings)
    hosts = set(expected)
    sources = {source for source, _ in expected.values()}
    assert set(listed) == hosts | sources  # the sources are found in their hosts too, and nothing else is
    for host, (source, share) in expected.items():
        row = listed[host]
        assert [Path(s.path).name for s in row.sources] == [source]
        assert row.share == pytest.approx(share, abs=0.01), host  # 5-15 % of the host, to the word
        assert 0.04 <= row.share <= 0.16
    ranked = [(Path(p.a.path).name, Path(p.b.path).name) for p in findings.passage_pairs]
    words = [p.shared_words for p in findings.passage_pairs]
    assert words == sorted(words, reverse=True) and len(ranked) == len(expected)
    assert {frozenset(pair) for pair in ranked} == {frozenset((h, s)) for h, (s, _) in expected.items()}
    assert findings.unaligned == 0 and findings.min_words == Params().passage_words


def test_a_shared_set_sentence_is_no_finding(scanned: Path) -> None:
    """Both quiet essays hold the same 14-word sentence and nothing else in common: below the default
    minimum of 15 words, so neither is listed; at --min-words 12 both are, with their tiny share."""
    quiet = {f"essay-{q:02d}.txt" for q in QUIET}
    with Index.open(scanned) as index:
        assert not quiet & set(_names(find_similar(index, Params())))
    db = scanned.with_name("boilerplate.db")
    db.write_bytes(scanned.read_bytes())
    params = Params().replace(passage_words=12)
    with Index.open(db, readonly=False, params=params) as index:
        align_index(index, params, jobs=0)
        listed = _names(find_similar(index, params))
    for name in quiet:
        assert listed[name].share < 0.015 and listed[name].words == len(BOILERPLATE.split())


def test_faces_read_the_stored_findings(scanned: Path) -> None:
    with Index.open(scanned) as index:
        key = findings_key(index, Params())
        stored = index.stored_findings(key)
        assert stored is not None
        assert stored_or_found(index, Params()) == find_similar(index, Params())
        assert json.loads(stored)["documents"]


def test_stored_findings_are_read_once_and_their_head_only_looked_for(scanned: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer reading the stored findings reads them alone: their head, stored by the scan beside them, is
    looked for without being read (a large index's head is megabytes, at every `--json` scan)."""
    read: list[str] = []
    original = Index.stored_findings
    monkeypatch.setattr(Index, "stored_findings", lambda self, key: read.append(key) or original(self, key))
    with Index.open(scanned, readonly=False) as index:
        key = findings_key(index, Params())
        assert index.has_stored_findings(key + "#head") and not index.has_stored_findings(key + "#other")
        assert stored_or_found(index, Params()).documents
    assert read == [key]


def test_the_cli_lists_documents_and_pairs(scanned: Path, tmp_path: Path) -> None:
    done = run_cli("clusters", "--index", str(scanned), "--json", "--min-share", "0.1")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["documents"] and all(d["share"] >= 0.1 for d in document["documents"])
    assert {d["path"] for d in document["documents"]} < {d["path"] for d in json.loads(
        run_cli("clusters", "--index", str(scanned), "--json").stdout)["documents"]}
    shown = run_cli("clusters", "--index", str(scanned)).stdout
    assert "Found elsewhere" in shown and "Passage pairs by shared words" in shown and "essay-08.txt" in shown


def test_a_rescan_aligns_only_new_and_changed_documents(essays, tmp_path: Path) -> None:
    folder, expected = essays
    work = tmp_path / "essays"
    work.mkdir()
    for path in folder.iterdir():
        (work / path.name).write_bytes(path.read_bytes())
    db = tmp_path / "i.db"
    params = Params()
    with Index.open(db, readonly=False, params=params) as index:
        run_scan([str(work)], index, make_plugin_manager(), params, jobs=0)
        first = align_index(index, params, jobs=0)
        again = align_index(index, params, jobs=0)
        assert (first.documents, again.documents, again.candidates) == (ESSAYS, 0, 0)
        before = index.passages.count()
        # a new essay lifting from essay 4, and essay 8 rewritten without its lifted passage
        (work / "essay-new.txt").write_text(prose(999, 1100) + "\n\n" + _lift((work / "essay-04.txt").read_text(),
                                                                              80, random.Random(1)))
        (work / "essay-08.txt").write_text(prose(708, 1200))
        run_scan([str(work)], index, make_plugin_manager(), params, jobs=0)
        step = align_index(index, params, jobs=0)
        assert step.documents == 2 and step.pairs == 1
        assert index.passages.count() == before + 1  # the old pairs of essay 8 stay stored, for its old document
        listed = _names(find_similar(index, params))
    assert "essay-new.txt" in listed and [Path(s.path).name for s in listed["essay-new.txt"].sources] == [
        "essay-04.txt"]
    assert "essay-08.txt" not in listed and "essay-13.txt" not in listed  # its source lost its only host


def _stored_by_content(db: Path) -> dict[tuple[str, str], bytes]:
    """Every stored passage pair, keyed by its two documents' SHA-256 (ids follow the order of a scan)."""
    with raw(db) as conn:
        sha = dict(conn.execute("SELECT id, sha256 FROM documents").fetchall())
        return {(sha[a], sha[b]): bytes(blob)
                for a, b, blob in conn.execute("SELECT doc_a, doc_b, passages FROM passage_pairs")}


def _scanned_twice(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Any]:
    """The folder scanned into two indexes, tasks of 8 pairs (so a step stops between two), the first one's
    passages aligned in one step: (that index, the other, its PassageRun)."""
    monkeypatch.setattr(passages_step, "_CHUNK_PAIRS", 8)
    whole, stopped = tmp_path / "whole.db", tmp_path / "stopped.db"
    for db in (whole, stopped):
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
    with Index.open(whole, readonly=False, params=Params()) as index:
        return whole, stopped, align_index(index, Params(), jobs=0)


def _interrupt_half_way(done: int, total: int) -> None:
    """A progress callback that stops the step (as Ctrl-C does) when half of its tasks are done."""
    if done == total // 2:
        raise KeyboardInterrupt


def test_a_step_stopped_half_way_keeps_what_it_finished(essays, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or a crash) in the passage step: the passages of the tasks it finished stay stored, with its
    plan; the next scan aligns only the other tasks' pairs, and ends with the passages an unstopped step
    stores, byte for byte."""
    whole, stopped, all_at_once = _scanned_twice(essays[0], tmp_path, monkeypatch)
    assert all_at_once.resumed == 0
    aligned: list[int] = []  # pairs in each task given to the aligner
    real = pair_alignment.do_task

    def counting(sides, params, task, common):
        aligned.append(len(task.rows))
        return real(sides, params, task, common)

    monkeypatch.setattr(pair_alignment, "do_task", counting)
    with Index.open(stopped, readonly=False, params=Params()) as index:
        with pytest.raises(KeyboardInterrupt):
            align_index(index, Params(), jobs=0, on_progress=_interrupt_half_way)
        before = sum(aligned)
        assert 0 < before < all_at_once.candidates and index.passages.aligned_count() == 0
        tasks = -(-all_at_once.candidates // 8)
        assert index.stats().passage_tasks_left == tasks - len(aligned) > 0  # what `scanner info` says
        resumed = align_index(index, Params(), jobs=0)
        assert resumed.resumed == before and sum(aligned) == all_at_once.candidates  # each pair aligned once
        assert (resumed.documents, resumed.candidates) == (all_at_once.documents, all_at_once.candidates)
        assert index.passages.aligned_count() == ESSAYS and index.stats().passage_tasks_left == 0
        with raw(index) as conn:
            assert conn.execute("SELECT count(*) FROM passage_plan").fetchone()[0] == 0  # the step ended
    assert _stored_by_content(stopped) == _stored_by_content(whole)


def test_the_steps_tasks_are_committed_a_second_at_a_time(essays, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction for the tasks of `_COMMIT_SECONDS`, not one a task (each cost the parent ~1.7 ms): far
    fewer commits than tasks, and the passages stored byte for byte those of one commit a task."""
    whole, again, _ = _scanned_twice(essays[0], tmp_path, monkeypatch)
    monkeypatch.setattr(passages_step, "_CHUNK_PAIRS", 1)  # a task a pair
    with Index.open(whole, readonly=False, params=Params()) as index:
        index.passages.use_key({"forget": "every pair"})
        monkeypatch.setattr(passages_step, "_COMMIT_SECONDS", 0.0)
        statements: list[str] = []
        index._conn.set_trace_callback(statements.append)
        each = align_index(index, Params(), jobs=0)
        assert statements.count("COMMIT") > each.candidates > 40  # a commit a task (and a few more)
    with Index.open(again, readonly=False, params=Params()) as index:
        monkeypatch.setattr(passages_step, "_COMMIT_SECONDS", 60.0)
        statements.clear()
        index._conn.set_trace_callback(statements.append)
        align_index(index, Params(), jobs=0)
        assert statements.count("COMMIT") < 10
    assert _stored_by_content(again) == _stored_by_content(whole)


def test_workers_stopped_half_way_go_on_from_there(essays, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with worker processes: stopped while they align, they are ended, and the next step (with
    workers again) runs the tasks left and stores what one process stores."""
    whole, stopped, all_at_once = _scanned_twice(essays[0], tmp_path, monkeypatch)
    with Index.open(stopped, readonly=False, params=Params()) as index:
        with pytest.raises(KeyboardInterrupt):
            align_index(index, Params(), jobs=2, inline_below=0, on_progress=_interrupt_half_way)
        left = index.stats().passage_tasks_left
        resumed = align_index(index, Params(), jobs=2, inline_below=0)
    tasks = -(-all_at_once.candidates // 8)
    done = tasks - left  # of 8 pairs each, but the last task may be one of them, with fewer
    assert 0 < left < tasks and done * 8 - 8 < resumed.resumed <= done * 8
    assert resumed.candidates == all_at_once.candidates
    assert _stored_by_content(stopped) == _stored_by_content(whole)


def _doc_ids_by_name(index: Index) -> dict[str, int]:
    with raw(index) as conn:
        return {Path(path).name: doc_id for doc_id, path in conn.execute("SELECT doc_id, path FROM files")}


def _fail_aligning(monkeypatch: pytest.MonkeyPatch, a: int, b: int) -> Any:
    """Make aligning any batch holding the pair (a, b) raise a MemoryError (as two changelogs did); returns
    the real `align_pairs`."""
    real = pair_alignment.align_pairs

    def failing(sides, params, rows, common):
        if any({row[0], row[1]} == {a, b} for row in rows):
            raise MemoryError()
        return real(sides, params, rows, common)

    monkeypatch.setattr(pair_alignment, "align_pairs", failing)
    return real


def test_a_pair_that_cannot_be_aligned_costs_no_other_its_passages(essays, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """One pair whose alignment raises (as a MemoryError did on two changelogs) no longer stops the step:
    its task is aligned again pair by pair, every other pair's passages are stored, the failure is given
    with its two documents (a scan lists it among its errors, by path), and those two stay not aligned, so
    the next step aligns them again and ends with what a step that never failed stores."""
    whole, failing, _ = _scanned_twice(essays[0], tmp_path, monkeypatch)
    with Index.open(failing, readonly=False, params=Params()) as index:
        ids = _doc_ids_by_name(index)
        host, source = ids["essay-05.txt"], ids["essay-12.txt"]  # a planted lift: a pair with passages
        real = _fail_aligning(monkeypatch, host, source)
        run = align_index(index, Params(), jobs=0)
        assert run.failures == (pair_alignment.StepFailure((min(host, source), max(host, source)), "MemoryError"),)
        assert set(index.passages.aligned_ids().tolist()) == set(ids.values()) - {host, source}
        issues = passages_step.failure_issues(index, run.failures)
        assert [(Path(i.path).name, i.status) for i in issues] in (
            [("essay-05.txt", "passages not aligned")], [("essay-12.txt", "passages not aligned")])
        assert "essay-12.txt: MemoryError; tried again at the next scan" in issues[0].message or \
            "essay-05.txt: MemoryError; tried again at the next scan" in issues[0].message
        stored, expected = _stored_by_content(failing), _stored_by_content(whole)
        missing = set(expected) - set(stored)
        assert len(missing) == 1 and all(stored[k] == expected[k] for k in stored)  # only that pair's
        monkeypatch.setattr(pair_alignment, "align_pairs", real)
        again = align_index(index, Params(), jobs=0)
        assert again.documents == 2 and again.failures == () and index.passages.aligned_count() == ESSAYS
    assert _stored_by_content(failing) == _stored_by_content(whole)


def test_a_step_stopped_after_a_failure_still_knows_it_when_resumed(essays, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped after its last task but before its end (Ctrl-C), a step whose task had a failing pair did not
    store that task as done: resumed, it aligns it again and reports the failure again, so the pair's
    documents are not marked aligned (a resumed step knew no failures and marked them)."""
    _, failing, _ = _scanned_twice(essays[0], tmp_path, monkeypatch)

    def stop_at_the_end(done: int, total: int) -> None:
        if done == total:
            raise KeyboardInterrupt

    with Index.open(failing, readonly=False, params=Params()) as index:
        ids = _doc_ids_by_name(index)
        host, source = ids["essay-05.txt"], ids["essay-12.txt"]
        _fail_aligning(monkeypatch, host, source)
        with pytest.raises(KeyboardInterrupt):
            align_index(index, Params(), jobs=0, on_progress=stop_at_the_end)
        assert index.stats().passage_tasks_left == 1  # the task holding the failing pair
        resumed = align_index(index, Params(), jobs=0)
        assert [f.documents for f in resumed.failures] == [(min(host, source), max(host, source))]
        assert set(index.passages.aligned_ids().tolist()) == set(ids.values()) - {host, source}


def test_a_worker_that_dies_is_replaced_and_its_pairs_are_tried_again_one_by_one(
        essays, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while it aligns (as the kernel kills one for memory): a new worker takes its place, the
    killed one's task is tried again a pair at a time (so that a pair that kills its worker again fails alone),
    and here, where nothing kills them again, every pair is aligned and stored as a step without deaths stores
    them, every document marked aligned, no failure."""
    import os
    import signal

    whole, killed, all_at_once = _scanned_twice(essays[0], tmp_path, monkeypatch)
    started: list[Any] = []
    real_worker = pair_alignment.WorkerProcess

    def recorded(*args: Any) -> Any:
        worker = real_worker(*args)
        started.append(worker)
        return worker

    def kill_one(done: int, total: int) -> None:
        if done == 1:
            os.kill(started[0].process.pid, signal.SIGKILL)

    monkeypatch.setattr(pair_alignment, "WorkerProcess", recorded)
    with Index.open(killed, readonly=False, params=Params()) as index:
        run = align_index(index, Params(), jobs=2, inline_below=0, on_progress=kill_one)
        assert len(started) == 3 and started[0].process.exitcode == -signal.SIGKILL  # two, and one in its place
        assert run.failures == () and run.candidates == all_at_once.candidates
        assert index.passages.aligned_count() == ESSAYS and index.stats().passage_tasks_left == 0
    assert all_at_once.failures == () and _stored_by_content(killed) == _stored_by_content(whole)


def test_other_minimum_words_realign_everything(scanned: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    db.write_bytes(scanned.read_bytes())
    params = Params().replace(passage_words=30)
    with Index.open(db, readonly=False, params=params) as index:
        step = align_index(index, params, jobs=0)
        assert step.documents == ESSAYS
        assert index.passages.key()["min_words"] == 30
        assert all(p.shared_words >= 30 for p in index.passages.live_pairs())
        assert raw(index).execute("SELECT count(*) FROM passage_aligned").fetchone()[0] == ESSAYS


def test_workers_align_as_this_process_does(scanned: Path, tmp_path: Path) -> None:
    db = tmp_path / "pool.db"
    db.write_bytes(scanned.read_bytes())
    with Index.open(db, readonly=False, params=Params()) as index:
        inline = sorted((p.doc_a, p.doc_b, p.passages) for p in index.passages.live_pairs())
        index.passages.use_key({"force": "realign"})
        step = align_index(index, Params(), jobs=2, inline_below=0)
        assert step.documents == ESSAYS
        pooled = sorted((p.doc_a, p.doc_b, p.passages) for p in index.passages.live_pairs())
    assert pooled == inline and len(inline) == len(LIFTS)


def test_a_document_longer_than_the_cache_is_prepared_once_for_all_its_pairs(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A long log holding a passage of each of eight short files, and a cache smaller than the log: its pairs
    are aligned one after the other (it is their query), and it stays prepared for all of them, where each
    pair read, cut and sorted it again."""
    rng = random.Random(31)
    shorts = [prose(900 + i, 300) for i in range(8)]
    log = "\n\n".join(prose(950 + i, 400) + "\n\n" + _lift(short, 60, rng) for i, short in enumerate(shorts))
    (tmp_path / "log.txt").write_text(log, encoding="utf-8")
    for i, short in enumerate(shorts):
        (tmp_path / f"short-{i}.txt").write_text(short, encoding="utf-8")
    monkeypatch.setattr(prepared_sides, "cache_tokens", lambda processes: 1000)  # the log: ~4,000 tokens
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False, params=Params()) as index:
        run_scan([str(tmp_path / "log.txt")] + [str(tmp_path / f"short-{i}.txt") for i in range(8)], index,
                 make_plugin_manager(), Params(), jobs=0)
        log_id = index.doc_id_for_sha256(hashlib.sha256(log.encode()).hexdigest())
        reads: list[int] = []
        original = Index.text
        monkeypatch.setattr(Index, "text", lambda self, doc_id: reads.append(doc_id) or original(self, doc_id))
        step = align_index(index, Params(), jobs=0)
        assert step.pairs == 8  # the log with each short file
        assert reads.count(log_id) == 1


def test_the_walk_places_partners_next_to_each_other() -> None:
    """`_walk_places` on a path of pairs whose ids are shuffled: a walk from one end, so each document's place
    is next to its partners'; a second, separate pair comes after the whole path; ids in no pair get none."""
    order = [7, 2, 9, 4, 0, 5, 8, 3]  # the path 7 - 2 - 9 - ... - 3
    a = np.array(order[:-1] + [11])
    b = np.array(order[1:] + [12])
    place = pair_alignment._walk_places(a, b, 14)
    walked = sorted(range(14), key=lambda doc: place[doc])[4:]  # ids in no pair (1, 6, 10, 13) first, at -1
    assert place[[1, 6, 10, 13]].tolist() == [-1] * 4
    assert walked in (order + [11, 12], order[::-1] + [11, 12], [11, 12] + order, [11, 12] + order[::-1])


def test_the_step_aligns_queries_in_walk_order_and_prepares_fewer_documents(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve documents in a chain (each holds a passage of the next), named in no order, and a cache of about
    three of them: aligned in the walk's order the step prepares fewer documents than in the order of their
    ids, and finds the same passages."""
    rng = random.Random(44)
    bases = [prose(1500 + k, 260) for k in range(12)]
    names = rng.sample(range(12), 12)
    folder = tmp_path / "chain"
    folder.mkdir()
    for k, base in enumerate(bases):
        lifted = _lift(bases[k + 1], 60, rng) if k + 1 < 12 else ""
        (folder / f"doc-{names[k]:02d}.txt").write_text(base + "\n\n" + lifted, encoding="utf-8")
    monkeypatch.setattr(prepared_sides, "cache_tokens", lambda processes: 900)
    prepared: list[int] = []
    original = prepared_sides.PreparedSides._new
    monkeypatch.setattr(prepared_sides.PreparedSides, "_new",
                        lambda self, doc_id, side: prepared.append(doc_id) or original(self, doc_id, side))
    found = {}
    for walk in (True, False):
        if not walk:  # places by id: the order the step had before
            monkeypatch.setattr(pair_alignment, "_walk_places", lambda a, b, size: np.arange(size))
        db = tmp_path / f"walk-{walk}.db"
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
            prepared.clear()
            align_index(index, Params(), jobs=0)
            pairs = list(index.passages.live_pairs())
            sha = index.sha256s([d for p in pairs for d in (p.doc_a, p.doc_b)])
            found[walk] = (len(prepared), sorted((sha[p.doc_a], sha[p.doc_b], p.passages) for p in pairs))
    assert len(found[True][1]) == 11 and found[True][1] == found[False][1]
    assert found[True][0] < found[False][0]  # 17 against 21 (12 at the least)


def test_each_worker_takes_its_own_run_of_neighbouring_tasks_then_the_ends_of_the_longest() -> None:
    """`_Runs`: ten tasks among three workers; each takes its run in order (0-2, 3-5, 6-9), and a worker
    whose run is done takes the last task of the longest run left; every task goes out once."""
    runs = pair_alignment._Runs(10, ["a", "b", "c"])
    taken = [runs.take(w) for w in ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "c"]]
    assert taken == [0, 3, 6, 1, 4, 7, 2, 5, 8, 9, None]
    runs = pair_alignment._Runs(10, ["a", "b"])
    first = [runs.take("a") for _ in range(5)]
    assert first == [0, 1, 2, 3, 4] and [runs.take("a") for _ in range(6)] == [9, 8, 7, 6, 5, None]
    assert runs.take("b") is None and pair_alignment._Runs(0, ["a"]).take("a") is None


def test_the_step_keeps_a_share_of_the_memory_in_prepared_documents() -> None:
    """Each aligning process keeps prepared documents up to a sixteenth of the memory shared among the
    processes (~110 bytes a token), never fewer than 2 M tokens nor more than 16 M."""
    from scanner.services.prepared import cache_tokens

    gib = 2**30
    assert cache_tokens(2, 16 * gib) == 16 * gib // 16 // 2 // 110 == 4_880_644
    assert cache_tokens(1, 16 * gib) == 2 * cache_tokens(2, 16 * gib) + 1
    assert cache_tokens(4, 4 * gib) == cache_tokens(1, 0) == 2_000_000  # a small machine: the least
    assert cache_tokens(1, 1024 * gib) == 16_000_000
    assert 2_000_000 <= cache_tokens(2) <= 16_000_000  # this machine's memory


def test_the_anchor_filter_never_drops_a_passage_of_the_minimum_length() -> None:
    """A passage of min_passage_words words holds `Params.passage_anchors` shared anchors: the pairs the alignment
    never sees could not hold one."""
    for w, window, words in ((4, 4, 12), (4, 4, 7), (5, 6, 20), (3, 2, 9)):
        params = Params(shingle_size=w, winnow_window=window, passage_words=words)
        shingles = params.min_passage_words - w + 1
        assert params.passage_anchors == max(1, shingles // window)




def test_a_very_common_passage_pairs_no_one(tmp_path: Path) -> None:
    """Broder's very common shingles: a notice held by 13 of 40 documents (over the 5 % share) is no
    evidence between any two of them; a lifted passage is, and between two documents that both hold the
    notice too, the lifted passage is their only one."""
    folder = tmp_path / "notices"
    folder.mkdir()
    texts = [prose(900 + i, 500 if i in (*range(12), 30) else 700) for i in range(40)]
    lifted = _lift(texts[30], 80, random.Random(3))
    for i in [*range(12), 30]:
        texts[i] = texts[i] + "\n\n" + NOTICE + "\n"
    texts[5] = texts[5] + "\n\n" + lifted + "\n"
    for i, text in enumerate(texts):
        (folder / f"doc-{i:02d}.txt").write_text(text, encoding="utf-8")
    params = Params()
    with Index.open(tmp_path / "i.db", readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
        assert index.common_fingerprints(params.common_shingle_share).shape[0] > 0
        align_index(index, params, jobs=0)
        findings = find_similar(index, params)
    pairs = {frozenset((Path(p.a.path).name, Path(p.b.path).name)): p for p in findings.passage_pairs}
    assert list(pairs) == [frozenset(("doc-05.txt", "doc-30.txt"))]
    only = pairs[frozenset(("doc-05.txt", "doc-30.txt"))]
    assert only.passages == 1 and only.shared_words == 80
    # the notice is not evidence, but it is not left out unsaid either: each holder is listed with the share of
    # its fingerprints that are very common, the same as counted here from the postings in SQL
    with raw(tmp_path / "i.db") as conn:
        expected = dict(conn.execute(
            """SELECT p.doc_id, 1.0 * count(*) / d.n_fps FROM postings p JOIN documents d ON d.id = p.doc_id
               WHERE p.fp IN (SELECT fp FROM postings GROUP BY fp HAVING count(*) > ?) GROUP BY p.doc_id""",
            (findings.common_limit,)).fetchall())
        names = dict(conn.execute("SELECT f.doc_id, f.path FROM files f").fetchall())
    assert findings.common_limit == 5 and findings.common_documents == 13
    listed = _names(findings)
    holders = {f"doc-{i:02d}.txt" for i in [*range(12), 30]}
    assert {Path(names[d]).name for d in expected} == holders
    for doc_id, share in expected.items():
        document = listed.get(Path(names[doc_id]).name)
        assert document is not None and document.common == pytest.approx(share) and 0.05 < share < 0.2
    assert all(listed[name].share == 0 and not listed[name].sources for name in holders - {"doc-05.txt", "doc-30.txt"})
    assert listed["doc-05.txt"].share > 0.05 and set(listed) == holders
    assert not findings.at_least(0.5).documents  # nor at a share above both


def test_the_edges_of_a_very_common_notice_pair_none_of_its_holders(tmp_path: Path) -> None:
    """At the edges of a notice 7 of 25 documents hold, winnowing windows reach into the text around it, so
    an edge shingle is an anchor of a few holders only and looks rare in the postings; counted as rare, it
    paired those few on the whole notice, and which ones the hashes of their other words decided."""
    folder = tmp_path / "notices"
    folder.mkdir()
    for i in range(25):
        (folder / f"doc-{i:02d}.txt").write_text(prose(400 + i, 500) + ("\n\n" + NOTICE if i < 7 else ""),
                                                  encoding="utf-8")
    params = Params()
    with Index.open(tmp_path / "i.db", readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
        step = align_index(index, params, jobs=0)
        findings = find_similar(index, params)
    assert step.candidates > 0  # the holders are candidates (each other's top partners), and are aligned
    assert findings.passage_pairs == () and findings.common_documents == 7
    assert all(d.share == 0 and d.common > 0.05 for d in findings.documents) and len(findings.documents) == 7


def test_a_higher_minimum_when_reading_keeps_only_longer_passages(scanned: Path, essays) -> None:
    """`clusters --min-words 100` on an index aligned at 15: only the lifts of 100 words or more remain,
    with the same shares."""
    _, expected = essays
    with Index.open(scanned) as index:
        listed = _names(find_similar(index, Params().replace(passage_words=100)))
    long_lifts = {f"essay-{host:02d}.txt" for host, (_, words) in LIFTS.items() if words >= 100}
    assert set(listed) == long_lifts | {expected[h][0] for h in long_lifts}
    for host in long_lifts:
        assert listed[host].share == pytest.approx(expected[host][1], abs=0.01)


@pytest.mark.parametrize("min_words", [0, 15, 60, 100, 10_000])
def test_the_arrays_the_findings_read_hold_the_stored_pairs(scanned: Path, min_words: int) -> None:
    """`live_arrays` (what the findings read) against `live_pairs` (a pair object each): the same pairs in
    the same order, the same words once short passages are dropped, the same passages."""
    with Index.open(scanned) as index:
        pairs = list(index.passages.live_pairs(min_words))
        arrays = index.passages.live_arrays(min_words)
    assert len(arrays) == len(pairs) and (min_words < 10_000) == bool(pairs)
    assert arrays.doc_a.tolist() == [p.doc_a for p in pairs] and arrays.doc_b.tolist() == [p.doc_b for p in pairs]
    assert arrays.words_a.tolist() == [p.words_a for p in pairs]
    assert arrays.words_b.tolist() == [p.words_b for p in pairs]
    assert arrays.passage_counts().tolist() == [len(p.passages) for p in pairs]
    held = sorted(zip(arrays.pair.tolist(), arrays.a_first.tolist(), arrays.a_stop.tolist(), arrays.b_first.tolist(),
                      arrays.b_stop.tolist(), arrays.kind.tolist()))
    assert held == sorted((row, q.a_first, q.a_stop, q.b_first, q.b_stop, KINDS.index(q.kind))
                          for row, p in enumerate(pairs) for q in p.passages)


def test_shared_anchors_must_lie_within_one_passage() -> None:
    """The pre-filter of pairs outside a document's top partners: a verbatim passage of exactly the
    minimum length passes it; shared 7-word phrases 100 words apart, with more shared anchors than that
    passage, do not (made-up words: the texts share nothing else)."""
    params = Params()
    source, host = zipf_writer(1)(6000).split(), zipf_writer(2)(6000).split()
    lifted = source[300 : 300 + params.min_passage_words]
    with_passage = align_side(" ".join(host[:400] + lifted + host[400:]), params)
    phrases = [source[k : k + 7] for k in range(40, 840, 100)]
    step = len(host) // len(phrases)
    scattered = align_side(" ".join(w for i, phrase in enumerate(phrases)
                                    for w in host[i * step : (i + 1) * step] + phrase), params)
    whole = align_side(" ".join(source), params)
    assert anchors_close_enough(with_passage, whole, params)
    assert np.isin(scattered.anchors, whole.anchors).sum() >= 3 * params.passage_anchors  # the postings pair it
    assert not anchors_close_enough(scattered, whole, params)


@pytest.mark.parametrize("seed", range(3))
def test_a_querys_partners_checked_at_once_as_one_at_a_time(seed: int) -> None:
    """`anchors_close_enough_many` over a query's partners: for each, whether `passage_anchors` of the anchors
    the query shares with it lie within one passage of the minimum length, as a plain loop over the
    query's anchors finds (partners sharing a passage, phrases scattered or close, or nothing)."""
    from scanner.services.pair_alignment import anchors_close_enough_many

    params = Params()
    rng = random.Random(seed)
    write = zipf_writer(10 + seed)
    query_words = write(3000).split()
    partners = []
    for k in range(12):
        words = zipf_writer(100 * seed + k)(rng.randint(30, 600)).split()
        for _ in range(rng.randint(0, 4)):  # pieces of the query, from a few words to a passage
            at, length = rng.randrange(len(query_words) - 40), rng.randint(3, 25)
            place = rng.randrange(len(words) + 1)
            words[place:place] = query_words[at : at + length]
        partners.append(align_side(" ".join(words), params))
    query = align_side(" ".join(query_words), params)
    need, span = params.passage_anchors, params.min_passage_words - params.shingle_size

    def looped(partner: Any) -> bool:
        held = set(partner.anchors.tolist())
        places = [int(p) for anchor, p in zip(query.anchors.tolist(), query.positions.tolist()) if anchor in held]
        return any(places[k + need - 1] - places[k] <= span for k in range(len(places) - need + 1))

    expected = [looped(partner) for partner in partners]
    assert anchors_close_enough_many(query, partners, params).tolist() == expected
    assert any(expected) and not all(expected)
    assert anchors_close_enough_many(query, [], params).tolist() == []


def test_findings_stored_before_an_alignment_finished_are_not_read_after_it(essays, tmp_path: Path) -> None:
    """An alignment cut short (a cancelled TUI scan) leaves findings stored with unaligned documents; the
    next alignment completes it without any file changing, and the findings read then are complete."""
    folder, expected = essays
    params = Params()
    with Index.open(tmp_path / "i.db", readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
        early = stored_or_found(index, params)
        assert early.unaligned == ESSAYS and not early.documents
        align_index(index, params, jobs=0)
        late = stored_or_found(index, params)
    assert late.unaligned == 0 and set(expected) <= {Path(d.path).name for d in late.documents}


def test_an_index_without_texts_aligns_nothing_and_says_so(essays, tmp_path: Path) -> None:
    """--no-text keeps no text to align: every candidate pair is counted as without text, none stored."""
    folder, _ = essays
    params = Params()
    with Index.open(tmp_path / "i.db", readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0, store_text=False)
        step = align_index(index, params, jobs=0)
        assert step.candidates >= len(LIFTS) and step.without_text == step.candidates and step.pairs == 0
        assert index.passages.count() == 0 and not find_similar(index, params).documents


def _among_top_partners(pa: np.ndarray, pb: np.ndarray, shared: np.ndarray, ranks: np.ndarray,
                        parts: int = 1) -> np.ndarray:
    """Which pairs are among either document's top partners, the pairs added to `_TopPartners` in `parts`
    parts."""
    from scanner.services.passages import _TopPartners

    top = _TopPartners(ranks)
    for chunk in np.array_split(np.arange(pa.shape[0]), parts):
        top.add(pa[chunk], pb[chunk], shared[chunk])
    return in_sorted(top.pair_keys(pa, pb), top.pairs())


def _top_partners_by_sort(shared: dict[tuple[int, int], int], ranks: np.ndarray, docs: Any) -> set[tuple[int, int]]:
    """Each document's SENTENCE_ALIGNED_FIRST pairs of `shared` (pair -> shared anchors), by a sort of all its
    pairs: most shared first, ties by the partner's content rank."""
    from scanner.services.check import SENTENCE_ALIGNED_FIRST

    top = set()
    for d in docs:
        mine = sorted((-n, int(ranks[b if a == d else a]), (a, b)) for (a, b), n in shared.items() if d in (a, b))
        top.update(pair for *_, pair in mine[:SENTENCE_ALIGNED_FIRST])
    return top


def test_tied_partners_are_chosen_by_content_not_by_id() -> None:
    """Twelve partners sharing as many anchors with a document (each with ten closer partners of its own):
    the SENTENCE_ALIGNED_FIRST kept are the first by content rank, whatever their ids (ids follow the order a
    scan's workers finished), and whether the document is the first or the second of each pair; the same
    when the pairs come in parts (the buckets of the pair counts)."""
    from scanner.services.check import SENTENCE_ALIGNED_FIRST

    partners = np.arange(100, 112)
    ranks = np.random.default_rng(16).permutation(400)
    doc = np.full(12, 7)
    friends_a = np.repeat(partners, 10)  # each partner's ten closer partners (9 anchors, not 3)
    friends_b = 200 + np.arange(120)
    for first, second in ((doc, partners), (partners, doc), (np.where(partners < 106, doc, partners),
                                                            np.where(partners < 106, partners, doc))):
        for parts in (1, 5):
            chosen = _among_top_partners(np.concatenate((first, friends_a)), np.concatenate((second, friends_b)),
                                         np.concatenate((np.full(12, 3), np.full(120, 9))), ranks, parts)[:12]
            kept = np.sort(ranks[partners])[:SENTENCE_ALIGNED_FIRST]
            assert sorted(ranks[partners[chosen]].tolist()) == kept.tolist()
    more = _among_top_partners(np.concatenate((doc, friends_a)), np.concatenate((partners, friends_b)),
                               np.concatenate((np.where(partners == 111, 4, 3), np.full(120, 9))), ranks)[:12]
    assert more[partners == 111].all() and more.sum() == SENTENCE_ALIGNED_FIRST  # more anchors come first


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29), st.integers(1, 6)), max_size=200),
       st.integers(1, 7))
def test_top_partners_merged_part_by_part_are_those_of_all_pairs(pairs: list[tuple[int, int, int]],
                                                                  parts: int) -> None:
    """Each document's top partners, the pairs added in parts, are those a sort of all its partners gives
    (most shared anchors first, ties by content rank)."""

    distinct = {(min(a, b), max(a, b)): shared for a, b, shared in pairs if a != b}
    pa = np.array([a for a, _ in distinct], dtype=np.int64)
    pb = np.array([b for _, b in distinct], dtype=np.int64)
    shared = np.array(list(distinct.values()), dtype=np.int64)
    ranks = np.random.default_rng(len(pairs)).permutation(30)
    expected = _top_partners_by_sort(distinct, ranks, range(30))
    got = _among_top_partners(pa, pb, shared, ranks, parts)
    assert {pair for pair, chosen in zip(distinct, got.tolist()) if chosen} == expected


def _tie_folder(folder: Path, reverse: bool) -> None:
    """A host essay and 14 partners holding one same reworded copy of a passage of it (2 or 3 shared anchors
    each: a tie at the host's 10 partners worth the sentence pass), named so that the crawl meets the
    partners in one order, or in the other (`reverse`), and gives them other ids."""
    from tests.corpus import obfuscate

    rng = random.Random(35)
    host = prose(3500, 1200)
    copy = obfuscate(_lift(host, 140, rng), rng, rate=0.6)
    folder.mkdir()
    (folder / "host.txt").write_text(host, encoding="utf-8")
    for i in range(14):
        name = f"partner-{13 - i if reverse else i:02d}.txt"
        (folder / name).write_text(f"{prose(3600 + i, 400)}\n\n{copy}\n\n{prose(3700 + i, 400)}", encoding="utf-8")


def test_the_same_files_give_the_same_passage_pairs_whatever_their_ids(tmp_path: Path) -> None:
    """Found in a real scan of 2,000 manual pages: two scans of one folder stored 55,413 and 55,422 passage
    pairs, as ties among partners were broken by document id. Here the ids come in opposite orders. (No
    shingle is very common here, or the copy all 15 documents hold would pair none of them.)"""
    from scanner.services.check import SENTENCE_ALIGNED_FIRST

    params = Params(common_shingle_share=1.0)
    found = []
    for reverse in (False, True):
        folder = tmp_path / f"tie-{reverse}"
        _tie_folder(folder, reverse)
        with Index.open(tmp_path / f"tie-{reverse}.db", readonly=False, params=params) as index:
            run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
            align_index(index, params, jobs=0)
            findings = find_similar(index, params)
            ids = dict(raw(index).execute("SELECT sha256, id FROM documents"))
            host_sha = raw(index).execute("SELECT sha256 FROM files WHERE path LIKE '%host.txt'").fetchone()[0]
            shared = {(int(a), int(b)): int(n) for pa, pb, counts in index.pair_count_arrays(1.0)
                      for a, b, n in zip(pa, pb, counts)}
        with_host = sorted((n for (a, b), n in shared.items() if ids[host_sha] in (a, b)), reverse=True)
        cut = SENTENCE_ALIGNED_FIRST
        # a tie across the host's partners worth the sentence pass, of pairs that are candidates only as such
        assert len(with_host) == 14 and with_host[cut - 1] == with_host[cut] < params.passage_anchors
        found.append(({frozenset((p.a.sha256, p.b.sha256)) for p in findings.passage_pairs}, ids))
    (first, first_ids), (second, second_ids) = found
    assert first_ids != second_ids  # the partners got other ids
    host_pairs = {pair for pair in first if host_sha in pair}
    assert 0 < len(host_pairs) < 14  # the reworded copy is found, in the pairs the tie let through
    assert first == second


def test_documents_prepared_in_one_batch_are_those_prepared_one_at_a_time() -> None:
    """`align_sides`: the passage step prepares a task's documents together (one numpy pass over all); each
    comes out as `align_side` makes it alone: texts in and out of ASCII, one shorter than a winnowing
    window, an empty one."""
    from scanner.services.prepared import align_sides

    params = Params()
    texts = [prose(1200, 300), "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20, "",
             "four words only here", zipf_writer(5)(900)]
    for batch, alone in zip(align_sides(texts, params), (align_side(t, params) for t in texts)):
        assert batch.text == alone.text
        for field in ("hashes", "starts", "ends"):
            assert np.array_equal(getattr(batch.shingled.tokens, field), getattr(alone.shingled.tokens, field))
        assert np.array_equal(batch.shingled.fingerprints, alone.shingled.fingerprints)
        assert np.array_equal(batch.anchors, alone.anchors) and batch.anchors.dtype == alone.anchors.dtype
        assert np.array_equal(batch.positions, alone.positions)
    assert align_sides([], params) == []


def test_the_step_reads_a_tasks_documents_at_once_and_finds_the_same_passages(
        scanned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task's documents are read in one query and prepared together (`PreparedSides.prepare`), none
    one at a time, and those the sentence pass needs split into sentences together (`PreparedSides.split`);
    the passages stored are byte for byte those of the step that read and split them one by one."""
    import shutil

    from scanner.services import prepared

    db = tmp_path / "again.db"
    shutil.copy(scanned, db)
    one_by_one: list[int] = []
    original = Index.text
    monkeypatch.setattr(Index, "text", lambda self, doc_id: one_by_one.append(doc_id) or original(self, doc_id))
    with Index.open(db, readonly=False, params=Params()) as index:
        index.passages.use_key({"forget": "every pair"})  # another key: every stored pair goes, aligned again
        assert align_index(index, Params(), jobs=0).pairs > 0
        batched = raw(index).execute("SELECT doc_a, doc_b, passages FROM passage_pairs ORDER BY 1, 2").fetchall()
    assert one_by_one == []
    # the step as it was: each document read, and split into sentences, when first needed
    monkeypatch.setattr(prepared.PreparedSides, "prepare", lambda self, doc_ids, *rest, **named: None)
    monkeypatch.setattr(prepared.PreparedSides, "split", lambda self, sides: None)
    with Index.open(db, readonly=False, params=Params()) as index:
        index.passages.use_key({"forget": "every pair"})
        align_index(index, Params(), jobs=0)
        alone = raw(index).execute("SELECT doc_a, doc_b, passages FROM passage_pairs ORDER BY 1, 2").fetchall()
    assert one_by_one and alone == batched


def test_candidate_pairs_counted_bucket_by_bucket_are_those_of_all_pairs(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The pair counts come bucket by bucket, and each document's top partners are merged in as they come
    (`_TopPartners`): with the counts in one bucket, or in one a document, the same candidates, and the same
    ones worth the sentence pass as a sort of all the pairs gives (24 documents, each holding 12 short
    phrases that three others hold too, under the very-common limit: over twenty partners a document
    sharing a few anchors, more than the ten worth the sentence pass)."""

    rng = random.Random(18)

    def words(count: int) -> str:  # made-up words: the documents share nothing but the phrases dealt
        return " ".join("".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
                        for _ in range(count))

    dealt = [phrase for phrase in [words(9) for _ in range(72)] for _ in range(4)]
    rng.shuffle(dealt)
    for d in range(24):
        picked = dealt[12 * d : 12 * (d + 1)]
        (tmp_path / f"doc-{d:02d}.txt").write_text(". ".join(picked + [words(200)]), encoding="utf-8")
    with Index.open(tmp_path / "i.db", readonly=False, params=Params()) as index:
        run_scan([str(tmp_path / f"doc-{d:02d}.txt") for d in range(24)], index, make_plugin_manager(), Params(),
                 jobs=0)
        params = index.params
        fresh = np.unique(index.pairing_inputs(params.common_shingle_share)[0])
        ranks = index.content_ranks()
        counted = Index.pair_count_arrays
        found = []
        for buckets in (1, 24):
            monkeypatch.setattr(Index, "pair_count_arrays",
                                lambda self, share, b=buckets, **options: counted(self, share, buckets=b, **options))
            found.append(passages_step.candidate_pairs(index, params, fresh, ranks))
        every = [np.concatenate(column) for column in zip(*counted(index, params.common_shingle_share, buckets=1))]
    (pairs, worthy), (again, again_worthy) = found
    assert np.array_equal(again, pairs) and np.array_equal(again_worthy, worthy)
    shared = {(int(a), int(b)): int(n) for a, b, n in zip(*every)}
    top = _top_partners_by_sort(shared, ranks, fresh.tolist())
    need = params.passage_anchors
    assert {tuple(row) for row in pairs.tolist()} == top | {pair for pair, n in shared.items() if n >= need}
    assert {tuple(row) for row, w in zip(pairs.tolist(), worthy.tolist()) if w} == top
    assert pairs.shape[0] > 100 and worthy.any() and not worthy.all() and len(shared) > pairs.shape[0]


