"""Records that flow between layers (frozen dataclasses, no behaviour, no I/O)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# a container's member is named `container!/member` (archive members, mail attachments), as forensic suites do
MEMBER_SEPARATOR = "!/"


def disk_first(path: str) -> tuple[bool, str]:
    """Sort key: files on disk before members of containers, then by path (the first names a document)."""
    return MEMBER_SEPARATOR in path, path


class TextStatus(StrEnum):
    """What became of a file; anything but OK carries a one-line reason.

    One vocabulary for scan, check, watch, the index and reports: `has_text` says
    whether the file was sketched, `is_error` whether reading it failed (the other
    statuses are skips: a limit, an unsupported type, a file the crawl left out).
    """

    OK = "ok"
    # the extractor kept less than 90 % of the file's raw words; the raw text is indexed too
    PARTIAL = "partial"
    # the text was read from images by OCR (scanned pages, photos); the reason carries the mean confidence
    OCR = "ocr"
    TOO_SHORT = "too_short"  # text exists but has fewer than Params.min_tokens tokens
    EMPTY = "empty"  # no text at all (empty file, scanned PDF without text layer...)
    ENCRYPTED = "encrypted"
    CORRUPT = "corrupt"
    UNSUPPORTED = "unsupported"
    TOO_LARGE = "too_large"  # over a size or memory limit: not read, and said so
    TIMEOUT = "timeout"
    ERROR = "error"
    SKIPPED = "skipped"  # left out by the crawl (--max-size, not a regular file...)
    # an archive or mail store with no text of its own: its members are indexed as files `path!/member`
    CONTAINER = "container"
    STALE = "stale"  # sketched by an earlier algorithm with no stored text: read again by the next scan

    @property
    def has_text(self) -> bool:
        return self in _WITH_TEXT

    @property
    def is_error(self) -> bool:
        return self in _ERRORS


_WITH_TEXT = frozenset({TextStatus.OK, TextStatus.PARTIAL, TextStatus.OCR, TextStatus.TOO_SHORT})
_ERRORS = frozenset({TextStatus.ENCRYPTED, TextStatus.CORRUPT, TextStatus.TIMEOUT, TextStatus.ERROR})


@dataclass(frozen=True)
class FileRecord:
    """A file as found by the crawler: what evidence needs to name it."""

    path: str  # as given on the command line, joined with the relative path
    size: int
    mtime_ns: int
    sha256: str
    mime: str


@dataclass(frozen=True)
class Extracted:
    """Text drawn from a file by an extractor plugin.

    `page_starts` holds the character offset at which each page begins (PDF),
    so a passage can be cited by page.

    A PARTIAL result whose meta["truncated"] says where is the text up to that cut (a text past
    `max_chars`, a workbook past its cell cap): the rest was not read, and the status says so.
    Any other PARTIAL result's text is the extractor's text, a blank line, then the
    file's raw text (decoded; markup tags removed when that keeps at least
    90 % of its words, else verbatim): offsets into the extractor's part stay
    valid, and any passage of the file can be found. meta["raw_text_at"] is
    the offset at which the raw text begins; `reason` says how much the
    extractor kept and why.
    """

    text: str
    extractor: str
    status: TextStatus = TextStatus.OK
    reason: str = ""
    page_starts: tuple[int, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)
    # [start, end) spans of `text` that a reader does not see as the document's body, each with where it
    # was found ("an HTML comment", "<nav>"...): indexed like the rest, so a passage hidden there is found
    # and reported with its place. They follow the body text, so offsets into the body stay valid.
    regions: tuple[tuple[int, int, str], ...] = ()
    # a container's members (archives, mail attachments), every level flattened in reading order, each with
    # its own record named `container!/member`; a member's own `members` are empty (they follow it here)
    members: tuple[tuple["FileRecord", "Extracted"], ...] = ()

    @property
    def body_end(self) -> int:
        """Where the body ends (the marked regions follow it, after a blank line)."""
        return len(self.text[:self.regions[0][0]].rstrip("\n")) if self.regions else len(self.text)

    @property
    def body(self) -> str:
        """The body's text: what a reader sees as the document, without its marked regions."""
        return self.text[:self.body_end]

    @property
    def region_texts(self) -> list[tuple[str, str]]:
        """(text, place) of each marked region, in order."""
        return [(self.text[start:end], label) for start, end, label in self.regions]

    def with_regions(self, regions: list[tuple[str, str]]) -> "Extracted":
        """This text with each non-empty (label, text) of `regions` after it, a paragraph of its own and a
        marked region: what a file holds beside its body (comments, annotations, form fields...)."""
        pieces, found, length = [self.text] if self.text else [], list(self.regions), len(self.text)
        for label, piece in regions:  # joined once at the end: a PDF may bring a region a page
            if piece:
                start = length + 2 if pieces else 0
                pieces.append(piece)
                length = start + len(piece)
                found.append((start, length, label))
        return dataclasses.replace(self, text="\n\n".join(pieces), regions=tuple(found))

    def region_at(self, start: int, end: int) -> str:
        """Where the span [start, end) was found, when it lies in a marked region ("" in the body)."""
        return place_at(self.regions, start, end)

    @property
    def places(self) -> tuple[tuple[int, int, str], ...]:
        """Every span of the text that is not the body a reader sees, with where it was found: the marked
        regions, and the raw text of a file whose extractor kept too little (`meta["raw_text_at"]` on)."""
        raw_at = self.meta.get("raw_text_at")
        if raw_at is None or int(raw_at) >= len(self.text):
            return self.regions
        return (*self.regions, (int(raw_at), len(self.text), RAW_TEXT))


