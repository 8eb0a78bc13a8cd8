"""Union-find and the pair decisions of scanner.engine.cluster (pure, no I/O)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from scanner.engine.cluster import ScoredPair, UnionFind, clusters_from, containments_from, worth_scoring


class TestUnionFind:
    """Disjoint sets behave like the connected components of the union edges."""

    def test_singletons_then_union(self) -> None:
        uf: UnionFind[int] = UnionFind(range(5))
        assert sorted(map(sorted, uf.groups())) == [[0], [1], [2], [3], [4]]
        assert uf.union(0, 1) is True
        assert uf.union(1, 0) is False
        uf.union(3, 4)
        uf.union(4, 1)
        assert sorted(map(sorted, uf.groups())) == [[0, 1, 3, 4], [2]]
        assert uf.find(0) == uf.find(3)
        assert len(uf) == 5

    def test_keys_added_on_first_use(self) -> None:
        uf: UnionFind[str] = UnionFind()
        uf.union("a", "b")
        assert "a" in uf and "b" in uf and "c" not in uf
        assert uf.find("c") == "c"
        assert len(uf) == 3

    def test_long_chain_is_one_group(self) -> None:
        uf: UnionFind[int] = UnionFind()
        for i in range(10_000):
            uf.union(i, i + 1)
        assert len(uf.groups()) == 1

    @given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=60))
    def test_matches_components(self, edges: list[tuple[int, int]]) -> None:
        uf: UnionFind[int] = UnionFind(range(31))
        for a, b in edges:
            uf.union(a, b)
        # reference: label propagation
        label = list(range(31))
        changed = True
        while changed:
            changed = False
            for a, b in edges:
                low = min(label[a], label[b])
                for x in (a, b):
                    if label[x] != low:
                        label[x], changed = low, True
        expected: dict[int, set[int]] = {}
        for node in range(31):
            expected.setdefault(label[node], set()).add(node)
        assert sorted(map(sorted, uf.groups())) == sorted(map(sorted, expected.values()))

    def test_order_of_unions_does_not_matter(self) -> None:
        edges = [(random.Random(i).randrange(50), random.Random(i + 99).randrange(50)) for i in range(80)]
        groups = []
        for seed in range(3):
            shuffled = edges[:]
            random.Random(seed).shuffle(shuffled)
            uf: UnionFind[int] = UnionFind(range(50))
            for a, b in shuffled:
                uf.union(a, b)
            groups.append(sorted(map(sorted, uf.groups())))
        assert groups[0] == groups[1] == groups[2]


def _pair(a: int, b: int, r: float, cab: float = 0.0, cba: float = 0.0) -> ScoredPair:
    return ScoredPair(a, b, 0, r, cab, cba)


class TestDecisions:
    """Thresholds turn scored pairs into clusters and containments."""

    def test_clusters_equivalence_first_then_threshold(self) -> None:
        pairs = [_pair(1, 2, 0.9), _pair(2, 3, 0.49), _pair(4, 5, 0.5)]
        groups = clusters_from(range(1, 8), [(6, 7)], pairs, threshold=0.5)
        assert sorted(groups) == [[1, 2], [4, 5], [6, 7]]

    def test_containment_skips_near_duplicates_and_is_directed(self) -> None:
        pairs = [
            _pair(1, 2, 0.1, cab=0.95, cba=0.12),  # 1 lifted into 2
            _pair(3, 4, 0.8, cab=0.9, cba=0.9),  # near-duplicates: a cluster, not a containment
            _pair(5, 6, 0.2, cab=0.3, cba=0.7),  # 6 in 5
        ]
        found = containments_from(pairs, threshold=0.5, min_containment=0.5)
        assert [(c.contained, c.container) for c in found] == [(1, 2), (6, 5)]
        assert found[0].containment == 0.95

    def test_worth_scoring(self) -> None:
        assert worth_scoring(40, 100, 1000, 0.5, 0.5)
        assert not worth_scoring(5, 100, 1000, 0.5, 0.5)
        assert not worth_scoring(3, 0, 10, 0.5, 0.5)
        assert worth_scoring(1, 2, 1000, 0.5, 0.5)


def test_lopsided_near_duplicate_is_one_directed_containment() -> None:
    """A licence inside a README: resemblance passes the threshold, but only one side is contained."""
    licence_in_readme = ScoredPair(a=1, b=2, shared=40, resemblance=0.65, containment_a_in_b=1.0,
                                   containment_b_in_a=0.71)
    symmetric = ScoredPair(a=3, b=4, shared=90, resemblance=0.9, containment_a_in_b=0.95, containment_b_in_a=0.94)
    found = containments_from([licence_in_readme, symmetric], threshold=0.5, min_containment=0.5)
    assert [(c.contained, c.container, c.containment) for c in found] == [(1, 2, 1.0)]
