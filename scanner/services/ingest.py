"""From a file to what the index stores: read once, extract, sketch, decide its status.

Scan workers, `check --add`, `watch --add` and the Dask executor all take a file
through these steps, so a file gets the same document, status and reason
whichever path brought it in. The evidence is read (and hashed) once: the bytes
that were hashed are the bytes that are extracted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scanner.core.config import Params
from scanner.core.model import Extracted, FileRecord, TextStatus
from scanner.engine.arrays import distinct
from scanner.engine.sketch import Sketch, sketch_and_winnow
from scanner.index.store import Index, NewDocument, compress_text
from scanner.sources.crawl import printable_realpath
from scanner.sources.extract import DEFAULT_LIMITS, extract_evidence
from scanner.sources.extract.containers import Spill, moved
from scanner.sources.extract.evidence import Evidence, UnreadableError, read_evidence
from scanner.sources.extract.readers import READERS_VERSION
from scanner.sources.limits import DECRYPTED, DECRYPTED_REASON, ExtractLimits

MiB = 1024 * 1024


@dataclass(frozen=True)
class Outcome:
    """What one file gave: its record, a status, and a document when there is text."""

    record: FileRecord
    status: str  # a TextStatus value
    reason: str
    extractor: str
    document: NewDocument | None = None
    # a container's members (archive members, mail attachments), every level, each an outcome of its own
    members: tuple["Outcome", ...] = ()

    def moved_to(self, path: str) -> "Outcome":
        """This outcome under another path (a copy, or the display form of the path it was read by); its
        members' paths follow."""
        old = self.record.path
        return replace(self, record=replace(self.record, path=path),
                       members=tuple(replace(m, record=replace(m.record, path=moved(m.record.path, old, path)))
                                     for m in self.members))


@dataclass(frozen=True)
class Failure:
    """A file that gave no outcome: why (status and one-line reason)."""

    status: str
    reason: str


FileResult = Outcome | Failure


def read_or_reason(path: str, limits: ExtractLimits | None = None) -> tuple[Evidence | None, str]:
    """(the file's evidence, "") or (None, why it cannot be read): its bytes within the size cap, and SHA-256."""
    try:
        return read_evidence(path, (limits or DEFAULT_LIMITS).max_bytes), ""
    except UnreadableError as exc:
        return None, f"cannot read: {exc.why}"


def extract_one(path: str, evidence: Evidence, pm: Any, limits: ExtractLimits | None = None,
                on_member: Callable[[str], None] | None = None,
                spill: Spill | None = None) -> tuple[FileRecord, Extracted]:
    """The record and text of a file already read (`read_or_reason`)."""
    return extract_evidence(path, evidence, pm, limits or DEFAULT_LIMITS, on_member=on_member, spill=spill)


def process_files(items: Sequence[tuple[str, Evidence]], pm: Any, params: Params, store_text: bool,
                  limits: ExtractLimits | None = None, *, memory: int | None = None,
                  on_start: Callable[[int], None] | None = None,
                  on_members: Callable[[int, list[Outcome]], None] | None = None
                  ) -> tuple[list[FileResult | None], bool]:
    """Extract each file read, then sketch all their texts in one batch pass (runs in a worker).

    Returns one entry per item, an outcome or a failure, and whether the process
    ran out of memory: it then stops, the files it did not reach are None (to be
    tried again elsewhere), and it should not be trusted with more work.
    `on_start(i)` is called before extracting items[i], and again before each of its members when it is a
    container (a member is a file: each gets the per-file time budget), so a parent watching the clock knows
    which file overran. `on_members(i, outcomes)`: the outcomes of a container's members, a thousand or more
    at a time, which its own outcome then lacks (every level's, each without its members: a mailbox's
    messages, their attachments), so no file holds all of its members at once; None: it holds them.
    """
    results: list[FileResult | None] = [None] * len(items)
    extracted: list[tuple[int, FileRecord, Extracted]] = []
    over_budget = Failure(TextStatus.TOO_LARGE.value, f"memory budget of {memory // MiB} MiB exceeded" if memory
                          else "out of memory")
    for i, (path, evidence) in enumerate(items):
        if on_start is not None:
            on_start(i)
        try:
            record, text = extract_one(path, evidence, pm, limits, on_member=_restarts(on_start, i),
                                       spill=_spilled_to(on_members, i, params, store_text))
        except MemoryError:
            results[i] = over_budget
            return results, True
        except Exception as exc:  # noqa: BLE001 - hostile input must not stop the scan
            results[i] = Failure(TextStatus.ERROR.value, f"{type(exc).__name__}: {exc}"[:300])
            continue
        extracted.append((i, record, text))
    try:
        outcomes = outcomes_from([(record, text) for _, record, text in extracted], params, store_text)
    except MemoryError:  # the longest text is blamed; the others are tried again (None) by a fresh worker
        longest = max(extracted, key=lambda item: len(item[2].text))
        results[longest[0]] = over_budget
        return results, True
    for (i, _, _), outcome in zip(extracted, outcomes):
        results[i] = outcome
    return results, False


def _spilled_to(on_members: Callable[[int, list[Outcome]], None] | None, i: int, params: Params,
                store_text: bool) -> Spill | None:
    """What sends a container's members read so far, as outcomes, to `on_members` for items[i]."""
    if on_members is None:
        return None
    send = on_members
    return lambda members: send(i, _outcomes(members, params, store_text))


