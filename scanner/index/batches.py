"""Statements over many ids at once: an IN list cut into batches under SQLite's limit on a statement's
parameters (one statement for 50 ids costs less than 50 statements: `check` reads its candidates so)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

IN_BATCH = 500  # host parameters per IN (...) list, well under SQLite's limit


def chunks(values: Sequence[Any], size: int = IN_BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def rows_in(conn: sqlite3.Connection, sql: str, values: Sequence[Any], after: Sequence[Any] = ()) -> list[Any]:
    """Rows of `sql`, whose `{}` is an IN list, for all `values`; `after`: the parameters that follow the
    list in the statement, the same for every batch."""
    rows: list[Any] = []
    for chunk in chunks(list(values)):
        rows += conn.execute(sql.format(",".join("?" * len(chunk))), (*chunk, *after)).fetchall()
    return rows
