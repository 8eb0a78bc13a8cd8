"""Planted leaks (issue 15): carriers of every kind, evasion tricks, and the "found" rule.

A *leak* is a 200-word excerpt of a protected text planted inside unrelated
carrier text (generated prose, `corpus.prose`). This module builds real files
around it with the standard library alone, and changes its characters the way
someone hiding a copy would. `tests/test_evasion_carriers.py` runs a fast
subset through the real CLI; `bench/eval_evasion.py` runs them all on public
texts, beside copydetect, ssdeep and TLSH.

- `CARRIERS`: name -> `build(leak, seed) -> Carrier` (file name and bytes):
  text files (`.txt` holding markup-like words, Markdown, a file with no
  extension, CSV, JSON, JSON written as escapes, XML), an SVG diagram, a
  LaTeX report, Jupyter notebooks (the leak in a cell, written as escapes,
  or a screenshot pasted into a cell), HTML with the leak in the article, a table, the
  navigation, the footer, an aside, a comment, a noscript, a hidden element or
  after a `<script>` that is never closed, PDF (`pdfgen`), DOCX, ODT and EPUB
  (real ZIP containers), e-mail (plain, base64 body, text attachment), and
  issue 18's formats (PPTX, XLSX, ODS, ODP, ODG, Visio, an ODF template, RTF, Word 97, Outlook with the
  leak in its body or an attachment, a PNG photograph and a scanned PDF read
  by OCR), and containers whose member holds the leak (ZIP, tar.gz, 7z,
  mbox, a DOCX attached to a mail, a ZIP attached to a mail).
- `TRICKS`: name -> `apply(leak, rng) -> str`: Cyrillic and Greek look-alike
  letters, letter spacing, every pair of words swapped, zero-width characters,
  soft hyphens, no-break spaces, full-width letters, ligatures, line-end
  hyphenation, capitals, punctuation stripped.
- `found_words(match, source_text)`: the words of the protected text that a
  `check --json` match's passages cover (the rule: found when > `FOUND_WORDS`).

Everything is seeded: the same arguments give the same bytes.
"""

from __future__ import annotations

import base64
import csv
import gzip
import html
import io
import json
import random
import re
import string
import tarfile
import textwrap
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from cfbwriter import write_compound_file
from corpus import NOUNS, prose
from officegen import (
    make_odf,
    make_ppt,
    make_pptx,
    make_vsdx,
    make_xls,
    make_xlsx,
    make_xps,
    odf_paragraphs,
    relationships,
    text_shape,
    visio_shape,
    word97,
    xml_escape,
    xps_glyphs,
)
from pdfgen import (
    annotated_pdf_bytes,
    attached_pdf_bytes,
    picture_pdf_bytes,
    properties_pdf_bytes,
    text_pdf_bytes,
    xmp_pdf_bytes,
)
from rargen import make_rar
from tnefgen import tnef

LEAK_WORDS = 200  # words in a planted excerpt
FOUND_WORDS = 50  # a leak is found when the source's passages cover more words than this
FILLER_WORDS = 250  # carrier prose before and after the leak
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Carrier:
    """One carrier file: its name (with the extension that goes with its kind, or none) and bytes."""

    kind: str
    filename: str
    data: bytes


# --------------------------------------------------------------------------
# leaks and the prose around them


def excerpt(text: str, rng: random.Random, words: int = LEAK_WORDS) -> str:
    """`words` consecutive words of `text` from a random start, on one line (single spaces)."""
    tokens = text.split()
    if len(tokens) < words:
        raise ValueError(f"a text of {len(tokens)} words has no {words}-word excerpt")
    start = rng.randrange(len(tokens) - words + 1)
    return " ".join(tokens[start : start + words])


def filler(seed: int, words: int = FILLER_WORDS) -> str:
    """Unrelated English-like prose, paragraphs separated by blank lines (no trailing newline)."""
    return prose(70_001 + seed, words).strip()


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n\n") if p.strip()]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]


def _around(seed: int) -> tuple[str, str]:
    return filler(2 * seed), filler(2 * seed + 1)


def _plain(leak: str, seed: int) -> str:
    before, after = _around(seed)
    return f"{before}\n\n{leak}\n\n{after}\n"


# --------------------------------------------------------------------------
# text carriers


def txt_markup(leak: str, seed: int) -> Carrier:
    """A manual page as text: words like <script>, <style> and <head> are words here, not markup."""
    before, after = _around(seed)
    page = textwrap.dedent("""\
        GIT-CHECKOUT(1)                   Git Manual                   GIT-CHECKOUT(1)

        NAME
               git-checkout - Switch branches or restore working tree files

        SYNOPSIS
               git checkout [-q] [-f] [-m] [<branch>]
               git checkout <style> --detach [<branch>]
               git checkout [<tree-ish>] [--] <pathspec>...

        DESCRIPTION
               The page generator wraps each example in <head> and <script> elements, and a
               <style> element sets its fonts; none of them is closed on this page.

        """)
    for para in _paragraphs(before):
        page += textwrap.indent(textwrap.fill(para, 72), "       ") + "\n\n"
    page += "       git checkout <style>\n\n" + textwrap.indent(leak, "       ") + "\n\n"
    page += "OPTIONS\n       -q, --quiet\n           Quiet, suppress feedback messages. See <script> below.\n\n"
    for para in _paragraphs(after):
        page += textwrap.indent(textwrap.fill(para, 72), "       ") + "\n\n"
    page += "Git 2.43.0                        2024-01-01                   GIT-CHECKOUT(1)\n"
    return Carrier("txt-markup", f"txt-markup-{seed}.txt", page.encode("utf-8"))


def markdown(leak: str, seed: int) -> Carrier:
    before, after = _around(seed)
    rng = random.Random(f"md {seed}")
    items = "\n".join(f"- **{w.title()}**: {w} and {rng.choice(NOUNS)}" for w in rng.sample(NOUNS, 4))
    doc = (f"# Notes on the {rng.choice(NOUNS)}\n\n{before}\n\n## Details\n\n{items}\n\n"
           "```sh\ngit checkout <branch>\nmake test\n```\n\n"
           f"{leak}\n\n> {_sentences(after)[0]}\n\n{after}\n\n"
           f"See [the {rng.choice(NOUNS)} page](https://example.org/{seed}) for more.\n")
    return Carrier("md", f"md-{seed}.md", doc.encode("utf-8"))


def no_extension(leak: str, seed: int) -> Carrier:
    return Carrier("noext", f"noext-{seed}", _plain(leak, seed).encode("utf-8"))


def csv_file(leak: str, seed: int) -> Carrier:
    rng = random.Random(f"csv {seed}")
    comments = _sentences(filler(2 * seed) + " " + filler(2 * seed + 1))
    at = len(comments) // 2
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "date", "author", "comment"])
    for i, comment in enumerate(comments[:at] + [leak] + comments[at:]):
        writer.writerow([i + 1, f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", rng.choice(NOUNS).title(), comment])
    return Carrier("csv", f"csv-{seed}.csv", buf.getvalue().encode("utf-8"))


def json_file(leak: str, seed: int) -> Carrier:
    rng = random.Random(f"json {seed}")
    texts = _sentences(filler(2 * seed) + " " + filler(2 * seed + 1))
    at = len(texts) // 2
    items = [{"id": i + 1, "author": rng.choice(NOUNS).title(), "tags": rng.sample(NOUNS, 2), "text": t}
             for i, t in enumerate(texts[:at] + [leak] + texts[at:])]
    data = json.dumps({"version": 2, "items": items}, indent=2, ensure_ascii=False) + "\n"
    return Carrier("json", f"json-{seed}.json", data.encode("utf-8"))


def json_escapes(text: str) -> bytes:
    """`text` as a JSON string literal whose every character is an escape (`"\\u0057\\u0065..."`)."""
    escapes = (f"\\u{ord(char):04x}" if ord(char) < 0x10000 else json.dumps(char)[1:-1] for char in text)  # pairs
    return ('"' + "".join(escapes) + '"').encode("ascii")


def json_escaped(leak: str, seed: int) -> Carrier:
    """The `json` carrier with the leak's item written as `json.dump` writes text by default when it holds a
    non-ASCII character, here every character an escape (`\\u0057\\u0065...`): the same JSON to any reader
    of JSON, and none of the leak's words in its bytes."""
    carrier = json_file("LEAK", seed)
    return Carrier("json-escaped", f"json-escaped-{seed}.json", carrier.data.replace(b'"LEAK"', json_escapes(leak)))


def svg_drawing(leak: str, seed: int) -> Carrier:
    """A diagram (as Inkscape writes one) whose text box holds the leak, a `<tspan>` line of 8 words, beside
    boxes labelled with prose."""
    words = leak.split()
    spans = "".join(f'<tspan sodipodi:role="line" x="40" y="{200 + 18 * n}">{xml_escape(" ".join(words[i:i + 8]))}'
                    "</tspan>" for n, i in enumerate(range(0, len(words), 8)))
    labels = "".join(f'<rect x="{600 + 10 * n}" y="{40 * n}" width="300" height="30"/><text x="{610 + 10 * n}" '
                     f'y="{40 * n + 20}">{xml_escape(sentence)}</text>'
                     for n, sentence in enumerate(_sentences(filler(2 * seed))[:12]))
    drawing = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<svg xmlns="http://www.w3.org/2000/svg" '
               'xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" width="1200" height="900">'
               f'<sodipodi:namedview pagecolor="#ffffff"/><g id="layer1">{labels}<text x="40" y="200" '
               f'style="font-size:12px;font-family:sans-serif">{spans}</text></g></svg>\n')
    return Carrier("svg", f"svg-{seed}.svg", drawing.encode("utf-8"))


def latex(leak: str, seed: int) -> Carrier:
    """A LaTeX report: a template's preamble, prose, then the leak with a citation after each sentence (behind a
    tie) and a word emphasised in every other one."""
    rng = random.Random(f"latex {seed}")
    sentences = []
    for n, sentence in enumerate(_sentences(leak)):
        words = sentence.split()
        if n % 2 and len(words) > 4:
            k = rng.randrange(1, len(words) - 1)
            words[k] = "\\emph{" + words[k] + "}"
        sentences.append(" ".join(words)[:-1] + f"~\\cite{{source{n}}}" + sentence[-1:])
    before, after = _around(seed)
    source = ("\\documentclass{article}\n\\usepackage{graphicx}\n\\usepackage{hyperref}\n\\title{Report}\n"
              f"\\begin{{document}}\n\\maketitle\n\\section{{Context}}\n{before}\n\n{' '.join(sentences)}\n\n"
              f"\\section{{Discussion}}\n{after}\n\\end{{document}}\n")
    return Carrier("tex", f"tex-{seed}.tex", source.encode("utf-8"))


def notebook_json(cells: list[dict], *, ensure_ascii: bool = False) -> bytes:
    """A Jupyter notebook (nbformat 4.5) of `cells`, written as Jupyter writes one (keys sorted, indent 1);
    `ensure_ascii`: every non-ASCII character escaped, as Python's `json.dump` does by default."""
    metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                "language_info": {"name": "python", "pygments_lexer": "ipython3", "version": "3.11.2"}}
    notebook = {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=ensure_ascii) + "\n").encode("utf-8")


