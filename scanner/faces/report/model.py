"""The content of a report as plain data (no formatting, no escaping).

Every format (HTML, JSON, CSV, PAN XML) renders the same `Report`, so the
figures in one always agree with the others; escaping is each renderer's job
because each output language has its own dangers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from scanner.core.model import plain
from scanner.engine.align import condenses

REPORT_SCHEMA_VERSION = 3  # 2: documents' common_share, the very common limit and its documents; 3: the base texts


def iso_utc(seconds: float) -> str:
    """UTC ISO 8601 to the second: what a reader of the evidence compares against `ls -l --time-style`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


@dataclass(frozen=True)
class FileEvidence:
    """What anyone needs to find the very same file again and prove it unchanged."""

    path: str
    sha256: str
    size: int
    mtime: str  # UTC ISO 8601
    mtime_ns: int
    mime: str
    status: str
    reason: str


@dataclass(frozen=True)
class CheckedDocument:
    """A document checked against the index (`--check FILE`); it need not be indexed."""

    path: str
    sha256: str
    size: int
    mtime_ns: int
    text: str = field(repr=False)
    mime: str = ""
    ocr: bool = False  # its text was read from images by OCR


@dataclass(frozen=True)
class Selection:
    """What the report covers: the whole index, or one checked document; thresholds override the index's.

    `min_words` overrides the shortest passage the index's passage pairs count (`Params.passage_words`);
    `min_share` keeps only the documents, and the passages pairs, with at least that share of a document
    found elsewhere (`--min-words`, `--min-share`).
    """

    check: CheckedDocument | None = None
    threshold: float | None = None
    min_containment: float | None = None
    min_words: int | None = None
    min_share: float = 0.0
    semantic: Any = None  # the semantic pass's sentence model for what the report aligns itself (None: none)


@dataclass(frozen=True)
class Side:
    path: str
    sha256: str
    doc_id: int | None  # None: the checked document, not in the index
    # its text was read from images by OCR (a scanned page, a photo): its passages quote what the OCR read,
    # which may differ from the page, so every format says so
    ocr: bool = False


PASSAGE_KINDS = ("verbatim", "reworded", "semantic")


@dataclass(frozen=True)
class PairPassage:
    """Shared text: [start, end) character offsets into each side's extracted text.

    `kind` says how it was found, so no format shows a reworded or semantic passage as a verbatim copy:
    "verbatim" (runs of the same words, perhaps bridging small edits), "reworded" (sentences that say the same
    in other words, or a summary condensing much longer text) or "semantic" (sentences a sentence model finds
    alike in meaning, with few words in common); a semantic passage carries its `similarity` (the sentences'
    mean centred cosine, in [0, 1]).
    """

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    # the whole texts of A and B, shared by every passage of theirs: a passage's text is cut out when read, so
    # a report of 150,000 pairs holds each document's text once, not a copy of each passage (7 GB of them)
    text_of_a: str = field(repr=False)
    text_of_b: str = field(repr=False)
    kind: str = "verbatim"  # one of PASSAGE_KINDS
    similarity: float | None = None  # of a semantic passage; None for the other kinds (and left out of JSON)
    # where in A (B) it lies when not in the body a reader sees ("a comment", "hidden text"...; "" in the body)
    found_in_a: str = ""
    found_in_b: str = ""
    plain_fields: ClassVar[tuple[str, ...]] = ("a_start", "a_end", "b_start", "b_end", "text", "text_b", "kind",
                                               "similarity", "found_in_a", "found_in_b")

    @property
    def text(self) -> str:
        """The passage as it stands in A."""
        return self.text_of_a[self.a_start:self.a_end]

    @property
    def text_b(self) -> str:
        """The passage as it stands in B."""
        return self.text_of_b[self.b_start:self.b_end]

    @property
    def condenses(self) -> bool:
        """A summary: one side spans the aligner's summary ratio of the other's characters or more."""
        return condenses(self.a_end - self.a_start, self.b_end - self.b_start)


