"""The engine operations the resident engine runs for a `RemoteEngine`: one method per row of
the engine's table (`EngineAPI`, engine/api.py), made here, none written by hand.

Arguments arrive by the engine's parameter names and are read with `from_json` against the
table's types (the serialisation `--json` uses); results go back in their wire form. A mode,
match mode or kind the engine checks itself passes as it came, so a bad one gets the engine's
own sentence. The parameter naming the vault is checked first: the call runs only while the
daemon holds it unlocked (`require`, which also counts the call as use for the idle timer).
Long work streams progress and stops when the client hangs up (ctrl+c, or its `cancel`). File
names are opened in the caller's working folder, which the client sends, and reported as the
caller typed them.
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..engine import EngineAPI, from_json, json_of, operation_type, operations
from ..errors import CancelledError, ErrorCode, MemoriesError, UsageError
from ..i18n import msg
from .server import Call, Method

if TYPE_CHECKING:
    from ..engine import Operation
    from .service import DaemonService

# What the daemon adds to an operation's arguments: a restore locks the vault it replaces here
# first, for every client, before its file is replaced.
EXTRAS: dict[str, Callable[[DaemonService], dict[str, Any]]] = {
    "restore_vault": lambda service: {"before_replace": lambda vault_id: service.lock(vault_id, "restore")},
}


def served_methods(service: DaemonService) -> dict[str, Method]:
    return {op.verb: _ended_by_lock(service, _method(service, op)) for op in operations()}


def _bad(text: Any) -> UsageError:
    return UsageError(text, code=ErrorCode.DAEMON_BAD_REQUEST)


def _method(service: DaemonService, op: Operation) -> Method:
    signature = inspect.signature(getattr(EngineAPI, op.name))
    required = [name for name in op.request if signature.parameters[name].default is inspect.Parameter.empty]

    def run(args: dict[str, Any], call: Call) -> object:
        kwargs: dict[str, Any] = {name: _decode(op, name, value) for name, value in args.items() if name != "cwd"}
        unknown = sorted(set(kwargs) - set(op.request))
        if unknown or any(name not in kwargs for name in required):
            raise _bad(msg("The request for {verb} needs {needs} and takes nothing else.", verb=op.verb,
                           needs=", ".join(op.request)))
        typed: list[tuple[Path, Path]] = []
        if op.sends_cwd:
            cwd = _cwd(args)
            if op.cwd:
                kwargs["cwd"] = cwd
            for name in op.in_cwd:
                if kwargs.get(name) is not None:
                    given = Path(kwargs[name]).expanduser()
                    kwargs[name] = opened = cwd / given
                    typed.append((opened, given))
        if op.vault is not None:
            kwargs[op.vault] = service.require(kwargs[op.vault])
        if op.progress is not None:
            key = op.progress
            kwargs["progress"] = lambda *values: call.progress({key: [json_of(v, "wire") for v in values]})
        if op.cancellable:
            kwargs["cancel"] = call.cancel
        kwargs.update(EXTRAS[op.name](service) if op.name in EXTRAS else {})
        with contextlib.ExitStack() as stack:
            for resolved, given in typed:
                stack.enter_context(_named_as_typed(resolved, given))
            result = json_of(getattr(service.engine, op.name)(**kwargs), "wire")
        if op.reports_as_typed:
            for resolved, given in typed:
                result = _renamed(result, str(resolved), str(given))
        return result

    return run


def _decode(op: Operation, name: str, value: object) -> object:
    try:
        tp: Any = operation_type(op, name)
    except KeyError:
        return value  # not a parameter: refused by the caller above
    try:
        return from_json(tp, value)
    except ValueError:
        if isinstance(value, str) and _names_words(tp):  # the engine checks it, with its own sentence
            return value
        raise _bad(msg("The request's {key!r} has the wrong type.", key=name)) from None


def _names_words(tp: Any) -> bool:
    """A Literal (a mode, match mode, kind), maybe optional."""
    return typing.get_origin(tp) is Literal or any(typing.get_origin(a) is Literal for a in typing.get_args(tp))


def _cwd(args: dict[str, Any]) -> Path:
    cwd = args.get("cwd")
    if not isinstance(cwd, str) or not Path(cwd).is_absolute():
        raise _bad(msg("The request's working folder must be an absolute path."))
    return Path(cwd)


def _renamed(value: object, resolved: str, given: str) -> object:
    """The wire form with paths inside the caller's folder named as the caller typed them."""
    if isinstance(value, str) and (value == resolved or value.startswith(resolved + "/")):
        return given + value[len(resolved):]
    if isinstance(value, list):
        return [_renamed(v, resolved, given) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, resolved, given) for k, v in value.items()}
    return value


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


def _ended_by_lock(service: DaemonService, method: Method) -> Method:
    """A call cut short by a lock of its vault (the model request stops at the lock) says the
    vault was locked, as a call that starts after the lock does."""

    def run(args: dict[str, Any], call: Call) -> object:
        epoch = service.engine.lock_epoch
        try:
            return method(args, call)
        except CancelledError:
            locked = service.cut_by_lock(args.get("vault_id", args.get("ref")), epoch)
            if locked is not None:
                raise locked from None
            raise

    return run
