"""Real XML documents against their own plain text: the SPDX License List's XML templates and its test texts.

`../shared/corpora/spdx-license-list` holds each license as an XML template (`src/ID.xml`: the text with
matching markup inline, `<alt>`, `<optional>`, `<bullet>`, `<copyrightText>`, and notes and cross references
beside it) and as plain text (`test/simpleTestForGenerator/ID.txt`). One folder gets both forms of every
license that has both; one `scanner scan --json` of it; then, license by license: is the XML paired with
its own text, what share of the text is found in it, is it the text's first source, and are the two in one
near-duplicate cluster. A reader that reads the XML as a reader of the license would keep these high.

    .venv/bin/python bench/eval_xml_spdx.py [--git REV | --tree DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_evasion import REPO, Scanner, add_tree_options, scanner_tree

SPDX = REPO.parent / "shared" / "corpora" / "spdx-license-list"


def build_folder(into: Path, limit: int | None) -> list[str]:
    """Copies of both forms of each license that has both (a scan does not follow links); the licenses' ids."""
    texts = {path.stem: path for path in (SPDX / "test" / "simpleTestForGenerator").glob("*.txt")}
    ids = sorted(path.stem for path in (SPDX / "src").glob("*.xml") if path.stem in texts)[:limit]
    into.mkdir()
    for license_id in ids:
        shutil.copyfile(SPDX / "src" / f"{license_id}.xml", into / f"{license_id}.xml")
        shutil.copyfile(texts[license_id], into / f"{license_id}.txt")
    return ids


def measure(found: dict, ids: list[str]) -> dict[str, float]:
    """Per license, from the scan's passage pairs, documents and clusters."""
    shares: dict[str, float] = {}
    for pair in found["passage_pairs"]:
        a, b = Path(pair["a"]).name, Path(pair["b"]).name
        if a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] and a != b:
            shares[a.rsplit(".", 1)[0]] = pair["share_a"] if a.endswith(".txt") else pair["share_b"]
    first = {}
    for document in found["documents"]:
        name = Path(document["path"]).name
        if name.endswith(".txt") and document["sources"]:
            first[name[:-4]] = Path(document["sources"][0]["path"]).name == name[:-4] + ".xml"
    clustered = set()
    for cluster in found["clusters"]:
        names = {Path(member["path"]).name for member in cluster["members"]}
        clustered.update(license_id for license_id in ids if {f"{license_id}.xml", f"{license_id}.txt"} <= names)
    xml_pairs = sum(Path(p["a"]).name.endswith(".xml") and Path(p["b"]).name.endswith(".xml")
                    for p in found["passage_pairs"])
    return {"licenses": len(ids), "paired": len(shares), "mean_share": sum(shares.values()) / len(ids),
            "share_ge_0.9": sum(share >= 0.9 for share in shares.values()), "first_source": sum(first.values()),
            "clustered": len(clustered), "passage_pairs": len(found["passage_pairs"]), "xml_xml_pairs": xml_pairs,
            "clusters": len(found["clusters"]), "partial": len(found["partial"]), "errors": len(found["errors"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_options(parser)
    parser.add_argument("--limit", type=int, help="the first N licenses only")
    args = parser.parse_args()
    if not SPDX.is_dir():
        print(f"no corpus at {SPDX}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tree, label = scanner_tree(args, work)
        ids = build_folder(work / "licenses", args.limit)
        scanner = Scanner(tree, work)
        started = time.perf_counter()
        found = scanner.json("scan", str(work / "licenses"), "--index", str(work / "i.db"))
        seconds = time.perf_counter() - started
    print(f"{label}: {len(ids)} licenses, XML and text, one scan in {seconds:.1f} s")
    for key, value in measure(found, ids).items():
        print(f"  {key:>14}: {value:.3f}" if isinstance(value, float) else f"  {key:>14}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
