"""The allow list: text that must never alert (licences, legal notices, templates, passages a reviewer allowed).

It is an index of its own (`protected.allow.db` beside `protected.db` by default), built with the protected
index's parameters, so a watched file's passages found in it are masked before matching, exactly as
`check --exclude-index` masks boilerplate.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass

from scanner.core.config import Params
from scanner.core.model import Extracted, FileRecord, TextStatus
from scanner.index.store import Index
from scanner.services.ingest import outcome_from, write_checked_file


def allow_index_path(index_path: str) -> str:
    """Where an index's allow list lives: `protected.allow.db` beside `protected.db` (`scanner allow` writes
    it, `scanner watch` and the TUI read it)."""
    root, ext = os.path.splitext(index_path)
    return f"{root}.allow{ext or '.db'}"


def existing_allow_index(index_path: str) -> str | None:
    """The allow list of `index_path` when one was made, else None."""
    path = allow_index_path(index_path)
    return path if os.path.exists(path) else None


@dataclass(frozen=True)
class Allowed:
    """What `allow_text` added: the allow list's name for it, its words, and whether it was there already."""

    label: str
    sha256: str
    words: int
    already: bool


def allow_text(allow_path: str, params: Params, text: str, label: str) -> Allowed:
    """Add `text` to the allow list at `allow_path` (created with `params` when missing) under `label`."""
    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    with Index.open(allow_path, readonly=False, params=params) as allow:
        already = allow.doc_id_for_sha256(sha) is not None
        record = FileRecord(path=label, size=len(data), mtime_ns=time.time_ns(), sha256=sha, mime="text/plain")
        outcome = outcome_from(record, Extracted(text=text, extractor="allow", status=TextStatus.OK), params,
                               store_text=True)
        if not already:
            write_checked_file(allow, outcome, real_path="")
    return Allowed(label, sha, len(text.split()), already)
