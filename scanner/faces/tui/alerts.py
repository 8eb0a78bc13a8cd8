"""The Watch tab's alerts without Textual: table rows, an alert's evidence, review writes and allowed passages.

An alert's paths, member names and passages come from watched folders, where anyone may drop a file: every
cell goes through `printable`, every text through `visible` (PairTexts), and offsets are checked before use.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scanner.core.config import Params
from scanner.core.display import printable, visible
from scanner.faces.tui.model import PairTexts, pair_texts

ALERT_COLUMNS = ("time", "severity", "file", "source", "words", "share", "review")
MIN_PATH_CELLS = 10
PATH_COLUMNS = (2, 3)  # cut to the table's width, keeping their end (the file name): the review column stays in view
REVIEW_WAIT = 3.0  # seconds a review write waits for the index's writer lock (a watch stopping: longer)
_GAP = "\n\n[…]\n\n"  # between passages shown without their document


@dataclass(frozen=True)
class AlertRow:
    """One alert group as the Watch tab keeps it (a stored alert or a live one, same fields)."""

    alert_id: int | None
    time: float
    path: str  # the first copy seen
    paths: tuple[str, ...]  # every copy
    sha256: str
    severity: str
    matches: tuple[dict[str, Any], ...]
    review: str = "new"

    @property
    def best(self) -> dict[str, Any]:
        """The match that weighs most in the severity: largest share of its protected document, then longest
        passage ({} for an alert without matches)."""
        return max(self.matches, key=lambda m: (_number(m.get("share_of_protected")),
                                                _number(m.get("longest_passage_words"))), default={})

    @property
    def longest_words(self) -> int:
        return int(max((_number(m.get("longest_passage_words")) for m in self.matches), default=0))

    @property
    def sources(self) -> tuple[str, ...]:
        """The protected documents' paths, the best match first."""
        best = self.best
        ordered = ([best] if best else []) + [m for m in self.matches if m is not best]
        return tuple(dict.fromkeys(str(m.get("path", "?")) for m in ordered))


def alert_row(alert: Any) -> AlertRow:
    """The row of a stored alert (`scanner.index.store.Alert`) or a live one (`scanner.services.watch.Alert`)."""
    alert_id = getattr(alert, "alert_id", getattr(alert, "id", None))
    paths = tuple(alert.paths) or (alert.path,)
    return AlertRow(alert_id, float(alert.time), alert.path, paths, alert.sha256,
                    printable(str(alert.severity or "low")), tuple(m for m in alert.matches if isinstance(m, dict)),
                    printable(str(getattr(alert, "review", "new"))))


def with_copies(row: AlertRow, paths: Sequence[str]) -> AlertRow:
    """`row` with more copies of its content (a follow-up's paths), each named once."""
    return replace(row, paths=tuple(dict.fromkeys((*row.paths, *paths))))


def alert_cells(row: AlertRow, widths: tuple[int, int] | None = None, short_time: bool = False) -> tuple[str, ...]:
    """The table's cells of `row`, in ALERT_COLUMNS order, every name made printable: the file ("+N copies"
    when the content was seen at more paths), the best match's protected source ("+k more" sources), its
    longest passage's words and share of the protected document. `widths`: of the two path cells (their
    start is cut), None for whole paths; `short_time`: no year (a narrow terminal)."""
    copies = f" +{len(row.paths) - 1} copies" if len(row.paths) > 1 else ""
    sources = row.sources
    more = f" +{len(sources) - 1} more" if len(sources) > 1 else ""
    file, source = printable(row.path), printable(sources[0]) if sources else ""
    if widths is not None:
        file, source = _tail(file, widths[0] - len(copies)), _tail(source, widths[1] - len(more))
    share = _number(row.best.get("share_of_protected"))
    when = time.strftime("%m-%d %H:%M" if short_time else "%Y-%m-%d %H:%M", time.localtime(row.time))
    return (when, row.severity, file + copies, source + more,
            str(row.longest_words), f"{100 * share:.1f}%", row.review)


