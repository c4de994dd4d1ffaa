"""The engine's operations that another process may run for a caller, declared once.

`EngineAPI` is the table: each method is one operation, its parameters the request, its
return type the result, its `progress` callback's arguments the progress values, and the
`@operation` above it says the rest (a quick lookup or long work, which front ends use it,
which parameter names the vault the daemon must hold unlocked, which paths are the caller's).
From it come the remote engine's calls (daemon/remote_engine.py), the daemon's dispatch and
argument decoding (daemon/served.py, with serial.py, the serialisation `--json` uses), the
client's list of quick lookups and the API fingerprint of the version handshake.

`EngineHandle` is what a front end holds: the table, what runs in the caller's own process
whoever holds the vaults (`LocalAPI`), and the lock state. `Engine` satisfies it (mypy checks
`_engine_satisfies_the_api` below) and `RemoteEngine` declares it as its base, so a method
that drifts from the table in either (its name, a parameter's type or kind, its result)
fails the type check (tests/unit/test_api_typecheck.py runs mypy on drifted copies);
tests/unit/test_engine_api.py checks parameter names and defaults too (mypy compares neither
for positional parameters).

Reading the table loads nothing: annotations stay text until one operation's types are asked
for (`hints`), and then only the names it uses load (through the engine package's lazy names).
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from ..vocabulary import DEFAULT_ASK_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, Kind, MatchMode, Mode

if TYPE_CHECKING:
    from ..answer.types import Answer
    from ..config import Config
    from ..index.reports import EmbedProgress, IndexReport
    from ..models.install_files import InstallProgress, InstallReport
    from ..retrieval.results import RecordHit, SearchResponse
    from ..sync.registry import TargetEntry
    from ..sync.types import Conflict, DeviceInfo, SyncProgress, SyncReport
    from ..text.query import Query
    from ..vault.backups import BackupProgress
    from ..vault.records import Record
    from .backup_ops import BackupReport, RestoreReport
    from .egress_ops import EgressReport
    from .export_ops import ExportReport
    from .facade import Engine
    from .importers.common import ImportReport
    from .source_list import SourceSpec
    from .source_ops import SourceInfo
    from .source_sync import SourceSyncReport
    from .types import HomeReport, IngestProgress, IngestResult, StatusReport, VaultInfo, VaultScan

Front = Literal["cli", "tui", "mcp"]
F = TypeVar("F", bound=Callable[..., Any])
BUDGET_SECONDS = 300.0  # the engine's own default (index/reports.py), repeated: loading it costs numpy
# parameters that are not the request's: callbacks, and the caller's folder (sent apart)
ENGINE_ONLY = ("self", "progress", "cancel", "cwd", "before_replace")


@dataclass(frozen=True)
class Operation:
    """One row of the table (the method of `EngineAPI` named `name` is the rest of it)."""

    name: str
    quick: bool  # answered from memory: the client waits less for a silent daemon
    fronts: tuple[Front, ...]  # the front ends that call it (tests/unit/test_engine_fronts.py reads their code)
    progress: str | None  # the key its progress values travel under
    vault: str | None  # the parameter naming a vault the daemon must hold unlocked
    in_cwd: tuple[str, ...]  # path parameters the daemon opens in the caller's working folder
    cwd: bool  # the engine method takes the caller's working folder itself (`cwd=`)
    reports_as_typed: bool  # results name `in_cwd` paths as the caller typed them (else as opened)

    @property
    def verb(self) -> str:
        """The daemon's method name."""
        return f"vault.{self.name}"

    @property
    def sends_cwd(self) -> bool:
        return self.cwd or bool(self.in_cwd)

    @property
    def cancellable(self) -> bool:
        return "cancel" in self.parameters

    @property
    def parameters(self) -> tuple[str, ...]:
        code = _function(self.name).__code__
        return tuple(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount])

    @property
    def request(self) -> tuple[str, ...]:
        """The parameters the caller sends (not the callbacks, nor the working folder)."""
        return tuple(p for p in self.parameters if p not in ENGINE_ONLY)

    def annotation(self, parameter: str) -> str:
        """A parameter's (or "return"'s) type as written."""
        return str(_function(self.name).__annotations__[parameter])


