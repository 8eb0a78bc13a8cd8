"""Security of a scan: no network, evidence untouched (read-only, mtime and atime kept), no stray writes.

The scanner processes (CLI parent, forkserver and workers alike) run with a
`sitecustomize` that installs a PEP 578 audit hook: it refuses any IPv4/IPv6
socket or name lookup and logs, to a descriptor opened before the hook, every
refused network call, every open() with a write flag and every SQLite
database opened. The tests then assert on that log, not on good intentions.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

import pytest
from corpus import documents

REPO = Path(__file__).resolve().parents[1]
PDF = REPO / "tests" / "fixtures" / "pdf" / "pdflatex-4-pages.pdf"

SITECUSTOMIZE = textwrap.dedent('''
    import os, socket, sys
    _log = os.open(os.environ["SCANNER_AUDIT_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    _NET = (socket.AF_INET, socket.AF_INET6)
    _WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def _note(kind, what):
        os.write(_log, f"{os.getpid()}\\t{kind}\\t{what}\\n".encode("utf-8", "backslashreplace"))

    def _hook(event, args):
        if event == "socket.__new__" and args[1] in _NET:
            _note("network", f"socket family {args[1]}")
            raise PermissionError("network blocked by the test")
        if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
            _note("network", f"{event} {args[0]!r}")
            raise PermissionError("network blocked by the test")
        if event == "socket.connect" and not isinstance(args[1], (str, bytes)):
            _note("network", f"connect {args[1]!r}")
            raise PermissionError("network blocked by the test")
        if event == "open":
            path, mode, flags = args
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE)
            if writes and not isinstance(path, int):
                _note("write", os.fsdecode(path))
        if event == "sqlite3.connect":
            _note("sqlite", os.fsdecode(args[0]))

    sys.addaudithook(_hook)
''')


def audited_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    hook_dir = tmp_path / "audit-hook"
    hook_dir.mkdir(exist_ok=True)
    (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "audit.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(hook_dir), str(REPO), env.get("PYTHONPATH", "")])
    env["SCANNER_AUDIT_LOG"] = str(log)
    env.pop("SCANNER_INDEX", None)
    return env, log


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120)


def log_lines(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    return [tuple(line.split("\t", 2)[1:]) for line in log.read_text("utf-8").splitlines()]  # type: ignore[misc]


def texts(count: int) -> list[str]:
    """English-like prose (tests/corpus.py), without markup."""
    return documents(count, seed=8, low=3_000, high=10_000)


def hostile_epub(text: str) -> bytes:
    """An EPUB whose manifest points outside the archive (a path traversal attempt)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument'
                    ':xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>')
        zf.writestr("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest>'
                    '<item id="a" href="../../../../../../etc/passwd" media-type="application/xhtml+xml"/>'
                    '<item id="b" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
                    '<spine><itemref idref="a"/><itemref idref="b"/></spine></package>')
        zf.writestr("OEBPS/ch1.xhtml", f"<html><body><p>{text}</p></body></html>")
        zf.writestr("../../escaped.txt", "a member whose name climbs out of the archive")
    return buf.getvalue()


def build_evidence(root: Path) -> None:
    root.mkdir()
    body = texts(4)
    (root / "plain.txt").write_text(body[0], encoding="utf-8")
    (root / "page.html").write_text(
        '<html><head><base href="file:///tmp/"><link rel="stylesheet" href="http://127.0.0.1:9/x.css">'
        '<script src="https://example.invalid/t.js"></script></head><body><img src="http://example.invalid/p.png">'
        f'<p>{body[1]}</p><iframe src="file:///etc/passwd"></iframe></body></html>', encoding="utf-8")
    shutil.copyfile(PDF, root / "paper.pdf")
    (root / "book.epub").write_bytes(hostile_epub(body[2]))
    (root / "$(touch PWNED); ..;rm -rf x\n.txt").write_text(body[3] + "\n../../../outside.db\n", encoding="utf-8")


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_hook_really_blocks_and_logs(tmp_path: Path) -> None:
    """The guard itself: a connection attempt fails and is logged (else the next test proves nothing)."""
    env, log = audited_env(tmp_path)
    proc = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), 1)"],
                          env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0 and "network blocked by the test" in proc.stderr
    assert ("network", "socket.getaddrinfo '127.0.0.1'") in log_lines(log)


