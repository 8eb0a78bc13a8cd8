"""The worker side of a watch: one file read, extracted and matched against the protected index."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from scanner.core.errors import InputError
from scanner.core.model import TextStatus
from scanner.services.ingest import Outcome, checked_file_outcome
from scanner.services.semantic import open_model
from scanner.services.watch.records import MiB, WatchOptions
from scanner.services.workers import Assign, WorkerProcess, serve_tasks
from scanner.sources.crawl import printable_path


@dataclass(frozen=True)
class CheckedFile:
    """What a worker found in one file: its identity, status and the matches that are leaks."""

    path: str
    sha256: str
    size: int
    mtime_ns: int
    changed: bool  # written to while being read: checked again once it settles
    status: str  # a TextStatus value
    reason: str
    matches: tuple[dict[str, Any], ...]
    added: Outcome | None = None  # --add: the file as a scan would index it
    real_path: str = ""
    locked: bool = False  # it, or a member, is encrypted and no password given opened it: checked again next watch


def check_file(path: str, index: Any, pm: Any, options: WatchOptions) -> CheckedFile:
    """Extract and match one file (in a worker).

    Raises:
        InputError / OSError: the file cannot be read (yet); the coordinator retries.
    """
    from scanner.services.check import CheckOptions, check_extracted, file_and_members
    from scanner.sources.extract import ExtractLimits, extract_file

    limits = ExtractLimits(ocr=options.ocr, ocr_languages=options.ocr_languages, passwords=options.passwords)
    record, extracted = extract_file(Path(path), pm, limits)
    status = TextStatus(extracted.status)
    # a container (archive, mail) is checked member by member; a leak inside one names the member
    shown = printable_path(path)  # the file's name in the index, as a scan would write it
    queries = [(query, e) for query, _, e in file_and_members(path, shown, record, extracted)]
    locked = any(e.status is TextStatus.ENCRYPTED for _, e in queries)
    checked = CheckedFile(path, record.sha256, record.size, record.mtime_ns, "warning" in (extracted.meta or {}),
                          status.value, extracted.reason, (), locked=locked)
    readable = [(query, e) for query, e in queries if TextStatus(e.status).has_text]
    if not readable:
        return checked
    params = index.params
    skip: frozenset[int] = frozenset()
    if options.add:  # the file's own earlier version, indexed by --add, is not a leak of itself
        skip = frozenset(doc for query, _ in readable for doc in index.doc_ids_at(query))
    leaks: list[dict[str, Any]] = []
    protected_docs = max(1, index.document_count())
    boilerplate_docs = max(BOILERPLATE_MIN_DOCS, math.ceil(options.boilerplate_share * protected_docs))
    check_options = CheckOptions(top=min(max(10, boilerplate_docs + 1), 200),
                                 min_words=min(options.min_words, params.guaranteed_run), skip_doc_ids=skip,
                                 semantic=getattr(index, "semantic", None), documents=getattr(index, "documents", None))
    for query, query_extracted in readable:
        # text of the allow index (licences, notices, passages allowed in review) never counts
        report = check_extracted(query_extracted, index, params, check_options, getattr(index, "allow", None))
        member = {"member": query} if query != shown else {}
        for match in without_boilerplate(report.matches, boilerplate_docs,
                                         lambda doc_ids: distinct_documents(index, doc_ids, params)):
            rules = leak_rules(match, options)
            if rules:
                leaks.append({**match.to_json(), **member, **why(match, rules)})
    # a file read in part keeps saying so (its raw text was matched too); any other file with text was checked
    partial = status is TextStatus.PARTIAL
    checked = replace(checked, status=status.value if partial else TextStatus.OK.value,
                      reason=extracted.reason if partial else "", matches=tuple(leaks))
    if not options.add:
        return checked
    outcome, real_path = checked_file_outcome(path, shown, record, extracted, params)
    return replace(checked, added=outcome, real_path=real_path)


BOILERPLATE_MIN_DOCS = 3  # a passage shared by fewer protected documents is never called their boilerplate


def _longest(match: Any) -> int:
    """Words of the longest verbatim passage: a pasted paragraph. Reworded sentences stay in the alert's
    evidence but do not fire the passage rule: across a large protected set, sentences of ordinary prose
    ("At the end of the ...") meet a same-shaped one somewhere."""
    return _longest_of(match, ("verbatim",))


def _longest_of(match: Any, kinds: tuple[str, ...]) -> int:
    return max((len(p.text.split()) for p in match.passages if p.kind in kinds), default=0)


REWORDED_FACTOR = 3  # a passage in other words alerts at this many times the verbatim passage length


def distinct_documents(index: Any, doc_ids: list[int], params: Any) -> int:
    """How many of `doc_ids` are not near-duplicates of one another (sketch resemblance below the index's
    threshold): versions of one text count once."""
    from scanner.engine.sketch import compare_sketches

    sketches = index.sketches(doc_ids)
    kept: list[Any] = []
    for doc_id in doc_ids:
        sketch = sketches.get(doc_id)
        if sketch is None or not any(compare_sketches(sketch, other, params.sample_size).resemblance
                                     >= params.resemblance_threshold for other in kept):
            kept.append(sketch)
    return len(kept)


def leak_rules(match: Any, options: WatchOptions) -> list[str]:
    """The rules a match passes: "passage" (a pasted passage of `min_words`), "reworded" (a passage in
    other words, reworded or found by meaning, of REWORDED_FACTOR x `min_words`: one sentence alike in
    ordinary prose is chance, a paragraph is not), "containment" (most of a protected document),
    "resemblance" (a near copy of one); none: not a leak."""
    reworded = _longest_of(match, ("reworded", "semantic")) >= REWORDED_FACTOR * options.min_words
    return [rule for rule, passed in (("passage", _longest(match) >= options.min_words),
                                      ("reworded", reworded),
                                      ("containment", match.containment_doc_in_query >= options.min_containment),
                                      ("resemblance", match.resemblance >= options.threshold)) if passed]


def is_leak(match: Any, options: WatchOptions) -> bool:
    """A pasted passage, most of a protected document, or a near copy of one."""
    return bool(leak_rules(match, options))


def why(match: Any, rules: list[str]) -> dict[str, Any]:
    """What every alert says of each match: the rules it passed, its longest passage, the protected share."""
    return {"rules": rules, "longest_passage_words": _longest(match),
            "share_of_protected": round(match.containment_doc_in_query, 6)}


def without_boilerplate(matches: Sequence[Any], min_docs: int,
                        distinct: Callable[[list[int]], int] = len) -> list[Any]:
    """`matches` without the passages whose text (in the watched file) is found in `min_docs` distinct
    protected documents or more: the protected set's own boilerplate (a licence header, a legal notice).

    `distinct(doc_ids)` counts the documents that are not versions of one another: a protected text kept as
    .txt, .html and .pdf is one document, and a leak of it is a leak, not boilerplate."""
    spans: list[tuple[int, int]] = [(p.query_start, p.query_end) for m in matches for p in m.passages]
    if len(spans) < min_docs:
        return list(matches)

    def common(passage: Any) -> bool:
        docs = [m.doc_id for m in matches if any(q.query_start < passage.query_end
                                                 and passage.query_start < q.query_end for q in m.passages)]
        return len(docs) >= min_docs and distinct(docs) >= min_docs

    return [replace(m, passages=tuple(p for p in m.passages if not common(p))) for m in matches]


class WatchedAgainst:
    """The protected index (every attribute of it) and the allow index a worker checks files with."""

    def __init__(self, protected: Any, allow: Any | None, semantic: Any | None = None) -> None:
        from scanner.services.prepared import CHECK_CACHE_TOKENS, PreparedSides

        self.protected = protected
        self.allow = allow
        self.semantic = semantic  # the semantic pass's sentence model, or None
        # the protected documents a worker has prepared (shingled, split, embedded), kept from file to file
        self.documents = PreparedSides(protected, protected.params, semantic, max_tokens=CHECK_CACHE_TOKENS)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.protected, name)


Checker = Callable[[str, Any, Any, WatchOptions], CheckedFile]


@dataclass(frozen=True)
class Checked:
    """Worker to coordinator: the file was read and matched."""

    task_id: int
    result: CheckedFile


@dataclass(frozen=True)
class Unreadable:
    """Worker to coordinator: the file cannot be read yet (retried with backoff)."""

    task_id: int
    why: str


@dataclass(frozen=True)
class CheckFailed:
    """Worker to coordinator: the file defeats the checker (reported); `retire`: the worker ran out of memory
    and ends."""

    task_id: int
    why: str
    retire: bool = False


def worker_main(conn: Connection, index_path: str, options: WatchOptions, checker: Checker) -> None:
    """Loop: Assign(id, path) -> Checked | Unreadable | CheckFailed."""

    def setup() -> tuple[Any, Any]:
        from scanner.index import Index
        from scanner.sources.plugins import make_plugin_manager

        protected = Index.open(index_path, readonly=True)
        if options.semantic:
            protected.read_meaning_ahead()  # while the model loads: the worker's first check does not wait
        allow = Index.open(options.allow_index, readonly=True) if options.allow_index else None
        return WatchedAgainst(protected, allow, open_model(options.semantic)), make_plugin_manager()

    def handle(state: tuple[Any, Any], task_id: int, path: str) -> bool:
        index, pm = state
        try:
            conn.send(Checked(task_id, checker(path, index, pm, options)))
        except MemoryError:
            conn.send(CheckFailed(task_id, f"memory budget of {(options.memory or 0) // MiB} MiB exceeded",
                                  retire=True))
            return False  # a process that ran out of memory is not trusted with another file
        except OSError as exc:
            conn.send(Unreadable(task_id, f"{exc.strerror or exc}"))
        except Exception as exc:  # noqa: BLE001 - hostile input must not stop the watcher
            why = f"{type(exc).__name__}: {exc}"[:300]
            conn.send(Unreadable(task_id, why) if isinstance(exc, InputError) else CheckFailed(task_id, why))
        return True

    serve_tasks(conn, setup, options.memory, handle)


class CheckWorker(WorkerProcess):
    """One worker process and the file it holds."""

    def __init__(self, ctx: Any, args: tuple[Any, ...]) -> None:
        super().__init__(ctx, worker_main, args)
        self.path: str | None = None
        self.task_id = 0

    def assign(self, task_id: int, path: str, now: float) -> None:
        self.task_id, self.path, self.started = task_id, path, now
        self.conn.send(Assign(task_id, path))
