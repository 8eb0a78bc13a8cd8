"""Writing report files: never over an existing file unless asked, never half-written, never outside
the folder a folder format was given."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path, PureWindowsPath

from scanner.core.errors import UsageError


def check_path(path: Path) -> None:
    if "\x00" in str(path):
        raise UsageError("output path contains a NUL character")


def target_free(path: Path, force: bool) -> None:
    """Refuse at once (before any work) when `path` is taken and `force` is off, or is a directory."""
    check_path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give a file name")
    if (path.exists() or path.is_symlink()) and not force:
        raise UsageError(f"{path} exists; use --force to overwrite it")


def write_new(path: Path, data: bytes | Iterable[bytes], *, force: bool) -> None:
    """Write `data` (whole, or in pieces written as they come) to `path` atomically: a temporary file beside
    it, written and fsynced, then a hard link (fails if `path` appeared meanwhile, so nothing is ever
    overwritten without `force`) or a rename (`force`), then the folder fsynced. A crash, or an error while
    the pieces are made, leaves either the old file (or none) or the whole new one, never a truncated
    report; at worst a `.scanner-report-*.tmp` beside it. A full disk or a folder this user cannot write to
    is a ResourceError naming `path`."""
    target_free(path, force)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"directory {parent} does not exist")
    try:
        _write_beside(path, parent, data, force)
    except OSError as exc:
        from scanner.index.failures import resource_error

        error = resource_error(exc, f"cannot write {path}")
        if error is None:
            raise
        raise error from exc


def _write_beside(path: Path, parent: Path, data: bytes | Iterable[bytes], force: bool) -> None:
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".scanner-report-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in [data] if isinstance(data, bytes) else data:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UsageError(f"{path} exists; use --force to overwrite it") from None
            except OSError:  # file systems without hard links: a rename, after a last look
                if os.path.lexists(path):
                    raise UsageError(f"{path} exists; use --force to overwrite it") from None
                os.replace(tmp, path)
        _fsync_folder(parent)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _fsync_folder(folder: Path) -> None:
    """Make the new name itself durable (a power cut after the rename keeps it); not every file system can."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def safe_target(folder: Path, name: str) -> Path:
    """`folder / name`, refusing names that are absolute, hold separators, NUL, or are `.`/`..`."""
    if (not name or "\x00" in name or "/" in name or "\\" in name or name in (".", "..")
            or os.path.isabs(name) or PureWindowsPath(name).drive):
        raise UsageError(f"refusing to write outside {folder}: unsafe file name {name!r}")
    target = folder / name
    if target.resolve().parent != folder.resolve():
        raise UsageError(f"refusing to write outside {folder}: {name!r}")
    return target
