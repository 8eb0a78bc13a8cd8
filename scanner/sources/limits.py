"""Resource caps for extraction (documents are hostile input), and the passwords it may try."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from scanner.core.model import Extracted

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
        max_container_depth: archives inside archives (inside mail...) are followed this deep; a deeper
            container is recorded `too_large`, named, never silently skipped.
        max_container_members: members one file may expand to, all levels together, at the least.
        member_bytes: and past it, one member for every this many bytes of the file: a mailbox of 40,000
            real messages, a tarball of a source tree, is no bomb; a few KB that open into 40,000 members
            are (a member needs a header of its own: 30 to 512 bytes in a ZIP, a tar, a mail).
        most_container_members: but never more members than this where a file's members are all held in
            memory until the file is done (`check`, `watch`, Dask workers: ~15 KB each at their peak,
            sketches included), so the members past it are said, not read, rather than the worker's memory
            budget failing the whole file; a scan's workers send them on as they go, and need no ceiling.
        max_expanded_bytes: bytes one file's containers may expand to, all levels together.
        max_image_pixels: larger images (or rendered pages) are refused before they are decoded: a
            decompression bomb is a few KB of PNG.
        ocr: read text from images (scanned PDF pages, PNG/JPEG/TIFF) with Tesseract when it is installed.
        ocr_languages: Tesseract's language codes, joined by "+".
        ocr_seconds: OCR time one file may spend (None: no budget of its own).
        passwords: tried in turn on an encrypted PDF, DOCX/XLSX/PPTX, ZIP or 7z member (an investigator's
            known passwords); a file they open is read, and says it was decrypted (`DECRYPTED`). Never stored
            nor printed.
    """

    max_bytes: int = 512 * MiB
    max_unzipped_bytes: int = 200 * MiB
    max_zip_ratio: float = 200.0
    zip_ratio_floor: int = 1 * MiB
    max_zip_members: int = 10_000
    max_html_depth: int = 512
    max_chars: int = 50_000_000
    max_container_depth: int = 5
    max_container_members: int = 10_000
    member_bytes: int = 256
    most_container_members: int = 100_000
    max_expanded_bytes: int = 2048 * MiB
    max_image_pixels: int = 70_000_000
    ocr: bool = True
    # seconds of OCR one file may spend: the scanned pages past it are left unread and the file is `partial`,
    # saying how many; under the scan's 120 s --file-timeout, so a long scan gives its first pages, not nothing
    ocr_seconds: float | None = 90.0
    ocr_languages: str = "eng"
    passwords: tuple[str, ...] = field(default=(), repr=False)

    def locked(self, what: str, needed: str = "a password is needed") -> str:
        """Why an encrypted `what` stays unread: what it needs when no password was given, else that none of
        those given opens it."""
        if not self.passwords:
            return f"{what}: {needed}"
        return f"{what}: none of the {len(self.passwords)} password(s) given opens it"


# meta key (and its value) of a file or member read after a password given with --password opened it: said
# beside its text in the index and the reports, as evidence that it was locked
DECRYPTED = "decrypted"
DECRYPTED_REASON = "decrypted with a password given to the scan"


def decrypted(result: Extracted) -> Extracted:
    """`result` marked as read after a given password opened its file (`DECRYPTED`)."""
    return dataclasses.replace(result, meta={**result.meta, DECRYPTED: DECRYPTED_REASON})
