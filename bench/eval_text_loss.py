"""Issue 15: do real text files lose their words in extraction, and how fast is type routing?

Walks the `.txt` files of ../shared/corpora and this machine's English manual
pages (`/usr/share/man/man*/*.gz`, rendered to text once with `man -l` and
cached), extracts each through `scanner.sources.extract.extract_file`, and
counts the files whose extracted text holds less than 90 % (or 50 %) of the
file's raw words (`\\w+` runs of the file decoded as text) without a status
that says so. A PARTIAL file's text is the extractor's text followed by the
raw text; only the extractor's part (before meta["raw_text_at"]) is counted.

Then times type routing on the same files: `detect_mime` (what a scan runs)
against python-magic with the system database alone, on the same 64 KiB head,
in one process, and counts where the two answers differ.

    .venv/bin/python bench/eval_text_loss.py [--man-cache DIR] [--man-limit N] [--no-man] [--show 20]

Rendering ~20,000 pages takes about 20 minutes on 2 cores the first time
(`man -l`, MANWIDTH=80); the cache makes later runs take a few minutes.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
MAN_ROOT = Path("/usr/share/man")
_WORD = re.compile(r"\w+")
_HEAD = 64 * 1024  # what detect_mime is given by a scan (extract.evidence reads whole files; magic reads the head)


def _is_stub(page: Path) -> bool:
    """A `.so` redirect (or an empty page): not a page of its own."""
    try:
        with gzip.open(page, "rt", encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096).splitlines()
        lines = [line for line in head if line.strip() and not line.startswith(('.\\"', "'\\\""))]
    except (OSError, EOFError):
        return True
    return not lines or (len(lines) <= 2 and lines[0].startswith(".so "))


def _render(job: tuple[str, str]) -> str:
    page, target = job
    env = {**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MAN_DISABLE_SECCOMP": "1"}
    env.pop("MAN_KEEP_FORMATTING", None)
    try:
        proc = subprocess.run(["man", "-l", page], capture_output=True, env=env, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if proc.returncode or not proc.stdout.strip():
        return ""
    Path(target).write_bytes(proc.stdout)
    return target


def man_pages(cache: Path, limit: int | None, jobs: int) -> list[Path]:
    """Rendered English manual pages (cache/<section>/<page>.txt), rendering the missing ones."""
    if shutil.which("man") is None:
        sys.exit("man is not installed (apt-get install man-db groff-base), or pass --no-man")
    pages = sorted(p for p in MAN_ROOT.glob("man*/*.gz") if not p.is_symlink())
    if limit:
        pages = pages[:limit]
    todo: list[tuple[str, str]] = []
    out: list[Path] = []
    for page in pages:
        target = cache / page.parent.name / (page.name[: -len(".gz")] + ".txt")
        if target.exists():
            out.append(target)
        elif not target.with_suffix(".skip").exists():  # a stub or a page man could not render
            todo.append((str(page), str(target)))
    if todo:
        print(f"rendering {len(todo)} manual pages into {cache} ...", flush=True)
        for section in {Path(t).parent for _, t in todo}:
            section.mkdir(parents=True, exist_ok=True)
        stubs = [job for job in todo if _is_stub(Path(job[0]))]
        for _, stub in stubs:
            Path(stub).with_suffix(".skip").touch()
        todo = [job for job in todo if job not in stubs]
        with ProcessPoolExecutor(jobs) as pool:
            for (_, rendered), done in zip(todo, pool.map(_render, todo, chunksize=16)):
                if done:
                    out.append(Path(done))
                else:
                    Path(rendered).with_suffix(".skip").touch()
    return sorted(out)


def corpus_texts(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.txt") if p.is_file())


def raw_words(data: bytes) -> int | None:
    """Words of the file decoded as text, or None when it is not text (binary, NULs)."""
    from scanner.core.errors import ExtractionError
    from scanner.sources.extract.encoding import decode_text

    try:
        text, _ = decode_text(data)
    except ExtractionError:
        text = data.decode("utf-8", "replace")
        if sum(ch.isprintable() or ch.isspace() for ch in text) < 0.9 * max(1, len(text)):
            return None  # not text: out of scope
    return len(_WORD.findall(text))


def measure(paths: list[Path], label: str, show: int) -> None:
    from scanner.core.model import TextStatus
    from scanner.sources.extract import extract_file
    from scanner.sources.plugins import make_plugin_manager

    pm = make_plugin_manager()
    statuses: Counter[str] = Counter()
    mimes: Counter[str] = Counter()
    silent10 = silent50 = flagged10 = notext = 0
    worst: list[tuple[float, str, str, str, int, int]] = []
    files = 0
    for path in paths:
        data = path.read_bytes()
        total = raw_words(data)
        if not total:
            continue
        files += 1
        record, extracted = extract_file(path, pm)
        status = TextStatus(extracted.status)
        text = extracted.text
        if "raw_text_at" in extracted.meta:
            text = text[: int(extracted.meta["raw_text_at"])]
        kept = len(_WORD.findall(text))
        loss = 1 - kept / total
        statuses[status.value] += 1
        mimes[record.mime] += 1
        if loss > 0.10:
            worst.append((loss, str(path), record.mime, f"{status.value}: {extracted.reason}", kept, total))
            if status is TextStatus.OK:
                silent10 += 1
                silent50 += loss > 0.5
            elif status.value == "partial":  # (the statuses before issue 15 had no PARTIAL)
                flagged10 += 1
            if not status.has_text:
                notext += 1
    print(f"\n## {label}: {files} text files")
    print(f"statuses: {dict(statuses.most_common())}")
    print(f"types: {dict(mimes.most_common(12))}")
    print(f"lose > 10 % of their words with status ok: {silent10}  (> 50 %: {silent50})")
    print(f"lose > 10 % with status partial (raw text indexed too): {flagged10}")
    print(f"lose > 10 % with no text at all (status without text): {notext}")
    # silent losses first, then files without text, then the flagged ones; the worst first in each
    worst.sort(key=lambda w: (not w[3].startswith("ok:"), w[3].startswith("partial"), -w[0]))
    for loss, name, mime, said, kept, total in worst[:show]:
        print(f"  {loss:6.1%}  {kept:>6}/{total:<6} {mime:<26} {said[:70]:<70} {name}")


def routing(paths: list[Path]) -> None:
    import magic

    from scanner.sources.extract import detect_mime

    heads = [p.read_bytes()[:_HEAD] for p in paths]
    system = magic.Magic(mime=True)
    detect_mime(b"warm-up"), system.from_buffer(b"warm-up")
    start = time.perf_counter()
    ours = [detect_mime(h) for h in heads]
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    theirs = [system.from_buffer(h) for h in heads]
    t_sys = time.perf_counter() - start
    n = len(heads)
    print(f"\n## routing: {n} files, one process, 64 KiB heads")
    print(f"detect_mime (what a scan runs):         {t_ours / n * 1e3:.3f} ms/file")
    print(f"python-magic, system database alone:    {t_sys / n * 1e3:.3f} ms/file")
    diff = Counter((t, o) for o, t in zip(ours, theirs) if o != t)
    print(f"answers that differ: {sum(diff.values())}")
    for (t, o), count in diff.most_common(15):
        print(f"  {count:6}  system {t:<28} -> detect_mime {o}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--man-cache", type=Path, default=Path("/tmp/scanner-eval-man"))
    parser.add_argument("--man-limit", type=int, default=None)
    parser.add_argument("--no-man", action="store_true")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", type=int, default=20, help="list the N worst losses")
    args = parser.parse_args()

    corpus = corpus_texts(args.corpora)
    man = [] if args.no_man else man_pages(args.man_cache, args.man_limit, args.jobs)
    measure(corpus, f"../shared/corpora *.txt ({args.corpora})", args.show)
    if man:
        measure(man, f"English manual pages ({MAN_ROOT}/man*/*.gz via man -l, cached in {args.man_cache})", args.show)
    routing(corpus + man)


if __name__ == "__main__":
    main()
