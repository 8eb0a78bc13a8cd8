"""`scanner compare A B`: resemblance, containment both ways, edit distance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from scanner import __version__
from scanner.core.config import Params
from scanner.engine.sketch import ContainmentEstimate
from scanner.faces.commands.options import (
    emit_json,
    json_option,
    ocr_option,
    params_from,
    password_options,
    quiet_option,
    similarity_options,
)
from scanner.sources.crawl import printable_path

if TYPE_CHECKING:
    from scanner.sources.limits import ExtractLimits

_STRIP = " ▁▂▃▄▅▆▇█"


def _load_text(path: Path, limits: "ExtractLimits") -> tuple[str, str]:
    """(text, sha256) of a file through the extraction plugins (a locked one opened with the passwords given)."""
    from scanner.sources.extract import extract_text
    from scanner.sources.plugins import make_plugin_manager

    record, extracted = extract_text(path, make_plugin_manager(), limits)
    return extracted.text, record.sha256


def _evidence(found: ContainmentEstimate | None, why_exact: str = "too few samples to estimate") -> str:
    """What a containment figure rests on: its 95 % error and sample, or that it is exact."""
    if found is None:
        return ""
    if found.method == "exact":
        return f"  exact ({why_exact})"
    return f"  ±{found.error:.3f} ({found.samples} {found.method} samples)"


def _strip(profile) -> str:
    return "".join(_STRIP[min(int(round(v * (len(_STRIP) - 1))), len(_STRIP) - 1)] for v in profile)


@click.command(name="compare")
@click.argument("a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--exact", is_flag=True,
              help="Add exact values from full shingle sets and the true Levenshtein distance.")
@click.option("--base", "base_files", multiple=True, type=click.Path(exists=True, path_type=Path), metavar="FILE",
              help="Base text both may hold by design (a template; an archive or a folder gives each file), left "
                   "out of resemblance and containment (repeatable).")
@ocr_option
@password_options
@similarity_options
@json_option
@quiet_option
def command(a: Path, b: Path, exact: bool, base_files: tuple[Path, ...], ocr: bool, ocr_languages: str,
            passwords: tuple[str, ...], shingle_size: int | None, threshold: float | None,
            min_containment: float | None, as_json: bool, quiet: bool) -> None:
    """Every measure for one pair of files A and B."""
    from scanner.engine.base import Base
    from scanner.engine.compare import compare_texts
    from scanner.sources.limits import ExtractLimits

    params = params_from(Params(), shingle_size, threshold, min_containment)
    limits = ExtractLimits(ocr=ocr, ocr_languages=ocr_languages, passwords=passwords)
    text_a, sha_a = _load_text(a, limits)
    text_b, sha_b = _load_text(b, limits)
    base_texts = _base_texts(base_files)
    base = Base.of([text for _, text in base_texts], params)
    report = compare_texts(text_a, text_b, params, exact=exact, excluded=base.fingerprints if base else None)
    est = report.estimate
    if as_json:
        document = {
            "a": printable_path(str(a)),
            "b": printable_path(str(b)),
            "sha256_a": sha_a,
            "sha256_b": sha_b,
            "resemblance": round(est.resemblance, 6),
            "containment_a_in_b": round(est.containment_a_in_b, 6),
            "containment_b_in_a": round(est.containment_b_in_a, 6),
            "resemblance_evidence": est.resemblance_of.to_json() if est.resemblance_of else None,
            "containment_evidence": {"a_in_b": est.containment_a.to_json() if est.containment_a else None,
                                     "b_in_a": est.containment_b.to_json() if est.containment_b else None},
            "edit_distance_estimate": est.edit_distance_estimate,
            "a_embedded_in_b": report.a_embedded_in_b,
            "b_embedded_in_a": report.b_embedded_in_a,
            "difference_profile": [round(float(v), 3) for v in report.difference_profile],
            "samples": est.samples,
            "base": [{"label": label, "words": len(text.split())} for label, text in base_texts],
            "params": params.to_dict(),
            "version": __version__,
        }
        if report.exact is not None:
            document["exact"] = {
                "resemblance": round(report.exact.resemblance, 6),
                "containment_a_in_b": round(report.exact.containment_a_in_b, 6),
                "containment_b_in_a": round(report.exact.containment_b_in_a, 6),
                "edit_distance": report.exact.edit_distance,
            }
        emit_json(document)
        return
    lines = [
        f"A  {printable_path(str(a))}  ({report.tokens_a} tokens, sha256 {sha_a[:16]}…)",
        f"B  {printable_path(str(b))}  ({report.tokens_b} tokens, sha256 {sha_b[:16]}…)",
        f"shingle size w={params.shingle_size}, option {params.shingle_option}, s={params.sample_size}, "
        f"Coates c={params.coates_c} n={params.coates_n}",
        "",
        f"{'measure':<28}{'estimate':>12}" + (f"{'exact':>12}" if report.exact else ""),
    ]

    def row(name: str, value: float | int, exact_value: float | int | None) -> str:
        fmt = (lambda v: f"{v:12.3f}") if isinstance(value, float) else (lambda v: f"{v:12d}")
        return f"{name:<28}{fmt(value)}" + (fmt(exact_value) if exact_value is not None else "")

    ex = report.exact
    lines.append(row("resemblance", est.resemblance, ex.resemblance if ex else None)
                 + _evidence(est.resemblance_of, "the sketches hold the whole sets"))
    lines.append(row("containment A in B", est.containment_a_in_b, ex.containment_a_in_b if ex else None)
                 + _evidence(est.containment_a))
    lines.append(row("containment B in A", est.containment_b_in_a, ex.containment_b_in_a if ex else None)
                 + _evidence(est.containment_b))
    lines.append(row("edit distance", est.edit_distance_estimate, ex.edit_distance if ex else None))
    if report.a_embedded_in_b:
        lines.append("signatures: A is embedded in B")
    if report.b_embedded_in_a:
        lines.append("signatures: B is embedded in A")
    lines.append(f"differences along A: |{_strip(report.difference_profile)}|")
    if base_texts:
        lines.append(f"base text left out of resemblance and containment: {len(base_texts)} text(s), "
                     f"{sum(len(text.split()) for _, text in base_texts)} words (the edit distance is the whole "
                     "texts')")
    click.echo("\n".join(lines))


def _base_texts(paths: tuple[Path, ...]) -> list[tuple[str, str]]:
    """(name, text) of every base file's parts, as `scanner base` reads them (a folder: each of its files)."""
    if not paths:
        return []
    from scanner.services.base import base_file_texts
    from scanner.sources.limits import ExtractLimits
    from scanner.sources.plugins import make_plugin_manager

    return base_file_texts([str(path) for path in paths], make_plugin_manager(), ExtractLimits())[0]
