"""SQLite databases: the text in their tables, read with the standard library's sqlite3.

Phones and desktop programs keep their messages in SQLite: iMessage's `chat.db`, WhatsApp's `msgstore.db`,
Signal, Skype, Slack and Teams caches, browsers' histories and form data. A text pasted into a chat is in a
cell of such a file, which was "no extractor for application/vnd.sqlite3". Each table's rows are read in
order, a line a row (its text cells, and the text its BLOB cells hold, joined by tabs), a blank line between
tables; the rows still in the pages the database has freed (deleted rows) follow as a marked region. Only
tables are read, never views (a view runs SQL the file holds) nor virtual tables (their module may be
missing; an FTS index's copy of its text is read from the table that holds it). A database's write-ahead
log (`chat.db-wal`) is read on its own, page by page.

The file is hostile input: it is opened in memory from its bytes (`deserialize`), read-only, with the
schema untrusted, and a progress handler ends the reading after `_SECONDS` (what was read is kept, the file
`partial`, the tables left named). BLOB cells are read when they hold text (`_blob_text`): UTF-8, an
archived NSAttributedString (iMessage keeps many messages' text there alone) or object graph, a gzip stream's
content, prose carved from a protocol buffer; the others (pictures, app state) are counted in
`meta["blobs"]`, not read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.carve import carve_text
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl

if TYPE_CHECKING:
    from sqlite3 import Connection

NAME = "sqlite"
MIMES = ("application/vnd.sqlite3", "application/x-sqlite3")
_SECONDS = 60.0  # reading one database's tables; the rest is named, the file `partial`
_CHECK_EVERY = 10_000  # SQLite virtual machine steps between two looks at the clock
_SEPARATOR = "\t"
_DELETED = "rows deleted from the database, still in its free pages"  # the marked region's label
_MOST_FREE_PAGES = 1_000_000
_MOST_ARCHIVED = 10_000  # objects walked in one archived BLOB


def extract_sqlite(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    import sqlite3

    connection = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        try:
            connection.deserialize(_without_wal(data))
        except sqlite3.DatabaseError as exc:
            raise ExtractionError(f"not a readable SQLite database: {exc}", status="corrupt") from exc
        return _database_text(connection, _FilePages(lambda at, size: data[at:at + size], len(data), data[:100]),
                              limits)
    finally:
        connection.close()


def extract_sqlite_file(path: str, mime: str, limits: ExtractLimits) -> Extracted:
    """A database over `max_bytes` (a phone's or a Mac's chat store runs to gigabytes), opened where it lies:
    read-only and immutable (no lock taken, no journal or log written beside the evidence), its free pages
    read by offset."""
    import sqlite3
    from urllib.parse import quote

    from scanner.sources.extract.evidence import open_readonly

    descriptor = open_readonly(path)
    try:
        size = os.fstat(descriptor).st_size
        header = os.pread(descriptor, 100, 0)
        connection = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        try:
            return _database_text(connection, _FilePages(lambda at, count: os.pread(descriptor, count, at), size,
                                                         header), limits)
        finally:
            connection.close()
    finally:
        os.close(descriptor)


def _database_text(connection: Connection, pages: _FilePages, limits: ExtractLimits) -> Extracted:
    """Every table's text, then the rows of its free pages as a marked region (`_deleted_rows`)."""
    import sqlite3

    try:
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
    meta = {"tables": "; ".join(counts)}
    if blobs:
        meta["blobs"] = _unread_blobs(blobs)
    status, reason = TextStatus.OK, ""
    if left:
        status = TextStatus.PARTIAL
        why = f"read for {_SECONDS:.0f} s" if chars <= limits.max_chars else f"over {limits.max_chars} characters"
        reason = f"{why}: {len(left)} of {len(tables)} tables not read ({', '.join(left[:5])}" + (
            ", ...)" if len(left) > 5 else ")")
    deleted = _deleted_rows(pages)
    if deleted:
        meta["deleted_rows"] = f"{len(deleted)} rows deleted from the database, still in its free pages"
    return Extracted(text="\n\n".join(parts), extractor=NAME, meta=meta, status=status,
                     reason=reason).with_regions([(_DELETED, "\n".join(deleted))])


