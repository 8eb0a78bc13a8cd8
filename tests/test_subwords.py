"""Words to subword ids in compiled code (scanner/engine/subwords.py, loops.c): the same ids as the tokenizers
library's BPE model, on the shipped tokenizer and on small hand-made ones built to reach the corners of the
merge order (a pair listed twice, two pairs making one token, characters only bytes can spell)."""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import pytest
from corpus import prose
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from scanner.engine import semantic, subwords
from scanner.engine.canon import canonicalize
from scanner.engine.kernels import compiled
from scanner.engine.subwords import encodable, encode_words, flat_ids, merges_of
from scanner.sources.models import _TOKENIZER, load_model, model_folder

pytestmark = pytest.mark.skipif(compiled is None, reason="the compiled module was not built (no C compiler)")


@functools.cache
def shipped_file() -> bytes:
    folder = model_folder()
    assert folder is not None
    return (folder / _TOKENIZER).read_bytes()


@functools.cache
def shipped() -> tuple[subwords.SubwordMerges, Tokenizer]:
    """The shipped tokenizer's tables, and the library's tokenizer read from the same file (made once: the
    hypothesis tests call for them in every example)."""
    data = shipped_file()
    merges = merges_of(json.loads(data))
    assert merges is not None
    return merges, Tokenizer.from_str(data.decode())


def library_ids(tokenizer: Tokenizer, words: list[str]) -> list[list[int]]:
    """The tokenizers library's BPE model on each word as the normalizer leaves it."""
    return [[t.id for t in tokenizer.model.tokenize("\u2581" + encodable(w).replace(" ", "\u2581"))] if w else []
            for w in words]


def listed(ids: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
    assert ids.shape[0] == int(lengths.sum())
    return [part.tolist() for part in np.split(ids, np.cumsum(lengths)[:-1])] if lengths.shape[0] else []


def test_the_shipped_tokenizers_words_get_the_librarys_ids() -> None:
    merges, tokenizer = shipped()
    text = (prose(22, 4000) + " naïve ﬁnance e-mail l'été 日本語 ελληνικά a f t 4,000 x² 😀 \x00\x7f "
            "caf\udce9 \ud800 Straße ΑΒΓ ĳssel n\u0303 " + "x" * 3000 + " " + "ab" * 2000)
    tokens = canonicalize(text)
    words = sorted({text[s:e].lower() for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())}) + ["", " "]
    assert len(words) > 600
    assert listed(*encode_words(merges, words)) == library_ids(tokenizer, words)
    assert listed(*encode_words(merges, [])) == []


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=40), max_size=20))
def test_any_words_get_the_librarys_ids(words: list[str]) -> None:
    merges, tokenizer = shipped()
    assert listed(*encode_words(merges, words)) == library_ids(tokenizer, words)


@functools.cache
def _shipped_settings() -> tuple[dict[str, Any], dict[str, Any]]:
    """The shipped file but its vocabulary and merges: its other parts, and its model's other settings."""
    data = json.loads(shipped_file())
    model = data.pop("model")
    return data, {k: v for k, v in model.items() if k not in ("vocab", "merges")}


def tiny_config(merges: list[Any], extra: list[str]) -> dict[str, Any]:
    """A byte-fallback BPE tokenizer of the shipped kind, over a few letters."""
    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": 1 + b for b in range(256)}}
    for token in ["\u2581", "a", "b", "c", "é", *extra]:
        vocab.setdefault(token, len(vocab))
    parts, settings = _shipped_settings()
    data = {**parts, "model": {**settings, "vocab": vocab, "merges": merges}}
    data["added_tokens"] = data["added_tokens"][:1]
    data["post_processor"] = None
    return data


# pairs that merge into the same token ("ab"+"c" and "a"+"bc"), a pair listed twice ("b c": the later rank
# counts), merges that start with "▁", and "é" (a token) beside "ü" (spelt with bytes, which never merge)
CORNERS = ["b c", "a b", "▁ a", "ab c", "a bc", "c a", "ca b", "b c", "▁a b", "▁ab c", "▁ c", "c c", "cc c"]
CORNER_TOKENS = ["bc", "ab", "▁a", "abc", "ca", "cab", "▁ab", "▁abc", "▁c", "cc", "ccc"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.text(alphabet="abcé ü", max_size=14), max_size=12))
def test_the_merge_order_is_the_librarys_in_its_corners(words: list[str]) -> None:
    config = tiny_config(CORNERS, CORNER_TOKENS)
    merges = merges_of(config)
    assert merges is not None
    tokenizer = Tokenizer.from_str(json.dumps(config))
    assert listed(*encode_words(merges, words)) == library_ids(tokenizer, words)