def notebook_cell(kind: str, text: str, number: int, **extra: object) -> dict:
    """One cell, its source a list of lines each with its newline (as Jupyter stores it)."""
    lines = text.split("\n")
    cell = {"cell_type": kind, "id": f"c{number:07x}", "metadata": {},
            "source": [line + "\n" for line in lines[:-1]] + [lines[-1]]}
    if kind == "code":
        cell.update({"execution_count": number, "outputs": []})
    cell.update(extra)
    return cell


def _notebook_around(seed: int, middle: list[dict]) -> list[dict]:
    """A homework notebook: prose and code cells, `middle` between them."""
    before, after = _around(seed)
    cells = [notebook_cell("markdown", before, 1), notebook_cell("code", f"rows = load({seed})\nprint(len(rows))", 2,
             outputs=[{"name": "stdout", "output_type": "stream", "text": [f"{100 + seed}\n"]}])]
    return cells + middle + [notebook_cell("markdown", after, 9)]


def notebook(leak: str, seed: int) -> Carrier:
    """The leak in a markdown cell of a Jupyter notebook, a line a sentence."""
    middle = [notebook_cell("markdown", "\n".join(_sentences(leak)), 3)]
    return Carrier("ipynb", f"ipynb-{seed}.ipynb", notebook_json(_notebook_around(seed, middle)))


def notebook_escaped(leak: str, seed: int) -> Carrier:
    """The leak in a markdown cell, every character a JSON escape (`\\u0057\\u0065...`): valid JSON that
    Jupyter shows as the plain words, and whose bytes hold none of them."""
    data = notebook_json(_notebook_around(seed, [notebook_cell("markdown", "LEAK", 3)]))
    return Carrier("ipynb-escaped", f"ipynb-escaped-{seed}.ipynb", data.replace(b'"LEAK"', json_escapes(leak)))


def notebook_screenshot(leak: str, seed: int) -> Carrier:
    """A screenshot of the leak pasted into a markdown cell (kept in the cell's attachments, pixels only)."""
    picture = {"image.png": {"image/png": base64.b64encode(screenshot_png(leak)).decode("ascii")}}
    middle = [notebook_cell("markdown", "As the page says:\n![image.png](attachment:image.png)", 3,
                            attachments=picture)]
    return Carrier("ipynb-screenshot", f"ipynb-screenshot-{seed}.ipynb",
                   notebook_json(_notebook_around(seed, middle)))


def xml_file(leak: str, seed: int) -> Carrier:
    rng = random.Random(f"xml {seed}")
    texts = _sentences(filler(2 * seed) + " " + filler(2 * seed + 1))
    at = len(texts) // 2
    entries = "".join(
        f'  <entry id="{i + 1}">\n    <title>{xml_escape(rng.choice(NOUNS).title())}</title>\n'
        f"    <summary>{xml_escape(t)}</summary>\n  </entry>\n"
        for i, t in enumerate(texts[:at] + [leak] + texts[at:]))
    doc = f'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n{entries}</feed>\n'
    return Carrier("xml", f"xml-{seed}.xml", doc.encode("utf-8"))


# --------------------------------------------------------------------------
# web pages: the leak in one region of a page whose article is unrelated prose


def _page(seed: int, *, article_extra: str = "", region: str = "", head_extra: str = "",
          tail: str = "") -> str:
    """A page with header and navigation, an article of unrelated prose (600 words), a sidebar and a
    footer; `region` goes right after the article, `article_extra` in the middle of it."""
    rng = random.Random(f"page {seed}")
    paragraphs = _paragraphs(filler(2 * seed, 300)) + _paragraphs(filler(2 * seed + 1, 300))
    mid = len(paragraphs) // 2
    body = "".join(f"<p>{html.escape(p, quote=False)}</p>\n" for p in paragraphs[:mid]) + article_extra
    body += "".join(f"<p>{html.escape(p, quote=False)}</p>\n" for p in paragraphs[mid:])
    menu = "".join(f'<li><a href="/{w}">{w.title()}</a></li>' for w in rng.sample(NOUNS, 6))
    links = "".join(f'<li><a href="/story/{rng.randint(1000, 9999)}">{" ".join(rng.sample(NOUNS, 3)).title()}</a>'
                    "</li>" for _ in range(8))
    title = " ".join(rng.sample(NOUNS, 3)).title()
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title + "</title>"
            "<style>body{font-family:serif} .ad{display:none}</style>" + head_extra + "</head>\n<body>"
            "<header><div class=\"logo\">The Daily</div><nav><ul>" + menu + "</ul></nav></header>\n"
            "<main><article><h1>" + title + "</h1>\n" + body + "</article>\n" + region
            + "<aside><h2>Related</h2><ul>" + links + "</ul></aside></main>\n"
            "<footer><p>Contact us</p><p>Terms of use</p></footer>\n" + tail + "</body></html>\n")


def _html(kind: str, seed: int, page: str) -> Carrier:
    return Carrier(kind, f"{kind}-{seed}.html", page.encode("utf-8"))


def _p(leak: str) -> str:
    return f"<p>{html.escape(leak, quote=False)}</p>"


def html_body(leak: str, seed: int) -> Carrier:
    return _html("html-body", seed, _page(seed, article_extra=_p(leak) + "\n"))


def html_screenshot(leak: str, seed: int) -> Carrier:
    """A page saved whole (its pictures as data URIs): the leak a screenshot in its article, pixels only."""
    image = base64.b64encode(screenshot_png(leak)).decode("ascii")
    picture = f'<img alt="" src="data:image/png;base64,{image}">\n'
    return _html("html-screenshot", seed, _page(seed, article_extra=picture))


def html_table(leak: str, seed: int) -> Carrier:
    """The leak cut into table cells of about 20 words, two cells a row, beside a figure column."""
    words = leak.split()
    cells = [" ".join(words[i : i + 20]) for i in range(0, len(words), 20)]
    rows = "".join(f"<tr><td>{i + 1}</td><td>{html.escape(a, quote=False)}</td>"
                   f"<td>{html.escape(b, quote=False)}</td></tr>\n"
                   for i, (a, b) in enumerate(zip(cells[0::2], cells[1::2] + [""])))
    table = f"<table><thead><tr><th>#</th><th>Text</th><th>More</th></tr></thead><tbody>\n{rows}</tbody></table>\n"
    return _html("html-table", seed, _page(seed, article_extra=table))


def html_nav(leak: str, seed: int) -> Carrier:
    return _html("html-nav", seed, _page(seed, region=f"<nav class=\"more\"><ul><li><a href=\"/\">Home</a></li>"
                                                      f"</ul>{_p(leak)}</nav>\n"))


def html_footer(leak: str, seed: int) -> Carrier:
    return _html("html-footer", seed, _page(seed, tail=f"<footer class=\"legal\">{_p(leak)}</footer>\n"))


def html_aside(leak: str, seed: int) -> Carrier:
    return _html("html-aside", seed, _page(seed, region=f"<aside class=\"note\"><h2>Note</h2>{_p(leak)}</aside>\n"))


def html_comment(leak: str, seed: int) -> Carrier:
    return _html("html-comment", seed, _page(seed, article_extra=f"<!-- {leak.replace('--', '- -')} -->\n"))


def html_noscript(leak: str, seed: int) -> Carrier:
    return _html("html-noscript", seed, _page(seed, article_extra=f"<noscript>{_p(leak)}</noscript>\n"))


def html_hidden(leak: str, seed: int) -> Carrier:
    attr = "hidden" if seed % 2 else 'style="display:none"'
    return _html("html-hidden", seed, _page(seed, article_extra=f"<div {attr}>{_p(leak)}</div>\n"))


