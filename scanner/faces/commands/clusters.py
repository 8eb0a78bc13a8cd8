"""`scanner clusters`: near-duplicate clusters and containment pairs of an existing index."""

from __future__ import annotations

import click

from scanner import __version__
from scanner.faces.commands.options import (
    emit_json,
    index_option,
    json_option,
    open_index_reader,
    params_from,
    passage_options,
    quiet_option,
)


@click.command(name="clusters")
@index_option
@click.option("--threshold", type=click.FloatRange(0, 1), default=None,
              help="Resemblance threshold (default: the index's).")
@click.option("--min-containment", type=click.FloatRange(0, 1), default=None,
              help="Containment threshold (default: the index's).")
@passage_options
@json_option
@quiet_option
def command(index_path: str, threshold: float | None, min_containment: float | None, min_words: int | None,
            min_share: float, as_json: bool, quiet: bool) -> None:
    """Clusters, containment pairs, passage pairs and each document's share found elsewhere, read from
    the index (read-only)."""
    from scanner.services.findings import findings_json, stored_or_found

    with open_index_reader(index_path, quiet=quiet) as index:
        params = params_from(index.params, None, threshold, min_containment, min_words)
        findings = stored_or_found(index, params).at_least(min_share)
    if as_json:
        document = findings_json(findings)
        document.update({"threshold": params.resemblance_threshold, "min_containment": params.min_containment,
                         "index": index_path, "params": params.to_dict(), "version": __version__})
        emit_json(document)
        return
    from scanner.faces.commands._tables import print_clusters

    print_clusters(findings)
