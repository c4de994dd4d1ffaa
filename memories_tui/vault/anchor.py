"""Rollback detection: the newest state seen of each vault, remembered in two places.

The keyed manifest proves a vault file is internally consistent, but a whole file copied
back from an older backup is consistent too. So every home keeps, per vault, an anchor: the
highest change counter and its manifest MAC seen here, itself MAC-ed with a key derived from
the vault key (so it cannot be forged without the passphrase). A second copy lives outside
the home, in the platform's per-user state folder (state_folder.py), keyed by vault and home:
putting back an old vault file *and* the home's old anchor (a sync tool or a restore of the
whole home does that) still meets the newer copy there. A vault whose state is older than
either copy (a lower counter, or the same counter with another manifest: two copies that
went different ways) fails with `vault_rolled_back`, naming both states. A deliberate
restore, or unlocking with `accept_rollback`, moves both copies to the file's state.

What it cannot see: a place that has never seen the vault (a fresh home on a new machine,
the home and the state folder both deleted or both put back from the same old copy) trusts
the first state it sees; and a copy with *more* changes than the anchors is accepted even if
it went another way (counters only grow, so "newer" is all a counter can tell).
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

from ..errors import ErrorCode, HomeError, RollbackError, TamperError
from ..i18n import Message, msg
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
    seen: str  # when this state was first seen here (UTC)
    home_tag: str = ""  # outside the home: which home this copy belongs to (bound into the MAC)

    def mac(self, keys: VaultKeys) -> bytes:
        if not self.home_tag:  # the home's own anchors, as every earlier version wrote them
            data = crypto.length_prefixed("anchor/v1", self.vault_id, self.counter, self.manifest, self.seen)
        else:
            data = crypto.length_prefixed("anchor/v1/outside", self.home_tag, self.vault_id, self.counter,
                                          self.manifest, self.seen)
        return crypto.mac(keys.anchor, data)

    @property
    def state(self) -> str:
        return state_name(self.counter, self.manifest)

    def newer_than(self, counter: int, manifest: bytes) -> bool:
        """The state (counter, manifest) is older than this anchor: a lower counter, or the
        same counter reached along another way (another manifest)."""
        return counter < self.counter or (counter == self.counter and bytes(manifest) != self.manifest)


class AnchorStore:
    """One folder of anchors (`<vault_id>.json`, or `<vault_id>-<home_tag>.json` outside the
    home), folder 0700, files 0600, each MAC-ed with its vault's anchor key."""

    def __init__(self, folder: Path, *, home_tag: str = "") -> None:
        self.folder = folder
        self.home_tag = home_tag

    def path(self, vault_id: str) -> Path:
        return self.folder / (f"{vault_id}-{self.home_tag}.json" if self.home_tag else f"{vault_id}.json")

    def read(self, keys: VaultKeys) -> Anchor | None:
        """The vault's anchor, checked with its key; None when there is none here."""
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
        except (ValueError, RecursionError):
            if self.home_tag:
                return None  # torn by a crash (written without fsync): as good as deleted, see write()
            data = None
        try:
            anchor = Anchor(vault_id=data["vault_id"], counter=data["counter"],
                            manifest=bytes.fromhex(data["manifest"]), seen=data["seen"], home_tag=self.home_tag)
            ok = (data["format"] == ANCHOR_FORMAT and anchor.vault_id == keys.vault_id
                  and type(anchor.counter) is int and isinstance(anchor.seen, str)
                  and bytes.fromhex(data["mac"]) == anchor.mac(keys))
        except (ValueError, KeyError, TypeError, RecursionError):
            ok = False
        if not ok or len(raw) > MAX_ANCHOR_BYTES:
            raise TamperError(
                msg("The rollback anchor {path} does not verify with this vault's key: it was altered, or it "
                    "belongs to another vault with the same id. Unlock with --accept-rollback to trust the vault "
                    "file's current state (and write a new anchor).", path=path), code=ErrorCode.ANCHOR_INVALID)
        return anchor

    def write(self, keys: VaultKeys, counter: int, manifest: bytes) -> Anchor:
        """Written after the vault's commit; outside the home without an fsync, which would
        double the cost of every commit. A crash can then leave that copy older than the vault
        (harmless) or torn (read as missing, like a deleted one; the home's copy still holds)."""
        anchor = Anchor(keys.vault_id, counter, bytes(manifest), _now(), self.home_tag)
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
                if not self.home_tag:  # the copy outside the home skips the fsync (docstring)
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise HomeError(self._unwritable(exc.strerror)) from None
        return anchor

    def _unwritable(self, strerror: str | None) -> Message:
        if self.home_tag:
            return msg("Cannot record the vault's state in {folder}: {strerror}. Rollback detection keeps a copy "
                       "there, outside the home; make that folder writable or point MEMORIES_STATE_DIR at one "
                       "that is.", folder=self.folder, strerror=strerror)
        return msg("Cannot record the vault's state in {folder}: {strerror}. Rollback detection needs "
                   "that folder to be writable.", folder=self.folder, strerror=strerror)