def _deleted_rows(pages: _FilePages) -> list[str]:
    """The text rows of the table pages a database has freed (its freelist), which keep their rows until the
    pages are used again (unless the program set `secure_delete`): a chat message deleted after a leak is
    there. A line a row, each once; rows that are still live elsewhere are not told apart."""
    if pages.page_size < 512:
        return []
    header = pages.header
    trunk, left = int.from_bytes(header[32:36], "big"), int.from_bytes(header[36:40], "big")
    free: list[int] = []
    visited: set[int] = set()
    while trunk in pages and trunk not in visited and len(free) < min(left, _MOST_FREE_PAGES):
        visited.add(trunk)
        page = pages[trunk]
        count = min(int.from_bytes(page[4:8], "big"), (pages.page_size - 8) // 4)
        free.extend(int.from_bytes(page[8 + 4 * i:12 + 4 * i], "big") for i in range(count))
        trunk = int.from_bytes(page[:4], "big")
    return _rows_of_pages((pages[number] for number in free if number in pages), pages)[0]


class _FilePages:
    """A database file's pages by number (from 1), read when asked (`read(offset, size)`: from its bytes, or
    from the file where it lies); `header`: its first 100 bytes."""

    def __init__(self, read: Callable[[int, int], bytes], size: int, header: bytes) -> None:
        self.read, self.size, self.header = read, size, header
        page_size = int.from_bytes(header[16:18], "big") if len(header) >= 100 else 0
        self.page_size = 65536 if page_size == 1 else page_size

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self.page_size > 0 and 1 <= number <= self.size // self.page_size

    def __getitem__(self, number: int) -> bytes:
        return self.read((number - 1) * self.page_size, self.page_size)


def _rows_of_pages(pages: Iterable[bytes], by_number: Mapping[int, bytes] | _FilePages) -> tuple[list[str], int, int]:
    """The rows of the table leaf pages among `pages` (others skipped), a line each with text, each row once;
    the count of rows, and of their BLOB cells that are not text."""
    lines: list[str] = []
    seen: set[bytes] = set()
    blobs = 0
    for page in pages:
        if not page or page[0] != _TABLE_LEAF:
            continue
        for payload in _leaf_payloads(page, by_number):
            if payload in seen:
                continue
            seen.add(payload)
            cells = list(_text_cells(tuple(_record_values(payload))))
            blobs += sum(1 for cell in cells if cell is None)
            if words := [cell for cell in cells if cell]:
                lines.append(_SEPARATOR.join(words))
    return lines, len(seen), blobs


def _unread_blobs(count: int) -> str:
    return f"{count} BLOB values that hold no text, not read"


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
    """Each cell's text on one line: a string, a BLOB that holds text (`_blob_text`); None for a BLOB that
    does not."""
    for cell in row:
        if isinstance(cell, str):
            yield " ".join(cell.split())
        elif isinstance(cell, bytes):
            text = _blob_text(cell)
            yield None if text is None else " ".join(text.split())


_TYPEDSTREAM = b"\x04\x0bstreamtyped"  # NeXTSTEP's archive format: iMessage's `attributedBody`
_KEYED_ARCHIVE = b"bplist00"  # a binary property list: NSKeyedArchiver's archives among them
_GZIP = b"\x1f\x8b"
_MOST_INFLATED = 64 * 1024 * 1024
_ATTRIBUTED = {b"NSAttributedString", b"NSMutableAttributedString"}


def _blob_text(blob: bytes, depth: int = 0) -> str | None:
    """The text a BLOB holds: UTF-8 text as it is; the string of an archived NSAttributedString (iMessage keeps
    the text of many messages there alone, its `text` column empty) or the strings of an archived object
    graph (typedstream, read with pytypedstream, LGPL-3; NSKeyedArchiver property lists); a gzip stream's
    content (Apple Notes: a note's protocol buffer); else the runs of prose carved from its bytes (a protocol
    buffer's strings: `carve.carve_text`); None when there are none."""
    if blob.startswith(_TYPEDSTREAM):
        return _typedstream_text(blob)
    if blob.startswith(_KEYED_ARCHIVE):
        return _keyed_archive_text(blob)
    if blob.startswith(_GZIP) and depth < 2:
        inflated = _gunzipped(blob)
        return None if inflated is None else _blob_text(inflated, depth + 1)
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return carve_text(blob).text or None
    if all(ch.isprintable() or ch.isspace() for ch in text):
        return text
    return carve_text(blob).text or None


def _gunzipped(blob: bytes) -> bytes | None:
    """A gzip BLOB inflated, at most `_MOST_INFLATED` bytes of it (Apple Notes keeps each note so)."""
    import zlib

    inflater = zlib.decompressobj(wbits=31)
    try:
        inflated = inflater.decompress(blob, _MOST_INFLATED)
    except zlib.error:
        return None
    return inflated


def _typedstream_text(blob: bytes) -> str | None:
    import typedstream
    from typedstream.types.foundation import NSString

    try:
        root = typedstream.unarchive_from_data(blob)
    except Exception:  # noqa: BLE001 - a damaged archive in a hostile file: its bytes are not text
        return None
    clazz = getattr(getattr(root, "clazz", None), "name", b"")
    found: list[str] = []
    stack: list[object] = [root]
    seen: set[int] = set()
    while stack and len(seen) < _MOST_ARCHIVED:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, NSString):
            found.append(item.value)
            if clazz in _ATTRIBUTED:  # its string is the first one: the rest name its attributes
                break
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed([*item.keys(), *item.values()]))
        elif hasattr(item, "__dict__"):
            stack.extend(reversed(list(vars(item).values())))
    return "\n".join(text for text in found if not text.startswith("__k")) or None


