"""Letters that a reader takes for Latin letters (Unicode UTS #39 confusables), and the letter each looks like.

Cyrillic а е о р с х і ј ѕ, Greek ο α ν ι, Armenian օ, Cherokee and Lisu
letters, Latin ɑ ı ɡ and the like are the look-alikes of a character
substitution; canonicalization maps each to its Latin letter, so a text
retyped with them still shares its words with the original
(`scanner.engine.canon`).

The table, `confusables.tsv`, is package data made by
`bench/make_confusables.py` from Unicode's own confusables.txt (the file
names its version and SHA-256). It is keyed by canonical point (NFKD of the
case fold), so mapping commutes with case folding and NFKC. It holds only
letters of scripts that can spell a Latin word; see the script for the rules.
"""

from __future__ import annotations

import functools
from pathlib import Path

# beside this module in the package (importlib.resources would cost every process ~7 ms: tempfile, random, shutil)
TABLE_FILE = "confusables.tsv"


@functools.cache
def latin_lookalikes() -> dict[int, int]:
    """Canonical code point -> code of the lower-case ASCII letter it looks like (read once)."""
    text = Path(__file__).with_name(TABLE_FILE).read_text(encoding="utf-8")
    table: dict[int, int] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        code, letter, _name = line.split("\t", 2)
        table[int(code, 16)] = ord(letter)
    return table
