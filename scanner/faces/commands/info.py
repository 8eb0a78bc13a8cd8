"""`scanner info`: index statistics, parameters, schema version, plugins and the optional tools found."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from scanner import __version__
from scanner.faces.commands.options import emit_json, index_option, json_option, open_index_reader, quiet_option


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


@dataclass(frozen=True)
class Tool:
    """An optional program an extractor runs: its version (None: not found) and what else to know about it."""

    version: str | None
    detail: str = ""


def _tesseract() -> Tool:
    from scanner_plugins.ocr import INSTALL_HINT, tesseract_info

    found = tesseract_info()
    if found is None:
        return Tool(None, f"not found: images and scanned PDF pages get no text ({INSTALL_HINT})")
    return Tool(found.version, f"{found.path}; languages: {', '.join(found.languages) or 'none'}")


def _antiword() -> Tool:
    from scanner_plugins.doc import MISSING, antiword_path, antiword_version

    path = antiword_path()
    if path is None:
        return Tool(None, f"not found: legacy Word .doc files get no text ({MISSING})")
    return Tool(antiword_version(path), path)


def _libarchive() -> Tool:
    from scanner_plugins.libarchive_formats import MISSING, libarchive_module

    found = libarchive_module()
    if found is None:
        return Tool(None, f"not found: RAR, ISO 9660, Cabinet, cpio and ar archives are not opened ({MISSING})")
    number = found.ffi.version_number()  # 3006002: 3.6.2
    return Tool(f"{number // 1_000_000}.{number // 1000 % 1000}.{number % 1000}",
                f"{found.ffi.libarchive_path}; RAR 4 and 5 (not decrypted), ISO 9660, Cabinet, cpio and ar read")


def _sentence_model() -> Tool:
    from scanner.sources.models import NOT_INSTALLED, model_folder, model_key

    key = model_key()
    if key is None:
        return Tool(None, f"not found: no semantic pass ({NOT_INSTALLED})")
    return Tool(key.split("@", 1)[1], f"{key.split('@', 1)[0]} in {model_folder()}; read offline, never downloaded")


# Optional programs, name -> probe, in the order shown. A new one is a function returning a Tool, added here.
TOOL_PROBES: dict[str, Callable[[], Tool]] = {
    "tesseract": _tesseract,
    "antiword": _antiword,
    "libarchive": _libarchive,
    "wordllama": _sentence_model,  # the semantic pass's sentence model (issue 21)
}


def tools() -> dict[str, Tool]:
    """Every optional program, probed now (each probe is cached per process by its plugin)."""
    return {name: probe() for name, probe in TOOL_PROBES.items()}


def _print_tools(found: dict[str, Tool]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Optional tools")
    for column in ("tool", "version", "detail"):
        table.add_column(column)
    for name, tool in found.items():
        table.add_row(name, tool.version or "not found", tool.detail)
    console = Console(highlight=False, markup=False)  # as the tables above: no markup, no cut paths
    if not console.is_terminal:
        console = Console(highlight=False, markup=False, width=4096)
    console.print(table)


@click.command(name="info")
@index_option
@json_option
@quiet_option
def command(index_path: str, as_json: bool, quiet: bool) -> None:
    """Index statistics, stored parameters, schema version, extractor plugins and optional tools (Tesseract)."""
    from scanner.index import LATEST_VERSION

    stats = params = None
    stale = False
    base: list[Any] = []
    if Path(index_path).exists():
        with open_index_reader(index_path, quiet=quiet, accept_stale=True) as index:
            stats, params, stale, base = index.stats(), index.params, index.stale, index.base.listed()
        if stale and not quiet and not as_json:
            click.echo(f"scanner: index {index_path} holds sketches of an earlier scanner algorithm; run "
                       f"`scanner scan DIR --index {index_path}` once (any folder) to re-sketch its stored texts",
                       err=True)
    elif not quiet and not as_json:
        click.echo(f"scanner: no index at {index_path}", err=True)
    plugins = _plugins()
    found = tools()
    if as_json:
        emit_json({
            "version": __version__,
            "index": index_path,
            "schema_version_supported": LATEST_VERSION,
            "stats": stats.to_json() if stats else None,
            "params": params.to_dict() if params else None,
            "sketch_key": params.sketch_key().hex() if params else None,
            "base": [b.to_json() for b in base],
            "stale_sketches": stale,
            "plugins": plugins,
            "tools": {name: tool.version for name, tool in found.items()},
            "tool_details": {name: tool.detail for name, tool in found.items()},
        })
        return
    from scanner.faces.commands._tables import print_info

    print_info(stats, params, plugins, base)
    _print_tools(found)
