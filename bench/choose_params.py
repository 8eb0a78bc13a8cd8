"""Measure the shingle size w and sample size s that the defaults use.

Run:  .venv/bin/python bench/choose_params.py

1. Clough-Stevenson: containment of each of the 95 answers in its task's
   source, exact and estimated from the sketches (L_i), per w. AUC of
   plagiarised (cut/light/heavy) vs non, and the category means, which must
   order cut > light > heavy > non.
2. licensee fixtures: resemblance of each labelled LICENSE file with its
   choosealicense reference (positives: matcher exact/dice) and of the
   "other" (modified-license) fixtures with the reference they derive from.
3. Sample size s: mean |MIN_s estimate - exact resemblance| over the Clough
   answer/source pairs and the licensee pairs.
The Coates c/n figures come from bench/coates_experiments.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from common import LICENSEE, clough_pairs, read_text, strip_front_matter

from scanner.core.config import Params
from scanner.engine.sketch import build_sketch, compare_sketches, exact_containment, exact_resemblance, shingle_text

CATEGORIES = ("cut", "light", "heavy", "non")
# the reference each "other" fixture was derived from (named in the fixture's folder)
DERIVED_FROM = {"fcpl-modified-mpl": "mpl-2.0", "pixar-modified-apache": "apache-2.0",
                "wrk-modified-apache": "apache-2.0", "bsd-plus-patents": "bsd-3-clause"}


def auc(pos: list[float], neg: list[float]) -> float:
    """P(score of a random positive > a random negative), ties count half."""
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def _read_fixtures_yml(text: str) -> dict[str, dict[str, str]]:
    """The flat two-level mapping of fixtures.yml (no YAML library in the venv)."""
    out: dict[str, dict[str, str]] = {}
    case = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or line.startswith("---"):
            continue
        if not line.startswith(" ") and line.rstrip().endswith(":"):
            case = line.rstrip()[:-1].strip("'\"")
            out[case] = {}
        elif case and ":" in line:
            key, _, value = line.strip().partition(":")
            out[case][key.strip()] = value.strip().strip("'\"") or None
    return out


def licensee_pairs() -> list[tuple[str, str, str, str]]:
    """(case, label 'same'/'other', fixture text, reference text)."""
    fixtures = _read_fixtures_yml((LICENSEE / "spec" / "fixtures" / "fixtures.yml").read_text())
    refs = LICENSEE / "vendor" / "choosealicense.com" / "_licenses"
    out = []
    for case, info in fixtures.items():
        key, matcher = (info or {}).get("key"), (info or {}).get("matcher")
        folder = LICENSEE / "spec" / "fixtures" / case
        files = [p for p in folder.rglob("*") if p.is_file() and re.match(r"(?i)(license|copying|unlicense)", p.name)]
        if not files:
            continue
        if key and key != "other" and matcher in ("exact", "dice") and (refs / f"{key}.txt").exists():
            out.append((case, "same", read_text(files[0]), strip_front_matter(read_text(refs / f"{key}.txt"))))
        elif key == "other" and case in DERIVED_FROM:
            reference = strip_front_matter(read_text(refs / f"{DERIVED_FROM[case]}.txt"))
            out.append((case, "other", read_text(files[0]), reference))
    return out


def main() -> None:
    answers = clough_pairs()
    try:
        licenses = licensee_pairs()
    except OSError:
        licenses = []
    print("### Clough-Stevenson: containment of answer in source (95 answers)\n")
    print("| w | AUC exact | AUC sketch | mean cut | light | heavy | non | ordered | licensee same (mean r) "
          "| licensee other (mean r) | min same - max other |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for w in range(1, 9):
        params = Params(shingle_size=w)
        exact: dict[str, list[float]] = {c: [] for c in CATEGORIES}
        est: dict[str, list[float]] = {c: [] for c in CATEGORIES}
        for _, cat, answer, source in answers:
            sa, ss = shingle_text(answer, params).distinct, shingle_text(source, params).distinct
            exact[cat].append(exact_containment(sa, ss))
            pair = compare_sketches(build_sketch(answer, params), build_sketch(source, params), params.sample_size)
            est[cat].append(pair.containment_a_in_b)
        plag = lambda d: d["cut"] + d["light"] + d["heavy"]  # noqa: E731
        means = [float(np.mean(exact[c])) for c in CATEGORIES]
        ordered = all(a > b for a, b in zip(means, means[1:]))
        same = [exact_resemblance(shingle_text(f, params).distinct, shingle_text(r, params).distinct)
                for _, label, f, r in licenses if label == "same"]
        other = [exact_resemblance(shingle_text(f, params).distinct, shingle_text(r, params).distinct)
                 for _, label, f, r in licenses if label == "other"]
        lic = (f"{np.mean(same):.3f} | {np.mean(other):.3f} | {min(same) - max(other):+.3f}" if same and other
               else "- | - | -")
        print(f"| {w} | {auc(plag(exact), exact['non']):.4f} | {auc(plag(est), est['non']):.4f} | "
              + " | ".join(f"{m:.3f}" for m in means) + f" | {'yes' if ordered else 'no'} | {lic} |")
    print(f"\n({len(licenses)} licensee pairs: {sum(label == 'same' for _, label, _, _ in licenses)} same, "
          f"{sum(label == 'other' for _, label, _, _ in licenses)} other)")

    print("\n### Sample size s: mean |MIN_s - exact resemblance| (w = default)\n")
    print("| s | Clough answer/source | licensee pairs | sketch bytes (MIN_s part) |")
    print("| ---: | ---: | ---: | ---: |")
    w = Params().shingle_size
    pairs = [(a, s) for _, _, a, s in answers] + [(f, r) for _, _, f, r in licenses]
    for s in (16, 32, 64, 128, 256):
        params = Params(shingle_size=w, sample_size=s)
        errs = []
        for a, b in pairs:
            sa, sb = shingle_text(a, params).distinct, shingle_text(b, params).distinct
            pair = compare_sketches(build_sketch(a, params), build_sketch(b, params), s)
            errs.append(abs(pair.resemblance - exact_resemblance(sa, sb)))
        n_clough = len(answers)
        lic_err = f"{np.mean(errs[n_clough:]):.4f}" if len(errs) > n_clough else "-"
        print(f"| {s} | {np.mean(errs[:n_clough]):.4f} | {lic_err} | {8 * s} |")


if __name__ == "__main__":
    main()
