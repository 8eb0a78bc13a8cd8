"""The SQLite index: schema migrations (`schema`) and the store (`store`)."""

from scanner.index.schema import LATEST_VERSION, MIGRATIONS
from scanner.index.store import (
    Alert,
    DocumentInfo,
    FileRow,
    FileState,
    Index,
    IndexStats,
    NewDocument,
    PairCount,
    compress_text,
    to_signed,
    to_unsigned,
)

__all__ = [
    "LATEST_VERSION", "MIGRATIONS", "Alert", "DocumentInfo", "FileRow", "FileState", "Index", "IndexStats",
    "NewDocument", "PairCount", "compress_text", "to_signed", "to_unsigned",
]
