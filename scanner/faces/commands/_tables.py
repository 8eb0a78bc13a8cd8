"""Readable (rich) output of scan, clusters and info, on stdout."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from scanner.core.display import printable, readable, with_error

_LIST_LIMIT = 50
# header words too long for a narrow number column, broken where a reader expects it
_HYPHENATED = {"resemblance": "resem-\nblance", "containment": "contain-\nment", "passages": "pas-\nsages"}


def _console() -> Console:
    """stdout is data: when it is not a terminal, paths must never be cut to fit 80 columns; and
    nothing printed is Rich markup (a file named "notes [final].txt" keeps its brackets, "[/b]" in a
    path or a passage cannot stop the command)."""
    console = Console(highlight=False, markup=False)
    if not console.is_terminal:
        console = Console(highlight=False, markup=False, width=4096)
    return console


def message_console() -> Console:
    """stderr for one-line messages: a line is never broken to fit the width (an error naming a long
    path stays one line a script can read), and nothing in it is markup."""
    return Console(stderr=True, highlight=False, markup=False, soft_wrap=True)


def fit_columns(console: Console, table: Table, paths: Collection[int], least: int = 8) -> Table:
    """Keep the `paths` columns readable in a table wider than the console.

    Rich shrinks the widest column first, which is the path: at 80 columns `check` showed 9 characters of
    it while "resemblance" kept 11. Here every other column (numbers, hashes, kinds) takes only what its
    values and header words need, long header words hyphenated, and the path columns share the rest.
    A table that fits is left as it is, and so is one in a console too narrow to give each path `least`.
    """
    wide, width = console.options.update_width(1 << 20), console.options.max_width
    if _surely_fits(table, width) or Measurement.get(console, wide, table).maximum <= width:
        return table
    saved, pad_edge = [(column.header, column.width) for column in table.columns], table.pad_edge
    for number, column in enumerate(table.columns):
        if number in paths:
            column.width = 1  # so that the measure below is of everything but the paths
            continue
        if isinstance(column.header, str):
            column.header = _HYPHENATED.get(column.header, column.header)
        column.width = max(Measurement.get(console, wide, cell).minimum for cell in (column.header, *column.cells))
    if not table.show_edge:  # no frame to keep off the text: the outer padding goes to the paths too
        table.pad_edge = False
    room = width - Measurement.get(console, wide, table).maximum + len(paths)
    for number in paths:
        table.columns[number].width = saved[number][1]
    if room < least * len(paths):  # too narrow for this to help: Rich's even shrinking, as before
        for column, (header, column_width) in zip(table.columns, saved):
            column.header, column.width = header, column_width
        table.pad_edge = pad_edge
    return table


def _surely_fits(table: Table, width: int) -> bool:
    """Whether a table of plain strings fits `width` by a bound from its longest lines (each column's widest
    line, two of padding and a rule beside it): Rich's measure of every cell doubled the cost of printing a
    rescan's tables to a pipe (4,096 columns), 0.1 s of it, where nothing can be too wide."""
    if table.width is not None or any(column.width is not None for column in table.columns) or \
            table.padding[1] + table.padding[3] > 2:  # the bound counts one space of padding a side
        return False
    widest = 0
    for column in table.columns:
        cells = (column.header, *column.cells)
        texts = [cell for cell in cells if isinstance(cell, str)]
        if len(texts) < len(cells):  # a renderable: only Rich can measure it
            return False
        widest += max(cell_len(line) for text in texts for line in text.split("\n")) + 3
    return widest + 1 <= width


def print_findings(console: Console, findings: Any, limit: int | None = None) -> None:
    """The findings as tables. `limit`: clusters and containment pairs shown (None: all), the others counted
    below their table: a scan of API documentation found 3,460 containment pairs, whose table took Rich 5 s
    to lay out and would take a reader far longer; `scanner clusters` and `--json` list them all."""
    if findings.clusters:
        clusters = findings.clusters[:limit]
        total = findings.total("clusters")  # a stored head holds the first rows, and how many there are
        shown = f"; {len(clusters)} of {total}" if len(clusters) < total else ""
        table = Table(title=f"Clusters (resemblance >= {findings.threshold:g}; "
                            f"identical and lexically-equivalent first{shown})")
        table.add_column("id", justify="right")
        table.add_column("kind")
        table.add_column("files", justify="right")
        table.add_column("members", overflow="fold")
        table.add_column("sha256")
        for c in clusters:  # a row per member, so a folded path keeps its hash beside it
            kind = c.kind + (f" (>= {with_error(c.min_resemblance, c.min_resemblance_error or 0.0)})"
                             if c.min_resemblance else "")
            for number, m in enumerate(c.members):
                cluster = (str(c.id), kind, str(len(c.members))) if number == 0 else ("", "", "")
                table.add_row(*cluster, m.path, m.sha256[:12])
        console.print(fit_columns(console, table, paths={3}))
        _more(console, total - len(clusters), "clusters")
    else:
        console.print(f"No clusters at resemblance >= {findings.threshold:g}.")
    if findings.containments:
        containments = findings.containments[:limit]
        total = findings.total("containments")
        shown = f" ({len(containments)} of {total})" if len(containments) < total else ""
        table = Table(title=f"Containment (>= {findings.min_containment:g}) outside clusters{shown}")
        table.add_column("contained", overflow="fold")
        table.add_column("in container", overflow="fold")
        table.add_column("containment", justify="right")
        table.add_column("resemblance", justify="right")
        for c in containments:
            table.add_row(c.contained, c.container, with_error(c.containment, c.error),
                          with_error(c.resemblance, c.resemblance_error))
        console.print(fit_columns(console, table, paths={0, 1}))
        _more(console, total - len(containments), "containment pairs")
    else:
        console.print(f"No containment pairs at >= {findings.min_containment:g}.")
    _print_passages(console, findings)


