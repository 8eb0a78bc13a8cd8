"""Legacy Word (.doc, Word 6 to 2003) through antiword, run as a separate program.

antiword (Debian's `antiword` package, GPL-2) is the small, fast reader of the
Word 97 binary format; it runs as its own process on a private temporary copy
of the bytes (so its licence stays its own, and a crash or a hang ends that
process only, under a timeout), with `-m UTF-8.txt` for UTF-8 output, `-w 0`
for one line a paragraph and `-s` for the text Word hides. libmagic types
Word files `application/msword` (by the compound file's `WordDocument` stream).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

NAME = "antiword"
MIMES = ("application/msword",)
TIMEOUT_SECONDS = 60
MISSING = "antiword is not installed (apt install antiword)"
# antiword's messages (stderr) -> status; anything else it refuses is corrupt
_ENCRYPTED = ("Encrypted documents are not supported",)
_UNSUPPORTED = ("version of Word is not supported", "from a version of Word before Word 6")


def antiword_path() -> str | None:
    """Where the antiword program is, or None (`scanner info` reports it)."""
    return shutil.which("antiword")


@functools.cache
def antiword_version(path: str | None = None) -> str | None:
    """antiword's version (from its usage text: it has no --version), or None when it is not installed."""
    path = path or antiword_path()
    if path is None:
        return None
    try:
        usage = subprocess.run([path], capture_output=True, timeout=10).stderr.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"Version:\s*(\S+)", usage)
    return found.group(1) if found else "unknown version"


def _stderr_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _failure(completed: subprocess.CompletedProcess[bytes], copy_name: str) -> ExtractionError:
    """What antiword's exit says about the file."""
    if completed.returncode < 0:
        return ExtractionError(f"antiword crashed (signal {-completed.returncode})", status="corrupt")
    message = _stderr_line(completed.stderr).replace(copy_name, "the file") or f"exit status {completed.returncode}"
    if any(marker in message for marker in _ENCRYPTED):
        return ExtractionError(f"password-protected Word document: {message}", status="encrypted")
    if any(marker in message for marker in _UNSUPPORTED):
        return ExtractionError(f"antiword: {message}", status="unsupported")
    return ExtractionError(f"antiword: {message}", status="corrupt")


def extract_doc(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    program = antiword_path()
    if program is None:
        raise ExtractionError(MISSING, status="unsupported")
    with tempfile.TemporaryDirectory(prefix="scanner-doc-") as private:  # mode 0700: the copy is ours alone
        copy = os.path.join(private, "document.doc")
        with open(copy, "wb") as handle:
            handle.write(data)
        try:
            completed = subprocess.run(
                [program, "-m", "UTF-8.txt", "-w", "0", "-s", copy],
                capture_output=True, timeout=TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise ExtractionError(f"antiword ran over {TIMEOUT_SECONDS} s", status="timeout") from exc
    if completed.returncode != 0:
        raise _failure(completed, copy)
    text = completed.stdout.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    return Extracted(text=text.strip(), extractor=NAME)


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_doc)]