def test_merges_written_as_lists_are_read_as_the_strings_are() -> None:
    as_strings = merges_of(tiny_config(CORNERS, CORNER_TOKENS))
    as_lists = merges_of(tiny_config([m.split(" ") for m in CORNERS], CORNER_TOKENS))
    assert as_strings is not None and as_lists is not None
    words = ["abc", "cabc", "bcc ccc", "ab ab"]
    assert listed(*encode_words(as_lists, words)) == listed(*encode_words(as_strings, words))


@pytest.mark.parametrize("change", ["normalizer", "dropout", "no byte token", "unknown part", "prefix", "spaced part"])
def test_tokenizers_of_another_kind_are_left_to_the_library(change: str) -> None:
    """merges_of takes only the kind loops.c implements; any other is encoded by the tokenizers library."""
    config = tiny_config(CORNERS, CORNER_TOKENS)
    model = config["model"]
    if change == "normalizer":
        config["normalizer"] = {"type": "Lowercase"}
    elif change == "dropout":
        model["dropout"] = 0.1
    elif change == "no byte token":
        del model["vocab"]["<0x41>"]
    elif change == "unknown part":
        model["merges"] = [*CORNERS, "c zz"]
    elif change == "prefix":
        model["continuing_subword_prefix"] = "##"
    else:
        model["merges"] = [m.split(" ") for m in CORNERS] + [["a b", "c"]]
    assert merges_of(config) is None


def test_compiled_sums_of_subword_rows_are_numpys_to_the_bit() -> None:
    """loops.subword_sums widens the float16 rows (by the processor, or through a table) and sums them: every
    float16 value (subnormals and infinities included) comes out as numpy widens it, a NaN as a NaN (which of
    two, and whether signalling, is no value), and sums of rows are numpy's to the bit, ids past the last row
    included."""

    def same_floats(got: np.ndarray, expected: np.ndarray) -> bool:
        return bool(((got.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(got) & np.isnan(expected))).all())

    every_half = np.arange(65536, dtype=np.uint16).view(np.float16).reshape(256, 256)
    ids, lengths = np.arange(256, dtype=np.int64), np.ones(256, dtype=np.int64)
    got, counts = np.empty((256, 256), dtype=np.float32), np.empty(256, dtype=np.float32)
    assert compiled is not None
    compiled.subword_sums(every_half, semantic._widened(), ids, lengths, got, counts)
    assert same_floats(got, every_half.astype(np.float32)) and counts.tolist() == [1.0] * 256
    assert np.isnan(got).sum() == 2 * 1023 and not np.isnan(got[:124]).any()  # of 65,536 patterns, 2,046 NaNs
    rng = np.random.default_rng(8)
    for table in (every_half, load_model().table):  # every pattern in sums of 2-3 rows too
        lengths = rng.integers(0, 12, 500) if table is not every_half else rng.integers(1, 4, 500)
        lengths[[0, 9, 499]] = 0
        ids = rng.integers(0, table.shape[0] + 50, int(lengths.sum()))
        got, counts = np.empty((500, table.shape[1]), dtype=np.float32), np.empty(500, dtype=np.float32)
        semantic._subword_sums(table, ids, lengths, got, counts)
        expected, expected_counts = np.empty_like(got), np.empty_like(counts)
        with pytest.MonkeyPatch.context() as numpy_only, np.errstate(invalid="ignore"):  # inf + -inf
            numpy_only.setattr(semantic, "compiled", None)
            semantic._subword_sums(table, ids, lengths, expected, expected_counts)
        assert same_floats(got, expected) and counts.tobytes() == expected_counts.tobytes()
        assert not got[[0, 9, 499]].any()
    assert not np.isnan(got).any()  # the model's sums: compared to the bit


def test_without_the_compiled_module_the_library_encodes_the_same_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    words = ["the", "harbour", "naïve", "", "a f t", "日本語", "x" * 300]
    fast = listed(*load_model().encode(words))
    monkeypatch.setattr(subwords, "compiled", None)
    assert listed(*load_model().encode(words)) == fast
    assert listed(*flat_ids([[1, 2], [], [3]])) == [[1, 2], [], [3]]
