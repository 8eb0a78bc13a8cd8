"""A corpus of larger real files: the manual pages Debian installs, rendered to plain text.

Issue 16's second scan corpus (man-page-sized files, about 10 KB each). A seeded sample of the English
pages under /usr/share/man/man*/ is rendered with `man -l` (UTF-8, 80 columns, overstrikes removed), in
parallel, and cached under the system's temporary folder: the same seed gives the same files on this
machine. A page that renders to nothing (a broken `.so` link) is skipped and the next one taken.

On this machine most pages are Google Cloud SDK pages made from one template (16,631 of 17,921 in
man1): a real case of many documents sharing template text, which the scan's passage step must bear.

    .venv/bin/python bench/manpages.py [--count 2000] [--seed 16] [--dest DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MAN_ROOT = Path("/usr/share/man")
_OVERSTRIKE = re.compile(r".\x08")


def english_pages() -> list[Path]:
    """Every page file of the English sections (man1..man9, no translations), sorted."""
    return sorted(p for p in MAN_ROOT.glob("man*/*") if p.is_file() and not p.is_symlink())


def render(page: Path) -> str:
    """The page as a reader sees it in a terminal of 80 columns, without bold/underline overstrikes."""
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run(["man", "-l", "-E", "UTF-8", str(page)], capture_output=True, env=env,
                          cwd=page.parent.parent, timeout=60)
    return _OVERSTRIKE.sub("", proc.stdout.decode("utf-8", "replace"))


def man_page_tree(count: int = 2000, seed: int = 16, dest: Path | None = None) -> Path:
    """A folder of `count` rendered pages (in subfolders of 100), built once per (count, seed)."""
    pages = english_pages()
    tag = hashlib.sha256(f"{count}:{seed}:{len(pages)}".encode()).hexdigest()[:10]
    root = dest or Path(tempfile.gettempdir()) / f"scanner-manpages-{count}-{seed}-{tag}"
    done = root / ".complete"
    if done.exists():
        return root
    order = random.Random(seed).sample(pages, len(pages))
    written = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        start = 0
        while written < count and start < len(order):
            batch = order[start : start + (count - written) + 16]
            start += len(batch)
            for page, text in zip(batch, pool.map(render, batch)):
                if written == count or len(text.strip()) < 200:
                    continue
                folder = root / f"{written // 100:02}"
                folder.mkdir(parents=True, exist_ok=True)
                name = page.name.removesuffix(".gz")
                (folder / f"{name}.txt").write_text(text, encoding="utf-8")
                written += 1
    done.write_text(f"{written} pages\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--dest", type=Path, default=None)
    args = parser.parse_args()
    root = man_page_tree(args.count, args.seed, args.dest)
    files = [p for p in root.rglob("*.txt")]
    size = sum(p.stat().st_size for p in files)
    print(f"{root}: {len(files)} pages, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
