"""The engine, with its vault work done by the home's resident engine.

`RemoteEngine` is an `Engine` whose vault methods (records, ingest, search, ask, index,
status, policy) are requests to the daemon that holds the vault unlocked; what needs no key
(listing and resolving vaults, the home, installing the model) it does itself, as `Engine`
does. Results come back as the engine's own typed values (their wire form read back with
`from_json`), so a front end prints them with the same code either way, and failures are the
same MemoriesErrors with the same codes and exit statuses. File names travel with the
caller's working folder, so they mean what they mean in the caller's shell.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ..engine import DEFAULT_ASK_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, from_json
from ..errors import ErrorCode, UsageError
from ..i18n import msg

if TYPE_CHECKING:
    from ..engine import (
        Answer,
        BackupProgress,
        BackupReport,
        EgressReport,
        EmbedProgress,
        Engine,
        ExportReport,
        ImportReport,
        IndexReport,
        IngestProgress,
        IngestResult,
        Kind,
        MatchMode,
        Mode,
        Query,
        Record,
        RecordHit,
        RestoreReport,
        SearchResponse,
        SourceInfo,
        SourceSpec,
        SourceSyncReport,
        StatusReport,
        SyncReport,
        VaultInfo,
    )
    from .client import DaemonClient

    _Base = Engine
else:
    _Base = object

T = TypeVar("T")
BUDGET_SECONDS = 300.0


def _load(name: str, data: Any, *, many: bool = False) -> Any:
    """A result (or a list of them) read back from its wire form; its type is loaded when a
    result of it comes back, not at start."""
    from .. import engine
    from .client import understood

    tp: Any = getattr(engine, name)
    return understood(name, lambda answer: from_json(list[tp] if many else tp, answer), data)


class RemoteEngine(_Base):
    """An `Engine` to its callers (mypy checks each method against Engine's), but not one at
    run time: the methods below go to the daemon, and any other (resolving and listing vaults,
    the home, the model install) runs on a plain `Engine` of this process opened on first use,
    so a call the daemon serves loads none of the engine's modules."""

    def __init__(self, client: DaemonClient, home: Path, config: str | os.PathLike[str] | None = None) -> None:
        self.client = client
        self.home = home
        self._config_ref = config

    @functools.cached_property
    def _local(self) -> Engine:
        return _local_engine(self.home, self._config_ref)

    def __getattr__(self, name: str) -> Any:  # only reached for what this class does not define
        if name.startswith("__") or name == "_local":
            raise AttributeError(name)
        return getattr(self._local, name)

    def close(self) -> None:
        local = self.__dict__.get("_local")
        if local is not None:
            local.close()

    def _call(self, method: str, progress: Callable[[dict[str, Any]], None] | None = None, **args: Any) -> Any:
        return self.client.call(f"vault.{method}", args, progress=progress)

    def _typed(self, name: str, method: str, progress: Callable[[dict[str, Any]], None] | None = None,
               **args: Any) -> Any:
        return _load(name, self._call(method, progress, **args))

    def _list(self, name: str, method: str, **args: Any) -> Any:
        return _load(name, self._call(method, **args), many=True)

    # -- the lock state is the daemon's ------------------------------------------------------
    def unlock(self, ref: str, passphrase: str, *, accept_rollback: bool = False) -> VaultInfo:
        raise UsageError(msg("The resident engine holds this vault; unlock and lock it with `memories unlock` "
                             "/ `memories lock`."))

    def is_unlocked(self, vault_id: str) -> bool:
        return self.client.call_as("vault_state", {"vault": vault_id}, lambda state: bool(state["unlocked"]))

    def lock(self, vault_id: str | None = None) -> None:
        """Nothing is unlocked in this process; the daemon's vaults lock with `memories lock`."""

    # -- vault settings and records ----------------------------------------------------------
    def vault_name(self, vault_id: str) -> str:
        return str(self._call("name", vault=vault_id))

    def device_only(self, vault_id: str) -> bool:
        return bool(self._call("device_only", vault=vault_id))

    def set_device_only(self, vault_id: str, on: bool) -> None:
        self._call("set_device_only", vault=vault_id, on=bool(on))

    def conflicted(self, vault_id: str, record_id: str) -> bool:
        return bool(self._call("conflicted", vault=vault_id, record_id=record_id))

    def list_records(self, vault_id: str, kind: Kind | None = None) -> list[Record]:
        return self._list("Record", "list_records", vault=vault_id, kind=kind)

    def add_record(self, vault_id: str, *, kind: Kind, title: str, body: str = "", tags: Sequence[str] = (),
                   metadata: dict[str, str] | None = None) -> Record:
        if metadata:
            raise UsageError(msg("Record metadata is not sent to the resident engine."))
        return self._typed("Record", "add_record", vault=vault_id, kind=kind, title=title, body=body, tags=list(tags))

    def read_record(self, vault_id: str, record_id: str, revision: int | None = None) -> Record:
        return self._typed("Record", "read_record", vault=vault_id, record_id=record_id, revision=revision)

    def update_record(self, vault_id: str, record_id: str, *, title: str | None = None, body: str | None = None,
                      tags: Sequence[str] | None = None) -> Record:
        return self._typed("Record", "update_record", vault=vault_id, record_id=record_id, title=title, body=body,
                           tags=None if tags is None else list(tags))

    def delete_record(self, vault_id: str, record_id: str) -> None:
        self._call("delete_record", vault=vault_id, record_id=record_id)

    def revisions(self, vault_id: str, record_id: str) -> list[int]:
        return [int(n) for n in self._call("revisions", vault=vault_id, record_id=record_id)]

    def add_asset(self, vault_id: str, path: Path, title: str | None = None, *, cwd: Path | None = None) -> Record:
        return self._typed("Record", "add_asset", vault=vault_id, path=str(path), title=title,
                           cwd=str(cwd or Path(os.getcwd())))

    def ingest(self, vault_id: str, paths: Sequence[Path], *, title: str | None = None, recursive: bool = False,
               progress: Callable[[IngestProgress], None] | None = None, cancel: threading.Event | None = None,
               cwd: Path | None = None) -> list[IngestResult]:
        def event(data: dict[str, Any]) -> None:
            if progress is not None and "ingest" in data:
                progress(_load("IngestProgress", data["ingest"]))

        results = self._call(  # cancel: ctrl+c hangs up, which stops the daemon's work
            "ingest", event, vault=vault_id, paths=[str(p) for p in paths], title=title, recursive=recursive,
            cwd=str(cwd or Path(os.getcwd())))
        return _load("IngestResult", results, many=True)

    # -- index, search, answers ----------------------------------------------------------------
    def build_vector_index(self, vault_id: str, *, budget_seconds: float = BUDGET_SECONDS,
                           progress: Callable[[EmbedProgress], None] | None = None,
                           cancel: threading.Event | None = None) -> IndexReport:
        return _load("IndexReport", self._call("build_vector_index", _embed_events(progress), vault=vault_id,
                                                 budget_seconds=budget_seconds))

    def search(self, vault_id: str, query: str | Query, *, mode: Mode | None = None,
               match_mode: MatchMode | None = None, limit: int | None = None, cards_only: bool = False,
               rerank: bool = True, budget_seconds: float = BUDGET_SECONDS,
               progress: Callable[[EmbedProgress], None] | None = None,
               cancel: threading.Event | None = None) -> SearchResponse:
        if isinstance(query, str):
            text = query
        else:  # parsed here already (and checked); the daemon parses the same text again
            text, mode, match_mode, limit = query.text, mode or query.mode, query.match_mode, query.limit
        return _load("SearchResponse", self._call(
            "search", _embed_events(progress), vault=vault_id, query=text, mode=mode, match_mode=match_mode,
            limit=limit, cards_only=cards_only, rerank=rerank, budget_seconds=budget_seconds))

    def memory_search(self, vault_id: str, query: str | Query, *, limit: int | None = None,
                      match_mode: MatchMode | None = None) -> list[RecordHit]:
        if isinstance(query, str):
            text = query
        else:
            text, limit, match_mode = query.text, query.limit, query.match_mode
        return self._list("RecordHit", "memory_search", vault=vault_id, query=text, limit=limit, match_mode=match_mode)

    def ask(self, vault_id: str, question: str, *, mode: Mode = DEFAULT_MODE, match_mode: MatchMode = DEFAULT_MATCH_MODE,
            limit: int = DEFAULT_ASK_LIMIT, rerank: bool = True, cancel: threading.Event | None = None) -> Answer:
        return self._typed("Answer", "ask", vault=vault_id, question=question, mode=mode, match_mode=match_mode,
                           limit=limit, rerank=rerank)

    def status(self, vault_id: str) -> StatusReport:
        return self._typed("StatusReport", "status", vault=vault_id)

    # -- keeping and leaving with your data ----------------------------------------------------
    def backup_vault(self, ref: str, folder: Path | None = None, *, keep: int | None = None,
                     progress: Callable[[BackupProgress], None] | None = None,
                     cancel: threading.Event | None = None) -> BackupReport:
        return _load("BackupReport", self._call(
            "backup", _backup_events(progress), vault=ref, folder=None if folder is None else str(folder),
            keep=keep, cwd=os.getcwd()))

    def restore_vault(self, file: Path, passphrase: str, *, as_name: str | None = None, force: bool = False,
                      progress: Callable[[BackupProgress], None] | None = None,
                      cancel: threading.Event | None = None,
                      before_replace: Callable[[str], None] | None = None) -> RestoreReport:
        """Restored by the daemon, which locks a vault it holds before replacing its file."""
        return _load("RestoreReport", self._call(
            "restore", _backup_events(progress), file=str(file), passphrase=passphrase, as_name=as_name,
            force=force, cwd=os.getcwd()))

    def egress_log(self, ref: str, since: str | None = None) -> EgressReport:
        return self._typed("EgressReport", "egress_log", vault=ref, since=since)

    def export_vault(self, ref: str, folder: Path, *, include_excluded: bool = False, force: bool = False,
                     progress: Callable[[int, int], None] | None = None,
                     cancel: threading.Event | None = None) -> ExportReport:
        def event(data: dict[str, Any]) -> None:
            done = data.get("export")
            if progress is not None and isinstance(done, list) and len(done) == 2:
                progress(int(done[0]), int(done[1]))

        return _load("ExportReport", self._call(
            "export", event, vault=ref, folder=str(folder), include_excluded=include_excluded, force=force,
            cwd=os.getcwd()))

    # -- source folders and imports ----------------------------------------------------------
    def add_source(self, vault_id: str, folder: Path, *, globs: list[str] | None = None,
                   excludes: list[str] | None = None) -> SourceSpec:
        return self._typed("SourceSpec", "add_source", vault=vault_id, folder=str(folder), globs=globs or [],
                           excludes=excludes or [], cwd=os.getcwd())

    def list_sources(self, vault_id: str) -> list[SourceInfo]:
        return self._list("SourceInfo", "list_sources", vault=vault_id)

    def remove_source(self, vault_id: str, ref: str) -> SourceSpec:
        return self._typed("SourceSpec", "remove_source", vault=vault_id, source=ref)

    def sync_sources(self, vault_id: str, ref: str | None = None, *, prune: bool | None = None,
                     progress: Callable[[IngestProgress], None] | None = None,
                     cancel: threading.Event | None = None, full: bool = False) -> list[SourceSyncReport]:
        return _load("SourceSyncReport", self._call("sync_sources", _ingest_events(progress), vault=vault_id, source=ref,
                                              prune=prune, full=full, cwd=os.getcwd()), many=True)

    def import_notes(self, vault_id: str, app: str, path: Path, *, dry_run: bool = False,
                     progress: Callable[[IngestProgress], None] | None = None,
                     cancel: threading.Event | None = None) -> ImportReport:
        return self._typed("ImportReport", "import_notes", _ingest_events(progress), vault=vault_id, app=app,
                           path=str(path), dry_run=dry_run, cwd=os.getcwd())

    # -- sync ---------------------------------------------------------------------------------
    def sync_now(self, vault_id: str, *, progress: Callable[[str], None] | None = None,
                 cancel: threading.Event | None = None) -> SyncReport:
        def event(data: dict[str, Any]) -> None:
            if progress is not None and isinstance(data.get("sync"), str):
                progress(data["sync"])
        return self._typed("SyncReport", "sync_now", event, vault=vault_id)


def _ingest_events(progress: Callable[[IngestProgress], None] | None) -> Callable[[dict[str, Any]], None]:
    def event(data: dict[str, Any]) -> None:
        if progress is not None and "ingest" in data:
            progress(_load("IngestProgress", data["ingest"]))
    return event


def _local_engine(home: Path, config: str | os.PathLike[str] | None) -> Engine:
    """This process's engine for what needs no vault key; an Engine method this client does
    not forward that reaches for a vault is refused in a sentence (it would otherwise say the
    vault is locked or unknown, while the daemon holds it unlocked)."""
    from ..engine import Engine

    class LocalPart(Engine):
        def _context(self, vault_ref: str) -> NoReturn:
            raise _not_served()

        def _vault(self, vault_ref: str) -> NoReturn:
            raise _not_served()

    return LocalPart.open(home, config)


def _not_served() -> UsageError:
    """An Engine method this client does not forward reached for a vault it does not hold."""
    return UsageError(msg("This command does not run through the Memories daemon yet; run it with --no-daemon "
                      "(it then asks for the passphrase)."), code=ErrorCode.DAEMON_UNSUPPORTED)


def _backup_events(progress: Callable[[BackupProgress], None] | None) -> Callable[[dict[str, Any]], None]:
    def event(data: dict[str, Any]) -> None:
        if progress is not None and "backup" in data:
            progress(_load("BackupProgress", data["backup"]))

    return event


def _embed_events(progress: Callable[[EmbedProgress], None] | None) -> Callable[[dict[str, Any]], None]:
    def event(data: dict[str, Any]) -> None:
        if progress is not None and "embed" in data:
            progress(_load("EmbedProgress", data["embed"]))

    return event
