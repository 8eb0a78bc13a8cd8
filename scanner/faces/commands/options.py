"""Options shared by several sub-commands (docs/ARCHITECTURE.md, "CLI contract")."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from scanner.core.config import Params
from scanner.faces.json_lines import json_document_chunks

if TYPE_CHECKING:
    from scanner.index import Index


def index_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--index", "index_path", envvar="SCANNER_INDEX", default="scanner.db", show_default=True,
        type=click.Path(dir_okay=False), help="SQLite index (env SCANNER_INDEX).",
    )(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--json, passed as `as_json`. A command that fails still prints its one JSON document then,
    `{"error": line, "exit_code": n}`, so a script reading stdout learns why (the line goes to stderr too)."""

    @functools.wraps(func)
    def with_json_errors(*args: Any, as_json: bool, **kwargs: Any) -> Any:
        try:
            return func(*args, as_json=as_json, **kwargs)
        except Exception as exc:
            if not as_json:
                raise
            from scanner.faces.cli import as_scanner_error, exit_code_for

            error = as_scanner_error(exc)
            if error is None:
                raise
            emit_json({"error": str(error), "exit_code": int(exit_code_for(error))})
            if error is exc:
                raise
            raise error from exc

    return click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")(with_json_errors)


def quiet_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--quiet", "-q", is_flag=True, help="No messages on stderr.")(func)


def tesseract_on_path() -> bool:
    """Whether the `tesseract` command is on the PATH: a look-up, not `tesseract --version` (the OCR
    plugin probes that when it first reads an image; starting it here cost every scan 0.1 s)."""
    import shutil

    return shutil.which("tesseract") is not None


TESSERACT_MISSING = ("scanner: Tesseract not found: images and scanned pages get no text "
                     "(apt install tesseract-ocr)")


OCR_LANGUAGES = "eng"


