"""The resident engine's verbs: `daemon` (run it; `status`, `stop`, `restart`), `unlock`, `lock`.

`memories unlock VAULT` reads the passphrase here, in the caller's terminal, and sends it once
over the home's socket; the key is derived in the daemon, which starts (detached) when none
runs. Afterwards the vault verbs run there with no passphrase until a lock, the idle timer
or `--for` ends it.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from ..daemon import (
    LOCK,
    STATUS,
    STOP,
    UNLOCK,
    VAULT_STATE,
    DaemonClient,
    DaemonUnavailableError,
    connect,
    daemon_disabled,
    unix_sockets_supported,
)
from ..errors import UsageError
from ..frontend.durations import parse_duration
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, clean

if TYPE_CHECKING:
    from ..daemon.status import DaemonStatus, HeldVault


def register(sub: Any, verb: Any) -> None:
    """Add the verbs to the parser (`verb` is parser._verb)."""
    p = verb(sub, "daemon", cmd_daemon,
             _("Run the resident engine for this home (foreground; --detach to background it). It holds "
             "unlocked vaults, their indexes and the model for the CLI, AI clients and the TUI of this user. "
             "Subcommands: status, stop, restart."),
             "memories daemon --detach", unlocks=False)
    p.add_argument("--detach", action="store_true", help=_("start in the background and return once it listens"))
    p.add_argument("--ready-fd", type=int, default=None, help=argparse.SUPPRESS)
    commands = p.add_subparsers(title=_("commands"), metavar="COMMAND", parser_class=type(p), required=False)
    verb(commands, "status", cmd_daemon_status,
         _("Show the daemon: pid, uptime, unlocked vaults and their time left, clients, memory, model."),
         "memories daemon status --json", unlocks=False)
    verb(commands, "stop", cmd_daemon_stop, _("Lock every vault (keys wiped) and stop the daemon."),
         "memories daemon stop", unlocks=False)
    verb(commands, "restart", cmd_daemon_restart,
         _("Stop the daemon (every vault it holds is locked, keys wiped) and start it again as the version "
           "installed now: what to run after an upgrade. Unlock the vaults again afterwards "
           "(`memories unlock VAULT_ID`). Starts one when none runs."),
         "memories daemon restart", unlocks=False)

    p = verb(sub, "unlock", cmd_unlock,
             _("Unlock a vault once in the resident engine (started if needed): later commands and AI clients "
             "need no passphrase until it is locked, idle for [daemon] idle_lock_minutes, or --for ends."),
             "memories unlock notes --for 8h")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--for", dest="duration", metavar="DURATION", help=_("lock again after DURATION (e.g. 30m, 8h)"))

    p = verb(sub, "lock", cmd_lock, _("Lock a vault (or --all) in the resident engine: keys wiped, indexes dropped."),
             "memories lock --all", unlocks=False)
    p.add_argument("vault", metavar="VAULT_ID", nargs="?")
    p.add_argument("--all", action="store_true", help=_("lock every vault the daemon holds"))


def _need_sockets() -> None:
    if not unix_sockets_supported():
        from ..daemon.spawn import WINDOWS_SENTENCE

        raise DaemonUnavailableError(msg(WINDOWS_SENTENCE))


def _no_daemon_refusal(ctx: Context) -> None:
    if daemon_disabled() or getattr(ctx.args, "no_daemon", False):
        raise UsageError(msg("This command works through the daemon, which --no-daemon / $MEMORIES_NO_DAEMON "
                             "turn off."))


def cmd_daemon(ctx: Context) -> Payload:
    _need_sockets()
    from ..daemon.lifecycle import read_holder, run_daemon, running_refusal, start_detached

    engine = ctx.local_engine  # the daemon's own
    if ctx.args.detach:
        _no_daemon_refusal(ctx)
        paths = ctx.daemon_paths()
        if connect(engine.home) is not None:
            holder = read_holder(paths)
            raise running_refusal(paths) if holder else UsageError(msg("A daemon already serves this home."))
        pid = start_detached(engine.home, engine.config.path)
        if not ctx.json:
            print(_("Memories daemon started (pid {pid}); socket {socket}").format(pid=pid, socket=clean(paths.socket)))
        return {"pid": pid, "socket": str(paths.socket)}
    if ctx.json:
        raise UsageError(msg("`memories daemon` runs in the foreground and prints no JSON; use --detach or "
                             "`memories daemon status --json`."))
    run_daemon(engine, ready_fd=ctx.args.ready_fd, more=ctx.daemon_methods,
               announce=None if ctx.args.ready_fd is not None else lambda text: print(clean(text), file=sys.stderr))
    return {}


def _running_daemon(ctx: Context) -> DaemonClient | None:
    """The home's daemon, or None once the user has been told (in text mode) that none runs."""
    _need_sockets()
    client = connect(ctx.engine.home) if not daemon_disabled() else None
    if client is None and not ctx.json:
        print(_("No Memories daemon runs for {home}.").format(home=clean(ctx.engine.home)))
    return client


