"""Parameters of the similarity engine, in one frozen dataclass.

Defaults were chosen by measurement on public corpora (docs/CORPORA.md; the
figures are in docs/EVALUATION.md, "Defaults chosen from these figures");
each field's comment names the figure that fixed it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any, Literal

from scanner.core.errors import UsageError

ShingleOption = Literal["set", "bag"]
TokenUnit = Literal["word", "char"]

# Version of the token/shingle/sketch algorithms: bump it whenever the same text
# and parameters would give other fingerprints. It is part of every sketch key,
# so an older index is told apart instead of silently mismatching: readers
# refuse it and the next scan re-sketches it (scan.resketch_index).
# 3: token hashes from packed 64-bit chunks, SHA-256 digests (2026-11-23).
# 4: anti-evasion canonicalization: letters that look like Latin letters (Unicode confusables: Cyrillic о,
#    Greek ο...) become them, letter-spaced words ("c o p y") are one token (issue 15).
ALGORITHM_VERSION = 4

# Which candidates get the reworded-sentence alignment, in `check` and in the scan's passage step alike (a
# scan's pair is aligned as `check` would align it with either document as the query):
SENTENCE_ALIGNED_FIRST = 10  # candidates (most shared fingerprints first) always given the sentence alignment
# documents nearest the query by meaning (stored document vectors, issue 21) given the sentence alignment too:
# a translated or summarised source may share no phrase at all (PAN-13 translation chains through the index:
# 0.784 -> 0.827 plagdet, 3 gave 0.820 and 10 no more than 5: docs/EVALUATION.md)
MEANING_CANDIDATES = 5

# Fields that change what a sketch contains; thresholds only change decisions.
_SKETCH_FIELDS = (
    "shingle_size",
    "shingle_option",
    "token_unit",
    "seed",
    "sample_size",
    "size_class_base",
    "winnow_window",
    "supershingle_size",
    "coates_c",
    "coates_n",
    "coates_k",
)

# Fields an earlier version had, with the one value they ever took: stored parameters that name them
# still load, and sketch keys still count them, so no index is re-sketched for a field that changed nothing.
# mod_m: a MOD_m sample never used (postings are winnowed fingerprints).
_RETIRED_FIELDS: dict[str, Any] = {"mod_m": 8}


@dataclass(frozen=True)
class Params:
    """Every tunable of the pipeline.

    Attributes:
        shingle_size: w, tokens per shingle.
        shingle_option: "set" (Broder option B) or "bag" (option A, labelled shingles).
        token_unit: "word" tokens, or "char" (every letter/digit is a token).
        seed: key of the random permutation pi applied to shingle fingerprints.
        sample_size: s of MIN_s, the fixed-size bottom-s sketch.
        size_class_base: L_i uses modulus 2**i with i chosen so that a document of
            n shingles keeps n / 2**i in [base, 2*base) samples (50..100 by default).
        winnow_window: winnowing window (in shingles) for passage anchors; any run
            of shingle_size + winnow_window - 1 shared tokens is detected.
        supershingle_size: how many consecutive sorted sketch values form one
            supershingle.
        coates_c, coates_n, coates_k: Coates' compression factor, neighbourhood and
            emitted residue.
        resemblance_threshold: pairs at or above this resemblance are clustered.
        min_containment: containment pairs at or above this are reported.
        min_tokens: documents with fewer canonical tokens are "too short to judge".
        common_shingle_share: shingles in more than this share of indexed
            documents are ignored when pairing (Broder: "very common shingles").
        passage_words: the shortest passage the whole-index passage pairs keep,
            at least the guaranteed run (`check` keeps every passage of the guaranteed run).
    """

    shingle_size: int = 4  # docs/ENGINE.md: best Clough sketch AUC with non-plagiarised containment < 1 %
    shingle_option: ShingleOption = "set"
    token_unit: TokenUnit = "word"
    seed: int = 0x5EED_CAFE_F00D_D00D
    sample_size: int = 128
    size_class_base: int = 50
    winnow_window: int = 4
    supershingle_size: int = 4
    coates_c: int = 16
    coates_n: int = 2
    coates_k: int = 0
    resemblance_threshold: float = 0.5
    min_containment: float = 0.5
    min_tokens: int = 10
    common_shingle_share: float = 0.05
    passage_words: int = 15  # docs/EVALUATION.md, "Passage pairs": check's precision on PAN-13, no set sentence

    def __post_init__(self) -> None:
        problems = []
        if self.shingle_size < 1:
            problems.append("shingle_size must be >= 1")
        if self.shingle_option not in ("set", "bag"):
            problems.append("shingle_option must be 'set' or 'bag'")
        if self.token_unit not in ("word", "char"):
            problems.append("token_unit must be 'word' or 'char'")
        if not 0 <= self.seed < 2**64:
            problems.append("seed must fit in 64 unsigned bits")
        if self.sample_size < 1:
            problems.append("sample_size must be >= 1")
        if self.size_class_base < 1:
            problems.append("size_class_base must be >= 1")
        if self.winnow_window < 1:
            problems.append("winnow_window must be >= 1")
        if self.supershingle_size < 1:
            problems.append("supershingle_size must be >= 1")
        if self.coates_c < 1 or self.coates_n < 1:
            problems.append("coates_c and coates_n must be >= 1")
        if not 0 <= self.coates_k < self.coates_c:
            problems.append("coates_k must satisfy 0 <= k < c")
        if self.passage_words < 1:
            problems.append("passage_words must be >= 1")
        for name in ("resemblance_threshold", "min_containment", "common_shingle_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be within [0, 1]")
        if problems:
            raise UsageError("invalid parameters: " + "; ".join(problems))

    @property
    def guaranteed_run(self) -> int:
        """Shared runs of at least this many tokens are always detected (winnowing)."""
        return self.shingle_size + self.winnow_window - 1

    @property
    def min_passage_words(self) -> int:
        """`passage_words`, but never below the guaranteed run: a shorter passage may have no shared anchor."""
        return max(self.passage_words, self.guaranteed_run)

    @property
    def passage_anchors(self) -> int:
        """Distinct winnowed anchors two documents share at least when they share a passage of
        `min_passage_words` words: its n shingles hold n // window disjoint winnowing windows, each of which
        selects one shingle of the passage in both documents (a passage that repeats a shingle may hold fewer)."""
        return max(1, (self.min_passage_words - self.shingle_size + 1) // self.winnow_window)

    def sketch_fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _SKETCH_FIELDS}

    def sketch_key(self) -> bytes:
        """8-byte identity of the sketch-affecting fields, stored in every sketch."""
        fields_ = dict(self.sketch_fields(), **_RETIRED_FIELDS, algorithm=ALGORITHM_VERSION)
        blob = json.dumps(fields_, sort_keys=True).encode()
        return hashlib.blake2b(blob, digest_size=8).digest()

    def replace(self, **changes: Any) -> "Params":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Params":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - set(_RETIRED_FIELDS))
        if unknown:
            raise UsageError(f"unknown parameter(s): {', '.join(unknown)}")
        return cls(**{k: v for k, v in data.items() if k in known})


def describe_difference(a: Params, b: Params) -> str:
    fa, fb = a.sketch_fields(), b.sketch_fields()
    diffs = [f"{k} {fa[k]!r} vs {fb[k]!r}" for k in _SKETCH_FIELDS if fa[k] != fb[k]]
    return ", ".join(diffs) or "unknown difference"
