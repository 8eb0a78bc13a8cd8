"""Issue 15: planted leaks in every kind of carrier, evasion tricks, and containment at size ratios.

Three experiments, the scanner through its real CLI (`python -m scanner`), and the same cases, in the
same run, for copydetect (winnowing), ssdeep (ppdeep) and TLSH (py-tlsh):

1. **Carriers.** A leak, a 200-word excerpt of a protected text, is planted in unrelated generated
   prose inside each kind of carrier of `tests/carriers.py` (text with markup-like words, Markdown,
   HTML in the article, a table, nav, footer, aside, comment, noscript, hidden element or after an
   unclosed script, PDF, DOCX, ODT, EPUB, e-mail plain, base64 and as an attachment, CSV, JSON, XML,
   a file with no extension, and issue 18's containers and formats: ZIP, tar.gz, 7z, mbox, a DOCX or
   a ZIP attached to a mail, ...), `--variants` cases each (different excerpts and prose). Each is
   checked (`scanner check`) and watched (`scanner watch --once`: found when an alert names the source). Controls: every
   carrier around 200 words that no protected text holds (what a tool finds there is a false alarm).
2. **Evasion tricks.** The leak, changed by one trick of `tests/carriers.TRICKS` (Cyrillic and Greek
   look-alikes, letter spacing, every pair of words swapped, zero-width characters, soft hyphens,
   no-break spaces, full-width letters, ligatures, line-end hyphenation, capitals, punctuation
   stripped), in a plain .txt carrier.
3. **Size ratios.** A 2,000-character part cut from a host 2x to 100x its size (all of the part from
   the host, or 60 % from it and 40 % from elsewhere), `scanner scan` of a folder holding the two.

Rules (the same for every case):

* protected index: `scanner scan PROTECTED --index protected.db`; PROTECTED holds the PAN-13 source
  documents, eight SPDX licence texts and `sample_corpus/originals` (all public);
* scanner finds a leak when `scanner check FILE --index protected.db --json` lists the leak's source
  (by SHA-256) with passages that cover more than 50 of its words (counted on the source side,
  `doc_start..doc_end`, `\\w+` runs in the union of the spans: a letter-spaced or zero-width-split
  copy is not counted as more words than it copies);
* peers see the carrier's raw bytes decoded as UTF-8 (errors replaced), since they have no
  extractors, and only the leak's own source (not the index): copydetect finds the leak when the
  fingerprints it shares with the source (its defaults: k = 25 characters, guarantee 25, so window 1,
  no tokenizer filtering) cover more than 50 words of the source, or when either side's similarity is
  at least its default display threshold 0.33; ssdeep when `compare` > 0; TLSH when `diff` <= 100;
* size ratios: scanner finds the pair when `scan --json --min-containment 0.3` lists the part as
  contained in the host, and is accurate when its containment is within 0.1 of
  `scanner compare --exact part host`'s; the peers compare the part with the host (copydetect: its
  rule above with the part as the source, and its part-side similarity against the exact value).

    .venv/bin/python bench/eval_evasion.py [--variants 5] [--git REV | --tree DIR] [--label after]
        [--write-doc] [--out results.json]

`--git REV` runs the scanner of that commit (exported with `git archive`, the working tree untouched);
`--tree DIR` a checkout elsewhere; by default this working tree. `--write-doc` puts the tables in
docs/EVALUATION.md, section "Planted leaks, evasions and size ratios (issue 15)", under `--label`
(a re-run with the same label replaces its tables; another label adds its own beside them).
About a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from carriers import CARRIERS, FOUND_WORDS, TRICKS, covered_words, excerpt, found_words, trick_carrier  # noqa: E402
from common import PAN13, SPDX, read_text  # noqa: E402
from corpus import prose  # noqa: E402

SPDX_LICENCES = ("Apache-2.0", "GPL-3.0-only", "MPL-2.0", "EPL-2.0", "CDDL-1.0", "Artistic-2.0", "EUPL-1.2",
                 "LGPL-2.1-only")
RATIOS = (2, 5, 10, 20, 50, 100)
SHARES = (1.0, 0.6)
PART = 2000
ACCURACY = 0.1
MIN_CONTAINMENT = 0.3
TLSH_CUTOFF = 100
COPYDETECT_K = 25  # copydetect's defaults: noise threshold 25, guarantee threshold 25 (window 1)
COPYDETECT_DISPLAY = 0.33
SECTION = "## 7. Planted leaks, evasions and size ratios (issue 15)"
DOC = REPO / "docs" / "EVALUATION.md"


# --------------------------------------------------------------------------
# the scanner under test


class Scanner:
    """`python -m scanner` of one source tree, run in a scratch folder (so the tree on PYTHONPATH, not the
    current directory, provides the package)."""

    def __init__(self, tree: Path, workdir: Path):
        self.workdir = workdir
        shim = workdir / "pythonpath"
        shim.mkdir()
        (shim / "scanner").symlink_to(tree / "scanner")
        (shim / "scanner_plugins").symlink_to(tree / "plugins")
        self.env = dict(os.environ, PYTHONPATH=str(shim))
        self.env.pop("SCANNER_INDEX", None)

    def run(self, *args: str, ok: tuple[int, ...] = (0, 1), timeout: float = 600) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "scanner", *args], cwd=self.workdir, env=self.env,
                              text=True, capture_output=True, timeout=timeout)
        if proc.returncode not in ok:
            raise RuntimeError(f"scanner {' '.join(args[:3])} ...: exit {proc.returncode}\n{proc.stderr[-2000:]}")
        return proc

    def json(self, *args: str, ok: tuple[int, ...] = (0, 1)) -> dict:
        return json.loads(self.run(*args, "--json", "--quiet", ok=ok).stdout)


def export_commit(rev: str, into: Path) -> tuple[Path, str]:
    """The scanner and plugins folders of commit `rev`, written under `into` (git archive: no checkout)."""
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], check=True, text=True,
                            capture_output=True).stdout.strip()
    tar = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "scanner", "plugins"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    return into, f"commit {commit}"


def add_tree_options(parser: argparse.ArgumentParser) -> None:
    """--git REV or --tree DIR: which scanner a benchmark runs (`scanner_tree`)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--git", metavar="REV", help="run the scanner of this commit (git archive)")
    where.add_argument("--tree", type=Path, help="run the scanner of this source tree (default: this one)")