def html_unclosed_script(leak: str, seed: int) -> Carrier:
    """A <script> that is never closed, then the leak: browsers hide it, a reader of the file sees it."""
    page = _page(seed, tail=f"<script>var track = function (e) {{ return e; }};\n{_p(leak)}\n")
    return _html("html-unclosed-script", seed, page.replace("</body></html>\n", ""))


# --------------------------------------------------------------------------
# documents: PDF and the ZIP containers


def pdf(leak: str, seed: int) -> Carrier:
    return Carrier("pdf", f"pdf-{seed}.pdf", text_pdf_bytes(_plain(leak, seed)))


def pdf_properties(leak: str, seed: int) -> Carrier:
    """The leak in the Subject of a PDF's document properties (its Info dictionary): on no page."""
    return Carrier("pdf-properties", f"pdf-properties-{seed}.pdf",
                   properties_pdf_bytes(_plain("", seed), {"Title": "Annual report", "Author": "A. Writer",
                                                           "Subject": leak}))


def pdf_xmp(leak: str, seed: int) -> Carrier:
    """The leak in the description of a PDF's XMP metadata, its only properties (as PDF 2.0 writers keep them)."""
    xmp = ('<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
           'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Annual '
           'report</rdf:li></rdf:Alt></dc:title><dc:creator><rdf:Seq><rdf:li>A. Writer</rdf:li></rdf:Seq>'
           f'</dc:creator><dc:description><rdf:Alt><rdf:li xml:lang="x-default">{xml_escape(leak)}</rdf:li>'
           '</rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>')
    return Carrier("pdf-xmp", f"pdf-xmp-{seed}.pdf", xmp_pdf_bytes(_plain("", seed), xmp.encode()))


def pdf_note(leak: str, seed: int) -> Carrier:
    """The leak in a sticky note on the first page of a PDF of prose: an annotation, not the text layer."""
    return Carrier("pdf-note", f"pdf-note-{seed}.pdf", annotated_pdf_bytes(_plain("", seed), [("Text", leak)], {}))


def pdf_attachment(leak: str, seed: int) -> Carrier:
    """A PDF of prose with the leak in a text file attached to it (the reader's paper-clip panel)."""
    return Carrier("pdf-attachment", f"pdf-attachment-{seed}.pdf",
                   attached_pdf_bytes(_plain("", seed), {f"notes-{seed}.txt": _plain(leak, seed + 1).encode()}))


def pdf_screenshot(leak: str, seed: int) -> Carrier:
    """A PDF report of prose with the leak as a picture at the foot of its first page (a screenshot pasted
    into the document before it was printed to PDF): pixels, in no text layer."""
    before, after = _around(seed)
    image = _page_image(leak).convert("L")  # type: ignore[attr-defined]
    prose = f"{' '.join(before.split()[:150])}\n\n{' '.join(after.split()[:150])}"
    return Carrier("pdf-screenshot", f"pdf-screenshot-{seed}.pdf",
                   picture_pdf_bytes(prose, [(image.width, image.height, image.tobytes())]))


def pdf_form(leak: str, seed: int) -> Carrier:
    """The leak typed into a text field of a PDF form (a filled-in application, an exam answer sheet)."""
    return Carrier("pdf-form", f"pdf-form-{seed}.pdf",
                   annotated_pdf_bytes(_plain("", seed), [], {"answer": leak, "candidate": f"Candidate {seed}"}))


_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


