"""Recognising a vault file and reading its clear header, without a key and without writing.

Listing vaults and resolving names open files read-only (`mode=ro` URI, no journal-mode
switch), after checking that the file is a regular file that starts with the SQLite magic,
so a file we do not recognise is reported and never changed. Only an unlock opens the file
for writing, and only after its header was recognised here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ErrorCode, NotFoundError, TamperError, VaultError, quotable
from ..i18n import Message, localized, msg
from ..serial import Jsonable, json_meta
from .format import KdfParams, length_prefixed

MAGIC = "memories-vault"
FORMAT_VERSION = 1
BUSY_TIMEOUT_S = 30.0
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Header:
    vault_id: str
    name: str
    format: int
    kdf: KdfParams
    salt: bytes
    wrapped_key: bytes
    created: str

    def associated_data(self) -> bytes:
        """Everything but the wrapped key: binds the key wrap to this exact header."""
        return length_prefixed(MAGIC, self.format, self.vault_id, self.name,
                               json.dumps(self.kdf.to_dict(), sort_keys=True), self.salt, self.created)

    def checksum(self) -> bytes:
        return hashlib.sha256(self.associated_data() + self.wrapped_key).digest()


def vault_error_from(exc: sqlite3.Error | UnicodeDecodeError, path: Path) -> VaultError:
    """A stable code for an SQLite failure: busy (try again) or damaged (restore a backup)."""
    text = quotable(str(exc).split(" with text ")[0], 160)  # SQLite may quote raw column bytes; never echo them
    if isinstance(exc, UnicodeDecodeError):
        text = "a text column is not valid UTF-8"
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return VaultError(msg("{file_name} is busy (another process holds it): {text}. Try again.",
                              file_name=path.name, text=text), code=ErrorCode.VAULT_BUSY)
    return VaultError(msg("{file_name} is damaged or unreadable (SQLite: {text}). Restore it from a backup.",
                          file_name=path.name, text=text),
                      code=ErrorCode.VAULT_DAMAGED)


@contextlib.contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """SQLite failures become VaultErrors with stable codes, never tracebacks."""
    try:
        yield
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise vault_error_from(exc, path) from None


# Files this process holds open for writing, by (device, inode). Closing ANY descriptor of a
# file drops every POSIX lock this process holds on it, SQLite's included: a plain open/close
# of a vault another connection here has open would let a second process think it is the last
# user, checkpoint, and delete the -wal/-shm files under our feet (its later writes invisible to
# everyone else). So the magic check below never opens such a file; SQLite checked it already.
_LIVE: dict[tuple[int, int], int] = {}
_LIVE_LOCK = threading.Lock()


class _LiveConnection(sqlite3.Connection):
    """A read-write connection that keeps its file in `_LIVE` until it is closed."""

    live_key: tuple[int, int] | None = None

    def close(self) -> None:
        key, self.live_key = self.live_key, None
        if key is not None:
            with _LIVE_LOCK:
                _LIVE[key] -= 1
                if _LIVE[key] <= 0:
                    del _LIVE[key]
        super().close()


def _remember_live(conn: _LiveConnection, path: Path) -> None:
    info = os.stat(path)
    key = (info.st_dev, info.st_ino)
    with _LIVE_LOCK:
        _LIVE[key] = _LIVE.get(key, 0) + 1
    conn.live_key = key


def _check_sqlite_file(path: Path) -> None:
    """A regular file that starts with the SQLite magic, checked before SQLite ever opens it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise NotFoundError(msg("Vault file {path} does not exist.", path=path)) from None
    except OSError as exc:
        raise VaultError(msg("Cannot read {file_name}: {strerror}.", file_name=path.name, strerror=exc.strerror), code=ErrorCode.VAULT_UNREADABLE) from None
    if not stat.S_ISREG(info.st_mode):
        raise VaultError(msg("{file_name} is not a regular file, so it is not a Memories vault.",
                             file_name=path.name))
    with _LIVE_LOCK:
        if (info.st_dev, info.st_ino) in _LIVE:
            return  # open for writing here: reading it another way would drop SQLite's locks
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise VaultError(msg("Cannot read {file_name}: {strerror}.", file_name=path.name, strerror=exc.strerror), code=ErrorCode.VAULT_UNREADABLE) from None
    if head != _SQLITE_MAGIC or info.st_size < 512:
        raise VaultError(msg("{file_name} is not a Memories vault (not an SQLite database); it was left "
                             "untouched.", file_name=path.name))


def connect_readonly(path: Path) -> sqlite3.Connection:
    _check_sqlite_file(path)
    uri = "file:" + urllib.parse.quote(os.fsencode(path.resolve())) + "?mode=ro"
    with sqlite_errors(path):
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)


