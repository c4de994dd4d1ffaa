"""`memories sync …` (add a target, sync now, status, join) and `memories memory conflicts`.

`memories sync VAULT` is `memories sync now VAULT` (rewritten before parsing, see parser.py).
When the resident engine holds the vault it runs `sync now`, `devices`, `forget`, `memory
conflicts` and `memory resolve` (no passphrase); `sync status` needs none anyway. `sync add` runs
here and asks the passphrase: the join record wraps the vault key under it, and no engine keeps
a passphrase or the vault key itself, only keys derived from it.
"""

from __future__ import annotations

import difflib
import functools
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import CancelledError, ErrorCode, MemoriesError, NotFoundError, SyncError
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport
from .served_credentials import says_whose_credentials

if TYPE_CHECKING:
    import argparse

    from ..engine import SyncProgress, TargetEntry

T = TypeVar("T")
Verb = Callable[..., "argparse.ArgumentParser"]
SUBVERBS = ("add", "now", "status", "join", "devices", "forget", "remove")


def register(sub: Any, memory: Any, verb: Verb, group: Callable[..., Any]) -> None:
    sync = group(sub, "sync", _("Sync vaults between devices through a folder, an S3 bucket or a WebDAV server "
                                "(end-to-end encrypted)."),
                 "  memories sync add notes ~/Sync/memories\n  memories sync notes\n  memories sync status\n"
                 "  memories sync join ~/Sync/memories")
    p = verb(sync, "add", cmd_sync_add, _("Sync a vault with a folder (Syncthing, Dropbox, a NAS, a USB disk), "
                                          "s3://BUCKET/PREFIX or a WebDAV https:// URL (Nextcloud); puts the "
                                          "vault key there wrapped under the passphrase (asked unless the daemon "
                                          "or the TUI holds the vault unlocked)."),
             "memories sync add notes s3://my-bucket/memories --endpoint-url http://127.0.0.1:8333")
    p.add_argument("vault", metavar="VAULT_ID", help=_VAULT_HELP())
    p.add_argument("target", metavar="TARGET", help=_TARGET_HELP())
    p.add_argument("--endpoint-url", metavar="URL", help=_ENDPOINT_HELP())
    p = verb(sync, "now", cmd_sync_now, _("Push this device's changes and pull the others' now (also: "
                                          "`memories sync VAULT`). A bar on stderr counts the objects fetched, "
                                          "then sent. ctrl+c before the vault is written changes nothing; after "
                                          "it, the sync finishes sending, and ctrl+c again leaves at once (the "
                                          "next sync sends the rest)."), "memories sync notes")
    p.add_argument("vault", metavar="VAULT_ID", help=_VAULT_HELP())
    p.add_argument("--as-new-device", action="store_true",
                   help=_("after restoring the vault from a backup: go on under a new device id; the changes made "
                          "after the backup come back from the target"))
    p = verb(sync, "status", cmd_sync_status, _("Show each vault's sync target, last sync, changes waiting to be "
                                                "sent, last error and conflicts (no passphrase)."),
             "memories sync status --json", unlocks=False)
    p.add_argument("vault", metavar="VAULT_ID", nargs="?", help=_("one vault's name or id (default: every vault)"))
    p = verb(sync, "join", cmd_sync_join, _("Make this home a device of the vault in TARGET: asks its passphrase, "
                                            "then brings every record."),
             "memories sync join ~/Sync/memories\n  memories sync join s3://my-bucket/memories --endpoint-url "
             "https://ACCOUNT.r2.cloudflarestorage.com")
    p.add_argument("target", metavar="TARGET", help=_TARGET_HELP())
    p.add_argument("--endpoint-url", metavar="URL", help=_ENDPOINT_HELP())
    p.add_argument("--as", dest="as_name", metavar="NAME",
                   help=_("the vault's name in this home (default: its name on the other devices)"))
    p = verb(sync, "devices", cmd_sync_devices, _("List the devices that sync a vault: the name each gives itself "
                                                  "([sync] device_name, else its host name), how many bundles each "
                                                  "wrote, when it last wrote, how many this device has read."),
             "memories sync devices notes")
    p.add_argument("vault", metavar="VAULT_ID", help=_VAULT_HELP())
    p = verb(sync, "forget", cmd_sync_forget, _("Leave a device out of a vault's device list (a lost or retired "
                                                "one); its changes stay. It is listed again if it sends changes again."),
             "memories sync forget notes 3f2a9c0d")
    p.add_argument("vault", metavar="VAULT_ID", help=_VAULT_HELP())
    p.add_argument("device", metavar="DEVICE", help=_("its id, a unique start of it, or its name"))
    p = verb(sync, "remove", cmd_sync_remove, _("Stop syncing a vault on this device (no passphrase). The target and "
                                                "the other devices are unchanged; adding the same target again goes "
                                                "on from where this device stopped."),
             "memories sync remove notes", unlocks=False)
    p.add_argument("vault", metavar="VAULT_ID", help=_VAULT_HELP())
    p = verb(memory, "conflicts", cmd_memory_conflicts,
             _("List records edited on several devices at once: the vault shows the winner (the same on every "
               "device), the revisions that lost are kept and listed here."), "memories memory conflicts notes")
    p.add_argument("vault", metavar="VAULT_ID")
    p = verb(memory, "resolve", cmd_memory_resolve,
             _("End a record's conflict: keep the winner (or --keep REVISION, one the conflicts list shows, or a "
               "unique start of its id: a deletion deletes the record; or --keep-both: the other revisions become "
               "new records); the next sync ends it on every device."),
             "memories memory resolve notes 3f2a9c0d1e2b4a5f --keep-both")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--keep", metavar="REVISION",
                       help=_("the kept revision to keep instead of the winner (a unique start of its id is enough; "
                              "keeping a deletion deletes the record)"))
    which.add_argument("--keep-both", action="store_true",
                       help=_("keep the winner and make each other revision a new record (a conflict copy)"))