_DOCX_DEFAULTS = ('<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                  '<Default Extension="xml" ContentType="application/xml"/>')


def make_docx(body_xml: str, extra: dict[str, bytes] | None = None, *, type_defaults: str = "",
               document_declaration: str = '<?xml version="1.0"?>') -> bytes:
    """A minimal .docx around the `<w:body>` content `body_xml`: the content types (`type_defaults`, then the
    main document's override), the package relationship, word/document.xml (opening with
    `document_declaration`), then the members of `extra`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            + type_defaults
            + '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.document.main+xml"/></Types>')
        zf.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        zf.writestr("word/document.xml",
                    f"{document_declaration}<w:document {_W}><w:body>{body_xml}</w:body></w:document>")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def w_paragraphs(text: str, run: str = "t") -> str:
    """Word paragraphs of `text`, one run each (`run`: "delText" for deleted text)."""
    return "".join(f'<w:p><w:r><w:{run} xml:space="preserve">{xml_escape(p)}</w:{run}></w:r></w:p>'
                   for p in _paragraphs(text))


def docx_around(seed: int, middle: str, parts: dict[str, tuple[str, str | bytes]] | None = None,
                tail: str = "") -> bytes:
    """A .docx of prose with `middle` (body XML) between its paragraphs; `parts`: name -> (relationship type,
    XML) related from the main document; `tail`: body XML after the paragraphs (a section's properties)."""
    before, after = _around(seed)
    body = w_paragraphs(before) + middle + w_paragraphs(after) + tail
    extra: dict[str, bytes] = {}
    if parts:
        extra["word/_rels/document.xml.rels"] = relationships(
            *((f"rId{k}", kind, name) for k, (name, (kind, _)) in enumerate(parts.items(), 10))).encode()
        extra.update({f"word/{name}": content.encode() if isinstance(content, str) else content
                      for name, (_, content) in parts.items()})
    return make_docx(body, extra, type_defaults=_DOCX_DEFAULTS,
                     document_declaration='<?xml version="1.0" encoding="UTF-8"?>')


def docx(leak: str, seed: int) -> Carrier:
    return Carrier("docx", f"docx-{seed}.docx", docx_around(seed, w_paragraphs(leak)))


def docx_properties(leak: str, seed: int) -> Carrier:
    """The leak in the document's properties (File > Info > Properties: its comments), docProps/core.xml, as Word
    writes them: on no page."""
    core = ('<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/'
            'package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>Quarterly notes</dc:title><dc:creator>A. Writer</dc:creator>"
            f"<dc:description>{xml_escape(leak)}</dc:description></cp:coreProperties>")
    before, after = _around(seed)
    return Carrier("docx-properties", f"docx-properties-{seed}.docx",
                   make_docx(w_paragraphs(before + "\n\n" + after), {"docProps/core.xml": core.encode()},
                             type_defaults=_DOCX_DEFAULTS))


def docx_textbox(leak: str, seed: int) -> Carrier:
    """The leak in a floating text box, as Word writes one: a DrawingML shape, and the same box in VML for
    older readers (mc:Fallback)."""
    box = f"<w:txbxContent>{w_paragraphs(leak)}</w:txbxContent>"
    shape = (
        '<w:p><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
        '<mc:Choice Requires="wps"><w:drawing><wp:anchor '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">'
        '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
        '<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
        '<wps:wsp xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
        f"<wps:txbx>{box}</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
        '<mc:Fallback><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml">'
        f"<v:textbox>{box}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>")
    return Carrier("docx-textbox", f"docx-textbox-{seed}.docx", docx_around(seed, shape))


def docx_comment(leak: str, seed: int) -> Carrier:
    """The leak in a reviewer's comment (word/comments.xml), anchored on a sentence of the body."""
    anchor = ('<w:p><w:commentRangeStart w:id="0"/><w:r><w:t>See the note.</w:t></w:r><w:commentRangeEnd w:id="0"/>'
              '<w:r><w:commentReference w:id="0"/></w:r></w:p>')
    comments = (f'<?xml version="1.0"?><w:comments {_W}><w:comment w:id="0" w:author="Reviewer">'
                f"{w_paragraphs(leak)}</w:comment></w:comments>")
    return Carrier("docx-comment", f"docx-comment-{seed}.docx",
                   docx_around(seed, anchor, {"comments.xml": ("comments", comments)}))


def docx_header(leak: str, seed: int) -> Carrier:
    """The leak in the page header (word/header1.xml), which the section's properties name."""
    header = f'<?xml version="1.0"?><w:hdr {_W}>{w_paragraphs(leak)}</w:hdr>'
    section = ('<w:sectPr><w:headerReference w:type="default" r:id="rId10" '
               'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"/></w:sectPr>')
    return Carrier("docx-header", f"docx-header-{seed}.docx",
                   docx_around(seed, "", {"header1.xml": ("header", header)}, tail=section))


def docx_hidden(leak: str, seed: int) -> Carrier:
    """The leak in runs formatted hidden (w:vanish), after a visible sentence: in the file, not on the page."""
    hidden = "".join(f'<w:p><w:r><w:t xml:space="preserve">Notes follow. </w:t></w:r><w:r><w:rPr><w:vanish/>'
                     f'</w:rPr><w:t xml:space="preserve">{xml_escape(p)}</w:t></w:r></w:p>' for p in _paragraphs(leak))
    return Carrier("docx-hidden", f"docx-hidden-{seed}.docx", docx_around(seed, hidden))


def docx_embedded(leak: str, seed: int) -> Carrier:
    """A report whose leak is in a Word document embedded in it (word/embeddings/), beside a blank picture."""
    parts = {"embeddings/Microsoft_Word_Document.docx": ("package", docx(leak, seed).data),
             "media/image1.png": ("image", blank_png())}
    return Carrier("docx-embedded", f"docx-embedded-{seed}.docx",
                   docx_around(seed + 1, w_paragraphs("The attached document says more."), parts))


def docx_alt_text(leak: str, seed: int) -> Carrier:
    """The leak as a picture's alternative text (wp:docPr descr): what a screen reader speaks, on no page."""
    picture = ('<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
               f'wordprocessingDrawing"><wp:docPr id="1" name="Picture 1" descr="{html.escape(leak)}"/>'
               "</wp:inline></w:drawing></w:r></w:p>")
    return Carrier("docx-alt-text", f"docx-alt-text-{seed}.docx", docx_around(seed, picture))


def docx_screenshot(leak: str, seed: int) -> Carrier:
    """A report with the leak pasted in as a picture (word/media/): a screenshot of the page, pixels only."""
    parts = {"media/image1.png": ("image", screenshot_png(leak))}
    return Carrier("docx-screenshot", f"docx-screenshot-{seed}.docx",
                   docx_around(seed, w_paragraphs("The screenshot below shows the page."), parts))


def docx_deleted(leak: str, seed: int) -> Carrier:
    """The leak pasted in, then deleted with changes tracked: gone from the page, still in the file."""
    deleted = "".join(f'<w:p><w:del w:id="{k}" w:author="Writer"><w:r><w:delText xml:space="preserve">'
                      f"{xml_escape(p)}</w:delText></w:r></w:del></w:p>" for k, p in enumerate(_paragraphs(leak)))
    return Carrier("docx-deleted", f"docx-deleted-{seed}.docx", docx_around(seed, deleted))


def _odt_around(seed: int, middle: str, *, first: str = "", styles: str = "") -> bytes:
    """An .odt of prose with `middle` (body XML) between its paragraphs and `first` before them; `styles`: the
    master styles of styles.xml (page headers and footers live there)."""
    before, after = _around(seed)
    return make_odf(ODT_MIME, f"<office:text>{first}{_odt_paragraphs(before)}{middle}{_odt_paragraphs(after)}"
                              "</office:text>", styles=styles)


def _odt_paragraphs(text: str) -> str:
    return "".join(f"<text:p>{xml_escape(p)}</text:p>" for p in _paragraphs(text))


def odt(leak: str, seed: int) -> Carrier:
    return Carrier("odt", f"odt-{seed}.odt", _odt_around(seed, _odt_paragraphs(leak)))


def odt_properties(leak: str, seed: int) -> Carrier:
    """The leak in a user-defined property of the document (File > Properties > Custom Properties), meta.xml."""
    before, after = _around(seed)
    meta = ('<?xml version="1.0"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:'
            'office:1.0" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>Minutes</dc:title>'
            '<meta:user-defined meta:name="Reviewed" meta:value-type="boolean">true</meta:user-defined>'
            f'<meta:user-defined meta:name="Notes">{xml_escape(leak)}</meta:user-defined>'
            "</office:meta></office:document-meta>")
    return Carrier("odt-properties", f"odt-properties-{seed}.odt",
                   make_odf(ODT_MIME, f"<office:text>{_odt_paragraphs(before)}{_odt_paragraphs(after)}"
                                      "</office:text>", extra={"meta.xml": meta}))


def odt_comment(leak: str, seed: int) -> Carrier:
    """The leak in a comment (office:annotation) on a sentence of the body."""
    note = (f"<text:p>See the note.<office:annotation><dc:creator>Reviewer</dc:creator>{_odt_paragraphs(leak)}"
            "</office:annotation></text:p>")
    return Carrier("odt-comment", f"odt-comment-{seed}.odt", _odt_around(seed, note))


def odt_deleted(leak: str, seed: int) -> Carrier:
    """The leak deleted with changes recorded: kept in the body's list of tracked changes only."""
    changes = ('<text:tracked-changes><text:changed-region text:id="ct1"><text:deletion><office:change-info>'
               "<dc:creator>Writer</dc:creator><dc:date>2026-11-29T10:00:00</dc:date></office:change-info>"
               f"{_odt_paragraphs(leak)}</text:deletion></text:changed-region></text:tracked-changes>")
    return Carrier("odt-deleted", f"odt-deleted-{seed}.odt",
                   _odt_around(seed, '<text:p><text:change text:change-id="ct1"/></text:p>', first=changes))


def odt_header(leak: str, seed: int) -> Carrier:
    """The leak in the page header of the master page (styles.xml)."""
    styles = (f'<style:master-page style:name="Standard"><style:header>{_odt_paragraphs(leak)}</style:header>'
              "</style:master-page>")
    return Carrier("odt-header", f"odt-header-{seed}.odt", _odt_around(seed, "", styles=styles))


def epub(leak: str, seed: int) -> Carrier:
    """Three chapters in the spine; the leak in the second."""
    before, after = _around(seed)
    return Carrier("epub", f"epub-{seed}.epub", _epub([before, leak, after]))


def epub_scanned(leak: str, seed: int) -> Carrier:
    """A book of scanned pages: three chapters, each a page's picture (OEBPS/images/), the leak's the second."""
    before, after = _around(seed)
    pages = [_page_image(text[:900]) for text in (before, leak, after)]
    shots = {}
    for i, page in enumerate(pages):
        out = io.BytesIO()
        page.save(out, "PNG")  # type: ignore[attr-defined]
        shots[f"OEBPS/images/page{i}.png"] = out.getvalue()
    bodies = [f'<img src="images/page{i}.png" alt=""/>' for i in range(len(pages))]
    return Carrier("epub-scanned", f"epub-scanned-{seed}.epub", _epub(["", "", ""], bodies, shots))


def _epub(chapters: list[str], bodies: list[str] | None = None, extra: dict[str, bytes] | None = None) -> bytes:
    """An EPUB of `chapters` (prose, a paragraph a blank-line block), each chapter's body then `bodies`' XHTML;
    `extra`: more members (pictures)."""
    bodies = bodies or [""] * len(chapters)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr("META-INF/container.xml",
                    '<?xml version="1.0"?><container version="1.0" '
                    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                    "</rootfiles></container>", zipfile.ZIP_DEFLATED)
        items = "".join(f'<item id="c{i}" href="ch{i}.xhtml" media-type="application/xhtml+xml"/>'
                        for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        zf.writestr("OEBPS/content.opf",
                    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                    f"<metadata/><manifest>{items}</manifest><spine>{spine}</spine></package>",
                    zipfile.ZIP_DEFLATED)
        for i, text in enumerate(chapters):
            paras = "".join(f"<p>{xml_escape(p)}</p>" for p in _paragraphs(text) if p)
            zf.writestr(f"OEBPS/ch{i}.xhtml",
                        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                        f"<head><title>Chapter {i + 1}</title></head><body><h1>Chapter {i + 1}</h1>{paras}"
                        f"{bodies[i]}</body></html>", zipfile.ZIP_DEFLATED)
        for name, content in (extra or {}).items():
            zf.writestr(name, content)
    return buf.getvalue()


# --------------------------------------------------------------------------
# e-mail


def _message(seed: int) -> EmailMessage:
    rng = random.Random(f"mail {seed}")
    msg = EmailMessage()
    msg["From"] = f"{rng.choice(NOUNS).title()} Example <sender{seed}@example.org>"
    msg["To"] = "records@example.org"
    msg["Subject"] = f"The {rng.choice(NOUNS)} and the {rng.choice(NOUNS)}"
    msg["Date"] = "Mon, 01 Jan 2024 10:00:00 +0000"
    return msg


def _wrapped(text: str) -> str:
    return "\n\n".join(textwrap.fill(p, 72) for p in _paragraphs(text)) + "\n"


def eml_plain(leak: str, seed: int) -> Carrier:
    msg = _message(seed)
    body = _wrapped(_plain(leak, seed))
    msg.set_content(body, cte="7bit" if body.isascii() else "8bit")
    return Carrier("eml-plain", f"eml-plain-{seed}.eml", msg.as_bytes())


def eml_html_alternative(leak: str, seed: int) -> Carrier:
    """An innocuous plain text, and the leak in the HTML alternative that mail clients show."""
    msg = _message(seed)
    msg.set_content(_wrapped(filler(10_000 + seed, 60)))
    msg.add_alternative("<html><body>" + "".join(f"<p>{html.escape(p)}</p>" for p in _paragraphs(_plain(leak, seed)))
                        + "</body></html>", subtype="html")
    return Carrier("eml-html-alternative", f"eml-html-alternative-{seed}.eml", msg.as_bytes())


def eml_base64(leak: str, seed: int) -> Carrier:
    msg = _message(seed)
    msg.set_content(_plain(leak, seed), cte="base64")
    return Carrier("eml-base64", f"eml-base64-{seed}.eml", msg.as_bytes())


def eml_attachment(leak: str, seed: int) -> Carrier:
    """A short covering note; the leak, amid prose, in a text/plain attachment."""
    msg = _message(seed)
    msg.set_content(_wrapped(filler(10_000 + seed, 60)) + "\nThe notes are attached.\n")
    msg.add_attachment(_plain(leak, seed), subtype="plain", filename=f"notes-{seed}.txt")
    return Carrier("eml-attachment", f"eml-attachment-{seed}.eml", msg.as_bytes())


# --------------------------------------------------------------------------
# issue 18's formats: slides, sheets, RTF, Word 97, Outlook, and scanned pages read by OCR


ODS_MIME = "application/vnd.oasis.opendocument.spreadsheet"
ODT_MIME = "application/vnd.oasis.opendocument.text"
ODP_MIME = "application/vnd.oasis.opendocument.presentation"
ODG_MIME = "application/vnd.oasis.opendocument.graphics"
OTT_MIME = "application/vnd.oasis.opendocument.text-template"


def pptx(leak: str, seed: int) -> Carrier:
    """Slides of prose; the leak on the second slide, in three text boxes' worth of paragraphs."""
    before, after = _around(seed)
    slides = {f"slide{n}.xml": text_shape(*_paragraphs(text)) for n, text in enumerate((before, leak, after), 1)}
    return Carrier("pptx", f"pptx-{seed}.pptx", make_pptx(slides, list(slides)))


def xlsx(leak: str, seed: int) -> Carrier:
    """A sheet of notes: one paragraph a cell (shared strings), the leak's sentences among them."""
    before, after = _around(seed)
    cells = _paragraphs(before) + _sentences(leak) + _paragraphs(after)
    rows = "".join(f'<row r="{i + 1}"><c t="s"><v>{i}</v></c><c><v>{i * 7}</v></c></row>' for i in range(len(cells)))
    return Carrier("xlsx", f"xlsx-{seed}.xlsx",
                   make_xlsx([("Notes", "sheet1.xml", rows)], [f"<t>{xml_escape(c)}</t>" for c in cells]))


def ppt(leak: str, seed: int) -> Carrier:
    """PowerPoint 97-2003 slides of prose; the leak on the second slide."""
    before, after = _around(seed)
    return Carrier("ppt", f"ppt-{seed}.ppt", make_ppt([before, leak, after], [f"Speaker notes {seed}."]))


def ppt_screenshot(leak: str, seed: int) -> Carrier:
    """PowerPoint 97-2003 slides of prose; the leak a picture (a BLIP in the Pictures stream) on the second."""
    before, after = _around(seed)
    blip = bytes(25) + screenshot_png(leak)  # an OfficeArt BLIP record's header and UID, then the PNG
    return Carrier("ppt-screenshot", f"ppt-screenshot-{seed}.ppt",
                   make_ppt([before, "See the picture.", after], [], streams={"Pictures": blip}))


def doc_screenshot(leak: str, seed: int) -> Carrier:
    """A Word 97 document of prose with the leak pasted in as a picture (a BLIP in the Data stream)."""
    text = _plain("", seed).encode("cp1252", "replace").decode("cp1252")
    return Carrier("doc-screenshot", f"doc-screenshot-{seed}.doc",
                   word97(text, streams={"Data": bytes(68) + screenshot_png(leak)}))


def xls(leak: str, seed: int) -> Carrier:
    """An Excel 97-2003 sheet of notes: a paragraph a cell, the leak's sentences among them, a number beside."""
    before, after = _around(seed)
    cells = _paragraphs(before) + _sentences(leak) + _paragraphs(after)
    return Carrier("xls", f"xls-{seed}.xls", make_xls([("Notes", [[c, i * 7] for i, c in enumerate(cells)])]))


def ods(leak: str, seed: int) -> Carrier:
    before, after = _around(seed)
    cells = _paragraphs(before) + _sentences(leak) + _paragraphs(after)
    rows = "".join(f"<table:table-row><table:table-cell>{odf_paragraphs(c)}</table:table-cell></table:table-row>"
                   for c in cells)
    body = f"<office:spreadsheet><table:table table:name='Notes'>{rows}</table:table></office:spreadsheet>"
    return Carrier("ods", f"ods-{seed}.ods", make_odf(ODS_MIME, body))


def odp(leak: str, seed: int) -> Carrier:
    before, after = _around(seed)
    pages = "".join(f"<draw:page>{odf_paragraphs(*_paragraphs(t))}</draw:page>" for t in (before, leak, after))
    return Carrier("odp", f"odp-{seed}.odp", make_odf(ODP_MIME, f"<office:presentation>{pages}</office:presentation>"))


def odg(leak: str, seed: int) -> Carrier:
    """A LibreOffice Draw diagram: boxes of prose on its first page, the leak in a text box on its second."""
    before, after = _around(seed)
    boxes = "".join(f"<draw:frame><draw:text-box>{odf_paragraphs(p)}</draw:text-box></draw:frame>"
                    for p in _paragraphs(before + "\n\n" + after))
    leaked = f"<draw:custom-shape>{odf_paragraphs(leak)}</draw:custom-shape>"
    body = f"<office:drawing><draw:page>{boxes}</draw:page><draw:page>{leaked}</draw:page></office:drawing>"
    return Carrier("odg", f"odg-{seed}.odg", make_odf(ODG_MIME, body))


def vsdx(leak: str, seed: int) -> Carrier:
    """A Visio drawing: shapes of prose on its first page, the leak in a shape on its second."""
    before, after = _around(seed)
    boxes = "".join(visio_shape(p, shape_id=n) for n, p in enumerate(_paragraphs(before + "\n\n" + after), 1))
    return Carrier("vsdx", f"vsdx-{seed}.vsdx", make_vsdx([("Overview", boxes), ("Detail", visio_shape(leak))]))


def xps(leak: str, seed: int) -> Carrier:
    """A document printed to XPS: prose on its first page, the leak on its second, a line a run as a print
    driver lays them out (a run of 12 words, each line 20 points below the last)."""
    before, after = _around(seed)

    def page(text: str) -> str:
        words = text.split()
        return "".join(xps_glyphs(" ".join(words[k:k + 12]), 96, 100 + 20 * (k // 12), advance=None)
                       for k in range(0, len(words), 12))

    return Carrier("xps", f"xps-{seed}.xps", make_xps([page(before + " " + after), page(leak)]))


def ott(leak: str, seed: int) -> Carrier:
    """A text document saved as a template (.ott), the leak among its paragraphs."""
    return Carrier("ott", f"ott-{seed}.ott",
                   make_odf(OTT_MIME, f"<office:text>{odf_paragraphs(*_paragraphs(_plain(leak, seed)))}</office:text>"))


def pptx_screenshot(leak: str, seed: int) -> Carrier:
    """Slides of prose; the leak on the second slide as a pasted picture (ppt/media/)."""
    before, after = _around(seed)
    texts = (before, "See below.", after)
    slides = {f"slide{n}.xml": text_shape(*_paragraphs(text)) for n, text in enumerate(texts, 1)}
    return Carrier("pptx-screenshot", f"pptx-screenshot-{seed}.pptx",
                   make_pptx(slides, list(slides), extra={"ppt/media/image1.png": screenshot_png(leak)}))


def odt_screenshot(leak: str, seed: int) -> Carrier:
    """An .odt of prose with the leak as a picture (Pictures/), drawn in a frame of the body."""
    frame = ('<text:p><draw:frame><draw:image xlink:href="Pictures/leak.png" '
             'xmlns:xlink="http://www.w3.org/1999/xlink"/></draw:frame></text:p>')
    before, after = _around(seed)
    body = f"<office:text>{_odt_paragraphs(before)}{frame}{_odt_paragraphs(after)}</office:text>"
    return Carrier("odt-screenshot", f"odt-screenshot-{seed}.odt",
                   make_odf(ODT_MIME, body, extra={"Pictures/leak.png": screenshot_png(leak)}))


def _rtf_escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in "\\{}":
            out.append("\\" + ch)
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch) if ord(ch) < 32768 else ord(ch) - 65536}?")
    return "".join(out)


def rtf(leak: str, seed: int) -> Carrier:
    paras = "".join(f"{{\\pard {_rtf_escape(p)}\\par}}\n" for p in _paragraphs(_plain(leak, seed)))
    data = "{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0\\froman Times;}}\n" + paras + "}"
    return Carrier("rtf", f"rtf-{seed}.rtf", data.encode("ascii"))


def rtf_picture(text: str) -> str:
    """A picture of `text` as Word writes one into RTF: a PNG in `\\shppict`, then a metafile stand-in for
    older readers in `\\nonshppict` (not a real one: no reader opens it)."""
    data = screenshot_png(text).hex()
    return ("{\\*\\shppict{\\pict{\\*\\picprop}\\picw1700\\pich400\\pngblip\n"
            + "\n".join(data[i:i + 128] for i in range(0, len(data), 128))
            + "}}{\\nonshppict{\\pict\\wmetafile8\\picw1700\\pich400 0100090000}}")


def rtf_screenshot(leak: str, seed: int) -> Carrier:
    """A document of prose with the leak pasted in as a screenshot (an RTF \\pict): pixels only."""
    before, after = _around(seed)
    paras = "".join(f"{{\\pard {_rtf_escape(p)}\\par}}\n" for p in _paragraphs(before))
    paras += f"{{\\pard {rtf_picture(leak)}\\par}}\n"
    paras += "".join(f"{{\\pard {_rtf_escape(p)}\\par}}\n" for p in _paragraphs(after))
    data = "{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0\\froman Times;}}\n" + paras + "}"
    return Carrier("rtf-screenshot", f"rtf-screenshot-{seed}.rtf", data.encode("ascii"))


def rtf_side(leak: str, seed: int) -> Carrier:
    """The leak split between what RTF keeps beside its body: a comment (\\annotation), a footnote and the
    page footer; each part alone is over half the leak only when found with the others."""
    parts = _paragraphs(leak)
    half = max(1, len(parts) // 2)
    body = "".join(f"{{\\pard {_rtf_escape(p)}\\par}}\n" for p in _paragraphs(_plain("", seed)))
    data = ("{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0\\froman Times;}}\n"
            f"{{\\footer {_rtf_escape(' '.join(parts[half:]))}\\par}}\n" + body
            + "{\\*\\atnid R}{\\*\\atnauthor Reviewer}\\chatn"
            + f"{{\\*\\annotation {_rtf_escape(' '.join(parts[:half]))}}}"
            + "See the note.\\chftn{\\footnote \\chftn A note of our own.}\\par}")
    return Carrier("rtf-side", f"rtf-side-{seed}.rtf", data.encode("ascii"))


def doc(leak: str, seed: int) -> Carrier:
    """Word 97: the leak amid prose as 8-bit text (cp1252; characters it lacks become "?")."""
    text = _plain(leak, seed).encode("cp1252", "replace").decode("cp1252")
    return Carrier("doc", f"doc-{seed}.doc", word97(text))


def msg(leak: str, seed: int) -> Carrier:
    """An Outlook item whose body holds the leak."""
    streams = {"__substg1.0_0037001F": f"Minutes {seed}".encode("utf-16-le"),
               "__substg1.0_1000001F": _plain(leak, seed).replace("\n", "\r\n").encode("utf-16-le")}
    return Carrier("msg", f"msg-{seed}.msg", write_compound_file(streams))


def msg_attachment(leak: str, seed: int) -> Carrier:
    """An Outlook item with a short body; the leak in an attached text file."""
    storage = "__attach_version1.0_#00000000"
    streams = {"__substg1.0_0037001F": f"Minutes {seed}".encode("utf-16-le"),
               "__substg1.0_1000001F": "The notes are attached.\r\n".encode("utf-16-le"),
               f"{storage}/__substg1.0_3707001F": f"notes-{seed}.txt".encode("utf-16-le"),
               f"{storage}/__substg1.0_37010102": _plain(leak, seed).encode("utf-8")}
    return Carrier("msg-attachment", f"msg-attachment-{seed}.msg", write_compound_file(streams))


def msg_forwarded(leak: str, seed: int) -> Carrier:
    """An Outlook item that forwards another as an attachment (a message storage inside it, not bytes): the
    leak the body of the forwarded mail."""
    item = "__attach_version1.0_#00000000/__substg1.0_3701000D"
    streams = {"__substg1.0_0037001F": f"Fwd: minutes {seed}".encode("utf-16-le"),
               "__substg1.0_1000001F": "See the mail below.\r\n".encode("utf-16-le"),
               "__attach_version1.0_#00000000/__substg1.0_3707001F": f"Minutes {seed}".encode("utf-16-le"),
               f"{item}/__substg1.0_0037001F": f"Minutes {seed}".encode("utf-16-le"),
               f"{item}/__substg1.0_1000001F": _plain(leak, seed).replace("\n", "\r\n").encode("utf-16-le")}
    return Carrier("msg-forwarded", f"msg-forwarded-{seed}.msg", write_compound_file(streams))


def msg_rtf(leak: str, seed: int) -> Carrier:
    """An Outlook item written in rich text whose body Outlook kept only as compressed RTF (PR_RTF_COMPRESSED)."""
    from compressed_rtf import compress

    streams = {"__substg1.0_0037001F": f"Minutes {seed}".encode("utf-16-le"),
               "__substg1.0_10090102": bytes(compress(rtf(leak, seed).data))}
    return Carrier("msg-rtf", f"msg-rtf-{seed}.msg", write_compound_file(streams))


def pst(leak: str, seed: int) -> Carrier:
    """An Outlook data file (.pst) of three folders: the leak the body of a message in a sub-folder of the
    inbox, beside messages of unrelated prose."""
    from pstgen import PstFolder, PstMessage, write_pst

    before, after = _around(seed)
    minutes = PstMessage(f"Minutes {seed}", body=_plain(leak, seed).replace("\n", "\r\n"), sender="Ann Smith")
    inbox = PstFolder("Inbox", [PstMessage(f"Re: agenda {seed}", body=before, sender="Dana Reyes")],
                      [PstFolder("Projects", [minutes])])
    sent = PstFolder("Sent Items", [PstMessage("Thanks", body=after)])
    return Carrier("pst", f"pst-{seed}.pst", write_pst(PstFolder("Top of Personal Folders", folders=[inbox, sent])))


def pst_attachment(leak: str, seed: int) -> Carrier:
    """An Outlook data file whose one message has a short body and the leak in an attached text file."""
    from pstgen import PstAttachment, PstFolder, PstMessage, write_pst

    message = PstMessage(f"Minutes {seed}", body="The notes are attached.\r\n",
                         attachments=[PstAttachment(f"notes-{seed}.txt", _plain(leak, seed).encode("utf-8"))])
    return Carrier("pst-attachment", f"pst-attachment-{seed}.pst",
                   write_pst(PstFolder("Top of Personal Folders", folders=[PstFolder("Inbox", [message])])))


def sqlite_chat(leak: str, seed: int) -> Carrier:
    """A phone's chat store (an SQLite database shaped like iMessage's): the leak pasted into one message among
    others, the ids, dates and a picture's bytes in cells beside them."""
    import sqlite3

    connection = sqlite3.connect(":memory:")
    connection.executescript("""
        CREATE TABLE handle (ROWID INTEGER PRIMARY KEY, id TEXT, service TEXT);
        CREATE TABLE message (ROWID INTEGER PRIMARY KEY, handle_id INTEGER, text TEXT, date INTEGER);
        CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY, message_id INTEGER, transfer_name TEXT, body BLOB);
    """)
    connection.execute("INSERT INTO handle VALUES (1, ?, 'iMessage')", (f"+1555555{seed:04d}",))
    before, after = _around(seed)
    texts = [*_sentences(before)[:6], " ".join(leak.split()), *_sentences(after)[:6]]
    connection.executemany("INSERT INTO message (handle_id, text, date) VALUES (1, ?, ?)",
                           [(text, 700_000_000 + 60 * n) for n, text in enumerate(texts)])
    connection.execute("INSERT INTO attachment VALUES (1, 7, 'IMG_0001.HEIC', ?)", (bytes(range(256)) * 8,))
    connection.commit()
    data = connection.serialize()
    connection.close()
    return Carrier("sqlite", f"sqlite-{seed}.db", data)


def sqlite_wal(leak: str, seed: int) -> Carrier:
    """The write-ahead log of a chat store copied from a running program (`chat.db-wal`): the leak the newest
    message, in the log alone, not yet checkpointed into the database."""
    import sqlite3
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        connection = sqlite3.connect(Path(folder) / "chat.db")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        connection.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, text TEXT, date INTEGER)")
        before, after = _around(seed)
        for number, text in enumerate([*_sentences(before)[:6], " ".join(leak.split()), *_sentences(after)[:3]]):
            connection.execute("INSERT INTO message (text, date) VALUES (?, ?)", (text, 700_000_000 + 60 * number))
            connection.commit()
        data = (Path(folder) / "chat.db-wal").read_bytes()
        connection.close()
    return Carrier("sqlite-wal", f"sqlite-wal-{seed}.db-wal", data)


def iwa_archive(texts: list[str], chunk: int = 4096) -> bytes:
    """An iWork archive (`.iwa`): protocol buffers, each behind its length (a storage's text in field 3, as
    Pages keeps a body's text, beside an identifier and a style run), cut into Snappy chunks of a zero byte, a
    24-bit length and raw Snappy (cramjam's compressor, an independent implementation)."""
    import cramjam

    def field(number: int, payload: bytes) -> bytes:
        return _varint((number << 3) | 2) + _varint(len(payload)) + payload

    stream = b""
    for number, text in enumerate(texts, 1):
        message = b"\x08" + _varint(1000 + number) + field(3, text.encode()) + field(5, b"\x08\x00\x10\x05")
        stream += _varint(len(message)) + message
    out = b""
    for at in range(0, len(stream), chunk):
        packed = bytes(cramjam.snappy.compress_raw(stream[at:at + chunk]))
        out += b"\x00" + len(packed).to_bytes(3, "little") + packed
    return out


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def pages(leak: str, seed: int) -> Carrier:
    """An Apple Pages document (a ZIP whose `Index/Document.iwa` holds the body as Snappy-compressed protocol
    buffers, as Pages writes it since 2013): the leak a paragraph between paragraphs of prose."""
    before, after = _around(seed)
    archive = iwa_archive([*_paragraphs(before)[:3], " ".join(leak.split()), *_paragraphs(after)[:3]])
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as package:
        package.writestr("Index/Document.iwa", archive)
        package.writestr("Index/Metadata.iwa", iwa_archive(["Pages"]))
        package.writestr("Metadata/Properties.plist", b"<?xml version=\"1.0\"?><plist version=\"1.0\"><dict/></plist>")
    return Carrier("pages", f"pages-{seed}.pages", data.getvalue())


def android_backup_of(files: dict[str, bytes], compressed: bool = True, encryption: str = "none") -> bytes:
    """An Android backup (`adb backup`): four header lines, then the TAR of `files`, deflated when `compressed`."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    body = zlib.compress(archive.getvalue()) if compressed else archive.getvalue()
    return f"ANDROID BACKUP\n5\n{int(compressed)}\n{encryption}\n".encode() + body


def android_backup(leak: str, seed: int) -> Carrier:
    """A phone's backup (`adb backup`): the leak pasted into a chat in WhatsApp's database, among an app's files."""
    before, _ = _around(seed)
    return Carrier("android-backup", f"android-backup-{seed}.ab", android_backup_of({
        "apps/com.example.notes/f/readme.txt": before.encode(),
        "apps/com.whatsapp/db/msgstore.db": sqlite_chat(leak, seed).data}))


def emlx(leak: str, seed: int) -> Carrier:
    """An Apple Mail message file (.emlx): the message's length on a line, the message (a short note, the leak
    in an attachment sent in base64), then Mail's property list."""
    msg = _message(seed)
    msg.set_content("The notes are attached.\n")
    msg.add_attachment(_plain(leak, seed).encode("utf-8"), maintype="text", subtype="plain",
                       filename=f"notes-{seed}.txt")  # bytes: sent in base64, as Mail sends files
    data = msg.as_bytes()
    flags = (b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>flags</key>'
             b"<integer>8590195713</integer></dict></plist>\n")
    return Carrier("emlx", f"{seed}.emlx", str(len(data)).encode() + b"\n" + data + flags)


def warc(leak: str, seed: int) -> Carrier:
    """A crawl of a site as `wget --warc-file` keeps it (.warc.gz, a gzip member a record): two pages of prose,
    the leak amid one of them, sent gzip-compressed."""
    def record(uri: str, page: str) -> bytes:
        body = gzip.compress(f"<html><body>{''.join(f'<p>{html.escape(p)}</p>' for p in _paragraphs(page))}"
                             "</body></html>".encode())
        block = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body)) + body
        head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\n"
                f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n")
        return gzip.compress(head.encode() + block + b"\r\n\r\n", mtime=0)

    pages = [("https://example.org/", filler(20_000 + seed, 150)), ("https://example.org/notes", _plain(leak, seed))]
    return Carrier("warc", f"crawl-{seed}.warc.gz", b"".join(record(uri, page) for uri, page in pages))


def eml_winmail(leak: str, seed: int) -> Carrier:
    """A mail from Outlook to another mail program: a one-line body, and the message's own body and
    attachments in `winmail.dat` (TNEF): the leak in an attached text file (even seeds) or in the rich-text
    body (odd seeds)."""
    msg = _message(seed)
    msg.set_content("This message is in a format your mail program may not show.\n")
    if seed % 2:
        stream = tnef(f"Minutes {seed}", rtf=rtf(leak, seed).data)
    else:
        stream = tnef(f"Minutes {seed}", body="The notes are attached.\r\n",
                      attachments={f"notes-{seed}.txt": _plain(leak, seed).encode("utf-8")})
    msg.add_attachment(stream, maintype="application", subtype="ms-tnef", filename="winmail.dat")
    return Carrier("eml-winmail", f"eml-winmail-{seed}.eml", msg.as_bytes())


def _page_image(text: str) -> object:
    """The text typeset on a white page (Pillow's own font, 28 px), as a scanner would photograph it."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=28)
    lines = [line for p in _paragraphs(text) for line in [*textwrap.wrap(p, 90), ""]]
    page = Image.new("L", (1700, 60 + 38 * len(lines)), 255)
    draw = ImageDraw.Draw(page)
    for n, line in enumerate(lines):
        draw.text((60, 30 + 38 * n), line, fill=0, font=font)
    return page


def screenshot_png(text: str) -> bytes:
    """`text` typeset as a PNG picture (`_page_image`): what a screenshot pasted into a document holds."""
    out = io.BytesIO()
    _page_image(text).save(out, "PNG")  # type: ignore[attr-defined]
    return out.getvalue()


def blank_png() -> bytes:
    """A small white PNG: a picture without text."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (64, 32), 255).save(out, "PNG")
    return out.getvalue()


def png(leak: str, seed: int) -> Carrier:
    """A photographed page: the leak amid prose, as pixels only (read by OCR)."""
    before, after = _around(seed)
    out = io.BytesIO()
    _page_image(f"{before[-600:]}\n\n{leak}\n\n{after[:600]}").save(out, "PNG")  # type: ignore[attr-defined]
    return Carrier("png", f"png-{seed}.png", out.getvalue())


def _photo(seed: int) -> Any:
    """A picture with no text in its pixels: a grey gradient (a photograph's stand-in)."""
    from PIL import Image

    shade = 96 + seed % 64
    return Image.linear_gradient("L").resize((96, 64)).point(lambda v: (v + shade) % 256)


def heic(leak: str, seed: int) -> Carrier:
    """A page photographed with a phone, saved as HEIC (an iPhone's default): the leak amid prose, as pixels."""
    from PIL import Image
    from pillow_heif import register_heif_opener

    register_heif_opener()
    page = Image.open(io.BytesIO(png(leak, seed).data)).convert("RGB")
    out = io.BytesIO()
    page.save(out, "HEIF", quality=90)
    return Carrier("heic", f"heic-{seed}.heic", out.getvalue())


def jpeg_exif(leak: str, seed: int) -> Carrier:
    """A photograph whose EXIF description (what a phone's or an editor's caption field writes) is the leak."""
    from PIL import Image

    exif = Image.Exif()
    exif[0x010E] = leak  # ImageDescription
    out = io.BytesIO()
    _photo(seed).save(out, "JPEG", exif=exif)
    return Carrier("jpeg-exif", f"jpeg-exif-{seed}.jpg", out.getvalue())


def png_text(leak: str, seed: int) -> Carrier:
    """A PNG with the leak in an international text chunk (iTXt "Description"), compressed."""
    from PIL import PngImagePlugin

    chunks = PngImagePlugin.PngInfo()
    chunks.add_itxt("Description", leak, zip=True)
    out = io.BytesIO()
    _photo(seed).save(out, "PNG", pnginfo=chunks)
    return Carrier("png-text", f"png-text-{seed}.png", out.getvalue())


def docx_picture_metadata(leak: str, seed: int) -> Carrier:
    """A report with a photograph whose XMP description (Adobe's caption field) is the leak."""
    xmp = ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
           '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:description><rdf:Alt>'
           f'<rdf:li xml:lang="x-default">{xml_escape(leak)}</rdf:li></rdf:Alt></dc:description>'
           '</rdf:Description></rdf:RDF></x:xmpmeta>')
    out = io.BytesIO()
    _photo(seed).save(out, "JPEG", xmp=xmp.encode())
    parts = {"media/image1.jpeg": ("image", out.getvalue())}
    return Carrier("docx-picture-metadata", f"docx-picture-metadata-{seed}.docx",
                   docx_around(seed, w_paragraphs("The photograph below shows the site."), parts))


