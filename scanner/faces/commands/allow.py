"""`scanner allow PASSAGE-OR-FILE...`: text that must never raise a `watch` alert."""

from __future__ import annotations

import os

import click

from scanner.faces.commands.options import emit_json, index_option, json_option, quiet_option


@click.command(name="allow")
@click.argument("items", nargs=-1, required=True)
@index_option
@click.option("--allow-index", type=click.Path(dir_okay=False), default=None,
              help="The allow list to add to (default: protected.allow.db beside the protected --index).")
@json_option
@quiet_option
def command(items: tuple[str, ...], index_path: str, allow_index: str | None, as_json: bool, quiet: bool) -> int:
    """Add each ITEM (a file, whose text is read as `check` reads it, or else the passage itself) to the allow
    list that `scanner watch` consults: its text never alerts again."""
    from scanner.core.display import printable
    from scanner.core.errors import IndexStoreError
    from scanner.faces.commands._tables import message_console
    from scanner.index import Index
    from scanner.services.watch.allow import allow_index_path, allow_text
    from scanner.sources.extract import extract_text
    from scanner.sources.plugins import make_plugin_manager

    if not os.path.exists(index_path):
        raise IndexStoreError(f"no index at {index_path}: the allow list takes the protected index's parameters")
    with Index.open(index_path) as protected:
        params = protected.params
    target = allow_index or allow_index_path(index_path)
    pm = None
    added = []
    for item in items:
        if os.path.isfile(item):
            pm = pm or make_plugin_manager()
            text, label = extract_text(item, pm)[1].text, os.path.abspath(item)
        else:
            text, label = item, f"passage: {' '.join(item.split()[:8])}…"
        added.append(allow_text(target, params, text, label))
    if as_json:
        emit_json({"allow_index": target, "added": [{"label": a.label, "sha256": a.sha256, "words": a.words,
                                                     "already": a.already} for a in added]})
    elif not quiet:
        err = message_console()
        for a in added:
            err.print(f"{'already allowed' if a.already else 'allowed'}: {printable(a.label)} ({a.words} words) "
                      f"in {target}")
    return 0
