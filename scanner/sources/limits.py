"""Resource caps for extraction: documents are hostile input."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class ExtractLimits:
    """Caps that keep one hostile file from exhausting memory or time.

    Attributes:
        max_bytes: larger files are not read into memory (status TOO_LARGE).
        max_unzipped_bytes: total bytes an archive-based format (DOCX, ODT,
            EPUB) may inflate to, checked on declared sizes and again while
            streaming, because declared sizes can lie.
        max_zip_ratio: a member whose declared size is over `zip_ratio_floor`
            and whose inflate ratio exceeds this is treated as a zip bomb.
        zip_ratio_floor: members smaller than this are never judged by ratio
            (tiny repetitive XML legitimately compresses very well).
        max_zip_members: archives with more members are refused.
        max_html_depth: nesting beyond this is flattened; the built-in HTML
            reader keeps no tree, so depth only costs a counter.
        max_chars: extracted text is cut here (meta["truncated"] says so).
    """

    max_bytes: int = 512 * MiB
    max_unzipped_bytes: int = 200 * MiB
    max_zip_ratio: float = 200.0
    zip_ratio_floor: int = 1 * MiB
    max_zip_members: int = 10_000
    max_html_depth: int = 512
    max_chars: int = 50_000_000
