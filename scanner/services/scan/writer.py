"""The scan's single writer: collects finished files and commits them in batches.

A file's document, sketch, postings and file row share one transaction, so a
scan killed at any moment leaves a consistent index and the next scan resumes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scanner.core.errors import ResourceError
from scanner.core.model import TextStatus
from scanner.index.store import DocumentIdentity, Index, NewDocument
from scanner.services.ingest import Outcome
from scanner.sources.extract.readers import READERS_VERSION

BATCH_FILES = 256  # files per index transaction
BATCH_SECONDS = 2.0


@dataclass(frozen=True)
class FileIssue:
    """A file that gave no usable text, with its one-line reason."""

    path: str
    status: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.status}: {self.reason}" if self.reason else self.status


@dataclass
class Counts:
    """What a scan has seen and done so far (progress and the final result read it)."""

    seen: int = 0
    indexed: int = 0
    unchanged: int = 0
    linked: int = 0
    bytes_seen: int = 0
    bytes_done: int = 0
    bytes_read: int = 0
    errors: list[FileIssue] = field(default_factory=list)
    skipped: list[FileIssue] = field(default_factory=list)
    too_short: list[str] = field(default_factory=list)
    partial: list[FileIssue] = field(default_factory=list)  # indexed, but the extractor lost words (TextStatus.PARTIAL)
    members: int = 0  # files found inside containers (archive members, attachments), every level
    reread: int = 0  # unchanged files read again: older readers found no text in them, or passwords may open them

    def tally(self, path: str, status: str, reason: str) -> None:
        """Count a file settled with `status` under indexed, errors or skipped (one rule for new and unchanged)."""
        kind = TextStatus(status)
        if kind.has_text:
            if kind is TextStatus.TOO_SHORT:
                self.too_short.append(path)
            elif kind is TextStatus.PARTIAL:
                self.partial.append(FileIssue(path, status, reason))
        elif kind.is_error:
            self.errors.append(FileIssue(path, status, reason))
        elif kind is not TextStatus.CONTAINER:  # a container is told by its members
            self.skipped.append(FileIssue(path, status, reason))


class Writer:
    """Collects finished files and commits them in batches (one transaction each)."""

    def __init__(self, index: Index, run_id: int, counts: Counts) -> None:
        self.index = index
        self.run_id = run_id
        self.counts = counts
        self.outcomes: list[Outcome] = []
        self.pending_docs: dict[str, NewDocument] = {}
        self.pending_identities: dict[str, DocumentIdentity] = {}  # of pending_docs, from their first outcome
        self.seen: list[str] = []
        self.real_paths: dict[str, str] = {}  # display path -> real path, for rows of this run's next flush
        self.last_flush = time.monotonic()
        self.committed = 0  # files (members included) this run has committed: what a failure keeps
        self.index_file = _file_identity(index.path)

    def known_document(self, sha256: str) -> DocumentIdentity | None:
        """How an indexed or pending document with this SHA-256 was read."""
        return self.pending_identities.get(sha256) or self.index.document_identity(sha256)

    def add(self, outcome: Outcome) -> None:
        """A file's outcome, and its members' when it is a container (they are counted as files too)."""
        self.counts.bytes_done += outcome.record.size
        self._put([outcome])
        self.add_members(outcome.members)

    def add_members(self, members: Sequence[Outcome]) -> None:
        """Outcomes of a container's members (each without members of its own: every level is listed)."""
        self.counts.members += len(members)
        self._put(members)

    def _put(self, outcomes: Sequence[Outcome]) -> None:
        for written in outcomes:
            self.outcomes.append(written)
            doc = written.document
            if doc is not None and doc.sha256 not in self.pending_docs:
                self.pending_docs[doc.sha256] = doc
                self.pending_identities[doc.sha256] = DocumentIdentity(
                    written.status, written.reason, doc.extractor, doc.mime, has_members=bool(written.members))
            if TextStatus(written.status).has_text:
                self.counts.indexed += 1
            self.counts.tally(written.record.path, written.status, written.reason)
        self.maybe_flush()

    def unchanged(self, path: str) -> None:
        self.seen.append(path)
        self.maybe_flush()

    def maybe_flush(self) -> None:
        if (len(self.outcomes) + len(self.seen) // 16 >= BATCH_FILES
                or time.monotonic() - self.last_flush >= BATCH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if not self.outcomes and not self.seen:
            return
        index = self.index
        if _file_identity(index.path) != self.index_file:  # SQLite would go on writing into a deleted file
            raise ResourceError(f"index {index.path} was deleted or moved during the scan (its folder gone?): "
                                "stopped, nothing more can be kept")
        with index.transaction():
            if self.seen:  # an unchanged archive's members that gave no text are listed again, as at first
                for path, status, reason in index.mark_seen(self.run_id, self.seen):
                    self.counts.tally(path, status, reason)
            docs = list(self.pending_docs.values())
            doc_ids = dict(zip((d.sha256 for d in docs), index.add_documents(docs)))
            for outcome in self.outcomes:
                doc_id = None
                if TextStatus(outcome.status).has_text:
                    sha = outcome.record.sha256
                    doc_id = doc_ids[sha] if sha in doc_ids else index.doc_id_for_sha256(sha)
                index.put_file(outcome.record, status=outcome.status, readers=READERS_VERSION,
                               reason=outcome.reason, extractor=outcome.extractor, doc_id=doc_id, run_id=self.run_id)
            written = {outcome.record.path for outcome in self.outcomes} | set(self.seen)
            index.set_real_paths((path, real) for path, real in self.real_paths.items() if path in written)
        self.real_paths = {path: real for path, real in self.real_paths.items() if path not in written}
        self.committed += len(self.outcomes)
        self.outcomes.clear()
        self.pending_docs.clear()
        self.pending_identities.clear()
        self.seen.clear()
        self.last_flush = time.monotonic()


def _file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the index file, None when it is gone."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
