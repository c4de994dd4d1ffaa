"""`source add/list/remove/sync` (folders kept in step with a vault) and `import` (other apps' exports)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MemoriesError
from ..frontend.words import reason_text, status_name
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport

if TYPE_CHECKING:
    import argparse

    from ..engine import ImportReport, IngestProgress, SourceSyncReport

Verb = Callable[..., "argparse.ArgumentParser"]
FORMATS = ("obsidian", "notion", "evernote", "joplin", "bear")  # importers/__init__.py names the same (loaded only to import)


def register(sub: Any, group: Callable[..., Any], verb: Verb) -> None:
    source = group(sub, "source", _("Folders of notes kept in step with a vault."),
                   "  memories source add notes ~/Notes --glob \"*.md\"\n  memories source sync notes\n"
                   "  memories source list notes")
    p = verb(source, "add", cmd_source_add,
             _("Register a folder as a source of the vault on this home (kept encrypted in the vault), then sync it."),
             "memories source add notes ~/Notes --exclude \"drafts/*\"")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--glob", action="append", metavar="PATTERN",
                   help=_("only files matching PATTERN (repeat for several; `*.md` matches at any depth)"))
    p.add_argument("--exclude", action="append", metavar="PATTERN", help=_("leave out files matching PATTERN"))
    p.add_argument("--no-sync", action="store_true", help=_("register only; sync later with `source sync`"))
    p.add_argument("--take-over", action="store_true",
                   help=_("the folder's notes are in the vault already, from a source this home does not have "
                          "(another device's, or one removed here): keep those same cards in step from here "
                          "instead of refusing"))
    p = verb(source, "list", cmd_source_list, _("List the vault's sources on this home."), "memories source list notes")
    p.add_argument("vault", metavar="VAULT_ID")
    p = verb(source, "remove", cmd_source_remove,
             _("Forget a source (by id or folder); its cards stay in the vault."), "memories source remove notes 1a2b3c4d")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("source", metavar="SOURCE")
    p = verb(source, "sync", cmd_source_sync,
             _("Bring the vault in step with its sources: new files become cards, changed files new revisions, "
               "moved files keep their card; cards of deleted files are marked \"source gone\"."),
             "memories source sync notes --prune")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("source", metavar="SOURCE", nargs="?", help=_("one source (id or folder); default all"))
    p.add_argument("--prune", action="store_true",
                   help=_("remove the cards of deleted files (also `[sources] prune = true` in the config)"))
    p.add_argument("--full", action="store_true",
                   help=_("read and hash every file, even those whose size and time are unchanged"))
    p = verb(sub, "import", cmd_import,
             _("Import another app's export as cards: an Obsidian vault folder, a Notion export (zip or folder), "
               "an Evernote .enex file, a Joplin .jex file (or RAW folder), a folder of Bear TextBundles. Importing again "
               "changes only what changed."),
             "memories import obsidian notes ~/Obsidian/MyVault")
    p.add_argument("format", metavar="FORMAT", choices=FORMATS)
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--dry-run", action="store_true", help=_("report what would be done; write nothing"))
    p.add_argument("--assets", action="store_true",
                   help=_("keep attachments (images, PDFs, …) as encrypted assets (Obsidian; else they are listed "
                          "as skipped)"))


def _bar(ctx: Context, label: str) -> tuple[ProgressReport, Callable[[IngestProgress], None]]:
    bar = ProgressReport(label, unit=_("files"), enabled=not ctx.json)

    def update(p: IngestProgress) -> None:
        bar.update(p.done, p.total or None, p.path)

    return bar, update


def cmd_source_add(ctx: Context) -> Payload:
    args = ctx.args
    vault_id = ctx.unlock(args.vault)
    spec = ctx.engine.add_source(vault_id, Path(args.dir), globs=args.glob, excludes=args.exclude,
                                 take_over=args.take_over)
    if not ctx.json:
        print(_("Added source {id}: {path}").format(id=ctx.bold(spec.id), path=clean(spec.path)))
    payload: Payload = {"source": spec.to_json()}
    if not args.no_sync:
        try:
            payload["sync"] = _sync(ctx, vault_id, spec.id, prune=None)[0].to_json()
        except MemoriesError as exc:  # cards a batch wrote already belong to it: say it stays, and how to undo
            raise type(exc)(msg("{error} Source {id} stays registered (any cards already written are its own): "
                                "fix this and run `memories source sync {vault} {id}`, or `memories source "
                                "remove {vault} {id}` to forget it.", error=exc, id=spec.id, vault=args.vault),
                            code=exc.code) from exc
    return payload


def cmd_source_list(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    infos = ctx.engine.list_sources(vault_id)
    if not ctx.json:
        if not infos:
            print(_("No sources yet; add one with `memories source add VAULT DIR`."))
        ctx.table([_("ID"), _("CARDS"), _("GONE"), _("PENDING"), _("FOLDER")],
                  [[i.source.id, i.records, len(i.gone), i.pending,
                    i.source.path + ("" if i.present else " " + _("(missing)"))] for i in infos])
        for info in infos:
            for rel in info.gone:
                print(ctx.dim("  " + _("{id}: source gone: {file}").format(id=info.source.id, file=clean(rel))))
    return {"sources": [i.to_json() for i in infos]}


def cmd_source_remove(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    spec = ctx.engine.remove_source(vault_id, _ref(ctx.args.source))
    if not ctx.json:
        print(_("Removed source {id} ({path}); its cards stay in the vault.").format(id=spec.id, path=clean(spec.path)))
    return {"removed": spec.to_json()}


def cmd_source_sync(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    reports = _sync(ctx, vault_id, ctx.args.source and _ref(ctx.args.source), prune=True if ctx.args.prune else None,
                    full=ctx.args.full)
    return {"sources": [r.to_json() for r in reports]}


def _ref(source: str) -> str:
    """A source named by its folder, as an absolute path (the resident engine has another working folder)."""
    if not Path(source).expanduser().is_dir():
        return source
    return str(Path(source).expanduser().resolve())


def _sync(ctx: Context, vault_id: str, ref: str | None, prune: bool | None, full: bool = False) -> list[SourceSyncReport]:
    bar, update = _bar(ctx, _("Syncing"))
    with bar:
        reports = ctx.engine.sync_sources(vault_id, ref, prune=prune, progress=update, full=full)
    if not ctx.json:
        for report in reports:
            _print_items(ctx, report.source.path, [(i.status, i.file, i.title, i.reason) for i in report.items])
    return reports


def cmd_import(ctx: Context) -> Payload:
    args = ctx.args
    vault_id = ctx.unlock(args.vault)
    bar, update = _bar(ctx, _("Importing"))
    with bar:
        report: ImportReport = ctx.engine.import_notes(vault_id, args.format, Path(args.path), dry_run=args.dry_run,
                                                       progress=update, assets=args.assets)
    if not ctx.json:
        if report.dry_run:
            print(_("Dry run: nothing was written."))
        _print_items(ctx, report.path, [(i.status, i.note, i.title, i.reason) for i in report.items])
    return report.to_json()


def _print_items(ctx: Context, where: str, items: list[tuple[str, str, str, str]]) -> None:
    """Changed and skipped items in a table, then one line of counts (unchanged ones are only counted)."""
    shown = [i for i in items if i[0] != "unchanged"]
    if shown:
        ctx.table([_("STATUS"), _("FILE"), _("TITLE"), _("REASON")],
                  [[status_name(s), f, t, reason_text(r)] for s, f, t, r in shown])
    counts: dict[str, int] = {}
    for status, *_rest in items:
        counts[status] = counts.get(status, 0) + 1
    summary = _(", ").join(f"{n} {status_name(s)}" for s, n in sorted(counts.items())) or _("nothing to do")
    print(_n("{where}: {n} item ({summary})", "{where}: {n} items ({summary})", len(items)).format(
        where=clean(where), n=len(items), summary=summary))
