"""What every verb handler gets: the parsed arguments, the engine (opened on first use) and
output helpers that honour --json and NO_COLOR."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ErrorCode, MemoriesError, UsageError
from ..i18n import _, msg
from .output import Payload, clean, print_table

if TYPE_CHECKING:  # a verb the daemon serves loads neither (nor the engine's modules)
    from ..daemon import DaemonPaths
    from ..engine import Engine, EngineHandle


# Methods a daemon this command starts adds for the front end that started it (the CLI's
# command lines, cli/served_run.py): handed down from cli.main, which sits above the parser.
DaemonMethods = Callable[[Any], dict[str, Any]]


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.daemon_methods: DaemonMethods | None = None
        self.json = bool(getattr(args, "json", False))
        self.opened: EngineHandle | None = None
        self.color = sys.stdout.isatty() and not self.json and "NO_COLOR" not in os.environ

    @property
    def engine(self) -> EngineHandle:
        """The verb's engine: this process's, or the resident engine's client once `unlock`
        (or `held_by_daemon`, `use_daemon_if_running`) found the daemon holding the vault."""
        return self.local_engine if self.opened is None else self.opened

    @property
    def local_engine(self) -> Engine:
        """This process's own engine, for a verb the daemon never runs (it runs the daemon, or
        joins a sync target before any daemon could hold the vault)."""
        from ..engine import Engine

        if isinstance(self.opened, Engine):
            return self.opened
        engine = Engine.open(getattr(self.args, "home", None), getattr(self.args, "config", None))
        self._use(engine)
        return engine

    @functools.cached_property
    def home(self) -> Path:
        """The home, found as `Engine.open` finds it (and failing as it does), without opening
        an engine: what asking the daemon needs."""
        if self.opened is not None:
            return self.opened.home
        from ..engine import locate_home

        return locate_home(getattr(self.args, "home", None), getattr(self.args, "config", None))[0]

    def unlock(self, ref: str, *, prompt: str | None = None, local: bool = False) -> str:
        """The id of vault `ref`, held unlocked by the engine this verb then uses: the resident
        engine when it holds the vault (no passphrase, no key derivation; `engine` becomes its
        client), else this process, with a passphrase from the usual sources. Every vault verb
        calls this first, so this is the one place that chooses; `local=True` keeps a verb the
        daemon does not serve in this process."""
        served = None if local else self._served_by_daemon(ref)
        if served is not None:
            return served
        from ..frontend.passphrase import get_passphrase

        info = self.engine.resolve_vault(ref)
        passphrase = get_passphrase(file=getattr(self.args, "passphrase_file", None),
                                    prompt=prompt or _("Passphrase for vault {name}: ").format(name=info.name))
        self.engine.unlock(info.vault_id, passphrase,
                           accept_rollback=bool(getattr(self.args, "accept_rollback", False)))
        return info.vault_id

    def held_by_daemon(self, ref: str) -> str | None:
        """The id of vault `ref` when the resident engine holds it unlocked (`engine` then
        becomes its client), else None: for a verb that never asks for a passphrase."""
        return self._served_by_daemon(ref)

    def use_daemon_if_running(self) -> bool:
        """Run the verb's work in the resident engine when one serves this home, whatever its
        vaults' state (a restore, which must lock the vault it replaces where it is open);
        whether it does."""
        if getattr(self.args, "no_daemon", False):
            return False
        from ..daemon import connect
        from ..daemon.remote_engine import remote_engine

        try:
            client = connect(self.home)
        except MemoriesError:
            return False
        if client is not None:
            self._use(remote_engine(client, self.home, getattr(self.args, "config", None)))
        return client is not None

    def refuse_if_daemon_holds(self, vault_id: str) -> None:
        """Work in this process that replaces a vault's file (`vault restore --no-daemon`) is
        refused, before anything changes, while a daemon (or the TUI) serving this home holds
        that vault unlocked: it would go on serving the records and index of the file it had."""
        from ..daemon import VAULT_STATE, DaemonClient, unix_sockets_supported
        from ..daemon.client import REPORTED

        if not unix_sockets_supported():
            return
        client = DaemonClient(self.home)
        if not client.paths.socket.exists():
            return
        try:
            state = client.call(VAULT_STATE, {"vault": vault_id})
        except MemoriesError as exc:
            if exc.code in REPORTED:
                raise
            return  # no daemon (a stale socket), or one that does not know the vault
        if isinstance(state, dict) and state.get("unlocked"):
            name = str(state.get("name") or vault_id)
            raise UsageError(msg(
                "The Memories daemon holds vault {name} unlocked; replacing its file from this process would leave "
                "the daemon serving the records and index it had. Nothing was changed. Run the restore without "
                "--no-daemon (the daemon locks the vault and replaces it), or run `memories lock {name}` first.",
                name=name), code=ErrorCode.VAULT_HELD_BY_DAEMON)

    def _served_by_daemon(self, ref: str) -> str | None:
        if getattr(self.args, "no_daemon", False):
            return None
        from ..daemon import VAULT_STATE, connect
        from ..daemon.client import REPORTED
        from ..daemon.remote_engine import remote_engine

        home = self.home
        try:
            client = connect(home)
            state = client.call(VAULT_STATE, {"vault": ref, "touch": True}) if client is not None else None
        except MemoriesError as exc:  # gone, refused, or a vault it does not know: this process decides
            if exc.code in REPORTED:  # it is there but stopped or of another build: say so
                raise
            return None
        if client is None or not isinstance(state, dict) or not state.get("unlocked"):
            return None
        self._use(remote_engine(client, home, getattr(self.args, "config", None)))
        return str(state["vault_id"])

    def _use(self, engine: EngineHandle) -> None:
        """From now on the verb's engine is `engine`, mostly the daemon's client (an engine
        opened before, for the question, is closed: nothing of it is needed)."""
        if self.opened is not None:
            self.opened.close()
        self.opened = engine

    def daemon_paths(self) -> DaemonPaths:
        from ..daemon import DaemonPaths

        return DaemonPaths(self.home)

    def progress(self, text: str) -> None:
        if not self.json:
            print(clean(text), file=sys.stderr, flush=True)

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text

    def dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.color else text

    def table(self, headers: list[str], rows: Sequence[Sequence[object]]) -> None:
        print_table(headers, rows, bold=self.color)


Handler = Callable[[Context], Payload]
