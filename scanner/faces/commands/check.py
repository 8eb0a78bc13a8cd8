"""`scanner check FILE...`: matches of each file against the index, with passages."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scanner import __version__
from scanner.core.display import printable, readable, with_errors
from scanner.engine.align import condenses
from scanner.faces.commands.options import (
    emit_json,
    index_option,
    json_option,
    ocr_option,
    open_index_reader,
    password_options,
    quiet_option,
    semantic_model,
    semantic_option,
    similarity_options,
)
from scanner.sources.crawl import printable_path

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from scanner.core.model import Match
    from scanner.index import Index
    from scanner.services.check import CheckReport


def _render(console, query: str, text: str, report, index) -> None:
    """Paths and passages are hostile input: `query` comes in printable already, the rest goes through
    `printable` and `readable`, never as terminal controls."""
    from rich.table import Table
    from rich.text import Text

    from scanner.faces.commands._tables import fit_columns

    console.print(Text.assemble((f"{query}", "bold"), f": {report.share_sentence()}"), soft_wrap=True)
    if note := report.unmeasured_note():  # a share of 0 there says nothing: no passage could be looked for
        console.print(note, style="yellow", soft_wrap=True)
    if report.base_tokens:  # what the share is of: the rest of the document
        console.print(f"{report.base_tokens} words of the index's base text left out (`scanner base` lists it)",
                      style="dim")
    if not report.matches:
        return
    table = Table(show_edge=False, header_style="bold", expand=False)
    columns: list[tuple[str, JustifyMethod]] = [
        ("source", "left"), ("% of query", "right"), ("resemblance", "right"), ("query in doc", "right"),
        ("doc in query", "right"), ("est. edits", "right"), ("passages", "right")]
    for name, justify in columns:
        table.add_column(name, justify=justify)
    table.columns[0].overflow = "fold"
    for match in report.matches:
        share = report.share_in(match)
        measures = (match.resemblance, match.containment_query_in_doc, match.containment_doc_in_query)
        table.add_row(printable(match.path), "n/a" if share is None else f"{100 * share:.1f}",
                      *with_errors(measures, match.errors, 3),
                      str(match.edit_distance_estimate), str(len(match.passages)))
    console.print(fit_columns(console, table, paths={0}))
    for match in report.matches:
        note = normalization_note(match.normalizations)
        if note:  # an evasion is evidence: say what the match needed
            console.print(f"{printable(match.path)}: {note}", soft_wrap=True)
        doc_text = index.text(match.doc_id) or ""
        for passage in match.passages[:5]:
            side = Table(show_header=True, header_style="bold", expand=True, show_lines=False)
            where = f" in {printable(passage.found_in)}" if passage.found_in else ""  # hidden text is evidence
            kind = "" if passage.kind == "verbatim" else f" {passage.kind}"  # never read as a verbatim copy
            if passage.similarity is not None:
                kind += f" {round(passage.similarity, 3):g}"
            if passage.kind == "reworded" and condenses(passage.query_end - passage.query_start,
                                                        passage.doc_end - passage.doc_start):
                kind += " (a summary)"
            side.add_column(f"{query} [{passage.query_start}:{passage.query_end}]{where}{kind}", ratio=1)
            doc_where = f" in {printable(passage.doc_found_in)}" if passage.doc_found_in else ""
            side.add_column(f"{printable(match.path)} [{passage.doc_start}:{passage.doc_end}]{doc_where}", ratio=1)
            side.add_row(_highlight(text, passage.query_start, passage.query_end),
                         _highlight(doc_text, passage.doc_start, passage.doc_end))
            console.print(side)
        if len(match.passages) > 5:
            console.print(f"  … {len(match.passages) - 5} more passages from {printable(match.path)} "
                          "(use --json for all)")


def normalization_note(counts: dict[str, int]) -> str:
    """'matched after mapping 212 confusable characters, rejoining 14 letter-spaced words' ('' for none)."""
    def plural(n: int, what: str) -> str:
        return f"{n} {what}{'s' if n != 1 else ''}"

    parts = []
    if counts.get("confusables"):
        parts.append(f"mapping {plural(counts['confusables'], 'confusable character')}")
    if counts.get("letter_spaced"):
        parts.append(f"rejoining {plural(counts['letter_spaced'], 'letter-spaced word')}")
    if counts.get("invisible"):
        parts.append(f"removing {plural(counts['invisible'], 'invisible character')} inside words")
    if counts.get("reordered"):
        parts.append(f"swapping back the order of {plural(counts['reordered'], 'word')}")
    return "matched after " + ", ".join(parts) if parts else ""


def _highlight(text: str, start: int, end: int, context: int = 60, limit: int = 600):
    from rich.text import Text

    shown_end = min(end, start + limit)
    out = Text()
    out.append(("…" if start > context else "") + readable(text[max(0, start - context):start]), style="dim")
    out.append(readable(text[start:shown_end]), style="bold black on yellow")
    if shown_end < end:
        out.append(f" […{end - shown_end} chars]", style="italic")
    out.append(readable(text[end:end + context]) + ("…" if end + context < len(text) else ""), style="dim")
    return out


def _json_match(match: Match, report: CheckReport, index: Index) -> dict[str, object]:
    """A match as --json gives it: with its share of the query and every path of its document; each passage
    with its kind and, a semantic one, its similarity (`Passage.to_json`)."""
    if match.doc_id is None:  # check_text names the indexed document of every match
        raise ValueError(f"a match without its indexed document: {match.path}")
    share = report.share_in(match)  # None: not measured (no text of it kept)
    return dict(match.to_json(), query_share=None if share is None else round(share, 6),
                paths=list(getattr(index.document(match.doc_id), "paths", ())))


@click.command(name="check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@index_option
@similarity_options
@click.option("--top", type=click.IntRange(1, 10_000), default=10, show_default=True, help="Matches per file.")
@click.option("--min-words", type=click.IntRange(1, 10_000), default=None,
              help="Ignore shared passages shorter than this many words (default: the guaranteed run, w + window - 1).")
@click.option("--verbatim", is_flag=True,
              help="Report verbatim shared runs only, not reworded sentences (faster; every passage exact).")
@click.option("--exclude-quotes", is_flag=True, help="Text inside quotation marks never counts.")
@click.option("--exclude-bibliography", is_flag=True, help="A final References/Bibliography section never counts.")
@click.option("--exclude-index", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Index of boilerplate/base text whose passages never count.")
@click.option("--add", is_flag=True, help="Also add the checked files to the index.")
@ocr_option
@password_options
@semantic_option
@json_option
@quiet_option
def command(files: tuple[Path, ...], index_path: str, shingle_size: int | None, threshold: float | None,
            min_containment: float | None, top: int, min_words: int | None, verbatim: bool, exclude_quotes: bool,
            exclude_bibliography: bool, exclude_index: Path | None, add: bool, ocr: bool,
            ocr_languages: str,
            passwords: tuple[str, ...], semantic: bool,
            as_json: bool, quiet: bool) -> int:
    """Match each FILE against the index; exit 1 when a match is above the threshold."""
    from rich.console import Console

    from scanner.core.errors import InputError
    from scanner.core.model import TextStatus
    from scanner.faces.commands._tables import message_console
    from scanner.index import Index
    from scanner.services.check import CheckOptions, check_extracted, file_and_members, is_finding, own_file_options
    from scanner.services.ingest import checked_file_outcome, write_checked_file
    from scanner.services.prepared import CHECK_CACHE_TOKENS, PreparedSides
    from scanner.sources.extract import ExtractLimits, extract_file
    from scanner.sources.plugins import make_plugin_manager

    index = Index.open(index_path, readonly=False) if add else open_index_reader(index_path, quiet=quiet)
    if semantic and not verbatim:
        index.read_meaning_ahead()  # on a thread, while the model loads and the files are read
    params = index.params
    if shingle_size is not None and shingle_size != params.shingle_size:
        from scanner.core.errors import ParameterMismatchError

        raise ParameterMismatchError(
            f"index {index_path} was built with --shingle-size {params.shingle_size}, not {shingle_size}")
    params = params.replace(**{k: v for k, v in (("resemblance_threshold", threshold),
                                                  ("min_containment", min_containment)) if v is not None})
    exclude = open_index_reader(str(exclude_index), quiet=quiet) if exclude_index else None
    model = semantic_model(semantic and not verbatim, quiet)
    # a source matched by several of the files is read, shingled and embedded once
    options = CheckOptions(top=top, min_words=min_words, verbatim=verbatim, exclude_quotes=exclude_quotes,
                           exclude_bibliography=exclude_bibliography, threshold=threshold,
                           min_containment=min_containment, semantic=model,
                           documents=PreparedSides(index, params, model, CHECK_CACHE_TOKENS))
    pm = make_plugin_manager()
    console = Console(highlight=False, soft_wrap=False, markup=False)  # paths and passages are not markup
    err = message_console()
    results: list[dict[str, object]] = []
    findings, unreadable = False, False
    for path in files:
        shown = printable_path(str(path))  # the name the index would give the file
        try:
            limits = ExtractLimits(ocr=ocr, ocr_languages=ocr_languages, passwords=passwords)
            record, extracted = extract_file(path, pm, limits)
        except (OSError, InputError) as exc:
            unreadable = True
            why = getattr(exc, "why", None) or getattr(exc, "strerror", None) or str(exc)
            results.append({"query": shown, "sha256": None, "error": str(exc), "matches": []})
            if not quiet:
                err.print(f"scanner: {shown}: {why}")
            continue
        if add:  # the file (and its members) join the index as a scan would have put them
            write_checked_file(index, *checked_file_outcome(str(path), shown, record, extracted, params))
        # a container (archive, mail) is checked member by member, each under its name `file!/member`
        for query, query_record, query_extracted in file_and_members(os.fspath(path), shown, record, extracted):
            if query_extracted.status is TextStatus.CONTAINER:
                continue
            if not query_extracted.status.has_text:
                detail = f"{query_extracted.status.value}: {query_extracted.reason}" if query_extracted.reason \
                    else query_extracted.status.value
                unreadable = True
                results.append({"query": query, "sha256": query_record.sha256 or None, "error": detail,
                                "matches": []})
                if not quiet:
                    err.print(f"scanner: {query}: {readable(detail)}")
                continue
            report = check_extracted(query_extracted, index, params,
                                     own_file_options(options, index, query_record.path, query_record.sha256),
                                     exclude)
            findings = findings or any(is_finding(m, params) for m in report.matches)
            results.append({
                "query": query,
                "sha256": query_record.sha256,
                "status": query_extracted.status.value,
                "tokens": report.n_tokens,
                "coverage": round(report.coverage, 6),
                "base_tokens": report.base_tokens,
                "sources": report.sources,
                "sources_without_text": report.without_text,
                "matches": [_json_match(m, report, index) for m in report.matches],
            })
            if not as_json:
                _render(console, query, query_extracted.text, report, index)
    if as_json:
        emit_json({
            "results": results,
            "guarantee": f"any run of at least {params.guaranteed_run} shared words is found",
            "params": params.to_dict(),
            "version": __version__,
            "index": index_path,
        })
    elif not quiet:  # a note on the whole run, set apart from the last file's result (a bare headline when 0 sources)
        err.print()
        err.print(f"guarantee: any run of at least {params.guaranteed_run} shared words is found "
                  f"(w={params.shingle_size}, winnowing window {params.winnow_window})", style="dim")
    if findings:
        return 1
    return 3 if unreadable else 0
