"""The engine, with its vault work done by the home's resident engine.

`RemoteEngine` offers every operation of the engine's table (`EngineAPI`, engine/api.py) as
a request to the daemon that holds the vault unlocked: its methods are made from the table's
rows, and every one goes through `_run`, the one call path (arguments in their wire form,
progress values read back, `cancel` honoured by hanging up the sending side, the result read
back with `from_json`), so a front end prints the results with the same code either way, and
failures are the same MemoriesErrors with the same codes and exit statuses. File names travel
with the caller's working folder, so they mean what they mean in the caller's shell.

What needs no vault key (`LocalAPI`: the home, listing and resolving vaults, the model
install) runs on a plain `Engine` of this process, opened on first use; any other engine
method is refused at once, in a sentence that says how to run it.

Its type is `EngineHandle`, declared as its base: mypy reads the table's signatures there and
checks every method this class writes out against them; the methods made below at import
replace the protocol's empty bodies (tests/unit/test_engine_api.py checks none is left).
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import (
    LOCAL_OPERATIONS,
    EngineAPI,
    EngineHandle,
    from_json,
    json_of,
    operation_type,
    operations,
    progress_types,
)
from ..errors import ErrorCode, UsageError
from ..i18n import msg

if TYPE_CHECKING:
    from ..engine import Engine, Operation, VaultInfo
    from .client import DaemonClient


def remote_engine(client: DaemonClient, home: Path, config: str | os.PathLike[str] | None = None) -> EngineHandle:
    """The engine of a front end whose vaults the daemon behind `client` holds."""
    return RemoteEngine(client, home, config)  # type: ignore[abstract]  # its table methods are made at import


class RemoteEngine(EngineHandle):
    def __init__(self, client: DaemonClient, home: Path, config: str | os.PathLike[str] | None = None) -> None:
        self.client = client
        self.home = home
        self._config_ref = config

    @functools.cached_property
    def _local(self) -> Engine:
        from ..engine import Engine

        return Engine.open(self.home, self._config_ref)

    def __getattr__(self, name: str) -> Any:  # only reached for what this class does not define
        if name.startswith("_"):
            raise AttributeError(name)
        raise _not_served()

    def close(self) -> None:
        local = self.__dict__.get("_local")
        if local is not None:
            local.close()

    # -- the lock state is the daemon's ------------------------------------------------------
    def unlock(self, ref: str, passphrase: str, *, accept_rollback: bool = False) -> VaultInfo:
        raise UsageError(msg("The resident engine holds this vault; unlock and lock it with `memories unlock` "
                             "/ `memories lock`."))

    def is_unlocked(self, vault_id: str) -> bool:
        from .protocol import VAULT_STATE

        return self.client.call_as(VAULT_STATE, {"vault": vault_id}, lambda state: bool(state["unlocked"]))

    def lock(self, vault_id: str | None = None) -> None:
        """Nothing is unlocked in this process; the daemon's vaults lock with `memories lock`."""

    # -- the one call path -------------------------------------------------------------------
    def _run(self, op: Operation, arguments: dict[str, Any]) -> Any:
        from .client import understood

        progress = arguments.pop("progress", None)
        cancel: threading.Event | None = arguments.pop("cancel", None)
        cwd = arguments.pop("cwd", None)
        arguments.pop("before_replace", None)  # the daemon locks a vault it replaces itself, for every client
        query = arguments.get("query")
        if query is not None and not isinstance(query, str):  # a parsed Query: the daemon parses its text again
            arguments["query"] = query.text
            for name in ("mode", "match_mode", "limit"):
                if name in op.request and arguments.get(name) is None:
                    arguments[name] = getattr(query, name)
        request = {name: json_of(value, "wire") for name, value in arguments.items()}
        if op.sends_cwd:
            request["cwd"] = str(Path(cwd or os.getcwd()).absolute())
        events = None if progress is None or op.progress is None else _events(op, progress)
        data = self.client.call(op.verb, request, progress=events, cancel=cancel)
        result_type: Any = operation_type(op, "return")
        if result_type is None:
            return None
        return understood(op.verb, lambda answer: from_json(result_type, answer), data)


def _events(op: Operation, progress: Callable[..., None]) -> Callable[[dict[str, Any]], None]:
    """The daemon's progress lines for `op`, read back into the values its callback takes."""
    key = op.progress

    def event(data: dict[str, Any]) -> None:
        values = data.get(key or "")
        if not isinstance(values, list):
            return
        types: tuple[Any, ...] = progress_types(op)
        if len(values) == len(types):
            progress(*(from_json(tp, value) for tp, value in zip(types, values, strict=True)))

    return event


def _served(op: Operation) -> Callable[..., Any]:
    """The method of `op`: its arguments, by name, to `_run`."""
    signature = inspect.signature(getattr(EngineAPI, op.name))

    def call(self: RemoteEngine, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        return self._run(op, {name: value for name, value in bound.arguments.items() if name != "self"})

    call.__name__ = call.__qualname__ = op.name
    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__doc__ = f"`Engine.{op.name}`, run by the resident engine."
    return call


def _forwarded(name: str) -> property:
    """A name of `LocalAPI` (a method, a property or `config`), read from this process's own engine."""
    return property(lambda self: getattr(self._local, name), doc=f"`Engine.{name}`, run in this process.")


for _op in operations():
    setattr(RemoteEngine, _op.name, _served(_op))
for _name in LOCAL_OPERATIONS:
    if _name != "home":  # this object's own
        setattr(RemoteEngine, _name, _forwarded(_name))


def _not_served() -> UsageError:
    """An Engine method that is not in the table reached for a vault this process does not hold."""
    return UsageError(msg("This command does not run through the Memories daemon yet; run it with --no-daemon "
                      "(it then asks for the passphrase)."), code=ErrorCode.DAEMON_UNSUPPORTED)