def test_scan_check_compare_offline_and_write_only_the_index(tmp_path: Path) -> None:
    env, log = audited_env(tmp_path)
    evidence = tmp_path / "evidence"
    build_evidence(evidence)
    before = snapshot(evidence)
    work = tmp_path / "work"
    work.mkdir()
    scan = run(env, work, "scan", str(evidence), "--index", "idx.db", "--json", "--jobs", "2")
    assert scan.returncode == 0, scan.stderr
    doc = json.loads(scan.stdout)
    assert doc["files_indexed"] == 5, doc  # the EPUB read only its own members
    query = tmp_path / "query.txt"  # a copy outside the tree: check leaves a file's own document out
    shutil.copyfile(evidence / "plain.txt", query)
    check = run(env, work, "check", str(query), "--index", "idx.db", "--json")
    assert check.returncode in (0, 1), check.stderr
    assert json.loads(check.stdout)["results"][0]["matches"][0]["resemblance"] == pytest.approx(1.0)
    compare = run(env, work, "compare", str(evidence / "plain.txt"), str(evidence / "page.html"), "--json")
    assert compare.returncode == 0, compare.stderr

    lines = log_lines(log)
    assert [line for line in lines if line[0] == "network"] == []
    index_files = {str(work / "idx.db") + suffix for suffix in ("", "-wal", "-shm", "-journal", ".lock")}
    for kind, what in lines:
        if kind == "sqlite":
            assert what in {"idx.db", str(work / "idx.db")} or what.startswith("file:"), what
            assert what.startswith("file:") is False or str(work / "idx.db") in what
        if kind == "write":  # the index, or scratch space (pair spill files, multiprocessing) in $TMPDIR
            path = os.path.abspath(os.path.join(work, what))
            scratch = path.startswith(tempfile.gettempdir() + os.sep) and not path.startswith(str(tmp_path) + os.sep)
            assert path in index_files or path == os.devnull or scratch, what
    assert snapshot(evidence) == before  # evidence untouched, byte for byte and mtime
    assert {p.name for p in work.iterdir()} <= {Path(p).name for p in index_files}
    assert not list(tmp_path.rglob("PWNED")) and not (tmp_path / "outside.db").exists()
    assert not list(tmp_path.rglob("escaped.txt"))


def test_scan_keeps_atime_and_mtime(tmp_path: Path) -> None:
    """Old access times survive a scan: O_NOATIME reads (relatime alone would update an atime older than mtime)."""
    evidence = tmp_path / "evidence"
    build_evidence(evidence)
    old_atime, old_mtime = 1_000_000_000 * 10**9, 1_100_000_000 * 10**9  # atime < mtime: relatime updates it
    files = sorted(p for p in evidence.iterdir() if p.is_file())
    for path in files:
        os.utime(path, ns=(old_atime, old_mtime))
    control = tmp_path / "control.txt"
    control.write_text("a plain read of this file updates its atime on this mount")
    os.utime(control, ns=(old_atime, old_mtime))
    control.read_bytes()
    atime_tracked = control.stat().st_atime_ns != old_atime  # False on noatime mounts
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    scan = subprocess.run([sys.executable, "-m", "scanner", "scan", str(evidence), "--index",
                           str(tmp_path / "i.db"), "--jobs", "2", "--json"], env=env, text=True,
                          capture_output=True, timeout=120)
    assert scan.returncode == 0, scan.stderr
    assert json.loads(scan.stdout)["files_indexed"] == len(files)
    for path in files:
        st = path.stat()
        assert st.st_mtime_ns == old_mtime, path.name
        if atime_tracked:
            assert st.st_atime_ns == old_atime, f"{path.name}: the scan updated its access time"
    if not atime_tracked:
        pytest.skip("this filesystem does not update atime on read (noatime): only mtime was checked")


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root and unshare(1)")
def test_scan_in_a_namespace_without_network(tmp_path: Path) -> None:
    """The same scan with no network interface at all (not even loopback up) still succeeds."""
    evidence = tmp_path / "evidence"
    build_evidence(evidence)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(["unshare", "-n", sys.executable, "-m", "scanner", "scan", str(evidence), "--index",
                           str(tmp_path / "i.db"), "--jobs", "2", "--json"], env=env, text=True,
                          capture_output=True, timeout=120)
    if proc.returncode != 0 and "unshare" in proc.stderr:
        pytest.skip(f"unshare -n is not permitted here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files_indexed"] == 5


def test_hostile_names_and_text_never_reach_the_terminal_as_controls(tmp_path: Path) -> None:
    """A file name or a document's text can carry terminal escapes (clear the screen, conceal text, set the
    window title): scan and check print them escaped, so the report on screen shows what the files hold."""
    sys.path.insert(0, str(REPO / "tests"))
    from clirun import run_cli

    tree = tmp_path / "tree"
    tree.mkdir()
    source = texts(1)[0][:4000]
    (tree / "evil\x1b[2Jname.txt").write_text(source, encoding="utf-8")
    hostile = tree / "content.txt"  # the escapes sit inside the copied passage, in the part check prints
    hostile.write_text(source[:300] + " Hidden \x1b[8mconcealed\x1b[0m words \x1b]0;pwned\x07 and a \u202eright-to-left"
                       " override.\u00a0" + source[300:], encoding="utf-8")
    scan = run_cli("scan", "tree", "--index", "i.db", cwd=tmp_path)
    check = run_cli("check", "tree/content.txt", "--index", "i.db", cwd=tmp_path)
    compare = run_cli("compare", "tree/evil\x1b[2Jname.txt", "tree/content.txt", cwd=tmp_path)
    assert scan.returncode == 0 and check.returncode == 1 and compare.returncode == 0, scan.stderr + check.stderr
    assert "A  tree/evil\\x1b[2Jname.txt" in compare.stdout
    as_json = run_cli("compare", "tree/evil\x1b[2Jname.txt", "tree/content.txt", "--json", cwd=tmp_path)
    assert json.loads(as_json.stdout)["a"] == "tree/evil\\x1b[2Jname.txt"  # named as the index names it
    for out in (scan.stdout, scan.stderr, check.stdout, check.stderr, compare.stdout, compare.stderr):
        assert not any(ch in out for ch in "\x1b\x07\u202e"), out
    assert "evil\\x1b[2Jname.txt" in scan.stdout
    assert "\\x1b[8mconcealed\\x1b[0m" in check.stdout  # escaped, still there to be read
    assert "\\xa0" not in check.stdout  # a no-break space in a passage is just a space
