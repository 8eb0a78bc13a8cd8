"""Widgets the screens share: path completion, passage-painting text panes, the profile strip."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import TextArea

from scanner.tui.model import BLOCKS, line_spans, resample

# underline as well as colour, so passages still show under NO_COLOR
PASSAGE_STYLE = Style(bgcolor="#1f4d3a", underline=True)


class PathSuggester(Suggester):
    """Completes file-system paths as they are typed (accept with the right arrow)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        from scanner.tui.model import path_suggestion

        return path_suggestion(value)


class PassageTextArea(TextArea):
    """A read-only text pane that paints every shared passage; the current one is the selection."""

    def __init__(self, text: str, spans: tuple[tuple[int, int], ...], **kwargs: object) -> None:
        super().__init__(text, read_only=True, soft_wrap=True, show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self._spans = line_spans(text, spans)

    def get_line(self, line_index: int) -> Text:
        """TextArea's documented hook for extra styling of a line."""
        line = super().get_line(line_index)
        for start, end in self._spans.get(line_index, ()):
            line.stylize(PASSAGE_STYLE, start, end)
        return line


class ProfileStrip(Widget):
    """The Coates difference profile across the widget's width: tall red blocks = where A and B differ."""

    DEFAULT_CSS = "ProfileStrip { height: 1; }"

    def __init__(self, profile: tuple[float, ...], **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
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