def scanner_tree(args: argparse.Namespace, scratch: Path) -> tuple[Path, str]:
    """The source tree `add_tree_options` chose (a commit is exported under `scratch`), and its name."""
    if args.git:
        return export_commit(args.git, scratch / "tree")
    if args.tree:
        return args.tree.resolve(), f"tree {args.tree}"
    return REPO, describe_tree()


def describe_tree() -> str:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], text=True,
                          capture_output=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "scanner", "plugins"], text=True,
                           capture_output=True).stdout.strip()
    return f"working tree at {head}" + (" with uncommitted changes in scanner/ or plugins/" if dirty else "")


# --------------------------------------------------------------------------
# protected texts, hosts


@dataclass(frozen=True)
class Protected:
    name: str
    text: str
    sha256: str


def protected_texts(folder: Path) -> list[Protected]:
    """Write the protected texts (UTF-8, LF line ends, so check's doc offsets index these very strings)."""
    texts: dict[str, str] = {}
    if PAN13.exists():
        for path in sorted((PAN13 / "src").glob("*.txt")):
            texts[f"pan13-{path.name}"] = read_text(path)
        for name in SPDX_LICENCES:
            path = SPDX / "test" / "simpleTestForGenerator" / f"{name}.txt"
            if path.exists():
                texts[f"spdx-{name}.txt"] = read_text(path)
    else:
        from corpus import documents

        print("../shared/corpora not found: generated protected texts instead of PAN-13 and SPDX", file=sys.stderr)
        for i, text in enumerate(documents(60, seed=77, low=3_000, high=12_000)):
            texts[f"generated-{i:03d}.txt"] = text
    for path in sorted((REPO / "sample_corpus" / "originals").glob("*.txt")):
        texts[f"sample-{path.name}"] = read_text(path)
    folder.mkdir()
    out = []
    for name, text in texts.items():
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        data = text.encode("utf-8")
        (folder / name).write_bytes(data)
        out.append(Protected(name, text, hashlib.sha256(data).hexdigest()))
    return out


