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


def add_base_files(index: Index, paths: Sequence[str], pm: Any, limits: ExtractLimits) -> list[BaseAdded]:
    """Read every file first, then keep their texts as the index's base texts: a file that cannot be read
    stops it before anything is added (findings made without part of the base would mislead)."""
    read: list[tuple[str, str]] = []
    for path in paths:
        try:
            read += texts_of_file(path, pm, limits)
        except NoTextError as exc:
            raise InputError(f"base text {path}: no text to leave out ({exc.detail})") from exc
        except InputError as exc:
            raise InputError(f"base text {path}: {exc}") from exc
    return [BaseAdded(*index.base.add(label, text)) for label, text in read]