def sync_argv(argv: list[str]) -> list[str]:
    """`memories [options] sync VAULT …` → `memories [options] sync now VAULT …`."""
    takes_value = {"--home", "--config", "--lang", "--passphrase-file", "--endpoint-url"}
    words = iter(enumerate(argv))
    command_seen = False
    for index, word in words:
        if word == "--":
            return argv
        if word in takes_value:
            next(words, None)
            continue
        if word.startswith("-"):
            continue
        if not command_seen:
            if word != "sync":
                return argv
            command_seen = True
            continue
        return argv if word in SUBVERBS else [*argv[:index], "now", *argv[index:]]
    return argv


def _VAULT_HELP() -> str:  # noqa: N802 - a sentence, translated when shown
    return _("the vault's name or id")


def _TARGET_HELP() -> str:  # noqa: N802
    return _("a folder (an empty one of its own, e.g. ~/Sync/memories), s3://BUCKET/PREFIX, or a WebDAV "
             "https:// URL (Nextcloud: https://HOST/remote.php/dav/files/USER/FOLDER; credentials from "
             "MEMORIES_WEBDAV_USERNAME and MEMORIES_WEBDAV_PASSWORD, or ~/.netrc)")


def _ENDPOINT_HELP() -> str:  # noqa: N802
    return _("the S3 endpoint of R2, B2, MinIO or SeaweedFS (without it: AWS); credentials come from "
             "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or ~/.aws, never from the URL")


def _ADOPTED() -> str:  # noqa: N802 - a sentence, translated when shown
    return _("The passphrase of vault {vault} was changed on another device: from now on it unlocks here with "
             "the new passphrase only.")


def _bar(ctx: Context) -> tuple[ProgressReport, Callable[[SyncProgress], None]]:
    """A bar on stderr (plain lines when it is not a terminal; nothing with --json)."""
    bar = ProgressReport(_("Syncing"), unit=_("objects"), enabled=not ctx.json)

    def update(p: SyncProgress) -> None:
        bar.update(p.done, p.total or None, _("fetched") if p.stage == "pull" else _("sent"))

    return bar, update


