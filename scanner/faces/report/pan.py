"""PAN text-alignment XML: one file per suspicious document, scorable with PAN's own tools.

PAN's format (pan13 text alignment):
`<document reference="susp.txt"><feature name="detected-plagiarism" this_offset=".." this_length=".."
source_reference="src.txt" source_offset=".." source_length=".."/></document>`, offsets and lengths in
characters of the texts. Ours are characters of the extracted text, which for UTF-8 plain text with \\n
line ends (PAN's corpora) is the file itself.

File names come from document names, which are hostile: `safe_name` reduces
them to a plain base name and `safe_target` (output.py) refuses anything that could
leave the output folder.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import PurePosixPath, PureWindowsPath

from scanner.faces.report.model import Pair, Report
from scanner.faces.report.output import safe_target  # noqa: F401  (named here by callers of the PAN writer)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_XML_INVALID = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MAX_STEM = 120


def base_name(path: str) -> str:
    """The last component of a POSIX or Windows path, as PAN's `reference` names a document."""
    return PureWindowsPath(PurePosixPath(path).name).name


def xml_text(value: str) -> str:
    """XML 1.0 cannot carry control characters or lone surrogates (paths may hold them): U+FFFD instead."""
    return _XML_INVALID.sub("\ufffd", value)


def safe_name(path: str, taken: set[str], suffix: str = ".xml") -> str:
    """A file name derived from a document's name that stays in the output folder, unique within `taken`.

    `suspicious-document00044.txt` becomes `suspicious-document00044.xml`, PAN's own naming.
    """
    stem = base_name(path.replace("\x00", "_"))
    stem = stem.rsplit(".", 1)[0] if "." in stem.strip(".") else stem
    stem = _UNSAFE.sub("_", stem).strip("._-")[:MAX_STEM] or "document"
    name, number = f"{stem}{suffix}", 1
    while name.lower() in taken:  # lower(): case-insensitive file systems would merge two names
        number += 1
        name = f"{stem}-{number}{suffix}"
    taken.add(name.lower())
    return name


def _suspicious_side(pair: Pair) -> bool:
    """True when A is the suspicious document: the checked file; else B, which took the text in
    (a containment's container; for a "passages" pair the one the passages make up more of, as the builder
    orients it; for a near-duplicate the choice is arbitrary but stable). Reworded and semantic passages are
    detections too (PAN's format has no field for a passage's kind and claims no verbatim copy): PAN's
    obfuscated cases are reworded, its summary cases say the same in other words."""
    return pair.kind == "check"


def render_pan(report: Report) -> dict[str, str]:
    """{file name: XML} with one file per suspicious document that has passages."""
    by_suspicious: dict[tuple[str, str], list[Pair]] = {}
    for pair in report.pairs:
        if pair.kind == "identical" or not pair.passages:
            continue
        suspicious = pair.a if _suspicious_side(pair) else pair.b
        by_suspicious.setdefault((suspicious.path, suspicious.sha256), []).append(pair)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for (path, _), pairs in sorted(by_suspicious.items()):
        root = ET.Element("document", reference=xml_text(base_name(path)))
        features = []
        for pair in pairs:
            this_is_a = _suspicious_side(pair)
            source = pair.b if this_is_a else pair.a
            for p in pair.passages:
                this = (p.a_start, p.a_end) if this_is_a else (p.b_start, p.b_end)
                other = (p.b_start, p.b_end) if this_is_a else (p.a_start, p.a_end)
                features.append((this[0], base_name(source.path), other[0], this[1] - this[0], other[1] - other[0]))
        for this_offset, source_name, source_offset, this_length, source_length in sorted(features):
            ET.SubElement(root, "feature", {
                "name": "detected-plagiarism",
                "this_offset": str(this_offset), "this_length": str(this_length),
                "source_reference": xml_text(source_name),
                "source_offset": str(source_offset), "source_length": str(source_length)})
        ET.indent(root)
        out[safe_name(path, taken)] = ET.tostring(root, encoding="unicode") + "\n"
    return out
