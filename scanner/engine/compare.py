"""Every measure for one pair of texts (the service behind `scanner compare`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from rapidfuzz.distance import Levenshtein

from scanner.core.config import Params
from scanner.engine import coates
from scanner.engine.arrays import distinct, outside
from scanner.engine.sketch import (
    ContainmentEstimate,
    PairEstimate,
    compare_sketches,
    exact_measures,
    shingle_text,
    sketch_and_winnow,
)

MAX_ERROR = 0.1  # a containment whose 95 % interval is wider than +-0.1 is replaced by the exact value


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


def compare_texts(text_a: str, text_b: str, params: Params, *, exact: bool = False,
                  excluded: np.ndarray | None = None) -> PairReport:
    """Every measure for one pair. Containment comes from the better-supported sample (the sketches, or
    the winnowed fingerprints both texts keep); where even that leaves an error above MAX_ERROR (very
    short texts), the exact value from the shingle sets stands in its place, marked "exact". `excluded`:
    sorted uint64 shingles that count in neither text (base text), left out of every set and sample."""
    shingled_a, shingled_b = shingle_text(text_a, params), shingle_text(text_b, params)
    (sketch_a, (win_a, _)), (sketch_b, (win_b, _)) = sketch_and_winnow([text_a, text_b], params)
    kept_a, kept_b = outside(distinct(win_a), excluded), outside(distinct(win_b), excluded)
    shared = int(np.intersect1d(kept_a, kept_b, assume_unique=True).shape[0])
    estimate = compare_sketches(sketch_a, sketch_b, params.sample_size, shared,
                                (int(kept_a.shape[0]), int(kept_b.shape[0])), excluded)
    resemblance, in_b, in_a = exact_measures(outside(shingled_a.distinct, excluded),  # one search: cheap
                                             outside(shingled_b.distinct, excluded))
    if estimate.containment_a is not None and estimate.containment_a.error > MAX_ERROR:
        estimate = replace(estimate, containment_a=ContainmentEstimate(in_b, 0, "exact"), containment_a_in_b=in_b)
    if estimate.containment_b is not None and estimate.containment_b.error > MAX_ERROR:
        estimate = replace(estimate, containment_b=ContainmentEstimate(in_a, 0, "exact"), containment_b_in_a=in_a)
    exact_values = None
    if exact:
        exact_values = ExactValues(resemblance=resemblance, containment_a_in_b=in_b, containment_b_in_a=in_a,
                                   edit_distance=Levenshtein.distance(text_a, text_b))
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
