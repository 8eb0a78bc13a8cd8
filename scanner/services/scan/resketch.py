"""Upgrading an index made by an earlier algorithm version: every stored text is sketched again."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.core.config import Params
from scanner.engine.sketch import sketch_and_winnow
from scanner.index.store import Index


@dataclass(frozen=True)
class Resketch:
    """What re-sketching an index made by an earlier algorithm version did."""

    documents: int  # re-sketched from their stored text
    forgotten: int  # scanned with --no-text: their files are read again when a scan reaches them


STALE_REASON = "sketched by an earlier scanner algorithm and no text stored (--no-text): read again by the next scan"


def resketch_index(index: Index, params: Params) -> Resketch:
    """Re-sketch every document of an index made by an earlier algorithm version from its stored text.

    One transaction: a crash leaves the index as it was, and the next scan starts over. Documents
    without stored text cannot be re-sketched; their files are read again by the scans that reach them.
    """
    done = 0
    forgotten: list[int] = []
    with index.transaction():
        index.clear_postings()
        for batch in index.stored_texts():
            stored = [(doc_id, text) for doc_id, text in batch if text is not None]
            forgotten.extend(doc_id for doc_id, text in batch if text is None)
            sketched = sketch_and_winnow([text for _, text in stored], params)
            index.replace_sketches([(doc_id, sketch, winnowed)
                                    for (doc_id, _), (sketch, (winnowed, _)) in zip(stored, sketched)])
            done += len(stored)
        index.forget_documents(forgotten, STALE_REASON)
        index.mark_current()
    index.stale = False  # committed
    return Resketch(done, len(forgotten))