def _restarts(on_start: Callable[[int], None] | None, i: int) -> Callable[[str], None] | None:
    """What tells the parent, before each member of container items[i], that the file's clock restarts."""
    if on_start is None:
        return None
    start = on_start
    return lambda _member: start(i)


def outcome_from(record: FileRecord, extracted: Extracted, params: Params, store_text: bool) -> Outcome:
    return outcomes_from([(record, extracted)], params, store_text)[0]


def outcomes_from(items: Sequence[tuple[FileRecord, Extracted]], params: Params, store_text: bool) -> list[Outcome]:
    """What each extracted file gives the index, its members' outcomes inside a container's; all texts are
    sketched together (`sketch_and_winnow`, bit-identical to one at a time and about twice as fast on small
    files)."""
    flat: list[tuple[FileRecord, Extracted]] = []
    spans: list[tuple[int, int]] = []
    for record, extracted in items:
        spans.append((len(flat), len(flat) + 1 + len(extracted.members)))
        flat.append((record, extracted))
        flat.extend(extracted.members)
    outcomes = _outcomes(flat, params, store_text)
    return [replace(outcomes[start], members=tuple(outcomes[start + 1:end])) for start, end in spans]


def _outcomes(items: Sequence[tuple[FileRecord, Extracted]], params: Params, store_text: bool) -> list[Outcome]:
    outcomes: list[Outcome | None] = [None] * len(items)
    with_text: list[int] = []
    for i, (record, extracted) in enumerate(items):
        if TextStatus(extracted.status).has_text:
            with_text.append(i)
        else:
            outcomes[i] = Outcome(record, TextStatus(extracted.status).value, extracted.reason, extracted.extractor)
    for i, (sketch, (winnowed, _)) in zip(with_text, _sketched(items, with_text, params)):
        record, extracted = items[i]
        text = extracted.text
        n_tokens = sketch.n_tokens
        if n_tokens == 0:
            outcomes[i] = Outcome(record, TextStatus.EMPTY.value, extracted.reason or "no words in the extracted text",
                                  extracted.extractor)
            continue
        too_short = n_tokens < params.min_tokens
        doc_status = TextStatus.TOO_SHORT.value if too_short else TextStatus.OK.value
        reason = f"{n_tokens} tokens, fewer than min_tokens={params.min_tokens}" if too_short else ""
        # PARTIAL and OCR are the file's status (its extractor lost words and the raw text is in the document
        # too, or its text was cut; its text was read from images); the document is sketched like any other,
        # paired and matched as ok
        file_status, file_reason = doc_status, reason
        if extracted.status in (TextStatus.PARTIAL, TextStatus.OCR) and not too_short:
            file_status, file_reason = extracted.status.value, extracted.reason
        if DECRYPTED in extracted.meta:  # evidence that it was locked, kept with the file's row
            file_reason = "; ".join(r for r in (file_reason, DECRYPTED_REASON) if r)
        document = NewDocument(
            sha256=record.sha256, size=record.size, mime=record.mime, status=doc_status,
            extractor=extracted.extractor, sketch_blob=sketch.to_bytes(), n_tokens=n_tokens,
            n_shingles=sketch.n_shingles, text_length=len(text), lexical_digest=sketch.lexical_digest,
            shingle_digest=sketch.shingle_digest, fingerprints=distinct(winnowed),
            text_z=compress_text(text) if store_text else None, page_starts=tuple(extracted.page_starts),
            places=extracted.places)
        outcomes[i] = Outcome(record, file_status, file_reason, extracted.extractor, document)
    return [outcome for outcome in outcomes if outcome is not None]


_SKETCHED_AT_ONCE = 1_000  # texts whose sketches are held at a time: each is made into its document's bytes next


def _sketched(items: Sequence[tuple[FileRecord, Extracted]], with_text: list[int],
              params: Params) -> Iterator[tuple[Sketch, tuple[np.ndarray, np.ndarray]]]:
    """`sketch_and_winnow` of these items' texts, a thousand at a time: a mailbox of 90,000 messages, its
    sketches made all at once, ran its worker out of memory before they became the documents' bytes."""
    for start in range(0, len(with_text), _SKETCHED_AT_ONCE):
        yield from sketch_and_winnow([items[i][1].text for i in with_text[start:start + _SKETCHED_AT_ONCE]], params)


def checked_file_outcome(path: str, shown: str, record: FileRecord, extracted: Extracted,
                         params: Params) -> tuple[Outcome, str]:
    """A checked file as a scan would index it (`check --add`, `watch --add`): its outcome under the display
    name `shown`, and its real path, so a later scan of its folder finds it indexed instead of adding it again."""
    return outcome_from(record, extracted, params, store_text=True).moved_to(shown), printable_realpath(path)


def write_checked_file(index: Index, outcome: Outcome, real_path: str) -> None:
    """Write `checked_file_outcome`'s result: documents, file rows (its members' too) and real path, in one
    transaction."""
    with index.transaction():
        for written in (outcome, *outcome.members):
            doc_id = index.add_document(written.document) if written.document is not None else None
            index.put_file(written.record, status=written.status, readers=READERS_VERSION, reason=written.reason,
                           extractor=written.extractor, doc_id=doc_id)
        index.set_real_paths([(outcome.record.path, real_path)])
