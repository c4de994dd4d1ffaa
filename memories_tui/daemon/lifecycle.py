"""Starting, finding and stopping the one resident engine of a home.

The daemon holds an exclusive `flock` on `<home>/daemon/daemon.lock` for its whole life and
writes who it is there (pid, daemon or TUI). A second one fails to take the lock and names
the first. The kernel drops the lock when a daemon dies, even by `kill -9`, so a socket file
found while holding the lock is stale and is replaced. SIGTERM (and `memories daemon stop`)
locks every vault, which wipes the keys, before the process exits.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import MemoriesError
from ..i18n import _, msg
from .mcp_relay import McpRelayHost
from .mcp_sessions import McpSessions
from .paths import (
    DaemonPaths,
    DaemonUnavailableError,
    SocketAddress,
    open_private_file,
    read_holder_text,
    remove_stale_socket,
    unix_sockets_supported,
)
from .served import served_methods
from .server import DaemonServer, Method
from .service import DaemonService
from .spawn import WINDOWS_SENTENCE, DaemonRunningError, start_detached, stop_daemon

if TYPE_CHECKING:
    from ..engine import Engine, SourceWatcher, SyncScheduler

log = logging.getLogger("memories.daemon")
__all__ = ["WINDOWS_SENTENCE", "DaemonRunningError", "SocketHost", "read_holder", "run_daemon", "running_refusal",
           "served_fingerprint", "start_detached", "stop_daemon"]


@dataclass(frozen=True)
class Holder:
    pid: int
    kind: str  # daemon | tui


def read_holder(paths: DaemonPaths) -> Holder | None:
    try:
        data = json.loads(read_holder_text(paths.lock_file))
        return Holder(int(data["pid"]), str(data.get("kind", "daemon")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class HomeLock:
    """The exclusive right to serve a home's socket."""

    def __init__(self, paths: DaemonPaths, kind: str) -> None:
        self.paths = paths
        self.kind = kind
        self._fd: int | None = None

    def acquire(self) -> bool:
        fd = open_private_file(self.paths.lock_file, os.O_RDWR)  # never through a planted link
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "kind": self.kind, "started_at": time.time()}).encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def running_refusal(paths: DaemonPaths) -> DaemonRunningError:
    holder = read_holder(paths)
    if holder is None:
        return DaemonRunningError(msg("Another Memories daemon already serves {home}.", home=paths.home))
    what = "The Memories TUI" if holder.kind == "tui" else "A Memories daemon"
    return DaemonRunningError(msg("{what} already serves {home} (pid {pid}); only one runs per home.",
                                  what=what, home=paths.home, pid=holder.pid))


class SocketHost:
    """A bound, listening socket served by threads; used by `memories daemon` and the TUI."""

    def __init__(self, engine: Engine, kind: str, service: DaemonService | None = None) -> None:
        if not unix_sockets_supported():
            raise DaemonUnavailableError(msg(WINDOWS_SENTENCE))
        self.paths = DaemonPaths(engine.home)
        self.service = service if service is not None else DaemonService(engine, kind=kind)
        sessions = McpSessions(self.service)
        self.service.add_methods(sessions.methods())
        self.service.add_streams(McpRelayHost(sessions).streams())
        self.service.add_methods(served_methods(self.service))
        self.service.grants_status = sessions.status
        self.service.api = served_fingerprint(self.service.method_names())
        self.home_lock = HomeLock(self.paths, kind)
        self.server: DaemonServer | None = None
        self._threads: list[threading.Thread] = []
        self._stop_sweep = threading.Event()
        self._watcher: SourceWatcher | None = None
        self._syncer: SyncScheduler | None = None

    def start(self) -> None:
        """Take the home's lock and listen; DaemonRunningError when another one serves it."""
        self.paths.ensure_folder()
        if not self.home_lock.acquire():
            raise running_refusal(self.paths)
        try:
            remove_stale_socket(self.paths.socket)  # we hold the lock: any socket here is stale
            with SocketAddress(self.paths.socket) as address:
                self.server = DaemonServer(address.path, self.service)
        except BaseException:
            self.home_lock.release()
            raise
        server = self.server
        self.service.clients = server.clients
        self._threads = [threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5},
                                          name="memories-daemon-serve", daemon=True),
                         threading.Thread(target=self.service.sweep_forever, args=(self._stop_sweep,),
                                          name="memories-daemon-sweep", daemon=True)]
        for thread in self._threads:
            thread.start()
        self._watcher = self.service.engine.watch_sources()
        self._syncer = self.service.engine.watch_sync()
        log.info("serving %s (pid %d, %s)", self.paths.socket, os.getpid(), self.service.kind)

    def close(self, reason: str = "stop") -> None:
        """Stop accepting, lock every vault (keys wiped), remove the socket, drop the lock."""
        self._stop_sweep.set()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self._syncer is not None:
            self._syncer.stop()
            self._syncer = None
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
            try:
                self.paths.socket.unlink(missing_ok=True)
            except OSError:
                pass
        self.service.lock(None, reason)
        self.home_lock.release()
        log.info("stopped (%s)", reason)


def setup_log(paths: DaemonPaths) -> None:
    """Verbs, timings and error codes go to `<home>/daemon/daemon.log` (0600); never content."""
    fd = open_private_file(paths.log_file, os.O_WRONLY | os.O_APPEND)
    handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8", buffering=1))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def run_daemon(engine: Engine, *, ready_fd: int | None = None, announce: Callable[[str], None] | None = None,
               more: Callable[[DaemonService], dict[str, Method]] | None = None) -> None:
    """`memories daemon`: serve until SIGTERM, SIGINT or `memories daemon stop`. `ready_fd`
    (from `start_detached`) or `announce` (a foreground start) learn when it listens. `more`:
    methods of the front end that starts it (the CLI's command lines), outside the API
    fingerprint: their callers check the build themselves, and a TUI serving the socket has none."""
    host = SocketHost(engine, "daemon")
    if more is not None:
        host.service.add_methods(more(host.service))
    try:
        host.paths.ensure_folder()
        setup_log(host.paths)
        host.start()
    except MemoriesError as exc:
        _report_ready(ready_fd, exc.to_wire())
        raise
    stop = host.service.stop_requested
    reason = ["stop"]

    def on_signal(signum: int, _frame: Any) -> None:
        reason[0] = signal.Signals(signum).name
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal that started it may close
    _report_ready(ready_fd, {"pid": os.getpid()})
    if announce is not None:
        announce(_("Memories daemon serving {home} (pid {pid}); ctrl+c or `memories daemon stop` locks every "
                   "vault and stops it.").format(home=engine.home, pid=os.getpid()))
    try:
        while not stop.wait(1.0):
            pass
    finally:
        host.close(reason[0])


def _report_ready(fd: int | None, message: dict[str, Any]) -> None:
    if fd is None:
        return
    try:
        os.write(fd, json.dumps(message).encode() + b"\n")
        os.close(fd)
    except OSError:
        pass


def served_fingerprint(methods: Iterable[str]) -> str:
    """A digest of what a daemon serves (handshake.py): its method names, each operation of the
    engine's table (request, result and progress) and the field names of every result type the
    engine exports."""
    from .. import engine

    parts = sorted(methods)
    for op in engine.operations():
        parts.append(f"{op.verb}({','.join(op.request)})->{op.annotation('return')} {op.progress}")
    for name in sorted(engine.__all__):
        value = getattr(engine, name, None)
        if isinstance(value, type) and dataclasses.is_dataclass(value):
            parts.append(f"{name}{{{','.join(f.name for f in dataclasses.fields(value))}}}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]
