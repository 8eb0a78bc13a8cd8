"""The token hash against its definition, computed one character at a time in Python.

The vectorized canonicalizer (byte stream, unaligned 64-bit reads, sparse
wide points, CJK cuts, multi-point expansions, Latin look-alikes, letter-spaced
words) must give exactly what this slow reading of the definition gives,
offsets included.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from corpus import mixed_texts
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.engine.canon import canonicalize, canonicalize_many
from scanner.engine.confusables import latin_lookalikes

SAMPLE = Path(__file__).resolve().parents[1] / "sample_corpus"

# the definition's constants (ALGORITHM_VERSION 3; version 4 added the look-alikes and letter-spaced words)
BASE = 0x100000001B3
NARROW_DOMAIN = 0x9E3779B97F4A7C15
WIDE_DOMAIN = 0xC2B2AE3D27D4EB4F
MASK = (1 << 64) - 1


def splitmix_finalizer(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def is_isolated(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in (
        (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)))


def expand(ch: str) -> str:
    """A character's canonical points: NFKD of its case fold, Latin look-alikes (the table of
    scanner.engine.confusables) replaced by their letter; format characters vanish."""
    if unicodedata.category(ch) == "Cf":
        return ""
    lookalike = latin_lookalikes()
    return "".join(chr(lookalike.get(ord(p), ord(p)))
                   for p in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()))


SPACES = {" ", "\u00a0", *map(chr, range(0x2000, 0x200B)), "\u202f", "\u205f", "\u3000"}  # NFKD is " "


def letter_spaced(text: str, tokens: list[list[tuple[int, int, int]]],
                  owners: list[int]) -> list[list[tuple[int, int, int]]]:
    """Letter-spaced words joined: runs of one-letter tokens (a letter: alphabetic, not CJK) whose
    neighbours are one point apart, that point from a space character; letters glued to the token
    before or after (no white space between) are dropped from a run's ends; a run of 2+ letters, not
    all one letter, becomes one token when it has 3+ letters, or 2 set apart on both sides (text end,
    line break, or 2+ white-space characters only) with a word of 3+ letters reached from it across
    one-letter tokens and white-space gaps without a line break."""
    breaks = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

    def gap(i: int) -> str | None:
        return None if i in (0, len(tokens)) else text[owners[tokens[i - 1][-1][2]] + 1 : tokens[i][0][1]]

    def spaced(i: int) -> bool:
        g = gap(i)
        return g is None or any(c.isspace() for c in g)

    def apart(i: int) -> bool:
        g = gap(i)
        return g is None or any(c in breaks for c in g) or (len(g) >= 2 and g.isspace())

    def letter(i: int) -> bool:
        token = tokens[i]
        return len(token) == 1 and chr(token[0][0]).isalpha() and not is_isolated(token[0][0])

    def linked(i: int) -> bool:  # tokens i and i + 1
        a, b = tokens[i][-1][2], tokens[i + 1][0][2]
        return b - a == 2 and text[owners[a + 1]] in SPACES

    runs = []  # (lo, hi): tokens[lo:hi] form a word
    i = 0
    while i < len(tokens):
        j = i
        while letter(i) and j + 1 < len(tokens) and letter(j + 1) and linked(j):
            j += 1
        lo, hi = i, j + 1
        while lo < hi and not spaced(lo):
            lo += 1
        while hi > lo and not spaced(hi):
            hi -= 1
        if hi - lo >= 2 and len({t[0][0] for t in tokens[lo:hi]}) > 1:
            runs.append((lo, hi))
        i = j + 1
    long_tokens = {k for lo, hi in runs if hi - lo >= 3 for k in range(lo, hi)}

    def reaches_long(k: int, step: int) -> bool:
        while 0 <= k < len(tokens):
            g = gap(max(k, k - step))
            if g is None or not g.isspace() or any(c in breaks for c in g):
                return False
            if k in long_tokens:
                return True
            if not letter(k):
                return False
            k += step
        return False

    words = {lo: hi for lo, hi in runs if hi - lo >= 3 or (
        apart(lo) and apart(hi) and (reaches_long(lo - 1, -1) or reaches_long(hi, 1)))}
    out: list[list[tuple[int, int, int]]] = []
    i = 0
    while i < len(tokens):
        if i in words:
            out.append([t[0] for t in tokens[i : words[i]]])
            i = words[i]
        else:
            out.append(tokens[i])
            i += 1
    return out


def reference_tokens(text: str, unit: str = "word") -> list[tuple[list[int], int, int]]:
    """(points, start, end) of every token: runs of word points, each CJK point (or, for
    unit "char", each word point) alone, then (unit "word") letter-spaced words joined;
    offsets are those of the owning characters."""
    tokens: list[list[tuple[int, int, int]]] = []  # (point, owning character, index in the point stream)
    run: list[tuple[int, int, int]] = []
    owners: list[int] = []

    def close() -> None:
        if run:
            tokens.append(list(run))
            run.clear()

    for i, ch in enumerate(text):
        for point in expand(ch):
            code = ord(point)
            owners.append(i)
            here = (code, i, len(owners) - 1)
            if is_isolated(code) or (unit == "char" and unicodedata.category(point)[0] in "LNM"):
                close()
                tokens.append([here])
            elif unicodedata.category(point)[0] in "LNM":
                run.append(here)
            else:
                close()
    close()
    if unit == "word":
        tokens = letter_spaced(text, tokens, owners)
    return [([code for code, _, _ in token], token[0][1], token[-1][1] + 1) for token in tokens]


def reference_hash(points: list[int]) -> int:
    """Points packed little-endian (bytes if all < 256, else 32-bit units) into
    8-byte chunks, the chunks' polynomial in BASE, then domain and mixer."""
    narrow = max(points) < 256
    data = bytes(points) if narrow else b"".join(p.to_bytes(4, "little") for p in points)
    value = 0
    for i in range(0, len(data), 8):
        value = (value * BASE + int.from_bytes(data[i : i + 8], "little")) & MASK
    return splitmix_finalizer(value ^ (NARROW_DOMAIN if narrow else WIDE_DOMAIN))


