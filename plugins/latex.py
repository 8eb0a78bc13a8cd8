"""LaTeX sources (theses, papers, reports) as their typeset text, not as their commands.

Read as text, a LaTeX source's words were its commands' as well as its author's: every `\\cite{smith2020}`,
`\\emph{...}` and `~\\ref{fig:3}` put command names and keys inside a sentence, so a copy of a text marked
up in LaTeX lost its 7-word runs around each of them, and any two documents with one preamble (a course's
template, a journal's class and its thirty `\\usepackage` lines) shared a passage of it (seven unrelated
reports with one preamble: all 21 pairs paired). The text is now what the document typesets: the preamble
gives only its title, authors and date; commands are dropped and their arguments kept, but for the
commands whose arguments are no text (citations, references, labels, file names, lengths: `_NOT_TEXT`),
which go with them; accents and escaped characters become letters (`caf\\'e` is "café"); sectioning and
environments make lines, table cells are spaced. What the typeset document does not show is kept as
marked regions: comments (`% ...`), `comment` environments and whatever follows `\\end{document}`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from scanner.core.model import Extracted
from scanner.sources.extract.encoding import decode_text
from scanner.sources.extract.routing import LATEX_MIME
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "latex"
# commands whose arguments (braced, and any optional [...]) are not text: they go with the command
_NOT_TEXT = frozenset("""
    cite citep citet citealp citeauthor citeyear citetitle parencite textcite autocite footcite fullcite
    nocite ref eqref autoref cref Cref pageref nameref vref label includegraphics input include
    includeonly bibliography bibliographystyle printbibliography addbibresource usepackage
    documentclass RequirePackage url hspace vspace setlength addtolength setcounter addtocounter
    newcounter pagestyle thispagestyle pagenumbering definecolor color colorbox fontsize selectfont
    newcommand renewcommand providecommand newenvironment renewenvironment DeclareMathOperator
    newtheorem theoremstyle graphicspath hypersetup geometry lstset raisebox rule href