def path_widths(cells: Sequence[tuple[str, ...]], room: int) -> tuple[int, int]:
    """How wide the file and source columns may be so the table fits `room` cells beside the other columns:
    each gets what it needs when both fit, else half the room (or what the other leaves)."""
    need = [max((len(c[i]) for c in cells), default=0) for i in PATH_COLUMNS]
    if sum(need) <= room:
        return need[0], need[1]
    half = max(room // 2, MIN_PATH_CELLS)
    first = min(need[0], max(half, room - need[1]))
    return first, max(room - first, MIN_PATH_CELLS)


def local_time(when: float) -> str:
    """An alert's time as the user's clock shows it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))


def _tail(text: str, width: int) -> str:
    """`text` in `width` characters, keeping its end (a path's file name)."""
    width = max(width, 4)
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _number(value: Any) -> float:
    """A number from an alert's JSON (hostile: it may hold anything)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


# ---- the evidence ---------------------------------------------------------------------------------------------


def watched_texts(row: AlertRow, ocr: bool = True, ocr_languages: str = "eng") -> tuple[str, dict[str, str]]:
    """The alerted content read again from the first of its copies that still holds it: (that path, texts by
    member), "" naming the file's own text and "!/name" each archive or mail member. ("", {}) when no copy
    holds the content any more.

    A copy is extracted only when its SHA-256 is the alert's: this content already went through a watch
    worker's sandbox, so reading it here costs what it cost there.
    """
    from scanner.sources.extract import ExtractLimits, extract_file
    from scanner.sources.plugins import make_plugin_manager

    for path in row.paths or (row.path,):
        try:
            if not os.path.isfile(path) or _sha256_of(path) != row.sha256:
                continue
            limits = ExtractLimits(ocr=ocr, ocr_languages=ocr_languages)  # as the watch read it
            record, extracted = extract_file(Path(path), make_plugin_manager(), limits)
        except Exception:  # noqa: BLE001 - gone or unreadable since: the next copy, else the passages alone
            continue
        if record.sha256 != row.sha256:  # written to between the two reads
            continue
        texts = {"": extracted.text}
        for member, member_extracted in extracted.members:
            if member.path.startswith(path):
                texts[member.path[len(path):]] = member_extracted.text
        return path, texts
    return "", {}


def _sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _member_key(row: AlertRow, member: str) -> str:
    """A match's member name ("PATH!/name", named after the alert's first path) as `watched_texts` keys it."""
    from scanner.sources.crawl import printable_path

    shown = printable_path(row.path)
    return member[len(shown):] if member.startswith(shown) else member


@dataclass(frozen=True)
class _Shared:
    """A passage of an alert's match, offsets checked to be numbers."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    text: str
    kind: str
    similarity: float | None = None  # of a semantic passage (alike in meaning, never a verbatim copy)


def _similarity(value: object) -> float | None:
    """A semantic passage's similarity as the alert stored it: a number in [0, 1], else none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return None


def _passages(match: dict[str, Any]) -> list[_Shared]:
    out = []
    for p in match.get("passages", ()):
        if not isinstance(p, dict):
            continue
        spans = [p.get(k) for k in ("query_start", "query_end", "doc_start", "doc_end")]
        if not all(isinstance(v, int) and v >= 0 for v in spans):
            continue
        a_start, a_end, b_start, b_end = (int(v) for v in spans if isinstance(v, int))
        out.append(_Shared(a_start, a_end, b_start, b_end, str(p.get("text", "")), str(p.get("kind", "verbatim")),
                           _similarity(p.get("similarity"))))
    return out


def _fits(text: str | None, spans: Sequence[tuple[int, int]]) -> bool:
    return text is not None and all(start <= end <= len(text) for start, end in spans)


def _joined(parts: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Passages shown without their document: one after another, with their spans in the joined text."""
    spans, pos = [], 0
    for part in parts:
        spans.append((pos, pos + len(part)))
        pos += len(part) + len(_GAP)
    return _GAP.join(parts), spans


def evidence_pairs(index: Any, params: Params, row: AlertRow, path: str, texts: dict[str, str]) -> list[PairTexts]:
    """Each match of `row` as a pair view: the watched file (A, or its member) beside the protected document (B)
    with the alert's passages, best match first; `path` and `texts` from `watched_texts`.

    A side whose text is gone (the file deleted or changed, an index scanned with --no-text) shows the
    passages' own text, one after another.
    """
    best = row.best
    matches = sorted(row.matches, key=lambda m: m is not best)
    pairs = []
    for number, match in enumerate(matches, 1):
        shared = _passages(match)
        member = str(match.get("member", ""))
        text_a = texts.get(_member_key(row, member) if member else "")
        doc_id = index.doc_id_for_sha256(str(match.get("sha256", "")))
        text_b = index.text(doc_id) if doc_id is not None else None
        title_a = (path or row.path) + (f" » member {_member_key(row, member).lstrip('!/')}" if member else "")
        title_b = str(match.get("path", "?"))
        full_a = _fits(text_a, [(p.a_start, p.a_end) for p in shared])
        full_b = _fits(text_b, [(p.b_start, p.b_end) for p in shared])
        if full_a and full_b and text_a is not None and text_b is not None:
            pair = pair_texts(text_a, text_b, title_a, title_b, params, tuple(shared),
                              base=index.base.prepared(params))
        else:
            quoted = [p.text for p in shared]
            joined, spans = _joined(quoted)
            if full_a and text_a is not None:
                a_text, a_spans = text_a, [(p.a_start, p.a_end) for p in shared]
            else:
                a_text, a_spans = joined, spans
                title_a += " (gone or changed: its passages only)"
            if full_b and text_b is not None:
                b_text, b_spans = text_b, [(p.b_start, p.b_end) for p in shared]
            else:
                b_text, b_spans = joined, spans
                title_b += " (text not stored: the passages only)"
            pair = PairTexts(printable(title_a), printable(title_b), visible(a_text), visible(b_text),
                             tuple((a0, a1, b0, b1) for (a0, a1), (b0, b1) in zip(a_spans, b_spans)),
                             {"passages": str(len(shared))}, (), tuple(p.kind for p in shared), True,
                             tuple(p.similarity for p in shared))
        rules = ", ".join(str(r) for r in match.get("rules", ()) if isinstance(r, str))
        metrics = {"severity": row.severity, "source": f"{number}/{len(matches)}", "rules": printable(rules),
                   "share of protected": f"{100 * _number(match.get('share_of_protected')):.1f}%",
                   "longest passage": f"{int(_number(match.get('longest_passage_words')))} words", **pair.metrics}
        pairs.append(replace(pair, metrics=metrics))
    return pairs


# ---- review ---------------------------------------------------------------------------------------------------

_WRITES = threading.Lock()  # one review write at a time: each takes the index's (or the allow list's) writer lock


def write_review(index_path: str, alert_id: int, review: str, watcher: Any = None, wait: float = REVIEW_WAIT) -> str:
    """Keep an alert's review state in the index: "queued" when a running `watcher` (the index's only writer
    while it runs) takes it, "saved" when written here with a short-lived writer, waiting up to `wait` s for
    the writer lock (a watch that is stopping still holds it).

    Raises:
        IndexLockedError: another process (a scan, `scanner watch`) writes the index.
    """
    from scanner.core.errors import IndexLockedError
    from scanner.index import Index

    if watcher is not None and watcher.review(alert_id, review):
        return "queued"
    deadline = time.monotonic() + wait
    with _WRITES:
        while True:
            try:
                with Index.open(index_path, readonly=False) as index:
                    index.set_alert_review(alert_id, review)
                return "saved"
            except IndexLockedError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)


