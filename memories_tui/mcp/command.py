"""`memories mcp …` verbs: serve, revoke a running server's grant, list running servers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cli import Context


def register(sub: Any, verb: Any) -> None:
    """Add `memories mcp` (serve), `mcp revoke` and `mcp status` to the CLI (`verb` is cli._verb)."""
    p = verb(sub, "mcp", cmd_mcp_serve,
             "Serve the granted vaults to an AI client over MCP (stdio). Subcommands: revoke, status.",
             "memories mcp --vault notes --expires 8h --passphrase-file ~/.memories-pass")
    p.add_argument("--vault", action="append", metavar="VAULT_ID",
                   help="a vault the client may read (repeat for several)")
    p.add_argument("--expires", metavar="DURATION", help="end the grant after DURATION, e.g. 30m, 8h, 7d")
    commands = p.add_subparsers(title="commands", metavar="COMMAND", parser_class=type(p), required=False)
    r = verb(commands, "revoke", cmd_mcp_revoke,
             "End every running MCP server's grant for a vault (takes effect at the server's next call).",
             "memories mcp revoke notes", unlocks=False)
    r.add_argument("revoke_vault", metavar="VAULT_ID")
    verb(commands, "status", cmd_mcp_status, "List running MCP servers and the vaults they may read.",
         "memories mcp status --json", unlocks=False)


def cmd_mcp_serve(ctx: Context) -> dict[str, Any]:
    from .server import serve

    args = ctx.args
    serve(getattr(args, "home", None), getattr(args, "config", None), args.vault or [], expires=args.expires,
          passphrase_file=getattr(args, "passphrase_file", None))
    return {}


def cmd_mcp_revoke(ctx: Context) -> dict[str, Any]:
    from .grants import revoke, running_servers

    engine = ctx.engine
    info = engine.resolve_vault(ctx.args.revoke_vault)
    affected = running_servers(engine.home, info.vault_id)
    when = revoke(engine.home, info.vault_id)
    if not ctx.json:
        print(f"Revoked MCP access to {info.name} ({info.vault_id}); {len(affected)} running server(s) lose it "
              "at their next call.")
    return {"vault_id": info.vault_id, "name": info.name, "revoked_at": when,
            "servers": [s.pid for s in affected]}


def cmd_mcp_status(ctx: Context) -> dict[str, Any]:
    from .grants import running_servers

    servers = running_servers(ctx.engine.home)
    if not ctx.json:
        if not servers:
            print("No MCP server is running for this home.")
        for s in servers:
            print(f"pid {s.pid}: {', '.join(s.vaults)}" + (" (expires)" if s.expires_at else ""))
    return {"servers": [{"pid": s.pid, "vaults": s.vaults, "started_at": s.started_at, "expires_at": s.expires_at}
                        for s in servers]}
