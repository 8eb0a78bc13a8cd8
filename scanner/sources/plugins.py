"""Extractor plugins: pluggy hookspecs, the plugin manager factory, backend choice.

Built-in extractors (the repository's `plugins/` folder, installed as `scanner_plugins`) are registered through the
same manager as third-party ones (entry-point group ``scanner``), the way
datasette does it, so a plugin can override a built-in by priority alone.
There is no module-level manager: callers make one and pass it down.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

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
        extract_file: ``(path, mime, limits) -> Extracted`` as `extract`, for a file over
            `ExtractLimits.max_bytes`, which it reads where it lies, read-only (a phone's chat database runs
            to gigabytes); None: such a file stays `too_large`.
    """

    name: str
    mimes: tuple[str, ...]
    priority: int
    extract: Callable[[bytes, str, ExtractLimits], Extracted]
    verbatim: bool = False
    extract_file: Callable[[str, str, ExtractLimits], Extracted] | None = None

    def specificity(self, mime: str) -> int:
        """0 if it does not read `mime`, else the length of the best matching entry."""
        return _specificity(self.mimes, mime)


# the marked region of a document's properties (title, subject, comments, keywords, custom values: text a reader
# sees under File > Properties and on no page), the same words from every format's reader
PROPERTIES_REGION = "the document properties"


@dataclass(frozen=True)
class Member:
    """One member of a container: its name inside it ("dir/file.txt"), and its bytes or why there are none.

    `status` and `reason` are set (a TextStatus value: "encrypted", "too_large", "corrupt") when `data` is
    None: a member that cannot be read is still named, never silently skipped. `mtime_ns` is the member's
    own time when the container records one (0: the container's). `picture`: a picture of the document (a
    logo, a photograph, a screenshot), read by OCR; one without text lost none, so it is counted in the
    container's meta (`pictures_without_text`) rather than listed as a file without text.
    """

    name: str
    data: bytes | None
    status: str = ""
    reason: str = ""
    mtime_ns: int = 0
    picture: bool = False
    decrypted: bool = False  # read after a password given to the scan opened it (`limits.DECRYPTED`)


@dataclass(frozen=True)
class Unpacker:
    """One container format a plugin opens (archives, mail stores, mail attachments).

    Attributes:
        name: unique name shown by `scanner info`.
        mimes: MIME types it opens (as for `Extractor`).
        priority: the highest-priority matching unpacker wins.
        unpack: ``(data, mime, budget) -> iterator of Member``; pure, no file I/O. Every byte it inflates
            goes through ``budget.read`` or ``budget.take`` (`scanner.sources.extract.containers.Budget`), which
            raises ``ExtractionError(status="too_large")`` when the file's expansion limits are spent.
            It may raise ExtractionError for a container it cannot open at all.
        has_text: the container has text of its own (a mail's body), read by the extractor for its MIME.
        unpack_file: ``(stream, mime, budget) -> iterator of Member`` as `unpack`, from a binary file opened
            read-only, for a file over `ExtractLimits.max_bytes` (which is never held in memory whole: a
            mailbox exported from a mail service runs to gigabytes); None: such a file stays `too_large`.
    """

    name: str
    mimes: tuple[str, ...]
    priority: int
    unpack: Callable[[bytes, str, Any], Iterator[Member]]
    has_text: bool = False
    unpack_file: Callable[[BinaryIO, str, Any], Iterator[Member]] | None = None

    def specificity(self, mime: str) -> int:
        return _specificity(self.mimes, mime)


def _specificity(mimes: tuple[str, ...], mime: str) -> int:
    """0 if no entry reads `mime`, else the length of the best matching entry (exact beats a "text/" prefix)."""
    mime = mime.lower()
    best = 0
    for entry in _lowered(mimes):
        if entry == mime or (entry[-1:] == "/" and mime.startswith(entry)):
            best = max(best, len(entry) + (1000 if entry == mime else 0))
    return best


@functools.lru_cache(maxsize=1024)
def _lowered(mimes: tuple[str, ...]) -> tuple[str, ...]:
    """A plugin's MIME entries in lower case, made once: a container's members each ask every plugin (a
    mailbox of 20,000 messages, 940,000 times)."""
    return tuple(entry.lower() for entry in mimes)


