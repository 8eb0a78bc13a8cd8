"""Base texts read from files and kept in an index (`scanner scan --base`, `scanner base`): an assignment's
template, starter code, a form every document fills in. What no finding counts (`engine/base.py`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scanner.core.errors import InputError
from scanner.core.model import TextStatus
from scanner.index.base import BaseText
from scanner.index.store import Index
from scanner.sources.crawl import crawl, printable_path
from scanner.sources.extract import NoTextError, extract_file
from scanner.sources.limits import ExtractLimits


@dataclass(frozen=True)
class BaseAdded:
    """A base text a file gave, and whether the index held it already."""

    base: BaseText
    new: bool


def texts_of_file(path: str, pm: Any, limits: ExtractLimits) -> list[tuple[str, str]]:
    """(name, text) of each part of a file with text, as `check` reads it: the file itself, and each member of
    an archive or mail (`file!/member`), so that a ZIP of starter code gives every source file.

    Raises:
        InputError: the file cannot be read, or none of it gives text (NoTextError).
    """
    record, extracted = extract_file(path, pm, limits)
    found = [(os.path.abspath(path), extracted.text)] if TextStatus(extracted.status).has_text else []
    found += [(member.path, text.text) for member, text in extracted.members if TextStatus(text.status).has_text]
    if not found:
        raise NoTextError(path, record, extracted)
    return found


@dataclass(frozen=True)
class BaseRead:
    """What base files gave: each text kept, and the files of a folder that gave none (named, not hidden)."""

    added: tuple[BaseAdded, ...]
    without_text: tuple[str, ...] = ()


def add_base_files(index: Index, paths: Sequence[str], pm: Any, limits: ExtractLimits) -> BaseRead:
    """Read every file first (`base_file_texts`), then keep their texts as the index's base texts: nothing is
    added when one cannot be read (findings made without part of the base would mislead)."""
    read, without_text = base_file_texts(paths, pm, limits)
    with index.transaction():  # all of them or, if stopped, none
        added = tuple(BaseAdded(*index.base.add(label, text)) for label, text in read)
    return BaseRead(added, tuple(without_text))


def base_file_texts(paths: Sequence[str], pm: Any, limits: ExtractLimits) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, text) of every part of these files (every file of a folder, as a scan crawls it), and the
    files of a folder that gave no text. A file named that cannot be read, or gives no text, is an error;
    in a folder of starter code, a file without text (a picture, a compiled file) is named and passed over,
    unless none gives text."""
    read: list[tuple[str, str]] = []
    without_text: list[str] = []
    for path in paths:
        entries = [path] if not os.path.isdir(path) else [e.path for e in crawl([path]) if e.skip_reason is None]
        found = 0
        for entry in entries:
            try:
                texts = texts_of_file(entry, pm, limits)
            except NoTextError as exc:
                if entry == path:
                    raise InputError(f"base text {path}: no text to leave out ({exc.detail})") from exc
                without_text.append(printable_path(entry))
                continue
            except InputError as exc:
                raise InputError(f"base text {entry}: {exc}") from exc
            read += texts
            found += 1
        if not found:
            raise InputError(f"base text {path}: no file of this folder gives text to leave out")
    return read, without_text
