"""Text extraction: MIME detection by content, then the best plugin for that MIME.

`extract_bytes` never raises for bad input: every failure becomes an
`Extracted` with a status and a one-line reason, because one hostile file
must not stop a scan. `extract_file` reads the evidence once, read-only,
and names it by SHA-256, size and mtime.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.core.errors import ExtractionError, InputError
from scanner.core.model import Extracted, FileRecord, TextStatus
from scanner.sources.extract.evidence import Evidence, read_evidence
from scanner.sources.limits import ExtractLimits

if TYPE_CHECKING:
    import pluggy

    from scanner.sources.plugins import Extractor

__all__ = [
    "ExtractLimits",
    "detect_mime",
    "extract_bytes",
    "extract_evidence",
    "extract_file",
    "extract_text",
    "failed",
]

DEFAULT_LIMITS = ExtractLimits()
_MAGIC_HEAD = 64 * 1024  # libmagic decides from the head; more only costs time
_SNIFF = 4096
_ZIPLIKE = {"application/zip", "application/octet-stream", "application/x-zip-compressed"}
_TEXTLIKE_APP = {
    "application/octet-stream",
    "application/javascript",
    "application/x-javascript",
    "application/json",
    "application/xml",
    "application/x-empty",
}
_HTML_RE = re.compile(rb"<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])", re.IGNORECASE)
_HEADER_RE = re.compile(rb"^[!-9;-~]+:[ \t]")
_MAIL_HEADERS = {
    b"from", b"to", b"subject", b"date", b"message-id", b"received", b"return-path",
    b"mime-version", b"content-type", b"cc", b"reply-to", b"delivered-to",
}
_FALLBACK_STATUSES = (TextStatus.CORRUPT, TextStatus.ERROR)
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def failed(status: TextStatus, reason: str, extractor: str = "") -> Extracted:
    """An empty result carrying why there is no text."""
    return Extracted(text="", extractor=extractor, status=status, reason=_one_line(reason))


def _one_line(reason: str, limit: int = 300) -> str:
    line = " ".join(reason.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _looks_like_mail(data: bytes) -> bool:
    """RFC 822 header block: every line a header or continuation, two known names."""
    block = data[:_SNIFF].replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    known = 0
    for line in block.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            continue
        if not _HEADER_RE.match(line):
            return False
        known += line.split(b":", 1)[0].lower() in _MAIL_HEADERS
    return known >= 2


def _zip_mime(data: bytes) -> str | None:
    """The OOXML/ODF/EPUB type of a ZIP, from its members (not its file name)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            if "mimetype" in names and zf.getinfo("mimetype").file_size <= 200:
                declared = zf.read("mimetype").decode("ascii", "replace").strip()
                if declared:
                    return declared
            if "word/document.xml" in names:
                return _DOCX
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError, NotImplementedError):
        return None
    return None


def _looks_like_text(data: bytes) -> bool:
    from scanner.sources.extract.encoding import decode_text

    try:
        decode_text(data[:_SNIFF])
    except ExtractionError:
        return False
    return True


def detect_mime(data: bytes) -> str:
    """MIME type from content (libmagic), refined where libmagic is known to be vague.

    ZIP containers are named by their members, HTML is recognised even when
    libmagic calls it JavaScript (pages that open with big inline scripts),
    header-led text is mail, and unknown bytes that decode as text (BOM-less
    UTF-16) are text/plain.
    """
    if not data:
        return "application/x-empty"
    import magic

    mime = (magic.from_buffer(data[:_MAGIC_HEAD], mime=True) or "application/octet-stream").lower()
    if mime in _ZIPLIKE and data.startswith(b"PK\x03\x04"):
        return _zip_mime(data) or mime
    if mime.startswith("text/") or mime in _TEXTLIKE_APP or mime == "application/xhtml+xml":
        head = data[:_SNIFF]
        if _HTML_RE.search(head):
            return "text/html"
        if mime == "text/plain" and _looks_like_mail(data):
            return "message/rfc822"
        if not mime.startswith("text/") and _looks_like_text(data):
            return "text/plain"
    return mime


def _status_of(exc: ExtractionError) -> TextStatus:
    try:
        return TextStatus(exc.status)
    except ValueError:
        return TextStatus.ERROR


def _run(extractor: "Extractor", data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """One extractor on one input; exceptions become statuses, output is normalised."""
    try:
        result = extractor.extract(data, mime, limits)
    except ExtractionError as exc:
        return failed(_status_of(exc), exc.reason, extractor.name)
    except RecursionError:
        return failed(TextStatus.CORRUPT, "structure nested too deeply", extractor.name)
    except MemoryError:
        return failed(TextStatus.TOO_LARGE, "out of memory while extracting", extractor.name)
    except Exception as exc:  # noqa: BLE001 - hostile input may break any parser
        return failed(TextStatus.CORRUPT, f"{type(exc).__name__}: {exc}", extractor.name)
    if not result.extractor:
        result = dataclasses.replace(result, extractor=extractor.name)
    if result.reason and "\n" in result.reason:
        result = dataclasses.replace(result, reason=_one_line(result.reason))
    if result.status is TextStatus.OK and not result.text.strip():
        result = dataclasses.replace(result, text="", status=TextStatus.EMPTY, reason=result.reason or "no text found")
    elif len(result.text) > limits.max_chars:
        result = dataclasses.replace(
            result,
            text=result.text[: limits.max_chars],
            meta={**result.meta, "truncated": f"cut at {limits.max_chars} characters"},
            page_starts=tuple(p for p in result.page_starts if p < limits.max_chars),
        )
    return result


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
    """
    from scanner.sources.plugins import candidates_for, list_extractors

    if len(data) > limits.max_bytes:
        return failed(TextStatus.TOO_LARGE, f"{len(data)} bytes > max_bytes {limits.max_bytes}")
    if not data:
        return failed(TextStatus.EMPTY, "empty file")
    candidates = candidates_for(list_extractors(pm), mime, prefer)
    if not candidates:
        return failed(TextStatus.UNSUPPORTED, f"no extractor for {mime}")
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
) -> tuple[FileRecord, Extracted]:
    """The record and text of a file already read: the bytes that were hashed are the bytes extracted."""
    sample = evidence.data if evidence.data is not None else evidence.head
    mime = detect_mime(sample)
    record = FileRecord(path=path, size=evidence.size, mtime_ns=evidence.mtime_ns, sha256=evidence.sha256, mime=mime)
    if evidence.data is None:
        extracted = failed(TextStatus.TOO_LARGE, f"{evidence.size} bytes > max_bytes {limits.max_bytes}")
    else:
        extracted = extract_bytes(evidence.data, mime, pm, limits, prefer)
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
