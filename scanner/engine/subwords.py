"""Words to subword ids, as the sentence model's tokenizer makes them, in compiled code (issue 21).

The semantic pass meets about a hundred new words a check. Through the
tokenizers library a word costs a call and a list of Token objects (~5 µs,
holding the GIL while the thread that reads vectors ahead waits), and loading
the library's tokenizer costs ~100 ms of a first check. `loops.subword_ids`
applies the same model's merges to all the words of a call at once, from
tables made once from the tokenizer's file (`merges_of`, ~35 ms).

Only the kind of tokenizer loops.c implements is taken, and `merges_of` says
None for any other (the caller then keeps the tokenizers library): a BPE model
with byte fallback whose vocabulary holds all 256 byte tokens, no dropout, no
prefix or suffix on word pieces, merges not skipped for whole words, and a
normalizer that only puts "▁" before the word and turns spaces into "▁" (the
SentencePiece-converted kind WordLlama ships). The reference is the tokenizers
library itself: tests compare the two on real and generated words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scanner.engine.kernels import compiled

_NORMALIZER = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                   {"type": "Replace", "pattern": {"String": " "},
                                                    "content": "\u2581"}]}


@dataclass(frozen=True)
class SubwordMerges:
    """A byte-fallback BPE model's tables, as `loops.subword_ids` reads them."""

    char_codes: np.ndarray  # uint32, sorted: the characters that are tokens of their own
    char_ids: np.ndarray  # int64, their ids
    byte_ids: np.ndarray  # int64, 256: the ids of "<0x00>".."<0xFF>", for characters that are not
    merge_keys: np.ndarray  # uint64, a merge's pair (left id << 32 | right id), by rank (lower merges first)
    merge_ids: np.ndarray  # int64, the id of the token it makes
    merge_slots: np.ndarray  # int32, a hash table of the keys (-1 where empty), as loops.subword_pairs makes it


def encodable(word: str) -> str:
    """`word` as the tokenizer can take it: a lone surrogate (text decoded with surrogateescape, an HTML
    entity such as &#xD800;) made U+FFFD, which the tokenizer would otherwise refuse with an error."""
    if word.isascii():
        return word
    return word.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _code_points(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The strings' code points one after the other (uint32), and where each starts (with the end last)."""
    points = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)), out=offsets[1:])
    return points, offsets


def _pair_strings(merges: list[Any]) -> list[str] | None:
    """The merges as "a b" strings (the file's older form; the newer lists the two parts), or None when a
    part holds a space, which that form cannot tell from the separator."""
    kinds = set(map(type, merges))
    if kinds == {str}:
        return merges
    if kinds == {list} and all(len(m) == 2 and all(isinstance(p, str) and " " not in p for p in m) for m in merges):
        return [" ".join(m) for m in merges]
    return None


def merges_of(config: Mapping[str, Any]) -> SubwordMerges | None:
    """The tables of a tokenizer's parsed JSON file, or None when it is not the kind loops.c implements, or
    when the compiled module was not built."""
    model = config.get("model")
    if compiled is None or not isinstance(model, dict) or config.get("normalizer") != _NORMALIZER:
        return None
    if (config.get("pre_tokenizer") is not None or model.get("type") != "BPE" or model.get("byte_fallback") is not True
            or model.get("dropout") is not None or model.get("ignore_merges", False)
            or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix")):
        return None
    vocab, merges = model.get("vocab"), model.get("merges")
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        return None
    byte_tokens = [f"<0x{value:02X}>" for value in range(256)]
    if not all(token in vocab for token in byte_tokens):
        return None
    pairs = _pair_strings(merges)
    if pairs is None:
        return None
    strings = list(vocab)
    ids = np.fromiter(vocab.values(), dtype=np.int64, count=len(strings))
    points, offsets = _code_points(strings)
    merge_keys = np.empty(len(pairs), dtype=np.uint64)
    merge_ids = np.empty(len(pairs), dtype=np.int64)
    merge_slots = np.empty(1 << max(1, (2 * len(pairs)).bit_length()), dtype=np.int32)
    try:
        compiled.subword_pairs(points, offsets, ids, *_code_points(pairs), merge_keys, merge_ids, merge_slots)
    except ValueError:
        return None  # a merge whose parts are not tokens: the tokenizers library refuses the file, and says why
    single = np.flatnonzero(np.diff(offsets) == 1)
    by_code = np.argsort(points[offsets[single]], kind="stable")
    return SubwordMerges(char_codes=points[offsets[single]][by_code], char_ids=ids[single][by_code],
                         byte_ids=np.array([vocab[t] for t in byte_tokens], dtype=np.int64),
                         merge_keys=merge_keys, merge_ids=merge_ids, merge_slots=merge_slots)


def flat_ids(encoded: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Words' subword ids given as a list a word, as `encode_words` gives them: one after the other, and how
    many each word has."""
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    ids = np.fromiter((i for row in encoded for i in row), dtype=np.int64, count=int(lengths.sum()))
    return ids, lengths


def encode_words(merges: SubwordMerges, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each word's subword ids, one after the other (int64), and how many each word has."""
    assert compiled is not None  # merges_of makes tables only where the module was built
    points, offsets = _code_points([encodable(word) for word in words])
    ids = np.empty(4 * (points.shape[0] + len(words)), dtype=np.int64)
    lengths = np.empty(len(words), dtype=np.int64)
    total = compiled.subword_ids(points, offsets, merges.char_codes, merges.char_ids, merges.byte_ids,
                                 merges.merge_keys, merges.merge_ids, merges.merge_slots, ids, lengths)
    return ids[:total], lengths
