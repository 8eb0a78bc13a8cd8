"""One exception tree for the whole tool.

The CLI maps each class to an exit code in one place (`cli.exit_code_for`),
so lower layers raise and never exit.
"""

from __future__ import annotations


class ScannerError(Exception):
    """Base of every error the tool raises on purpose."""


class UsageError(ScannerError):
    """The user asked for something that cannot be done as asked."""


class ParameterMismatchError(ScannerError, ValueError):
    """Two sketches, or a sketch and an index, were made with different parameters."""


class FormatError(ScannerError, ValueError):
    """Stored bytes are not a sketch/record this version can read."""


class InputError(ScannerError):
    """An input file cannot be read or understood."""


class ExtractionError(InputError):
    """Text could not be extracted from a file (encrypted, corrupt, unsupported...)."""

    def __init__(self, reason: str, *, status: str = "error") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class IndexStoreError(ScannerError):
    """The SQLite index is missing, unreadable, locked or of another version."""


class IndexLockedError(IndexStoreError):
    """Another process is writing to the same index."""


class ResourceError(ScannerError):
    """The machine, not the input, stopped the command: disk full, read-only media or no write access, too
    many open files, out of memory, the index's folder gone. Exit 4: the same command succeeds (and a scan
    resumes) once the resource is there."""
