"""Widgets the screens share: path completion, passage-painting text panes, the profile strip."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import DataTable, TextArea

from scanner.faces.tui.model import BLOCKS, line_spans, resample

# underline as well as colour, so passages still show under NO_COLOR
PASSAGE_STYLE = Style(bgcolor="#1f4d3a", underline=True)
# a semantic passage (alike in meaning, few words in common) never looks like a copy: its own shade, and
# italics for NO_COLOR
SEMANTIC_STYLE = Style(bgcolor="#4b2e63", underline=True, italic=True)


FIRST_ROWS = 200  # rows a table gets before its first frame; the rest follow in chunks, a frame between
_CHUNK_ROWS = 250


def fitted_widths(columns: Sequence[str], cell_rows: Iterable[Sequence[str]]) -> list[int]:
    """Each column as wide as its header and its widest cell (in terminal cells)."""
    widths = [cell_len(name) for name in columns]
    for cells in cell_rows:
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], cell_len(cell))
    return widths


def fill_data_table(table: DataTable, columns: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Replace a table's columns and rows: (key, cells) per row, cells as the text to show.

    Cells go in as plain `Text`, never parsed as markup: file names such as
    "report [final].txt" would otherwise lose their brackets or, with "[/x]",
    stop the app. Columns get explicit widths that fit their cells, because
    Textual sizes auto-width columns only once the table is idle, and a frame
    drawn before that stays cached with header-wide, truncated columns.
    A row costs Textual ~0.4 ms: the first FIRST_ROWS (several screens) go in
    now, the rest after each refresh, so 2,000 rows do not hold the first frame
    for most of a second; a refill started meanwhile stops the older one.
    """
    widths = fitted_widths(columns, (cells for _, cells in rows))
    table.clear(columns=True)
    for name, width in zip(columns, widths):
        table.add_column(name, key=name, width=width)
    fill = object()  # this fill's token: a later fill replaces it
    setattr(table, "scanner_fill", fill)  # noqa: B010 - an attribute of this app's, on Textual's widget

    def add(start: int) -> None:
        if getattr(table, "scanner_fill", None) is not fill:
            return
        end = min(len(rows), start + (FIRST_ROWS if start == 0 else _CHUNK_ROWS))
        for key, cells in rows[start:end]:
            table.add_row(*(Text(cell) for cell in cells), key=key)
        if end < len(rows):
            table.call_after_refresh(add, end)

    add(0)


class PathSuggester(Suggester):
    """Completes file-system paths as they are typed (accept with the right arrow)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        from scanner.faces.tui.model import path_suggestion

        return path_suggestion(value)


class PassageTextArea(TextArea):
    """A read-only text pane that paints every shared passage; the current one is the selection.

    `kinds`: of each span when known; semantic passages are painted in a style of their own."""

    def __init__(self, text: str, spans: tuple[tuple[int, int], ...], *, kinds: tuple[str, ...] = (),
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(text, read_only=True, soft_wrap=True, show_line_numbers=False, name=name, id=id,
                         classes=classes)
        self.cursor_blink = False  # a steady screen (and deterministic snapshots)
        self._spans = line_spans(text, spans)
        self._semantic_spans = line_spans(text, tuple(span for span, kind in zip(spans, kinds)
                                                      if kind == "semantic"))

    def get_line(self, line_index: int) -> Text:
        """TextArea's documented hook for extra styling of a line."""
        line = super().get_line(line_index)
        for start, end in self._spans.get(line_index, ()):
            line.stylize(PASSAGE_STYLE, start, end)
        for start, end in self._semantic_spans.get(line_index, ()):
            line.stylize(SEMANTIC_STYLE, start, end)
        return line


class ScoreHistogram(Widget):
    """Counts per 0..1 bin as text bars (steady, and readable without colour): pairs by resemblance, or in
    the documents view, documents by share found elsewhere."""

    DEFAULT_CSS = "ScoreHistogram { height: 3; width: 24; }"

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.counts: list[int] = []
        self.label = "pairs by resemblance"

    def update(self, counts: list[int], label: str | None = None) -> None:
        self.counts = list(counts)
        if label is not None:
            self.label = label
        self.refresh()

    def render(self) -> Text:
        top = max(self.counts, default=0)
        out = Text(f"{self.label}\n", style="dim")
        for count in self.counts:
            level = 0 if top == 0 or count == 0 else max(1, round(count / top * (len(BLOCKS) - 1)))
            out.append((BLOCKS[level] if level else "▁") * 2, style="bold" if level else "dim")
        width = 2 * len(self.counts)
        out.append("\n" + "0".ljust(width // 2) + "1".rjust(width - width // 2), style="dim")
        return out


class SideTitle(Widget):
    """One line naming a pane's document; a long path keeps its end (the file name) visible."""

    DEFAULT_CSS = "SideTitle { height: 1; }"

    def __init__(self, label: str, path: str, *,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.label, self.path = label, path

    def render(self) -> Text:
        room = max(self.size.width - len(self.label) - 2, 4)
        path = self.path if len(self.path) <= room else "…" + self.path[-(room - 1):]
        return Text.assemble((self.label, "bold reverse"), " ", (path, "bold"))


class ProfileStrip(Widget):
    """The Coates difference profile across the widget's width: tall red blocks = where A and B differ."""

    DEFAULT_CSS = "ProfileStrip { height: 1; }"

    def __init__(self, profile: tuple[float, ...], *,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.profile = profile

    def render(self) -> Text:
        label = "differences along A "
        width = max(self.size.width - len(label) - 2, 1)
        strip = Text(label, style="bold")
        strip.append("▕")
        if not self.profile:
            strip.append("(no profile)".ljust(width), style="dim")
        for value in resample(self.profile, width):
            block = BLOCKS[min(int(round(value * (len(BLOCKS) - 1))), len(BLOCKS) - 1)]
            colour = "green" if value < 0.25 else "yellow" if value < 0.6 else "red"
            strip.append(block if value > 0 else "▁", style=colour if value > 0 else "dim green")
        strip.append("▏")
        return strip