def _cancellable(work: Callable[[threading.Event], T]) -> T:
    """Run `work` in a thread; ctrl+c sets its cancel event and waits for it to stop: before the
    vault is written that is "Sync cancelled; nothing was changed here.", after it the sync
    finishes its upload (what it committed is pushed next time anyway). A second ctrl+c leaves
    at once, as kill -9 would (which loses nothing): a target that holds an upload back would
    otherwise keep the command waiting for the client's timeouts, minutes."""
    cancel, finished = threading.Event(), threading.Event()
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work(cancel))
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread as it is
            failed.append(exc)
        finally:
            finished.set()

    threading.Thread(target=run, name="memories-sync", daemon=True).start()
    waited = 0
    while not finished.is_set():  # not Thread.join: a ctrl+c inside it can make the thread look finished
        try:
            finished.wait(0.1)
            waited += cancel.is_set()
            if waited == 10:  # a second after ctrl+c and still going (an upload, mostly)
                print(_("Stopping the sync…; ctrl+c again to stop at once (nothing is lost: the next sync sends "
                        "what this one did not)."), file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            if cancel.is_set():
                raise CancelledError(msg("Sync stopped without waiting for the sync target. Nothing is lost: what "
                                         "this sync did not send yet, the next sync sends.")) from None
            cancel.set()
    if failed:
        raise failed[0]
    return done[0]


@says_whose_credentials
def cmd_sync_add(ctx: Context) -> Payload:
    """No passphrase asked when the resident engine holds the vault, unless it changed since the unlock."""
    vault_id = ctx.unlock(ctx.args.vault)
    add = functools.partial(ctx.engine.sync_add, vault_id, ctx.args.target, endpoint_url=ctx.args.endpoint_url,
                            cwd=Path.cwd())
    try:
        entry = add()
    except SyncError as exc:
        if exc.code != ErrorCode.SYNC_PASSPHRASE_NEEDED:
            raise
        from ..frontend.passphrase import get_passphrase

        name = ctx.engine.vault_name(vault_id)
        entry = add(get_passphrase(file=ctx.args.passphrase_file,
                                   prompt=_("Passphrase for vault {name}: ").format(name=name)))
    if not ctx.json:
        name = clean(ctx.engine.vault_name(vault_id))
        print(_("Vault {name} now syncs with {target}. Run `memories sync {name}` to sync.").format(
            name=name, target=clean(entry.url)))
        if entry.passphrase_adopted:
            print(_ADOPTED().format(vault=name))
    return entry.to_json()


@says_whose_credentials
def cmd_sync_now(ctx: Context) -> Payload:
    try:
        vault_id = ctx.unlock(ctx.args.vault)  # through the resident engine when it holds the vault
    except NotFoundError as exc:  # `sync stauts`: read as `sync now stauts`, a vault of that name
        close = difflib.get_close_matches(ctx.args.vault, SUBVERBS, n=1)
        if not close:
            raise
        raise NotFoundError(msg("{problem} Did you mean `memories sync {verb}`?", problem=exc,
                                verb=close[0])) from None
    if ctx.args.as_new_device:
        device = ctx.engine.sync_new_device(vault_id)
        if not ctx.json:
            print(_("This vault now syncs as device {device}; the old device id stays in `memories sync devices` "
                    "until you forget it.").format(device=device))
    bar, update = _bar(ctx)
    with bar:
        report = _cancellable(lambda cancel: ctx.engine.sync_now(vault_id, progress=update, cancel=cancel))
    if not ctx.json:
        print(_("Synced with {target}: sent {pushed} change(s) ({objects} objects, {bytes} bytes), received "
                "{pulled} change(s) from {devices} device(s); {written} record(s) updated here.").format(
            target=clean(report.target), pushed=report.pushed_revisions, objects=report.pushed_objects,
            bytes=report.pushed_bytes, pulled=report.pulled_revisions, devices=report.devices - 1,
            written=report.written))
        typed = shlex.quote(ctx.args.vault)  # the vault as the user named it, for the commands suggested
        if report.resent_bundles:
            print(_n("It also sent the bundle of changes an earlier sync made here and could not upload.",
                     "It also sent the {n} bundles of changes an earlier sync made here and could not upload.",
                     report.resent_bundles).format(n=report.resent_bundles))
        if report.left:
            print(_n("Stopped part-way: {n} record changed here waits for the next sync (`memories sync {vault}`).",
                     "Stopped part-way: {n} records changed here wait for the next sync (`memories sync {vault}`).",
                     report.left).format(n=report.left, vault=typed))
        if report.conflicts:
            print(_("{count} record(s) have conflicting edits kept: `memories memory conflicts {vault}`.").format(
                count=report.conflicts, vault=typed))
        if report.passphrase_adopted:
            print(_ADOPTED().format(vault=typed))
        if report.policy_pulled:
            print(_("Vault policy set on another device now applies here: {keys} (`memories vault policy {vault}`).")
                  .format(keys=", ".join(report.policy_pulled), vault=typed))
        if report.policy_conflicts:
            print(_("Vault policy was changed on two devices at once: {keys}; the later change is kept on every "
                    "device (`memories vault policy {vault}` shows it).").format(
                keys=", ".join(report.policy_conflicts), vault=typed))
    return report.to_json()


def cmd_sync_status(ctx: Context) -> Payload:
    entries = [_with_records(ctx, e) for e in ctx.engine.sync_status(ctx.args.vault)]
    names = {v.vault_id: v.name for v in ctx.engine.list_vaults()} if entries else {}
    if not ctx.json:
        if not entries:
            print(_("No vault syncs on this device. Add a target with: memories sync add VAULT TARGET (a folder, "
                    "s3://BUCKET/PREFIX or a WebDAV https:// URL)."))
        else:
            ctx.table([_("VAULT"), _("VAULT_ID"), _("TARGET"), _("LAST SYNC"), _("PENDING"), _("LAST ERROR"),
                       _("CONFLICTS")],
                      [[clean(names.get(e.vault_id, "-")), e.vault_id,
                        e.url + (f" ({e.endpoint_url})" if e.endpoint_url else ""), e.last_sync or "-",
                        _pending_text(e), e.last_error or "-", e.conflicts] for e in entries])
            for e in entries:
                if e.last_error:
                    print(_("{vault}: the last sync failed ({code}); `memories sync {ref}` tries again and says why "
                            "in full.").format(vault=clean(names.get(e.vault_id, e.vault_id)), code=e.last_error,
                                               ref=shlex.quote(names.get(e.vault_id, e.vault_id))))
            for e in entries:
                if e.conflicts:
                    print(_("{vault}: `memories memory conflicts {ref}` lists the edits made on two devices at once "
                            "and how to end each.").format(vault=clean(names.get(e.vault_id, e.vault_id)),
                                                          ref=shlex.quote(names.get(e.vault_id, e.vault_id))))
            if any(e.pending_records is None and e.pending for e in entries):
                print(_("PENDING counts records to push where the vault is unlocked (the daemon, the TUI); "
                        "elsewhere it counts writes (an import is one)."))
            for e in entries:
                if e.passphrase_adopted:
                    print(_("{vault}: the passphrase set on another device was taken at {time}; the old one no "
                            "longer unlocks it here.").format(vault=clean(names.get(e.vault_id, e.vault_id)),
                                                             time=e.passphrase_adopted))
    return {"targets": [{"name": names.get(e.vault_id), **e.to_json()} for e in entries]}


def cmd_sync_remove(ctx: Context) -> Payload:
    gone = ctx.engine.sync_remove(ctx.args.vault)
    if not ctx.json:
        print(_("Vault {vault} no longer syncs on this device (it synced with {target}). The target and the other "
                "devices are unchanged: `memories sync add {vault} {target}` goes on from here.").format(
                    vault=clean(ctx.args.vault), target=clean(gone.url + (
                        f" --endpoint-url {gone.endpoint_url}" if gone.endpoint_url else ""))))
    return {"removed": gone.to_json()}


def _with_records(ctx: Context, entry: TargetEntry) -> TargetEntry:
    """`entry` with its records to push, asked of the daemon when it holds the vault (no passphrase)."""
    if entry.pending_records is not None:
        return entry
    vault_id = ctx.held_by_daemon(entry.vault_id)
    if vault_id is None:
        return entry
    try:
        return replace(entry, pending_records=ctx.engine.sync_pending(vault_id))
    except MemoriesError:  # locked, or the daemon stopped, a moment ago: the count of writes stands in
        return entry


def _pending_text(entry: TargetEntry) -> str:
    if entry.pending_records is not None:
        return str(entry.pending_records)
    if entry.pending is None:
        return "-"
    return _n("{n} write", "{n} writes", entry.pending).format(n=entry.pending) if entry.pending else "0"


def cmd_sync_join(ctx: Context) -> Payload:
    from ..frontend.passphrase import get_passphrase

    passphrase = get_passphrase(file=ctx.args.passphrase_file, prompt=_("Passphrase of the vault to join: "))
    bar, update = _bar(ctx)
    with bar:
        report = _cancellable(lambda cancel: ctx.local_engine.sync_join(
            ctx.args.target, passphrase, endpoint_url=ctx.args.endpoint_url, cwd=Path.cwd(), name=ctx.args.as_name,
            progress=update, cancel=cancel))
    if not ctx.json:
        print(_("Joined vault {name}  {vault_id}: {count} change(s) received.").format(
            name=clean(report.name), vault_id=ctx.bold(report.vault_id), count=report.sync.pulled_revisions))
    return report.to_json()


@says_whose_credentials
def cmd_sync_devices(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    devices = ctx.engine.sync_devices(vault_id)
    if not ctx.json and not devices:
        print(_("No device has sent changes to this vault's sync target yet (a device is listed once a sync "
                "of it sent some)."))
    elif not ctx.json:
        ctx.table([_("DEVICE"), _("NAME"), _("BUNDLES"), _("READ HERE"), _("LAST WRITE")],
                  [[d.device + (" *" if d.this_device else ""), clean(d.name) or "-", d.bundles, d.read_here,
                    d.last_seen] for d in devices])
    return {"vault_id": vault_id, "devices": [d.to_json() for d in devices]}


@says_whose_credentials
def cmd_sync_forget(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    gone = ctx.engine.sync_forget(vault_id, ctx.args.device)
    if not ctx.json:
        print(_("Forgot device {device}; its {count} bundle(s) of changes stay.").format(
            device=gone.device, count=gone.bundles))
    return {"vault_id": vault_id, "forgotten": gone.to_json()}


def cmd_memory_conflicts(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    conflicts = ctx.engine.conflicts(vault_id)
    if not ctx.json:
        if not conflicts:
            print(_("No conflicts."))
        for conflict in conflicts:
            print(ctx.bold(f"{conflict.record_id}  {clean(conflict.title or _('(deleted)'))}"))
            for kept in conflict.kept:
                if kept.deleted:
                    shown = (_("this device's deletion (another device's edit won over it)") if kept.here
                             else _("a deletion (an edit won over it)"))
                else:
                    shown = clean(kept.title or "") + ("  " + _("(this device's edit)") if kept.here else "")
                print(f"  {kept.revision}  {shown}")
                if not kept.deleted and kept.body is not None:
                    print(ctx.dim(f"    {_preview(kept.body)}"))
        if conflicts:
            print()
            print(ctx.dim(_("The vault shows each record's winner (`memories memory read {vault} ID`). To end a "
                            "conflict: `memories memory resolve {vault} ID` keeps the winner, `--keep REVISION` one "
                            "listed here, `--keep-both` makes the others new records. The TUI's reader shows both "
                            "side by side and can merge them.").format(vault=shlex.quote(ctx.args.vault))))
    return {"vault_id": vault_id, "conflicts": [c.to_json() for c in conflicts]}


def _preview(body: str, width: int = 100) -> str:
    """The start of a kept revision's text on one line."""
    line = clean(" ".join(body.split()))
    return line if len(line) <= width else line[:width - 1] + "…"


def cmd_memory_resolve(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    if ctx.args.keep_both:
        copies = ctx.engine.keep_both(vault_id, ctx.args.id)
        if not ctx.json:
            print(_("Resolved: record {record_id} keeps the winner; the other revisions are new records: "
                    "{ids}.").format(record_id=ctx.args.id, ids=", ".join(c.id for c in copies) or "-"))
        return {"vault_id": vault_id, "record_id": ctx.args.id, "kept": "both", "copies": [c.id for c in copies]}
    ended = ctx.engine.resolve_conflict(vault_id, ctx.args.id, ctx.args.keep)
    chosen = next(iter(ended.named_by(ctx.args.keep)), None) if ctx.args.keep is not None else None
    if not ctx.json and chosen is not None and chosen.deleted:
        print(_("Resolved: record {record_id} is deleted (the deletion {revision} wins); the next sync deletes it on "
                "every device.").format(record_id=ended.record_id, revision=chosen.revision))
    elif not ctx.json:
        print(_("Resolved: record {record_id} keeps {kept}; {count} other revision(s) end with the next sync.").format(
            record_id=ended.record_id, kept=chosen.revision if chosen else _("the winner"), count=len(ended.kept)))
    return {"vault_id": vault_id, "record_id": ended.record_id, "kept": chosen.revision if chosen else None,
            "deleted": bool(chosen and chosen.deleted), "ended": len(ended.kept)}
