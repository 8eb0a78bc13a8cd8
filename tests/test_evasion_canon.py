"""Anti-evasion canonicalization (issue 15): Latin look-alikes, letter-spaced words, and the evidence of both.

Generated and hand-written texts only. The token hash itself is checked against its definition in
test_canon.py; here, what the rules must do and must not do.
"""

from __future__ import annotations

import sys
import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_canon import assert_matches_definition

from scanner.core.model import Match
from scanner.engine import canon
from scanner.engine.canon import canonical_words, canonicalize, canonicalize_many, normalizations
from scanner.engine.confusables import latin_lookalikes
from scanner.engine.scramble import SwappedReadings, neighbour_swaps, reordered_tokens
from scanner.engine.sketch import shingle_text


def hashes(text: str) -> list[int]:
    return canonicalize(text).hashes.tolist()


def test_the_space_characters_are_those_whose_nfkd_is_a_space() -> None:
    derived = [c for c in range(sys.maxunicode + 1) if unicodedata.normalize("NFKD", chr(c)) == " "]
    assert canon._SPACES.tolist() == derived


def test_the_table_maps_canonical_letters_to_ascii_letters() -> None:
    table = latin_lookalikes()
    assert 200 < len(table) < 1000
    for code, letter in table.items():
        ch = chr(code)
        assert "a" <= chr(letter) <= "z"
        assert unicodedata.category(ch).startswith("L")
        # keyed by canonical point: what NFKD of the case fold leaves (so case folding commutes with it)
        assert unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()) == ch
    for lookalike, latin in zip("аеорсхіјѕһԁ" "οαικρνυχ" "օսհ" "ɑıɡ", "aeopcxijshd" "oaikpvux" "ouh" "aig"):
        assert table[ord(lookalike)] == ord(latin), lookalike
    # letters of scripts that cannot spell a Latin word are left alone: Arabic alef, Hebrew samekh,
    # Hangul ieung, a CJK ideograph
    for other in "\u0627\u05e1\u110b\u4e05":
        assert ord(other) not in table


def test_look_alikes_read_as_latin_in_any_case() -> None:
    plain = hashes("The copied text, Exercise OXYGEN")
    assert hashes("Тһе сорied tеxt, Ехеrсisе ОХYGЕN") == plain  # Cyrillic, capitals included
    assert hashes("Τhe cορied text, Εxercise ΟΧGΕN") == hashes("The copied text, Exercise OXGEN")  # Greek
    # a look-alike whose lower case looks like another letter reads as that one: Greek Ν is ν, a v
    assert hashes("ΝΟ") == hashes("vo")
    assert hashes("ｃｏｐｉｅｄ 𝐜𝐨𝐩𝐢𝐞𝐝") == hashes("copied copied")  # compatibility forms, as before
    # case folding first: a look-alike and its capital are one letter (Н and н both read as h)
    assert hashes("НЕТ нет Нет") == [hashes("het")[0]] * 3


def test_genuine_cyrillic_stays_cyrillic_and_apart_from_english() -> None:
    russian = "Привет мир, это простой текст о погоде и жизни в городе"
    words = canonical_words(russian)
    assert words[0] == "пpиbet"  # only look-alikes become Latin: п, и, ... stay Cyrillic
    assert len(set(hashes(russian))) == len(set(russian.lower().replace(",", "").split()))
    english = "Hello world, this is a simple text about weather and life in the city"
    assert not set(hashes(russian)) & set(hashes(english))


