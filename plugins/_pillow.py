"""Pictures opened by Pillow, phones' HEIF photographs included: an iPhone saves HEIC by default, and Pillow
reads it only through pillow-heif (BSD; libheif inside its wheel), registered the first time such a file is
opened so that other files never import it."""

from __future__ import annotations

import functools
import io
from typing import Any

# an ISO base media file (HEIF, AVIF, MP4) names its brand in the box at offset 4
_FILE_TYPE_BOX = slice(4, 8)
HEIF_MIMES = ("image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence")


def open_picture(data: bytes) -> Any:
    """`PIL.Image.open` of `data` (its header only until the pixels are asked for)."""
    from PIL import Image

    if data[_FILE_TYPE_BOX] == b"ftyp":
        _read_heif()
    return Image.open(io.BytesIO(data))


@functools.cache
def _read_heif() -> None:
    """Without pillow-heif (no wheel for the machine), Pillow says it cannot identify the file, which its
    reader reports as the picture's reason."""
    try:
        from pillow_heif import register_heif_opener
    except ImportError:
        return
    register_heif_opener()
