"""Planted leaks through the real CLI (issue 15): the fast part of bench/eval_evasion.py.

A 200-word excerpt of a protected text (the Declaration of Independence from sample_corpus, or
generated prose) is planted in unrelated generated prose inside carriers of every family (text,
HTML, PDF, office containers, e-mail) or changed by an evasion trick; `scanner check --json` against
an index of the protected texts must name the source with passages covering more than 50 of its
words. The same carriers around unindexed words must not. One `scan` and one `check` for all cases.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from carriers import (
    CARRIERS,
    FOUND_WORDS,
    TRICKS,
    covered_words,
    excerpt,
    found_words,
    trick_carrier,
)
from clirun import REPO, run_cli
from corpus import prose

from scanner_plugins.doc import antiword_path
from scanner_plugins.libarchive_formats import libarchive_module
from scanner_plugins.ocr import tesseract_version

# Cases that pass on today's code (commit 3646c74), two variants each.
CARRIER_CASES = ("md", "noext", "csv", "json", "xml", "html-body", "html-table", "html-hidden", "pdf", "docx",
                 "odt", "epub", "eml-plain", "eml-base64", "txt-markup", "html-nav", "html-footer", "html-aside",
                 "html-comment", "html-noscript", "html-unclosed-script", "eml-attachment", "zip", "tar-gz", "7z",
                 "mbox", "eml-docx", "zip-in-eml", "pptx", "xlsx", "ods", "odp", "rtf", "msg", "msg-attachment",
                 # session 29: text out of the body's flow, or deleted, that a reader of the file still has
                 "docx-textbox", "docx-comment", "docx-header", "docx-deleted", "docx-hidden", "odt-comment",
                 "odt-deleted", "odt-header", "pdf-note", "pdf-form", "rtf-side",
                 "eml-html-alternative", "docx-embedded", "pdf-attachment",
                 # session 30: a picture's alternative text; Excel and PowerPoint 97-2003
                 "docx-alt-text", "xls", "ppt",
                 # session 31: Jupyter notebooks, the leak in a cell as words or as JSON escapes; JSON escapes;
                 # a diagram's text box; LibreOffice Draw and Visio drawings, ODF templates; a LaTeX report
                 "ipynb", "ipynb-escaped", "json-escaped", "svg", "odg", "ott", "tex", "vsdx",
                 # session 32: a document printed to XPS
                 "xps",
                 # session 33: the document's properties (comments, a custom property, a PDF's subject)
                 "docx-properties", "odt-properties", "pdf-properties",
                 # session 34: a picture's metadata (EXIF, a PNG text chunk, XMP in a report's photograph)
                 "jpeg-exif", "png-text", "docx-picture-metadata", "pdf-xmp",
                 # Outlook's rich-text body kept only compressed; winmail.dat (TNEF) in a mail to another program
                 "msg-rtf", "eml-winmail",
                 # a tree packed with Zstandard; an Apple Mail message file
                 "tar-zst", "emlx",
                 # a crawl of a site kept as a web archive
                 "warc",
                 # session 36: an Outlook data file, the leak in a message's body or in its attachment; the
                 # body of a mail an Outlook item forwards as an attachment
                 "pst", "pst-attachment", "msg-forwarded",
                 # session 36: a phone's chat store (SQLite), the leak pasted into a message, in the database or
                 # in its write-ahead log alone
                 "sqlite", "sqlite-wal",
                 # session 36: an Apple Pages document (Snappy-compressed protocol buffers in a ZIP); a phone's
                 # backup (adb backup) holding a chat database
                 "pages", "android-backup")
# read by optional tools: listed in the test only where the tool is installed (bench/eval_evasion.py runs all)
OCR = tesseract_version() is not None
OPTIONAL = {"doc": antiword_path() is not None, "png": OCR, "scanned-pdf": OCR,
            # session 30: a screenshot of the leak in an office document, a PDF, a saved page or an RTF document
            "docx-screenshot": OCR, "pptx-screenshot": OCR, "odt-screenshot": OCR, "pdf-screenshot": OCR,
            "html-screenshot": OCR, "rtf-screenshot": OCR, "ppt-screenshot": OCR,
            "doc-screenshot": OCR and antiword_path() is not None, "epub-scanned": OCR,
            # session 31: a screenshot pasted into a notebook's cell
            "ipynb-screenshot": OCR,
            # session 33: a member of a RAR archive (libarchive)
            "rar": libarchive_module() is not None,
            # session 34: a page photographed with a phone, saved as HEIC
            "heic": OCR}
CARRIER_CASES += tuple(kind for kind, present in OPTIONAL.items() if present)
TRICK_CASES = ("zero-width", "soft-hyphens", "nbsp", "fullwidth", "ligatures", "hyphenation", "capitals",
               "strip-punctuation",
               # look-alike letters, letters spaced apart, neighbouring words swapped (bench/eval_evasion.py
               # found all of them since issue 15; in this test since session 34)
               "cyrillic", "greek", "letter-spacing", "swap-pairs")
VARIANTS = (0, 1)
CONTROLS = ("noext", "html-body", "pdf", "docx", "eml-plain")

DECLARATION = REPO / "sample_corpus" / "originals" / "declaration-of-independence.txt"


def _protected() -> dict[str, str]:
    texts = {"declaration.txt": DECLARATION.read_text(encoding="utf-8")}
    for i in range(3):
        texts[f"protected-{i}.txt"] = prose(123_457 + i, 700)
    return texts


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict[str, tuple[str, dict]]:
    """{case: (source name, its check --json result)} for every case, from one scan and one check."""
    root = tmp_path_factory.mktemp("evasion")
    protected = _protected()
    (root / "protected").mkdir()
    for name, text in protected.items():
        (root / "protected" / name).write_text(text, encoding="utf-8")
    proc = run_cli("scan", str(root / "protected"), "--index", str(root / "p.db"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    (root / "files").mkdir()
    names = sorted(protected)
    cases: dict[str, tuple[str, Path]] = {}
    jobs = ([("carrier", kind, v) for kind in CARRIER_CASES for v in VARIANTS]
            + [("trick", kind, v) for kind in TRICK_CASES for v in VARIANTS]
            + [("control", kind, 0) for kind in CONTROLS])
    for i, (group, kind, variant) in enumerate(jobs):
        rng = random.Random(f"test {group} {kind} {variant}")
        source = names[i % len(names)]
        leak = excerpt(protected[source] if group != "control" else prose(90_001 + i, 400), rng)
        carrier = trick_carrier(kind, leak, variant) if group == "trick" else CARRIERS[kind](leak, variant)
        path = root / "files" / f"{group}-{carrier.filename}"
        path.write_bytes(carrier.data)
        cases[f"{group} {kind} {variant}"] = (source, path)
    proc = run_cli("check", *(str(path) for _, path in cases.values()), "--index", str(root / "p.db"), "--json",
                   "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    results: dict[str, dict] = {}  # a container's members are results of their own: their matches count for it
    for result in json.loads(proc.stdout)["results"]:
        name = Path(result["query"].split("!/")[0]).name
        if name in results:
            results[name]["matches"] += result["matches"]
        else:
            results[name] = {**result, "matches": list(result["matches"])}
    return {case: (source, results[path.name]) for case, (source, path) in cases.items()}


def _words(checked: dict[str, tuple[str, dict]], case: str) -> int:
    source, result = checked[case]
    kind = case.split()[1]
    # a picture's pixels hold no text but its metadata does: read in part
    expected = {"png": "ocr", "scanned-pdf": "ocr", "heic": "ocr", "jpeg-exif": "partial",
                "png-text": "partial"}.get(kind, "ok")
    assert result.get("status") == expected, result
    text = _protected()[source]
    return max((found_words(m, text) for m in result["matches"] if Path(m["path"]).name == source), default=0)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", CARRIER_CASES)
def test_leak_found_in_carrier(checked, kind: str, variant: int) -> None:
    assert _words(checked, f"carrier {kind} {variant}") > FOUND_WORDS


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("trick", TRICK_CASES)
def test_leak_found_through_trick(checked, trick: str, variant: int) -> None:
    assert _words(checked, f"trick {trick} {variant}") > FOUND_WORDS


@pytest.mark.parametrize("kind", CONTROLS)
def test_no_leak_no_alarm(checked, kind: str) -> None:
    """The same carriers around 200 words that no protected text holds: no source covers 50 words."""
    _, result = checked[f"control {kind} 0"]
    assert result.get("status") == "ok", result
    protected = _protected()
    assert all(found_words(m, protected[Path(m["path"]).name]) <= FOUND_WORDS for m in result["matches"])


def test_every_carrier_and_trick_is_accounted_for() -> None:
    """Each carrier and trick of tests/carriers.py is either tested here or read by a tool this machine lacks."""
    missing_tool = tuple(kind for kind, present in OPTIONAL.items() if not present)
    assert sorted(CARRIER_CASES + missing_tool) == sorted(CARRIERS)
    assert sorted(TRICK_CASES) == sorted(TRICKS)


def test_tricks_change_the_characters() -> None:
    leak = "The first officials, who stuffed twenty-five boxes of affidavits, left the office at seven."
    rng = random.Random(0)
    changed = {name: trick(leak, rng) for name, trick in TRICKS.items()}
    assert all(text != leak for text in changed.values()), [n for n, t in changed.items() if t == leak]
    assert changed["swap-pairs"].split()[:2] == ["first", "The"]
    assert changed["letter-spacing"].startswith("T h e   f i r s t")
    assert not set("aeopcx") & set(changed["cyrillic"])
    assert "-\n" in trick_carrier("hyphenation", excerpt(DECLARATION.read_text(encoding="utf-8"),
                                                         random.Random(1)), 0).data.decode()


def test_covered_words_counts_the_union_of_spans() -> None:
    text = "one two three four five six"
    assert covered_words(text, [(0, 7), (4, 13), (24, 27)]) == 4  # one two three ... six
    assert covered_words(text, []) == 0
