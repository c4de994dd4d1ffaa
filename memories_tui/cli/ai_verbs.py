"""AI-client verbs: `inject` (skill + server registration), `mcp` (serve), `mcp revoke`, `mcp status`.

The MCP server and the inject code load only inside their handlers, so other verbs never
import the MCP SDK.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError, NotFoundError, UsageError
from ..frontend.durations import parse_duration
from ..frontend.grant_records import revoke, running_servers
from ..frontend.words import status_name
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, cell_width, clean, pad_cells

CLIENT_NAMES = ("claude-code", "codex", "cursor", "vscode", "claude-desktop")


def register(sub: Any, verb: Any) -> None:
    """Add the verbs to the parser (`verb` is parser._verb)."""
    p = verb(sub, "inject", cmd_inject,
             _("Install the Memories skill and register the MCP server for AI clients."),
             "memories inject claude-code --vault notes --passphrase-command \"pass show memories\"", unlocks=False)
    p.add_argument("client", metavar="CLIENT", choices=("all", *CLIENT_NAMES),
                   help=_("all, or one of: {clients}").format(clients=", ".join(CLIENT_NAMES)))
    p.add_argument("--vault", action="append", metavar="VAULT_ID",
                   help=_("vault the server may read (repeat for several; default: the only vault in the home)"))
    p.add_argument("--force", action="store_true", help=_("replace a different existing entry or skill (after a backup)"))
    p.add_argument("--dry-run", action="store_true", help=_("report what would change; write nothing"))
    p.add_argument("--target", metavar="DIR", help=_("use DIR as both the home and the project folder"))
    p.add_argument("--scope", choices=("user", "project"), default="user",
                   help=_("user config (default) or the project in the current folder (.mcp.json, .cursor/, …)"))
    p.add_argument("--expires", metavar="DURATION", help=_("pass --expires to the server (e.g. 8h)"))
    p.add_argument("--passphrase-file", metavar="FILE", default=argparse.SUPPRESS,
                   help=_("the server reads the vault passphrase from FILE"))
    p.add_argument("--passphrase-command", metavar="CMD",
                   help=_("the server runs CMD for the passphrase ($MEMORIES_PASSPHRASE_COMMAND)"))

    p = verb(sub, "mcp", cmd_mcp_serve,
             _("Serve the granted vaults to an AI client over MCP (stdio). Subcommands: revoke, status."),
             "memories mcp --vault notes --expires 8h --passphrase-file ~/.memories-pass")
    p.add_argument("--vault", action="append", metavar="VAULT_ID",
                   help=_("a vault the client may read (repeat for several)"))
    p.add_argument("--expires", metavar="DURATION", help=_("end the grant after DURATION, e.g. 30m, 8h, 7d"))
    commands = p.add_subparsers(title=_("commands"), metavar="COMMAND", parser_class=type(p), required=False)
    r = verb(commands, "revoke", cmd_mcp_revoke,
             _("End every running MCP server's grant for a vault (takes effect at the server's next call)."),
             "memories mcp revoke notes", unlocks=False)
    r.add_argument("revoke_vault", metavar="VAULT_ID")
    verb(commands, "status", cmd_mcp_status, _("List running MCP servers and the vaults they may read."),
         "memories mcp status --json", unlocks=False)


# -- inject ----------------------------------------------------------------------------------

def cmd_inject(ctx: Context) -> Payload:
    from ..skill.clients import CLIENTS, Roots
    from ..skill.inject import InjectReport, build_launch, inject

    args = ctx.args
    if args.passphrase_file and args.passphrase_command:
        raise UsageError(msg("Give --passphrase-file or --passphrase-command, not both."))
    if args.expires:
        parse_duration(args.expires)
    passphrase_file = None
    if args.passphrase_file:
        passphrase_file = Path(args.passphrase_file).expanduser().resolve()
        if not passphrase_file.is_file():
            raise UsageError(msg("Passphrase file {passphrase_file} does not exist.",
                                 passphrase_file=passphrase_file))
    vault_ids = _vault_ids(ctx, args.vault)
    launch = build_launch(ctx.engine.home, vault_ids, expires=args.expires, passphrase_file=passphrase_file,
                          passphrase_command=args.passphrase_command)
    clients = list(CLIENTS) if args.client == "all" else [args.client]
    report: InjectReport = inject(clients, Roots.for_target(args.target), launch, scope=args.scope,
                                  force=args.force, dry_run=args.dry_run)
    if not ctx.json:
        _print_report(ctx, report)
    if report.failed:
        paths = ", ".join(str(r.path) for r in report.failed)
        error = ConfigError(msg("Left as they were, because they could not be updated: {paths}. The other "
                                "targets were handled.", paths=paths))
        error.extra = report.to_json()  # type: ignore[attr-defined]
        raise error
    return report.to_json()


def _vault_ids(ctx: Context, refs: list[str] | None) -> list[str]:
    engine = ctx.engine
    if refs:
        return list(dict.fromkeys(engine.resolve_vault(ref).vault_id for ref in refs))
    vaults = engine.list_vaults()
    if len(vaults) == 1:
        return [vaults[0].vault_id]
    if not vaults:
        raise NotFoundError(msg("No vault in {home}; create one with `memories vault create NAME` first.",
                                home=engine.home))
    names = ", ".join(v.name for v in vaults)
    raise UsageError(msg("Several vaults ({names}): choose the ones the AI client may read with --vault.",
                         names=names))


def _print_report(ctx: Context, report: Any) -> None:
    rows = [(r.client, r.what, _status(r.status, report.dry_run), r.path or "-", r.message, r.status)
            for r in report.results]
    widths = [max(cell_width(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        line = "  ".join(pad_cells(cell, widths[i]) for i, cell in enumerate(row[:3]))
        print(clean(f"{line}  {row[3]}"))
        if row[4] and row[5] in ("kept", "skipped", "error"):
            print(ctx.dim(clean(f"    {_(row[4])}")))
    for note in report.notes:
        print(clean(_("note: {note}").format(note=_(note))), file=sys.stderr)
    if report.dry_run:
        print(_("dry run: nothing was written."), file=sys.stderr)


def _status(status: str, dry_run: bool) -> str:
    if dry_run and status in ("created", "added", "replaced"):
        return _("would be {status}").format(status=status_name(status))
    return status_name(status)


# -- mcp -------------------------------------------------------------------------------------

def cmd_mcp_serve(ctx: Context) -> Payload:
    args = ctx.args
    if ctx.json:
        raise UsageError(msg("`memories mcp` speaks MCP on stdout, so --json does not apply to it (it does to "
                             "`mcp status` and `mcp revoke`)."))
    if args.vault and not getattr(args, "no_daemon", False):  # a running daemon hosts the whole session
        from ..frontend.durations import parse_duration
        from ..mcp.relay import relay

        if relay(getattr(args, "home", None), getattr(args, "config", None), args.vault,
                 parse_duration(args.expires) if args.expires else None):
            return {}
    from ..mcp.server import serve

    serve(getattr(args, "home", None), getattr(args, "config", None), args.vault or [], expires=args.expires,
          passphrase_file=getattr(args, "passphrase_file", None), no_daemon=bool(getattr(args, "no_daemon", False)))
    return {}


def cmd_mcp_revoke(ctx: Context) -> Payload:
    engine = ctx.engine
    info = engine.resolve_vault(ctx.args.revoke_vault)
    affected = running_servers(engine.home, info.vault_id)
    when = revoke(engine.home, info.vault_id)
    if not ctx.json:
        print(clean(_n("Revoked MCP access to {name} ({vault_id}); {count} running server loses it at its next call.",
                       "Revoked MCP access to {name} ({vault_id}); {count} running servers lose it at their next "
                       "call.", len(affected)).format(name=info.name, vault_id=info.vault_id, count=len(affected))))
    return {"vault_id": info.vault_id, "name": info.name, "revoked_at": when, "servers": [s.pid for s in affected]}


def cmd_mcp_status(ctx: Context) -> Payload:
    servers = running_servers(ctx.engine.home)
    if not ctx.json:
        if not servers:
            print(_("No MCP server is running for this home."))
        else:
            ctx.table([_("pid"), _("vaults"), _("expires")],
                      [[s.pid, ", ".join(s.vaults), _when(s.expires_at)] for s in servers])
    return {"servers": [{"pid": s.pid, "vaults": s.vaults, "started_at": s.started_at, "expires_at": s.expires_at}
                        for s in servers]}


def _when(stamp: float | None) -> str:
    import time

    return _("never") if stamp is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))
