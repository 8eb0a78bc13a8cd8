"""The Textual app: findings (pairs and documents), pair view, check, scan, watch and export over one index.

`make_app` is the one way to build it (the CLI and the tests both use it).
Everything that touches the index or the file system runs in a thread worker
that posts a small typed message back (scanner/faces/tui/messages.py); handlers on
the app's thread update the widgets, so the event loop never waits on I/O.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    Button,
    Checkbox,
    ContentSwitcher,
    DataTable,
    Footer,
    Header,
    Input,
    ProgressBar,
    RichLog,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from scanner.core.config import Params
from scanner.core.display import printable, readable, visible, with_errors
from scanner.engine.align import condenses
from scanner.faces.report.formats import FORMATS
from scanner.faces.tui.alert_table import AlertTable
from scanner.faces.tui.alerts import (
    REVIEW_WAIT,
    AlertRow,
    alert_row,
    allow_list_path,
    allow_passages,
    evidence_pairs,
    local_time,
    passages_to_allow,
    watched_texts,
    write_review,
)
from scanner.faces.tui.messages import (
    AlertReview,
    AlertReviewed,
    AlertsLoaded,
    CheckComplete,
    CheckedPart,
    CheckFailed,
    EvidenceReady,
    ExportDone,
    FindingsLoaded,
    PairReady,
    ScanComplete,
    ScanProgress,
    ScanStatus,
    WatchAlert,
    WatchStatus,
)
from scanner.faces.tui.model import (
    TABLE_ROWS,
    FindingRow,
    FindingsView,
    load_findings,
    pair_from_index,
    pair_texts,
    passage_label,
    shown_as_copy,
)
from scanner.faces.tui.screens import EvidenceScreen, HelpScreen, PairScreen

if TYPE_CHECKING:
    from scanner.services.findings import DocumentFinding
from scanner.faces.tui.widgets import PathSuggester, ScoreHistogram, fill_data_table

TABS = ("findings", "check", "scan", "watch", "export")
FINDING_COLUMNS = ("kind", "resem.", "A in B", "B in A", "edits~", "A", "B", "size A", "size B")
NUMERIC_COLUMNS = frozenset({1, 2, 3, 4, 7, 8})  # sorted strongest / largest first
_FINDING_FIELDS = ("kind", "resemblance", "containment_a_in_b", "containment_b_in_a", "edit_distance_estimate",
                   "path_a", "path_b", "size_a", "size_b")  # what each of FINDING_COLUMNS sorts by
DOCUMENT_COLUMNS = ("document", "share %", "words", "sources", "main source", "main %")
COMMON_COLUMN = "common %"  # shown when a listed document holds very common text (Findings.common_note)
_COMMON_AT = DOCUMENT_COLUMNS.index("sources") + 1  # before the (long) main source, so a first screen shows it
SOURCE_COLUMNS = ("source", "% of document")
MATCH_COLUMNS = ("source", "% of file", "resemblance", "file in source", "source in file", "est. edits", "passages")


class _Cancelled(Exception):
    """Raised inside the scan's progress callback to stop `run_scan` between files."""