def host_texts() -> list[str]:
    """Unrelated real text for the size-ratio hosts (PAN-13 sources; generated prose without corpora)."""
    if PAN13.exists():
        return [read_text(p).replace("\r\n", "\n") for p in sorted((PAN13 / "src").glob("*.txt"))]
    from corpus import documents

    return documents(120, seed=99, low=2_000, high=8_000)


# --------------------------------------------------------------------------
# peers


@dataclass
class Peers:
    available: dict[str, str] = field(default_factory=dict)  # name -> "" or why it is missing

    def __post_init__(self) -> None:
        for name, module in (("copydetect", "copydetect"), ("ssdeep", "ppdeep"), ("TLSH", "tlsh")):
            try:
                __import__(module)
                self.available[name] = ""
            except ImportError as exc:
                self.available[name] = f"not installed ({exc})"
        self._cache: dict[int, tuple[str, str, object]] = {}

    def _hashes(self, text: str) -> tuple[str, str, object]:
        key = hash(text)
        if key not in self._cache:
            self._cache[key] = (self._ssdeep(text), self._tlsh(text), self._copydetect(text))
        return self._cache[key]

    def _ssdeep(self, text: str) -> str:
        if self.available["ssdeep"]:
            return ""
        import ppdeep

        return ppdeep.hash(text)

    def _tlsh(self, text: str) -> str:
        if self.available["TLSH"]:
            return ""
        import tlsh

        return tlsh.hash(text.encode("utf-8"))

    def _copydetect(self, text: str) -> object:
        if self.available["copydetect"]:
            return None
        from copydetect import CodeFingerprint

        return CodeFingerprint("text.txt", COPYDETECT_K, 1, filter=False, fp=io.StringIO(text))

    def compare(self, source: str, other: str) -> dict[str, object]:
        """Each peer's verdict (True/False, None when not installed) on `source` being in `other`, and
        copydetect's source-side similarity."""
        s_hash, s_tlsh, s_fp = self._hashes(source)
        o_hash, o_tlsh, o_fp = self._hashes(other)
        out: dict[str, object] = {"copydetect": None, "ssdeep": None, "TLSH": None, "copydetect_similarity": None}
        if not self.available["ssdeep"]:
            import ppdeep

            out["ssdeep"] = ppdeep.compare(s_hash, o_hash) > 0
        if not self.available["TLSH"]:
            import tlsh

            valid = all(h and h != "TNULL" for h in (s_tlsh, o_tlsh))
            out["TLSH"] = bool(valid and tlsh.diff(s_tlsh, o_tlsh) <= TLSH_CUTOFF)
        if not self.available["copydetect"]:
            from copydetect import compare_files

            _, (sim_source, sim_other), (slices, _) = compare_files(s_fp, o_fp)
            words = covered_words(source, zip(slices[0].tolist(), slices[1].tolist())) if slices.size else 0
            out["copydetect"] = bool(words > FOUND_WORDS or max(sim_source, sim_other) >= COPYDETECT_DISPLAY)
            out["copydetect_similarity"] = round(float(sim_source), 4)
        return out


# --------------------------------------------------------------------------
# 1 and 2: planted leaks