@dataclass(frozen=True)
class Pair:
    """Two documents and what they share.

    Kinds: "identical" (same SHA-256), "near-duplicate" and "containment" (the index's findings),
    "check" (a match of the checked document), "passages" (MOSS's line: documents sharing passages of the
    minimum length that no other kind reports; B is the side the passages make up more of).
    """

    kind: str  # "identical" | "near-duplicate" | "containment" | "check" | "passages"
    a: Side
    b: Side
    resemblance: float  # NaN when it could not be computed
    containment_a_in_b: float
    containment_b_in_a: float
    edit_distance_estimate: int | None  # Coates' estimate, in characters
    measure: str  # "exact" (full shingle sets of the stored texts) or "estimate" (sketches only)
    passages: tuple[PairPassage, ...] = ()
    shared_words: int | None = None  # "passages" pairs: words shared, on the side holding fewer (their rank)
    # 95 % half-widths of the three measures: 0 when measured exactly, the sketches' sampling error when
    # estimated (NaN when the measure is NaN)
    resemblance_error: float = 0.0
    containment_a_in_b_error: float = 0.0
    containment_b_in_a_error: float = 0.0

    @property
    def reworded(self) -> int:
        """Passages found from reworded sentences rather than verbatim runs."""
        return sum(p.kind == "reworded" for p in self.passages)

    @property
    def semantic(self) -> int:
        """Passages found alike in meaning by the sentence model, with few words in common."""
        return sum(p.kind == "semantic" for p in self.passages)

    @property
    def score(self) -> float:
        """The highest of the three similarity values: what makes the pair suspect."""
        values = [v for v in (self.resemblance, self.containment_a_in_b, self.containment_b_in_a)
                  if not math.isnan(v)]
        return max(values, default=0.0)


@dataclass(frozen=True)
class SourceShare:
    path: str
    sha256: str
    share: float  # of the document's tokens found in this source


@dataclass(frozen=True)
class DocumentShare:
    """The line teachers know from similarity reports: x % of this document is found in n sources."""

    path: str
    sha256: str
    share: float  # of the document's tokens inside some shared passage
    sources: int
    by_source: tuple[SourceShare, ...] = ()
    common_share: float = 0.0  # of its fingerprints, those too common to pair (in no share; Findings.common_note)


@dataclass(frozen=True)
class ClusterInfo:
    id: int
    kind: str  # "identical" | "lexical" | "near-duplicate"
    min_resemblance: float | None
    members: tuple[Side, ...]
    min_resemblance_error: float | None = None  # its 95 % half-width (a sketch estimate)


@dataclass(frozen=True)
class Report:
    schema_version: int
    tool: str
    version: str
    generated_at: str
    index: str
    command: str
    guarantee: str
    params: dict[str, Any]
    selection: dict[str, Any]
    summary: dict[str, int]
    files: tuple[FileEvidence, ...]
    clusters: tuple[ClusterInfo, ...]
    pairs: tuple[Pair, ...]
    documents: tuple[DocumentShare, ...]
    texts: dict[str, str] = field(default_factory=dict, repr=False)  # sha256 -> extracted text, for context

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types; NaN (a value that could not be computed) becomes null. A passage has a
        "similarity" only when it is semantic, and a "found_in_a" ("_b") only when it lies outside that side's
        body."""
        return {key: list(value) if isinstance(value, Iterator) else value for key, value in self.json_fields()}

    def json_fields(self) -> Iterator[tuple[str, Any]]:
        """`to_json`'s fields in order, a list field as an iterator of its items made one at a time: a
        renderer that writes each item as it comes never holds the plain copy of a large report whole."""
        for record_field in fields(self):
            name = record_field.name
            if name == "texts":
                continue
            value = getattr(self, name)
            if isinstance(value, tuple):
                yield name, (_plain_item(item, name) for item in value)
            else:
                yield name, _no_nan(plain(value))


def _plain_item(item: Any, field_name: str) -> Any:
    data = plain(item)
    if field_name == "pairs":
        for passage in data["passages"]:
            if passage.get("similarity") is None:
                passage.pop("similarity", None)
            for side in ("found_in_a", "found_in_b"):  # only where a passage lies outside a body
                if not passage.get(side):
                    passage.pop(side, None)
    return _no_nan(data)


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value
