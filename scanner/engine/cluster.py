"""Union-find and the decisions that turn scored pairs into findings (no I/O).

Broder's clustering: identical documents (same SHA-256) and lexically-
equivalent ones (same canonical token stream) are grouped first, so only one
representative of each group takes part in pair scoring; then every pair whose
resemblance reaches the threshold joins two groups.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
ArrayOrInt = int | np.ndarray


class UnionFind(Generic[K]):
    """Disjoint sets with path halving and union by size; keys are added on first use."""

    def __init__(self, keys: Iterable[K] = ()) -> None:
        self._parent: dict[K, K] = {}
        self._size: dict[K, int] = {}
        for key in keys:
            self.add(key)

    def add(self, key: K) -> None:
        if key not in self._parent:
            self._parent[key] = key
            self._size[key] = 1

    def find(self, key: K) -> K:
        self.add(key)
        parent = self._parent
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(self, a: K, b: K) -> bool:
        """Join the sets of a and b; False when they were already one set."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size.pop(rb)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._parent

    def __len__(self) -> int:
        return len(self._parent)

    def groups(self) -> list[list[K]]:
        """Every set (singletons too), members in insertion order."""
        out: dict[K, list[K]] = {}
        for key in self._parent:
            out.setdefault(self.find(key), []).append(key)
        return list(out.values())


@dataclass(frozen=True)
class ScoredPair:
    """Theorem 1 estimates for two documents a < b."""

    a: int
    b: int
    shared: int  # winnowed fingerprints in common (the postings count)
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    error_a_in_b: float = 0.0  # 95 % half-width of containment_a_in_b (0: exact)
    error_b_in_a: float = 0.0
    resemblance_error: float = 0.0  # 95 % half-width of resemblance (0: exact)


@dataclass(frozen=True)
class Containment:
    contained: int
    container: int
    containment: float
    resemblance: float
    error: float = 0.0  # 95 % half-width of the containment (0: exact)
    resemblance_error: float = 0.0  # the same, of the resemblance


SCORING_SLACK = 0.5  # a pair sharing less than half the fingerprints its thresholds imply is not scored


def min_shared_share(threshold: float, min_containment: float, slack: float = SCORING_SLACK) -> float:
    """Share of the smaller document's fingerprints a pair must share to be worth scoring."""
    return slack * min(threshold, min_containment)


def worth_scoring(shared: ArrayOrInt, n_fps_a: ArrayOrInt, n_fps_b: ArrayOrInt, threshold: float,
                  min_containment: float, slack: float = SCORING_SLACK) -> Any:
    """Cheap filter on the postings count before the sketches are read (scalars or numpy arrays).

    A pair whose resemblance is r shares at least r of the smaller document's
    shingles, and containment c of the smaller one in the larger shares c of
    them; winnowing keeps shared runs' fingerprints, so a shared count below
    `slack` times that share of the smaller fingerprint set cannot reach either
    threshold except by sampling noise (slack 0.5 leaves a factor two for it).
    """
    smaller = np.minimum(n_fps_a, n_fps_b)
    return (smaller > 0) & (shared >= min_shared_share(threshold, min_containment, slack) * smaller)


_LOPSIDED = 0.2  # containments that differ by this much make a directed finding


def is_lopsided(pair: ScoredPair) -> bool:
    """One document is mostly inside the other (a licence inside a README) rather than both alike: such a
    pair is reported once, as a containment, never also as a near-duplicate link."""
    return abs(pair.containment_a_in_b - pair.containment_b_in_a) >= _LOPSIDED


def near_duplicate_links(pairs: Iterable[ScoredPair], threshold: float) -> list[ScoredPair]:
    """Pairs that join near-duplicate clusters: resemblance at or above `threshold`, and not lopsided."""
    return [p for p in pairs if p.resemblance >= threshold and not is_lopsided(p)]


def clusters_from(nodes: Iterable[int], equivalent: Iterable[tuple[int, int]],
                  pairs: Iterable[ScoredPair], threshold: float, min_size: int = 2) -> list[list[int]]:
    """Groups of at least `min_size` nodes, each sorted: equivalences first, then the near-duplicate links
    among `pairs` (min_size 1: a document alone may still hold several identical files)."""
    uf: UnionFind[int] = UnionFind(nodes)
    for a, b in equivalent:
        uf.union(a, b)
    for pair in near_duplicate_links(pairs, threshold):
        uf.union(pair.a, pair.b)
    return [sorted(g) for g in uf.groups() if len(g) >= min_size]


def containments_from(pairs: Iterable[ScoredPair], threshold: float, min_containment: float) -> list[Containment]:
    """Directed containment findings, most contained first.

    Near-duplicates contain each other about equally both ways and are already
    reported as clusters, so a near-duplicate pair is listed here only when
    its containment is lopsided (one document is, say, a licence inside a
    README: resemblance may pass the threshold while only one side is
    contained).
    """
    out = []
    for p in pairs:
        a_in_b = p.containment_a_in_b >= min_containment
        b_in_a = p.containment_b_in_a >= min_containment
        if p.resemblance >= threshold:
            if not is_lopsided(p):
                continue
            # only the dominant direction: the smaller document inside the larger
            a_in_b, b_in_a = (a_in_b and p.containment_a_in_b > p.containment_b_in_a,
                              b_in_a and p.containment_b_in_a > p.containment_a_in_b)
        if a_in_b:
            out.append(Containment(p.a, p.b, p.containment_a_in_b, p.resemblance, p.error_a_in_b,
                                   p.resemblance_error))
        if b_in_a:
            out.append(Containment(p.b, p.a, p.containment_b_in_a, p.resemblance, p.error_b_in_a,
                                   p.resemblance_error))
    out.sort(key=lambda c: (-c.containment, c.contained, c.container))
    return out
