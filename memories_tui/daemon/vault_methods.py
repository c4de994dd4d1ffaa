"""The vault verbs the resident engine runs for a `RemoteEngine` (remote_engine.py): one
method per `Engine` method, arguments by name, results in their wire form.

Every method names its vault and runs only while the daemon holds it unlocked (`require`,
which also counts the call as use for the idle timer). Long work streams progress and stops
when the client hangs up (ctrl+c in the CLI). File names are opened in the caller's working
folder, which the client sends, and reported as the caller typed them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import json_of
from ..errors import CancelledError, ErrorCode, MemoriesError, UsageError
from ..i18n import msg
from .server import Call, Method

if TYPE_CHECKING:
    from .service import DaemonService


def _wire(value: object) -> object:
    return json_of(value, "wire")


def _str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise UsageError(msg("The request needs a text {key!r}.", key=key), code=ErrorCode.DAEMON_BAD_REQUEST)
    return value


def _opt(args: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = args.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) and kind is int):
        raise UsageError(msg("The request's {key!r} has the wrong type.", key=key), code=ErrorCode.DAEMON_BAD_REQUEST)
    return value


def _checked_by_engine(args: dict[str, Any], key: str) -> Any:
    """A mode, match mode or kind: the engine checks it and refuses a bad one with the same
    sentence as in-process, so it passes as it came."""
    return args.get(key)


def _budget(args: dict[str, Any]) -> float:
    value = _opt(args, "budget_seconds", (int, float))
    return 300.0 if value is None else max(0.0, float(value))


def _cwd(args: dict[str, Any]) -> Path:
    cwd = Path(_str(args, "cwd"))
    if not cwd.is_absolute():
        raise UsageError(msg("The request's working folder must be an absolute path."), code=ErrorCode.DAEMON_BAD_REQUEST)
    return cwd


def _in_cwd(args: dict[str, Any], key: str) -> tuple[Path, Path]:
    """(where the file is, the name the caller gave it): a name relative to the caller's folder."""
    typed = Path(_str(args, key)).expanduser()
    return _cwd(args) / typed, typed


@contextlib.contextmanager
def _named_as_typed(resolved: Path, typed: Path) -> Iterator[None]:
    """An error naming the file by the path this process opened names it as the caller typed
    it, so the message is the same as the one the command prints without the daemon."""
    try:
        yield
    except MemoriesError as exc:
        if resolved != typed:
            exc.message = exc.message.replace(str(resolved), str(typed))
            exc.args = (exc.message,)
            if exc.localizable is not None:  # the sentence the caller shows in its own language
                _retyped(exc.localizable.params, str(resolved), str(typed))
        raise


def _retyped(params: dict[str, Any], resolved: str, typed: str) -> None:
    for key, value in params.items():
        if isinstance(value, str | Path) and resolved in str(value):
            params[key] = str(value).replace(resolved, typed)
        elif isinstance(getattr(value, "params", None), dict):  # a nested sentence
            _retyped(value.params, resolved, typed)


def data_methods(service: DaemonService) -> dict[str, Method]:
    """Backup, restore, the egress log and export (the engine's data_ops.py), as the CLI runs
    them in-process; a restore locks the vault it replaces here first, for every client."""
    engine = service.engine

    def backup_progress(call: Call) -> Any:
        return lambda p: call.progress({"backup": _wire(p)})

    def backup(args: dict[str, Any], call: Call) -> object:
        vault_id = service.require(_str(args, "vault"))
        if args.get("folder") is None:
            return _wire(engine.backup_vault(vault_id, None, keep=_opt(args, "keep", int),
                                             progress=backup_progress(call), cancel=call.cancel))
        folder, typed = _in_cwd(args, "folder")
        with _named_as_typed(folder, typed):
            report = engine.backup_vault(vault_id, folder, keep=_opt(args, "keep", int),
                                         progress=backup_progress(call), cancel=call.cancel)
        return _wire(replace(report, path=typed / report.path.name,
                             removed=[typed / old.name for old in report.removed]))

    def lock_for_restore(vault_id: str) -> None:
        service.lock(vault_id, "restore")  # every client sees it locked; its file is replaced next

    def restore(args: dict[str, Any], call: Call) -> object:
        file, typed = _in_cwd(args, "file")
        with _named_as_typed(file, typed):
            report = engine.restore_vault(file, _str(args, "passphrase"), as_name=_opt(args, "as_name", str),
                                          force=bool(args.get("force")), progress=backup_progress(call),
                                          cancel=call.cancel,
                                          before_replace=lock_for_restore)
        return _wire(replace(report, source=Path(_str(args, "file"))))

    def export(args: dict[str, Any], call: Call) -> object:
        vault_id = service.require(_str(args, "vault"))
        folder, typed = _in_cwd(args, "folder")
        with _named_as_typed(folder, typed):
            report = engine.export_vault(vault_id, folder, include_excluded=bool(args.get("include_excluded")),
                                         force=bool(args.get("force")), cancel=call.cancel,
                                         progress=lambda done, total: call.progress({"export": [done, total]}))
        return _wire(replace(report, folder=typed))

    return {
        "vault.backup": backup, "vault.restore": restore, "vault.export": export,
        "vault.egress_log": lambda a, c: _wire(engine.egress_log(service.require(_str(a, "vault")),
                                                                 _opt(a, "since", str))),
    }


