"""Text extraction: MIME detection by content (`routing`), then the best plugin for that MIME,
then a check that no text was dropped silently (`loss`).

`extract_bytes` never raises for bad input: every failure becomes an
`Extracted` with a status and a one-line reason, because one hostile file
must not stop a scan. `extract_file` reads the evidence once, read-only,
and names it by SHA-256, size and mtime.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.core.display import one_line
from scanner.core.errors import ExtractionError, InputError
from scanner.core.model import Extracted, FileRecord, TextStatus
from scanner.sources.extract.carve import carvable, carve_text
from scanner.sources.extract.containers import Opener, Spill, open_container
from scanner.sources.extract.evidence import Evidence, open_readonly, read_evidence
from scanner.sources.extract.loss import checked, is_text_like
from scanner.sources.extract.routing import detect_mime, looks_like_text
from scanner.sources.limits import ExtractLimits, decrypted

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    import pluggy

    from scanner.sources.plugins import Extractor, Unpacker

__all__ = [
    "ExtractLimits",
    "detect_mime",
    "extract_bytes",
    "extract_evidence",
    "extract_file",
    "extract_or_open",
    "extract_text",
    "failed",
]

DEFAULT_LIMITS = ExtractLimits()
_FALLBACK_STATUSES = (TextStatus.CORRUPT, TextStatus.ERROR)
_CHECKED_STATUSES = (TextStatus.OK, TextStatus.EMPTY)  # what the loss check may turn into PARTIAL
_AS_TEXT = "text/plain"
ENCRYPTED_OFFICE = "application/encrypted"  # libmagic's type for an OLE2 EncryptedPackage (DOCX, XLSX, PPTX)


def failed(status: TextStatus, reason: str, extractor: str = "") -> Extracted:
    """An empty result carrying why there is no text."""
    return Extracted(text="", extractor=extractor, status=status, reason=one_line(reason))


def _status_of(exc: ExtractionError) -> TextStatus:
    try:
        return TextStatus(exc.status)
    except ValueError:
        return TextStatus.ERROR


def _run(extractor: "Extractor", data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """One extractor on one input; exceptions become statuses, output is normalised."""
    return _normalised(lambda: extractor.extract(data, mime, limits), extractor.name, limits)


def _normalised(read: "Callable[[], Extracted]", name: str, limits: ExtractLimits) -> Extracted:
    """An extractor's reading (`read()`: of bytes, or of a file where it lies): its exceptions become
    statuses, its output normalised."""
    try:
        result = read()
    except ExtractionError as exc:
        return failed(_status_of(exc), exc.reason, name)
    except RecursionError:
        return failed(TextStatus.CORRUPT, "structure nested too deeply", name)
    except MemoryError:
        return failed(TextStatus.TOO_LARGE, "out of memory while extracting", name)
    except Exception as exc:  # noqa: BLE001 - hostile input may break any parser
        return failed(TextStatus.CORRUPT, f"{type(exc).__name__}: {exc}", name)
    if not result.extractor:
        result = dataclasses.replace(result, extractor=name)
    if result.reason and "\n" in result.reason:
        result = dataclasses.replace(result, reason=one_line(result.reason))
    if result.status is TextStatus.OK and not result.text.strip():
        result = dataclasses.replace(result, text="", status=TextStatus.EMPTY, reason=result.reason or "no text found")
    elif len(result.text) > limits.max_chars:
        result = dataclasses.replace(
            result,
            text=result.text[: limits.max_chars],
            meta={**result.meta, "truncated": f"cut at {limits.max_chars} characters"},
            page_starts=tuple(p for p in result.page_starts if p < limits.max_chars),
        )
    if "truncated" in result.meta and result.status is TextStatus.OK:  # text left out is never silent
        cut = f"only part of the text was read: {result.meta['truncated']}"
        result = dataclasses.replace(result, status=TextStatus.PARTIAL, reason=result.reason or cut)
    return result


def _office_package(data: bytes, limits: ExtractLimits) -> bytes | Extracted:
    """The package inside a password-protected DOCX, XLSX or PPTX when a password given opens it
    (`office_crypto`), else why it stays shut."""
    from scanner.sources.extract.office_crypto import decrypt_ooxml

    try:
        inside = decrypt_ooxml(data, limits.passwords) if limits.passwords else None
    except ExtractionError as exc:
        return failed(_status_of(exc), exc.reason)
    if inside is None:
        return failed(TextStatus.ENCRYPTED, limits.locked("password-protected Office document"))
    return inside


def extract_bytes(
    data: bytes,
    mime: str,
    pm: "pluggy.PluginManager",
    limits: ExtractLimits = DEFAULT_LIMITS,
    prefer: str | None = None,
) -> Extracted:
    """Text of `data` by the best extractor for `mime` (or the `prefer`red backend).

    When that extractor reports the input corrupt or crashes, the next one
    for the same MIME is tried (pdfminer and pdfium break on different files);
    the result then says in meta["fallback_from"] which backend gave up.
    Bytes of a type no extractor reads (application/vnd.hp-hpgl...) that
    decode as text are read as text/plain (meta["read_as"]). A text-like
    input whose extractor kept less than 90 % of its words is PARTIAL, with
    its raw text after the extractor's (`loss.checked`).
    """
    from scanner.sources.plugins import candidates_for, list_extractors

    if len(data) > limits.max_bytes:
        return failed(TextStatus.TOO_LARGE, f"{len(data)} bytes > max_bytes {limits.max_bytes}")
    if not data:
        return failed(TextStatus.EMPTY, "empty file")
    if mime == ENCRYPTED_OFFICE:
        inside = _office_package(data, limits)
        return inside if isinstance(inside, Extracted) else decrypted(
            extract_bytes(inside, detect_mime(inside), pm, limits, prefer))
    extractors = list_extractors(pm)
    candidates = candidates_for(extractors, mime, prefer)
    read_as = ""
    if not candidates and looks_like_text(data):
        read_as, candidates = _AS_TEXT, candidates_for(extractors, _AS_TEXT, prefer)
    if not candidates:
        return _carved(data, mime, failed(TextStatus.UNSUPPORTED, f"no extractor for {mime}"))
    result = _first_good(candidates, data, read_as or mime, limits)
    if result.status is TextStatus.UNSUPPORTED:  # binary bytes a reader of text, or of this type, cannot read
        return _carved(data, mime, result)
    if read_as:
        result = dataclasses.replace(result, meta={**result.meta, "read_as": f"{read_as} (typed {mime})"})
    producer = next((e for e in candidates if e.name == result.extractor), None)
    if (result.status in _CHECKED_STATUSES and is_text_like(read_as or mime)
            and not (producer is not None and producer.verbatim)):
        result = checked(result, data, read_as or mime, limits.max_chars)
    return result


def _carved(data: bytes, mime: str, unsupported: Extracted) -> Extracted:
    """A file no reader reads (`unsupported` says why): the runs of its bytes that read as prose
    (`carve.carve_text`), `partial`, as all else it holds is unread; `unsupported` itself when none do, or when
    the file is a program or media (`carve.carvable`)."""
    if not carvable(mime):
        return unsupported
    carved = carve_text(data)
    if not carved.text:
        return unsupported
    runs = carved.byte_runs + carved.utf16_runs
    return Extracted(text=carved.text, extractor="strings", status=TextStatus.PARTIAL,
                     reason=f"{unsupported.reason}: {runs} runs of text carved from its bytes, the rest unread",
                     meta={"carved": f"{carved.byte_runs} runs of bytes, {carved.utf16_runs} of UTF-16 text"})


def extract_or_open(record: FileRecord, data: bytes, pm: "pluggy.PluginManager",
                    limits: ExtractLimits = DEFAULT_LIMITS, prefer: str | None = None,
                    on_member: "Callable[[str], None] | None" = None, spill: Spill | None = None) -> Extracted:
    """`extract_bytes`, or for a container (archive, mail) its own result with every member
    (`containers.open_container`): members are named `record.path!/member`. `on_member(path)` is called
    before each member is read (a scan's worker restarts its per-file clock: members are files too);
    `spill(members)` takes them a thousand or more at a time, out of the result (`Opener.spill`)."""
    from scanner.sources.plugins import list_unpackers, unpacker_for

    if record.mime == ENCRYPTED_OFFICE:  # once opened, the document's embedded files are members as in any other
        inside = _office_package(data, limits)
        if isinstance(inside, Extracted):
            return inside
        return decrypted(extract_or_open(dataclasses.replace(record, mime=detect_mime(inside)), inside, pm, limits,
                                         prefer, on_member, spill))
    unpackers = list_unpackers(pm)
    unpacker = unpacker_for(unpackers, record.mime)
    if unpacker is None:
        return extract_bytes(data, record.mime, pm, limits, prefer)
    return open_container(record, data, unpacker, _opener(pm, unpackers, limits, prefer, on_member, spill))


def _opener(pm: "pluggy.PluginManager", unpackers: "list[Unpacker]", limits: ExtractLimits, prefer: str | None,
            on_member: "Callable[[str], None] | None", spill: Spill | None) -> Opener:
    """How a container's members are read: each by the extractors or, a container too, opened in turn."""
    from scanner.sources.plugins import unpacker_for

    return Opener(extract=lambda member, mime: extract_bytes(member, mime, pm, limits, prefer), detect=detect_mime,
                  unpacker_for=lambda mime: unpacker_for(unpackers, mime), limits=limits, on_member=on_member,
                  spill=spill)


def _open_from_disk(record: FileRecord, pm: "pluggy.PluginManager", limits: ExtractLimits, prefer: str | None,
                    on_member: "Callable[[str], None] | None", spill: Spill | None) -> Extracted:
    """A file over `max_bytes`: a container whose unpacker reads a file (`Unpacker.unpack_file`: a mailbox of
    gigabytes) is opened from disk, member by member, never held whole; a text of lines (a log, a CSV
    export) is read up to the characters a text keeps (`max_chars`), whole lines, and says it is `partial`;
    any other stays `too_large`. Read after it was hashed: a file that moved in between says so (its members
    may not be what was hashed)."""
    from scanner.sources.plugins import candidates_for, list_extractors, list_unpackers, unpacker_for

    unpackers = list_unpackers(pm)
    unpacker = unpacker_for(unpackers, record.mime)
    reader = None if unpacker is not None else next(
        (e for e in candidates_for(list_extractors(pm), record.mime, prefer) if e.extract_file is not None), None)
    lines = unpacker is None and reader is None and record.mime in _TEXT_OF_LINES
    if not lines and reader is None and (unpacker is None or unpacker.unpack_file is None):
        return failed(TextStatus.TOO_LARGE, f"{record.size} bytes > max_bytes {limits.max_bytes}")
    if reader is not None and reader.extract_file is not None:  # it reads the file where it lies
        on_file = reader.extract_file
        read = _normalised(lambda: on_file(record.path, record.mime, limits), reader.name, limits)
        return dataclasses.replace(read, meta={**read.meta, "read_from_disk": f"over max_bytes {limits.max_bytes}"})
    try:
        stream = os.fdopen(open_readonly(record.path), "rb")
    except OSError as exc:
        return failed(TextStatus.ERROR, f"cannot read it again: {exc.strerror or exc}")
    with stream:
        if unpacker is not None:
            opened = open_container(record, stream, unpacker,
                                    _opener(pm, unpackers, limits, prefer, on_member, spill))
        else:
            opened = _first_lines(stream, record, pm, limits, prefer)
        now = os.fstat(stream.fileno())
    if (now.st_size, now.st_mtime_ns) != (record.size, record.mtime_ns):
        warning = "file changed between its hashing and its reading; its members may not be what was hashed"
        opened = dataclasses.replace(opened, meta={**opened.meta, "warning": warning})
    return dataclasses.replace(opened, meta={**opened.meta, "read_from_disk": f"over max_bytes {limits.max_bytes}"})


# line-based texts whose first lines read alone are what they hold (a structure cut short is not: HTML, XML, JSON)
_TEXT_OF_LINES = frozenset({"text/plain", "text/csv", "text/tab-separated-values", "application/x-ndjson"})


def _first_lines(stream: "BinaryIO", record: FileRecord, pm: "pluggy.PluginManager", limits: ExtractLimits,
                 prefer: str | None) -> Extracted:
    """The first lines of a text over `max_bytes`, as many as a text keeps (`max_chars` characters; at most
    `max_bytes`), `partial` and saying how much of the file they are."""
    head = stream.read(min(limits.max_bytes, 4 * limits.max_chars))
    whole_lines = head[:head.rfind(b"\n") + 1] or head
    result = extract_bytes(whole_lines, record.mime, pm, limits, prefer)
    if not result.status.has_text:
        return result
    read = f"the first {len(whole_lines)} of {record.size} bytes (max_bytes {limits.max_bytes})"
    reason = "; ".join(why for why in (f"only part of the file was read: {read}", result.reason) if why)
    return dataclasses.replace(result, status=TextStatus.PARTIAL, reason=reason,
                               meta={**result.meta, "truncated": read})


def _first_good(candidates: "list[Extractor]", data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    first: Extracted | None = None
    for extractor in candidates:
        result = _run(extractor, data, mime, limits)
        if first is None:
            first = result
            if result.status not in _FALLBACK_STATUSES:
                return result
        elif result.status is TextStatus.OK:
            fallback = f"{first.extractor}: {first.status.value}: {first.reason}"
            return dataclasses.replace(result, meta={**result.meta, "fallback_from": fallback})
    assert first is not None
    return first


def extract_file(
    path: Path | str,
    pm: "pluggy.PluginManager",
    limits: ExtractLimits = DEFAULT_LIMITS,
    prefer: str | None = None,
) -> tuple[FileRecord, Extracted]:
    """Read `path` once (read-only), name it, detect its MIME by content, extract it.

    Raises:
        InputError: the file cannot be opened or read at all.
    """
    return extract_evidence(os.fspath(path), read_evidence(path, limits.max_bytes), pm, limits, prefer)


def extract_evidence(
    path: str,
    evidence: Evidence,
    pm: "pluggy.PluginManager",
    limits: ExtractLimits = DEFAULT_LIMITS,
    prefer: str | None = None,
    on_member: "Callable[[str], None] | None" = None,
    spill: Spill | None = None,
) -> tuple[FileRecord, Extracted]:
    """The record and text of a file already read: the bytes that were hashed are the bytes extracted
    (`on_member`, `spill`: as `extract_or_open`)."""
    sample = evidence.data if evidence.data is not None else evidence.head
    mime = detect_mime(sample)
    record = FileRecord(path=path, size=evidence.size, mtime_ns=evidence.mtime_ns, sha256=evidence.sha256, mime=mime)
    if evidence.data is None:
        extracted = _open_from_disk(record, pm, limits, prefer, on_member, spill)
    else:
        extracted = extract_or_open(record, evidence.data, pm, limits, prefer, on_member, spill)
    if evidence.changed:
        warning = "file changed while being read; sha256 may not match the file on disk"
        extracted = dataclasses.replace(extracted, meta={**extracted.meta, "warning": warning})
    return record, extracted


class NoTextError(InputError):
    """A file that was read but gave no text to match (encrypted, unsupported, empty...)."""

    def __init__(self, path: str, record: FileRecord, extracted: Extracted) -> None:
        self.status = TextStatus(extracted.status).value
        self.detail = f"{self.status}: {extracted.reason}" if extracted.reason else self.status
        super().__init__(f"{path}: {self.detail}")
        self.record = record
        self.extracted = extracted


def extract_text(
    path: Path | str,
    pm: "pluggy.PluginManager",
    limits: ExtractLimits = DEFAULT_LIMITS,
) -> tuple[FileRecord, Extracted]:
    """`extract_file` for a file that is to be matched: one without text is refused.

    Raises:
        InputError: the file cannot be read; NoTextError (an InputError) when it gives no text.
    """
    record, extracted = extract_file(path, pm, limits)
    if not TextStatus(extracted.status).has_text:
        raise NoTextError(os.fspath(path), record, extracted)
    return record, extracted