def _keyed_archive_text(blob: bytes) -> str | None:
    """The strings of a binary property list (an NSKeyedArchiver archive's objects among them: a mutable
    string is a dictionary holding `NS.string`), class names and `$null` left out."""
    import plistlib

    try:
        plist = plistlib.loads(blob)
    except Exception:  # noqa: BLE001 - a damaged property list in a hostile file
        return None
    found: list[str] = []
    stack: list[object] = [plist]
    walked = 0
    while stack and walked < _MOST_ARCHIVED:
        item = stack.pop()
        walked += 1
        if isinstance(item, str):
            if item != "$null":
                found.append(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed([value for key, value in item.items()  # not the archive's own keys
                                   if not (isinstance(key, str) and key.startswith("$") and key != "$objects")]))
    return "\n".join(found) or None


WAL_MIME = "application/x-sqlite3-wal"
_WAL_HEADER, _FRAME_HEADER = 32, 24
_TABLE_LEAF = 0x0D


def extract_sqlite_wal(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
    """A database's write-ahead log (`chat.db-wal`): the pages of its latest transactions, not yet copied into
    the database (a live chat program's newest messages are there alone). Each page that holds table rows is
    read for their text cells, a line a row, every row once (a page written again by a later frame repeats
    the rows it kept); frames of earlier log generations (another salt) are read too, as they hold rows since
    changed or deleted. A row longer than its page goes on in overflow pages, followed as far as the log holds
    them (the rest is in the database)."""
    if len(data) < _WAL_HEADER or data[:4] not in (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83"):
        raise ExtractionError("not an SQLite write-ahead log: no WAL header", status="corrupt")
    page_size = int.from_bytes(data[8:12], "big")
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        raise ExtractionError(f"not an SQLite write-ahead log: page size {page_size}", status="corrupt")
    frames = [(int.from_bytes(data[at:at + 4], "big"), data[at + _FRAME_HEADER:at + _FRAME_HEADER + page_size])
              for at in range(_WAL_HEADER, len(data) - _FRAME_HEADER - page_size + 1, _FRAME_HEADER + page_size)]
    latest = dict(frames)  # each page as the log last wrote it: where a long row goes on (its overflow pages)
    # page 1 opens with the database header and holds the schema
    lines, rows, blobs = _rows_of_pages((page for number, page in frames if number != 1), latest)
    pages = sum(1 for number, page in frames if number != 1 and page[0] == _TABLE_LEAF)
    torn = (len(data) - _WAL_HEADER) % (_FRAME_HEADER + page_size)
    meta = {"frames": str(len(frames)), "pages_with_rows": str(pages), "rows": str(rows)}
    if blobs:
        meta["blobs"] = _unread_blobs(blobs)
    status, reason = TextStatus.OK, ""
    if torn:
        status, reason = TextStatus.PARTIAL, f"the last frame is cut short ({torn} bytes): what precedes it is read"
    return Extracted(text="\n".join(lines), extractor=NAME, meta=meta, status=status, reason=reason)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`: its value and the offset after it (1 to 9 bytes)."""
    value = 0
    for i in range(8):
        if at + i >= len(data):
            raise ValueError("varint past the end")
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    if at + 8 >= len(data):
        raise ValueError("varint past the end")
    return (value << 8) | data[at + 8], at + 9


def _leaf_payloads(page: bytes, pages: Mapping[int, bytes] | _FilePages) -> Iterator[bytes]:
    """The records of a table leaf page (b-tree page type 13), each with the overflow pages that continue it as
    far as `pages` (page number -> bytes) holds them."""
    usable = len(page)  # the reserved bytes a page may keep at its end are past any record's local part
    count = int.from_bytes(page[3:5], "big")
    most_local = usable - 35
    least_local = (usable - 12) * 32 // 255 - 23
    for number in range(count):
        pointer = 8 + 2 * number
        if pointer + 2 > len(page):
            return
        at = int.from_bytes(page[pointer:pointer + 2], "big")
        try:
            size, at = _varint(page, at)
            _, at = _varint(page, at)  # the rowid
        except ValueError:
            continue
        if size <= most_local:
            yield page[at:at + size]
            continue
        local = least_local + (size - least_local) % (usable - 4)
        local = least_local if local > most_local else local
        parts, held = [page[at:at + local]], local
        following = int.from_bytes(page[at + local:at + local + 4], "big")
        visited: set[int] = set()
        while held < size and following in pages and following not in visited:  # a loop: a damaged log
            visited.add(following)
            overflow = pages[following]
            parts.append(overflow[4:4 + min(usable - 4, size - held)])
            held += len(parts[-1])
            following = int.from_bytes(overflow[:4], "big")
        yield b"".join(parts)


def _record_values(record: bytes) -> Iterator[object]:
    """The values of a record (SQLite's record format): text and BLOBs as they are, numbers skipped; a value
    cut short by the page's end is given as far as it goes."""
    try:
        header_size, at = _varint(record, 0)
        kinds = []
        while at < min(header_size, len(record)):
            kind, at = _varint(record, at)
            kinds.append(kind)
    except ValueError:
        return
    at = header_size
    for kind in kinds:
        size = _SERIAL_SIZES.get(kind, (kind - 12) // 2 if kind >= 12 else 0)
        value = record[at:at + size]
        at += size
        if kind >= 13 and kind % 2:
            yield value.decode("utf-8", errors="replace")
        elif kind >= 12:
            yield bytes(value)


_SERIAL_SIZES = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8, 8: 0, 9: 0, 10: 0, 11: 0}


@hookimpl
def scanner_extractors() -> list[Extractor]:
    return [Extractor(name=NAME, mimes=MIMES, priority=50, extract=extract_sqlite, extract_file=extract_sqlite_file),
            Extractor(name=f"{NAME}-wal", mimes=(WAL_MIME,), priority=50, extract=extract_sqlite_wal)]
