"""`scanner tui` (and `scanner` alone): the terminal interface on an index."""

from __future__ import annotations

import click

from scanner.faces.commands.options import index_option, ocr_option, semantic_option


@click.command(name="tui")
@index_option
@click.option("--threshold", type=click.FloatRange(0, 1), default=None,
              help="Resemblance threshold for the findings (default: the index's).")
@click.option("--min-containment", type=click.FloatRange(0, 1), default=None,
              help="Containment threshold for the findings (default: the index's).")
@click.option("--jobs", "-j", type=click.IntRange(0), default=None,
              help="Worker processes for scans started in the interface (default: the number of cores).")
@ocr_option
@semantic_option
def command(index_path: str, threshold: float | None = None, min_containment: float | None = None,
            jobs: int | None = None, ocr: bool = True, ocr_languages: str = "eng", semantic: bool = True) -> int:
    """Open the terminal user interface on the index (a missing index shows how to make one)."""
    from scanner.faces.tui import make_app  # Textual is imported here only, so `scanner --help` stays instant

    make_app(index_path, threshold=threshold, min_containment=min_containment, scan_jobs=jobs,
             semantic=semantic, ocr=ocr, ocr_languages=ocr_languages).run()
    return 0
