"""Reading members of untrusted ZIP containers (DOCX, ODT, EPUB) under a budget.

Declared sizes are checked first (cheap refusal of obvious bombs), then every
member is inflated in chunks against the remaining budget, because the sizes
in the central directory are written by the attacker too.
"""

from __future__ import annotations

import io
import zipfile

from scanner.core.errors import ExtractionError
from scanner.sources.limits import ExtractLimits

_CHUNK = 64 * 1024


class SafeZip:
    """A ZIP archive opened from bytes, with an inflate budget shared by all reads."""

    def __init__(self, data: bytes, limits: ExtractLimits) -> None:
        try:
            self._zf = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise ExtractionError(f"not a readable ZIP container: {exc}", status="corrupt") from exc
        if len(infos) > limits.max_zip_members:
            raise ExtractionError(
                f"zip bomb: {len(infos)} members > {limits.max_zip_members}", status="too_large"
            )
        declared = sum(info.file_size for info in infos)
        if declared > limits.max_unzipped_bytes:
            raise ExtractionError(
                f"zip bomb: declares {declared} bytes unpacked > {limits.max_unzipped_bytes}",
                status="too_large",
            )
        for info in infos:
            if info.file_size > limits.zip_ratio_floor:
                ratio = info.file_size / max(info.compress_size, 1)
                if ratio > limits.max_zip_ratio:
                    raise ExtractionError(
                        f"zip bomb: member {info.filename!r} inflates {ratio:.0f}x"
                        f" > {limits.max_zip_ratio:g}x",
                        status="too_large",
                    )
        self._infos = {info.filename: info for info in infos}
        self._budget = limits.max_unzipped_bytes

    def names(self) -> list[str]:
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def read(self, name: str) -> bytes:
        """Inflate one member, stopping as soon as the shared budget is spent."""
        info = self._infos.get(name)
        if info is None:
            raise ExtractionError(f"missing member {name!r}", status="corrupt")
        if info.flag_bits & 0x1:
            raise ExtractionError(f"member {name!r} is encrypted", status="encrypted")
        out = bytearray()
        try:
            with self._zf.open(info) as member:
                while chunk := member.read(_CHUNK):
                    out += chunk
                    if len(out) > self._budget:
                        raise ExtractionError(
                            f"zip bomb: member {name!r} inflates past the"
                            f" remaining budget of {self._budget} bytes",
                            status="too_large",
                        )
        except ExtractionError:
            raise
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            raise ExtractionError(f"member {name!r} unreadable: {exc}", status="corrupt") from exc
        self._budget -= len(out)
        return bytes(out)