def base_names(base: Any, shown: int = 3) -> str:
    """The base texts' names, the first few, then how many more (`scanner base` lists them all)."""
    names = [printable(os.path.basename(b.label) or b.label) for b in base[:shown]]
    return ", ".join(names) + (f" and {len(base) - shown} more" if len(base) > shown else "")


def _more(console: Console, left: int, what: str) -> None:
    if left > 0:
        console.print(f"... and {left} more {what}: `scanner clusters` lists them all, and `--json` has them.")


_TOP = 20  # documents and passage pairs printed; --json has them all


def _print_passages(console: Console, findings: Any) -> None:
    """Turnitin's list (each document's share found elsewhere) and MOSS's (pairs by shared words)."""
    words = findings.min_words
    if findings.base:
        console.print(f"Base text left out of every finding: {len(findings.base)} text(s), "
                      f"{sum(b.words for b in findings.base)} words ({base_names(findings.base)}).")
    if findings.unaligned:
        console.print(f"{findings.unaligned} document(s) not aligned yet: their passages are missing "
                      "until `scanner scan` runs again with write access.")
    if not findings.documents:
        console.print(f"No document shares a passage of >= {words} words with another.")
        if findings.common_documents:
            console.print(findings.common_note())
        return
    table = Table(title=f"Found elsewhere: share of each document in passages of >= {words} words "
                        f"({min(len(findings.documents), _TOP)} of {findings.total('documents')}, highest first)")
    table.add_column("document", overflow="fold")
    table.add_column("share", justify="right")
    table.add_column("words", justify="right")
    table.add_column("sources", justify="right")
    with_common = any(d.common for d in findings.documents[:_TOP])
    if with_common:
        table.add_column("common", justify="right")
    table.add_column("main sources (share)", overflow="fold")
    for d in findings.documents[:_TOP]:
        main = "; ".join(f"{s.path} ({s.share:.0%})" for s in d.sources[:3])
        more = f"; +{d.source_count - 3} more" if d.source_count > 3 else ""
        copies = f" (+{len(d.other_paths)} identical)" if d.other_paths else ""
        table.add_row(d.path + copies, f"{d.share:.0%}", str(d.words), str(d.source_count),
                      *([f"{d.common:.0%}" if d.common else "-"] if with_common else []), main + more)
    console.print(fit_columns(console, table, paths={0, 5 if with_common else 4}))
    if findings.common_documents:
        console.print(findings.common_note())
    table = Table(title=f"Passage pairs by shared words ({min(len(findings.passage_pairs), _TOP)} of "
                        f"{findings.total('passage_pairs')})")
    table.add_column("a", overflow="fold")
    table.add_column("b", overflow="fold")
    table.add_column("words", justify="right")
    table.add_column("of a", justify="right")
    table.add_column("of b", justify="right")
    table.add_column("passages", justify="right")
    for p in findings.passage_pairs[:_TOP]:
        semantic = getattr(p, "semantic", 0)  # a finding of an older services.findings has no such count
        kinds = (f" ({p.reworded} reworded)" if p.reworded else "") + (f" ({semantic} semantic)" if semantic else "")
        table.add_row(p.a.path, p.b.path, str(p.shared_words), f"{p.share_a:.0%}", f"{p.share_b:.0%}",
                      f"{p.passages}{kinds}")
    console.print(fit_columns(console, table, paths={0, 1}))
    note = findings.template_note()
    if note:  # after the list, which may be mostly one template's pairs
        console.print(note)


def _issues(console: Console, title: str, issues: Any, column: str) -> None:
    if not issues:
        return
    table = Table(title=f"{title} ({len(issues)})")
    table.add_column("path", overflow="fold")
    table.add_column(column, overflow="fold")
    for issue in issues[:_LIST_LIMIT]:
        table.add_row(issue.path, readable(issue.message))  # reasons may quote archive member names
    if len(issues) > _LIST_LIMIT:
        table.add_row(f"... and {len(issues) - _LIST_LIMIT} more (see --json)", "")
    console.print(table)