def operation(*, quick: bool = False, fronts: tuple[Front, ...] = ("cli",), progress: str | None = None,
              vault: str | None = "vault_id", in_cwd: tuple[str, ...] = (), cwd: bool = False,
              reports_as_typed: bool = True) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        row = Operation(fn.__name__, quick, fronts, progress, vault, in_cwd, cwd, reports_as_typed)
        fn.__operation__ = row  # type: ignore[attr-defined]
        return fn

    return mark


class EngineAPI(Protocol):
    # -- vault settings and records ----------------------------------------------------------
    @operation(quick=True, fronts=("cli", "tui"))
    def vault_name(self, vault_id: str) -> str: ...

    @operation(quick=True, fronts=("cli", "tui"))
    def device_only(self, vault_id: str) -> bool: ...

    @operation(quick=True, fronts=("cli", "tui"))
    def set_device_only(self, vault_id: str, on: bool) -> None: ...

    @operation(quick=True, fronts=("cli", "mcp"))
    def conflicted(self, vault_id: str, record_id: str) -> bool: ...

    @operation(fronts=("cli", "tui"))
    def list_records(self, vault_id: str, kind: Kind | None = None) -> list[Record]: ...

    @operation(fronts=("cli", "tui"))
    def add_record(self, vault_id: str, *, kind: Kind, title: str, body: str = "", tags: Sequence[str] = (),
                   metadata: dict[str, str] | None = None) -> Record: ...

    @operation(fronts=("cli", "tui", "mcp"))
    def read_record(self, vault_id: str, record_id: str, revision: int | None = None) -> Record: ...

    @operation(fronts=("cli", "tui"))
    def update_record(self, vault_id: str, record_id: str, *, title: str | None = None, body: str | None = None,
                      tags: Sequence[str] | None = None, expected_revision: int | None = None) -> Record: ...

    @operation(fronts=("cli", "tui"))
    def delete_record(self, vault_id: str, record_id: str) -> None: ...

    @operation(quick=True, fronts=("tui", "mcp"))
    def revisions(self, vault_id: str, record_id: str) -> list[int]: ...

    @operation(cwd=True)
    def add_asset(self, vault_id: str, path: Path, title: str | None = None, *, cwd: Path | None = None) -> Record: ...

    @operation(progress="ingest", cwd=True, fronts=("cli", "tui"))
    def ingest(self, vault_id: str, paths: Sequence[Path], *, title: str | None = None, recursive: bool = False,
               progress: Callable[[IngestProgress], None] | None = None, cancel: threading.Event | None = None,
               cwd: Path | None = None) -> list[IngestResult]: ...

    # -- index, search, answers ----------------------------------------------------------------
    @operation(progress="embed")
    def build_vector_index(self, vault_id: str, *, budget_seconds: float = BUDGET_SECONDS,
                           progress: Callable[[EmbedProgress], None] | None = None,
                           cancel: threading.Event | None = None) -> IndexReport: ...

    @operation(progress="embed", fronts=("cli", "tui", "mcp"))
    def search(self, vault_id: str, query: str | Query, *, mode: Mode | None = None,
               match_mode: MatchMode | None = None, limit: int | None = None, cards_only: bool = False,
               rerank: bool = True, budget_seconds: float = BUDGET_SECONDS,
               progress: Callable[[EmbedProgress], None] | None = None,
               cancel: threading.Event | None = None) -> SearchResponse: ...

    @operation(fronts=("cli", "mcp"))
    def memory_search(self, vault_id: str, query: str | Query, *, limit: int | None = None,
                      match_mode: MatchMode | None = None) -> list[RecordHit]: ...

    @operation(fronts=("cli", "tui", "mcp"))
    def ask(self, vault_id: str, question: str, *, mode: Mode = DEFAULT_MODE, match_mode: MatchMode = DEFAULT_MATCH_MODE,
            limit: int = DEFAULT_ASK_LIMIT, rerank: bool = True, cancel: threading.Event | None = None) -> Answer: ...

    @operation(fronts=("cli", "tui"))
    def status(self, vault_id: str) -> StatusReport: ...

    # -- keeping and leaving with your data ----------------------------------------------------
    @operation(progress="backup", vault="ref", in_cwd=("folder",), fronts=("cli", "tui"))
    def backup_vault(self, ref: str, folder: Path | None = None, *, keep: int | None = None,
                     progress: Callable[[BackupProgress], None] | None = None,
                     cancel: threading.Event | None = None) -> BackupReport: ...

    @operation(progress="backup", vault=None, in_cwd=("file",))
    def restore_vault(self, file: Path, passphrase: str, *, as_name: str | None = None, force: bool = False,
                      progress: Callable[[BackupProgress], None] | None = None,
                      cancel: threading.Event | None = None,
                      before_replace: Callable[[str], None] | None = None) -> RestoreReport: ...

    @operation(vault="ref", fronts=("cli", "tui"))
    def egress_log(self, ref: str, since: str | None = None) -> EgressReport: ...

    @operation(progress="export", vault="ref", in_cwd=("folder",))
    def export_vault(self, ref: str, folder: Path, *, include_excluded: bool = False, force: bool = False,
                     progress: Callable[[int, int], None] | None = None,
                     cancel: threading.Event | None = None) -> ExportReport: ...

    # -- source folders, imports, sync ---------------------------------------------------------
    @operation(in_cwd=("folder",), reports_as_typed=False)  # a source folder is kept, and shown, absolute
    def add_source(self, vault_id: str, folder: Path, *, globs: list[str] | None = None,
                   excludes: list[str] | None = None, take_over: bool = False) -> SourceSpec: ...

    @operation(fronts=("cli", "tui"))
    def list_sources(self, vault_id: str) -> list[SourceInfo]: ...

    @operation()
    def remove_source(self, vault_id: str, ref: str) -> SourceSpec: ...

    @operation(progress="ingest")
    def sync_sources(self, vault_id: str, ref: str | None = None, *, prune: bool | None = None,
                     progress: Callable[[IngestProgress], None] | None = None,
                     cancel: threading.Event | None = None, full: bool = False) -> list[SourceSyncReport]: ...

    @operation(progress="ingest", in_cwd=("path",), reports_as_typed=False)
    def import_notes(self, vault_id: str, app: str, path: Path, *, dry_run: bool = False,
                     progress: Callable[[IngestProgress], None] | None = None,
                     cancel: threading.Event | None = None, assets: bool = False) -> ImportReport: ...

    @operation(cwd=True, fronts=("cli", "tui"))
    def sync_add(self, vault_id: str, url: str, passphrase: str | None = None, *, endpoint_url: str | None = None,
                 cwd: Path | None = None) -> TargetEntry: ...

    @operation(progress="sync", fronts=("cli", "tui"))
    def sync_now(self, vault_id: str, *, progress: Callable[[SyncProgress], None] | None = None,
                 cancel: threading.Event | None = None) -> SyncReport: ...

    @operation()
    def sync_new_device(self, vault_id: str) -> str: ...

    @operation()
    def sync_pending(self, vault_id: str) -> int: ...

    @operation(quick=True, fronts=("cli", "tui"))
    def sync_devices(self, vault_id: str) -> list[DeviceInfo]: ...

    @operation(fronts=("cli", "tui"))
    def sync_forget(self, vault_id: str, device: str) -> DeviceInfo: ...

    @operation(quick=True, fronts=("cli", "tui"))
    def conflicts(self, vault_id: str) -> list[Conflict]: ...

    @operation(fronts=("cli", "tui"))
    def resolve_conflict(self, vault_id: str, record_id: str, keep: str | None = None) -> Conflict: ...

    @operation(fronts=("cli", "tui"))
    def keep_both(self, vault_id: str, record_id: str) -> list[Record]: ...