class ScannerSpec:
    """Hooks a scanner plugin may implement."""

    @hookspec
    def scanner_extractors(self) -> list[Extractor]:  # type: ignore[empty-body]
        """Return the text extractors this plugin provides."""

    @hookspec
    def scanner_unpackers(self) -> list[Unpacker]:  # type: ignore[empty-body]
        """Return the container formats this plugin opens."""


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, keeping what each hook provided while the hook's implementations stay the same ones:
    extraction asks for the extractors and the unpackers for every file, and the hooks made ~16 records and
    two sorts each time (~0.1 ms a file). A plugin registered or unregistered changes the implementations,
    so its hooks are asked again."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.provided: dict[str, tuple[list[Any], list[tuple[Any, str]]]] = {}


def make_plugin_manager(load_entry_points: bool = True) -> PluginManager:
    """A fresh manager with the built-ins and (optionally) installed plugins."""
    # the built-ins are found by name, as entry points are: the plugins import this module, not the reverse
    builtin_modules = importlib.import_module(BUILTIN_PACKAGE).BUILTIN_MODULES

    pm = PluginManager(PROJECT)
    pm.add_hookspecs(ScannerSpec)
    for module_name in builtin_modules:
        module = importlib.import_module(module_name)
        pm.register(module, name=module_name)
    if load_entry_points:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def _provided(pm: pluggy.PluginManager, hook: str) -> list[tuple[Any, str]]:
    """What every implementation of `hook` returns, with the module that provides it, best priority first
    (kept by a `PluginManager` while its implementations are the same objects; the caller must not change it)."""
    impls = getattr(pm.hook, hook).get_hookimpls()
    kept = pm.provided.get(hook) if isinstance(pm, PluginManager) else None
    if kept is not None and len(kept[0]) == len(impls) and all(a is b for a, b in zip(kept[0], impls)):
        return kept[1]
    out: list[tuple[Any, str]] = []
    for impl in impls:
        source = pm.get_name(impl.plugin) or str(getattr(impl.plugin, "__name__", repr(impl.plugin)))
        # pluggy types a hook implementation as returning object; the hookspecs above say what they return
        provided = cast("list[Any] | None", impl.function())
        for item in provided or ():
            out.append((item, source))
    out.sort(key=lambda pair: (-pair[0].priority, pair[0].name))
    if isinstance(pm, PluginManager):
        pm.provided[hook] = (impls, out)
    return out


def list_extractors(pm: pluggy.PluginManager) -> list[Extractor]:
    """Every registered extractor, highest priority first, then by name."""
    return [extractor for extractor, _ in _provided(pm, "scanner_extractors")]


def list_unpackers(pm: pluggy.PluginManager) -> list[Unpacker]:
    """Every registered container format, highest priority first, then by name."""
    return [unpacker for unpacker, _ in _provided(pm, "scanner_unpackers")]


def unpacker_for(unpackers: list[Unpacker], mime: str) -> Unpacker | None:
    """The unpacker that opens `mime` (None: not a container)."""
    scored = [(u, u.specificity(mime)) for u in unpackers]
    best = min(((u, score) for u, score in scored if score),
               key=lambda pair: (-pair[0].priority, -pair[1], pair[0].name), default=None)
    return best[0] if best else None


def plugin_summaries(pm: pluggy.PluginManager) -> list[dict[str, object]]:
    """What `scanner info` shows: name, kind (extractor or container), mimes, priority and its module."""
    return [
        {"name": item.name, "kind": kind, "mimes": list(item.mimes), "priority": item.priority, "source": source}
        for hook, kind in (("scanner_extractors", "extractor"), ("scanner_unpackers", "container"))
        for item, source in _provided(pm, hook)
    ]


def candidates_for(
    extractors: list[Extractor], mime: str, prefer: str | None = None
) -> list[Extractor]:
    """Extractors that read `mime`, best first.

    Order: the `prefer`red backend if it reads this MIME, then by priority, then
    by how specific the match is (exact type before a "text/" prefix), then name.
    """
    scored = [(e, e.specificity(mime)) for e in extractors]
    scored = [(e, score) for e, score in scored if score]
    scored.sort(key=lambda pair: (pair[0].name != prefer, -pair[0].priority, -pair[1], pair[0].name))
    return [e for e, _ in scored]


def choose_extractor(
    pm: pluggy.PluginManager, mime: str, prefer: str | None = None
) -> Extractor | None:
    """The extractor that should read `mime`, or None when no plugin can."""
    found = candidates_for(list_extractors(pm), mime, prefer)
    return found[0] if found else None
