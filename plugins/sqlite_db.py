"""SQLite databases: the text in their tables, read with the standard library's sqlite3.

Phones and desktop programs keep their messages in SQLite: iMessage's `chat.db`, WhatsApp's `msgstore.db`,
Signal, Skype, Slack and Teams caches, browsers' histories and form data. A text pasted into a chat is in a
cell of such a file, which was "no extractor for application/vnd.sqlite3". Each table's rows are read in
order, a line a row (its text cells, and its BLOB cells that are UTF-8 text, joined by tabs), a blank line
between tables. Only tables are read, never views (a view runs SQL the file holds) nor virtual tables (their
module may be missing; an FTS index's copy of its text is read from the table that holds it).

The file is hostile input: it is opened in memory from its bytes (`deserialize`), read-only, with the
schema untrusted, and a progress handler ends the reading after `_SECONDS` (what was read is kept, the file
`partial`, the tables left named). BLOB cells that are not text (pictures, archives of app state) are
counted in `meta["blobs"]`, not read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

if TYPE_CHECKING:
    from sqlite3 import Connection

NAME = "sqlite"
MIMES = ("application/vnd.sqlite3", "application/x-sqlite3")
_SECONDS = 60.0  # reading one database's tables; the rest is named, the file `partial`
_CHECK_EVERY = 10_000  # SQLite virtual machine steps between two looks at the clock
_SEPARATOR = "\t"


def extract_sqlite(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    import sqlite3

    connection = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        try:
            connection.deserialize(_without_wal(data))
            connection.execute("PRAGMA query_only = ON")
            connection.execute("PRAGMA trusted_schema = OFF")
            tables = _tables(connection)
        except sqlite3.DatabaseError as exc:
            raise ExtractionError(f"not a readable SQLite database: {exc}", status="corrupt") from exc
        deadline = time.monotonic() + _SECONDS
        connection.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_EVERY)
        parts: list[str] = []
        counts: list[str] = []
        blobs = chars = 0
        left: list[str] = []
        for number, table in enumerate(tables):
            if chars > limits.max_chars:
                left = tables[number:]
                break
            try:
                lines, rows, skipped = _table_lines(connection, table)
            except sqlite3.OperationalError as exc:  # interrupted by the handler: the time is spent
                if time.monotonic() <= deadline:
                    raise ExtractionError(f"table {table!r} not readable: {exc}", status="corrupt") from exc
                left = tables[number:]
                break
            except sqlite3.DatabaseError as exc:  # a damaged page: the other tables may still read
                counts.append(f"{table} (not readable: {exc})")
                continue
            blobs += skipped
            counts.append(f"{table} ({rows} rows)")
            if lines:
                parts.append("\n".join(lines))
                chars += sum(len(line) for line in lines)
    finally:
        connection.close()
    meta = {"tables": "; ".join(counts)}
    if blobs:
        meta["blobs"] = f"{blobs} BLOB values that are not UTF-8 text, not read"
    status, reason = TextStatus.OK, ""
    if left:
        status = TextStatus.PARTIAL
        why = f"read for {_SECONDS:.0f} s" if chars <= limits.max_chars else f"over {limits.max_chars} characters"
        reason = f"{why}: {len(left)} of {len(tables)} tables not read ({', '.join(left[:5])}" + (
            ", ...)" if len(left) > 5 else ")")
    return Extracted(text="\n\n".join(parts), extractor=NAME, meta=meta, status=status, reason=reason)


def _without_wal(data: bytes) -> bytes:
    """A database in WAL mode (file format bytes 18-19 set to 2) read as one in rollback mode: SQLite cannot
    open a WAL database held in memory, and the file's own pages are the same either way."""
    if data[18:20] == b"\x02\x02":
        return data[:18] + b"\x01\x01" + data[20:]
    return data


def _tables(connection: Connection) -> list[str]:
    """The tables that hold a database's data, in the order its schema lists them: ordinary tables, and of
    the tables a virtual table keeps for itself (an FTS index's segments, sizes and settings: binary) only its
    copy of the text it indexes (`*_content`), which may be the only copy. SQLite's own tables left out."""
    import sqlite3

    rows = connection.execute(
        "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
        "ESCAPE '\\' ORDER BY rowid").fetchall()
    try:  # SQLite 3.37 and later tell a virtual table's own tables ("shadow") apart
        kinds = {name: kind for schema, name, kind, *_ in connection.execute("PRAGMA table_list") if schema == "main"}
    except sqlite3.DatabaseError:
        kinds = {}
    return [name for name, sql in rows
            if (kinds.get(name) == "table" or (kinds.get(name) == "shadow" and name.endswith("_content")))
            or (not kinds and not sql.lstrip().upper().startswith("CREATE VIRTUAL"))]


def _table_lines(connection: Connection, table: str) -> tuple[list[str], int, int]:
    """A table's rows as lines of their text cells, its row count, and the BLOB cells that are not text."""
    quoted = table.replace('"', '""')
    lines: list[str] = []
    rows = skipped = 0
    for row in connection.execute(f'SELECT * FROM "{quoted}"'):
        rows += 1
        cells = list(_text_cells(row))
        skipped += sum(1 for cell in cells if cell is None)
        words = [cell for cell in cells if cell]
        if words:
            lines.append(_SEPARATOR.join(words))
    return lines, rows, skipped


def _text_cells(row: tuple[object, ...]) -> Iterator[str | None]:
    """Each cell's text on one line: a string, a BLOB that is UTF-8 text; None for a BLOB that is not."""
    for cell in row:
        if isinstance(cell, str):
            yield " ".join(cell.split())
        elif isinstance(cell, bytes):
            try:
                text = cell.decode("utf-8")
            except UnicodeDecodeError:
                yield None
                continue
            if text.isprintable() or all(ch.isprintable() or ch.isspace() for ch in text):
                yield " ".join(text.split())
            else:
                yield None


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_sqlite)]
