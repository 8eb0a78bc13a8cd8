"""Command-line face: the only module that exits.

Sub-commands live in `scanner.faces.commands.<name>` and are imported only when run,
so `scanner --help` stays instant. Errors travel up as `ScannerError`s and are
turned into exit codes by `exit_code_for`, in one place.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from enum import IntEnum

import click

from scanner import __version__
from scanner.core.errors import (
    IndexStoreError,
    InputError,
    ParameterMismatchError,
    ResourceError,
    ScannerError,
    UsageError,
)

# name -> (module, one-line help); help is here so listing needs no import
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": ("scanner.faces.commands.scan",
             "Crawl, extract, sketch and index files; report clusters and containments."),
    "check": ("scanner.faces.commands.check", "Match documents against the index, with shared passages."),
    "compare": ("scanner.faces.commands.compare", "Every measure for one pair of files."),
    "watch": ("scanner.faces.commands.watch", "Watch folders and alert when protected text turns up."),
    "allow": ("scanner.faces.commands.allow", "Add text that must never raise a watch alert (the allow list)."),
    "base": ("scanner.faces.commands.base", "List, add or remove base text (a template) that no finding counts."),
    "report": ("scanner.faces.commands.report", "Export findings as HTML, JSON, CSV or PAN XML."),
    "clusters": ("scanner.faces.commands.clusters", "Clusters of near-duplicates in an existing index."),
    "info": ("scanner.faces.commands.info", "Index statistics, parameters and plugins."),
    "tui": ("scanner.faces.commands.tui", "Open the terminal user interface."),
}


# a scan commits files in batches, and its passage step keeps its plan and each task it finished: what it
# stored stays, and the same command goes on from there
INTERRUPTED = "scanner: interrupted (what was already stored is kept: run the same command again to go on)"


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    UNREADABLE = 3
    RESOURCE = 4  # out of a resource: disk, write access, open files, memory, the index's folder
    INTERRUPTED = 130


def exit_code_for(error: BaseException) -> ExitCode:
    if isinstance(error, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(error, (UsageError, ParameterMismatchError, click.UsageError)):
        return ExitCode.USAGE
    if isinstance(error, (ResourceError, MemoryError)):
        return ExitCode.RESOURCE
    if isinstance(error, (InputError, IndexStoreError, OSError)):
        return ExitCode.UNREADABLE
    return ExitCode.UNREADABLE


def as_scanner_error(error: Exception) -> ScannerError | None:
    """`error` as one of the tool's own: a shortage of the machine (full disk, too many open files, no
    memory, no write access: OSError, SQLite or MemoryError) becomes a ResourceError, another OSError an
    InputError; None for anything else, a bug whose traceback is wanted."""
    if isinstance(error, ScannerError):
        return error
    if isinstance(error, MemoryError):  # before any import: there may be no memory for one
        return ResourceError("out of memory")
    from scanner.core.display import printable
    from scanner.index.failures import resource_error

    where = getattr(error, "filename", None)  # an evidence name may be hostile: shown escaped
    found = resource_error(error, printable(os.fsdecode(where)) if isinstance(where, (str, bytes)) else "")
    if found is not None:
        return found
    return InputError(str(error)) if isinstance(error, OSError) else None


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return importlib.import_module(COMMANDS[name][0]).command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scanner")
@click.pass_context
def group(ctx: click.Context) -> None:
    """Find copies, near-copies and lifted passages among documents.

    Run with no command to open the terminal interface on ./scanner.db
    (or $SCANNER_INDEX).
    """
    if ctx.invoked_subcommand is None:
        tui = group.get_command(ctx, "tui")
        if tui is None:
            click.echo(ctx.get_help())
            return
        # parsed like `scanner tui`, so its defaults (e.g. $SCANNER_INDEX) apply
        with tui.make_context("tui", [], parent=ctx) as sub:
            tui.invoke(sub)


def _quiet_third_party_logs() -> None:
    """pdfminer logs every malformed object; the scan already reports one line per file."""
    import logging

    for name in ("pdfminer", "pypdfium2", "charset_normalizer"):
        logging.getLogger(name).setLevel(logging.ERROR)


def main(argv: list[str] | None = None) -> None:
    _quiet_third_party_logs()
    try:
        code = group.main(args=argv, prog_name="scanner", standalone_mode=False)
        if not isinstance(code, int):
            code = ExitCode.OK
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = ExitCode.USAGE
    except (click.Abort, KeyboardInterrupt):
        click.echo(INTERRUPTED, err=True)
        code = ExitCode.INTERRUPTED
    except Exception as exc:
        error = as_scanner_error(exc)
        if error is None:
            raise
        click.echo(f"scanner: error: {error}", err=True)
        code = exit_code_for(error)
    sys.exit(int(code or 0))


def console_main() -> None:
    """The `scanner` program: `main`, whose process then ends without a garbage collection over the
    hundreds of thousands of objects its imports made (0.05-0.1 s of every command's exit, a third of an
    empty folder's scan). Not in `main`, which tests call many times in one process."""
    atexit.register(gc.freeze)  # registered first, so it runs after every other exit handler
    main()
