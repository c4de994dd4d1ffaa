"""`memories mcp`: the MCP stdio server (official `mcp` 2.x SDK, `MCPServer`).

Start-up unlocks the granted vaults once, from the passphrase sources that need no terminal
(file, command, environment), then serves. Nothing but protocol frames reaches stdout:
logs go to stderr, and while unlocking, fd 0/1 point at the null device / stderr so a
passphrase command can neither eat protocol input nor print into it. onnxruntime and the
model load on the first call that needs them, so a client gets its answer quickly.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..access.grants import GrantedVault, Grants
from ..access.mcp_server import build_server
from ..access.tools import (
    MemoryTools,
)
from ..errors import ErrorCode, MemoriesError, UsageError
from ..frontend.durations import parse_duration
from ..i18n import msg

if TYPE_CHECKING:

    from ..engine import Engine, VaultInfo

log = logging.getLogger("memories.mcp")
T = TypeVar("T")




def serve(home: str | None, config: str | None, vault_refs: list[str], *, expires: str | None = None,
          passphrase_file: str | None = None, no_daemon: bool = False) -> None:
    """Unlock, register the grant, serve over stdio until the client closes the pipe.

    With the resident engine (running now, or expected: no passphrase source was given) the
    server unlocks nothing and forwards each call to it (`serve_through_daemon`). Otherwise
    the KDF (which releases the GIL) runs in a thread while this one imports the MCP SDK, so
    start-up costs about the larger of the two rather than their sum; a failed unlock still
    ends the process with a clear error before any protocol frame is written."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="memories mcp: %(levelname)s %(message)s")
    expires_in = parse_duration(expires) if expires else None
    if not vault_refs:
        raise UsageError(msg("Name the vaults this server may read: memories mcp --vault VAULT_ID [--vault …]."))
    if not no_daemon and _uses_daemon(home, passphrase_file):
        serve_through_daemon(home, config, vault_refs, expires_in=expires_in)
        return
    from ..engine import Engine

    engine = Engine.open(home, config)
    try:
        infos, passphrase = _prepare(engine, vault_refs, passphrase_file)
        unlocked: list[GrantedVault] = []
        failure: list[BaseException] = []

        def unlock() -> None:
            try:
                for info in infos:
                    engine.unlock(info.vault_id, passphrase)
                    unlocked.append(GrantedVault(info.vault_id, info.name))
            except BaseException as exc:  # handed to the main thread below
                failure.append(exc)

        worker = threading.Thread(target=unlock, name="memories-unlock")
        worker.start()
        import mcp.server.mcpserver  # noqa: F401  (the slow part of start-up, overlapped with the KDF)

        worker.join()
        if failure:
            raise failure[0]
        grants = Grants(engine.home, unlocked, expires_in=expires_in)
        _end_on_sigterm(grants.unregister)  # clients stop servers this way: still clean up
        try:
            grants.register()
            threading.Thread(target=_warm_indexes, args=(engine, list(grants.vaults)), name="memories-warm",
                             daemon=True).start()
            from ..access.stdio_guard import run_stdio

            run_stdio(build_server(MemoryTools(engine, grants), list(grants.vaults.values())))
        finally:
            grants.unregister()
    finally:
        engine.close()  # keys zeroed, indexes dropped


def _end_on_sigterm(cleanup: Callable[[], None]) -> None:
    """End the process at SIGTERM after `cleanup` (removing the grant record), there and then.

    Unwinding instead (SystemExit through the event loop) can wait forever: the SDK's stdin reader
    is a worker thread blocked in a read no cancel reaches, and the loop's shutdown joins it. The
    keys go with the process's memory; nothing else needs writing."""

    def on_sigterm(signum: int, frame: Any) -> None:
        try:
            cleanup()
        finally:
            sys.stderr.flush()
            os._exit(0)

    signal.signal(signal.SIGTERM, on_sigterm)


def _warm_indexes(engine: Engine, vault_ids: list[str]) -> None:
    """Restore (or build) each lexical index in the background, so the first call is quick
    without making the client wait for it at start-up."""
    for vault_id in vault_ids:
        try:
            engine.load_index(vault_id)
        except Exception as exc:  # the first call reports it properly
            log.warning("index of %s not ready: %s", vault_id, getattr(exc, "message", type(exc).__name__))


def _prepare(engine: Engine, refs: list[str], passphrase_file: str | None) -> tuple[list[VaultInfo], str]:
    """The vaults to unlock and the passphrase, from sources that need no terminal."""
    from ..frontend.passphrase import get_passphrase

    infos = list({info.vault_id: info for info in (engine.resolve_vault(ref) for ref in refs)}.values())
    if not _has_passphrase_source(passphrase_file):
        raise UsageError(msg("Without the daemon the MCP server needs a passphrase source and never prompts: "
                             "use --passphrase-file, $MEMORIES_PASSPHRASE_FILE, $MEMORIES_PASSPHRASE_COMMAND "
                             "or $MEMORIES_PASSPHRASE (or drop --no-daemon and unlock with `memories unlock "
                             "VAULT`)."))
    with _std_streams_away():  # a passphrase command can neither read protocol input nor print into it
        return infos, get_passphrase(file=passphrase_file)


@contextmanager
def _std_streams_away() -> Iterator[None]:
    """fd 0 → null device, fd 1 → stderr for the duration; restored afterwards."""
    sys.stdout.flush()
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (null, saved_in, saved_out):
            os.close(fd)


def _uses_daemon(home: str | None, passphrase_file: str | None) -> bool:
    """Serve through the resident engine when one runs, or when this server has no passphrase
    source (then every call says how to unlock, until `memories unlock` starts one)."""
    from ..daemon import connect, daemon_disabled, unix_sockets_supported
    from ..engine import Engine

    if daemon_disabled() or not unix_sockets_supported():
        return False
    try:
        if connect(Engine.open(home).home) is not None:
            return True
    except MemoriesError as exc:
        if exc.code == ErrorCode.DAEMON_NOT_ANSWERING:  # it runs, only too busy to let us in right now
            return True
    return not _has_passphrase_source(passphrase_file)


def _has_passphrase_source(passphrase_file: str | None) -> bool:
    return bool(passphrase_file or any(os.environ.get(k) for k in ("MEMORIES_PASSPHRASE_FILE",
                                                                   "MEMORIES_PASSPHRASE_COMMAND"))
                or "MEMORIES_PASSPHRASE" in os.environ)


def serve_through_daemon(home: str | None, config: str | None, vault_refs: list[str], *,
                         expires_in: float | None) -> None:
    """No passphrase, no key derivation here: the daemon holds the keys and checks the grant."""
    from ..engine import Engine
    from .daemon_tools import DaemonTools

    engine = Engine.open(home, config)  # only to name the vaults: headers, no key
    infos = list({info.vault_id: info for info in (engine.resolve_vault(ref) for ref in vault_refs)}.values())
    vaults = [GrantedVault(info.vault_id, info.name) for info in infos]
    record = Grants(engine.home, vaults, expires_in=expires_in)  # for `mcp status` and the TUI's list
    tools = DaemonTools(engine.home, vaults, expires_in=expires_in)  # type: ignore[abstract]  # methods made at import
    _end_on_sigterm(record.unregister)
    try:
        record.register()
        from ..access.stdio_guard import run_stdio

        run_stdio(build_server(tools, vaults))
    finally:
        record.unregister()
        tools.close()