def cmd_daemon_status(ctx: Context) -> Payload:
    from ..daemon.status import DaemonStatus

    client = _running_daemon(ctx)
    if client is None:
        return {"running": False}
    status = client.call_as(STATUS, None, DaemonStatus.from_json)
    if not ctx.json:
        _print_status(ctx, status)
    return {"running": True, **status.to_json()}


def _print_status(ctx: Context, status: DaemonStatus) -> None:
    from ..daemon.status import KIND_LABELS, clock, span

    host = _("Memories TUI (serving the socket)") if status.kind == "tui" else _("Memories daemon")
    parts = [_("pid {pid}").format(pid=status.pid), _("up {span}").format(span=span(status.uptime_seconds))]
    if status.rss_bytes is not None:
        parts.append(_("{mib:,.1f} MiB resident").format(mib=status.rss_bytes / 2**20))
    parts.append(_("model loaded") if status.model_loaded else _("no model loaded"))
    parts.append(_n("{n:,} request served", "{n:,} requests served", status.requests_served).format(
        n=status.requests_served))
    print(f"{ctx.bold(host)}  " + " · ".join(parts))
    print(_("home  {home}").format(home=clean(status.home)))
    print(_("idle lock  never") if status.idle_lock_minutes <= 0
          else _("idle lock  after {minutes:g} min").format(minutes=status.idle_lock_minutes))
    if not status.vaults:
        print(_("No vault is unlocked."))
    else:
        ctx.table([_("VAULT_ID"), _("NAME"), _("UNLOCKED"), _("LOCKS IN")],
                  [[v.vault_id, v.name, clock(v.unlocked_at), _left(v)] for v in status.vaults])
    if status.clients:
        print(ctx.bold(_("Clients")))
        ctx.table([_("PID"), _("WHAT"), _("CALLS"), _("LAST CALL"), _("NOW")],
                  [[c.pid or "-", _(KIND_LABELS.get(c.kind, c.kind)), c.calls,
                    _("{method} ({span} ago)").format(method=c.last_method, span=span(time.time() - c.last_seen)),
                    c.running or _("idle")]
                   for c in status.clients])
    else:
        print(_("No client is connected."))
    if status.grants:
        print(ctx.bold(_("AI clients' grants (revoke with `memories mcp revoke VAULT_ID`)")))
        ctx.table([_("PID"), _("VAULTS"), _("EXPIRES"), _("STATE")],
                  [[g.pid or "-", ", ".join(g.names), clock(g.expires_at), _(g.state)] for g in status.grants])


def _left(vault: HeldVault) -> str:
    from ..daemon.status import span

    if vault.seconds_left is None:
        return _("never (until locked)")
    if vault.locks_by is not None:  # the first of the timers that apply, whoever runs it
        why = {"--for": "--for", "idle": _("idle"), "tui": _("TUI idle")}.get(vault.locks_by, vault.locks_by)
    else:  # an older daemon that does not say
        why = "--for" if vault.expires_at is not None and (
            vault.idle_lock_at is None or vault.expires_at <= vault.idle_lock_at) else _("idle")
    return f"{span(vault.seconds_left)} ({why})"


def cmd_daemon_stop(ctx: Context) -> Payload:
    from ..daemon.spawn import stop_daemon

    client = _running_daemon(ctx)
    if client is None:
        return {"stopped": False}
    pid = client.call_as(STOP, None, lambda answer: int(answer["pid"]))
    stop_daemon(ctx.daemon_paths(), pid)
    if not ctx.json:
        print(_("Memories daemon (pid {pid}) locked every vault and stopped.").format(pid=pid))
    return {"stopped": True, "pid": pid}