def print_scan(result: Any, findings: Any, params: Any, index_path: str, aligned: Any = None) -> None:
    console = _console()
    summary = Table(title=f"Scan of {index_path}", show_header=False)
    summary.add_column("what")
    summary.add_column("count", justify="right")
    for label, value in (
        ("files seen", result.files_seen),
        ("indexed (new or changed)", result.files_indexed),
        ("  of which copies linked", result.files_linked),
        ("  of which inside archives or mail", result.members),
        ("unchanged (skipped)", result.files_unchanged),
        *((("unchanged, read again (newer readers, passwords)", result.files_reread),) if result.files_reread else ()),
        ("vanished", result.files_vanished),
        ("too short to judge", len(result.too_short)),
        ("read in part (raw text indexed too)", len(result.partial)),
        ("errors", len(result.errors)),
        ("skipped", len(result.skipped)),
        ("seconds", f"{result.seconds:.2f}"),
        *((("documents aligned for passages", aligned.documents), ("  pairs sharing a passage", aligned.pairs),
           *((("  pairs not aligned: no text kept (--no-text)", aligned.without_text),) if aligned.without_text
             else ()),
           ("  seconds aligning", f"{aligned.seconds:.2f}")) if aligned is not None and aligned.documents else ()),
    ):
        summary.add_row(label, str(value))
    if result.resketch is not None:  # the index was made by an earlier algorithm version
        summary.add_row("re-sketched from stored text", str(result.resketch.documents))
        summary.add_row("  without stored text (read again)", str(result.resketch.forgotten))
    console.print(summary)
    console.print(f"parameters: w={params.shingle_size} s={params.sample_size} window={params.winnow_window} "
                  f"threshold={params.resemblance_threshold:g} min_containment={params.min_containment:g}")
    _issues(console, "Errors", list(result.errors), "error")
    _issues(console, "Skipped", list(result.skipped), "reason")
    _issues(console, "Read in part", list(result.partial), "reason")
    print_findings(console, findings, limit=_LIST_LIMIT)


def print_clusters(findings: Any) -> None:
    print_findings(_console(), findings)


def _filter_line(summary: dict[str, Any]) -> str:
    """The postings filter in a line: what a check then looks up."""
    state = summary.get("state", "build")
    if state == "ok" and not summary["postings"]:
        return "empty: every posting is still in the buffer, where each anchor is looked up"
    if state == "ok":
        return (f"{summary['bytes'] / 2**20:.1f} MiB for the {summary['postings']:,} postings of the segments: "
                f"lets {100 * summary['false_positive_rate']:.1f} % of absent anchors through to a look-up")
    if state == "off":
        return "none (too many postings for one): every anchor is looked up in every segment"
    if state == "unreadable":
        return f"damaged ({summary['reason']}): every anchor is looked up; the next scan rebuilds it"
    return "not built yet (the next scan builds it): every anchor is looked up"


def _semantic_line(summary: dict[str, Any]) -> str:
    """What the semantic pass stored, in a line."""
    if not summary.get("model"):
        return "none (scanned with --no-semantic, or nothing aligned yet)"
    return (f"{summary['documents']:,} documents with a vector by meaning, {summary['sentence_documents']:,} with "
            f"their sentence vectors ({summary['sentence_bytes'] / 2**20:.1f} MiB), by {summary['model']}")


def print_info(stats: Any, params: Any, plugins: list[dict[str, Any]], base: Sequence[Any] = ()) -> None:
    console = _console()
    if stats is not None:
        table = Table(title=f"Index {stats.path}", show_header=False)
        table.add_column("what")
        table.add_column("value", justify="right")
        for name in ("schema_version", "size_bytes", "files", "files_live", "files_vanished", "documents",
                     "documents_ok", "documents_too_short", "documents_with_text", "postings", "runs", "alerts"):
            table.add_row(name.replace("_", " "), str(getattr(stats, name)))
        if stats.passage_tasks_left:
            table.add_row("passage step stopped half-way", f"{stats.passage_tasks_left} tasks left: `scanner scan` "
                                                           "goes on")
        table.add_row("postings filter", _filter_line(stats.postings_filter))
        table.add_row("semantic pass", _semantic_line(stats.semantic))
        table.add_row("base text", f"{len(base)} text(s), {sum(b.words for b in base)} words: {base_names(base)}"
                      if base else "none (`scanner base FILE` adds an assignment's template)")
        for status, count in stats.file_status.items():
            table.add_row(f"files {status}", str(count))
        console.print(table)
        ptable = Table(title="Parameters", show_header=False)
        ptable.add_column("name")
        ptable.add_column("value")
        for name, value in params.to_dict().items():
            ptable.add_row(name, str(value))
        ptable.add_row("sketch_key", params.sketch_key().hex())
        console.print(ptable)
    if plugins:
        table = Table(title="Extractor plugins")
        columns = list(plugins[0])
        for column in columns:
            table.add_column(column)
        for row in plugins:
            table.add_row(*(", ".join(v) if isinstance(v, (list, tuple)) else str(v) for v in row.values()))
        console.print(table)