def scanned_pdf(leak: str, seed: int) -> Carrier:
    """A scanned page: a PDF holding only an image of the text (no text layer)."""
    before, after = _around(seed)
    out = io.BytesIO()
    _page_image(f"{before[-600:]}\n\n{leak}\n\n{after[:600]}").save(out, "PDF", resolution=200)  # type: ignore[attr-defined]
    return Carrier("scanned-pdf", f"scanned-pdf-{seed}.pdf", out.getvalue())


# --------------------------------------------------------------------------
# containers (issue 18): the leak is a member, found and named `container!/member`


def _member_text(leak: str, seed: int) -> bytes:
    return _plain(leak, seed).encode("utf-8")


def _decoys(seed: int) -> list[tuple[str, bytes]]:
    """Unrelated members beside the one that holds the leak."""
    return [(f"minutes/{seed}-{n}.txt", (filler(20_000 + 10 * seed + n, 200) + "\n").encode()) for n in range(2)]


def zip_archive(leak: str, seed: int) -> Carrier:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [*_decoys(seed), (f"drafts/notes-{seed}.txt", _member_text(leak, seed))]:
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return Carrier("zip", f"zip-{seed}.zip", buffer.getvalue())


def _tree_tar(leak: str, seed: int) -> bytes:
    """A TAR of decoy files and the leak's member, uncompressed."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as tar:
        for name, data in [*_decoys(seed), (f"drafts/notes-{seed}.txt", _member_text(leak, seed))]:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return plain.getvalue()


def tar_gz(leak: str, seed: int) -> Carrier:
    return Carrier("tar-gz", f"tar-gz-{seed}.tar.gz", gzip.compress(_tree_tar(leak, seed), mtime=0))


def tar_zst(leak: str, seed: int) -> Carrier:
    """The same tree packed with Zstandard (.tar.zst, what current Linux tools write)."""
    import zstandard

    return Carrier("tar-zst", f"tar-zst-{seed}.tar.zst", zstandard.ZstdCompressor().compress(_tree_tar(leak, seed)))


def seven_zip(leak: str, seed: int) -> Carrier:
    import py7zr

    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w") as archive:
        for name, data in [*_decoys(seed), (f"drafts/notes-{seed}.txt", _member_text(leak, seed))]:
            archive.writestr(data, name)
    return Carrier("7z", f"7z-{seed}.7z", buffer.getvalue())


def rar(leak: str, seed: int) -> Carrier:
    """The leak in a member of a RAR archive, among decoys (`rargen.make_rar`: stored members)."""
    return Carrier("rar", f"rar-{seed}.rar",
                   make_rar(dict([*_decoys(seed), (f"drafts/notes-{seed}.txt", _member_text(leak, seed))])))


def mbox(leak: str, seed: int) -> Carrier:
    """A mailbox of three messages; the second holds the leak in its body."""
    messages = []
    for n in range(3):
        msg = _message(seed * 10 + n)
        msg.set_content(_wrapped(_plain(leak, seed) if n == 1 else filler(30_000 + 10 * seed + n, 150)))
        messages.append(b"From sender@example.org Mon Jan  1 10:00:00 2024\n" + msg.as_bytes().replace(b"\r\n", b"\n"))
    return Carrier("mbox", f"mbox-{seed}.mbox", b"\n".join(messages))


def eml_docx(leak: str, seed: int) -> Carrier:
    """A covering note with the leak in an attached Word document."""
    msg = _message(seed)
    msg.set_content(_wrapped(filler(10_000 + seed, 60)) + "\nThe report is attached.\n")
    msg.add_attachment(docx(leak, seed).data, maintype="application",
                       subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
                       filename=f"report-{seed}.docx")
    return Carrier("eml-docx", f"eml-docx-{seed}.eml", msg.as_bytes())


def zip_in_eml(leak: str, seed: int) -> Carrier:
    """Nested: the leak in a text file, zipped, attached to a mail."""
    msg = _message(seed)
    msg.set_content(_wrapped(filler(10_000 + seed, 60)) + "\nThe archive is attached.\n")
    msg.add_attachment(zip_archive(leak, seed).data, maintype="application", subtype="zip",
                       filename=f"files-{seed}.zip")
    return Carrier("zip-in-eml", f"zip-in-eml-{seed}.eml", msg.as_bytes())


CARRIERS: dict[str, Callable[[str, int], Carrier]] = {
    "txt-markup": txt_markup,
    "md": markdown,
    "noext": no_extension,
    "csv": csv_file,
    "json": json_file,
    "json-escaped": json_escaped,
    "xml": xml_file,
    "ipynb": notebook,
    "svg": svg_drawing,
    "tex": latex,
    "ipynb-escaped": notebook_escaped,
    "ipynb-screenshot": notebook_screenshot,
    "html-body": html_body,
    "html-table": html_table,
    "html-screenshot": html_screenshot,
    "html-nav": html_nav,
    "html-footer": html_footer,
    "html-aside": html_aside,
    "html-comment": html_comment,
    "html-noscript": html_noscript,
    "html-hidden": html_hidden,
    "html-unclosed-script": html_unclosed_script,
    "pdf": pdf,
    "pdf-properties": pdf_properties,
    "pdf-xmp": pdf_xmp,
    "pdf-note": pdf_note,
    "pdf-form": pdf_form,
    "pdf-attachment": pdf_attachment,
    "pdf-screenshot": pdf_screenshot,
    "docx": docx,
    "docx-properties": docx_properties,
    "docx-textbox": docx_textbox,
    "docx-comment": docx_comment,
    "docx-header": docx_header,
    "docx-deleted": docx_deleted,
    "docx-embedded": docx_embedded,
    "docx-hidden": docx_hidden,
    "docx-screenshot": docx_screenshot,
    "docx-alt-text": docx_alt_text,
    "odt": odt,
    "odt-properties": odt_properties,
    "odt-comment": odt_comment,
    "odt-deleted": odt_deleted,
    "odt-header": odt_header,
    "odt-screenshot": odt_screenshot,
    "epub": epub,
    "epub-scanned": epub_scanned,
    "eml-plain": eml_plain,
    "eml-base64": eml_base64,
    "eml-html-alternative": eml_html_alternative,
    "eml-attachment": eml_attachment,
    "pptx": pptx,
    "pptx-screenshot": pptx_screenshot,
    "xlsx": xlsx,
    "xls": xls,
    "ppt": ppt,
    "ppt-screenshot": ppt_screenshot,
    "doc-screenshot": doc_screenshot,
    "ods": ods,
    "odp": odp,
    "odg": odg,
    "vsdx": vsdx,
    "xps": xps,
    "ott": ott,
    "rtf": rtf,
    "rtf-side": rtf_side,
    "rtf-screenshot": rtf_screenshot,
    "doc": doc,
    "msg": msg,
    "msg-attachment": msg_attachment,
    "msg-rtf": msg_rtf,
    "msg-forwarded": msg_forwarded,
    "eml-winmail": eml_winmail,
    "emlx": emlx,
    "pst": pst,
    "pst-attachment": pst_attachment,
    "sqlite": sqlite_chat,
    "sqlite-wal": sqlite_wal,
    "pages": pages,
    "android-backup": android_backup,
    "warc": warc,
    "png": png,
    "heic": heic,
    "jpeg-exif": jpeg_exif,
    "png-text": png_text,
    "docx-picture-metadata": docx_picture_metadata,
    "scanned-pdf": scanned_pdf,
    "zip": zip_archive,
    "tar-gz": tar_gz,
    "tar-zst": tar_zst,
    "7z": seven_zip,
    "rar": rar,
    "mbox": mbox,
    "eml-docx": eml_docx,
    "zip-in-eml": zip_in_eml,
}


# --------------------------------------------------------------------------
# evasion tricks, applied to the leak alone (it is then planted in a .txt carrier)

_CYRILLIC = str.maketrans("aeopcxAEOPCX", "аеорсхАЕОРСХ")
_GREEK = str.maketrans("aikopvuxABEHIKMNOPTXYZ", "αικορνυχΑΒΕΗΙΚΜΝΟΡΤΧΥΖ")
_ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
_LIGATURES = (("ffi", "\ufb03"), ("ffl", "\ufb04"), ("ff", "\ufb00"), ("fi", "\ufb01"), ("fl", "\ufb02"),
              ("st", "\ufb06"))


def _each_word(text: str, change: Callable[[str], str]) -> str:
    return " ".join(change(w) for w in text.split(" "))


def cyrillic(leak: str, rng: random.Random) -> str:
    """Cyrillic а е о р с х (and capitals) for the Latin letters, everywhere."""
    return leak.translate(_CYRILLIC)


def greek(leak: str, rng: random.Random) -> str:
    """Greek look-alikes everywhere: α ι κ ο ρ ν υ χ and the capitals Α Β Ε Η Ι Κ Μ Ν Ο Ρ Τ Χ Υ Ζ."""
    return leak.translate(_GREEK)


def letter_spacing(leak: str, rng: random.Random) -> str:
    """Every word letter-spaced, `c o p i e d   w o r d s`: one space between letters, three between words."""
    return "   ".join(" ".join(w) for w in leak.split())


def swap_pairs(leak: str, rng: random.Random) -> str:
    """Words 1 and 2 swapped, 3 and 4, and so on."""
    words = leak.split()
    for i in range(0, len(words) - 1, 2):
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def _insert_inside(word: str, rng: random.Random, mark: str) -> str:
    letters = [i for i in range(1, len(word)) if word[i - 1].isalpha() and word[i].isalpha()]
    if not letters:
        return word
    at = rng.choice(letters)
    return word[:at] + mark + word[at:]


def zero_width(leak: str, rng: random.Random) -> str:
    """A zero-width space, non-joiner, joiner, word joiner or BOM inside every word of 2+ letters."""
    return _each_word(leak, lambda w: _insert_inside(w, rng, rng.choice(_ZERO_WIDTH)))


def soft_hyphens(leak: str, rng: random.Random) -> str:
    """A soft hyphen inside every word of 5+ letters."""
    return _each_word(leak, lambda w: _insert_inside(w, rng, "\u00ad") if len(w) >= 5 else w)


def nbsp(leak: str, rng: random.Random) -> str:
    """No-break spaces between all words."""
    return leak.replace(" ", "\u00a0")


def fullwidth(leak: str, rng: random.Random) -> str:
    """Full-width forms (U+FF01-FF5E) for every printable ASCII character but the space."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in leak)


