"""Schema of the SQLite index as numbered, named migrations.

Each migration runs inside one transaction together with its row in
`schema_migrations` and the new `PRAGMA user_version`, so a crash leaves the
index either before or after a migration, never half-way (sqlite-utils'
habit). An index written by a newer build is refused rather than misread.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from scanner.core.errors import IndexStoreError


@dataclass(frozen=True)
class Migration:
    """`readable_before`: what it adds only a writer reads, so a reader opens an index still without it (an
    upgraded scanner's `check` and TUI need no scan first)."""

    version: int
    name: str
    statements: tuple[str, ...]
    readable_before: bool = False


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial", (
        """CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)""",
        # params (Params.to_dict JSON), sketch_key (hex), created, scanner_version
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL,
            command TEXT NOT NULL, params TEXT NOT NULL, counts TEXT)""",
        # one row per distinct sha256 whose text could be sketched
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
            status TEXT NOT NULL, extractor TEXT NOT NULL, mime TEXT NOT NULL,
            n_tokens INTEGER NOT NULL, n_shingles INTEGER NOT NULL, n_fps INTEGER NOT NULL,
            text_length INTEGER NOT NULL, lexical_digest TEXT NOT NULL,
            shingle_digest TEXT NOT NULL, text BLOB, page_starts TEXT NOT NULL DEFAULT '[]')""",
        "CREATE INDEX documents_lexical ON documents(lexical_digest)",
        "CREATE INDEX documents_shingle ON documents(shingle_digest)",
        """CREATE TABLE files (
            id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, mime TEXT NOT NULL,
            status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', extractor TEXT NOT NULL DEFAULT '',
            seen_run INTEGER, vanished INTEGER NOT NULL DEFAULT 0,
            doc_id INTEGER REFERENCES documents(id))""",
        "CREATE INDEX files_sha256 ON files(sha256)",
        "CREATE INDEX files_doc ON files(doc_id)",
        "CREATE TABLE sketches (doc_id INTEGER PRIMARY KEY REFERENCES documents(id), blob BLOB NOT NULL)",
        # winnowed shingle fingerprints, uint64 stored as signed int64
        """CREATE TABLE postings (fp INTEGER NOT NULL, doc_id INTEGER NOT NULL,
            PRIMARY KEY (fp, doc_id)) WITHOUT ROWID""",
        "CREATE INDEX postings_doc ON postings(doc_id)",
        """CREATE TABLE alerts (
            id INTEGER PRIMARY KEY, time REAL NOT NULL, path TEXT NOT NULL,
            sha256 TEXT NOT NULL, matches_json TEXT NOT NULL)""",
        # equivalence groups: identical (same sha256), lexical, shingle
        """CREATE VIEW equivalence_groups AS
            SELECT 'identical' AS kind, sha256 AS key, id AS file_id FROM files
             WHERE vanished = 0 AND size > 0 AND sha256 IN (
                   SELECT sha256 FROM files WHERE vanished = 0 GROUP BY sha256 HAVING count(*) > 1)
            UNION ALL
            SELECT 'lexical', d.lexical_digest, f.id FROM documents d JOIN files f ON f.doc_id = d.id
             WHERE f.vanished = 0 AND d.n_tokens > 0 AND d.lexical_digest IN (
                   SELECT lexical_digest FROM documents GROUP BY lexical_digest HAVING count(*) > 1)
            UNION ALL
            SELECT 'shingle', d.shingle_digest, f.id FROM documents d JOIN files f ON f.doc_id = d.id
             WHERE f.vanished = 0 AND d.n_tokens > 0 AND d.shingle_digest IN (
                   SELECT shingle_digest FROM documents GROUP BY shingle_digest HAVING count(*) > 1)""",
    )),
    # what `watch` last checked in each watched folder, so a restart catches up
    Migration(2, "watch_state", (
        """CREATE TABLE watch_state (
            path TEXT PRIMARY KEY, root TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL, checked REAL NOT NULL, alerted INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX watch_state_root ON watch_state(root)",
    )),
    # postings as a small buffer plus immutable sorted segments (docs/SCALING.md 2.2): inserting into one
    # fingerprint-ordered B-tree rewrote the whole tree on every commit, O(N^2) bytes for N documents.
    # `postings` stays the name readers query: a view over the buffer and every segment (store.py rebuilds
    # it whenever segments change). Documents are never deleted, so no doc-id index is needed.
    Migration(3, "segmented_postings", (
        "ALTER TABLE postings RENAME TO postings_buffer",
        "DROP INDEX IF EXISTS postings_doc",
        """CREATE TABLE postings_segments (
            id INTEGER PRIMARY KEY, level INTEGER NOT NULL, rows INTEGER NOT NULL, created REAL NOT NULL)""",
        "CREATE VIEW postings AS SELECT fp, doc_id FROM postings_buffer",
    )),
    # files the crawler skipped have no hash (''): they are not 'identical' to each other
    Migration(4, "identical_needs_a_hash", (
        "DROP VIEW equivalence_groups",
        """CREATE VIEW equivalence_groups AS
            SELECT 'identical' AS kind, sha256 AS key, id AS file_id FROM files
             WHERE vanished = 0 AND size > 0 AND sha256 <> '' AND sha256 IN (
                   SELECT sha256 FROM files WHERE vanished = 0 GROUP BY sha256 HAVING count(*) > 1)
            UNION ALL
            SELECT 'lexical', d.lexical_digest, f.id FROM documents d JOIN files f ON f.doc_id = d.id
             WHERE f.vanished = 0 AND d.n_tokens > 0 AND d.lexical_digest IN (
                   SELECT lexical_digest FROM documents GROUP BY lexical_digest HAVING count(*) > 1)
            UNION ALL
            SELECT 'shingle', d.shingle_digest, f.id FROM documents d JOIN files f ON f.doc_id = d.id
             WHERE f.vanished = 0 AND d.n_tokens > 0 AND d.shingle_digest IN (
                   SELECT shingle_digest FROM documents GROUP BY shingle_digest HAVING count(*) > 1)""",
    )),
    # the file's real path (absolute, symlinks resolved, in display form): one file scanned under another
    # spelling ("corpus", "./corpus/", "/home/x/corpus") is the row it already has, not a copy of itself.
    # NULL for rows written before this migration until they are indexed again.
    Migration(5, "real_paths", (
        "ALTER TABLE files ADD COLUMN real_path TEXT",
        "CREATE INDEX files_real_path ON files(real_path)",
    )),
    # issue 20: the passages every two documents share, aligned once after a scan (scanner/index/passages.py),
    # and the findings of the index's latest content, so every face reads them instead of recomputing them
    Migration(6, "passages", (
        """CREATE TABLE passage_pairs (
            doc_a INTEGER NOT NULL, doc_b INTEGER NOT NULL, words_a INTEGER NOT NULL, words_b INTEGER NOT NULL,
            passages BLOB NOT NULL, PRIMARY KEY (doc_a, doc_b)) WITHOUT ROWID""",
        "CREATE INDEX passage_pairs_b ON passage_pairs(doc_b)",
        "CREATE TABLE passage_aligned (doc_id INTEGER PRIMARY KEY)",
        # key: what the findings were computed with (thresholds, generation); findings: their JSON
        "CREATE TABLE stored_findings (key TEXT PRIMARY KEY, findings TEXT NOT NULL)",
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', '0')",
    )),
    # issue 17: an alert is a group (every path that held the same content, for the same sources), with a
    # severity and the state of its review; passages allowed from the TUI go to the allow index
    Migration(7, "alert_groups", (
        "ALTER TABLE alerts ADD COLUMN paths_json TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE alerts ADD COLUMN severity TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE alerts ADD COLUMN sources TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE alerts ADD COLUMN review TEXT NOT NULL DEFAULT 'new'",
        "UPDATE alerts SET paths_json = json_array(path)",
        "CREATE INDEX alerts_content ON alerts(sha256, sources)",
    )),
    # issue 21: each document's vector by meaning (scanner/index/vectors.py), in blocks of documents so
    # that `check` reads them all in a few rows
    Migration(8, "document_vectors", (
        "CREATE TABLE meaning_blocks (block INTEGER PRIMARY KEY, ids BLOB NOT NULL, vectors BLOB NOT NULL)",
    )),
    # the passage step's plan (its pairs, in the order it sends them) and which of its tasks are done, kept
    # until the step ends: a step stopped half-way (Ctrl-C, a crash) goes on from there at the next scan.
    # A row a task done, apart from the plan: SQLite rewrites a whole row to update one column, and at
    # 100,000 documents the plan's pairs are tens of megabytes
    Migration(9, "passage_plan", (
        """CREATE TABLE passage_plan (key TEXT PRIMARY KEY, pairs BLOB NOT NULL, worthy BLOB NOT NULL,
            notes TEXT NOT NULL)""",
        "CREATE TABLE passage_plan_done (task INTEGER PRIMARY KEY)",
    )),
    # issue 16: a Bloom filter of the segments' fingerprints (engine/membership.py), so that `check` looks up
    # only the anchors some document may hold. state 'ok': `filter` covers every segment; 'build': none yet,
    # the next writer builds it; 'off': too many postings to keep one. `version` moves with every change
    Migration(10, "postings_filter", (
        """CREATE TABLE postings_filter (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL,
            version INTEGER NOT NULL, filter BLOB)""",
        "INSERT INTO postings_filter (id, state, version) VALUES (1, 'build', 0)",
    )),
    # issue 21: each document's sentence vectors in their stored form (engine/semantic.py QuantizedVectors),
    # written with its vector by meaning, so that `check` and the passage step's other workers read them
    # instead of embedding the document again
    Migration(11, "sentence_vectors", (
        """CREATE TABLE sentence_vectors (doc_id INTEGER PRIMARY KEY, codes BLOB NOT NULL,
            scales BLOB NOT NULL)""",
    )),
    # issue 16: documents' texts written from now on are zstd frames (`store.compress_text`); those written
    # before stay zlib streams, read as they are (the two are told apart by their first bytes). Nothing to
    # rewrite: the version says that a build which reads only zlib must not open the index
    Migration(12, "texts_zstd", ()),
    # each document's places that are not its body ([start, end, label] of its marked regions, and of the raw
    # text a partial extraction appended), so that a passage found in an indexed document's comment, hidden
    # text or footer says so, as a checked file's does
    Migration(13, "document_places", (
        "ALTER TABLE documents ADD COLUMN places TEXT NOT NULL DEFAULT '[]'",
    )),
    # the readers' version that read each file (scanner/sources/extract/readers.py): a rescan reads only files
    # that changed, so a scan can say how many files were read before the readers learnt to find more. Rows
    # written before are version 1 (the readers up to this migration)
    Migration(14, "file_readers", (
        "ALTER TABLE files ADD COLUMN readers INTEGER NOT NULL DEFAULT 1",
    ), readable_before=True),
    # what every scan asks of them at its end (how many live files older readers read, by MIME type) read
    # from an index of its own: the files table's full scan took 0.8 s at 100,000 files
    Migration(15, "file_readers_index", (
        "CREATE INDEX files_readers ON files(readers, vanished, mime)",
    ), readable_before=True),
    # base texts (index/base.py): what every document may hold by design (an assignment's template, starter
    # code), which no finding counts; a reader of an index without the table finds none
    Migration(16, "base_texts", (
        """CREATE TABLE base_texts (sha256 TEXT PRIMARY KEY, label TEXT NOT NULL, words INTEGER NOT NULL,
            added REAL NOT NULL, text BLOB NOT NULL)""",
    ), readable_before=True),
)

LATEST_VERSION = MIGRATIONS[-1].version
# documents written before it keep the text their readers gave then, and no places
PLACES_VERSION = next(migration.version for migration in MIGRATIONS if migration.name == "document_places")


def readable_at(version: int) -> bool:
    """Whether a reader opens an index of schema `version`: every migration after it is `readable_before`."""
    return all(migration.readable_before for migration in MIGRATIONS if migration.version > version)


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def check_version(conn: sqlite3.Connection, path: str) -> int:
    """The stored schema version; an index from a newer build is refused."""
    version = current_version(conn)
    if version > LATEST_VERSION:
        raise IndexStoreError(
            f"index {path} has schema version {version}, newer than this scanner supports "
            f"({LATEST_VERSION}); upgrade scanner or use another --index"
        )
    return version


def migrate(conn: sqlite3.Connection, path: str) -> list[int]:
    """Apply pending migrations, each in its own transaction; returns the versions applied.

    The connection must be in autocommit mode (isolation_level=None) so that
    the explicit BEGIN IMMEDIATE / COMMIT bracket the migration exactly.
    """
    applied = []
    for migration in MIGRATIONS:
        if migration.version <= check_version(conn, path):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if current_version(conn) >= migration.version:  # applied by someone else meanwhile
                conn.execute("ROLLBACK")
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            conn.execute(f"PRAGMA user_version = {int(migration.version)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(migration.version)
    return applied
