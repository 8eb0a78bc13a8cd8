"""`scanner tui` (and `scanner` alone): the terminal interface on an index."""

from __future__ import annotations

import click

from scanner.commands.options import index_option


@click.command(name="tui")
@index_option
def command(index_path: str) -> int:
    """Open the terminal user interface on the index."""
    from scanner.tui import make_app

    make_app(index_path).run()
    return 0
