"""Extractor plugins: pluggy hookspecs, the plugin manager factory, backend choice.

Built-in extractors (the repository's `plugins/` folder, installed as `scanner_plugins`) are registered through the
same manager as third-party ones (entry-point group ``scanner``), the way
datasette does it, so a plugin can override a built-in by priority alone.
There is no module-level manager: callers make one and pass it down.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import pluggy

from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits

PROJECT = "scanner"
ENTRY_POINT_GROUP = "scanner"
BUILTIN_PACKAGE = "scanner_plugins"  # the repository's plugins/ folder, installed under the project's own name

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class Extractor:
    """One text extractor a plugin offers.

    Attributes:
        name: backend name, unique, used by ``prefer=`` (e.g. "pdfminer", "pdfium").
        mimes: MIME types it reads; an entry ending in "/" ("text/") is a prefix.
        priority: the highest-priority matching extractor wins.
        extract: ``(data, mime, limits) -> Extracted``; pure, no file I/O. It may
            raise ``ExtractionError(reason, status=...)``; the caller turns that
            (and any other exception) into a status.
        verbatim: its text is the whole input decoded (plain text), so there is
            nothing to check; otherwise, for text-like input, the words it kept
            are counted against the input's (`scanner.sources.extract.loss`).
    """

    name: str
    mimes: tuple[str, ...]
    priority: int
    extract: Callable[[bytes, str, ExtractLimits], Extracted]
    verbatim: bool = False

    def specificity(self, mime: str) -> int:
        """0 if it does not read `mime`, else the length of the best matching entry."""
        mime = mime.lower()
        best = 0
        for entry in self.mimes:
            entry = entry.lower()
            if entry == mime or (entry.endswith("/") and mime.startswith(entry)):
                best = max(best, len(entry) + (1000 if entry == mime else 0))
        return best


class ScannerSpec:
    """Hooks a scanner plugin may implement."""

    @hookspec
    def scanner_extractors(self) -> list[Extractor]:  # type: ignore[empty-body]
        """Return the text extractors this plugin provides."""


def make_plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the built-ins and (optionally) installed plugins."""
    # the built-ins are found by name, as entry points are: the plugins import this module, not the reverse
    builtin_modules = importlib.import_module(BUILTIN_PACKAGE).BUILTIN_MODULES

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(ScannerSpec)
    for module_name in builtin_modules:
        module = importlib.import_module(module_name)
        pm.register(module, name=module_name)
    if load_entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def _extractors_with_source(pm: pluggy.PluginManager) -> list[tuple[Extractor, str]]:
    out: list[tuple[Extractor, str]] = []
    for impl in pm.hook.scanner_extractors.get_hookimpls():
        source = pm.get_name(impl.plugin) or str(getattr(impl.plugin, "__name__", repr(impl.plugin)))
        # pluggy types a hook implementation as returning object; the hookspec above says what it returns
        extractors = cast("list[Extractor] | None", impl.function())
        for extractor in extractors or ():
            out.append((extractor, source))
    out.sort(key=lambda pair: (-pair[0].priority, pair[0].name))
    return out


def list_extractors(pm: pluggy.PluginManager) -> list[Extractor]:
    """Every registered extractor, highest priority first, then by name."""
    return [extractor for extractor, _ in _extractors_with_source(pm)]


def plugin_summaries(pm: pluggy.PluginManager) -> list[dict[str, object]]:
    """What `scanner info` shows: name, mimes, priority and the module that provides it."""
    return [
        {"name": e.name, "mimes": list(e.mimes), "priority": e.priority, "source": source}
        for e, source in _extractors_with_source(pm)
    ]


def candidates_for(
    extractors: list[Extractor], mime: str, prefer: str | None = None
) -> list[Extractor]:
    """Extractors that read `mime`, best first.

    Order: the `prefer`red backend if it reads this MIME, then by priority, then
    by how specific the match is (exact type before a "text/" prefix), then name.
    """
    matching = [e for e in extractors if e.specificity(mime)]
    matching.sort(key=lambda e: (e.name != prefer, -e.priority, -e.specificity(mime), e.name))
    return matching


def choose_extractor(
    pm: pluggy.PluginManager, mime: str, prefer: str | None = None
) -> Extractor | None:
    """The extractor that should read `mime`, or None when no plugin can."""
    found = candidates_for(list_extractors(pm), mime, prefer)
    return found[0] if found else None
