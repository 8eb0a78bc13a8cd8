"""Word-order scrambles: token orders that undo a swap of neighbouring words.

A copy whose words were swapped two by two ("b a d c f e" for "a b c d e f")
shares no shingle with its source, so the postings alone never name the
source as a candidate. Read with each pair swapped back, at one of the two
parities, the copy is the source again: `check` looks those orders' anchors up
as well, then the reworded-sentence pass (whose sentence seeds are bags of
words, blind to order) aligns the passage.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from scanner.engine.arrays import SortedLookup, in_sorted
from scanner.engine.fingerprint import shingle_fingerprints


def neighbour_swaps(n: int) -> list[np.ndarray]:
    """The two orders of n tokens with neighbours swapped: (1 0 3 2 ...) and (0 2 1 4 3 ...).

    A trailing token without a partner stays in place; fewer than 2 (or 3) tokens give no order.
    """
    orders = []
    for parity in (0, 1):
        pairs = (n - parity) // 2
        if pairs == 0:
            continue
        order = np.arange(n, dtype=np.int64)
        span = order[parity : parity + 2 * pairs].reshape(pairs, 2)
        order[parity : parity + 2 * pairs] = span[:, ::-1].ravel()
        orders.append(order)
    return orders


@dataclass(frozen=True)
class SwappedReadings:
    """A text read in both `neighbour_swaps` orders, each with its shingle fingerprints: made once per query,
    for its candidates' look-up and then for every match's count of reordered words (for which the plain
    reading's fingerprints and the swapped ones are sorted, once, when a match first needs them)."""

    tokens: int
    orders: list[np.ndarray]
    fingerprints: list[np.ndarray]
    plain_fingerprints: np.ndarray  # the text's own, as it stands

    @classmethod
    def of(cls, hashes: np.ndarray, w: int, option: str = "set", seed: int = 0,
           plain_fingerprints: np.ndarray | None = None) -> "SwappedReadings":
        """`plain_fingerprints`: the text's own shingle fingerprints (these parameters), when the caller has them."""
        orders = neighbour_swaps(hashes.shape[0])
        own = shingle_fingerprints(hashes, w, option, seed) if plain_fingerprints is None else plain_fingerprints
        return cls(hashes.shape[0], orders, [shingle_fingerprints(hashes[order], w, option, seed) for order in orders],
                   own)

    @functools.cached_property
    def lookups(self) -> list[SortedLookup]:
        """Each swapped reading's fingerprints, sorted."""
        return [SortedLookup.of(fps) for fps in self.fingerprints]

    @functools.cached_property
    def plain(self) -> SortedLookup:
        """The text's own fingerprints, sorted."""
        return SortedLookup.of(self.plain_fingerprints)


def reordered_tokens(readings: SwappedReadings, doc_distinct: np.ndarray, w: int,
                     within: np.ndarray | None = None) -> np.ndarray:
    """Query tokens inside a shingle that the document shares only once neighbours are swapped back.

    `readings` are the query's, `doc_distinct` the document's fingerprints, sorted and distinct
    (Shingled.distinct). Tokens of a shingle the query shares as it stands are not counted: a verbatim
    copy has none, a copy swapped two by two has nearly all of its words. `within` (a boolean a token): the
    tokens the caller counts, such as a match's passages; only the shingles reaching them are looked up, and
    the answer holds for them (elsewhere it may miss tokens).
    """
    n = readings.tokens
    out = np.zeros(n, dtype=np.bool_)
    if doc_distinct.shape[0] == 0 or n < w:
        return out
    shift = np.arange(w, dtype=np.int64)  # a shingle's tokens: its first and the w - 1 after it
    if within is None:
        hits = [lookup.positions_in(doc_distinct) for lookup in readings.lookups]
        shared = readings.plain.positions_in(doc_distinct)
    else:
        near = _shingles_reaching(within, n, w)
        hits = [near[in_sorted(fps[near], doc_distinct)] for fps in readings.fingerprints]
        shared = near[in_sorted(readings.plain_fingerprints[near], doc_distinct)]
    for order, hit in zip(readings.orders, hits):
        out[order[(hit[:, None] + shift).ravel()]] = True
    out[(shared[:, None] + shift).ravel()] = False
    return out


def _shingles_reaching(within: np.ndarray, n: int, w: int) -> np.ndarray:
    """Shingle positions whose tokens, in the text or in a neighbour-swapped reading (a token moves by one at
    most), may include one of `within`: those with one in [p - 1, p + w]."""
    starts = np.arange(n - w + 1, dtype=np.int64)
    counted = np.concatenate(([0], np.cumsum(within, dtype=np.int64)))
    return starts[counted[np.minimum(starts + w + 1, n)] > counted[np.maximum(starts - 1, 0)]]
