"""LaTeX sources read as their typeset text (`scanner_plugins.latex`), not as their commands."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from clirun import scanned_pairs
from corpus import prose

from scanner.core.model import TextStatus
from scanner.sources.extract import extract_bytes
from scanner.sources.extract.routing import LATEX_MIME, detect_mime
from scanner.sources.plugins import make_plugin_manager

PREAMBLE = r"""\documentclass[12pt,a4paper]{article}
\usepackage[utf8]{inputenc}
\usepackage{amsmath,amssymb,amsthm}
\usepackage{graphicx}
\usepackage{hyperref}
\usepackage[margin=2.5cm]{geometry}
\usepackage[backend=biber,style=authoryear]{biblatex}
\addbibresource{references.bib}
\newtheorem{theorem}{Theorem}[section]
\title{%s}
\author{%s}
\begin{document}
\maketitle
"""


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager(load_entry_points=False)


def report(text: str, seed: int, title: str = "") -> str:
    """`text` as a student writes it in LaTeX: a citation after two sentences in five (with a tie), a word in
    ten sentences emphasised, a section every 17 sentences, after a template's preamble."""
    rng = random.Random(seed)
    out = []
    for n, sentence in enumerate(re.split(r"(?<=[.!?])\s+", " ".join(text.split()))):
        words = sentence.split()
        if len(words) > 6 and rng.random() < 0.3:
            k = rng.randrange(1, len(words) - 1)
            words[k] = rf"\emph{{{words[k]}}}"
        sentence = " ".join(words)
        if rng.random() < 0.4:
            sentence = sentence[:-1] + rf"~\cite{{smith{rng.randrange(1990, 2024)}}}" + sentence[-1]
        out.append(sentence + ("\n\n" if n % 5 == 4 else " "))
        if n % 17 == 16:
            out.append(f"\n\\section{{Part {n}}}\\label{{sec:{n}}}\n")
    return PREAMBLE % (title or f"Report {seed}", f"Student {seed}") + "".join(out) + "\n\\end{document}\n"


def test_the_typeset_text_and_what_the_page_does_not_show(pm) -> None:
    source = (PREAMBLE % (r"On caf\'es and na\"{\i}ve r\^oles", r"Ana L\'opez\thanks{Grenoble}") + r"""
\section[Short]{Introduction}\label{sec:intro}
The \emph{first} result~\cite[p.~4]{knuth1984} holds for 50\% of cases (see Figure~\ref{fig:one}).
``Quoted'' text, a \href{https://example.org}{linked phrase} and a note\footnote{In the margin.}.
% TODO: remove the copied paragraph before submitting
\begin{tabular}{l|cc}
Country & Capital \\ \hline
Austria & Vienna \\[2pt]
\end{tabular}
\begin{itemize}
  \item First point
  \item[b)] Second point
\end{itemize}
\begin{verbatim}
x = {a: 1}  % not a comment
\end{verbatim}
\begin{comment}
A paragraph hidden from the PDF.
\end{comment}
\end{document}
Notes after the end, which LaTeX never reads.
""").encode()
    assert detect_mime(source) == LATEX_MIME
    read = extract_bytes(source, LATEX_MIME, pm)
    assert (read.status, read.extractor) == (TextStatus.OK, "latex")
    assert read.body == (
        "On cafés and naïve rôles\nAna López Grenoble\n\nIntroduction\n"
        "The first result holds for 50% of cases (see Figure ). "
        '"Quoted" text, a linked phrase and a note In the margin..\n'
        "Country Capital\nAustria Vienna\n\nFirst point\n[b)] Second point\n\nx = {a: 1} % not a comment")
    assert read.region_texts == [("TODO: remove the copied paragraph before submitting", "LaTeX comments"),
                                 ("A paragraph hidden from the PDF.", "commented-out blocks"),
                                 ("Notes after the end, which LaTeX never reads.", "text after \\end{document}")]
    assert read.meta["preamble"].startswith("11 lines")


def test_a_chapter_file_is_latex_and_prose_about_latex_is_not() -> None:
    assert detect_mime(b"\\chapter{Results}\nThe measurements \\cite{a} show...\n") == LATEX_MIME
    assert detect_mime(b"To start a section, type \\section{Title} on a line of its own.\n") == "text/plain"


def test_unclosed_arguments_hide_nothing_and_take_linear_time(pm) -> None:
    """A citation or option that never closes is text, not an argument swallowing the rest; 100,000 of them
    (and of open groups and environments) are read in one pass."""
    hidden = extract_bytes(rb"\cite{ the leaked paragraph stays here" + b" word" * 600, LATEX_MIME, pm)
    assert "the leaked paragraph stays here" in hidden.text
    option = extract_bytes(rb"\section[ an option never closed, then the text" + b" word" * 200, LATEX_MIME, pm)
    assert "an option never closed" in option.text
    nested = extract_bytes(rb"\section[ a [ b ] the paragraph after it" + b" word" * 200 + b"]{T}", LATEX_MIME, pm)
    assert "the paragraph after it" in nested.text  # the inner ] closes the inner [, not the option
    keys = extract_bytes(rb"\cite{ a { b } the paragraph after it" + b" word" * 600 + b"}", LATEX_MIME, pm)
    assert "the paragraph after it" in keys.text
    hostile = (rb"\cite{" * 100_000 + rb"\emph[" * 100_000 + rb"\begin{" * 100_000 + b"end")
    started = time.perf_counter()
    read = extract_bytes(hostile, LATEX_MIME, pm)
    assert time.perf_counter() - started < 20
    assert read.status is TextStatus.OK and read.text.endswith("end")


def test_reports_from_one_template_pair_only_by_their_text(tmp_path: Path) -> None:
    """Seven LaTeX reports with one preamble, read as text, shared its passage (every pair paired); now only
    the report that copies a text is paired, with it."""
    folder = tmp_path / "reports"
    folder.mkdir()
    source = prose(4_242, 900)
    (folder / "source.txt").write_text(source, encoding="utf-8")
    (folder / "copy.tex").write_text(report(source, 1), encoding="utf-8")
    for k in range(6):
        (folder / f"other{k}.tex").write_text(report(prose(5_100 + k, 700), 10 + k), encoding="utf-8")
    found, pairs = scanned_pairs(folder, tmp_path / "i.db", "--no-semantic")
    assert set(pairs) == {frozenset(("source.txt", "copy.tex"))}
    assert pairs[frozenset(("source.txt", "copy.tex"))]["share_a"] >= 0.95
    assert found["partial"] == []