@dataclass
class LeakCase:
    group: str  # "carrier", "trick" or "control" (the carrier without a leak: what counts as found is a false alarm)
    kind: str
    variant: int
    file: str
    source: str
    status: str = ""
    words: int = 0
    found: bool = False
    watched: bool | None = None  # `scanner watch --once` alerted with the leak's source (None: not run)
    peers: dict[str, object] = field(default_factory=dict)


def leak_cases(protected: list[Protected], folder: Path, variants: int) -> tuple[list[LeakCase], dict[str, bytes]]:
    eligible = [p for p in protected if len(p.text.split()) >= 400]
    folder.mkdir()
    cases, data = [], {}
    jobs = ([("carrier", name) for name in CARRIERS] + [("trick", name) for name in TRICKS]
            + [("control", name) for name in CARRIERS])
    for group, kind in jobs:
        for variant in range(variants):
            rng = random.Random(f"leak {group} {kind} {variant}")
            source = rng.choice(eligible)
            leak = excerpt(source.text, rng)
            if group == "control":  # the same carrier around 200 words the index does not hold
                leak = excerpt(prose(90_001 + variant, 400), rng)
            carrier = (trick_carrier(kind, leak, variant) if group == "trick" else CARRIERS[kind](leak, variant))
            if group == "control":
                carrier = replace(carrier, filename="control-" + carrier.filename)
            path = folder / carrier.filename
            path.write_bytes(carrier.data)
            rel = f"{folder.name}/{carrier.filename}"
            cases.append(LeakCase(group, kind, variant, rel, source.name))
            data[rel] = carrier.data
    return cases, data


def run_leaks(scanner: Scanner, peers: Peers, protected: list[Protected], variants: int) -> list[LeakCase]:
    by_name = {p.name: p for p in protected}
    cases, data = leak_cases(protected, scanner.workdir / "carriers", variants)
    results: dict[str, dict] = {}
    for start in range(0, len(cases), 60):
        batch = [c.file for c in cases[start : start + 60]]
        report = scanner.json("check", *batch, "--index", "protected.db", ok=(0, 1, 3))  # 3: a file without text
        for result in report["results"]:  # a container's members (`file!/member`) count for the file
            file = result["query"].split("!/")[0]
            earlier = results.get(file, {}).get("matches", [])
            if file not in results or results[file].get("error"):  # the status of a member with text
                results[file] = {**result, "matches": earlier + result["matches"]}
            else:
                results[file]["matches"] += result["matches"]
    alerts = watch_alerts(scanner, Path(cases[0].file).parent.name) if cases else {}
    for case in cases:
        source = by_name[case.source]
        result = results.get(case.file, {})
        case.status = result.get("status", "error") + (f": {result['error']}" if result.get("error") else "")
        matches = [m for m in result.get("matches", ()) if m["sha256"] == source.sha256]
        case.words = max((found_words(m, source.text) for m in matches), default=0)
        case.found = case.words > FOUND_WORDS
        case.watched = source.sha256 in alerts.get(case.file, set())
        case.peers = peers.compare(source.text, data[case.file].decode("utf-8", "replace"))
    return cases


def watch_alerts(scanner: Scanner, folder: str) -> dict[str, set[str]]:
    """`scanner watch FOLDER --once --jsonl` against the protected index: file -> the SHA-256s of the sources
    its alerts name (a leak inside a container alerts for the container, naming the member)."""
    done = scanner.run("watch", folder, "--index", "protected.db", "--once", "--jsonl")
    alerts: dict[str, set[str]] = defaultdict(set)
    for line in done.stdout.splitlines():
        alert = json.loads(line)
        path = os.path.relpath(alert["path"], scanner.workdir) if os.path.isabs(alert["path"]) else alert["path"]
        alerts[path].update(m["sha256"] for m in alert["matches"])
    return alerts


# --------------------------------------------------------------------------
# 3: size ratios


