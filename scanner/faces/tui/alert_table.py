"""The Watch tab's table of alert groups, newest first, with the review keys."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from scanner.faces.tui.alerts import (
    ALERT_COLUMNS,
    PATH_COLUMNS,
    AlertRow,
    alert_cells,
    alert_row,
    path_widths,
    with_copies,
)
from scanner.faces.tui.messages import AlertReview
from scanner.faces.tui.model import TABLE_ROWS
from scanner.faces.tui.widgets import fitted_widths

SEVERITY_STYLES = {"high": "bold red", "medium": "yellow", "low": ""}
REVIEW_STYLES = {"new": "bold", "reviewed": "dim", "allowed": "green"}
NARROW = 110  # a table narrower than this shows times without the year


class AlertTable(DataTable[Text]):
    """Alert groups newest first (by alert id: the index's order), at most TABLE_ROWS of them.

    Rows are kept here, by key, so a live alert goes on top, a follow-up only counts more copies on its group's
    row and a review changes its row's state. DataTable cannot insert a row above others: the table is drawn
    again, once per batch of changes (a burst of alerts is one redraw), the cursor staying on its alert.
    """

    BINDINGS = [
        Binding("enter", "select_cursor", "Evidence"),
        Binding("r", "review('reviewed')", "Reviewed"),
        Binding("a", "review('allowed')", "Allow"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.alert_rows: dict[str, AlertRow] = {}  # by row key, newest first
        self.more = False  # older alerts than these are in the index (or were dropped past TABLE_ROWS)
        self._unnumbered = 0
        self._drawn = True  # no redraw pending
        self._width = 0  # the width the path columns were fitted to

    def on_mount(self) -> None:
        self._draw()

    def on_resize(self) -> None:
        """The path columns fit a new width (a change of rows resizes the content only: no redraw)."""
        if self.size.width != self._width:
            self._changed()

    # ---- changes --------------------------------------------------------------------------------------------

    def add_stored(self, rows: Iterable[AlertRow], more: bool = False) -> None:
        """The alerts the index holds (newest first), merged with any live ones that came first."""
        for row in rows:
            self.alert_rows.setdefault(self._key(row), row)
        self.more = self.more or more
        self._changed()

    def add_alert(self, alert: Any) -> AlertRow | None:
        """A live alert on top, or a follow-up's copies added to its group's row (None: that group is not in
        the table, it is older than the rows shown)."""
        row = alert_row(alert)
        key = self._key(row)
        known = self.alert_rows.get(key)
        if getattr(alert, "followup", False):
            if known is None:
                return None
            row = self.alert_rows[key] = with_copies(known, row.paths)
        elif known is not None:  # stored before the table loaded it: keep its place and review state
            row = self.alert_rows[key] = with_copies(known, row.paths)
        else:
            self.alert_rows[key] = row
        self._changed()
        return row

    def set_review(self, alert_id: int, review: str) -> None:
        row = self.alert_rows.get(f"alert-{alert_id}")
        if row is not None:
            self.alert_rows[f"alert-{alert_id}"] = replace(row, review=review)
            self._changed()

    def row_of(self, alert_id: int) -> AlertRow | None:
        return self.alert_rows.get(f"alert-{alert_id}")

    def selected(self) -> AlertRow | None:
        """The alert under the cursor."""
        key = self._cursor_key()
        return None if key is None else self.alert_rows.get(key)

    def _cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def _key(self, row: AlertRow) -> str:
        if row.alert_id is not None:
            return f"alert-{row.alert_id}"
        self._unnumbered += 1  # an alert the index gave no id (not from a watch of this index): its own row
        return f"live-{self._unnumbered}"

    def _changed(self) -> None:
        """Draw once, after the messages already queued (the rest of a burst of alerts)."""
        if self._drawn:
            self._drawn = False
            self.call_later(self._draw)

    def _draw(self) -> None:
        """Newest first, capped at TABLE_ROWS, each column as wide as its cells; the cursor stays on its alert."""
        self._drawn, self._width = True, self.size.width
        current = self._cursor_key()
        ordered = sorted(self.alert_rows.items(), key=lambda item: _order(item[1]), reverse=True)
        if len(ordered) > TABLE_ROWS:
            self.more = True
            ordered = ordered[:TABLE_ROWS]
        self.alert_rows = dict(ordered)
        short_time = 0 < self.size.width < NARROW
        whole = [alert_cells(row, short_time=short_time) for _, row in ordered]
        widths = fitted_widths(ALERT_COLUMNS, whole)
        # the path columns share what the others leave of the width (each cell is padded by 1 on both sides,
        # and the vertical scrollbar takes 2); before the first layout, 80 cells
        others = sum(w + 2 for i, w in enumerate(widths) if i not in PATH_COLUMNS)
        room = self.size.width - others - 2 * len(PATH_COLUMNS) - 2 if self.size.width else 80
        fit = path_widths(whole, room)
        cells = [(key, alert_cells(row, fit, short_time)) for key, row in ordered]
        widths = fitted_widths(ALERT_COLUMNS, (row_cells for _, row_cells in cells))
        self.clear(columns=True)
        for name, width in zip(ALERT_COLUMNS, widths):
            self.add_column(name, key=name, width=width)
        for key, row_cells in cells:
            styled = [Text(cell) for cell in row_cells]  # plain text: a path is never markup
            for column, styles in ((1, SEVERITY_STYLES), (6, REVIEW_STYLES)):
                if styles.get(row_cells[column]):
                    styled[column].stylize(styles[row_cells[column]])
            self.add_row(*styled, key=key)
        if current is not None and current in self.alert_rows:
            self.move_cursor(row=self.get_row_index(current), animate=False)
        self.refresh_bindings()

    # ---- keys -----------------------------------------------------------------------------------------------

    def action_review(self, review: str) -> None:
        row = self.selected()
        if row is not None and row.alert_id is not None:
            self.post_message(AlertReview(row.alert_id, review))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys show only where there is an alert to act on."""
        if action in ("review", "select_cursor"):
            return self.row_count > 0
        return True


def _order(row: AlertRow) -> tuple[float, float]:
    """Newest first: the index's alert id (live ones without an id by time, above every stored one)."""
    return (float("inf") if row.alert_id is None else float(row.alert_id), row.time)
