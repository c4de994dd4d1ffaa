"""The daemon's side of cli/quick_call.py: a client's command line, run here as it would run there.

The resident engine has the parser, the engine and the printers loaded, so it parses the
client's words with the real parser (one per language, built once), runs the verb with a
`Context` whose engine is this daemon's own client (daemon/in_process.py: the same methods and
wire forms as over the socket) and renders what the ordinary way prints, in the client's
language and with its colours, on stdout and stderr of this thread only. The client writes it
out; stderr lines stream as they are printed once the verb has its vault.

Only the verbs below run this way, each the CLI face of one operation of the engine's table,
and only in their plain form: a verb that would read a file or stdin, ask for a passphrase,
print help or otherwise do the caller's own work, a vault this daemon does not hold, another
home, build or kind of host, anything that goes wrong before the verb has its vault: the
command is passed back untouched, and the client runs it the ordinary way.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import configured_language
from ..daemon.in_process import InProcessClient
from ..daemon.remote_engine import RemoteEngine
from ..engine import json_of
from ..errors import ErrorCode, MemoriesError, UsageError
from ..frontend.language_choice import _option
from ..i18n import _, _n, in_language, msg, normalize_setting, resolve_language
from .ask_verbs import cmd_rag_ask
from .context import Context
from .output import GuardedStdout, json_text
from .record_verbs import cmd_memory_add, cmd_memory_delete, cmd_memory_list, cmd_memory_read, cmd_memory_update
from .run import _fail, _internal_error, _wants_json
from .search_verbs import cmd_memory_search, cmd_rag_search, cmd_rag_status

if TYPE_CHECKING:
    from ..daemon.server import Call, Method
    from ..daemon.service import DaemonService

log = logging.getLogger("memories.daemon")
METHOD = "cli_run"  # as quick_call.METHOD (which loads nothing of this)
Rule = Callable[[argparse.Namespace], bool]
# handler -> (the engine operation it runs, whether these arguments are its plain form)
SERVED: dict[Callable[..., Any], tuple[str, Rule]] = {
    cmd_rag_search: ("search", lambda a: a.queries is None),
    cmd_rag_ask: ("ask", lambda a: a.questions is None),
    cmd_rag_status: ("status", lambda a: True),
    cmd_memory_add: ("add_record", lambda a: a.text is not None and a.file is None),  # never stdin
    cmd_memory_read: ("read_record", lambda a: True),
    cmd_memory_search: ("memory_search", lambda a: True),
    cmd_memory_list: ("list_records", lambda a: True),
    cmd_memory_update: ("update_record", lambda a: a.file is None),
    cmd_memory_delete: ("delete_record", lambda a: True),
}
_threads = threading.local()  # the streams of the command this thread renders


class PassBack(Exception):
    """Not for this way: the client runs the command the ordinary way."""


@dataclass(frozen=True)
class Request:
    argv: list[str]
    cwd: Path
    home: Path
    version: str
    env: dict[str, str]
    color: bool
    stderr_tty: bool

    @classmethod
    def read(cls, args: dict[str, Any]) -> Request:
        argv, cwd, home, env = args.get("argv"), args.get("cwd"), args.get("home"), args.get("env")
        if not (isinstance(argv, list) and all(isinstance(w, str) for w in argv) and isinstance(cwd, str)
                and Path(cwd).is_absolute() and isinstance(home, str) and isinstance(env, dict)
                and all(isinstance(v, str) for v in env.values()) and isinstance(args.get("version"), str)):
            raise UsageError(msg("The request for {verb} needs {needs} and takes nothing else.", verb=METHOD,
                                 needs="argv, cwd, home, env, version, color, stderr_tty"),
                             code=ErrorCode.DAEMON_BAD_REQUEST)
        return cls(argv, Path(cwd), Path(home), args["version"], env, args.get("color") is True,
                   args.get("stderr_tty") is True)

    def path(self, given: str) -> Path:
        """A path the client typed, as its own process would resolve it."""
        return (self.cwd / Path(given).expanduser()).resolve()


def methods(service: DaemonService) -> dict[str, Method]:
    """The method `memories daemon` adds for cli/quick_call.py."""
    from ..daemon.upgrade import CHANGED_API

    _route_streams()
    setattr(argparse, "_", _)  # noqa: B010 - as language_choice does: argparse's words in each thread's language
    setattr(argparse, "ngettext", _n)  # noqa: B010
    parsers = _Parsers()

    def run(args: dict[str, Any], call: Call) -> dict[str, Any]:
        request = Request.read(args)
        build = service.build()
        same = service.kind == "daemon" and build.get("api") not in (None, CHANGED_API) \
            and build.get("version") == request.version and request.home.resolve() == service.engine.home.resolve()
        try:
            if not same:
                raise PassBack
            with in_language(_language(request)):
                out = _render(service, request, call, parsers.get())
        except PassBack:
            log.info("%s passed back", METHOD)
            return {"pass": True}
        log.info("%s served", METHOD)
        return out

    return {METHOD: run}


def _language(request: Request) -> str:
    """The language choose_language would pick in the client's process."""
    explicit = _option(request.argv, "--lang")
    try:
        setting = normalize_setting(explicit) if explicit is not None else None
    except ValueError:
        raise PassBack from None  # the parser's refusal, in the language chosen without it
    if setting is None:
        home, config = _option(request.argv, "--home"), _option(request.argv, "--config")
        setting = _configured(str(request.path(home) if home else request.home),
                              str(request.path(config)) if config else None)
    return resolve_language(setting, environ=request.env)