class AnchorBook:
    """A home's anchors (`<home>/anchors`) and, when given, their copy outside the home."""

    def __init__(self, folder: Path, outside: AnchorStore | None = None) -> None:
        self.folder = folder
        self.stores = [AnchorStore(folder)] + ([outside] if outside is not None else [])
        self._lock = threading.Lock()

    def path(self, vault_id: str) -> Path:
        return self.stores[0].path(vault_id)

    def read(self, keys: VaultKeys) -> Anchor | None:
        """The home's own anchor of the vault (None when it has none)."""
        return self.stores[0].read(keys)

    def newest(self, keys: VaultKeys) -> Anchor | None:
        """The newest state remembered anywhere (highest counter), checked with the key."""
        found = [a for store in self.stores if (a := store.read(keys)) is not None]
        return max(found, key=lambda a: a.counter, default=None)

    def write(self, keys: VaultKeys, counter: int, manifest: bytes) -> None:
        """Every copy set to this state (a deliberate restore); call inside `locked()`."""
        for store in self.stores:
            store.write(keys, counter, manifest)

    def confirm(self, keys: VaultKeys, counter: int, manifest: bytes, *, name: str = "", accept: bool = False,
                latest: Callable[[], tuple[int, bytes]] | None = None) -> bool:
        """Check the state (counter, manifest) against every copy and move each copy up to it.
        Raises RollbackError when a copy remembers a newer state; with `accept` the state
        replaces every copy. `latest()` reads the file's newest committed state: a reader
        whose snapshot began before another process committed is behind, not rolled back
        (False then, and nothing is written). Sync does not call this: a vault behind its own
        chain in the target is refused by the sync itself (sync_device_behind)."""
        with self.locked():
            if accept:
                self.write(keys, counter, manifest)
                return True
            found = [(store, store.read(keys)) for store in self.stores]
            for _store, anchor in sorted(found, key=lambda pair: pair[1].counter if pair[1] else -1, reverse=True):
                if anchor is None or not anchor.newer_than(counter, manifest):
                    continue
                if latest is not None and _not_behind(latest(), anchor):
                    return False  # an older snapshot of a file that has moved on; its next read sees the new state
                raise _rolled_back(keys, name, counter, manifest, anchor)
            for store, anchor in found:
                if anchor is None or counter > anchor.counter:
                    store.write(keys, counter, manifest)
            return True

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time reads-compares-writes anchors (two writers must not let the
        older state win); threads of this process queue on a lock of their own too. The copy
        outside the home is keyed by home, so this home's lock covers it."""
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
    the anchors forward and refuses a state older than any of them."""

    def __init__(self, book: AnchorBook, accept: bool) -> None:
        self.book = book
        self.accept = accept  # the first state seen replaces the anchors (restore, --accept-rollback)
        self._confirmed: tuple[int, bytes] | None = None

    def seen(self, keys: VaultKeys, counter: int, manifest: bytes, *, name: str = "",
             latest: Callable[[], tuple[int, bytes]] | None = None) -> None:
        if self._confirmed is not None and self._confirmed == (counter, manifest):
            return
        if not self.book.confirm(keys, counter, manifest, name=name, accept=self.accept, latest=latest):
            return
        self.accept = False
        self._confirmed = (counter, bytes(manifest))


def _rolled_back(keys: VaultKeys, name: str, counter: int, manifest: bytes, anchor: Anchor) -> RollbackError:
    what = msg("Vault {name} ({vault_id})", name=name, vault_id=keys.vault_id) if name \
        else msg("Vault {vault_id}", vault_id=keys.vault_id)
    current = state_name(counter, manifest)
    if counter == anchor.counter:  # diverged: neither is older, and neither may silently win
        return RollbackError(
            msg("{what} went another way than this home has seen: the file is at {current}, but {seen_state} "
                "was seen here on {seen}, at the same change count with other contents. Two copies of it "
                "were changed apart (an old copy put back and written to, or a copy changed elsewhere). "
                "Restore the copy you want with `memories vault restore`, or accept this one with "
                "--accept-rollback.", what=what, current=current, seen_state=anchor.state, seen=anchor.seen))
    return RollbackError(
        msg("{what} is at an older state than this home has seen: the file is at {current}, but {seen_state} "
            "was seen here on {seen}. The file may have been replaced by an older copy. Restore the "
            "copy you want with `memories vault restore`, or accept this state with --accept-rollback.",
            what=what, current=current, seen_state=anchor.state, seen=anchor.seen))


def _not_behind(state: tuple[int, bytes], anchor: Anchor) -> bool:
    counter, manifest = state
    return counter > anchor.counter or (counter, bytes(manifest)) == (anchor.counter, anchor.manifest)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _private_folder(folder: Path) -> None:
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