@dataclass
class RatioCase:
    ratio: int
    share: float
    variant: int
    exact: float = 0.0
    containment: float | None = None
    error: float | None = None
    found: bool = False
    accurate: bool = False
    cluster: bool = False
    peers: dict[str, object] = field(default_factory=dict)


def _cut(text: str, start: int, length: int) -> str:
    """About `length` characters of `text` from word boundaries near `start`."""
    begin = text.find(" ", start) + 1
    end = text.rfind(" ", begin, begin + length)
    return text[begin : end if end > begin else begin + length].strip()


def ratio_pair(hosts: list[str], ratio: int, share: float, variant: int) -> tuple[str, str]:
    rng = random.Random(f"ratio {ratio} {share} {variant}")
    order = list(range(len(hosts)))
    rng.shuffle(order)
    host, used = "", 0
    while len(host) < ratio * PART:
        host += hosts[order[used]].strip() + "\n\n"
        used += 1
    host = host[: host.rfind(" ", 0, ratio * PART)] + "\n"
    inside = int(PART * share)
    part = _cut(host, rng.randrange(0, len(host) - inside - 200), inside)
    if share < 1.0:
        elsewhere = hosts[order[used]]  # a text the host does not hold
        part += " " + _cut(elsewhere, rng.randrange(0, max(1, len(elsewhere) - PART)), PART - len(part) - 1)
    return part + "\n", host


def run_ratio(scanner: Scanner, peers: Peers, hosts: list[str], case: RatioCase) -> RatioCase:
    part, host = ratio_pair(hosts, case.ratio, case.share, case.variant)
    folder = scanner.workdir / f"ratio-{case.ratio}-{case.share}-{case.variant}"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "part.txt").write_text(part, encoding="utf-8")
    (folder / "docs" / "host.txt").write_text(host, encoding="utf-8")
    scan = scanner.json("scan", str(folder / "docs"), "--index", str(folder / "i.db"),
                        "--min-containment", str(MIN_CONTAINMENT))
    exact = scanner.json("compare", "--exact", str(folder / "docs" / "part.txt"), str(folder / "docs" / "host.txt"))
    case.exact = float(exact["exact"]["containment_a_in_b"])
    for pair in scan["containments"]:
        if Path(pair["contained"]).name == "part.txt" and Path(pair["container"]).name == "host.txt":
            case.containment = float(pair["containment"])
            case.error = pair.get("containment_error")
    case.cluster = any(len(c["members"]) > 1 for c in scan["clusters"])
    case.found = case.containment is not None
    case.accurate = case.found and abs(float(case.containment or 0) - case.exact) <= ACCURACY
    case.peers = peers.compare(part, host)
    return case


# --------------------------------------------------------------------------
# tables


def _rate(values: list[object]) -> str:
    known = [v for v in values if v is not None]
    return "n/a" if not known else f"{sum(bool(v) for v in known) / len(known):.2f}"


PEER_NAMES = ("copydetect", "ssdeep", "TLSH")