class ScannerApp(App[None]):
    """scanner's terminal interface on one index."""

    TITLE = "scanner"
    CSS_PATH = "scanner.tcss"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("slash", "filter", "Filter", show=False),
        Binding("escape", "leave_input", "Leave field", show=False),
        Binding("r", "reload", "Reload"),
        Binding("s", "sort", "Sort"),
        Binding("S", "sort_reverse", "Reverse", show=False),
        Binding("d", "findings_view('documents')", "Documents"),  # one key, two labels: check_action
        Binding("d", "findings_view('pairs')", "Pairs"),  # shows the one that applies
        Binding("x", "cancel_scan", "Cancel scan"),
        Binding("1", "tab('findings')", "Findings", show=False),
        Binding("2", "tab('check')", "Check", show=False),
        Binding("3", "tab('scan')", "Scan", show=False),
        Binding("4", "tab('watch')", "Watch", show=False),
        Binding("5", "tab('export')", "Export", show=False),
    ]

    def __init__(self, index_path: str, params: Params | None = None, *, threshold: float | None = None,
                 min_containment: float | None = None, scan_jobs: int | None = None,
                 watch_options: Any = None, semantic: bool = True, ocr: bool = True,
                 ocr_languages: str = "eng") -> None:
        super().__init__()
        self.index_path = index_path
        self.ocr = ocr  # Tesseract reads pictures in checks and scans started here (`--no-ocr`)
        self.ocr_languages = ocr_languages  # in these languages: the Scan tab's field, once a scan takes it
        self.semantic = semantic  # the semantic pass in checks and scans started here (issue 21)
        self._model: Any = None  # its sentence model, loaded on first use
        self.params_override = params
        self.thresholds: dict[str, float] = {}
        if threshold is not None:
            self.thresholds["resemblance_threshold"] = threshold
        if min_containment is not None:
            self.thresholds["min_containment"] = min_containment
        self.scan_jobs = scan_jobs
        self.watch_options = watch_options
        self.view: FindingsView | None = None
        self.rows_by_key: dict[str, FindingRow] = {}
        self.findings_mode = "pairs"  # or "documents": which table the Findings tab shows
        self.documents_by_key: dict[str, DocumentFinding] = {}
        self.documents_stale = True  # the documents table is filled when first shown, not with the pairs
        self.current_document: DocumentFinding | None = None
        self.sort_column = 1  # resemblance, strongest first
        self.sort_reverse = True
        self.scanning = False
        self.watcher: Any = None
        self.last_check: CheckComplete | None = None

    # ---- layout -------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="findings"):
            with TabPane("1 Findings", id="findings"):
                yield Static("loading the index…", id="summary")
                with Horizontal(id="findings-bar"):
                    yield Input(placeholder="/ filter by path…", id="filter")
                    yield ScoreHistogram(id="histogram")
                with ContentSwitcher(initial="pairs", id="findings-views"):
                    yield DataTable(id="pairs", cursor_type="row", zebra_stripes=True)
                    with Vertical(id="documents-view"):
                        yield DataTable(id="documents", cursor_type="row", zebra_stripes=True)
                        yield Static("", id="sources-title")
                        yield DataTable(id="sources", cursor_type="row", zebra_stripes=True)
            with TabPane("2 Check", id="check"):
                with Horizontal(classes="bar"):
                    yield Input(placeholder="file to check (→ completes, enter checks)…", id="check-path",
                                suggester=PathSuggester())
                    yield Input(placeholder="password, if locked", id="check-password", password=True)
                    yield Button("Check", id="check-run", variant="primary")
                yield Static("Type a file's path: its matches in the index and the shared passages show here.",
                             id="check-summary")
                yield DataTable(id="matches", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="check-passages-box"):
                    yield Static("", id="check-passages")
            with TabPane("3 Scan", id="scan"):
                with Horizontal(classes="bar"):
                    yield Input(placeholder="folders to scan (space-separated; → completes)…", id="scan-path",
                                suggester=PathSuggester())
                    yield Button("Start", id="scan-start", variant="primary")
                    yield Button("Cancel", id="scan-cancel", disabled=True)
                with Horizontal(classes="bar"):
                    yield Input(placeholder="base text every document holds by design, left out of every finding "
                                            "(a template, starter code: files, optional; → completes)…",
                                id="scan-base", suggester=PathSuggester())
                    yield Input(placeholder="a password for encrypted files (optional; never stored)…",
                                id="scan-password", password=True)
                    yield Input(placeholder=f"OCR languages: {self.ocr_languages}", id="scan-ocr-languages")
                yield ProgressBar(id="scan-progress", show_eta=False)
                yield Static("New and changed files are added to the index; unchanged ones are skipped.",
                             id="scan-status")
                yield RichLog(id="scan-log", markup=False, wrap=True)
            with TabPane("4 Watch", id="watch"):
                with Horizontal(classes="bar"):
                    yield Input(placeholder="folders to watch (space-separated)…", id="watch-path",
                                suggester=PathSuggester())
                    yield Button("Start", id="watch-start", variant="primary")
                    yield Button("Stop", id="watch-stop", disabled=True)
                yield Static("Files created or changed in the watched folders are checked against the index.",
                             id="watch-status")
                yield Static("", id="alert-summary")
                yield AlertTable(id="alert-table")
                yield RichLog(id="alerts", markup=False, wrap=True, min_width=20)  # the watch's log
            with TabPane("5 Export", id="export"):
                with Horizontal(classes="bar"):
                    yield Select([(f.label, f.name) for f in FORMATS.values()], value="html", allow_blank=False,
                                 id="export-format")
                    yield Select([("all findings", "index"), ("last checked file", "check")], value="index",
                                 allow_blank=False, id="export-scope")
                    yield Input(placeholder="output file…", id="export-path", suggester=PathSuggester())
                with Horizontal(classes="bar"):
                    yield Checkbox("overwrite", id="export-force")
                    yield Button("Write report", id="export-run", variant="primary")
                yield Static("Reports name every file's SHA-256, the parameters and the command that re-creates "
                             "them.", id="export-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#pairs", DataTable)
        fill_data_table(table, FINDING_COLUMNS, [])
        fill_data_table(self.query_one("#documents", DataTable), DOCUMENT_COLUMNS, [])
        fill_data_table(self.query_one("#sources", DataTable), SOURCE_COLUMNS, [])
        fill_data_table(self.query_one("#matches", DataTable), MATCH_COLUMNS, [])
        table.focus()
        self.load_findings()
        self.load_stored_alerts()

    def _params(self, index: Any) -> Params:
        """The index's parameters (or the caller's), with the thresholds asked for on the command line."""
        params = self.params_override or index.params
        return params.replace(**self.thresholds) if self.thresholds else params

    def _open_index(self) -> Any:
        from scanner.index import Index

        return Index.open(self.index_path, readonly=True, params=self.params_override)

    # ---- findings ---------------------------------------------------------------

    @work(thread=True, exclusive=True, group="findings")
    def load_findings(self) -> None:
        """Read the stored findings (or compute them, for an index scanned without) off the event loop."""
        if not Path(self.index_path).exists():
            self.post_message(FindingsLoaded(None, "missing"))
            return
        try:
            with self._open_index() as index:
                # the first rows of each list first (stored apart: milliseconds at any size), then the rest
                view = load_findings(index, self._params(index), head=True)
                self.post_message(FindingsLoaded(view))
                if view.partial:
                    view = load_findings(index, self._params(index))
                    self.post_message(FindingsLoaded(view))
        except Exception as exc:  # noqa: BLE001 - an unreadable index is shown, not a crash
            self.post_message(FindingsLoaded(None, str(exc)))

    def on_findings_loaded(self, message: FindingsLoaded) -> None:
        self.view = message.view
        summary = self.query_one("#summary", Static)
        if message.view is None:
            if message.problem == "missing":
                where = printable(self.index_path)
                summary.update(Text.assemble("No index at ", (where, "bold"), " yet. Press ", ("3", "bold"),
                                             " and scan a folder, or run ",
                                             (f"scanner scan DIR --index {where}", "bold"), "."))
            else:
                summary.update(Text(f"Cannot read {printable(self.index_path)}: {readable(message.problem)}"))
        else:
            v = message.view
            line = Text.assemble((str(v.documents), "bold"), " documents in ", (str(v.files), "bold"), " files · ",
                                 (str(v.clusters), "bold"), " clusters · ", (str(v.suspected), "bold"),
                                 " suspected copies · ", (str(v.passage_pairs), "bold"), " passage pairs · ",
                                 (str(v.documents_found), "bold"), " documents with text found elsewhere")
            if v.common_documents:  # in no share: said apart (services.findings.common_note)
                line.append(f" · {v.common_documents} with very common text")
            if v.base_words:  # an assignment's template, starter code: in no finding (`scanner base`)
                line.append(f" · {v.base_words} words of base text left out")
            if v.widely_shared:  # most of the pairs may be one template's (`Findings.template_note`)
                line.append(f" · {v.widely_shared} documents share passages with nearly every other: a template? "
                            "(the Scan tab takes base files)", style="yellow")
            if v.unaligned:
                line.append(f" · passages of {v.unaligned} documents not aligned yet: scan again", style="yellow")
            if v.media_note:  # evidence media: reading works, the Scan tab cannot add to it
                line.append(f" · {readable(v.media_note)}", style="yellow")
            if v.shares_only:
                line.append(f" · {v.shares_only} passage pairs scored from their shares (edits –)", style="dim")
            if v.partial:
                line.append(" · the first rows of each list: the rest is loading", style="dim")
            elif max(len(v.rows), len(v.document_rows)) > TABLE_ROWS:
                line.append(f" · each table shows its first {TABLE_ROWS:,} rows: filter to find others "
                            "(`scanner clusters --json` has them all)", style="dim")
            if v.common_folder:
                line.append(f"   paths under {v.common_folder}/", style="dim")
            summary.update(line)
        self._update_histogram()
        self.fill_table()
        self.documents_stale = True
        if self.findings_mode == "documents":
            self.fill_documents()

    def _update_histogram(self) -> None:
        """Pairs by resemblance, or in the documents view, documents by share found elsewhere."""
        histogram = self.query_one("#histogram", ScoreHistogram)
        if self.view is None:
            histogram.update([])
        elif self.findings_mode == "documents":
            histogram.update(self.view.share_histogram(), "documents by share")
        else:
            histogram.update(self.view.histogram(), "pairs by resemblance")

    def _findings_table(self) -> DataTable:
        """The table the Findings tab shows now."""
        return self.query_one("#documents" if self.findings_mode == "documents" else "#pairs", DataTable)

    def fill_table(self) -> None:
        """Rows of the current view that pass the filter, in the current sort order."""
        self.rows_by_key.clear()
        chosen: list[tuple[str, FindingRow]] = []
        if self.view is not None:
            needle = self.query_one("#filter", Input).value.strip().lower()
            for number, row in enumerate(self.view.rows):
                if needle and needle not in row.path_a.lower() and needle not in row.path_b.lower() \
                        and needle != row.kind:
                    continue
                chosen.append((f"pair-{number}", row))
        field = _FINDING_FIELDS[self.sort_column]
        chosen.sort(key=lambda item: getattr(item[1], field), reverse=self.sort_reverse)
        short = self.view.short if self.view is not None else str
        rows = []
        for key, row in chosen[:TABLE_ROWS]:  # the rest is a filter away (a table of 10^5 rows takes minutes)
            self.rows_by_key[key] = row
            edits = str(row.edit_distance_estimate) if row.from_sketches else "–"  # scored from passage shares
            measures = (row.resemblance, row.containment_a_in_b, row.containment_b_in_a)
            rows.append((key, (row.kind, *with_errors(measures, row.errors), edits,
                               short(row.path_a),
                               short(row.path_b), str(row.size_a), str(row.size_b))))
        fill_data_table(self.query_one("#pairs", DataTable), FINDING_COLUMNS, rows)

    def fill_documents(self) -> None:
        """Documents with text found elsewhere that pass the filter, highest share first (Turnitin's list)."""
        self.documents_by_key.clear()
        rows: list[tuple[str, tuple[str, ...]]] = []
        if self.view is not None:
            needle = self.query_one("#filter", Input).value.strip().lower()
            short = self.view.short
            for number, doc in enumerate(self.view.document_rows):
                if needle and needle not in doc.path.lower() and not any(needle in s.path.lower()
                                                                          for s in doc.sources):
                    continue
                if len(rows) == TABLE_ROWS:
                    break
                key = f"doc-{number}"
                self.documents_by_key[key] = doc
                main = doc.sources[0] if doc.sources else None
                rows.append((key, (short(doc.path), f"{100 * doc.share:.1f}", f"{doc.words:,}", str(doc.source_count),
                                   f"{100 * doc.common:.1f}" if doc.common else "",
                                   short(main.path) if main else "", f"{100 * main.share:.1f}" if main else "")))
        with_common = any(cells[_COMMON_AT] for _, cells in rows)
        columns = (*DOCUMENT_COLUMNS[:_COMMON_AT], COMMON_COLUMN, *DOCUMENT_COLUMNS[_COMMON_AT:])
        if not with_common:
            columns = DOCUMENT_COLUMNS
            rows = [(key, (*cells[:_COMMON_AT], *cells[_COMMON_AT + 1:])) for key, cells in rows]
        fill_data_table(self.query_one("#documents", DataTable), columns, rows)
        self.documents_stale = False
        self._show_sources(next(iter(self.documents_by_key.values()), None))

    def _show_sources(self, doc: DocumentFinding | None) -> None:
        """The sources of the highlighted document, each with the share of the document found in it."""
        self.current_document = doc
        title, view = self.query_one("#sources-title", Static), self.view
        if doc is None or view is None:
            title.update(Text(f"no document has passages of {view.min_words}+ words found in another one"
                              if view is not None and not view.document_rows else "", style="dim"))
            fill_data_table(self.query_one("#sources", DataTable), SOURCE_COLUMNS, [])
            return
        short = view.short
        line = Text.assemble((short(doc.path), "bold"), f": {100 * doc.share:.1f}% of its {doc.n_tokens:,} words "
                             f"found in {doc.source_count} source{'s' if doc.source_count != 1 else ''}")
        if doc.other_paths:
            line.append(f" (identical: {', '.join(short(p) for p in doc.other_paths)})")
        if doc.common:  # in no share (services.findings.common_note)
            line.append(f"; {100 * doc.common:.1f}% of its fingerprints are very common text, which pairs no one")
        line.append("   enter: sources, then side by side", style="dim")
        title.update(line)
        fill_data_table(self.query_one("#sources", DataTable), SOURCE_COLUMNS,
                        [(f"src-{i}", (short(s.path), f"{100 * s.share:.1f}")) for i, s in enumerate(doc.sources)])

    @on(DataTable.RowHighlighted, "#documents")
    def _document_highlighted(self, event: DataTable.RowHighlighted) -> None:
        doc = self.documents_by_key.get(str(event.row_key.value)) if event.row_key is not None else None
        if doc is not None and doc is not self.current_document:
            self._show_sources(doc)

    @on(DataTable.RowSelected, "#documents")
    def _document_selected(self, event: DataTable.RowSelected) -> None:
        doc = self.documents_by_key.get(str(event.row_key.value))
        if doc is not None:
            if doc is not self.current_document:
                self._show_sources(doc)
            if doc.sources:
                sources = self.query_one("#sources", DataTable)
                sources.move_cursor(row=0)
                sources.focus()

    @on(DataTable.RowSelected, "#sources")
    def _source_selected(self, event: DataTable.RowSelected) -> None:
        doc, key = self.current_document, str(event.row_key.value)
        if doc is not None and key.startswith("src-"):
            source = doc.sources[int(key[4:])]
            self.open_pair(doc.path, doc.sha256, source.path, source.sha256)

    def action_findings_view(self, mode: str) -> None:
        """Switch the Findings tab between the pairs table and the documents view."""
        self.findings_mode = mode
        self.query_one("#findings-views", ContentSwitcher).current = "documents-view" if mode == "documents" \
            else "pairs"
        if mode == "documents" and self.documents_stale:
            self.fill_documents()
        self._update_histogram()
        self._findings_table().focus()
        self.refresh_bindings()

    def _show_findings(self, mode: str) -> None:
        self.query_one(TabbedContent).active = "findings"
        self.action_findings_view(mode)

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self.fill_table()
        if self.findings_mode == "documents":
            self.fill_documents()
        else:
            self.documents_stale = True

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self._findings_table().focus()

    @on(DataTable.HeaderSelected, "#pairs")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        if event.column_index == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = event.column_index, event.column_index in NUMERIC_COLUMNS
        self.fill_table()

    def action_sort(self) -> None:
        self.sort_column = (self.sort_column + 1) % len(FINDING_COLUMNS)
        self.sort_reverse = self.sort_column in NUMERIC_COLUMNS  # scores: strongest first; names: a to z
        self.fill_table()
        self.notify(f"sorted by {FINDING_COLUMNS[self.sort_column]}", timeout=2)

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.fill_table()

    def action_filter(self) -> None:
        self.action_tab("findings")
        self.query_one("#filter", Input).focus()

    def action_reload(self) -> None:
        self.load_findings()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "findings":
            self._findings_table().focus()
            return
        focus = {"check": "#check-path", "scan": "#scan-path", "watch": "#watch-path",
                 "export": "#export-path"}[tab]
        self.query_one(focus).focus()

    def action_leave_input(self) -> None:
        """Escape from a text field to the tab bar, where digits and arrows switch tabs; from a document's
        sources back to the documents."""
        if self.focused is not None and self.focused.id == "sources":
            self.query_one("#documents", DataTable).focus()
        elif isinstance(self.focused, Input):
            from textual.widgets import Tabs

            self.query_one(TabbedContent).query_one(Tabs).focus()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    @on(DataTable.RowSelected, "#pairs")
    def _open_pair(self, event: DataTable.RowSelected) -> None:
        row = self.rows_by_key.get(str(event.row_key.value))
        if row is not None:
            self.open_pair(row.path_a, row.sha_a, row.path_b, row.sha_b)

    @work(thread=True, exclusive=True, group="pair")
    def open_pair(self, path_a: str, sha_a: str, path_b: str, sha_b: str) -> None:
        """Two documents side by side, with the passages the scan stored for them (aligned now when none are
        stored); exact values can take a moment."""
        try:
            with self._open_index() as index:
                pair = pair_from_index(index, self._params(index), path_a, sha_a, path_b, sha_b)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(PairReady(None, f"cannot open the pair: {exc}"))
            return
        self.post_message(PairReady(pair, "" if pair else "texts are not stored in this index (scanned --no-text)"))

    def on_pair_ready(self, message: PairReady) -> None:
        if message.pair is None:
            self.notify(message.problem, severity="warning", markup=False)
        else:
            self.push_screen(PairScreen(message.pair))

    # ---- check ------------------------------------------------------------------

    @on(Button.Pressed, "#check-run")
    @on(Input.Submitted, "#check-path")
    @on(Input.Submitted, "#check-password")
    def _check(self) -> None:
        path = self.query_one("#check-path", Input).value.strip()
        password = self.query_one("#check-password", Input).value
        if path:
            self.query_one("#check-summary", Static).update(Text(f"checking {printable(path)}…"))
            self.run_check(path, (password,) if password else ())

    def _semantic_model(self, lazy: bool = False) -> Any:
        """The sentence model (once), or None when the pass is off or the model cannot be read (said once);
        `lazy`: a LazyModel for a scan's passage step, loaded only if it has pairs to align."""
        from scanner.services.semantic import LazyModel, lazy_model

        if self._model is None and self.semantic:
            self._model = lazy_model(True, lambda why: self.call_from_thread(
                self.notify, f"semantic pass off: {why}", severity="warning"))  # called from worker threads
            self.semantic = self._model is not None
        if lazy or not isinstance(self._model, LazyModel):
            return self._model
        return self._model.get()

    @work(thread=True, exclusive=True, group="check")
    def run_check(self, path: str, passwords: tuple[str, ...] = ()) -> None:
        """Extract one file (opened with `passwords` when it is encrypted) and match it against the index; an
        archive or a mail member by member, as `scanner check` does: the member with the most text found
        elsewhere is shown, and the summary names the others with their shares."""
        from scanner.core.model import TextStatus
        from scanner.services.check import CheckOptions, check_extracted, file_and_members, own_file_options
        from scanner.sources.crawl import printable_path
        from scanner.sources.extract import extract_file
        from scanner.sources.limits import ExtractLimits
        from scanner.sources.plugins import make_plugin_manager

        try:
            opened = str(Path(path).expanduser())
            limits = ExtractLimits(passwords=passwords, ocr=self.ocr, ocr_languages=self.ocr_languages)
            record, extracted = extract_file(opened, make_plugin_manager(), limits)
            pieces = file_and_members(opened, printable_path(opened), record, extracted)
            readable = [(name, rec, ext) for name, rec, ext in pieces if ext.status.has_text]
            unread = [(name, f"{ext.status.value}: {ext.reason}" if ext.reason else ext.status.value)
                      for name, _, ext in pieces if not ext.status.has_text and ext.status is not TextStatus.CONTAINER]
            if not readable:  # why: the file's own, or its members'
                raise ValueError(unread[0][1] if len(pieces) == 1
                                 else "; ".join(f"{member}: {why}" for member, why in unread[:3]))
            with self._open_index() as index:
                options = CheckOptions(semantic=self._semantic_model())
                parts = []
                for name, rec, ext in readable:
                    report = check_extracted(ext, index, self._params(index),
                                             own_file_options(options, index, opened, rec.sha256))
                    texts = {m.doc_id: index.text(m.doc_id) or "" for m in report.matches if m.doc_id is not None}
                    parts.append(CheckedPart(name if len(pieces) > 1 else path, rec.sha256, ext.text, report, texts))
        except Exception as exc:  # noqa: BLE001 - hostile input may break any parser: shown, not a crash
            self.post_message(CheckFailed(path, str(exc)))
            return
        parts.sort(key=lambda part: -part.report.coverage)  # stable: the first of equals stays first
        self.post_message(CheckComplete(tuple(parts), tuple(f"{name}: {why}" for name, why in unread)))

    def on_check_failed(self, message: CheckFailed) -> None:
        self.query_one("#check-summary", Static).update(
            Text(f"cannot check {printable(message.path)}: {readable(message.reason)}"))

    def on_check_complete(self, message: CheckComplete) -> None:
        """The part with the most found elsewhere heads the summary; an archive's or a mail's other members
        follow, named as `scanner check` lists them, and every part's sources fill the table (a member column
        first when there are several parts)."""
        self.last_check = message
        best, *others = message.parts
        report = best.report
        summary = Text.assemble((printable(best.name), "bold"),
                                f": {report.share_sentence('file')} ({report.n_tokens:,} words)")
        if note := report.unmeasured_note():
            summary.append(f"\n{note}", style="yellow")
        named = [f"{part.name}: {100 * part.report.coverage:.1f}%" for part in others] + list(message.unread)
        if named:
            shown = ", ".join(printable(other) for other in named[:5])
            more = f" and {len(named) - 5} more" if len(named) > 5 else ""
            summary.append(f"\nother members checked: {shown}{more}", style="dim")
        self.query_one("#check-summary", Static).update(summary)
        table = self.query_one("#matches", DataTable)
        several = len(message.parts) > 1
        fill_data_table(table, (("member",) if several else ()) + MATCH_COLUMNS, [
            (f"{i}:{m.doc_id}", ((part.name,) if several else ())
             + (m.path, "n/a" if (share := part.report.share_in(m)) is None else f"{100 * share:.1f}",
                *with_errors((m.resemblance, m.containment_query_in_doc, m.containment_doc_in_query), m.errors),
                str(m.edit_distance_estimate), str(len(m.passages))))
            for i, part in enumerate(message.parts) for m in part.report.matches])
        self._show_passages(best, report.matches[0] if report.matches else None)
        if table.row_count:
            table.focus()

    def _match(self, key: str) -> tuple[CheckedPart, Any] | None:
        """The part and the source of the table row `key` ("part index:doc id")."""
        if self.last_check is None:
            return None
        index, _, doc_id = key.partition(":")
        part = self.last_check.parts[int(index)]
        match = next((m for m in part.report.matches if str(m.doc_id) == doc_id), None)
        return None if match is None else (part, match)

    def _show_passages(self, part: CheckedPart | None, match: Any) -> None:
        out = Text()
        if part is not None and match is not None:
            if self.last_check is not None and len(self.last_check.parts) > 1:
                out.append(f"{part.name}\n", style="dim")
            out.append(f"{len(match.passages)} shared passage(s) with {match.path} (enter: side by side)\n",
                       style="bold")
            for p in match.passages:
                quote = visible(p.text if len(p.text) <= 300 else p.text[:300] + "…")
                where = f" in {visible(p.found_in)}" if p.found_in else ""  # hidden text is evidence: say so
                copy = shown_as_copy(p.kind)  # a reworded or semantic passage is never shown as a copy
                summary = condenses(p.query_end - p.query_start, p.doc_end - p.doc_start)
                label = "" if copy else f" ({passage_label(p.kind, p.similarity, summary)})"
                doc_where = f" in {visible(p.doc_found_in)}" if p.doc_found_in else ""
                out.append(f"\nfile[{p.query_start}:{p.query_end}]{where} {'=' if copy else '≈'} "
                           f"source[{p.doc_start}:{p.doc_end}]{doc_where}{label}\n", style="dim")
                out.append(f"“{quote}”\n")
        self.query_one("#check-passages", Static).update(out)

    @on(DataTable.RowHighlighted, "#matches")
    def _match_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            found = self._match(str(event.row_key.value))
            self._show_passages(*(found or (None, None)))

    @on(DataTable.RowSelected, "#matches")
    def _open_match(self, event: DataTable.RowSelected) -> None:
        found = self._match(str(event.row_key.value))
        if found is not None:
            self.open_check_pair(*found)

    @work(thread=True, exclusive=True, group="pair")
    def open_check_pair(self, part: CheckedPart, match: Any) -> None:
        """The checked file or member (A) beside its source (B)."""
        try:
            with self._open_index() as index:
                params = self._params(index)
                base = index.base.prepared(params)
            pair = pair_texts(part.text, part.texts.get(match.doc_id, ""), part.name, match.path, params,
                              base=base)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(PairReady(None, f"cannot open the pair: {exc}"))
            return
        self.post_message(PairReady(pair))

    # ---- scan -------------------------------------------------------------------

    @on(Button.Pressed, "#scan-start")
    @on(Input.Submitted, "#scan-path")
    @on(Input.Submitted, "#scan-base")
    @on(Input.Submitted, "#scan-password")
    @on(Input.Submitted, "#scan-ocr-languages")
    def _scan(self) -> None:
        value = self.query_one("#scan-path", Input).value.strip()
        if not value or self.scanning:
            return
        try:
            paths = shlex.split(value)
            base = shlex.split(self.query_one("#scan-base", Input).value.strip())
        except ValueError as exc:
            self.query_one("#scan-status", Static).update(Text(f"cannot read the folders or files: {exc}"))
            return
        languages = self.query_one("#scan-ocr-languages", Input).value.strip() or self.ocr_languages
        if languages != "eng" and self.ocr:  # as --ocr-languages: a language Tesseract lacks stops the scan first
            from scanner_plugins.ocr import languages_problem

            if (problem := languages_problem(languages)) is not None:
                self.query_one("#scan-status", Static).update(Text(f"cannot scan: OCR languages {problem}"))
                return
        self.scanning = True
        self.query_one("#scan-start", Button).disabled = True
        cancel = self.query_one("#scan-cancel", Button)
        cancel.disabled = False
        cancel.focus()  # enter or x cancels; typing goes nowhere by accident
        self.query_one("#scan-log", RichLog).clear()
        self.query_one("#scan-progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#scan-status", Static).update(Text(f"scanning {' '.join(paths)}…"))
        self.refresh_bindings()
        password = self.query_one("#scan-password", Input).value
        self.ocr_languages = languages  # the Check tab reads pictures as the last scan did
        self.run_scan(paths, base, (password,) if password else (), languages)

    @on(Button.Pressed, "#scan-cancel")
    def _cancel_button(self) -> None:
        self.action_cancel_scan()

    def action_cancel_scan(self) -> None:
        if self.scanning:
            self.workers.cancel_group(self, "scan")
            self.query_one("#scan-status", Static).update("cancelling after the current file…")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide keys that do nothing here: findings keys off the Findings tab, tabs in the pair view."""
        on_main = len(self.screen_stack) == 1
        if action == "cancel_scan":
            return self.scanning
        if action in ("sort", "sort_reverse"):
            return on_main and self.query_one(TabbedContent).active == "findings" and self.findings_mode == "pairs"
        if action == "reload":
            return on_main and self.query_one(TabbedContent).active == "findings"
        if action == "findings_view":
            return on_main and self.query_one(TabbedContent).active == "findings" \
                and parameters[0] != self.findings_mode
        if action in ("tab", "filter"):
            return on_main
        return True

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        self.refresh_bindings()

    @work(thread=True, exclusive=True, group="scan")
    def run_scan(self, paths: list[str], base: Sequence[str] = (), passwords: tuple[str, ...] = (),
                 ocr_languages: str = "eng") -> None:
        """Crawl, extract and index `paths`, align the passages documents share and store the findings, as
        `scanner scan` does (the Findings tab then reads them); checks for cancellation between files and
        between alignment chunks. `base`: files whose text is added to the index's base texts first, as
        `scanner scan --base` adds them; `passwords`: tried on encrypted files, as `--password`;
        `ocr_languages`: as `--ocr-languages`."""
        from scanner.index import Index
        from scanner.services.base import add_base_files
        from scanner.services.findings import stored_or_found
        from scanner.services.passages import align_index, failure_issues
        from scanner.services.scan import run_scan
        from scanner.sources.limits import ExtractLimits
        from scanner.sources.plugins import make_plugin_manager

        worker = get_current_worker()

        def progress(p: Any) -> None:
            if worker.is_cancelled:
                raise _Cancelled()
            self.post_message(ScanProgress(p))

        def aligning(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Cancelled()
            self.post_message(ScanStatus(f"aligning the passages documents share: {done}/{total}"))

        try:
            with Index.open(self.index_path, readonly=False, params=self.params_override, accept_stale=True) as index:
                if base:
                    self.post_message(ScanStatus(f"reading the base text of {len(base)} file(s)…"))
                    add_base_files(index, base, make_plugin_manager(), ExtractLimits())
                result = run_scan(paths, index, make_plugin_manager(), index.params, jobs=self.scan_jobs,
                                  on_progress=progress, command="tui scan",
                                  limits=ExtractLimits(passwords=passwords, ocr=self.ocr, ocr_languages=ocr_languages))
                self.post_message(ScanStatus("aligning the passages documents share…"))
                aligned = align_index(index, index.params, jobs=self.scan_jobs, on_progress=aligning,
                                      model=self._semantic_model(lazy=True))
                self.post_message(ScanStatus("finding clusters, containments and passage pairs…"))
                stored_or_found(index, self._params(index))
                errors = result.errors + failure_issues(index, aligned.failures)
        except _Cancelled:
            self.post_message(ScanComplete("cancelled: files indexed so far stay in the index; scan again to "
                                           "resume", cancelled=True))
            return
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(ScanComplete(f"scan failed: {exc}"))
            return
        problems = tuple(f"error  {e.path}: {e.message}" for e in errors) + \
            tuple(f"skip   {s.path}: {s.message}" for s in result.skipped)
        self.post_message(ScanComplete(
            f"done: {result.files_seen} seen, {result.files_indexed} indexed, {result.files_unchanged} unchanged, "
            f"{len(errors)} errors, {len(result.skipped)} skipped", problems))

    def on_scan_progress(self, message: ScanProgress) -> None:
        p = message.progress
        self.query_one("#scan-progress", ProgressBar).update(
            total=max(p.files_seen, 1) if p.crawl_done else None, progress=p.files_done)
        status = Text(f"{p.files_done}/{p.files_seen}{'' if p.crawl_done else '+'} files · "
                      f"{p.bytes_done / 1e6:.1f} MB · {p.errors} errors · {p.current}")
        self.query_one("#scan-status", Static).update(status)

    def on_scan_status(self, message: ScanStatus) -> None:
        self.query_one("#scan-status", Static).update(Text(message.text))

    def on_scan_complete(self, message: ScanComplete) -> None:
        self.scanning = False
        self.query_one("#scan-start", Button).disabled = False
        self.query_one("#scan-cancel", Button).disabled = True
        self.query_one("#scan-status", Static).update(Text(readable(message.summary)))
        if self.query_one(TabbedContent).active == "scan" and len(self.screen_stack) == 1:
            self.query_one("#scan-start", Button).focus()  # not the input: digits switch tabs again
        log = self.query_one("#scan-log", RichLog)
        for line in message.problems:
            log.write(Text(readable(line)))  # reasons may quote archive member names
        self.refresh_bindings()
        self.load_findings()

    # ---- watch ------------------------------------------------------------------

    @work(thread=True, group="alerts")
    def load_stored_alerts(self) -> None:
        """Alerts earlier watches stored in the index, newest first: the table's first TABLE_ROWS."""
        if not Path(self.index_path).exists():
            return
        try:
            with self._open_index() as index:
                alerts = index.alerts(limit=TABLE_ROWS + 1)
        except Exception:  # noqa: BLE001 - stored alerts are optional: an unreadable index shows none
            return
        self.post_message(AlertsLoaded(tuple(alert_row(a) for a in alerts[:TABLE_ROWS]),
                                       more=len(alerts) > TABLE_ROWS))

    def on_alerts_loaded(self, message: AlertsLoaded) -> None:
        self.query_one("#alert-table", AlertTable).add_stored(message.rows, message.more)
        if message.rows:
            newest = message.rows[0]
            self.query_one("#alerts", RichLog).write(Text(
                f"{len(message.rows):,}{'+' if message.more else ''} alert(s) stored in the index; newest: "
                f"{printable(newest.path)} ({local_time(newest.time)})", style="dim"))
        self._alert_summary()

    def _alert_summary(self) -> None:
        """The line above the alerts table: how many, by review state, and the keys."""
        table = self.query_one("#alert-table", AlertTable)
        rows = list(table.alert_rows.values())[:TABLE_ROWS]
        if not rows:
            self.query_one("#alert-summary", Static).update(Text(
                "No alert yet: alerts of this index's watches show here, newest first.", style="dim"))
            return
        states = {state: sum(r.review == state for r in rows) for state in ("new", "reviewed", "allowed")}
        line = Text.assemble((f"{len(rows):,}", "bold"), f" alert{'s' if len(rows) != 1 else ''}, newest first: ",
                             (f"{states['new']} new", "bold"), f", {states['reviewed']} reviewed, "
                             f"{states['allowed']} allowed")
        if table.more or len(table.alert_rows) > TABLE_ROWS:
            line.append(f" · the newest {TABLE_ROWS:,} are shown", style="dim")
        self.query_one("#alert-summary", Static).update(line)

    @on(Button.Pressed, "#watch-start")
    @on(Input.Submitted, "#watch-path")
    def _watch(self) -> None:
        value = self.query_one("#watch-path", Input).value.strip()
        if not value or self.watcher is not None:
            return
        try:
            folders = shlex.split(value)
        except ValueError as exc:
            self.post_message(WatchStatus(f"cannot read the folders: {exc}"))
            return
        self.query_one("#watch-start", Button).disabled = True
        self.start_watch(folders)

    @work(thread=True, exclusive=True, group="watch")
    def start_watch(self, folders: list[str]) -> None:
        """Start the watcher (its catch-up reads the index, so not on the event loop), with the index's allow
        list (`scanner allow`, or `a` on an alert) when there is one, as `scanner watch` does."""
        import os
        from dataclasses import replace

        try:
            from scanner.services.watch import Watcher, WatchOptions
        except ImportError:
            self.post_message(WatchStatus("watch service unavailable in this build", running=False))
            return
        def on_event(event: Any) -> None:
            if event.kind not in ("checked", "ready"):  # "ready" is said by WatchStatus below
                self.post_message(WatchStatus(f"{event.kind}: {event.path} {event.message}".strip()))

        def on_alert(alert: Any) -> None:
            self.post_message(WatchAlert(alert))

        options = self.watch_options or WatchOptions()
        if options.allow_index is None and os.path.exists(allow_list_path(self.index_path)):
            options = replace(options, allow_index=allow_list_path(self.index_path))
        try:
            watcher = Watcher(self.index_path, folders, options, on_alert=on_alert, on_event=on_event)
            watcher.start()
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(WatchStatus(f"cannot watch {' '.join(folders)}: {exc}", running=False))
            return
        self.watcher = watcher
        self.post_message(WatchStatus(f"watching {' '.join(watcher.dirs)}", running=True))

    @on(Button.Pressed, "#watch-stop")
    def _stop_watch(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            self.query_one("#watch-stop", Button).disabled = True
            self.stop_watch(watcher)

    @work(thread=True, group="watch-stop")
    def stop_watch(self, watcher: Any) -> None:
        """Stopping waits for in-flight checks: off the event loop."""
        watcher.stop()
        self.post_message(WatchStatus("watch stopped", running=False))

    def on_watch_status(self, message: WatchStatus) -> None:
        text = readable(message.text)  # names the files the watcher saw: hostile input
        self.query_one("#alerts", RichLog).write(Text(text, style="dim"))
        if message.running is not None:
            self.query_one("#watch-status", Static).update(Text(text))
            self.query_one("#watch-start", Button).disabled = message.running
            self.query_one("#watch-stop", Button).disabled = not message.running
            if message.running and self.query_one(TabbedContent).active == "watch":
                self.query_one("#watch-stop", Button).focus()  # out of the field: digits switch tabs

    def on_watch_alert(self, message: WatchAlert) -> None:
        """A live alert goes on top of the table (a follow-up counts more copies on its group's row) and gets a
        line in the log."""
        alert = message.alert
        row = self.query_one("#alert-table", AlertTable).add_alert(alert)
        when = (f"{local_time(alert.time)}  ", "dim")
        log = self.query_one("#alerts", RichLog)
        if alert.followup:
            named = ", ".join(printable(p) for p in alert.paths[:3])
            if len(alert.paths) > 3:
                named += f" and {len(alert.paths) - 3} more"
            copies = f"{len(alert.paths)} more cop{'y' if len(alert.paths) == 1 else 'ies'} of "
            log.write(Text.assemble(when, ("ALERT ", "bold red"), copies, (printable(alert.path), "bold"),
                                    f": {named}"))
        else:
            best = row.best if row is not None else {}
            where = printable(str(best.get("member", alert.path)))  # a leak in an archive or mail: its member
            share = best.get("share_of_protected", 0)
            more = f", +{len(alert.matches) - 1} more sources" if len(alert.matches) > 1 else ""
            log.write(Text.assemble(when, ("ALERT ", "bold red"), (f"{printable(alert.severity)} ", "bold"),
                                    (where, "bold"), f": protected text from {printable(str(best.get('path', '?')))}"
                                    f" (longest passage {row.longest_words if row else 0} words, "
                                    f"{100 * share if isinstance(share, float | int) else 0:.1f}% of it{more})"))
            if self.watcher is not None and self.query_one(TabbedContent).active != "watch":
                self.notify(f"{where}: protected text from {printable(str(best.get('path', '?')))}",
                            title=f"Watch alert ({printable(alert.severity)})", severity="warning", timeout=8,
                            markup=False)
        self._alert_summary()

    @on(DataTable.RowSelected, "#alert-table")
    def _alert_selected(self, event: DataTable.RowSelected) -> None:
        row = self.query_one("#alert-table", AlertTable).alert_rows.get(str(event.row_key.value))
        if row is not None:
            self.open_evidence(row)

    @work(thread=True, exclusive=True, group="pair")
    def open_evidence(self, row: AlertRow) -> None:
        """The alert's passages side by side: the watched file read again (when a copy still holds the alerted
        content) beside each protected document's text from the index."""
        try:
            path, texts = watched_texts(row, getattr(self.watch_options, "ocr", True),
                                        getattr(self.watch_options, "ocr_languages", self.ocr_languages))
            with self._open_index() as index:
                pairs = evidence_pairs(index, self._params(index), row, path, texts)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(EvidenceReady((), f"cannot open the evidence: {exc}"))
            return
        self.post_message(EvidenceReady(tuple(pairs), "" if pairs else "this alert names no protected source"))

    def on_evidence_ready(self, message: EvidenceReady) -> None:
        if message.pairs:
            self.push_screen(EvidenceScreen(message.pairs))
        else:
            self.notify(message.problem, severity="warning", markup=False)

    def on_alert_review(self, message: AlertReview) -> None:
        """r / a on the alerts table: the state goes to the index, in a worker (and the passages of an allowed
        alert to the allow list)."""
        row = self.query_one("#alert-table", AlertTable).row_of(message.alert_id)
        if row is None or row.alert_id is None:
            return
        if message.review == "reviewed" and row.review == "allowed":
            self.notify("already allowed (its passages are on the allow list)", timeout=3)
            return
        # a watch that is stopping holds the writer lock until its last checks end: wait for it that long
        stopping = any(w.group == "watch-stop" and not w.is_finished for w in self.workers)
        wait = 45.0 if stopping else REVIEW_WAIT
        if message.review == "allowed":
            self.allow_alert(row, wait)
        else:
            self.save_review(row.alert_id, message.review, wait)

    @work(thread=True, group="review")
    def save_review(self, alert_id: int, review: str, wait: float) -> None:
        """Through the running watcher (the index's one writer while it runs), else a short-lived writer."""
        try:
            how = write_review(self.index_path, alert_id, review, self.watcher, wait)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(AlertReviewed(alert_id, review, f"alert {alert_id} not marked {review}: {exc}", False))
            return
        self.post_message(AlertReviewed(alert_id, review, f"alert {alert_id} marked {review}"
                                        + (" (kept by the running watch)" if how == "queued" else ""), True))

    @work(thread=True, group="review")
    def allow_alert(self, row: AlertRow, wait: float) -> None:
        """Every passage of the alert, as the protected document has it, into the index's allow list (what
        `scanner allow` writes and watches consult), then the alert marked allowed."""
        import os

        assert row.alert_id is not None
        target = allow_list_path(self.index_path)
        try:
            with self._open_index() as index:
                params = index.params
                passages = passages_to_allow(index, row)
            if not passages:
                raise ValueError("it names no passage")
            added = allow_passages(target, params, passages)
            how = write_review(self.index_path, row.alert_id, "allowed", self.watcher, wait)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(AlertReviewed(row.alert_id, "allowed", f"alert {row.alert_id} not allowed: {exc}",
                                            False))
            return
        fresh = sum(not a.already for a in added)
        text = (f"allowed {len(added)} passage(s) of alert {row.alert_id} ({fresh} new to the allow list "
                f"{target}): they no longer alert")
        watcher = self.watcher
        if watcher is not None and (watcher.options.allow_index is None
                                    or os.path.abspath(watcher.options.allow_index) != os.path.abspath(target)):
            text += " in watches started from now on (restart the running one)"
        if how == "queued":
            text += "; state kept by the running watch"
        self.post_message(AlertReviewed(row.alert_id, "allowed", text, True))

    def on_alert_reviewed(self, message: AlertReviewed) -> None:
        self.query_one("#alerts", RichLog).write(Text(readable(message.text), style="" if message.ok else "red"))
        if message.ok:
            self.query_one("#alert-table", AlertTable).set_review(message.alert_id, message.review)
            self._alert_summary()
        if message.review == "allowed" or not message.ok:
            self.notify(readable(message.text), severity="information" if message.ok else "error",
                        timeout=6, markup=False)

    # ---- export -----------------------------------------------------------------

    @on(Button.Pressed, "#export-run")
    @on(Input.Submitted, "#export-path")
    def _export(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        fmt = str(self.query_one("#export-format", Select).value)
        scope = str(self.query_one("#export-scope", Select).value)
        force = self.query_one("#export-force", Checkbox).value
        if not path:
            self.query_one("#export-status", Static).update("type the output file first")
            return
        check = None
        if scope == "check":
            if self.last_check is None:
                self.query_one("#export-status", Static).update("no checked file yet: check one in the Check tab")
                return
            best = self.last_check.parts[0]  # an archive's member with the most found elsewhere
            check = (best.name, best.sha256, best.text)
        self.query_one("#export-status", Static).update(Text(f"writing {path}…"))
        self.run_export(fmt, path, check, force)

    @work(thread=True, exclusive=True, group="export")
    def run_export(self, fmt: str, path: str, check: tuple[str, str, str] | None, force: bool) -> None:
        """Build and write the report (it re-reads the index)."""
        from scanner.faces.report import write_report

        command = f"scanner report --index {shlex.quote(self.index_path)} --format {fmt} -o {shlex.quote(path)}"
        try:
            with self._open_index() as index:
                written = write_report(index, self._params(index), fmt, path, check=check, force=force,
                                       command=command, index_path=self.index_path)
        except Exception as exc:  # noqa: BLE001 - a worker thread: the failure is shown, not a crash
            self.post_message(ExportDone(f"cannot write {path}: {exc}", ok=False))
            return
        self.post_message(ExportDone(f"wrote {written}", ok=True))

    def on_export_done(self, message: ExportDone) -> None:
        self.query_one("#export-status", Static).update(Text(message.text))
        self.notify(message.text, severity="information" if message.ok else "error", timeout=4, markup=False)

    # ---- palette and quitting -------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every action by name in the command palette (ctrl+p)."""
        yield from super().get_system_commands(screen)
        for number, tab in enumerate(TABS, 1):
            yield SystemCommand(f"Go to {tab.title()}", f"the {tab} tab (key {number})",
                                lambda tab=tab: self.action_tab(tab))
        yield SystemCommand("Reload findings", "read the findings from the index again (r)", self.action_reload)
        yield SystemCommand("Documents view", "documents by share of their text found elsewhere (d)",
                            lambda: self._show_findings("documents"))
        yield SystemCommand("Pairs view", "suspected pairs: clusters, containments, passage pairs (d)",
                            lambda: self._show_findings("pairs"))
        yield SystemCommand("Filter findings", "filter the findings by path (/)", self.action_filter)
        yield SystemCommand("Sort findings", "sort by the next column (s)", self.action_sort)
        yield SystemCommand("Cancel scan", "stop the running scan after the current file (x)",
                            self.action_cancel_scan)
        yield SystemCommand("Keys", "every key binding (?)", self.action_help)

    async def action_quit(self) -> None:
        """Stop the watcher and any scan before leaving, so nothing is left half-written."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            await asyncio.to_thread(watcher.stop)
        self.workers.cancel_group(self, "scan")
        self.exit()


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker while stderr is still the real one.

    Textual replaces sys.stderr with an object whose fileno() is -1 while the app
    runs; a process pool created then (scan, watch) fails to launch the tracker
    ("bad value(s) in fds_to_keep"). Started now, it is simply reused later.
    """
    import os

    if os.name == "posix":
        from multiprocessing import resource_tracker

        try:
            resource_tracker.ensure_running()
        except Exception:  # noqa: BLE001 - no multiprocessing here: scans with jobs=0 still work
            pass


def make_app(index_path: str, params: Params | None = None, *, threshold: float | None = None,
             min_containment: float | None = None, scan_jobs: int | None = None,
             watch_options: Any = None, semantic: bool = True, ocr: bool = True,
             ocr_languages: str = "eng") -> ScannerApp:
    """The app on `index_path` (a missing index shows how to make one).

    Args:
        params: parameters to use instead of the index's stored ones (sketch fields must agree).
        threshold, min_containment: override the index's thresholds for the findings.
        scan_jobs: worker processes for the Scan tab (0: in this process, as tests do).
        watch_options: a `scanner.services.watch.WatchOptions` for the Watch tab.
        semantic: the semantic pass in the checks and scans started in the interface.
        ocr, ocr_languages: as `--ocr/--no-ocr` and `--ocr-languages`, for the checks and scans started in it
            (the Scan tab's field sets the languages for the scans and checks that follow).
    """
    _start_resource_tracker()
    return ScannerApp(index_path, params, threshold=threshold, min_containment=min_containment,
                      scan_jobs=scan_jobs, watch_options=watch_options, semantic=semantic, ocr=ocr,
                      ocr_languages=ocr_languages)
