"""The crawler: order, exclusions, skip reasons, loops, odd names, read-only opens."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from scanner.sources.crawl import CrawlEntry, crawl, printable_path
from scanner.sources.extract import extract_file
from scanner.sources.extract.evidence import open_readonly
from scanner.sources.plugins import make_plugin_manager


def _tree(root: Path) -> None:
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a").mkdir()
    (root / "a" / "two.txt").write_text("two")
    (root / "a" / "one.txt").write_text("one")
    (root / "b" / "deep" / "x.txt").write_text("x")
    (root / "top.txt").write_text("top")
    (root / "Z.txt").write_text("upper")


def _found(entries: list[CrawlEntry]) -> list[str]:
    return [e.path for e in entries if e.skip_reason is None]


def _skipped(entries: list[CrawlEntry]) -> dict[str, str]:
    return {e.path: e.skip_reason for e in entries if e.skip_reason is not None}


class TestOrderAndPaths:
    """Sorted by raw name bytes, depth first, paths joined onto the root as given."""

    def test_sorted_depth_first(self, tmp_path):
        _tree(tmp_path)
        root = str(tmp_path)
        assert _found(list(crawl([root]))) == [
            f"{root}/Z.txt",
            f"{root}/a/one.txt",
            f"{root}/a/two.txt",
            f"{root}/b/deep/x.txt",
            f"{root}/top.txt",
        ]

    def test_relative_root_kept_as_given(self, tmp_path, monkeypatch):
        _tree(tmp_path)
        monkeypatch.chdir(tmp_path)
        paths = _found(list(crawl(["a", "top.txt"])))
        assert paths == ["a/one.txt", "a/two.txt", "top.txt"]
        entry = next(e for e in crawl(["top.txt"]))
        assert (entry.size, entry.mtime_ns) == (3, os.stat("top.txt").st_mtime_ns)

    def test_exclude_globs_are_silent(self, tmp_path):
        _tree(tmp_path)
        entries = list(crawl([str(tmp_path)], exclude=["b", "*.txt~", "two.*"]))
        assert [Path(p).name for p in _found(entries)] == ["Z.txt", "one.txt", "top.txt"]
        assert not _skipped(entries)
        by_rel = list(crawl([str(tmp_path)], exclude=["a/*"]))
        assert all("/a/" not in p for p in _found(by_rel))

    def test_missing_root(self, tmp_path):
        (entry,) = crawl([str(tmp_path / "nope")])
        assert entry.skip_reason == "not found"


class TestSkips:
    """Every file that is not scanned says why."""

    def test_too_large(self, tmp_path):
        (tmp_path / "big.bin").write_bytes(b"x" * 101)
        (tmp_path / "ok.bin").write_bytes(b"x" * 100)
        entries = list(crawl([str(tmp_path)], max_size=100))
        assert _found(entries) == [str(tmp_path / "ok.bin")]
        reason = _skipped(entries)[str(tmp_path / "big.bin")]
        assert reason.startswith("too large") and "101" in reason

    def test_symlink_loop_followed_terminates(self, tmp_path):
        _tree(tmp_path)
        os.symlink("..", tmp_path / "b" / "deep" / "up")  # b/deep/up -> b
        os.symlink(str(tmp_path), tmp_path / "a" / "root")  # a/root -> root
        os.symlink("self2", tmp_path / "self1")
        os.symlink("self1", tmp_path / "self2")
        entries = list(crawl([str(tmp_path)], follow_symlinks=True))
        assert len(entries) < 20
        skipped = _skipped(entries)
        assert "symlink loop" in skipped[str(tmp_path / "a" / "root")]
        assert "symlink loop" in skipped[str(tmp_path / "b" / "deep" / "up")]
        assert skipped[str(tmp_path / "self1")] == "symlink loop"
        assert len(_found(entries)) == 5  # each real file once

    def test_symlinks_not_followed_by_default(self, tmp_path):
        (tmp_path / "real.txt").write_text("r")
        os.symlink("real.txt", tmp_path / "link.txt")
        os.symlink("nowhere", tmp_path / "broken")
        entries = list(crawl([str(tmp_path)]))
        assert _found(entries) == [str(tmp_path / "real.txt")]
        assert _skipped(entries) == {
            str(tmp_path / "link.txt"): "symlink not followed",
            str(tmp_path / "broken"): "broken symlink",
        }
        followed = list(crawl([str(tmp_path)], follow_symlinks=True))
        assert _found(followed) == [str(tmp_path / "link.txt"), str(tmp_path / "real.txt")]
        assert _skipped(followed) == {str(tmp_path / "broken"): "broken symlink"}

    def test_fifo_is_not_opened(self, tmp_path):
        os.mkfifo(tmp_path / "pipe")
        (entry,) = crawl([str(tmp_path)])
        assert entry.skip_reason == "not a regular file (fifo)"

    @pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
    def test_unreadable_file_and_directory(self, tmp_path):
        secret = tmp_path / "secret.txt"
        secret.write_text("s")
        secret.chmod(0)
        closed = tmp_path / "closed"
        closed.mkdir()
        closed.chmod(0)
        try:
            skipped = _skipped(list(crawl([str(tmp_path)])))
        finally:
            secret.chmod(0o600)
            closed.chmod(0o700)
        assert skipped[str(secret)].startswith("unreadable")
        assert skipped[str(closed)].startswith("unreadable directory")


class TestOddNames:
    """Non-UTF-8 names still open, and print safely."""

    def test_non_utf8_name(self, tmp_path):
        raw = os.fsencode(str(tmp_path)) + b"/caf\xe9-\xff.txt"
        with open(raw, "wb") as fh:
            fh.write("Zażółć gęślą jaźń, plain text here.".encode())
        (entry,) = crawl([str(tmp_path)])
        assert entry.skip_reason is None
        assert os.fsencode(entry.path) == raw
        assert entry.display.endswith("caf\\xe9-\\xff.txt")
        json.dumps(entry.display).encode("utf-8")  # printable, strict UTF-8
        record, result = extract_file(entry.path, make_plugin_manager(load_entry_points=False))
        assert result.text.startswith("Zażółć") and record.path == entry.path

    def test_control_characters_escaped(self):
        assert printable_path("a\nb\tc") == "a\\nb\\tc"


def test_evidence_opened_read_only(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("evidence")
    fd = open_readonly(path)
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        assert flags & os.O_ACCMODE == os.O_RDONLY
        with pytest.raises(OSError):
            os.write(fd, b"x")
    finally:
        os.close(fd)
    assert path.read_text() == "evidence"