def _ended_by_lock(service: DaemonService, method: Method) -> Method:
    """A call cut short by a lock of its vault (the model request stops at the lock) says the
    vault was locked, as a call that starts after the lock does."""

    def run(args: dict[str, Any], call: Call) -> object:
        epoch = service.engine.lock_epoch
        try:
            return method(args, call)
        except CancelledError:
            locked = service.cut_by_lock(args.get("vault"), epoch)
            if locked is not None:
                raise locked from None
            raise

    return run


def vault_methods(service: DaemonService) -> dict[str, Method]:
    methods = _vault_methods(service)
    return {name: _ended_by_lock(service, method) for name, method in methods.items()}


def _vault_methods(service: DaemonService) -> dict[str, Method]:
    engine = service.engine

    def vault(args: dict[str, Any]) -> str:
        return service.require(_str(args, "vault"))

    def embed_progress(call: Call) -> Any:
        return lambda p: call.progress({"embed": _wire(p)})

    def search(args: dict[str, Any], call: Call) -> object:
        return _wire(engine.search(
            vault(args), _str(args, "query"), mode=_checked_by_engine(args, "mode"),
            match_mode=_checked_by_engine(args, "match_mode"),
            limit=_opt(args, "limit", int), cards_only=bool(args.get("cards_only")),
            rerank=bool(args.get("rerank", True)), budget_seconds=_budget(args), progress=embed_progress(call),
            cancel=call.cancel))

    def ask(args: dict[str, Any], call: Call) -> object:
        return _wire(engine.ask(vault(args), _str(args, "question"), mode=_checked_by_engine(args, "mode"),
                                match_mode=_checked_by_engine(args, "match_mode"),
                                limit=_checked_by_engine(args, "limit"), rerank=bool(args.get("rerank", True)),
                                cancel=call.cancel))

    def ingest(args: dict[str, Any], call: Call) -> object:
        paths = args.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise UsageError(msg("The request's paths must be a list of texts."), code=ErrorCode.DAEMON_BAD_REQUEST)
        return _wire(engine.ingest(vault(args), [Path(p) for p in paths], title=_opt(args, "title", str),
                                   recursive=bool(_opt(args, "recursive", bool)),
                                   progress=lambda p: call.progress({"ingest": _wire(p)}), cancel=call.cancel,
                                   cwd=_cwd(args)))

    def build_vector_index(args: dict[str, Any], call: Call) -> object:
        return _wire(engine.build_vector_index(vault(args), budget_seconds=_budget(args), progress=embed_progress(call),
                                               cancel=call.cancel))

    def set_device_only(args: dict[str, Any], call: Call) -> object:
        engine.set_device_only(vault(args), bool(args.get("on")))
        return None

    def delete_record(args: dict[str, Any], call: Call) -> object:
        engine.delete_record(vault(args), _str(args, "record_id"))
        return None

    return {
        "vault.name": lambda a, c: engine.vault_name(vault(a)),
        "vault.device_only": lambda a, c: engine.device_only(vault(a)),
        "vault.set_device_only": set_device_only,
        "vault.list_records": lambda a, c: _wire(engine.list_records(vault(a), _checked_by_engine(a, "kind"))),
        "vault.add_record": lambda a, c: _wire(engine.add_record(
            vault(a), kind=_checked_by_engine(a, "kind"), title=_str(a, "title"), body=_str(a, "body"),
            tags=[str(t) for t in a.get("tags") or []])),
        "vault.read_record": lambda a, c: _wire(engine.read_record(vault(a), _str(a, "record_id"),
                                                                   _opt(a, "revision", int))),
        "vault.update_record": lambda a, c: _wire(engine.update_record(
            vault(a), _str(a, "record_id"), title=_opt(a, "title", str), body=_opt(a, "body", str),
            tags=None if a.get("tags") is None else [str(t) for t in a["tags"]])),
        "vault.delete_record": delete_record,
        "vault.revisions": lambda a, c: engine.revisions(vault(a), _str(a, "record_id")),
        "vault.conflicted": lambda a, c: engine.conflicted(vault(a), _str(a, "record_id")),
        "vault.add_asset": lambda a, c: _wire(engine.add_asset(vault(a), Path(_str(a, "path")),
                                                               _opt(a, "title", str), cwd=_cwd(a))),
        "vault.ingest": ingest,
        "vault.build_vector_index": build_vector_index,
        "vault.search": search,
        "vault.memory_search": lambda a, c: _wire(engine.memory_search(
            vault(a), _str(a, "query"), limit=_opt(a, "limit", int), match_mode=_checked_by_engine(a, "match_mode"))),
        "vault.ask": ask,
        "vault.status": lambda a, c: _wire(engine.status(vault(a))),
        **data_methods(service),
    }
