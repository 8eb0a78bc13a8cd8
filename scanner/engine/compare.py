"""Every measure for one pair of texts (the service behind `scanner compare`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

from scanner.core.config import Params
from scanner.engine import coates
from scanner.engine.sketch import (
    PairEstimate,
    build_sketch,
    compare_sketches,
    exact_containment,
    exact_resemblance,
    shingle_text,
)


@dataclass(frozen=True)
class ExactValues:
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    edit_distance: int


@dataclass(frozen=True)
class PairReport:
    estimate: PairEstimate
    exact: ExactValues | None
    a_embedded_in_b: bool
    b_embedded_in_a: bool
    difference_profile: np.ndarray
    tokens_a: int
    tokens_b: int


_EMBED_MAX_SHARE = 0.8  # a text is "embedded" in a clearly longer one, not in a near-duplicate


def _embedded(inner: coates.CoatesSignature, outer: coates.CoatesSignature) -> bool:
    return len(inner) <= _EMBED_MAX_SHARE * len(outer) and coates.embeds(inner, outer)


def compare_texts(text_a: str, text_b: str, params: Params, *, exact: bool = False) -> PairReport:
    shingled_a, shingled_b = shingle_text(text_a, params), shingle_text(text_b, params)
    sketch_a = build_sketch(text_a, params, shingled_a)
    sketch_b = build_sketch(text_b, params, shingled_b)
    estimate = compare_sketches(sketch_a, sketch_b, params.sample_size)
    exact_values = None
    if exact:
        sa, sb = shingled_a.distinct, shingled_b.distinct
        exact_values = ExactValues(
            resemblance=exact_resemblance(sa, sb),
            containment_a_in_b=exact_containment(sa, sb),
            containment_b_in_a=exact_containment(sb, sa),
            edit_distance=Levenshtein.distance(text_a, text_b),
        )
    sig_a, sig_b = sketch_a.coates, sketch_b.coates
    return PairReport(
        estimate=estimate,
        exact=exact_values,
        a_embedded_in_b=_embedded(sig_a, sig_b),
        b_embedded_in_a=_embedded(sig_b, sig_a),
        difference_profile=coates.difference_profile(sig_a, sig_b),
        tokens_a=sketch_a.n_tokens,
        tokens_b=sketch_b.n_tokens,
    )
