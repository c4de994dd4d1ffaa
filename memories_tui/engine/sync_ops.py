"""The engine's sync methods: add a target, sync now, status, join, devices (conflicts:
conflict_ops.py). `Engine` inherits them; the work is done in memories_tui/sync/."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..errors import CancelledError, ErrorCode, InputRefusedError, MemoriesError, PolicyError, SyncError, UsageError
from ..i18n import msg
from ..sync.registry import Registry, TargetEntry
from ..sync.types import DeviceInfo, JoinReport, SyncProgress
from .passphrase_wrap import SINCE_KEY, adopt_passphrase, republish_if_behind, since

if TYPE_CHECKING:
    from ..sync.targets import Target, TargetSpec
    from ..sync.types import SyncReport
    from ..sync.watched import WatchedTarget
    from ..vault.store import UnlockedVault
    from .parts import EngineParts
    from .sync_watch import SyncScheduler
    from .types import VaultInfo


class SyncOperations:
    """Mixed into `Engine`; every method works on the engine's home and open vaults."""

    def _sync_engine(self) -> EngineParts:
        return cast("EngineParts", self)

    @property
    def _registry(self) -> Registry:
        return Registry(self._sync_engine().home)

    def _unlocked(self, vault_id: str) -> UnlockedVault:
        return self._sync_engine()._state.vaults.get(vault_id).vault

    def _open_target(self, spec: TargetSpec, vault: UnlockedVault) -> Target:
        from ..sync.targets import open_target

        if not spec.on_this_machine and vault.settings().get("device_only", False):
            raise PolicyError(msg(
                "Vault {name} is device-only: its data never goes to a machine other than this one, and {target} "
                "is not on this machine. Use a folder (or an S3 or WebDAV server on 127.0.0.1), or turn device-only off "
                "with `memories vault policy`.", name=vault.name, target=spec.url))
        return open_target(spec)

    def sync_add(self, vault_id: str, url: str, passphrase: str | None = None, *, endpoint_url: str | None = None,
                 cwd: Path | None = None) -> TargetEntry:
        """Sync this vault with a folder or an S3 bucket; puts the join record there, the vault
        key wrapped under the passphrase (as it was wrapped at unlock: `passphrase` is needed
        only once it changed since, sync_passphrase_needed). A target of another vault is refused."""
        from ..sync import join
        from ..vault.header import header_from
        from .sync_place import spec_outside_home

        vault = self._unlocked(vault_id)
        spec = spec_outside_home(url, endpoint_url, cwd, self._sync_engine()._files)
        target = self._open_target(spec, vault)
        record = join.check_same_vault(target, vault.vault_id)
        if record is None and _has_synced(vault):  # its devices' changes are in a target this one is not a copy of
            raise SyncError(msg(
                "{target} does not hold vault {name}, which has synced through another target: its devices' changes "
                "are there. To move to {target}, copy everything the old target holds into it, then run `memories "
                "sync add` with it on each device. To stop syncing here: `memories sync remove {name}` (in the TUI: "
                "Sync devices, then x).",
                target=spec.url, name=vault.name), code=ErrorCode.SYNC_TARGET_EXISTS)
        adopted = record is not None and adopt_passphrase(vault, record)
        if not adopted:  # a newer passphrase set on another device is taken, never overwritten
            header = vault.sync_read(lambda conn, _keys: header_from(conn, vault.path))  # as the file has it now
            join.publish(target, header, passphrase, vault.keys, bool(vault.settings().get("device_only", False)),
                         since(vault))
        return self._registry.add(TargetEntry(vault.vault_id, spec.url, spec.endpoint_url,  # the same again: as it was
                                              passphrase_adopted=now_stamp() if adopted else None))

    def sync_remove(self, ref: str) -> TargetEntry:
        """Stop syncing vault `ref` on this device (what its target was). The target, the other
        devices and the vault's own sync state are left as they are: adding the same target
        again (or a copy of it) goes on from where this device stopped."""
        info = self._sync_engine()._files.resolve(ref)
        gone = self._registry.remove(info.vault_id)
        if gone is None:
            raise UsageError(msg("Vault {name} has no sync target on this device.", name=info.name),
                             code=ErrorCode.SYNC_NO_TARGET)
        return gone

    def refresh_join_record(self, ref: str, passphrase: str) -> None:
        """After a passphrase change: the target's join record wraps the key under the new one.
        A target that cannot be reached now is a clear error; the passphrase stays changed."""
        from ..sync import join
        from ..sync.targets import TargetSpec
        from ..vault.store import UnlockedVault

        engine = self._sync_engine()
        info = engine._files.resolve(ref)
        entry = self._registry.get(info.vault_id)
        if entry is None:
            return
        vault = UnlockedVault(info.path, passphrase, watcher=engine.anchors.watch())
        held = engine._state.vaults.peek(info.vault_id)
        if held is not None:  # open here too (the TUI, the daemon): its own syncs and `sync add` wrap for the
            held.vault.keys.join_wrap = vault.keys.join_wrap  # target under the new passphrase, as after an unlock
        try:
            settings = vault.settings()
            settings[SINCE_KEY] = max(int(time.time() * 1000), since(vault) + 1)
            vault.set_settings(settings)  # the passphrase set now is newer than any the target holds
            target = self._open_target(TargetSpec(entry.url, entry.endpoint_url), vault)
            join.publish(target, vault.header, passphrase, vault.keys, bool(settings.get("device_only", False)),
                         settings[SINCE_KEY])
        except MemoriesError as exc:
            raise SyncError(msg(
                "The sync target {target} still has the old passphrase: {problem} The next sync of {name} puts the "
                "new one there, so that new devices join with it and the others take it (if another process, such "
                "as the daemon, held {name} unlocked before this change, run `memories sync add {name} {target}` "
                "instead).", target=entry.url, problem=exc, name=info.name),
                code=ErrorCode.SYNC_JOIN_RECORD_STALE) from None
        finally:
            vault.close()

    def sync_now(self, vault_id: str, *, progress: Callable[[SyncProgress], None] | None = None,
                 cancel: threading.Event | None = None) -> SyncReport:
        """Push this device's changes and pull the others' now; the vault is left unchanged
        when anything in the target fails its checks."""
        from ..sync import join
        from ..sync.exclusive import one_sync_at_a_time
        from ..sync.run import run_sync
        from ..sync.targets import TargetSpec

        vault = self._unlocked(vault_id)
        entry = self._registry.get(vault.vault_id)
        if entry is None:
            raise UsageError(msg("Vault {name} does not sync on this device: `memories sync add {name} TARGET` "
                                 "(a folder, s3://BUCKET/PREFIX or a WebDAV https:// URL).", name=vault.name),
                             code=ErrorCode.SYNC_NO_TARGET)
        try:
            watched = self._watched(self._open_target(TargetSpec(entry.url, entry.endpoint_url), vault), vault,
                                    progress, cancel)
            record = join.check_same_vault(watched, vault.vault_id)
            with one_sync_at_a_time(vault.path, cancel):
                settings = self._sync_engine().config.sync
                report = run_sync(vault, watched, cancel=cancel, compact_after=settings.compact_after,
                                  hold_days=settings.hold_days, device_name=device_name(settings.device_name))
                adopted = record is not None and adopt_passphrase(vault, record)
                if record is not None and not adopted:
                    republish_if_behind(watched, vault, record)
        except CancelledError:
            raise  # the user's choice, not the target's last error
        except MemoriesError as exc:
            if exc.code == ErrorCode.VAULT_LOCKED:
                raise  # locked while it ran: the user's doing, not the target's last error
            self._registry.put(replace(entry, last_error=exc.code))
            if exc.code == ErrorCode.SYNC_DEVICE_BEHIND:
                raise SyncError(msg(
                    "The sync target holds changes this device made that vault {name} does not have: it was "
                    "restored from a backup. Run `memories sync {name} --as-new-device` to go on as a new device; "
                    "the changes made after the backup come back from the target, nothing is lost.",
                    name=vault.name), code=ErrorCode.SYNC_DEVICE_BEHIND) from None
            raise
        self._registry.put(replace(entry, last_sync=now_stamp(), last_error=None, conflicts=report.conflicts,
                                   passphrase_adopted=now_stamp() if adopted else entry.passphrase_adopted,
                                   counter_at_sync=vault.change_counter(), left=report.left, pending=None))
        return replace(report, passphrase_adopted=adopted)

    def sync_new_device(self, vault_id: str) -> str:
        """After a restore from a backup (sync_device_behind): go on under a new device id,
        reading the old one's chain as another device's (sync/renew.py). The new id."""
        from ..sync.exclusive import one_sync_at_a_time
        from ..sync.renew import as_new_device

        vault = self._unlocked(vault_id)
        target = self._target_of(vault)
        with one_sync_at_a_time(vault.path):
            return as_new_device(vault, target)[1]

    def has_sync_target(self, vault_id: str) -> bool:
        """Whether this unlocked vault syncs with a target (asked by the background sync)."""
        return self._registry.get(self._unlocked(vault_id).vault_id) is not None

    def local_change_mark(self, vault_id: str) -> int:
        """The vault's change counter: it moves with every local write (and every pull)."""
        return self._unlocked(vault_id).change_counter()

    def unlock_serial(self, vault_id: str) -> int:
        """A number that differs for each unlock of the vault: the background sync catches up
        after a lock and unlock even when it never saw the vault locked."""
        return self._sync_engine()._state.vaults.get(vault_id).serial

    def has_local_changes(self, vault_id: str) -> bool:
        """Whether a record was written or deleted here since the last sync read the vault (the
        sync's own writes move the change counter too, but are not changes to push)."""
        return self.sync_pending(vault_id) > 0

    def background_sync(self, vault_id: str, cancel: threading.Event | None = None) -> None:
        """A sync started by the resident engine (sync_watch.py): as `sync_now`, its error is
        kept as the target's last error; `cancel` is set when the engine stops."""
        self.sync_now(vault_id, cancel=cancel)

    def watch_sync(self) -> SyncScheduler | None:
        """Start syncing unlocked vaults with a target in the background (for a resident engine);
        None when `[sync] background = false`. Stop it before locking for good."""
        from .sync_watch import SyncedEngine, SyncScheduler

        settings = self._sync_engine().config.sync
        if not settings.background:
            return None
        return SyncScheduler(cast("SyncedEngine", self), every_minutes=settings.every_minutes).start()

    def sync_status(self, vault_id: str | None = None, *, count_records: bool = True) -> list[TargetEntry]:
        """The targets of this home's vaults (all, or one), with their last sync; no passphrase needed.
        The records to push are counted for the vaults this engine holds (`count_records`)."""
        from ..sync.registry import with_pending

        entries, files = self._registry.entries(), self._sync_engine()._files
        if vault_id is None:
            chosen = sorted(entries.values(), key=lambda e: e.vault_id)
        else:
            info = files.resolve(vault_id)
            chosen = [entries[info.vault_id]] if info.vault_id in entries else []
        held = set(self._sync_engine()._state.vaults.ids()) if count_records else set()
        return [replace(with_pending(e, files.resolve),
                        pending_records=self._pending_here(e.vault_id) if e.vault_id in held else None) for e in chosen]

    def _pending_here(self, vault_id: str) -> int | None:
        try:
            return self.sync_pending(vault_id)
        except MemoriesError:  # locked a moment ago: the count of writes stands in, as for any locked vault
            return None

    def sync_pending(self, vault_id: str) -> int:
        """How many records the next push sends: added, edited or deleted here since the last sync
        (from the vault's rows, no record opened), and those a failed upload left waiting."""
        from ..sync.run import records_to_push

        return records_to_push(self._unlocked(vault_id))

    def sync_join(self, url: str, passphrase: str, *, endpoint_url: str | None = None, cwd: Path | None = None,
                  name: str | None = None, progress: Callable[[SyncProgress], None] | None = None,
                  cancel: threading.Event | None = None) -> JoinReport:
        """Make this home a device of the vault in the target: the passphrase unwraps the key
        there, a vault file of the same vault is made here (named `name`, else as it is named
        in the target), then everything is pulled. `cancel` stops it as ctrl+c does: before the
        vault file is made nothing is left; after, the vault keeps what was committed."""
        from ..sync import join
        from ..sync.policy import seeded
        from ..sync.sealing import JOIN_NAME
        from ..sync.targets import open_target
        from ..sync.waiting import wait_for
        from ..vault import crypto
        from ..vault.store import create_vault_file
        from .sync_place import spec_outside_home
        from .vaults import VAULT_SUFFIX

        engine = self._sync_engine()
        spec = spec_outside_home(url, endpoint_url, cwd, engine._files)
        target = open_target(spec)
        record = wait_for(lambda: join.read_record(target), where=spec.url, name=JOIN_NAME,
                          cancel=cancel)  # ctrl+c, `cancel` and a deadline end it
        if record is None:
            raise SyncError(msg("{target} holds no Memories vault to join (no join record). Run `memories sync add` "
                                "on a device that has the vault first.", target=spec.url), code=ErrorCode.SYNC_NOTHING_TO_JOIN)
        files = engine._files
        here = next((v for v in files.list() if v.vault_id == record.vault_id), None)
        if here is not None:  # joined before, or a join stopped part-way: a sync finishes it
            raise SyncError(msg("This home already has this vault, {name} ({vault_id}); sync it to bring it up to "
                                "date: `memories sync {name}`, or open it in the TUI and Sync now.", name=here.name,
                                vault_id=record.vault_id),
                            code=ErrorCode.SYNC_ALREADY_JOINED)
        joined = join.open_record(record, passphrase)
        try:
            if cancel is not None and cancel.is_set():  # ctrl+c while the passphrase was checked
                raise CancelledError(msg("Join cancelled; nothing was made here."))
            if joined.device_only and not spec.on_this_machine:
                raise PolicyError(msg("The vault in {target} is device-only; it cannot be joined through a target "
                                      "that is not on this machine.", target=spec.url))
            try:
                name = files.check_new_name(name or joined.name)
            except MemoriesError as exc:
                if exc.code != ErrorCode.VAULT_EXISTS or name is not None:
                    raise
                raise InputRefusedError(msg("This home already has a vault named {name!r}; join this one under another "
                                     "name: `memories sync join {target} --as NAME`.", name=joined.name,
                                     target=spec.url), code=ErrorCode.VAULT_EXISTS) from None
            files.init_home()
            tmp = files.folder / f".join-{os.getpid()}-{time.monotonic_ns()}{VAULT_SUFFIX}"
            create_vault_file(tmp, name, passphrase, device_only=joined.device_only,
                              joined=(joined.vault_id, joined.vault_key))
        finally:
            crypto.zero(joined.vault_key)
        final = files.folder / f"{joined.vault_id}{VAULT_SUFFIX}"
        os.replace(tmp, final)
        self._registry.put(TargetEntry(joined.vault_id, spec.url, spec.endpoint_url))
        info: VaultInfo = engine._files.resolve(joined.vault_id)
        engine.unlock(info.vault_id, passphrase)
        vault = self._unlocked(info.vault_id)
        settings = seeded(vault.settings())  # the policy the join record gave, older than any change
        settings[SINCE_KEY] = join.sealed_since(record, vault.keys)  # the passphrase it joined with
        vault.set_settings(settings)
        try:
            report = self.sync_now(info.vault_id, progress=progress, cancel=cancel)
        except CancelledError:  # the vault is here now: say so, and how to go on
            raise CancelledError(msg("Join cancelled: vault {name} was made here with what was received so far; "
                                     "`memories sync {name}` brings the rest.", name=info.name)) from None
        except MemoriesError as exc:
            raise type(exc)(msg("{problem} The join had made vault {name} here already, with what it received; "
                                "`memories sync {name}` goes on from there.", problem=exc, name=info.name),
                            code=exc.code) from None
        return JoinReport(info.vault_id, name, final, report)

    def sync_devices(self, vault_id: str) -> list[DeviceInfo]:
        """The devices that write to the vault's target, from their authenticated heads; a
        forgotten device is left out until it writes again."""
        from ..sync.run import load_state
        from ..sync.sealing import DEVICES, Head, device_ids, forget_ad, forgotten_name, head_name, unseal

        vault = self._unlocked(vault_id)
        target = self._target_of(vault)
        state = load_state(vault)
        names = target.list(DEVICES)
        devices = [d for d in device_ids(names) if head_name(d) in names]  # a stray folder is nobody's chain
        out = []
        for device in devices:
            blob = target.get(head_name(device))
            if blob is None:
                continue
            head = Head.opened(vault.keys.sync_aead("head"), vault.vault_id, device, blob)
            marker = target.get(forgotten_name(device))
            if marker is not None and device != state.device:
                forgot_at = unseal(vault.keys.sync_aead("head"), marker, forget_ad(vault.vault_id, device),
                                   f"The forget mark of device {device}")
                if isinstance(forgot_at, dict) and forgot_at.get("seq", -1) >= head.seq:
                    continue
            read = state.own_seq if device == state.device else state.seen.get(device, (0, ""))[0]
            out.append(DeviceInfo(device, head.seq, head.time, device == state.device, read, head.name))
        return out

    def sync_forget(self, vault_id: str, device: str) -> DeviceInfo:
        """Leave a device out of the target's list (a lost laptop, an old home): its changes
        stay; a sealed mark names how far it had written, so if it writes again it is back.
        A device that read its whole chain carries it in its next snapshot, then deletes its
        objects (sync/compaction.py)."""
        from ..sync.sealing import forget_ad, forgotten_name, seal

        vault = self._unlocked(vault_id)
        known = self.sync_devices(vault_id)
        matches = [d for d in known if d.device == device] or [
            d for d in known if device and (d.device.startswith(device) or d.name.casefold() == device.casefold())]
        if not matches:
            raise UsageError(msg("Device {device} does not sync vault {name}; `memories sync devices {name}` lists "
                                 "them.", device=device, name=vault.name), code=ErrorCode.SYNC_UNKNOWN_DEVICE)
        if len(matches) > 1:
            raise UsageError(msg("{count} devices of vault {name} answer to {device}; give the id that `memories sync "
                                 "devices {name}` shows.", count=len(matches), device=device, name=vault.name),
                             code=ErrorCode.SYNC_UNKNOWN_DEVICE)
        found = matches[0]
        if found.this_device:
            raise UsageError(msg("Device {device} is this device; forget it from another one.", device=found.device),
                             code=ErrorCode.SYNC_FORGET_SELF)
        target = self._target_of(vault)
        target.put(forgotten_name(found.device), seal(vault.keys.sync_aead("head"), {"seq": found.bundles},
                                                      forget_ad(vault.vault_id, found.device)))
        return found

    def _target_of(self, vault: UnlockedVault) -> Target:
        from ..sync.targets import TargetSpec

        entry = self._registry.get(vault.vault_id)
        if entry is None:
            raise UsageError(msg("Vault {name} does not sync on this device: `memories sync add {name} TARGET` "
                                 "(a folder, s3://BUCKET/PREFIX or a WebDAV https:// URL).", name=vault.name),
                             code=ErrorCode.SYNC_NO_TARGET)
        return self._watched(self._open_target(TargetSpec(entry.url, entry.endpoint_url), vault), vault)

    @staticmethod
    def _watched(target: Target, vault: UnlockedVault, progress: Callable[[SyncProgress], None] | None = None,
                 cancel: threading.Event | None = None) -> WatchedTarget:
        """`target` read as a sync reads it: a lock of the vault (its keys raise once locked), ctrl+c
        and a deadline end a read the target holds back (waiting.py)."""
        from ..sync.watched import WatchedTarget

        return WatchedTarget(target, vault.keys, progress, cancel, check=lambda: vault.keys)


def device_name(configured: str | None) -> str:
    """The name this device's head carries: `[sync] device_name`, else the host name, on one
    line and within the length a head takes."""
    import socket

    from ..sync.sealing import MAX_NAME

    return " ".join((configured or socket.gethostname()).split())[:MAX_NAME]


def now_stamp() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _has_synced(vault: UnlockedVault) -> bool:
    """Whether this vault's sync state names a chain in a target: its own bundles uploaded, or
    other devices' it read (bundles committed but never uploaded go to whichever target comes)."""
    from ..sync.run import load_state

    state = load_state(vault)
    return state.own_seq > len(state.outbox) or bool(state.seen)
