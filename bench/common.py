"""Shared helpers of the benchmarks: where the corpora are, and how to read them.

The corpora are third-party files with mixed encodings (see each SOURCE.md),
so text is decoded as UTF-8 and, failing that, as Windows-1252, the way a
user's files would be.
"""

from __future__ import annotations

import csv
import random
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
PAN13 = CORPORA / "pan13-text-alignment-subset"
CLOUGH = CORPORA / "clough-stevenson"
SPDX = CORPORA / "spdx-license-list"
LICENSEE = CORPORA / "licensee-fixtures"
PDF_SAMPLES = CORPORA / "pdf-samples"
ARTICLE_BENCHMARK = CORPORA / "html-article-extraction-benchmark"
COATES_LENGTH = 13_508  # Coates 2011, section 4: the test document's size


def read_text(path: Path) -> str:
    """Decode a corpus file: UTF-8 (BOM stripped), else Windows-1252, else Latin-1."""
    data = path.read_bytes()
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def pan13_texts() -> list[str]:
    """Every PAN-13 source and suspicious document (about 5.7 MB of English)."""
    paths = sorted((PAN13 / "src").glob("*.txt")) + sorted((PAN13 / "susp").glob("*.txt"))
    return [read_text(p) for p in paths]


_SCRIPTS = {  # name: ranges of its letters
    "Cyrillic": ((0x400, 0x4FF),),
    "Hangul": ((0xAC00, 0xD7A3), (0x1100, 0x11FF)),
    "CJK and kana": ((0x3040, 0x30FF), (0x4E00, 0x9FFF)),
}


def script_texts(size: int = 1_000_000, document: int = 10_000) -> dict[str, list[str]]:
    """Real non-Latin text: the gold article bodies of the article-extraction benchmark written mostly
    in each script (Cyrillic 62 KB, Hangul 5 KB, CJK and kana 2 KB), repeated to `size` characters and
    cut into documents of `document` characters (a timing corpus, not a similarity one)."""
    import json

    gold = json.loads((ARTICLE_BENCHMARK / "ground-truth.json").read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for name, ranges in _SCRIPTS.items():
        bodies = [entry["articleBody"] for entry in gold.values()
                  if sum(any(lo <= ord(ch) <= hi for lo, hi in ranges) for ch in entry["articleBody"])
                  > 0.3 * len(entry["articleBody"])]
        if not bodies:
            continue
        joined = "\n".join(bodies)
        joined = (joined + "\n") * (size // (len(joined) + 1) + 1)
        out[name] = [joined[i : i + document] for i in range(0, size, document)]
    return out


def coates_documents(count: int, length: int = COATES_LENGTH, min_source: int | None = None) -> list[str]:
    """`count` unrelated English texts of exactly `length` characters (PAN-13 sources).

    The first is the stand-in for Coates' 13,508-character test document; the
    others give the "Max LD" of unrelated same-size texts.
    """
    paths = sorted((PAN13 / "src").glob("*.txt"))
    texts = []
    for path in paths:
        text = read_text(path)
        if len(text) >= (min_source or length):
            texts.append(text[:length])
        if len(texts) == count:
            break
    return texts


def clough_pairs() -> list[tuple[str, str, str, str]]:
    """(answer file, category, answer text, source text) for the 95 answers."""
    root = CLOUGH / "corpus-20090418"
    rows = []
    with (CLOUGH / "corpus-final09_File_list.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            answer = read_text(root / row["File"])
            source = read_text(root / f"orig_task{row['Task']}.txt")
            rows.append((row["File"], row["Category"], answer, source))
    return rows


def clough_texts() -> dict[str, str]:
    """All 100 Clough-Stevenson files by name (answers and the five sources)."""
    return {p.name: read_text(p) for p in sorted((CLOUGH / "corpus-20090418").glob("*.txt"))}


def strip_front_matter(text: str) -> str:
    """choosealicense.com texts start with YAML front matter between '---' lines."""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            return text[end + 4 :].lstrip("\n")
    return text


# --------------------------------------------------------------------------
# Coates' corruptions (section 4.2)

_PRINTABLE = [chr(c) for c in range(32, 127)] + ["\n"]


def substitute(text: str, share: float, rng: random.Random) -> str:
    """Replace `share` of the characters, at distinct random positions, by a different random char."""
    chars = list(text)
    for pos in rng.sample(range(len(chars)), int(round(share * len(chars)))):
        old = chars[pos]
        new = old
        while new == old:
            new = rng.choice(_PRINTABLE)
        chars[pos] = new
    return "".join(chars)


def random_block(length: int, rng: random.Random) -> str:
    return "".join(rng.choice(_PRINTABLE) for _ in range(length))


def insert_blocks(text: str, blocks: int, size: int, rng: random.Random) -> str:
    """Insert `blocks` random blocks of `size` characters at random places (Coates 4.2.2)."""
    cuts = sorted(rng.randrange(len(text) + 1) for _ in range(blocks))
    parts, last = [], 0
    for cut in cuts:
        parts.append(text[last:cut])
        parts.append(random_block(size, rng))
        last = cut
    parts.append(text[last:])
    return "".join(parts)


# --------------------------------------------------------------------------
# timing


def best_seconds(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of `repeat` runs: the least disturbed measurement of one core."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_seconds_interleaved(fns: Sequence[Callable[[], object]], repeat: int = 3) -> list[float]:
    """Best wall time of each function over `repeat` rounds that run them in turn.

    On a shared VM whose speed drifts by tens of percent within a minute, timing
    one side after the other puts the drift into the ratio; taking turns gives
    every side the same slow and fast moments.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def total_mb(texts: Iterable[str]) -> float:
    """Size in MB (10**6 bytes) of the texts as UTF-8, the unit of MB/s below."""
    return sum(len(t.encode("utf-8")) for t in texts) / 1e6


def compile_package(root: Path | None = None) -> None:
    """Byte-compile the package (of the checkout at `root`, default this one), as `pip install` does: a process
    that starts the CLI then reads compiled modules, as a user's would. (This machine's environment sets
    PYTHONDONTWRITEBYTECODE=1, so a module edited since it was last compiled was compiled again from source in
    every process: 60-90 ms a start-up.)"""
    import compileall

    root = root if root is not None else Path(__file__).resolve().parents[1]
    for folder in ("scanner", "plugins"):
        compileall.compile_dir(str(root / folder), quiet=1)
