"""`scanner scan PATH...`: index files incrementally, then report clusters and containments."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from typing import Any

import click

from scanner import __version__
from scanner.core.config import Params
from scanner.core.errors import IndexStoreError
from scanner.faces.commands.options import (
    emit_json,
    index_option,
    json_option,
    ocr_option,
    params_from,
    passage_options,
    password_options,
    quiet_option,
    semantic_model,
    semantic_option,
    similarity_options,
)

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
          "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}


def parse_size(text: str | None) -> int | None:
    """'10MB' -> 10_000_000, '2GiB' -> 2 * 2**30; None stays None."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise click.BadParameter(f"{text!r} is not a size such as 500KB, 10MB or 2GiB")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _size_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    return parse_size(value)


def base_params(index_path: str, rebuild: bool) -> Params:
    """The stored parameters of an existing index (the defaults for a new or rebuilt one)."""
    from pathlib import Path

    from scanner.index import Index

    if rebuild or not Path(index_path).is_file():
        return Params()
    try:
        with Index.open(index_path, readonly=True, accept_stale=True) as index:
            return index.params
    except IndexStoreError:
        return Params()  # not initialised yet (or older schema): the writer will migrate it


@click.command(name="scan")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@index_option
@json_option
@quiet_option
@click.option("--jobs", "-j", type=click.IntRange(0), default=None,
              help="Worker processes (default: number of cores; 0 extracts in this process).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable).")
@click.option("--max-size", callback=_size_option, default=None, metavar="SIZE",
              help="Skip files larger than SIZE (e.g. 10MB).")
@click.option("--no-text", is_flag=True, help="Keep sketches only, not the extracted text (privacy).")
@click.option("--rebuild", is_flag=True, help="Wipe the index and scan again (e.g. with other parameters).")
@click.option("--file-timeout", type=click.FloatRange(0.1), default=120.0, show_default=True,
              help="Seconds one file may take before its worker is killed.")
@click.option("--file-memory", callback=_size_option, default="2GiB", show_default=True, metavar="SIZE",
              help="Address space a worker may add while extracting one file.")
@click.option("--base", "base_files", multiple=True, type=click.Path(exists=True), metavar="FILE",
              help="Text every document may hold by design (an assignment's template, starter code; an archive "
                   "or a folder gives each file), kept in the index and left out of every finding (repeatable; "
                   "`scanner base` lists and removes them).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Extract and sketch on Dask workers: 'local' (a LocalCluster of --jobs workers) "
                   "or a scheduler address such as tcp://host:8786.")
@ocr_option
@password_options
@semantic_option
@similarity_options
@passage_options
def command(paths: tuple[str, ...], index_path: str, as_json: bool, quiet: bool, jobs: int | None,
            exclude: tuple[str, ...], max_size: int | None, no_text: bool, rebuild: bool, file_timeout: float,
            file_memory: int | None, base_files: tuple[str, ...], dask_address: str | None, ocr: bool,
            ocr_languages: str,
            passwords: tuple[str, ...], semantic: bool,
            shingle_size: int | None,
            threshold: float | None, min_containment: float | None, min_words: int | None, min_share: float) -> None:
    """Crawl, extract, sketch and index PATH...; print clusters, containment pairs, the passage pairs
    (MOSS) and each document's share found elsewhere (Turnitin)."""
    from scanner.index import Index
    from scanner.services.findings import stored_head, stored_or_found
    from scanner.services.passages import align_index, failure_issues
    from scanner.services.scan import run_scan, shortage_explained
    from scanner.sources.limits import ExtractLimits

    # OCR stops at three quarters of the file's time budget: a long scan then gives its first pages (the file
    # is `partial`, saying which pages it left) instead of being killed with no text at all
    limits = ExtractLimits(ocr=ocr, ocr_languages=ocr_languages, ocr_seconds=0.75 * file_timeout, passwords=passwords)
    params = params_from(base_params(index_path, rebuild), shingle_size, threshold, min_containment, min_words)
    show_progress = not quiet and sys.stderr.isatty()
    with contextlib.ExitStack() as cleanup:
        client = None
        if dask_address is not None:
            from scanner.services.scan.dask import connect

            client, close_client = connect(dask_address, jobs)  # one cluster: the scan, then the all-pairs job
            cleanup.callback(close_client)
        # an index of an earlier algorithm version is re-sketched from its stored texts by run_scan
        index = cleanup.enter_context(Index.open(index_path, readonly=False, params=params, rebuild=rebuild,
                                                 accept_stale=True))
        note = index.upgrade_note()
        if note and not quiet:
            print(f"scanner: {note}", file=sys.stderr)
        pm = None
        if jobs == 0 or base_files:  # extraction in this process (the workers make their own)
            from scanner.sources.plugins import make_plugin_manager

            pm = make_plugin_manager()
        if base_files:  # read first: a base file without text stops the scan before anything is written
            from scanner.services.base import add_base_files

            base_read = add_base_files(index, base_files, pm, limits)
            pm = pm if jobs == 0 else None
            if not quiet:
                for path in base_read.without_text:
                    print(f"scanner: base text: no text, passed over: {path}", file=sys.stderr)
        if show_progress:
            from scanner.faces.commands._progress import ScanBar

            with ScanBar() as bar:
                result = run_scan(paths, index, pm, params, jobs=jobs, exclude=exclude, max_size=max_size,
                                  store_text=not no_text, on_progress=bar.update, per_file_timeout=file_timeout,
                                  per_file_memory=file_memory, dask=client, limits=limits)
        else:
            result = run_scan(paths, index, pm, params, jobs=jobs, exclude=exclude, max_size=max_size,
                              store_text=not no_text, per_file_timeout=file_timeout, per_file_memory=file_memory,
                              dask=client, limits=limits)
        if not quiet:  # the way to open locked files is a reader's hint: --json has each with its reason
            for line in older_readers_notes(result) + ([] if as_json else locked_note(result, passwords)):
                print(f"scanner: {line}", file=sys.stderr)
        with shortage_explained(index, lambda: "every file committed, passages or findings not all stored"):
            model = semantic_model(semantic, quiet, lazy=True)
            if show_progress:
                from scanner.faces.commands._progress import StepBar

                with StepBar() as step_bar:
                    aligned = align_index(index, params, jobs=jobs, model=model, on_progress=step_bar.update)
            else:
                aligned = align_index(index, params, jobs=jobs, model=model)
            # the table shows the first rows of each list: the stored head holds them with the lists' lengths
            # (the findings of 124,701 passage pairs took 2 s to read back); `--json` has every row
            read = stored_head if not as_json and min_share <= 0 else stored_or_found
            findings = read(index, params, dask=client).at_least(min_share)
        if aligned.failures:  # reported as files' errors are, and tried again at the next scan
            result = dataclasses.replace(result, errors=result.errors + failure_issues(index, aligned.failures))
        if aligned.meaning_pairs < 0 and not quiet:
            print("scanner: no partners by meaning looked for in this scan (too many new documents to compare "
                  "with the index); `scanner check` still searches by meaning", file=sys.stderr)
    if as_json:
        emit_json(scan_json(result, findings, params, index_path, aligned))
        return
    from scanner.faces.commands._tables import print_scan

    print_scan(result, findings, params, index_path, aligned)


