"""Walking the evidence: every regular file under the given roots, in a fixed order.

The walk is iterative (an explicit stack, no recursion), sorted by the raw
bytes of each name so the order does not depend on the locale, and never
enters a directory twice: each directory's (st_dev, st_ino) is remembered,
so symlink loops and duplicate mounts end at once. Nothing is opened here
except directories; files are only stat()ed.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from scanner.core.display import printable

_KINDS = (
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


@dataclass(frozen=True)
class CrawlEntry:
    """A file found by the crawler, or a path it had to skip (`skip_reason` set).

    `path` is the root as given joined with the relative path. On POSIX it may
    hold surrogate escapes (non-UTF-8 names); it still opens the file, and
    `display` is the form safe to print or put in JSON.
    """

    path: str
    size: int
    mtime_ns: int
    skip_reason: str | None = None

    @property
    def display(self) -> str:
        return printable_path(self.path)


def printable_path(path: str) -> str:
    """`path` with undecodable bytes shown as \\xNN and control characters escaped."""
    return printable(os.fsencode(path).decode("utf-8", errors="backslashreplace"))


def printable_realpath(path: str) -> str:
    """The file's real path (absolute, symlinks resolved) in the form the index keeps paths: the one name
    that different spellings of the same path share (files.real_path)."""
    return printable_path(os.path.realpath(path))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "special file"


def _excluded(rel: str, name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _sort_key(entry: os.DirEntry[str]) -> bytes:
    return os.fsencode(entry.name)


def _skip(path: str, reason: str, st: os.stat_result | None = None) -> CrawlEntry:
    return CrawlEntry(
        path=path,
        size=st.st_size if st else 0,
        mtime_ns=st.st_mtime_ns if st else 0,
        skip_reason=reason,
    )


OWN_FILES = "the scan's own index"
_INDEX_COMPANIONS = ("", "-wal", "-shm", "-journal", ".lock")  # SQLite's files beside a database, and its lock


def _file_keys(databases: Collection[str]) -> frozenset[tuple[int, int]]:
    """(device, inode) of each database in `databases` and of the files beside it that exist now."""
    keys = set()
    for database in databases:
        for suffix in _INDEX_COMPANIONS:
            try:
                st = os.stat(f"{database}{suffix}")
            except OSError:
                continue
            keys.add((st.st_dev, st.st_ino))
    return frozenset(keys)


def _file_entry(path: str, st: os.stat_result, max_size: int | None,
                own: Collection[tuple[int, int]] = ()) -> CrawlEntry:
    if (st.st_dev, st.st_ino) in own:
        return _skip(path, OWN_FILES, st)
    if not stat.S_ISREG(st.st_mode):
        return _skip(path, f"not a regular file ({_kind(st.st_mode)})", st)
    if max_size is not None and st.st_size > max_size:
        return _skip(path, f"too large ({st.st_size} bytes > {max_size})", st)
    if not os.access(path, os.R_OK):
        return _skip(path, "unreadable (permission denied)", st)
    return CrawlEntry(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)


def crawl(
    roots: Sequence[str],
    exclude: Sequence[str] = (),
    max_size: int | None = None,
    follow_symlinks: bool = False,
    own: Collection[str] = (),
) -> Iterator[CrawlEntry]:
    """Yield every file under `roots` (depth first, sorted), skipped ones with a reason.

    Args:
        roots: files or directories as the user gave them; a root that is a
            symlink is followed (the user named it), like `find -H`.
        exclude: glob patterns matched against the path relative to its root
            and against the bare name; matches are left out silently, and an
            excluded directory is not entered.
        max_size: files larger than this many bytes are reported as skipped.
        follow_symlinks: follow symlinks found inside directories; when False
            they are reported as skipped (broken ones always are).
        own: the files of the scan's own index (the database, its write-ahead log, its lock), skipped
            with `OWN_FILES`: scanning the folder that holds the index read the index as a document.
    """
    own_keys = _file_keys(own)
    for root in roots:
        root = os.fspath(root)
        try:
            st = os.stat(root)
        except FileNotFoundError:
            reason = "broken symlink" if os.path.islink(root) else "not found"
            yield _skip(root, reason)
            continue
        except OSError as exc:
            yield _skip(root, f"unreadable: {exc.strerror or exc}")
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(root, st, exclude, max_size, follow_symlinks, own_keys)
        else:
            yield _file_entry(root, st, max_size, own_keys)


def _walk(
    root: str,
    root_st: os.stat_result,
    exclude: Sequence[str],
    max_size: int | None,
    follow_symlinks: bool,
    own: Collection[tuple[int, int]],
) -> Iterator[CrawlEntry]:
    seen: set[tuple[int, int]] = {(root_st.st_dev, root_st.st_ino)}
    # Each frame: (directory path, its path relative to root, sorted entries, next index).
    stack: list[tuple[str, str, list[os.DirEntry[str]], int]] = []
    listed = _list(root)
    if isinstance(listed, str):
        yield _skip(root, listed, root_st)
        return
    stack.append((root, "", listed, 0))
    while stack:
        dir_path, dir_rel, entries, index = stack.pop()
        if index >= len(entries):
            continue
        stack.append((dir_path, dir_rel, entries, index + 1))
        entry = entries[index]
        path = os.path.join(dir_path, entry.name)
        rel = f"{dir_rel}/{entry.name}" if dir_rel else entry.name
        if exclude and _excluded(rel, entry.name, exclude):
            continue
        try:
            is_link = entry.is_symlink()
            if is_link and not follow_symlinks:
                try:
                    os.stat(path)
                except OSError as exc:
                    loop = exc.errno == errno.ELOOP
                    yield _skip(path, "symlink loop" if loop else "broken symlink")
                    continue
                yield _skip(path, "symlink not followed")
                continue
            st = entry.stat(follow_symlinks=True)
        except FileNotFoundError:
            yield _skip(path, "broken symlink" if os.path.islink(path) else "vanished while crawling")
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link chain that points back at itself
                yield _skip(path, "symlink loop")
            else:
                yield _skip(path, f"unreadable: {exc.strerror or exc}")
            continue
        if not stat.S_ISDIR(st.st_mode):
            yield _file_entry(path, st, max_size, own)
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            yield _skip(path, "directory already visited (symlink loop or second link)", st)
            continue
        seen.add(key)
        listed = _list(path)
        if isinstance(listed, str):
            yield _skip(path, listed, st)
            continue
        stack.append((path, rel, listed, 0))


def _list(path: str) -> list[os.DirEntry[str]] | str:
    """Sorted entries of a directory, or the reason it cannot be listed."""
    try:
        with os.scandir(path) as it:
            return sorted(it, key=_sort_key)
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):  # the machine's shortage, not the folder's:
            raise  # skipped, its files would be marked vanished at the end of the run
        return f"unreadable directory: {exc.strerror or exc}"
