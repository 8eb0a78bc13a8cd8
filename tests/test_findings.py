"""Findings of a whole index: each pair of documents is reported once, in the form that says most."""

from __future__ import annotations

from pathlib import Path

from clirun import REPO

from scanner.core.config import Params
from scanner.engine.cluster import ScoredPair, clusters_from, containments_from, near_duplicate_links
from scanner.index import Index
from scanner.services.findings import find_similar
from scanner.services.scan import run_scan
from scanner.sources.plugins import make_plugin_manager

SAMPLE = REPO / "sample_corpus"


def test_a_licence_inside_a_readme_is_a_containment_not_also_a_near_duplicate(tmp_path: Path) -> None:
    with Index.open(tmp_path / "i.db", readonly=False) as index:
        run_scan([SAMPLE], index, make_plugin_manager(load_entry_points=False), Params(), jobs=0,
                 exclude=["SOURCES.md"])
        findings = find_similar(index, index.params)
    cluster_of = {m.path: c.id for c in findings.clusters for m in c.members}
    names = {(Path(c.contained).name, Path(c.container).name) for c in findings.containments}
    assert ("mit-license.txt", "tidewater-readme.md") in names
    assert ("LICENSE-vendored.txt", "tidewater-readme.md") in names
    for c in findings.containments:  # never the same pair twice
        assert cluster_of.get(c.contained) is None or cluster_of.get(c.contained) != cluster_of.get(c.container)
    licences = {Path(m.path).name for c in findings.clusters for m in c.members
                if c.kind == "near-duplicate" and any(Path(x.path).name == "mit-license.txt" for x in c.members)}
    # the licence attached to a mail is one of them, named as the member it is
    assert licences == {"mit-license.txt", "LICENSE-vendored.txt", "LICENSE-parser.txt"}
    assert any(m.path.endswith("licence-question.eml!/LICENSE-parser.txt") for c in findings.clusters
               for m in c.members)


def test_lopsided_pairs_link_no_cluster_and_make_one_directed_containment() -> None:
    lopsided = ScoredPair(a=1, b=2, shared=40, resemblance=0.65, containment_a_in_b=1.0, containment_b_in_a=0.62)
    alike = ScoredPair(a=3, b=4, shared=90, resemblance=0.9, containment_a_in_b=0.95, containment_b_in_a=0.94)
    assert near_duplicate_links([lopsided, alike], 0.5) == [alike]
    assert clusters_from(range(1, 5), [], [lopsided, alike], 0.5) == [[3, 4]]
    contained = containments_from([lopsided, alike], 0.5, 0.5)
    assert [(c.contained, c.container) for c in contained] == [(1, 2)]


def test_a_text_in_three_of_twenty_five_documents_still_clusters(tmp_path: Path) -> None:
    """Broder's very common shingles are a large collection's boilerplate: in a case of 25 files, a text
    copied into 3 of them is the finding (5 % of 25 alone would call its shingles very common)."""
    from corpus import prose

    folder = tmp_path / "case"
    folder.mkdir()
    for i in range(22):
        (folder / f"other-{i:02d}.txt").write_text(prose(300 + i, 600), encoding="utf-8")
    leaked = prose(400, 600)
    for k, edit in enumerate(("", " A line added at the end.", " Another line added here.")):
        (folder / f"copy-{k}.txt").write_text(leaked + edit, encoding="utf-8")
    params = Params()
    with Index.open(tmp_path / "i.db", readonly=False, params=params) as index:
        run_scan([str(folder)], index, make_plugin_manager(), params, jobs=0)
        assert index.common_limit(params.common_shingle_share, 25) == 5
        findings = find_similar(index, params)
    copies = [c for c in findings.clusters if any("copy-" in m.path for m in c.members)]
    assert [sorted(Path(m.path).name for m in c.members) for c in copies] == [["copy-0.txt", "copy-1.txt",
                                                                               "copy-2.txt"]]