class LocalAPI(Protocol):
    """What needs no vault key (the home, the vault files' headers, the model folder): it runs
    in the caller's own process even when a daemon holds the vaults."""

    home: Path
    config: Config

    def init_home(self) -> HomeReport: ...
    def scan_vaults(self) -> VaultScan: ...
    def list_vaults(self) -> list[VaultInfo]: ...
    def resolve_vault(self, ref: str) -> VaultInfo: ...
    def create_vault(self, name: str, passphrase: str, *, device_only: bool = False) -> VaultInfo: ...
    def change_passphrase(self, ref: str, old: str, new: str) -> None: ...
    def install_model(self, *, progress: Callable[[InstallProgress], None] | None = None,
                      cancel: threading.Event | None = None, source: Path | None = None) -> InstallReport: ...
    def model_terms_accepted(self) -> bool: ...
    @property
    def model_loaded(self) -> bool: ...
    def preload(self) -> None: ...
    def save_indexes(self) -> None: ...
    def unlocked_ids(self) -> list[str]: ...
    @property
    def lock_epoch(self) -> int: ...
    def sync_status(self, vault_id: str | None = None, *, count_records: bool = True) -> list[TargetEntry]: ...
    def sync_remove(self, ref: str) -> TargetEntry: ...


class EngineHandle(EngineAPI, LocalAPI, Protocol):
    """The engine a front end holds: this process's `Engine`, or the daemon's client
    (`RemoteEngine`), which says where vaults unlock."""

    def unlock(self, ref: str, passphrase: str, *, accept_rollback: bool = False) -> VaultInfo: ...
    def is_unlocked(self, vault_id: str) -> bool: ...
    def lock(self, vault_id: str | None = None) -> None: ...
    def close(self) -> None: ...