def ligatures(leak: str, rng: random.Random) -> str:
    """The presentation forms ﬃ ﬄ ﬀ ﬁ ﬂ ﬆ wherever those letters meet."""
    for plain, ligature in _LIGATURES:
        leak = leak.replace(plain, ligature)
    return leak


def hyphenation(leak: str, rng: random.Random, width: int = 60) -> str:
    """Lines of at most `width` characters, a word of 6+ letters that crosses the margin cut with a
    hyphen at the line end (`exam-` / `ple`), as typesetting and OCR leave text."""
    lines: list[str] = []
    line = ""
    for word in leak.split():
        room = width - len(line) - (1 if line else 0)
        if len(word) <= room:
            line = f"{line} {word}" if line else word
            continue
        if word.isalpha() and len(word) >= 6 and room >= 4:
            cut = min(room - 1, len(word) - 3)
            lines.append(f"{line} {word[:cut]}-" if line else f"{word[:cut]}-")
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return "\n".join(lines)


def capitals(leak: str, rng: random.Random) -> str:
    return leak.upper()


def strip_punctuation(leak: str, rng: random.Random) -> str:
    """Every punctuation character (ASCII and Unicode P*) removed; spaces kept."""
    kept = (c for c in leak if c not in string.punctuation and not unicodedata.category(c).startswith("P"))
    return " ".join("".join(kept).split())


