"""Containment of a small document in a large one, from 1:2 to 1:100 (issue 15).

Broder's size classes keep 50-100 samples per document: at a common modulus a 2 KB part of a 100 KB host
keeps about one, so its containment cannot be estimated from the sketches alone. Scan and compare must
still find it, within 0.1 of the exact value, and say what the figure rests on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import zipf_writer

from scanner.core.config import Params
from scanner.engine.compare import MAX_ERROR, compare_texts
from scanner.engine.sketch import exact_containment, shingle_text
from scanner.index import Index
from scanner.services.findings import find_similar
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

PART = 2000


@pytest.mark.parametrize("host_kb", [4, 32, 64, 101, 200])
@pytest.mark.parametrize("share", [1.0, 0.6])
def test_scan_finds_the_part_at_every_ratio(tmp_path: Path, host_kb: int, share: float) -> None:
    text = zipf_writer(host_kb * 10 + int(share * 10))
    host = text(host_kb * 1000)
    start = len(host) // 3
    inside = host[start:start + int(PART * share)]
    part = inside if share == 1.0 else inside + " " + text(int(PART * (1 - share)))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "host.txt").write_text(host, encoding="utf-8")
    (folder / "part.txt").write_text(part, encoding="utf-8")
    params = Params(min_containment=0.3)
    with Index.open(tmp_path / "i.db", readonly=False) as index:
        run_scan([folder], index, make_plugin_manager(load_entry_points=False), params, jobs=0)
        findings = find_similar(index, index.params)
    exact = exact_containment(shingle_text(part, params).distinct, shingle_text(host, params).distinct)
    pairs = [(Path(c.contained).name, Path(c.container).name, c.containment, c.error) for c in findings.containments]
    assert [(a, b) for a, b, _, _ in pairs] == [("part.txt", "host.txt")], (len(host) // PART, pairs)
    found, error = pairs[0][2], pairs[0][3]
    assert abs(found - exact) <= 0.1, (len(host) // PART, found, exact)
    assert 0 < error <= 0.1  # an estimate, with the error it carries


@pytest.mark.parametrize("host_kb", [4, 101, 200])
def test_compare_gives_a_supported_figure_and_an_edit_distance_no_shorter_than_the_length_gap(host_kb: int) -> None:
    text = zipf_writer(host_kb)
    host = text(host_kb * 1000)
    part = host[len(host) // 2:len(host) // 2 + PART]
    params = Params()
    report = compare_texts(part, host, params, exact=True)
    est, exact = report.estimate, report.exact
    assert exact is not None and est.containment_a is not None and est.containment_b is not None
    assert abs(est.containment_a_in_b - exact.containment_a_in_b) <= 0.1
    assert abs(est.containment_b_in_a - exact.containment_b_in_a) <= 0.1
    for found in (est.containment_a, est.containment_b):  # either within its error bar, or the exact value
        assert found.method == "exact" or found.error <= MAX_ERROR
    assert est.edit_distance_estimate >= len(host) - len(part)