_read_configs: dict[str, tuple[tuple[int, int, int], str | None]] = {}  # config file -> (its stat, language)


def _configured(home: str, config: str | None) -> str | None:
    """`[ui] language` of the config, read again only when the file changed (a parse per call
    would be a fifth of the daemon's part of a served search)."""
    path = Path(config).expanduser().resolve() if config else Path(home) / "config.toml"  # as home.resolve_config
    try:
        stat = path.stat()
    except OSError:
        return configured_language(home, config)
    key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    known = _read_configs.get(str(path))
    if known is not None and known[0] == key:
        return known[1]
    language = configured_language(home, config)
    _read_configs[str(path)] = (key, language)
    return language


class _Parsers:
    """The CLI's parser in each language (its help is translated when it is built)."""

    def __init__(self) -> None:
        self._built: dict[str, argparse.ArgumentParser] = {}
        self._lock = threading.Lock()

    def get(self) -> argparse.ArgumentParser:
        from ..i18n import current_language
        from .parser import build_parser

        with self._lock:
            language = current_language()
            if language not in self._built:
                self._built[language] = build_parser()
            return self._built[language]


def _render(service: DaemonService, request: Request, call: Call, parser: argparse.ArgumentParser) -> dict[str, Any]:
    from .parser import parse_argv

    stdout, stderr = _Text(request.color), _Text(request.stderr_tty)
    _threads.stdout, _threads.stderr = GuardedStdout(stdout), stderr  # type: ignore[arg-type]
    try:
        try:
            args = parse_argv(list(request.argv), parser)
        except (MemoriesError, SystemExit):
            raise PassBack from None  # said in the client, where help and usage fit its terminal
        _check(args, request)
        ctx = ServedContext(args, request, service, call, stderr)
        status = _run(ctx, args, _wants_json(request.argv))
    finally:
        del _threads.stdout, _threads.stderr
    return {"stdout": stdout.take(), "stderr": stderr.take(), "status": status}


def _check(args: argparse.Namespace, request: Request) -> None:
    """The plain form of a served verb, for the home this daemon serves."""
    rule = SERVED.get(getattr(args, "handler", None))  # type: ignore[arg-type]
    if rule is None or not rule[1](args) or getattr(args, "no_daemon", False) or getattr(args, "debug", False):
        raise PassBack
    home, config = getattr(args, "home", None), getattr(args, "config", None)
    if home and request.path(home) != request.home.resolve():
        raise PassBack
    if config and not request.path(config).is_file():
        raise PassBack  # the ordinary way says it is missing