def cmd_daemon_restart(ctx: Context) -> Payload:
    """Stop (whatever build runs) and start this build, with this invocation's home and config."""
    from ..daemon.lifecycle import read_holder, running_refusal, start_detached, stop_daemon

    _need_sockets()
    _no_daemon_refusal(ctx)
    engine = ctx.engine
    paths = ctx.daemon_paths()
    client = connect(engine.home)
    locked: list[str] | None = []
    old_pid = None
    if client is not None:
        if (holder := read_holder(paths)) is not None and holder.kind == "tui":
            raise running_refusal(paths)
        old_pid, locked = client.call_as(STOP, None, lambda answer: (
            int(answer["pid"]), None if answer.get("locked") is None else [str(n) for n in answer["locked"]]))
        stop_daemon(paths, old_pid)
    pid = start_detached(engine.home, engine.config.path)
    if not ctx.json:
        if old_pid is None:
            print(_("No Memories daemon ran; started one (pid {pid}).").format(pid=pid))
        else:
            print(_("Memories daemon restarted (pid {old} stopped, pid {pid} serving).").format(old=old_pid, pid=pid))
        if locked is None:
            print(_("Every vault it held is locked now; unlock them again with `memories unlock VAULT_ID`."))
        elif locked:
            print(_("Locked now: {names}; unlock them again with `memories unlock VAULT_ID`.").format(
                names=", ".join(locked)))
    return {"restarted": old_pid is not None, "old_pid": old_pid, "pid": pid, "locked": locked}


def cmd_unlock(ctx: Context) -> Payload:
    _need_sockets()
    _no_daemon_refusal(ctx)
    engine = ctx.engine
    info = engine.resolve_vault(ctx.args.vault)
    for_seconds = parse_duration(ctx.args.duration) if ctx.args.duration else None
    client = connect(engine.home)
    args: dict[str, Any] = {"vault": info.vault_id, "for_seconds": for_seconds,
                            "accept_rollback": bool(getattr(ctx.args, "accept_rollback", False))}
    if client is None or not client.call_as(VAULT_STATE, {"vault": info.vault_id}, lambda state: state["unlocked"]):
        from ..frontend.passphrase import get_passphrase

        args["passphrase"] = get_passphrase(file=getattr(ctx.args, "passphrase_file", None),
                                            prompt=_("Passphrase for vault {name}: ").format(name=info.name))
    if client is None:
        from ..daemon.spawn import start_detached

        start_detached(engine.home, engine.config.path)
        client = connect(engine.home)
        if client is None:
            raise DaemonUnavailableError(msg("The daemon started but does not answer; see {log_file}.",
                                             log_file=ctx.daemon_paths().log_file))
    row, until = client.call_as(UNLOCK, args, lambda answer: (dict(answer), _until(answer)))
    if not ctx.json:
        text = (_("Vault {name} was already unlocked in the Memories daemon; {until}. Commands and AI clients "
                  "need no passphrase until then.") if row.get("already_unlocked") else
                _("Vault {name} is unlocked in the Memories daemon; {until}. Commands and AI clients need no "
                  "passphrase until then."))
        print(text.format(name=clean(info.name), until=until))
    return row


def _until(row: dict[str, Any]) -> str:
    from ..daemon.status import clock

    if row.get("expires_at") is not None:
        return _("it locks at {time} or after idle time, whichever comes first").format(time=clock(row["expires_at"]))
    if row.get("idle_lock_at") is not None:
        return _("it locks when idle for [daemon] idle_lock_minutes or with `memories lock`")
    return _("it stays unlocked until `memories lock`")


def cmd_lock(ctx: Context) -> Payload:
    _need_sockets()
    if (ctx.args.vault is None) == (not ctx.args.all):
        raise UsageError(msg("Name a VAULT_ID or give --all."))
    engine = ctx.engine
    vault_id = engine.resolve_vault(ctx.args.vault).vault_id if ctx.args.vault else None
    client = connect(engine.home) if not daemon_disabled() else None
    if client is None:
        if not ctx.json:
            print(_("No Memories daemon runs for this home, so nothing is unlocked there."))
        return {"locked": []}
    result: dict[str, Any] = client.call_as(LOCK, {"vault": vault_id},
                                            lambda answer: {**answer, "locked": list(answer.get("locked") or [])})
    if not ctx.json:
        locked = result["locked"]
        print(_n("Locked {count} vault in the Memories daemon.", "Locked {count} vaults in the Memories daemon.",
                 len(locked)).format(count=len(locked)) if locked else _("Nothing was unlocked."))
    return result