""".split())
_ARGUMENTS = {"newcommand": 2, "renewcommand": 2, "providecommand": 2, "newenvironment": 3, "renewenvironment": 3,
              "setlength": 2, "addtolength": 2, "setcounter": 2, "addtocounter": 2, "definecolor": 3,
              "colorbox": 1, "fontsize": 2, "DeclareMathOperator": 2, "newtheorem": 2, "raisebox": 1, "rule": 2}
_TITLE = frozenset({"title", "author", "date", "subtitle"})  # the preamble's text (what \maketitle sets)
_HEADINGS = frozenset("part chapter section subsection subsubsection paragraph subparagraph caption".split())
_BLOCKS = _HEADINGS | frozenset("item maketitle par newline linebreak newpage clearpage pagebreak bibitem".split())
_APART = frozenset({"footnote", "footnotetext", "thanks", "marginpar"})  # text set apart from the word before
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")  # a blank line ends a paragraph; a single line end is a space
_VERBATIM = frozenset({"verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt"})
_TABLES = frozenset({"tabular", "tabular*", "tabularx", "array", "longtable", "tabu"})  # a column spec follows
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
            "r": "\u030a", "d": "\u0323", "b": "\u0331"}
_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å",
            "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dots": "…", "ldots": "…", "LaTeX": "LaTeX", "TeX": "TeX",
            "textendash": "–", "textemdash": "—", "S": "§", "P": "¶", "pounds": "£", "euro": "€",
            "copyright": "©", "textregistered": "®", "texttrademark": "™", "textdegree": "°"}
_SPACES = frozenset({",", ";", ":", "!", " ", "quad", "qquad", "enspace", "thinspace", "\n", "\t"})
# one token: a command (a word, or one character), a brace or a bracket, a comment, a table's cell mark,
# a tie, a quote pair, or a run of other text (math included: its commands are commands like any other)
_TOKEN = re.compile(r"""\\([A-Za-z@]+\*?|.)|(\{)|(\})|(\[)|(\])|(%[^\n]*\n?)|(&)|(~)|(``|'')"""
                    r"""|([^\\{}\[\]%&~`']+|[`'])""", re.DOTALL)
_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_END_DOCUMENT = re.compile(r"\\end\s*\{document\}")
_ENVIRONMENT = re.compile(r"\s*\{([^{}]*)\}")
_SPACE = re.compile(r"[ \t]+")
_OPTION, _KEYS = 500, 2000  # the longest option, and argument dropped with its command (characters)


_GROUP_MARK = re.compile(r"\\.|[{}\[\]]", re.DOTALL)


def _matched(source: str) -> tuple[dict[int, int], dict[int, int]]:
    """Where each `{` and each `[` closes (escaped ones are no marks), by their offsets; unclosed: absent."""
    braces: dict[int, int] = {}
    brackets: dict[int, int] = {}
    open_braces: list[int] = []
    open_brackets: list[int] = []
    for mark in _GROUP_MARK.finditer(source):
        char, at = mark.group(), mark.start()
        if char == "{":
            open_braces.append(at)
        elif char == "}" and open_braces:
            braces[open_braces.pop()] = at
        elif char == "[":
            open_brackets.append(at)
        elif char == "]" and open_brackets:
            brackets[open_brackets.pop()] = at
    return braces, brackets


def _skip_to(tokens: Iterator[re.Match[str]], closing: int) -> None:
    """Consume the tokens up to and with the one at `closing` (a group's closing mark)."""
    for token in tokens:
        if token.start() >= closing:
            return


def _accented(mark: str, letter: str) -> str:
    """A letter with the combining accent `mark` names, composed where Unicode has the composed letter."""
    letter = {"ı": "i", "ȷ": "j"}.get(letter, letter)  # \'{\i}: the dotless i takes the accent's place
    return unicodedata.normalize("NFC", letter + _ACCENTS[mark]) if letter else ""


class _Reader:
    """One pass over the source's tokens; a stack says, for each open brace, whether its text is kept.

    `preamble`: nothing is kept but the arguments of the title commands (`_TITLE`)."""

    def __init__(self, preamble: bool = False) -> None:
        self.preamble = preamble
        self.out: list[str] = []
        self.comments: list[str] = []
        self.hidden: list[str] = []  # `comment` environments
        self.keep: list[bool] = [not preamble]  # the text outside groups, then one per open group
        self.ends_line: list[bool] = [False]  # per open group: a heading's, whose close ends its line
        self.heading = False  # the next braced argument is a heading's
        self.drop_args = 0  # braced arguments of the last command still to drop
        self.keep_next = False  # the next braced argument is a title's (in the preamble)
        self.after_command = False  # an optional [...] right after a command is its option, not text
        self.accent = ""  # an accent command waiting for its letter

    def _emit(self, text: str) -> None:
        if not self.keep[-1]:
            return
        if self.accent:
            mark, self.accent = self.accent, ""
            text = text.lstrip()
            if text:
                text = _accented(mark, text[0]) + text[1:]
        self.out.append(text)

    def read(self, source: str) -> None:
        """The source's text by its tokens, in one pass (groups matched first, in one more: linear)."""
        braces, brackets = _matched(source)
        tokens = _TOKEN.finditer(source)
        for token in tokens:
            command, open_, close, bracket_open, bracket_close, comment, cell, tie, quote, text = token.groups()
            if comment is not None:
                if comment[1:].strip():
                    self.comments.append(comment[1:].strip())
                continue
            if bracket_open is not None and self.after_command:
                # an option: it closes soon after its command; a `[` that does not is text (it hides nothing)
                closing = brackets.get(token.start(), -1)
                if 0 <= closing - token.start() <= _OPTION:
                    _skip_to(tokens, closing)
                    continue
            if open_ is not None and self.drop_args:
                # an argument that is no text (a key, a file, a length): short; a long one is text after all
                closing = braces.get(token.start(), -1)
                if 0 <= closing - token.start() <= _KEYS:
                    _skip_to(tokens, closing)
                    self.drop_args -= 1
                    self.after_command = self.drop_args > 0
                    continue
                self.drop_args = 0
            if open_ is not None:
                self.keep.append(self.keep_next or self.keep[-1])
                self.ends_line.append(self.heading)
                self.keep_next = self.heading = self.after_command = False
                continue
            if close is not None:
                if len(self.keep) > 1:
                    self.keep.pop()
                    if self.ends_line.pop():
                        self._emit("\n")
                continue
            if text is not None and (self.drop_args or self.after_command) and not text.strip():
                continue  # white space between a command and its arguments
            self.drop_args = 0  # an argument not braced (`\cite x`): none left to drop
            self.after_command = False
            if command is not None:
                self._command(command, source, token.end(), tokens)
            elif bracket_open is not None or bracket_close is not None:
                self._emit(token.group())
            elif cell is not None or tie is not None:
                self._emit(" ")
            elif quote is not None:
                self._emit('"')
            elif text is not None:
                self._emit(_PARAGRAPH.sub("\0", text).replace("\n", " ").replace("\0", "\n\n"))

    def _command(self, name: str, source: str, end: int, tokens: "Iterator[re.Match[str]]") -> None:
        if name in _ACCENTS and not self.accent:
            self.accent = name
            return
        if name in ("begin", "end"):
            found = _ENVIRONMENT.match(source, end)
            environment = found.group(1).strip() if found else ""
            if found:  # its name: consumed here
                while next(tokens).end() < found.end():
                    pass
            self._emit("\n")
            if name == "begin" and environment in _TABLES:
                self.drop_args, self.after_command = 1, True
            elif name == "begin" and environment in _VERBATIM | {"comment"}:
                self._verbatim(environment, source, found.end() if found else end, tokens)
            return
        if name in _NOT_TEXT:
            self.drop_args, self.after_command = _ARGUMENTS.get(name.rstrip("*"), 1), True
            return
        if self.preamble and name in _TITLE:
            self.keep_next, self.after_command = True, True
            self.out.append("\n")
            return
        if name in _APART:
            self._emit(" ")
            self.after_command = True
        elif name in _LETTERS:
            self._emit(_LETTERS[name])
        elif name in _SPACES:
            self._emit(" ")
        elif name == "\\":
            self._emit("\n")
            self.after_command = True  # `\\[2pt]`
        elif name in "%&$#_{}":
            self._emit(name)
        elif name.rstrip("*") in _BLOCKS:
            self._emit("\n")
            self.after_command = name.rstrip("*") != "item"  # `\section[short]{Long}`: the short title goes
            self.heading = name.rstrip("*") in _HEADINGS
        elif name == "-" or name == "/":
            pass  # a hyphenation point, an italic correction
        else:
            self.after_command = True  # any other command: its name goes, its braced arguments stay

    def _verbatim(self, environment: str, source: str, start: int,
                  tokens: "Iterator[re.Match[str]]") -> None:
        """A verbatim environment's content as written (a `comment` one's as a hidden region)."""
        closing = re.compile(r"\\end\s*\{" + re.escape(environment) + r"\}").search(source, start)
        stop = closing.end() if closing else len(source)
        content = source[start:closing.start() if closing else len(source)]
        (self.hidden if environment == "comment" else self.out).append(content if environment == "comment"
                                                                        else "\n" + content + "\n")
        for token in tokens:
            if token.end() >= stop:
                break


def _tidy(pieces: list[str]) -> str:
    lines = (_SPACE.sub(" ", line).strip() for line in "".join(pieces).split("\n"))
    text: list[str] = []
    blank = False
    for line in lines:  # a blank line (a new paragraph) kept, runs of them one
        if line:
            if blank and text:
                text.append("")
            text.append(line)
        blank = not line
    return "\n".join(text)


def latex_text(source: str) -> tuple[str, list[tuple[str, str]], dict[str, str]]:
    """(body, regions as (label, text), meta) of a LaTeX source."""
    begin = _DOCUMENT.search(source)
    end = _END_DOCUMENT.search(source, begin.end() if begin else 0)
    body_source = source[begin.end() if begin else 0:end.start() if end else len(source)]
    reader = _Reader()
    meta: dict[str, str] = {}
    if begin:  # the preamble: only what \maketitle sets
        titles = _Reader(preamble=True)
        titles.read(source[:begin.start()])
        reader.out.extend(titles.out + ["\n"])
        reader.comments.extend(titles.comments)
        meta["preamble"] = f"{source[:begin.start()].count(chr(10))} lines: package and macro definitions not read"
    reader.read(body_source)
    regions = [("LaTeX comments", "\n".join(c.strip() for c in reader.comments if c.strip())),
               ("commented-out blocks", "\n".join(reader.hidden).strip())]
    if end and source[end.end():].strip():
        regions.append(("text after \\end{document}", source[end.end():].strip()))
    return _tidy(reader.out), regions, meta


def extract_latex(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    text, encoding = decode_text(data)
    body, regions, meta = latex_text(text.replace("\r\n", "\n").replace("\r", "\n"))
    return Extracted(text=body, extractor=NAME, meta={"encoding": encoding, **meta}).with_regions(regions)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=(LATEX_MIME,), priority=50, extract=extract_latex)]