def locked_note(result: Any, passwords: tuple[str, ...]) -> list[str]:
    """The way to the encrypted files a scan without passwords could not read (each is listed with its
    reason; the option that opens them is said once)."""
    locked = sum(issue.status == "encrypted" for issue in result.errors)
    if not locked or passwords:
        return []
    return [f"{locked} encrypted file{'s' if locked != 1 else ''} not read: `--password TEXT` or `--passwords-file "
            f"FILE` tries the passwords you know on them (PDF, Office, ZIP, 7z), and the next scan reads them again"]


def older_readers_notes(result: Any) -> list[str]:
    """A line for each thing today's readers find that files of the index, read by older ones, may lack."""
    return [f"{count} file{'s' if count != 1 else ''} of this index {'were' if count != 1 else 'was'} read before "
            f"the readers learnt to find {change.what} (readers version {change.version}), and keep the text read "
            "then; `scanner scan --rebuild` reads every file again" for change, count in result.older_readers]


def scan_json(result: Any, findings: Any, params: Params, index_path: str, aligned: Any = None) -> dict[str, Any]:
    """The README's stable fields first (docs/ARCHITECTURE.md, "CLI contract"), then extras."""
    from scanner.services.findings import findings_json

    return {
        "files_seen": result.files_seen,
        "files_indexed": result.files_indexed,
        "files_unchanged": result.files_unchanged,
        "errors": [{"path": e.path, "error": e.message} for e in result.errors],
        "skipped": [{"path": s.path, "reason": s.message} for s in result.skipped],
        **findings_json(findings),
        "passage_step": None if aligned is None else {
            "documents": aligned.documents, "candidate_pairs": aligned.candidates, "pairs": aligned.pairs,
            "without_text": aligned.without_text, "embedded": aligned.embedded,
            "meaning_pairs": aligned.meaning_pairs, "resumed": aligned.resumed, "seconds": round(aligned.seconds, 3)},
        "files_linked": result.files_linked,
        "files_reread": result.files_reread,
        "files_in_containers": result.members,
        "files_vanished": result.files_vanished,
        "too_short": list(result.too_short),
        "partial": [{"path": p.path, "reason": p.message} for p in result.partial],
        "resketched": ({"documents": result.resketch.documents, "forgotten": result.resketch.forgotten}
                       if result.resketch else None),
        "read_by_older_readers": [{"readers_version": change.version, "finds": change.what, "files": count}
                                  for change, count in result.older_readers],
        "seconds": round(result.seconds, 3),
        "index": index_path,
        "run_id": result.run_id,
        "params": params.to_dict(),
        "version": __version__,
    }


__all__ = ["command", "locked_note", "older_readers_notes", "parse_size", "scan_json"]