def connect_readwrite(path: Path) -> sqlite3.Connection:
    """The unlock/create connection: WAL, synchronous=FULL, secure_delete."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False,
                           factory=_LiveConnection)
    try:
        _remember_live(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        conn.close()
        raise vault_error_from(exc, path) from None
    except OSError:
        conn.close()
        raise
    return conn


def read_header(path: Path) -> Header:
    """Read and sanity-check the clear header without any key, read-only. Refuses foreign/newer files."""
    conn = connect_readonly(path)
    try:
        return header_from(conn, path)
    finally:
        conn.close()


def latest_state(path: Path) -> tuple[int, bytes]:
    """(change counter, manifest) as last committed, read in a connection of its own."""
    conn = connect_readonly(path)
    try:
        with sqlite_errors(path):
            row = conn.execute("SELECT change_counter, manifest FROM state").fetchone()
    finally:
        conn.close()
    if row is None or type(row[0]) is not int or not isinstance(row[1], bytes):
        raise TamperError(msg("{name}: the vault state row is missing or damaged.", name=path.name))
    return row[0], row[1]


def scan_vault_file(path: Path) -> tuple[Header, int]:
    """Header and number of distinct records (for `vault list`), in one read-only open."""
    conn = connect_readonly(path)
    try:
        header = header_from(conn, path)
        with sqlite_errors(path):
            count = conn.execute("SELECT COUNT(DISTINCT record_id) FROM records").fetchone()[0]
        return header, int(count)
    finally:
        conn.close()


def header_from(conn: sqlite3.Connection, path: Path) -> Header:
    try:
        row = conn.execute(
            "SELECT magic, format, vault_id, name, kdf, salt, wrapped_key, created, checksum FROM header"
        ).fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if isinstance(exc, sqlite3.OperationalError) and ("no such table" in str(exc) or "no such column" in str(exc)):
            raise VaultError(
                msg("{file_name} is not a Memories vault (no vault header); refusing to open or change it.",
                    file_name=path.name)
            ) from None
        raise vault_error_from(exc, path) from None
    if row is None or row[0] != MAGIC:
        raise VaultError(msg("{file_name} is not a Memories vault; refusing to open or change it.",
                             file_name=path.name))
    if type(row[1]) is not int or row[1] > FORMAT_VERSION:
        raise VaultError(
            msg("{file_name} was written by a newer version of Memories (format {found!r}; this version reads "
                "format {format_version}). Upgrade Memories to open it.",
                file_name=path.name, found=row[1], format_version=FORMAT_VERSION)
        )
    if not (isinstance(row[2], str) and isinstance(row[3], str) and isinstance(row[4], (str, bytes))
            and isinstance(row[5], bytes) and isinstance(row[6], bytes) and isinstance(row[7], str)
            and isinstance(row[8], bytes)):
        raise TamperError(msg("{file_name}: the vault header is damaged (a field has the wrong type).",
                              file_name=path.name))
    try:
        kdf = KdfParams.from_dict(json.loads(row[4]))
    except (TypeError, ValueError, RecursionError):
        raise TamperError(msg("{file_name}: the vault header is damaged (unreadable KDF parameters).",
                              file_name=path.name)) from None
    header = Header(vault_id=row[2], name=row[3], format=row[1], kdf=kdf, salt=row[5],
                    wrapped_key=row[6], created=row[7])
    try:
        checksum = header.checksum()
    except UnicodeEncodeError:
        raise TamperError(msg("{file_name}: the vault header is damaged (invalid text).", file_name=path.name)) from None
    if checksum != row[8]:
        raise TamperError(msg("{file_name}: the vault header is damaged or was edited (checksum mismatch).",
                              file_name=path.name))
    return header


@dataclass(frozen=True)
class VaultProblem(Jsonable):
    """A `*.mvault` file that is not a usable vault, reported beside the good ones."""

    file: str
    code: str
    message: str
    # the message in a form each front end shows in its own language (not printed in --json)
    localizable: dict[str, object] | None = field(default=None, compare=False, repr=False,
                                               metadata=json_meta(wire_only=True))

    def localized(self) -> str:
        shown = Message.from_wire(self.localizable)
        return localized(shown) if shown is not None else self.message


def scan_folder(folder: Path, suffix: str) -> tuple[list[tuple[Path, Header, int]], list[VaultProblem]]:
    """Every `*<suffix>` file in `folder`, read-only: the vaults, and the files that are not
    (each with its error). Hidden files (vaults being created) are skipped."""
    found: list[tuple[Path, Header, int]] = []
    problems: list[VaultProblem] = []
    try:
        paths = sorted(p for p in folder.iterdir() if p.name.endswith(suffix) and not p.name.startswith("."))
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise VaultError(msg("Cannot list {folder}: {strerror}.", folder=folder, strerror=exc.strerror), code=ErrorCode.VAULT_UNREADABLE) from None
    for path in paths:
        try:
            header, count = scan_vault_file(path)
        except (VaultError, NotFoundError) as exc:
            problems.append(VaultProblem(path.name, exc.code, exc.message,
                                         exc.localizable.to_wire() if exc.localizable else None))
            continue
        found.append((path, header, count))
    return _without_copies(found, problems, suffix)


def _without_copies(found: list[tuple[Path, Header, int]], problems: list[VaultProblem],
                    suffix: str) -> tuple[list[tuple[Path, Header, int]], list[VaultProblem]]:
    """One entry per vault id: a copied vault file (same id, another file name) would make the
    vault's name ambiguous. The file named after the id is used, else the first by name; the
    others are reported as copies and left as they are."""
    by_id: dict[str, list[tuple[Path, Header, int]]] = {}
    for item in found:
        by_id.setdefault(item[1].vault_id, []).append(item)
    kept: list[tuple[Path, Header, int]] = []
    for vault_id, items in by_id.items():
        items.sort(key=lambda item: (item[0].name != f"{vault_id}{suffix}", item[0].name))
        first = items[0]
        kept.append(first)
        for path, header, _count in items[1:]:
            copy = msg("{file_name} holds vault {vault_id} ({vault_name!r}), the same vault as {used}, which is "
                       "the one used. Keep the copy outside the vaults folder (e.g. as a backup).",
                       file_name=path.name, vault_id=vault_id, vault_name=header.name, used=first[0].name)
            problems.append(VaultProblem(path.name, "vault_duplicate", str(copy), copy.to_wire()))
    kept.sort(key=lambda item: item[0].name)
    problems.sort(key=lambda p: p.file)
    return kept, problems
