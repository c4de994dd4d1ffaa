"""Source folders, imports and `memories sync VAULT` run by the resident engine (the engine's
source_ops.py and sync_ops.py), so `memories source …`, `memories import …` and `memories sync`
need no passphrase while the daemon holds the vault. Folder and export paths are opened in the caller's working folder."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ErrorCode, UsageError
from ..i18n import msg
from .server import Call, Method
from .vault_methods import _in_cwd, _named_as_typed, _opt, _str, _wire

if TYPE_CHECKING:
    from .service import DaemonService


def _patterns(args: dict[str, Any], key: str) -> list[str]:
    value = args.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(msg("The request's {key!r} has the wrong type.", key=key), code=ErrorCode.DAEMON_BAD_REQUEST)
    return value


def source_methods(service: DaemonService) -> dict[str, Method]:
    engine = service.engine

    def vault(args: dict[str, Any]) -> str:
        return service.require(_str(args, "vault"))

    def add_source(args: dict[str, Any], call: Call) -> object:
        folder, typed = _in_cwd(args, "folder")
        with _named_as_typed(folder, typed):
            return _wire(engine.add_source(vault(args), folder, globs=_patterns(args, "globs"),
                                           excludes=_patterns(args, "excludes")))

    def sync_sources(args: dict[str, Any], call: Call) -> object:
        return _wire(engine.sync_sources(vault(args), _opt(args, "source", str), prune=_opt(args, "prune", bool),
                                         progress=lambda p: call.progress({"ingest": _wire(p)}), cancel=call.cancel,
                                         full=bool(_opt(args, "full", bool))))

    def import_notes(args: dict[str, Any], call: Call) -> object:
        path, typed = _in_cwd(args, "path")
        with _named_as_typed(path, typed):
            return _wire(engine.import_notes(vault(args), _str(args, "app"), path,
                                             dry_run=bool(_opt(args, "dry_run", bool)),
                                             progress=lambda p: call.progress({"ingest": _wire(p)}),
                                             cancel=call.cancel))

    def sync_now(args: dict[str, Any], call: Call) -> object:
        return _wire(engine.sync_now(vault(args), progress=lambda p: call.progress({"sync": p}), cancel=call.cancel))

    return {
        "vault.sync_now": sync_now,
        "vault.add_source": add_source,
        "vault.list_sources": lambda a, c: _wire(engine.list_sources(vault(a))),
        "vault.remove_source": lambda a, c: _wire(engine.remove_source(vault(a), _str(a, "source"))),
        "vault.sync_sources": sync_sources,
        "vault.import_notes": import_notes,
    }
