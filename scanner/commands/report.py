"""`scanner report`: export findings as HTML, JSON, CSV or PAN XML, with evidence."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from scanner.commands.options import index_option, quiet_option


@click.command(name="report")
@index_option
@click.option("--format", "fmt", type=click.Choice(["html", "json", "csv", "pan"]), default="html",
              show_default=True, help="Report format (pan: one XML per suspicious document into folder -o).")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Output file (folder for pan).")
@click.option("--check", "check_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Report one document's matches against the index instead of the whole index.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None, help="Resemblance threshold.")
@click.option("--min-containment", type=click.FloatRange(0, 1), default=None, help="Containment threshold.")
@click.option("--force", is_flag=True, help="Overwrite an existing output.")
@quiet_option
def command(index_path: str, fmt: str, output: Path, check_file: Path | None, threshold: float | None,
            min_containment: float | None, force: bool, quiet: bool) -> int:
    """Write an evidence-grade report of the index (or of one checked document)."""
    from scanner.errors import InputError
    from scanner.index import Index
    from scanner.model import TextStatus
    from scanner.report import write_report

    index = Index.open(index_path, readonly=True)
    check = None
    if check_file is not None:
        from scanner.extract import extract_file
        from scanner.plugins import make_plugin_manager

        record, extracted = extract_file(check_file, make_plugin_manager())
        if extracted.status not in (TextStatus.OK, TextStatus.TOO_SHORT):
            raise InputError(f"{check_file}: {extracted.status.value}: {extracted.reason}")
        check = (str(check_file), record.sha256, extracted.text)
    command_line = "scanner " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "scanner report"
    written = write_report(index, index.params, fmt, output, check=check, threshold=threshold,
                           min_containment=min_containment, force=force, command=command_line,
                           index_path=index_path)
    if not quiet:
        click.echo(f"scanner: wrote {fmt} report to {written}", err=True)
    return 0
