"""`scanner info`: index statistics, parameters, schema version and plugins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from scanner import __version__
from scanner.faces.commands.options import emit_json, index_option, json_option, quiet_option


def _plugins() -> list[dict[str, Any]]:
    from scanner.sources import plugins

    pm = plugins.make_plugin_manager()
    summaries = getattr(plugins, "plugin_summaries", None)
    if summaries is not None:
        return [dict(s) if isinstance(s, dict) else _as_dict(s) for s in summaries(pm)]
    return [{"name": name} for name, _ in pm.list_name_plugin()]


def _as_dict(obj: Any) -> dict[str, Any]:
    if hasattr(obj, "__dataclass_fields__"):
        return {name: getattr(obj, name) for name in obj.__dataclass_fields__}
    return {"plugin": str(obj)}


@click.command(name="info")
@index_option
@json_option
@quiet_option
def command(index_path: str, as_json: bool, quiet: bool) -> None:
    """Index statistics, stored parameters, schema version and extractor plugins."""
    from scanner.index import LATEST_VERSION, Index

    stats = params = None
    stale = False
    if Path(index_path).exists():
        with Index.open(index_path, readonly=True, accept_stale=True) as index:
            stats, params, stale = index.stats(), index.params, index.stale
        if stale and not quiet and not as_json:
            click.echo(f"scanner: index {index_path} holds sketches of an earlier scanner algorithm; run "
                       f"`scanner scan DIR --index {index_path}` once (any folder) to re-sketch its stored texts",
                       err=True)
    elif not quiet and not as_json:
        click.echo(f"scanner: no index at {index_path}", err=True)
    plugins = _plugins()
    if as_json:
        emit_json({
            "version": __version__,
            "index": index_path,
            "schema_version_supported": LATEST_VERSION,
            "stats": stats.to_json() if stats else None,
            "params": params.to_dict() if params else None,
            "sketch_key": params.sketch_key().hex() if params else None,
            "stale_sketches": stale,
            "plugins": plugins,
        })
        return
    from scanner.faces.commands._tables import print_info

    print_info(stats, params, plugins)