# What runs in the caller's own process even when a daemon serves the vaults: `LocalAPI`'s names.
LOCAL = tuple(name for name in (*LocalAPI.__annotations__, *vars(LocalAPI)) if not name.startswith("_"))

if TYPE_CHECKING:
    def _engine_satisfies_the_api(engine: Engine) -> EngineHandle:
        return engine  # a method of the table that Engine lacks or types otherwise fails here


def _function(name: str) -> Any:
    return getattr(EngineAPI, name)


@functools.cache
def operations() -> tuple[Operation, ...]:
    """Every row of the table, in the order declared."""
    return tuple(fn.__operation__ for fn in vars(EngineAPI).values() if hasattr(fn, "__operation__"))


@functools.cache
def by_name() -> dict[str, Operation]:
    return {op.name: op for op in operations()}


def by_verb(verb: str) -> Operation | None:
    name = verb.removeprefix("vault.")
    return by_name().get(name) if verb.startswith("vault.") else None


def quick_verbs() -> frozenset[str]:
    """The daemon methods answered from memory (a client waits less for a silent daemon)."""
    return frozenset(op.verb for op in operations() if op.quick)


class _EngineNames(dict[str, Any]):
    """The names annotations use, loaded from the engine package as they are asked for."""

    def __missing__(self, key: str) -> Any:
        package = sys.modules[__package__ or ""]  # loaded before any of its modules; importing it would close a circle
        try:
            return getattr(package, key)
        except AttributeError:
            raise KeyError(key) from None


def hints(op: Operation, parameter: str) -> object:
    """The type of one parameter (or "return") of `op`, loading only the types it names."""
    import typing

    namespace = _EngineNames(typing.__dict__)
    namespace.update({"threading": threading, "Path": Path, "Sequence": Sequence, "Callable": Callable,
                      "Kind": Kind, "Mode": Mode, "MatchMode": MatchMode})
    value: object = eval(op.annotation(parameter), namespace)  # noqa: S307 - the table's own text, nothing read
    return value


def progress_types(op: Operation) -> tuple[object, ...]:
    """The argument types of `op`'s progress callback."""
    import typing

    callback = next(a for a in typing.get_args(hints(op, "progress")) if a is not type(None))
    return tuple(typing.get_args(callback)[0])