def test_letter_spaced_words_are_one_token_spanning_their_letters() -> None:
    text = "the c o p i e d text"
    tokens = canonicalize(text)
    assert tokens.hashes.tolist() == hashes("the copied text")
    assert (tokens.starts.tolist(), tokens.ends.tolist()) == ([0, 4, 16], [3, 15, 20])
    # words set apart by wider gaps: two-letter words too (beside a longer spaced word), and a one-letter word
    # stays one
    assert hashes("t h i s  i s  a  c o p y") == hashes("this is a copy")
    assert hashes("i t  i s  t o  b e  c o p i e d") == hashes("it is to be copied")
    assert len(canonicalize("i s  t o")) == 4  # no longer word beside: four one-letter words
    assert len(canonicalize("A B\nx y z")) == 3  # a line break parts "A B" from "xyz"
    assert hashes("c\u00a0o\u00a0p\u00a0y,  t\u2009e\u2009x\u2009t") == hashes("copy text")
    assert hashes("с о р у") == hashes("copy")  # Cyrillic look-alikes, letter-spaced


def test_normal_prose_keeps_its_one_letter_words() -> None:
    for text in ("it's a U.S. senator", "the a a a rose", "I saw a b", "x 1 y 2 z", "vitamin A a day",
                 "Part B a", "J. R. R. Tolkien", "so a I said", "z z z z"):
        assert len(canonicalize(text)) == len(canonical_words(text)) == len(
            [w for w in text.replace("'", " ").replace(".", " ").split() if w]), text
    # three distinct letters one space apart are a spaced word, whatever they mean (measured on the
    # corpora: docs/ENGINE.md, "Anti-evasion canonicalization")
    assert hashes("I saw a b c") == hashes("I saw abc")


