"""`scanner report`: export findings in one of the registered formats (HTML, JSON, CSV, PAN XML), with evidence."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from scanner.faces.commands.options import (
    index_option,
    open_index_reader,
    passage_options,
    quiet_option,
    semantic_model,
    semantic_option,
)
from scanner.faces.report.formats import FORMATS


class FormatChoice(click.Choice):
    """The names in the report format registry at the time they are asked for (parsing, --help, completion),
    not at import: a format registered later is offered too."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(FORMATS)

    @choices.setter
    def choices(self, _: object) -> None:
        """click.Choice assigns its choices once; this one reads the registry instead."""


def _format_help() -> str:
    notes = "; ".join(f"{f.name}: {f.note} into folder -o" for f in FORMATS.values() if f.folder and f.note)
    return f"Report format ({notes})." if notes else "Report format."


def _output_help() -> str:
    folders = ", ".join(f.name for f in FORMATS.values() if f.folder)
    return f"Output file (folder for {folders})." if folders else "Output file."


def recreate_command(index_path: str, fmt: str, output: Path, check_file: Path | None, threshold: float,
                     min_containment: float, min_words: int | None = None, min_share: float = 0.0) -> str:
    """The command line that re-creates the report, from the parsed values rather than raw argv:
    paths absolute, the index even when it came from $SCANNER_INDEX, thresholds explicit even when defaulted
    (so a later change of defaults cannot change what it reproduces). `--force` is left for the reader to add."""
    parts = ["scanner", "report", "--index", os.path.abspath(index_path), "--format", fmt,
             "-o", os.path.abspath(output)]
    if check_file is not None:
        parts += ["--check", os.path.abspath(check_file)]
    parts += ["--threshold", f"{threshold:g}", "--min-containment", f"{min_containment:g}"]
    if min_words is not None:
        parts += ["--min-words", str(min_words)]
    parts += ["--min-share", f"{min_share:g}"]
    return " ".join(shlex.quote(p) for p in parts)


@click.command(name="report")
@index_option
@click.option("--format", "fmt", type=FormatChoice(), default="html", show_default=True, help=_format_help())
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help=_output_help())
@click.option("--check", "check_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Report one document's matches against the index instead of the whole index.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None, help="Resemblance threshold.")
@click.option("--min-containment", type=click.FloatRange(0, 1), default=None, help="Containment threshold.")
@passage_options
@click.option("--force", is_flag=True, help="Overwrite an existing output.")
@semantic_option
@quiet_option
def command(index_path: str, fmt: str, output: Path, check_file: Path | None, threshold: float | None,
            min_containment: float | None, min_words: int | None, min_share: float, force: bool, semantic: bool,
            quiet: bool) -> int:
    """Write an evidence-grade report of the index (or of one checked document).

    Besides near-duplicates and containments it lists every pair of documents sharing passages of
    --min-words or more, and each document's share found elsewhere (--min-share filters both).
    Never overwrites an existing file unless --force.
    """
    from scanner.faces.report import Selection, checked_document, write_report
    from scanner.faces.report.builder import effective_params
    from scanner.faces.report.output import check_path, target_free

    check_path(output)
    if not FORMATS[fmt].folder:
        target_free(output, force)  # fail before opening the index or extracting anything
    with open_index_reader(index_path, quiet=quiet) as index:
        check = checked_document(check_file) if check_file is not None else None
        # the sentence model for what the report aligns itself (a --check); the index's pairs come stored
        model = semantic_model(semantic and check is not None, quiet)
        selection = Selection(check, threshold, min_containment, min_words, min_share, model)
        params = effective_params(index.params, selection)
        command_line = recreate_command(index_path, fmt, output, check_file, params.resemblance_threshold,
                                        params.min_containment, params.passage_words, min_share)
        written = write_report(index, index.params, fmt, output, selection=selection, force=force,
                               command=command_line, index_path=index_path)
    if not quiet:
        click.echo(f"scanner: wrote {fmt} report to {written}", err=True)
    return 0
