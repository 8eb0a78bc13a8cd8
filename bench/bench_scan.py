"""Whole `scanner scan` of 2,000 real text files vs datasketch MinHash + MinHashLSH.

The files are made reproducibly from the PAN-13 subset (sources and
suspicious documents, which themselves hold plagiarised passages): the texts
are cut into pieces of 300-700 words, and 10 % of the files are copies of
other pieces with about 1 % of the words replaced (see `make_tree`). Both
sides read the same files from disk in the same run:

* scanner: `python -m scanner scan DIR --index TMP --json --quiet` as a
  subprocess, so interpreter start-up, crawl, MIME sniffing, extraction,
  sketches, the SQLite index and the clustering are all inside the time;
* type routing alone: the MIME detection the scan runs on every file
  (`detect_mime`: libmagic with the package's magic file, issue 15), timed
  in one process; divided by the cores, it is a floor under the scan's time
  and so a ceiling on the ratio below, whatever the rest costs. python-magic
  with the system database alone (what the scan ran before issue 15) is
  timed on the same files for comparison;
* the same scan with `--no-semantic` (issue 21: what the semantic pass costs);
* datasketch: read and decode each file, lower-case word 5-shingles,
  `MinHash(num_perm=128).update_batch`, insert into `MinHashLSH(threshold=0.5)`
  (one process: datasketch has no parallel build).

`--corpus manpages` scans issue 16's second corpus instead: `--files` manual pages that Debian installs,
rendered to text (`bench/manpages.py`: about 5 KB a page, most of them Google Cloud SDK pages from one
template, so the passage step has tens of thousands of pairs to align).

A second part scans the same files packed into one ZIP, one tar.gz and one
7z archive (issue 18: members are read inside the worker that holds the
archive), against the folder's time.

A third part scans a PDF-heavy folder (the 151 real PDFs of
../shared/corpora/pdf-samples, copied to a temporary folder) with the same CLI
and reports pages/s, against pdfminer.six `extract_text` on the same files in
one process (the usual Python way to get text out of PDFs), in the same run.

    .venv/bin/python bench/bench_scan.py [--files 2000] [--corpus pan|manpages] [--jobs N] [--keep DIR] [--no-pdf]
        [--no-containers]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import PAN13, PDF_SAMPLES, compile_package, read_text

REPO = Path(__file__).resolve().parents[1]
_WORD = re.compile(r"\w+")
_FILLERS = ("indeed", "perhaps", "notably", "moreover", "granted", "clearly")


def _printable(text: str) -> bool:
    """The subset holds one binary 'source' document; it is left out."""
    return sum(ch.isprintable() or ch.isspace() for ch in text) >= 0.99 * len(text)


def make_tree(root: Path, count: int, seed: int = 13, copies: float = 0.1) -> int:
    """Write `count` files under root/NN/; returns their total size in bytes.

    The PAN-13 texts are cut into consecutive pieces of 300-700 words (distinct
    documents, as in a real share); `copies` of the files are then perturbed
    copies of earlier pieces (about 1 % of the words replaced): the
    near-duplicates both tools should find.
    """
    paths = sorted((PAN13 / "src").glob("*.txt")) + sorted((PAN13 / "susp").glob("*.txt"))
    texts = [t for t in (read_text(p) for p in paths) if len(t.split()) >= 200 and _printable(t)]
    rng = random.Random(seed)
    n_copies = int(count * copies)
    pieces: list[list[str]] = []
    while len(pieces) < count - n_copies:
        for text in texts:
            words = text.split(" ")
            start = 0
            while start < len(words) and len(pieces) < count - n_copies:
                span = rng.randint(300, 700)
                if len(words) - start >= 150:
                    pieces.append(words[start : start + span])
                start += span
        texts = [t + " " + t for t in texts]  # a second round (only for counts beyond the corpus) shifts cuts
    for _ in range(n_copies):
        chunk = list(rng.choice(pieces[: count - n_copies]))
        for j in rng.sample(range(len(chunk)), max(1, len(chunk) // 100)):
            chunk[j] = rng.choice(_FILLERS)
        pieces.append(chunk)
    total = 0
    for i, chunk in enumerate(pieces):
        data = " ".join(chunk).encode("utf-8")
        folder = root / f"{i // 100:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{i:05}.txt").write_bytes(data)
        total += len(data)
    return total


def run_scanner(root: Path, index: Path, jobs: int | None, *extra: str) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "scanner", "scan", str(root), "--index", str(index), "--json", "--quiet", *extra]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, json.loads(proc.stdout)


def run_datasketch(root: Path, w: int = 5) -> float:
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for path in sorted(root.rglob("*.txt")):
        words = _WORD.findall(read_text(path).lower())
        shingles = {" ".join(words[i : i + w]).encode("utf-8") for i in range(max(1, len(words) - w + 1))}
        m = MinHash(num_perm=128)
        m.update_batch(list(shingles))
        lsh.insert(str(path), m)
    return time.perf_counter() - start


def run_libmagic(root: Path, system: bool = False) -> float:
    """What the scan's MIME detection alone costs: `detect_mime` on every file, one process (the scan's
    workers call it on each file); with `system`, python-magic with the system database alone instead."""
    import magic

    from scanner.sources.extract import detect_mime

    sniff = magic.Magic(mime=True).from_buffer if system else detect_mime
    sniff(b"warm-up")  # load the magic database outside the timing
    start = time.perf_counter()
    for path in sorted(root.rglob("*.txt")):
        sniff(path.read_bytes()[: 64 * 1024])
    return time.perf_counter() - start


def pack(root: Path, dest: Path) -> dict[str, Path]:
    """The tree packed as one ZIP, one tar.gz and one 7z archive (issue 18), each alone in a folder."""
    import tarfile
    import zipfile

    import py7zr

    files = sorted(root.rglob("*.txt"))
    out = {name: dest / name / f"tree.{name}" for name in ("zip", "tar.gz", "7z")}
    for path in out.values():
        path.parent.mkdir(parents=True)
    with zipfile.ZipFile(out["zip"], "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(root).as_posix())
    with tarfile.open(out["tar.gz"], "w:gz") as archive:
        for path in files:
            archive.add(path, path.relative_to(root).as_posix())
    with py7zr.SevenZipFile(out["7z"], "w") as archive:
        for path in files:
            archive.write(path, path.relative_to(root).as_posix())
    return out


def containers_part(root: Path, work: Path, jobs: int | None, folder_seconds: float, files: int) -> None:
    """The same files inside one archive: members are read by the worker that holds the archive."""
    for name, archive in pack(root, work / "packed").items():
        seconds, doc = run_scanner(archive.parent, work / f"packed-{name.replace('.', '-')}.db", jobs)
        print(f"scanner scan of one {name:6} archive: {seconds:7.2f} s  ({files / seconds:6.0f} members/s, "
              f"{doc['files_in_containers']} members; {seconds / folder_seconds:.1f}x the folder's time)")


def pdf_folder(dest: Path) -> tuple[int, int]:
    """Copy the corpus PDFs into dest; returns (files, pages), pages counted by PDFium
    (files it cannot open count 0: they are errors on both sides)."""
    import pypdfium2

    dest.mkdir(parents=True)
    pages = 0
    sources = sorted(PDF_SAMPLES.rglob("*.pdf"))
    for i, source in enumerate(sources):
        target = dest / f"{i:03}-{source.name}"
        shutil.copyfile(source, target)
        try:
            document = pypdfium2.PdfDocument(str(target))
        except pypdfium2.PdfiumError:
            continue
        pages += len(document)
        document.close()
    return len(sources), pages


def run_pdfminer(root: Path) -> float:
    import logging

    from pdfminer.high_level import extract_text

    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    start = time.perf_counter()
    for path in sorted(root.glob("*.pdf")):
        try:
            extract_text(str(path))
        except Exception:  # noqa: BLE001 - a corrupt or encrypted sample fails on both sides
            pass
    return time.perf_counter() - start


def pdf_part(work: Path, jobs: int | None) -> None:
    root = work / "pdfs"
    files, pages = pdf_folder(root)
    size = sum(p.stat().st_size for p in root.iterdir())
    print(f"\nPDF-heavy folder: {files} real PDFs, {pages} pages, {size / 1e6:.1f} MB")
    seconds = min(run_scanner(root, work / f"pdf{k}.db", jobs)[0] for k in range(2))
    miner = run_pdfminer(root)
    print(f"scanner scan (whole CLI, new index):  {seconds:7.2f} s  ({pages / seconds:6.1f} pages/s)")
    print(f"pdfminer.six extract_text alone:      {miner:7.2f} s  ({pages / miner:6.1f} pages/s, one process)")
    print(f"ratio pdfminer.six / scanner scan: {miner / seconds:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=None, help="scanner --jobs (default: all cores)")
    parser.add_argument("--keep", type=Path, default=None, help="build the tree here and keep it")
    parser.add_argument("--corpus", choices=("pan", "manpages"), default="pan",
                        help="pieces of PAN-13 texts (default) or rendered manual pages (bench/manpages.py)")
    parser.add_argument("--no-pdf", action="store_true", help="skip the PDF-heavy folder")
    parser.add_argument("--no-containers", action="store_true", help="skip the same tree packed in archives")
    args = parser.parse_args()
    compile_package()

    work = Path(tempfile.mkdtemp(prefix="bench_scan_"))
    root = args.keep or work / "tree"
    try:
        if args.corpus == "manpages":
            from manpages import man_page_tree

            root = man_page_tree(args.files, dest=args.keep)
            size = sum(p.stat().st_size for p in root.rglob("*.txt"))
        else:
            size = make_tree(root, args.files)
        print(f"tree ({args.corpus}): {args.files} files, {size / 1e6:.1f} MB; cores: {os.cpu_count()}")
        _ = run_datasketch(root)  # warm the page cache for both sides
        ds = min(run_datasketch(root) for _ in range(2))
        scans = []
        for k in range(2):
            seconds, doc = run_scanner(root, work / f"index{k}.db", args.jobs)
            scans.append(seconds)
        rescan, doc2 = min((run_scanner(root, work / "index1.db", args.jobs) for _ in range(3)), key=lambda r: r[0])
        (work / "empty").mkdir()
        empty = min(run_scanner(work / "empty", work / "empty.db", args.jobs)[0] for _ in range(3))
        lexical = min(run_scanner(root, work / f"lexical{k}.db", args.jobs, "--no-semantic")[0] for k in range(2))
        sniff = min(run_libmagic(root) for _ in range(2))
        system = min(run_libmagic(root, system=True) for _ in range(2))
        cores = args.jobs or os.cpu_count() or 1
        sc = min(scans)
        print(f"scanner scan (whole CLI, new index):  {sc:7.2f} s  "
              f"({args.files / sc:6.0f} files/s, {size / 1e6 / sc:5.2f} MB/s); "
              f"{len(doc['clusters'])} clusters, {len(doc['containments'])} containments")
        print(f"scanner rescan (unchanged tree):      {rescan:7.2f} s  (files_unchanged={doc2['files_unchanged']}; "
              "best of 3)")
        print(f"scanner scan of an empty folder:      {empty:7.2f} s  (start-up and exit; best of 3)")
        print(f"scanner scan --no-semantic:           {lexical:7.2f} s  (the semantic pass costs {sc / lexical:.2f}x; "
              f"passage step {doc['passage_step']['seconds']:.2f} s with it)")
        print(f"datasketch MinHash(128) + MinHashLSH: {ds:7.2f} s  ({args.files / ds:6.0f} files/s)")
        print(f"type routing alone (detect_mime):     {sniff:7.2f} s  "
              f"({sniff / args.files * 1e3:.2f} ms/file, one process)")
        print(f"python-magic, system database alone:  {system:7.2f} s  "
              f"({system / args.files * 1e3:.2f} ms/file, one process; the scan's typing before issue 15)")
        print(f"ratio datasketch / scanner scan: {ds / sc:.1f}x")
        print(f"ceiling of that ratio with type routing on every file and all else free on {cores} cores: "
              f"{ds / (sniff / cores):.1f}x")
        if not args.no_containers:
            containers_part(root, work, args.jobs, sc, args.files)
        if not args.no_pdf:
            pdf_part(work, args.jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