def assert_matches_definition(text: str, unit: str = "word") -> None:
    expected = reference_tokens(text, unit)
    tokens = canonicalize(text, unit)
    assert tokens.starts.tolist() == [start for _, start, _ in expected]
    assert tokens.ends.tolist() == [end for _, _, end in expected]
    assert tokens.hashes.tolist() == [reference_hash(points) for points, _, _ in expected]


# every path: ASCII, Latin-1 and wider letters in one word, long words (several
# chunks), vanishing and multi-point characters, CJK and astral points
PIECES = ["a", "Zz", "7", " ", ".", "\n", "-", "\u00e9", "\u00df", "\u0130", "\ufb01", "\u2026", "\u00bd", "\u00ad",
          "\u200d", "\u0301", "\u4e00", "\u3042", "\U00020000", "\u2163", "\u33ab", "\ufdfa", "\u0436", "\u03a3",
          "\uac00", "\u2019", "\u00a0", "\x97", "abcdefghij", "Donaudampfschiff", "\u0436" * 5, "x\u00e9" * 6,
          "\u0441\u043e\u0440", "\u039f", "\u00b5", " c o p y ", "i s  ", "\u2009", "\u0436 \u043e ", "b 7 c "]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
ANY_TEXTS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXTS, ANY_TEXTS), st.sampled_from(["word", "char"]))
def test_token_hashes_follow_the_definition(text: str, unit: str) -> None:
    assert_matches_definition(text, unit)


@pytest.mark.parametrize("text", [
    "",
    "a rose is a rose",
    "exactly8 exactly16exactly16 seventeen17chars! " + "w" * 1000,  # chunk edges and a long run
    "Straße ÉTÉ café naïve",  # folding that expands, Latin-1 in narrow tokens
    "\u0436\u0437 x\u0436y \u4e00\u4e01ab\u3042",  # wide tokens, CJK cuts inside a run
    "\u2026\u2026x\u00ad\u00ady\ufb01",  # expansions and vanishing characters around tokens
    "caf\u00e9 na\u00efve \u00bd\u00ad " * 40 + "\u4e00x\u00e9",  # more expanding characters than a splice takes
    # wide points everywhere: tokens numbered along the stream
    "\u0436\u0437\u0438\u0439 word " * 200 + "\u4e00\u4e01abc",
    "plain words " * 300 + "\u0436\u0437 \u2019",  # a few wide points: their tokens searched
    "\u0441\u043e\u0440\u0456\u0435d \u0422\u0435\u03c7t \u00b5",  # look-alikes: Cyrillic, Greek, micro sign
    "the c o p i e d text  i s  h e r e, it's a U.S. a a a \u0436 \u0437 \u0438 x\u00a0y\u2009z ﬁ a b",  # letter-spaced
])
def test_examples_follow_the_definition(text: str) -> None:
    assert_matches_definition(text)
    assert_matches_definition(text, "char")


def test_a_word_hashes_the_same_in_any_script_of_its_batch() -> None:
    """The stream's form (ASCII bytes, or UTF-16 patched) never changes a token's hash."""
    alone, in_latin, in_cjk = canonicalize_many(["rose garden", "rose garden \u00e9", "rose garden \u4e00"])
    assert alone.hashes.tolist() == in_latin.hashes.tolist()[:2] == in_cjk.hashes.tolist()[:2]


def test_real_documents_follow_the_definition() -> None:
    """Whole documents: the sample corpus's texts and generated ones with typography, ligatures, accents,
    control and format characters, CRLF and other scripts (tests/corpus.py)."""
    documents = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.rglob("*"))
                 if p.suffix in (".txt", ".md", ".html")]
    documents += [text for text in mixed_texts() if any(ord(ch) > 127 for ch in text)][:10]
    assert len(documents) >= 18 and sum(map(len, documents)) > 50_000
    for text in documents:
        assert_matches_definition(text)
