"""`memories inject all|CLIENT` (its verb is in cli/ai_verbs.py): install the Memories skill and
register the MCP server.

For every target file: absent → written; same content → left alone; different → kept and
reported (or, with `--force`, replaced after a backup). Other servers and the rest of each
file are kept. A file we cannot parse, cannot change without changing its meaning, or may not
write (read-only) is reported and never touched; a symbolic link is written through. Every
target gets its own outcome, whatever happens to another; the command then exits non-zero.
`--dry-run` plans everything and writes nothing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..engine import Jsonable, json_meta
from ..errors import ConfigError
from ..i18n import N_
from . import config_files
from .clients import SERVER_NAME, Launch, Roots, Target, targets

_WHY = {
    "created": N_("new file"),
    "added": N_("entry added; other entries kept"),
    "unchanged": N_("already up to date"),
    "kept": N_("a different entry is there; kept it (--force replaces it)"),
    "replaced": N_("replaced (backup kept)"),
    "skipped": "",
}


@dataclass(frozen=True)
class InjectResult(Jsonable):
    client: str
    what: str  # server | skill
    path: str | None
    status: str  # created | added | unchanged | kept | replaced | skipped | error
    backup: str | None = None
    message: str = ""
    entry: dict[str, Any] | None = None  # the server entry we want there (to add by hand if need be)


@dataclass(frozen=True)
class InjectReport(Jsonable):
    dry_run: bool
    results: list[InjectResult] = field(metadata=json_meta(name="targets"))
    notes: list[str]

    JSON_COMPUTED = (("server_name", "server_name", "dry_run"),)

    @property
    def server_name(self) -> str:
        return SERVER_NAME

    @property
    def failed(self) -> list[InjectResult]:
        return [r for r in self.results if r.status == "error"]


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
        notes.append(N_("No passphrase source was given: the server uses the Memories daemon, so unlock the vault "
                        "with `memories unlock VAULT` (or in the TUI) before the AI client calls it. On a machine "
                        "without a daemon, give --passphrase-file or --passphrase-command instead."))
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
        if plan.text is not None:
            config_files.writable_target(path)  # a dry run reports a file it could not write, too
            if not dry_run:
                backup = config_files.write(path, plan.text)
    except ConfigError as exc:
        return InjectResult(target.client, target.what, str(path), "error", message=exc.message, entry=entry)
    except OSError as exc:
        return InjectResult(target.client, target.what, str(path), "error",
                            message=f"Cannot write {path}: {exc.strerror}.", entry=entry)
    except Exception as exc:  # noqa: BLE001 - one target's surprise must not cost the others their outcome
        return InjectResult(target.client, target.what, str(path), "error", entry=entry,
                            message=f"Unexpected {type(exc).__name__} while merging {path}; it was left as it was. "
                                    "Add the entry by hand (`--dry-run --json` shows it) and report this.")
    return InjectResult(target.client, target.what, str(path), plan.status,
                        str(backup) if backup else None, _WHY[plan.status], entry)