def ocr_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--ocr/--no-ocr and --ocr-languages, passed to the command as `ocr: bool` (True unless --no-ocr) and
    `ocr_languages` (Tesseract's codes joined by "+").

    OCR is on by default; when Tesseract is missing (and --no-ocr was not given) one notice goes to stderr, not
    one per file (unless --quiet), and each image and scanned page is recorded with the reason "Tesseract is not
    installed", which is truer than "OCR is off". Checked after all options are parsed, so --quiet is known.
    Languages other than English are checked against Tesseract's before any file is read: a scan of Russian
    letters read with English data alone gives words that match nothing, so a language it lacks is an error.
    """

    @functools.wraps(func)
    def with_ocr(*args: Any, ocr: bool | None, ocr_languages: str, **kwargs: Any) -> Any:
        if ocr is not False and not tesseract_on_path() and not kwargs.get("quiet"):
            click.echo(TESSERACT_MISSING, err=True)
        if ocr_languages != OCR_LANGUAGES:  # English is checked with the first picture, not at every start
            from scanner_plugins.ocr import languages_problem

            why = languages_problem(ocr_languages) if ocr is not False else None
            if why is not None:
                raise click.BadParameter(why, param_hint="--ocr-languages")
        return func(*args, ocr=ocr is not False, ocr_languages=ocr_languages, **kwargs)

    with_ocr = click.option("--ocr-languages", default=OCR_LANGUAGES, show_default=True, metavar="LANGS",
                            help="The languages Tesseract reads pictures in, its codes joined by '+' (eng+deu+rus); "
                                 "each needs its data installed (apt install tesseract-ocr-deu).")(with_ocr)
    return click.option("--ocr/--no-ocr", "ocr", default=None,
                        help="Read text from images and scanned PDF pages with Tesseract [default: on; "
                             "without Tesseract installed, one notice and no OCR].")(with_ocr)


def password_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--password TEXT (repeatable) and --passwords-file FILE (one a line), passed as `passwords`, in order and
    without repeats: tried on each encrypted PDF, Office document, ZIP and 7z member (`ExtractLimits.passwords`).
    They are never stored in the index nor printed; a file one opens says it was decrypted."""

    @functools.wraps(func)
    def with_passwords(*args: Any, password: tuple[str, ...], passwords_file: str | None, **kwargs: Any) -> Any:
        given = list(password)
        if passwords_file is not None:
            try:
                with open(passwords_file, encoding="utf-8", errors="surrogateescape") as lines:
                    given += [line.rstrip("\r\n") for line in lines]
            except OSError as exc:
                raise click.UsageError(f"cannot read --passwords-file {passwords_file}: {exc.strerror}") from exc
        return func(*args, passwords=tuple(dict.fromkeys(p for p in given if p)), **kwargs)

    with_passwords = click.option(
        "--passwords-file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
        help="Passwords to try on encrypted files, one a line.")(with_passwords)
    return click.option(
        "--password", multiple=True, metavar="TEXT",
        help="A password to try on encrypted PDFs, DOCX/XLSX/PPTX files and ZIP and 7z members (repeatable; "
             "never stored nor printed; a file it opens says it was decrypted).")(with_passwords)


def semantic_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--semantic/--no-semantic, passed as `semantic: bool` (True unless --no-semantic, or the model is not
    installed: then one notice goes to stderr, unless --quiet, and the command goes on without the pass).
    Commands load the model (`semantic_model`) only where they use it."""

    @functools.wraps(func)
    def with_semantic(*args: Any, semantic: bool, **kwargs: Any) -> Any:
        if semantic:
            from scanner.sources.models import NOT_INSTALLED, model_folder

            if model_folder() is None:
                if not kwargs.get("quiet"):
                    click.echo(f"scanner: semantic pass off: {NOT_INSTALLED}", err=True)
                semantic = False
        return func(*args, semantic=semantic, **kwargs)

    option = click.option("--semantic/--no-semantic", "semantic", default=True,
                          help="Also find passages whose sentences mean the same in other words (an offline "
                               "sentence model; marked \"semantic\", never shown as copies), and look for "
                               "sources by meaning as well as by shared phrases [default: on].")
    return option(with_semantic)


def semantic_model(enabled: bool, quiet: bool = False, *, lazy: bool = False) -> Any:
    """The sentence model when `enabled`, else None; a model that cannot be read is said once and skipped.
    `lazy`: a LazyModel, loaded only if the step it is given to has something to align."""
    from scanner.services.semantic import lazy_model, open_model

    def say(why: str) -> None:
        if not quiet:
            click.echo(f"scanner: semantic pass off: {why}", err=True)

    return lazy_model(enabled, say) if lazy else open_model(enabled, say)


def similarity_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--shingle-size", "-w", type=click.IntRange(1, 64), default=None,
                        help=f"Words per shingle (default {Params().shingle_size}).")(func)
    func = click.option("--threshold", type=click.FloatRange(0, 1), default=None,
                        help=f"Resemblance threshold (default {Params().resemblance_threshold}).")(func)
    func = click.option("--min-containment", type=click.FloatRange(0, 1), default=None,
                        help=f"Containment threshold (default {Params().min_containment}).")(func)
    return func


def passage_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--min-words and --min-share: which passage pairs and documents count as lifted text."""
    func = click.option("--min-words", type=click.IntRange(1), default=None,
                        help=f"Shortest shared passage counted, in words (default {Params().passage_words}; "
                             "never below the guaranteed run).")(func)
    func = click.option("--min-share", type=click.FloatRange(0, 1), default=0.0, show_default=True,
                        help="List only documents with at least this share of their words found elsewhere.")(func)
    return func


def params_from(base: Params, shingle_size: int | None = None, threshold: float | None = None,
                min_containment: float | None = None, min_words: int | None = None) -> Params:
    changes: dict[str, Any] = {}
    if min_words is not None:
        changes["passage_words"] = min_words
    if shingle_size is not None:
        changes["shingle_size"] = shingle_size
    if threshold is not None:
        changes["resemblance_threshold"] = threshold
    if min_containment is not None:
        changes["min_containment"] = min_containment
    return base.replace(**changes) if changes else base


def open_index_reader(index_path: str, *, quiet: bool = False, **options: Any) -> Index:
    """`Index.open(index_path, readonly=True, **options)`, saying once on stderr (unless `quiet`) when the
    index sits on read-only media: that is how evidence is kept, and no error."""
    from scanner.index import Index

    index = Index.open(index_path, readonly=True, **options)
    if index.media_note and not quiet:
        click.echo(f"scanner: {index.media_note}", err=True)
    return index


def emit_json(document: dict[str, Any]) -> None:
    """One write, laid out as the JSON report is (a field a line, a list's item a line: the C encoder's
    speed); `json.dump` would write a large document to the pipe in millions of pieces."""
    sys.stdout.write("".join(json_document_chunks(document.items(), allow_nan=True)))  # as json.dumps did

