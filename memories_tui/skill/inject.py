"""`memories inject all|CLIENT`: install the Memories skill and register the MCP server.

For every target file: absent → written; same content → left alone; different → kept and
reported (or, with `--force`, replaced after a backup). Other servers and the rest of each
file are kept. A file we cannot parse is reported and never touched; the other targets still
run and the command then exits non-zero. `--dry-run` plans everything and writes nothing.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, MemoriesError, UsageError
from . import config_files
from .clients import CLIENTS, SERVER_NAME, Launch, Roots, Target, targets

if TYPE_CHECKING:
    from ..cli import Context

_WHY = {
    "created": "new file",
    "added": "entry added; other entries kept",
    "unchanged": "already up to date",
    "kept": "a different entry is there; kept it (--force replaces it)",
    "replaced": "replaced (backup kept)",
    "skipped": "",
}


@dataclass(frozen=True)
class InjectResult:
    client: str
    what: str  # server | skill
    path: str | None
    status: str  # created | added | unchanged | kept | replaced | skipped | error
    backup: str | None = None
    message: str = ""
    entry: dict[str, Any] | None = None  # the server entry we want there (to add by hand if need be)


@dataclass(frozen=True)
class InjectReport:
    dry_run: bool
    results: list[InjectResult]
    notes: list[str]

    @property
    def failed(self) -> list[InjectResult]:
        return [r for r in self.results if r.status == "error"]

    def to_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "server_name": SERVER_NAME,
                "targets": [asdict(r) for r in self.results], "notes": self.notes}


def skill_text() -> str:
    """The bundled SKILL.md."""
    return resources.files("memories_tui.skill").joinpath("SKILL.md").read_text(encoding="utf-8")


def server_command() -> list[str]:
    """The `memories` script beside this interpreter, else `python -m memories_tui`."""
    bindir = Path(sys.executable).parent
    for name in ("memories", "memories.exe"):
        if (bindir / name).is_file():
            return [str(bindir / name)]
    return [sys.executable, "-m", "memories_tui"]


def build_launch(home: Path, vault_ids: list[str], *, expires: str | None = None,
                 passphrase_file: Path | None = None, passphrase_command: str | None = None) -> Launch:
    command, *prefix = server_command()
    args = [*prefix, "mcp", "--home", str(home)]
    for vault_id in vault_ids:
        args += ["--vault", vault_id]
    if expires:
        args += ["--expires", expires]
    if passphrase_file is not None:
        args += ["--passphrase-file", str(passphrase_file)]
    env = (("MEMORIES_PASSPHRASE_COMMAND", passphrase_command),) if passphrase_command else ()
    return Launch(command, tuple(args), env)


def inject(clients: list[str], roots: Roots, launch: Launch, *, scope: str = "user", force: bool = False,
           dry_run: bool = False, skill: str | None = None) -> InjectReport:
    content = skill if skill is not None else skill_text()
    results = [_apply(target, content, force, dry_run)
               for client in clients for target in targets(client, roots, launch, scope)]
    notes = []
    if not any(key == "MEMORIES_PASSPHRASE_COMMAND" for key, _ in launch.env) and "--passphrase-file" not in launch.args:
        notes.append("No passphrase source was given: the server unlocks at start without a terminal, so "
                     "it needs --passphrase-file or --passphrase-command (or $MEMORIES_PASSPHRASE* in the "
                     "client's environment).")
    return InjectReport(dry_run, results, notes)


def _apply(target: Target, skill: str, force: bool, dry_run: bool) -> InjectResult:
    if target.path is None:
        return InjectResult(target.client, target.what, None, "skipped", message=target.note)
    path, entry = target.path, target.entry
    try:
        if target.what == "skill":
            plan = config_files.plan_text(path, skill, force)
        elif target.format == "toml":
            plan = config_files.plan_toml(path, target.section, SERVER_NAME, target.entry or {}, force)
        else:
            plan = config_files.plan_json(path, target.section, SERVER_NAME, target.entry or {}, force)
        backup = None
        if plan.text is not None and not dry_run:
            backup = config_files.write(path, plan.text)
    except ConfigError as exc:
        return InjectResult(target.client, target.what, str(path), "error", message=exc.message, entry=entry)
    except OSError as exc:
        return InjectResult(target.client, target.what, str(path), "error",
                            message=f"Cannot write {path}: {exc.strerror}.", entry=entry)
    return InjectResult(target.client, target.what, str(path), plan.status,
                        str(backup) if backup else None, _WHY[plan.status], entry)


# -- CLI -------------------------------------------------------------------------------------

def register(sub: Any, verb: Any) -> None:
    """Add `memories inject` to the CLI parser (`verb` is cli._verb)."""
    p = verb(sub, "inject", cmd_inject,
             "Install the Memories skill and register the MCP server for AI clients.",
             "memories inject claude-code --vault notes --passphrase-command \"pass show memories\"", unlocks=False)
    p.add_argument("client", metavar="CLIENT", choices=("all", *CLIENTS),
                   help="all, or one of: " + ", ".join(CLIENTS))
    p.add_argument("--vault", action="append", metavar="VAULT_ID",
                   help="vault the server may read (repeat for several; default: the only vault in the home)")
    p.add_argument("--force", action="store_true", help="replace a different existing entry or skill (after a backup)")
    p.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    p.add_argument("--target", metavar="DIR", help="use DIR as both the home and the project folder")
    p.add_argument("--scope", choices=("user", "project"), default="user",
                   help="user config (default) or the project in the current folder (.mcp.json, .cursor/, …)")
    p.add_argument("--expires", metavar="DURATION", help="pass --expires to the server (e.g. 8h)")
    p.add_argument("--passphrase-file", metavar="FILE", help="the server reads the vault passphrase from FILE")
    p.add_argument("--passphrase-command", metavar="CMD",
                   help="the server runs CMD for the passphrase ($MEMORIES_PASSPHRASE_COMMAND)")


def cmd_inject(ctx: Context) -> dict[str, Any]:
    args = ctx.args
    if args.passphrase_file and args.passphrase_command:
        raise UsageError("Give --passphrase-file or --passphrase-command, not both.")
    if args.expires:
        from ..mcp.grants import parse_duration

        parse_duration(args.expires)
    passphrase_file = None
    if args.passphrase_file:
        passphrase_file = Path(args.passphrase_file).expanduser().resolve()
        if not passphrase_file.is_file():
            raise UsageError(f"Passphrase file {passphrase_file} does not exist.")
    vault_ids = _vault_ids(ctx, args.vault)
    launch = build_launch(ctx.engine.home, vault_ids, expires=args.expires, passphrase_file=passphrase_file,
                          passphrase_command=args.passphrase_command)
    clients = list(CLIENTS) if args.client == "all" else [args.client]
    report = inject(clients, Roots.for_target(args.target), launch, scope=args.scope, force=args.force,
                    dry_run=args.dry_run)
    if not ctx.json:
        _print(ctx, report)
    if report.failed:
        paths = ", ".join(str(r.path) for r in report.failed)
        error = ConfigError(f"Left as they were, because they could not be updated: {paths}. "
                            "The other targets were handled.")
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
        raise MemoriesError(f"No vault in {engine.home}; create one with `memories vault create NAME` first.",
                            code="not_found")
    names = ", ".join(v.name for v in vaults)
    raise UsageError(f"Several vaults ({names}): choose the ones the AI client may read with --vault.")


def _print(ctx: Context, report: InjectReport) -> None:
    from ..cli import clean

    rows = [(r.client, r.what, ("would be " if report.dry_run and r.status in ("created", "added", "replaced")
                                else "") + r.status, r.path or "-", r.message) for r in report.results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        line = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3]))
        print(clean(f"{line}  {row[3]}"))
        if row[4] and row[2].endswith(("kept", "skipped", "error")):
            print(ctx.dim(clean(f"    {row[4]}")))
    for note in report.notes:
        print(clean(f"note: {note}"), file=sys.stderr)
    if report.dry_run:
        print("dry run: nothing was written.", file=sys.stderr)
