"""The pushed screens: the pair view (two documents side by side), an alert's evidence and the help."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Static

from scanner.core.display import visible
from scanner.faces.tui.model import SKETCH_ROWS, PairTexts, shown_as_copy
from scanner.faces.tui.widgets import PassageTextArea, ProfileStrip, SideTitle

KEYS_HELP = f"""\
[b]scanner[/b]: near-duplicates, containment and passage evidence in one index

[b]Everywhere[/b]
  1 … 5        Findings, Check, Scan, Watch, Export tabs
  ctrl+p       command palette (every action by name)
  ? / f1       this help
  q / ctrl+q   quit (stops a running watch first)

[b]Findings[/b]
  /            filter by path
  enter        open the selected pair side by side
  s / S        sort by the next column / reverse (or click a header)
  r            reload the findings from the index
  d            documents view (share of each found elsewhere) / pairs
Passage pairs past the first {SKETCH_ROWS:,}: scored from their shares (edits "–").

[b]Documents view[/b]
  enter        on a document: its sources; on a source: both side by side
  escape       from the sources back to the documents

[b]Watch alerts[/b] (newest first)
  enter        evidence: the watched file beside the protected text
  r            mark reviewed
  a            mark allowed: its passages never alert again (allow list)

[b]Pair view[/b]
  n / p        next / previous shared passage, on both sides at once
  s            an alert's evidence: the next protected source
  tab          switch between the two documents
  escape       back
Shared passages are underlined and shaded; the current one is selected.
They are the passages the scan stored, or aligned on opening when none are.
The strip shows where along A the two documents differ (Coates profile).

[b]Check, Scan, Watch, Export[/b]
  →            accept the path completion
  enter        run (check, scan, watch, write)
  escape       leave the field (then digits switch tabs again)
  x            cancel a running scan (after the current file)
"""


class HelpScreen(ModalScreen[None]):
    """Every key binding on one page."""

    BINDINGS = [Binding("escape,question_mark,f1", "dismiss", "Close", key_display="esc")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(KEYS_HELP, id="help-text")
            yield Static("[dim]escape closes[/dim]")

    def action_dismiss(self, result: Any = None) -> None:  # type: ignore[override]
        self.dismiss(None)


class PairScreen(Screen[None]):
    """Two documents side by side; every shared passage is painted, the current one selected in both."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("n", "next_passage", "Next passage"),
        Binding("p", "previous_passage", "Previous passage"),
    ]

    def __init__(self, pair: PairTexts) -> None:
        super().__init__()
        self.pair = pair
        self.current = -1

    def compose(self) -> ComposeResult:
        yield Header()
        metrics = Text()
        for name, value in self.pair.metrics.items():
            metrics.append(f"{name} ", style="bold")
            metrics.append(f"{value}   ")
        yield Static(metrics, id="metrics")
        yield ProfileStrip(self.pair.profile, id="profile")
        spans_a = tuple((a0, a1) for a0, a1, _, _ in self.pair.passages)
        spans_b = tuple((b0, b1) for _, _, b0, b1 in self.pair.passages)
        kinds = tuple(self.pair.kind(i) for i in range(len(self.pair.passages)))
        with Horizontal(id="sides"):
            with Vertical():
                yield SideTitle(" A ", self.pair.title_a, classes="side-title")
                yield PassageTextArea(self.pair.text_a, spans_a, kinds=kinds, id="side-a")
            with Vertical():
                yield SideTitle(" B ", self.pair.title_b, classes="side-title")
                yield PassageTextArea(self.pair.text_b, spans_b, kinds=kinds, id="side-b")
        yield Static("", id="passage-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#side-a", PassageTextArea).focus()
        if self.pair.passages:
            self.action_next_passage()
        else:
            self.query_one("#passage-status", Static).update("no shared passage of the guaranteed length")

    def _show(self, number: int) -> None:
        self.current = number
        a0, a1, b0, b1 = self.pair.passages[number]
        for selector, text, start, end in (("#side-a", self.pair.text_a, a0, a1),
                                           ("#side-b", self.pair.text_b, b0, b1)):
            area = self.query_one(selector, PassageTextArea)
            area.selection = _selection(text, start, end)
            self.call_after_refresh(_scroll_to_start, area, _location(text, start))
        words = len(self.pair.text_a[a0:a1].split())
        label = self.pair.label(number)
        kind = f" ({label})" if label else ""
        alike = "=" if shown_as_copy(self.pair.kind(number)) else "≈"  # reworded or semantic: not the same words
        self.query_one("#passage-status", Static).update(
            f"passage {number + 1}/{len(self.pair.passages)}{kind}: {words} words, A[{a0}:{a1}] {alike} "
            f"B[{b0}:{b1}]{visible(self.pair.where(number))}   (n/p)")

    def action_next_passage(self) -> None:
        if self.pair.passages:
            self._show((self.current + 1) % len(self.pair.passages))

    def action_previous_passage(self) -> None:
        if self.pair.passages:
            self._show((self.current - 1) % len(self.pair.passages))

    def selected_texts(self) -> tuple[str, str]:
        """The current passage as selected on each side (what the tests read)."""
        return (self.query_one("#side-a", PassageTextArea).selected_text,
                self.query_one("#side-b", PassageTextArea).selected_text)


class EvidenceScreen(PairScreen):
    """An alert's evidence: the watched file (A; a member of it, named in its title, for a leak inside an archive
    or a mail) beside each protected source it leaks (B), one source at a time, with the alert's passages."""

    BINDINGS = [Binding("s", "next_source", "Next source")]

    def __init__(self, pairs: tuple[PairTexts, ...]) -> None:
        super().__init__(pairs[0])
        self.pairs = pairs
        self.source = 0

    async def action_next_source(self) -> None:
        if len(self.pairs) > 1:
            self.source = (self.source + 1) % len(self.pairs)
            self.pair, self.current = self.pairs[self.source], -1
            await self.recompose()
            self.on_mount()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return len(self.pairs) > 1 if action == "next_source" else True


def _location(text: str, offset: int) -> tuple[int, int]:
    """(row, column) of a character offset: TextArea's coordinates."""
    return text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


def _selection(text: str, start: int, end: int) -> Any:
    from textual.widgets.text_area import Selection

    return Selection(_location(text, start), _location(text, end))


def _scroll_to_start(area: PassageTextArea, location: tuple[int, int]) -> None:
    """Put the first line of the passage near the top of its pane (after wrapping is known)."""
    y = area.wrapped_document.location_to_offset(location).y
    area.scroll_to(y=max(y - 1, 0), animate=False)