def leak_table(cases: list[LeakCase], group: str) -> str:
    head = "carrier" if group == "carrier" else "trick"
    lines = [f"| {head} | cases | scanner check | scanner watch | copydetect | ssdeep | TLSH |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    rows: dict[str, list[LeakCase]] = defaultdict(list)
    for case in cases:
        if case.group == group:
            rows[case.kind].append(case)
    everything = [c for c in cases if c.group == group]
    extra = [(f"**all {head}s**", everything)]
    if group == "carrier":
        extra.append(("*no leak (control): false alarms*",
                      [c for c in cases if c.group == "control"]))
    for kind, members in [*rows.items(), *extra]:
        cells = ([_rate([c.found for c in members]), _rate([c.watched for c in members])]
                 + [_rate([c.peers.get(p) for c in members]) for p in PEER_NAMES])
        lines.append(f"| {kind} | {len(members)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(cases: list[RatioCase]) -> str:
    lines = ["| part : host | from host | cases | exact (mean) | scanner found | within 0.1 | max abs. error | "
             "copydetect found | copydetect within 0.1 | ssdeep | TLSH |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows: dict[tuple[int, float], list[RatioCase]] = defaultdict(list)
    for case in cases:
        rows[(case.ratio, case.share)].append(case)
    for (ratio, share), members in rows.items():
        errors = [abs(c.containment - c.exact) for c in members if c.containment is not None]
        sims = [c.peers.get("copydetect_similarity") for c in members]
        cd_close = [None if s is None else abs(float(s) - c.exact) <= ACCURACY for s, c in zip(sims, members)]
        cells = [f"1:{ratio}", f"{share:.0%}", str(len(members)), f"{sum(c.exact for c in members) / len(members):.3f}",
                 _rate([c.found for c in members]), _rate([c.accurate for c in members]),
                 f"{max(errors):.3f}" if errors else "-", _rate([c.peers.get("copydetect") for c in members]),
                 _rate(cd_close), _rate([c.peers.get("ssdeep") for c in members]),
                 _rate([c.peers.get("TLSH") for c in members])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def misses(leaks: list[LeakCase], ratios: list[RatioCase]) -> str:
    by_kind: dict[str, list[LeakCase]] = defaultdict(list)
    for case in leaks:
        if case.group != "control" and not case.found:
            by_kind[f"{case.group} {case.kind}"].append(case)
    lines = []
    for kind, members in by_kind.items():
        statuses = sorted({c.status for c in members})
        words = ", ".join(str(c.words) for c in members)
        lines.append(f"- {kind}: {len(members)} missed (words covered: {words}; status {'; '.join(statuses)})")
    for case in ratios:
        if not case.accurate:
            got = "not listed" if case.containment is None else f"{case.containment:.3f}"
            lines.append(f"- ratio 1:{case.ratio}, {case.share:.0%} from host, variant {case.variant}: exact "
                         f"{case.exact:.3f}, scan {got}" + (" (reported as a cluster)" if case.cluster else ""))
    return "\n".join(lines) or "- none"


INTRO = """\
`bench/eval_evasion.py` (carriers and tricks built by `tests/carriers.py`; the fast subset that
passes runs in `tests/test_evasion_carriers.py`). A leak is a 200-word excerpt of a protected text
(PAN-13 source documents, eight SPDX licence texts, `sample_corpus/originals`) planted in unrelated
generated prose inside a carrier file; each trick changes the leak's characters and plants it in a
plain `.txt`. The scanner finds a leak when `scanner check FILE --index protected.db --json` lists the
leak's source with passages covering more than 50 of its words (counted on the source side). The
peers see each carrier's raw bytes decoded as UTF-8 (they have no extractors) and only the leak's own
source: copydetect (k = 25 characters, window 1: its defaults, no tokenizer filtering) finds it when
the shared fingerprints cover more than 50 words of the source or either similarity is at least its
default display threshold 0.33; ssdeep (ppdeep) when `compare` > 0; TLSH (py-tlsh) when `diff` <= 100,
a common cut-off. Size ratios: a 2,000-character part cut from a host 2x-100x its size (100 % of it
from the host, or 60 % from the host and 40 % from another text), `scanner scan` of the folder with
`--min-containment 0.3`; found when the part is listed as contained in the host, accurate when
within 0.1 of `scanner compare --exact`. The control row builds every carrier around 200 words that
no protected text holds: what any tool "finds" there is a false alarm. Targets (issue 15): 100 % of
planted leaks found in every carrier, every trick at least 95 %, every ratio up to 1:100 found
within 0.1 of exact. Each run below names the code it measured; re-run with
`.venv/bin/python bench/eval_evasion.py --label after --write-doc` (about a minute on 2 cores).
"""


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "n/a"


def write_doc(label: str, body: str) -> None:
    start, end = f"<!-- eval_evasion:{label}:start -->", f"<!-- eval_evasion:{label}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}\n"
    text = DOC.read_text(encoding="utf-8")
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1].lstrip("\n")
    elif SECTION in text:
        head, tail = text.split(SECTION, 1)
        nxt = re.search(r"^## ", tail, flags=re.MULTILINE)
        cut = nxt.start() if nxt else len(tail)
        text = head + SECTION + tail[:cut].rstrip("\n") + "\n\n" + block + ("\n" + tail[cut:] if nxt else "")
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{INTRO}\n{block}"
    DOC.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=5, help="cases per carrier, trick and ratio/share")
    add_tree_options(parser)
    parser.add_argument("--label", default="after", help="the run's name in docs/EVALUATION.md")
    parser.add_argument("--write-doc", action="store_true", help="write the tables into docs/EVALUATION.md")
    parser.add_argument("--out", type=Path, help="every case as JSON")
    parser.add_argument("--note", default="", help="a sentence printed (and written) under the run's heading")
    parser.add_argument("--no-ratios", action="store_true")
    args = parser.parse_args()
    shown, skip = [], False
    for arg in sys.argv[1:]:  # the command as the doc shows it: without where the output went
        if skip or arg == "--write-doc" or arg.startswith(("--note=", "--out=")):
            skip = False
            continue
        skip = arg in ("--note", "--out")
        if not skip:
            shown.append(arg)
    command = "`" + " ".join([".venv/bin/python bench/eval_evasion.py", *shown]) + "`"
    began = time.perf_counter()
    peers = Peers()
    with tempfile.TemporaryDirectory(prefix="eval_evasion-") as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        tree, code = scanner_tree(args, Path(tmp))
        scanner = Scanner(tree, workdir)
        protected = protected_texts(workdir / "protected")
        scanner.json("scan", "protected", "--index", "protected.db")
        leaks = run_leaks(scanner, peers, protected, args.variants)
        ratios: list[RatioCase] = []
        if not args.no_ratios:
            hosts = host_texts()
            todo = [RatioCase(r, s, v) for r in RATIOS for s in SHARES for v in range(args.variants)]
            with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
                ratios = list(pool.map(lambda c: run_ratio(scanner, peers, hosts, c), todo))
    missing = ", ".join(f"{name} {why}" for name, why in peers.available.items() if why)
    today = datetime.date.today().isoformat()
    body = [f"### {args.label}: {code}, {today}", "", command, ""] + ([args.note, ""] if args.note else [])
    if missing:
        body += [f"Peers not run: {missing}.", ""]
    versions = ", ".join(f"{dist} {_version(dist)}" for dist in ("copydetect", "ppdeep", "py-tlsh"))
    body += [f"Peers: {versions}.", ""]
    body += [f"**Carriers** ({len(CARRIERS)} kinds, {args.variants} cases each; found rate):", "",
             leak_table(leaks, "carrier"), "",
             f"**Evasion tricks** ({len(TRICKS)} tricks, {args.variants} cases each, in a .txt carrier):", "",
             leak_table(leaks, "trick"), ""]
    if ratios:
        body += ["**Size ratios** (2,000-character part, `scan --min-containment 0.3`):", "", ratio_table(ratios), ""]
    body += ["Missed by the scanner:", "", misses(leaks, ratios), "",
             f"({len(leaks)} leak cases and {len(ratios)} ratio cases in {time.perf_counter() - began:.0f} s.)"]
    text = "\n".join(body) + "\n"
    print(text)
    if args.out:
        args.out.write_text(json.dumps({"code": code, "date": today, "leaks": [asdict(c) for c in leaks],
                                        "ratios": [asdict(c) for c in ratios]}, indent=1), encoding="utf-8")
    if args.write_doc:
        write_doc(args.label, text)
        print(f"written to {DOC.relative_to(REPO)} under '{args.label}'", file=sys.stderr)


if __name__ == "__main__":
    main()