TRICKS: dict[str, Callable[[str, random.Random], str]] = {
    "cyrillic": cyrillic,
    "greek": greek,
    "letter-spacing": letter_spacing,
    "swap-pairs": swap_pairs,
    "zero-width": zero_width,
    "soft-hyphens": soft_hyphens,
    "nbsp": nbsp,
    "fullwidth": fullwidth,
    "ligatures": ligatures,
    "hyphenation": hyphenation,
    "capitals": capitals,
    "strip-punctuation": strip_punctuation,
}


def trick_carrier(trick: str, leak: str, seed: int) -> Carrier:
    """The leak changed by `trick` (seeded by `seed`), amid prose in a plain UTF-8 .txt file."""
    changed = TRICKS[trick](leak, random.Random(f"trick {trick} {seed}"))
    return Carrier(f"trick-{trick}", f"trick-{trick}-{seed}.txt", _plain(changed, 500 + seed).encode("utf-8"))


# --------------------------------------------------------------------------
# the rule: how much of the source a match's passages cover


def covered_words(text: str, spans: Iterable[tuple[int, int]]) -> int:
    """Words (`\\w+` runs) of `text` that start inside the union of the [start, end) spans."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return sum(len(_WORD.findall(text, start, end)) for start, end in merged)


def found_words(match: dict, source_text: str) -> int:
    """Words of the protected text covered by one `check --json` match's passages, counted on the source
    side (doc_start..doc_end), so that a letter-spaced or zero-width-split query is not counted as
    more words than it copies."""
    return covered_words(source_text, ((p["doc_start"], p["doc_end"]) for p in match.get("passages", ())))
