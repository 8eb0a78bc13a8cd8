"""`scanner base [FILE...]`: the index's base texts (an assignment's template, starter code), which no finding
counts: list them, add FILEs, or remove some."""

from __future__ import annotations

import os

import click

from scanner.faces.commands.options import emit_json, index_option, json_option, quiet_option


@click.command(name="base")
@click.argument("files", nargs=-1, type=click.Path(exists=True))
@index_option
@click.option("--remove", "remove", multiple=True, metavar="NAME",
              help="Remove a base text: its name as listed, its SHA-256 (8 digits or more), or 'all' (repeatable).")
@json_option
@quiet_option
def command(files: tuple[str, ...], index_path: str, remove: tuple[str, ...], as_json: bool, quiet: bool) -> int:
    """Add each FILE's text (every member of an archive, every file of a folder) to the base texts of the
    index, remove some, and
    list them. Text every document may hold by design is then left out of every finding: passages, shares,
    clusters, containments, `check` and `watch`. The next `scanner scan` finds the passages again."""
    from rich.console import Console

    from scanner.core.display import printable
    from scanner.core.errors import IndexStoreError
    from scanner.faces.commands._tables import message_console
    from scanner.index import Index
    from scanner.services.base import add_base_files
    from scanner.sources.limits import ExtractLimits
    from scanner.sources.plugins import make_plugin_manager

    if not os.path.exists(index_path):
        raise IndexStoreError(f"no index at {index_path}: scan a folder first "
                              "(`scanner scan DIR --base FILE` does both)")
    with Index.open(index_path, readonly=False) as index:
        read = add_base_files(index, files, make_plugin_manager(), ExtractLimits()) if files else None
        added = list(read.added) if read else []
        without_text = list(read.without_text) if read else []
        removed = [base for name in remove for base in index.base.remove(name)]
        listed = index.base.listed()
    changed = bool(removed) or any(a.new for a in added)
    if as_json:
        emit_json({"index": index_path, "base": [b.to_json() for b in listed],
                   "added": [{**a.base.to_json(), "new": a.new} for a in added],
                   "removed": [b.to_json() for b in removed], "without_text": without_text,
                   "rescan_needed": changed})
        return 0
    if quiet:
        return 0
    out, err = Console(markup=False, highlight=False), message_console()
    for a in added:
        err.print(f"{'added' if a.new else 'already a base text'}: {printable(a.base.label)} ({a.base.words} words)")
    for b in removed:
        err.print(f"removed: {printable(b.label)}")
    for path in without_text:
        err.print(f"no text, passed over: {path}")
    if not listed:
        out.print("no base text: every shared passage counts")
    for b in listed:
        out.print(f"{b.sha256[:12]}  {b.words:>7} words  {printable(b.label)}")
    if changed:
        err.print(f"the passages are found again at the next `scanner scan ... --index {index_path}`")
    return 0
