"""A vault file edited as an attacker or a failing disk would: plain SQL on its tables and bits
flipped inside stored values, no key needed. The engine must notice every such edit."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def sql(path: Path, statement: str, *params: object) -> list[tuple[Any, ...]]:
    """Run one statement on the file and commit; the rows it returns."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(statement, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def flip(path: Path, table: str, column: str, where: str, *params: object, offset: int = 0, mask: int = 0x01) -> None:
    """XOR byte `offset` (negative counts from the end) of `column` in the one row of `table`
    that `where` selects with `mask`."""
    (value,), = sql(path, f"SELECT {column} FROM {table} WHERE {where}", *params)
    data = bytearray(value)
    data[offset] ^= mask
    sql(path, f"UPDATE {table} SET {column} = ? WHERE {where}", bytes(data), *params)