RAW_TEXT = "the file's raw text (its extractor dropped it)"


def place_at(places: Sequence[tuple[int, int, str]], start: int, end: int) -> str:
    """Where the span [start, end) was found, when it overlaps one of `places` ((start, end, label), in
    order); "" when it lies in the body."""
    for p_start, p_end, label in places:
        if start < p_end and end > p_start:
            return label
    return ""


@dataclass(frozen=True)
class Passage:
    """Shared text: [start, end) character spans in the query and in the document."""

    query_start: int
    query_end: int
    doc_start: int
    doc_end: int
    text: str
    found_in: str = ""  # where in the query it lies when not in its body ("an HTML comment", "<nav>"...)
    doc_found_in: str = ""  # the same in the document
    kind: str = "verbatim"  # or "reworded": sentences that say the same in other words, or a summary (pieces of a
    # much longer text, verbatim or not), never a verbatim copy; or "semantic": sentences found alike by meaning
    # (a sentence model), with few words in common
    similarity: float | None = None  # of a semantic passage: its sentences' mean centred cosine

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "query_start": self.query_start,
            "query_end": self.query_end,
            "doc_start": self.doc_start,
            "doc_end": self.doc_end,
            "text": self.text,
            "kind": self.kind,
        }
        if self.found_in:
            out["found_in"] = self.found_in
        if self.doc_found_in:
            out["doc_found_in"] = self.doc_found_in
        if self.similarity is not None:
            out["similarity"] = self.similarity
        return out


@dataclass(frozen=True)
class Match:
    """One indexed document found to resemble, contain or be contained in a query."""

    path: str
    sha256: str
    resemblance: float
    containment_query_in_doc: float
    containment_doc_in_query: float
    edit_distance_estimate: int
    passages: tuple[Passage, ...] = ()
    doc_id: int | None = None
    # what the query's passages needed to match, an evasion shown as evidence (engine.canon.Normalizations):
    # "confusables" (look-alike characters read as Latin letters), "letter_spaced" (words rejoined),
    # "invisible" (format characters inside words), "reordered" (words read with their neighbour swapped
    # back); only counts above 0
    normalizations: dict[str, int] = field(default_factory=dict, hash=False)
    # 95 % half-widths of (resemblance, query in doc, doc in query): 0 where measured on the texts, the
    # sketches' sampling error where only sketches were at hand (an index kept without its texts)
    errors: tuple[float, float, float] = (0.0, 0.0, 0.0)
    measure: str = "exact"  # "exact" (on the texts) or "estimate" (sketches: the index keeps no text of it)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "sha256": self.sha256,
            "resemblance": round(self.resemblance, 6),
            "containment_query_in_doc": round(self.containment_query_in_doc, 6),
            "containment_doc_in_query": round(self.containment_doc_in_query, 6),
            "resemblance_error": round(self.errors[0], 3),
            "containment_query_in_doc_error": round(self.errors[1], 3),
            "containment_doc_in_query_error": round(self.errors[2], 3),
            "measure": self.measure,
            "edit_distance_estimate": self.edit_distance_estimate,
            "passages": [p.to_json() for p in self.passages],
        }
        if self.normalizations:
            out["normalized"] = dict(self.normalizations)
        return out


@functools.cache
def _field_names(kind: type) -> tuple[str, ...] | None:
    """A record type's field names (None for any other type): looked up once a type, not once a value. A
    record whose plain form differs from its fields (a value derived, a reference left out) names that
    form's attributes in its `plain_fields` class variable."""
    if not dataclasses.is_dataclass(kind):
        return None
    return getattr(kind, "plain_fields", None) or tuple(f.name for f in dataclasses.fields(kind))


def plain(value: Any) -> Any:
    """Records (dataclasses) as plain dicts and lists, for JSON: what `dataclasses.asdict` gives, without its
    deep copy of every value (seconds for the findings of a large index)."""
    kind: type = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value
    names = _field_names(kind)
    if names is not None:
        return {name: plain(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