SPACED = st.lists(st.sampled_from(["a", "b", "c", "I", "7", " ", " ", "  ", "\n", "'", ".", "\u00a0", "\u2009",
                                   "\u0441", "\u043e", "\u00e9", "\ufb01", "\u00ad", "\u200b", "x y z ", "i s  ",
                                   "\t", "b a  "]),
                  max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(SPACED)
def test_letter_spacing_follows_the_definition_and_batches_alike(text: str) -> None:
    assert_matches_definition(text)
    assert_matches_definition(text, "char")
    alone = canonicalize(text)
    for batched in canonicalize_many([text, "x y z " + text, text + " a b"])[:1]:
        assert batched.hashes.tolist() == alone.hashes.tolist()
        assert batched.starts.tolist() == alone.starts.tolist()


@settings(max_examples=200, deadline=None)
@given(SPACED)
def test_invariant_under_nfkc_and_casefold(text: str) -> None:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    assert hashes(text) == hashes(folded)


@settings(max_examples=200, deadline=None)
@given(SPACED, SPACED)
def test_normalizations_from_the_tokens_equal_those_of_the_text_cut_again(text: str, other: str) -> None:
    """`check` hands its texts' tokens to `normalizations` (alone or cut in a batch) instead of cutting them
    again: the evidence must be the same."""
    again = normalizations(text)
    for tokens in (canonicalize(text), *canonicalize_many([other, text, "c o p y " + other])[1:2]):
        found = normalizations(text, tokens)
        for field in ("hashes", "starts", "ends", "confusables", "invisible", "spaced"):
            assert getattr(found, field).tolist() == getattr(again, field).tolist(), field
    assert canonicalize(text, "char").spaced is None  # character tokens say nothing of spaced words


def test_normalizations_say_where_a_text_needed_them() -> None:
    text = "plain words then с\u043ep\u0456ed te\u200bxt and c o p y  h e r e, ｆｕｌｌ"
    found = normalizations(text)
    # с о і of "сopіed" and the four full-width letters; "c o p y" and "h e r e"; the zero-width space
    assert found.counts([(0, len(text))]) == {"confusables": 7, "letter_spaced": 2, "invisible": 1}
    assert found.counts([(0, 16)]) == {}  # "plain words then"
    assert found.counts([(17, 24), (20, 30)]) == {"confusables": 3, "invisible": 1}  # overlaps counted once
    assert normalizations("café, naïve, ﬁne\u00a0text").counts([(0, 30)]) == {}  # accents, ligatures, NBSP: none


def test_a_match_shows_its_normalizations_only_when_it_needed_some() -> None:
    match = Match("p", "0" * 64, 0.5, 0.5, 0.5, 10)
    assert "normalized" not in match.to_json()
    changed = Match("p", "0" * 64, 0.5, 0.5, 0.5, 10, normalizations={"confusables": 212, "letter_spaced": 14})
    assert changed.to_json()["normalized"] == {"confusables": 212, "letter_spaced": 14}
    hash(changed)  # still hashable

    from scanner.faces.commands.check import normalization_note

    assert normalization_note(changed.normalizations) == (
        "matched after mapping 212 confusable characters, rejoining 14 letter-spaced words")
    assert normalization_note({"invisible": 1, "reordered": 40}) == (
        "matched after removing 1 invisible character inside words, swapping back the order of 40 words")
    assert normalization_note({}) == ""


def test_neighbour_swaps_undo_a_pair_swap() -> None:
    assert [o.tolist() for o in neighbour_swaps(5)] == [[1, 0, 3, 2, 4], [0, 2, 1, 4, 3]]
    assert [o.tolist() for o in neighbour_swaps(2)] == [[1, 0]]
    assert neighbour_swaps(1) == []
    words = "one two three four five six seven eight nine ten eleven twelve".split()
    swapped = [words[i ^ 1] for i in range(len(words))]
    params_w = 4
    source = shingle_text(" ".join(words), _params(params_w))
    copy = shingle_text(" ".join(swapped), _params(params_w))
    assert not np.isin(copy.fingerprints, source.distinct).any()  # no shingle in common as it stands
    seed = _params(params_w).seed
    moved = reordered_tokens(SwappedReadings.of(copy.tokens.hashes, params_w, "set", seed), source.distinct,
                             params_w)
    assert moved.all()
    assert not reordered_tokens(SwappedReadings.of(source.tokens.hashes, params_w, "set", seed),
                                source.distinct, params_w).any()
    short = shingle_text("one two", _params(params_w))  # fewer tokens than a shingle: one shingle, none moved
    assert not reordered_tokens(SwappedReadings.of(short.tokens.hashes, params_w, "set", seed), source.distinct,
                                params_w).any()


def test_reordered_words_counted_within_given_tokens_are_those_of_the_whole_count() -> None:
    """`within`: only the shingles reaching those tokens are looked up; on them the answer is the whole one."""
    rng = np.random.default_rng(8)
    words = [f"w{k}" for k in rng.integers(0, 60, 300)]
    copy = list(words)
    for i in range(40, 260, 2):  # neighbours swapped in the middle, the ends kept as they were
        copy[i], copy[i + 1] = copy[i + 1], copy[i]
    params = _params(4)
    source, query = shingle_text(" ".join(words), params), shingle_text(" ".join(copy), params)
    readings = SwappedReadings.of(query.tokens.hashes, 4, "set", params.seed)
    whole = reordered_tokens(readings, source.distinct, 4)
    assert 150 < whole.sum() < 300  # the swapped middle, not the ends
    for _ in range(20):
        within = np.zeros(len(query.tokens), dtype=bool)
        first = int(rng.integers(0, 290))
        within[first : first + int(rng.integers(1, 60))] = True
        assert ((reordered_tokens(readings, source.distinct, 4, within) & within) == (whole & within)).all()
    # a shingle of a swapped reading reaches one token past its own span: "bravo charlie delta echo" is the
    # swapped-back shingle at position 1, whose tokens are 0, 3, 2 and 5 of the copy
    copy = shingle_text("bravo alpha delta charlie foxtrot echo hotel golf", params)
    held = shingle_text("bravo charlie delta echo", params).distinct
    readings = SwappedReadings.of(copy.tokens.hashes, 4, "set", params.seed)
    assert np.flatnonzero(reordered_tokens(readings, held, 4)).tolist() == [0, 2, 3, 5]
    only = np.zeros(8, dtype=bool)
    only[5] = True
    assert np.flatnonzero(reordered_tokens(readings, held, 4, only) & only).tolist() == [5]


def _params(w: int):
    from scanner.core.config import Params

    return Params(shingle_size=w)