def _run(ctx: ServedContext, args: argparse.Namespace, as_json: bool) -> int:
    """run._run after the parse: the handler, then its JSON or its error as the CLI prints them."""
    try:
        try:
            payload = args.handler(ctx)
        finally:
            if ctx.opened is not None:
                ctx.opened.close()
        if as_json:
            print(json_text(json.dumps(payload, ensure_ascii=False, default=json_of)))
        return 0
    except PassBack:
        raise
    except MemoriesError as exc:
        if not ctx.committed:
            raise PassBack from None
        return _fail(exc, as_json)
    except Exception as exc:  # noqa: BLE001 - as run._run: one line, never a traceback
        if not ctx.committed:
            raise PassBack from None
        return _internal_error(exc, as_json, False)


class ServedContext(Context):
    """A verb's context in the daemon: its engine is this daemon's client for a vault it holds
    unlocked; everything that would happen in the caller's process passes the command back."""

    def __init__(self, args: argparse.Namespace, request: Request, service: DaemonService, call: Call,
                 stderr: _Text) -> None:
        super().__init__(args)
        self.color = request.color and not self.json
        self.__dict__["home"] = service.engine.home
        self.config = str(request.path(args.config)) if getattr(args, "config", None) else None
        self.client = InProcessClient(service, call)
        self.committed = False  # the verb has its vault: from here on its output is the answer
        self._stderr = stderr
        self._call = call

    @property
    def engine(self) -> Any:
        if self.opened is None:
            raise PassBack  # an engine of the caller's own
        return self.opened

    def unlock(self, ref: str, *, prompt: str | None = None, local: bool = False) -> str:
        served = None if local else self._served_by_daemon(ref)
        if served is None:
            raise PassBack  # a passphrase of the caller's
        return served

    def use_daemon_if_running(self) -> bool:
        raise PassBack

    def refuse_if_daemon_holds(self, vault_id: str) -> None:
        raise PassBack

    def _served_by_daemon(self, ref: str) -> str | None:
        from ..daemon.protocol import VAULT_STATE

        try:
            state = self.client.call(VAULT_STATE, {"vault": ref, "touch": True})
        except MemoriesError:
            return None
        if not isinstance(state, dict) or not state.get("unlocked"):
            return None
        self._use(_DaemonsEngine(self.client, self.home, self.config))  # type: ignore[abstract, arg-type]  # methods made at import; a client alike
        self.committed = True
        self._stderr.live = lambda text: self._call.progress({"stderr": text})
        return str(state["vault_id"])


class _DaemonsEngine(RemoteEngine):
    """The remote engine over the in-process client; what it would run in the caller's process
    (a local operation) is not for this way."""

    @property
    def _local(self) -> Any:
        raise PassBack


class _Text:
    """One stream of the command being rendered: kept, and sent on as it is flushed once `live`."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, tty: bool) -> None:
        self.parts: list[str] = []
        self.tty = tty
        self.live: Callable[[str], None] | None = None

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        if self.live is not None and self.parts:
            self.live(self.take())

    def isatty(self) -> bool:
        return self.tty

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


class _Routed:
    """sys.stdout or sys.stderr of the daemon: the rendering thread's stream, else the process's."""

    def __init__(self, stream: Any, slot: str) -> None:
        self._stream = stream
        self._slot = slot

    def _target(self) -> Any:
        return getattr(_threads, self._slot, None) or self._stream

    def write(self, text: str) -> int:
        target = self._target()
        return len(text) if target is None else int(target.write(text))

    def flush(self) -> None:
        target = self._target()
        if target is not None:
            target.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


_routing = threading.Lock()


def _route_streams() -> None:
    with _routing:
        for slot in ("stdout", "stderr"):
            if not isinstance(getattr(sys, slot), _Routed):
                setattr(sys, slot, _Routed(getattr(sys, slot), slot))
