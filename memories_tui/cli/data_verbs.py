"""Keeping and leaving with your data: `vault backup`, `vault restore`, `vault export`, `rag egress`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CancelledError, UsageError
from ..frontend.passphrase import get_passphrase
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport

if TYPE_CHECKING:
    import argparse

    from ..engine import BackupProgress

Verb = Callable[..., "argparse.ArgumentParser"]


def register(vault: Any, rag: Any, verb: Verb) -> None:
    p = verb(vault, "backup", cmd_vault_backup,
             "Write a verified, still encrypted backup of a vault (SQLite online backup; named "
             "<vault name>-<UTC time>.mvault). Unlocked with the passphrase, every record is checked "
             "too; --no-unlock copies without it and checks the structure only.",
             "memories vault backup notes ~/Backups/memories --keep 10")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("dir", metavar="DIR", nargs="?",
                   help="folder for the backup (default: [backup] dir in the config, else HOME/backups)")
    p.add_argument("--keep", type=int, metavar="N", help="keep only the newest N backups of this vault there")
    p.add_argument("--no-unlock", action="store_true",
                   help="do not ask for the passphrase: verify the copy's structure and digests only")
    p = verb(vault, "restore", cmd_vault_restore,
             "Restore a vault from a backup file: verified first (needs the passphrase the vault had when "
             "the backup was taken); never replaces a vault in this home without --force.",
             "memories vault restore ~/Backups/memories/notes-20260101T120000Z.mvault")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--as", dest="as_name", metavar="NAME",
                   help="restore as a new vault named NAME (a new id), beside any existing copy")
    p.add_argument("--force", action="store_true",
                   help="replace the vault with the same id in this home (it is backed up first)")


    p = verb(vault, "export", cmd_vault_export,
             "Export every current record as a Markdown file with front matter (id, revision, kind, title, "
             "tags, created, updated) into an empty folder: plain text you can read anywhere, and `rag ingest` "
             "of the folder gives the same searchable text. Private notes, credentials and file assets are "
             "left out unless --include-excluded (asked to confirm).",
             "memories vault export notes ~/notes-export")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--format", choices=("markdown",), default="markdown", help="the only format: markdown")
    p.add_argument("--include-excluded", action="store_true",
                   help="also write private notes, credentials (private/, credential/) and assets (assets/)")
    p.add_argument("--yes", action="store_true", help="confirm --include-excluded without a prompt")
    p.add_argument("--force", action="store_true",
                   help="write into a folder that is not empty (existing files are never replaced)")
    p = verb(rag, "egress", cmd_rag_egress,
             "List every request that sent this vault's content out of the process (remote embedding, "
             "generation, rerank; loopback services too): time, endpoint, purpose, records, revisions "
             "and chunk hashes, bytes and outcome. The log is encrypted inside the vault; it never "
             "holds the content itself.",
             "memories rag egress notes --since 7d")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--since", metavar="D", help="only entries since D: a date (2026-12-01), a UTC time, or an "
                                                "age such as 24h, 7d, 2w")


def _bar(ctx: Context, label: str) -> tuple[ProgressReport, Callable[[BackupProgress], None]]:
    bar = ProgressReport(label, unit="", enabled=not ctx.json)
    units = {"copy": "pages copied", "verify": "revisions verified", "replace": "pages written"}

    def update(p: BackupProgress) -> None:
        bar.update(p.done, p.total, units.get(p.stage, p.stage))

    return bar, update


def cmd_vault_backup(ctx: Context) -> Payload:
    args = ctx.args
    if args.no_unlock:  # no passphrase: the resident engine's copy (verified in full) if it holds the vault
        ref = ctx.held_by_daemon(args.vault) or ctx.engine.resolve_vault(args.vault).vault_id
    else:
        ref = ctx.unlock(args.vault)
    bar, update = _bar(ctx, "Backing up")
    with bar:
        report = ctx.engine.backup_vault(ref, Path(args.dir) if args.dir else None, keep=args.keep,
                                         progress=update)
    if not ctx.json:
        checked = ("every record decrypted and the keyed manifest matched" if report.verified == "full"
                   else "structure and digests checked (no passphrase: records not decrypted)")
        print(f"Backed up {clean(report.name)} to {ctx.bold(clean(report.path))}")
        print(f"  {report.records} records, {report.revisions} revisions, {report.bytes:,} bytes; {checked}")
        for old in report.removed:
            print(ctx.dim(f"  removed older backup {clean(old)}"))
    return report.to_json()


def cmd_vault_restore(ctx: Context) -> Payload:
    args = ctx.args
    passphrase = get_passphrase(file=args.passphrase_file, prompt="Passphrase of the backed-up vault: ")
    ctx.use_daemon_if_running()  # it may hold the vault being replaced: it locks it there first
    bar, update = _bar(ctx, "Restoring")
    with bar:
        report = ctx.engine.restore_vault(Path(args.file), passphrase, as_name=args.as_name, force=args.force,
                                          progress=update)
    if not ctx.json:
        print(f"Restored {clean(report.name)}  {ctx.bold(report.vault_id)}  ({report.records} records, "
              f"{report.revisions} revisions, {clean(report.state)})")
        if report.replaced:
            print(f"  replaced the vault that was here ({report.revisions_lost} revision(s) it had are not in "
                  f"the backup); it was saved first to {clean(report.kept_copy)}")
    return report.to_json()


def cmd_rag_egress(ctx: Context) -> Payload:
    from ..engine import parse_since

    since = parse_since(ctx.args.since)  # a bad value is a usage error before any passphrase
    vault_id = ctx.unlock(ctx.args.vault)
    report = ctx.engine.egress_log(vault_id, since)
    if not ctx.json:
        if not report.entries:
            print("Nothing from this vault has been sent out" + (f" since {since}." if since else "."))
        rows = []
        for e in report.entries:
            where = e.host + (" (loopback)" if e.loopback else "")
            records = len({c.record_id for c in e.chunks if c.record_id})
            rows.append([e.time, e.purpose, where, len(e.chunks), records, f"{e.bytes_sent:,}",
                         e.outcome + (f" ×{e.attempts}" if e.attempts > 1 else ""), e.client or ""])
        if rows:
            ctx.table(["TIME (UTC)", "PURPOSE", "ENDPOINT", "CHUNKS", "RECORDS", "BYTES SENT", "OUTCOME", "CLIENT"],
                      rows)
            print(ctx.dim("--json lists the record ids, revisions and chunk hashes of each request."))
        if report.damaged:
            print(f"memories: warning: egress log entries {report.damaged} failed their integrity check.",
                  file=sys.stderr)
        if report.missing:
            print(f"memories: warning: egress log entries {report.missing} are missing (deleted from the file).",
                  file=sys.stderr)
    return report.to_json()


def cmd_vault_export(ctx: Context) -> Payload:
    args = ctx.args
    vault_id = ctx.unlock(args.vault)
    if args.include_excluded and not args.yes:
        _confirm_excluded(ctx, vault_id, args.dir)
    bar = ProgressReport("Exporting", unit="files", enabled=not ctx.json)
    with bar:
        report = ctx.engine.export_vault(vault_id, Path(args.dir), include_excluded=args.include_excluded,
                                         force=args.force, progress=lambda done, total: bar.update(done, total))
    if not ctx.json:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items())) or "no records"
        print(f"Exported {len(report.files)} files ({kinds}) to {ctx.bold(clean(report.folder))}")
        if report.excluded_skipped:
            print(ctx.dim(f"  {report.excluded_skipped} private/credential/asset records were left out "
                          "(--include-excluded writes them)"))
        else:
            print(ctx.dim("  these files are plain text: keep them somewhere private"))
    return report.to_json()


def _confirm_excluded(ctx: Context, vault_id: str, folder: str) -> None:
    """Private notes, credentials and assets leave the encryption only after a yes."""
    excluded = [r for r in ctx.engine.list_records(vault_id) if r.kind in ("private", "credential", "asset")]
    if not excluded:
        return
    if ctx.json or not sys.stdin.isatty():
        raise UsageError(f"--include-excluded would write {len(excluded)} private/credential/asset records as "
                         "plain files; confirm with --yes (no terminal to ask on).")
    print(f"This writes {len(excluded)} private notes, credentials and file assets of "
          f"{clean(ctx.engine.vault_name(vault_id))} UNENCRYPTED into {clean(folder)}.", file=sys.stderr)
    answer = input("Type yes to continue: ")
    if answer.strip().lower() != "yes":
        raise CancelledError("Export cancelled; nothing was written.")
