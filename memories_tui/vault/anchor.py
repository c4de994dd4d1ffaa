"""Rollback detection: the home remembers the newest state it has seen of each vault.

The keyed manifest proves a vault file is internally consistent, but a whole file copied
back from an older backup is consistent too. So every home keeps, per vault, an anchor: the
highest change counter and its manifest MAC seen here, itself MAC-ed with a key derived from
the vault key (so it cannot be lowered or forged without the passphrase). A vault whose state
is older than its anchor (a lower counter, or the same counter with another manifest) fails
with `vault_rolled_back`, naming both states. A deliberate restore, or unlocking with
`accept_rollback`, moves the anchor to the file's state.

What it cannot see: a home that has never opened the vault (a fresh home, another machine,
a deleted `anchors/` folder) has no anchor, so the first state it sees is trusted; and a copy
with *more* changes than the anchor is accepted even if it went another way (counters only
grow, so "newer" is all a counter can tell).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import HomeError, RollbackError, TamperError
from ..i18n import msg
from . import crypto
from .keys import VaultKeys
from .verify import state_name

ANCHOR_FORMAT = 1
MAX_ANCHOR_BYTES = 4096


@dataclass(frozen=True)
class Anchor:
    vault_id: str
    counter: int
    manifest: bytes
    seen: str  # when this home first saw this state (UTC)

    def mac(self, keys: VaultKeys) -> bytes:
        return crypto.mac(keys.anchor, crypto.length_prefixed("anchor/v1", self.vault_id, self.counter,
                                                               self.manifest, self.seen))

    @property
    def state(self) -> str:
        return state_name(self.counter, self.manifest)


class AnchorBook:
    """The anchors of one home (`<home>/anchors/<vault_id>.json`, folder 0700, files 0600)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()

    def path(self, vault_id: str) -> Path:
        return self.folder / f"{vault_id}.json"

    def read(self, keys: VaultKeys) -> Anchor | None:
        """The vault's anchor, checked with its key; None when this home has none."""
        path = self.path(keys.vault_id)
        try:
            raw = path.read_bytes()[:MAX_ANCHOR_BYTES + 1]
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise HomeError(msg("Cannot read the rollback anchor {path}: {strerror}.",
                                path=path, strerror=exc.strerror)) from None
        try:
            data = json.loads(raw)
            anchor = Anchor(vault_id=data["vault_id"], counter=data["counter"],
                            manifest=bytes.fromhex(data["manifest"]), seen=data["seen"])
            ok = (data["format"] == ANCHOR_FORMAT and anchor.vault_id == keys.vault_id
                  and type(anchor.counter) is int and isinstance(anchor.seen, str)
                  and bytes.fromhex(data["mac"]) == anchor.mac(keys))
        except (ValueError, KeyError, TypeError, RecursionError):
            ok = False
        if not ok or len(raw) > MAX_ANCHOR_BYTES:
            raise TamperError(
                msg("The rollback anchor {path} does not verify with this vault's key: it was altered, or it "
                    "belongs to another vault with the same id. Unlock with --accept-rollback to trust the vault "
                    "file's current state (and write a new anchor).", path=path), code="anchor_invalid")
        return anchor

    def write(self, keys: VaultKeys, counter: int, manifest: bytes) -> Anchor:
        anchor = Anchor(keys.vault_id, counter, bytes(manifest), _now())
        data = {"format": ANCHOR_FORMAT, "vault_id": anchor.vault_id, "counter": counter,
                "manifest": anchor.manifest.hex(), "seen": anchor.seen, "mac": anchor.mac(keys).hex()}
        path = self.path(keys.vault_id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            _private_folder(self.folder)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise HomeError(msg("Cannot record the vault's state in {folder}: {strerror}. Rollback detection needs "
                                "that folder to be writable.", folder=self.folder, strerror=exc.strerror)) from None
        return anchor

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time reads-compares-writes anchors (two writers must not let the
        older state win); threads of this process queue on a lock of their own too."""
        with self._lock:
            _private_folder(self.folder)
            try:
                import fcntl
            except ImportError:  # Windows: no advisory locks here; the thread lock still holds
                yield
                return
            try:
                fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            except OSError as exc:
                raise HomeError(msg("Cannot lock {folder}: {strerror}.", folder=self.folder, strerror=exc.strerror)) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def watch(self, *, accept: bool = False) -> StateWatcher:
        return StateWatcher(self, accept)


class StateWatcher:
    """Bound to one open vault: told every state the vault verified or committed, it moves
    the anchor forward and refuses a state older than the anchor."""

    def __init__(self, book: AnchorBook, accept: bool) -> None:
        self.book = book
        self.accept = accept  # the first state seen replaces the anchor (restore, --accept-rollback)
        self._confirmed: tuple[int, bytes] | None = None

    def seen(self, keys: VaultKeys, counter: int, manifest: bytes, *, name: str = "",
             latest: Callable[[], tuple[int, bytes]] | None = None) -> None:
        """`latest()` reads the file's newest committed state: a reader whose snapshot began
        before another process committed (and moved the anchor) is behind, not rolled back."""
        if self._confirmed is not None and self._confirmed == (counter, manifest):
            return
        with self.book.locked():
            anchor = None if self.accept else self.book.read(keys)
            if anchor is None or counter > anchor.counter:
                self.book.write(keys, counter, manifest)
            elif (counter, bytes(manifest)) != (anchor.counter, anchor.manifest):
                if latest is not None and _not_behind(latest(), anchor):
                    return  # an older snapshot of a file that has moved on; its next read sees the new state
                what = msg("Vault {name} ({vault_id})", name=name, vault_id=keys.vault_id) if name \
                    else msg("Vault {vault_id}", vault_id=keys.vault_id)
                raise RollbackError(
                    msg("{what} is at an older state than this home has seen: the file is at {current}, but {seen_state} "
                        "was seen here on {seen}. The file may have been replaced by an older copy. Restore the "
                        "copy you want with `memories vault restore`, or accept this state with --accept-rollback.",
                        what=what, current=state_name(counter, manifest), seen_state=anchor.state, seen=anchor.seen))
        self.accept = False
        self._confirmed = (counter, bytes(manifest))


def _not_behind(state: tuple[int, bytes], anchor: Anchor) -> bool:
    counter, manifest = state
    return counter > anchor.counter or (counter, bytes(manifest)) == (anchor.counter, anchor.manifest)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _private_folder(folder: Path) -> None:
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