def passages_to_allow(index: Any, row: AlertRow) -> list[tuple[str, str]]:
    """(text, label) of every passage of every match of `row`, as the protected document has it (the
    alert's own quote when its text is not stored), each text once."""
    out: dict[str, str] = {}
    for match in row.matches:
        doc_id = index.doc_id_for_sha256(str(match.get("sha256", "")))
        text = index.text(doc_id) if doc_id is not None else None
        for p in _passages(match):
            quote = text[p.b_start:p.b_end] if _fits(text, [(p.b_start, p.b_end)]) and text else p.text
            if quote.strip():
                out.setdefault(quote, f"alert {row.alert_id}: {match.get('path', '?')} [{p.b_start}:{p.b_end}]")
    return list(out.items())


def allow_list_path(index_path: str) -> str:
    """The index's allow list (`scanner.services.watch.allow.allow_index_path`)."""
    from scanner.services.watch.allow import allow_index_path

    return allow_index_path(index_path)


def allow_passages(allow_path: str, params: Params, passages: Sequence[tuple[str, str]]) -> list[Any]:
    """Add each (text, label) to the allow list at `allow_path`; returns `allow_text`'s answers."""
    from scanner.services.watch.allow import allow_text

    with _WRITES:
        return [allow_text(allow_path, params, text, label) for text, label in passages]
