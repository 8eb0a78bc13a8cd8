"""PowerPoint 97-2003 presentations (.ppt): the text atoms of the "PowerPoint Document" stream ([MS-PPT]).

The stream is a tree of records, each an 8-byte header (version and instance, type, length) then its data,
a container's data being its child records. Slide text is held in text atoms: `TextCharsAtom` (UTF-16LE)
and `TextBytesAtom` (one byte a character, the low byte of UTF-16). Where an atom sits says what it is:
under the slide list (`SlideListWithText`, instance 0) or a slide's drawing, slide text; under the notes
list (instance 2) or a `Notes` container, speaker notes; under the masters' list (instance 1) or a
`MainMaster`, the notes master (a `Notes` container whose `NotesAtom` names no slide) or the handout master, the
masters' placeholder prompts ("Click to edit Master title style", "Second level"...), the same words in every
presentation, which are left out. Before session 30 these files were `unsupported`, read nowhere. The walk is
iterative and stops, as `corrupt`, at a record running past its container.
"""

from __future__ import annotations

import struct

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl
from scanner_plugins._ole import open_compound_file, read_stream

NAME = "ppt"
MIMES = ("application/vnd.ms-powerpoint",)
STREAM = "PowerPoint Document"
_HEADER = struct.Struct("<HHI")  # version and instance, type, length
_CONTAINER_VERSION = 0xF
_DOCUMENT, _SLIDE, _NOTES, _NOTES_ATOM, _MAIN_MASTER, _HANDOUT = 0x03E8, 0x03EE, 0x03F0, 0x03F1, 0x03F8, 0x0FC9
_SLIDE_LIST = 0x0FF0  # SlideListWithText: instance 0 slides, 1 masters, 2 notes
_TEXT_CHARS, _TEXT_BYTES = 0x0FA0, 0x0FA8
_LINE_BREAKS = str.maketrans({"\r": "\n", "\x0b": "\n"})


def _place(record_type: int, instance: int, outer: str) -> str:
    """"slides", "notes" or "masters": what a text atom inside this container is (`outer`: what it is inside
    the container's own, when this one does not say)."""
    if record_type in (_MAIN_MASTER, _HANDOUT) or (record_type == _SLIDE_LIST and instance == 1):
        return "masters"
    if record_type == _NOTES or (record_type == _SLIDE_LIST and instance == 2):
        return "notes"
    if record_type in (_SLIDE, _SLIDE_LIST, _DOCUMENT):
        return "slides"
    return outer


def _is_notes_master(stream: bytes, start: int, end: int) -> bool:
    """Whether the Notes container whose children lie in [start, end) is the notes master: its NotesAtom, the
    first child, names no slide (slideIdRef 0)."""
    if start + _HEADER.size + 4 > end:
        return False
    _, child_type, _ = _HEADER.unpack_from(stream, start)
    return child_type == _NOTES_ATOM and struct.unpack_from("<I", stream, start + _HEADER.size)[0] == 0


def text_atoms(stream: bytes, max_chars: int) -> dict[str, list[str]]:
    """The stream's text atoms by place (`_place`), in stream order, until `max_chars` characters."""
    found: dict[str, list[str]] = {"slides": [], "notes": [], "masters": []}
    ends: list[int] = [len(stream)]  # where each open container ends
    places: list[str] = ["slides"]  # what a text atom inside each open container is
    position = chars = 0
    while position + _HEADER.size <= ends[-1] and chars < max_chars:
        version_instance, record_type, length = _HEADER.unpack_from(stream, position)
        start, end = position + _HEADER.size, position + _HEADER.size + length
        if end > ends[-1]:
            raise ExtractionError(f"record 0x{record_type:04X} at byte {position} runs past its container",
                                  status="corrupt")
        if version_instance & 0xF == _CONTAINER_VERSION:
            if record_type == _NOTES and _is_notes_master(stream, start, end):
                record_type = _MAIN_MASTER
            places.append(_place(record_type, version_instance >> 4, places[-1]))
            ends.append(end)
            position = start
        else:
            if record_type in (_TEXT_CHARS, _TEXT_BYTES):
                body = stream[start:end]
                text = body.decode("utf-16-le", errors="replace") if record_type == _TEXT_CHARS \
                    else body.decode("latin-1")
                found[places[-1]].append(text.translate(_LINE_BREAKS).strip())
                chars += len(text)
            position = end
        while len(ends) > 1 and position >= ends[-1]:  # the containers that end here
            ends.pop()
            places.pop()
    return found


def extract_ppt(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """A presentation's slide text, then its speaker notes as a marked region; masters left out."""
    ole = open_compound_file(data, "PPT")
    try:
        if ole.exists("EncryptedSummary"):
            raise ExtractionError("encrypted PPT: a password is needed", status="encrypted")
        if not ole.exists(STREAM):
            raise ExtractionError(f"not a PowerPoint presentation: no {STREAM!r} stream", status="corrupt")
        stream = read_stream(ole, STREAM, len(data), "PPT")
    finally:
        ole.close()
    found = text_atoms(stream, limits.max_chars)
    body = "\n\n".join(text for text in found["slides"] if text)
    notes = "\n\n".join(text for text in found["notes"] if text)
    meta = {"text_atoms": str(sum(len(texts) for texts in found.values()))}
    return Extracted(text=body, extractor=NAME, meta=meta).with_regions([("the speaker notes", notes)])


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_ppt)]
