"""The engine facade every front end (TUI, CLI, MCP server) builds through `Engine.open`.

Synchronous and thread-safe; knows nothing of Textual. Long operations take a `progress`
callback and a `threading.Event` for cancellation. Unlocked vaults and their indexes live
only in this process's memory; `lock()` zeroes keys and drops indexes. The work itself is
done by the modules beside this one; each method here says what it offers.

Opening the engine and listing vaults load no index, search or model code (numpy, the
segmenter, onnxruntime, httpx): those modules are imported by the methods that use them, so
a front end's first screen does not wait for them (`preload` loads them ahead).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config, load_config
from ..errors import MemoriesError, UsageError
from ..home import locate as locate_home
from ..i18n import N_, msg
from ..index.reports import BUDGET_SECONDS, EmbedProgress, IndexReport
from ..vocabulary import DEFAULT_ASK_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE
from .asking import ask_vault
from .conflict_ops import ConflictOperations
from .context import EngineState, VaultContext
from .data_ops import DataOperations
from .jobs import BackgroundEmbedding, Deliver, save_index_snapshots
from .source_ops import SourceOperations
from .sync_ops import SyncOperations
from .vaults import VaultFiles

if TYPE_CHECKING:  # the rest loads in the methods that need it (none for opening and listing)
    from ..answer.types import Answer
    from ..index.embedding import Embedder
    from ..models.install import InstallProgress, InstallReport
    from ..retrieval.results import RecordHit, SearchResponse
    from ..text.query import Query
    from ..vault.records import NewRecord, Record
    from ..vault.store import UnlockedVault
    from ..vocabulary import Kind, MatchMode, Mode
    from .ingest import IngestProgressFn
    from .types import HomeReport, IngestResult, StatusReport, VaultInfo, VaultScan

MAX_ASSET_BYTES = 64 * 1024 * 1024
EmbedProgressFn = Callable[[EmbedProgress], None]


class Engine(DataOperations, SourceOperations, SyncOperations, ConflictOperations):
    def __init__(self, home: Path, config: Config) -> None:
        self.home = home
        self.config = config
        self._files = VaultFiles(home, config.path)
        self._state = EngineState(config)
        self._lock = threading.RLock()

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, config: str | os.PathLike[str] | None = None) -> Engine:
        home_path, config_path = locate_home(home, config)
        return cls(home_path, load_config(config_path, home_path))

    @property
    def lock_epoch(self) -> int:
        """Bumped by every lock: a front end drops results of work started before it."""
        return self._state.epoch.value

    def preload(self) -> None:
        """Import the vault, index and search code and load the segmenter's dictionaries now (a second
        or so), so the first unlock and search do not wait for them. A front end calls this from
        a background thread once its first screen is drawn; calling it again costs nothing.
        Never raises: a failure here meets the first search, which reports it properly."""
        try:
            from ..index import cache, embedding  # noqa: F401  (numpy)
            from ..retrieval import search  # noqa: F401
            from ..text import segment
            from ..vault import store  # noqa: F401  (cryptography, for the first unlock)

            segment.warm_up()
        except Exception:  # noqa: BLE001 - see above
            pass

    # -- home and vaults ------------------------------------------------------------------
    def init_home(self) -> HomeReport:
        """Create the home and a commented config; never overwrite an existing config, never
        chmod an existing folder."""
        return self._files.init_home()

    def scan_vaults(self) -> VaultScan:
        """The vaults, and the `*.mvault` files that are not usable vaults (read-only)."""
        return self._files.scan()

    def list_vaults(self) -> list[VaultInfo]:
        return self._files.list()

    def resolve_vault(self, ref: str) -> VaultInfo:
        """A VAULT_ID, or a unique vault name."""
        return self._files.resolve(ref)

    def create_vault(self, name: str, passphrase: str, *, device_only: bool = False) -> VaultInfo:
        return self._files.create(name, passphrase, device_only=device_only)

    def change_passphrase(self, ref: str, old: str, new: str) -> None:
        """Re-wrap the vault key; a vault that syncs puts the new wrap in its target too, so a
        device joining later uses the new passphrase (sync_ops.py)."""
        self._files.change_passphrase(ref, old, new, self.anchors.watch())
        self.refresh_join_record(ref, new)

    def unlock(self, ref: str, passphrase: str, *, accept_rollback: bool = False) -> VaultInfo:
        """`accept_rollback` trusts a file older than this home has seen (data_ops.py, anchors)."""
        from ..vault.store import UnlockedVault
        from .egress_ops import mark_kept_log

        info = self.resolve_vault(ref)
        if info.vault_id not in self._state.vaults:
            watcher = self.anchors.watch(accept=accept_rollback)
            vault = UnlockedVault(info.path, passphrase, watcher=watcher)
            mark_kept_log(vault)
            self._state.vaults.add(info.vault_id, vault)
        return info

    def is_unlocked(self, vault_id: str) -> bool:
        return vault_id in self._state.vaults

    def unlocked_ids(self) -> list[str]:
        """The vaults this engine holds unlocked now."""
        return self._state.vaults.ids()

    def lock(self, vault_id: str | None = None) -> None:
        """Zero keys, forget decrypted records, drop indexes and bump the lock epoch."""
        state = self._state
        with self._lock:
            indexes = state.built_indexes()
            if indexes is not None:
                save_index_snapshots(indexes, state.vaults)
            for vid in state.vaults.ids() if vault_id is None else [vault_id]:
                state.vaults.close(vid)
                if indexes is not None:
                    indexes.drop(vid)
            state.epoch.bump()

    def close(self) -> None:
        self.lock()

    def save_indexes(self) -> None:
        """Persist changed lexical indexes inside their vaults now (e.g. after a search built
        one), so a later lock has nothing left to save. Safe from any thread."""
        with self._lock:
            indexes = self._state.built_indexes()
            if indexes is not None:
                save_index_snapshots(indexes, self._state.vaults)

    def vault_name(self, vault_id: str) -> str:
        return self._vault(vault_id).name

    def device_only(self, vault_id: str) -> bool:
        return bool(self._vault(vault_id).settings().get("device_only", False))

    def set_device_only(self, vault_id: str, on: bool) -> None:
        vault = self._vault(vault_id)
        settings = vault.settings()
        settings["device_only"] = bool(on)
        vault.set_settings(settings)

    # -- records --------------------------------------------------------------------------
    def list_records(self, vault_id: str, kind: Kind | None = None) -> list[Record]:
        records = [r for r in self._context(vault_id).records().values() if kind is None or r.kind == kind]
        return sorted(records, key=lambda r: (r.updated, r.id), reverse=True)

    def add_record(self, vault_id: str, *, kind: Kind, title: str, body: str = "", tags: Sequence[str] = (),
                   metadata: dict[str, str] | None = None) -> Record:
        from ..vault.records import NewRecord

        return self.add_records(vault_id, [NewRecord(kind, title, body, tuple(tags), dict(metadata or {}))])[0]

    def add_records(self, vault_id: str, items: Sequence[NewRecord]) -> list[Record]:
        """Several records in one transaction (all or none); not assets (`add_asset`). Refused
        before writing when the vault's index could not hold them (fits.py)."""
        from ..vault.records import is_searchable
        from . import records as checks
        from .fits import check_write_fits

        for item in items:
            checks.check_new_record(item)
        check_write_fits(self._context(vault_id), [(i.title, i.body) for i in items if is_searchable(i.kind)], ())
        return self._vault(vault_id).add_many(items)

    def read_record(self, vault_id: str, record_id: str, revision: int | None = None) -> Record:
        entry = self._state.vaults.get(vault_id)
        record = entry.vault.read(record_id, revision)
        entry.note_read(record.id)  # read records are embedded first in the background
        return record

    def update_record(self, vault_id: str, record_id: str, *, title: str | None = None, body: str | None = None,
                      tags: Sequence[str] | None = None, expected_revision: int | None = None) -> Record:
        """A new revision; with `expected_revision`, refused (`record_changed`) if the record is
        no longer at that revision (an editor opened it there, and a sync or another program
        wrote it since: saving would silently drop that change)."""
        from ..vault.records import RecordUpdate, is_searchable
        from . import records as checks
        from .fits import check_write_fits

        change = RecordUpdate(record_id, title, body, tuple(tags) if tags is not None else None,
                              expected=expected_revision)
        checks.check_update(change)
        ctx = self._context(vault_id)
        old = ctx.records().get(record_id)
        if old is not None and is_searchable(old.kind) and (title is not None or body is not None):
            check_write_fits(ctx, [(old.title if title is None else title, old.body if body is None else body)],
                             [old])
        return self._vault(vault_id).update(change)

    def delete_record(self, vault_id: str, record_id: str) -> None:
        self._vault(vault_id).delete(record_id)

    def revisions(self, vault_id: str, record_id: str) -> list[int]:
        return self._vault(vault_id).revisions(record_id)

    def add_asset(self, vault_id: str, path: Path, title: str | None = None, *, cwd: Path | None = None) -> Record:
        """`cwd`: where a relative `path` is (another process's working folder, for the daemon)."""
        from ..vault.records import NewRecord
        from .sources import read_file

        data = read_file(path, MAX_ASSET_BYTES, N_("asset"), base=cwd)
        item = NewRecord("asset", title or path.name, "", (), {"source": path.name, "bytes": len(data)}, data)
        return self._vault(vault_id).add(item)

    # -- ingest ---------------------------------------------------------------------------
    def ingest(self, vault_id: str, paths: Sequence[Path], *, title: str | None = None, recursive: bool = False,
               progress: IngestProgressFn | None = None, cancel: threading.Event | None = None,
               cwd: Path | None = None) -> list[IngestResult]:
        """Import text files (with `recursive`, folder trees; others skipped with a reason) as
        knowledge cards: every file is checked first, then all accepted files are written in one
        transaction (see ingest.py). Relative paths are found in `cwd` when given; results and
        messages name them as given."""
        from .fits import fit_checker
        from .ingest import ingest_files

        if not paths:
            raise UsageError(msg("Name at least one file to ingest."))
        ctx = self._context(vault_id)
        return ingest_files(ctx.vault, ctx.records(), paths, title=title, recursive=recursive, progress=progress,
                            cancel=cancel,
                            check_fits=fit_checker(ctx), base=cwd)

    def import_samples(self, vault_id: str) -> list[IngestResult]:
        """Ingest the bundled sample notes (Chinese, English, mixed) so a new vault shows
        something real. Read in place from the package: no plaintext copy lands in the home."""
        with resources.as_file(resources.files("memories_tui").joinpath("samples")) as folder:
            return self.ingest(vault_id, sorted(Path(folder).glob("*.md")))

    # -- index and embeddings -------------------------------------------------------------
    def load_index(self, vault_id: str) -> None:
        """Restore (or build) the vault's in-memory index now, so the first search does not wait."""
        self._context(vault_id).index()

    def background_embedding(self, deliver: Deliver) -> BackgroundEmbedding:
        """A scheduler that embeds unlocked vaults' missing vectors in a background thread and
        hands its progress to `deliver` (for long-running front ends; see jobs.py)."""
        return BackgroundEmbedding(self._state, deliver)

    def build_vector_index(self, vault_id: str, *, budget_seconds: float = BUDGET_SECONDS,
                           progress: EmbedProgressFn | None = None,
                           cancel: threading.Event | None = None) -> IndexReport:
        """`rag index`: embed what is missing, then drop cached vectors of text that no longer exists."""
        ctx = self._context(vault_id)
        report = ctx.ensure_vectors(budget_seconds=budget_seconds, progress=progress, cancel=cancel)
        index = ctx.index()
        with index.lock:
            hashes = [c.chunk.chunk_hash for c in index.chunks.values()]
        space_key = ctx.embedder().space_key
        ctx.vault.prune_cache_blobs("emb:", set(ctx.vault.embedding_names(space_key, hashes)))
        return report

    def install_model(self, *, progress: Callable[[InstallProgress], None] | None = None,
                      cancel: threading.Event | None = None, source: Path | None = None) -> InstallReport:
        """`rag model-install` into `[rag] local_model_dir` (default <home>/models/embeddinggemma):
        downloaded, or with `source` copied from a folder of already-downloaded files (same hash checks)."""
        rag = self.config.rag
        if source is not None:
            from ..models.install_local import install_from_folder

            report = install_from_folder(rag.local_model_dir, source, progress=progress, cancel=cancel)
        else:
            from ..models.install import install_model

            report = install_model(rag.local_model_dir, base_url=rag.model_download_base_url, http=rag.http,
                                   progress=progress, cancel=cancel)
        self._state.models.forget()  # the files may have changed
        return report

    @property
    def model_loaded(self) -> bool:
        """Whether the embedding model is loaded in this process (it loads on first use)."""
        return self._state.models.loaded

    def model_terms_accepted(self) -> bool:
        """True once an install has started in the model folder: the installer writes the Gemma
        terms notice there before its first download (front ends show the terms until then)."""
        from ..models.manifest import NOTICE_FILENAME

        return (Path(self.config.rag.local_model_dir) / NOTICE_FILENAME).is_file()

    # -- search and status ----------------------------------------------------------------
    def search(self, vault_id: str, query: str | Query, *, mode: Mode | None = None, match_mode: MatchMode | None = None,
               limit: int | None = None, cards_only: bool = False, rerank: bool = True,
               budget_seconds: float = BUDGET_SECONDS, progress: EmbedProgressFn | None = None,
               cancel: threading.Event | None = None) -> SearchResponse:
        """Chunks for a query text (defaults: bm25, any, 10) or a `parse_query` value (then
        `mode` may pick another mode for the same parse; match mode and limit are its own)."""
        from .searching import search_vault

        return search_vault(self._context(vault_id), query, mode=mode, match_mode=match_mode, limit=limit,
                            cards_only=cards_only, rerank=rerank, budget_seconds=budget_seconds, progress=progress,
                            cancel=cancel)

    def ask(self, vault_id: str, question: str, *, mode: Mode = DEFAULT_MODE, match_mode: MatchMode = DEFAULT_MATCH_MODE,
            limit: int = DEFAULT_ASK_LIMIT, rerank: bool = True, cancel: threading.Event | None = None) -> Answer:
        """Retrieve, then a generated answer with checked citations (`[rag.generation]`)
        or an extractive one; `insufficient_evidence` when nothing is retrieved (asking.py)."""
        return ask_vault(self._context(vault_id), question, mode=mode, match_mode=match_mode, limit=limit, rerank=rerank,
                         cancel=cancel)

    def memory_search(self, vault_id: str, query: str | Query, *, limit: int | None = None,
                      match_mode: MatchMode | None = None) -> list[RecordHit]:
        """Lexical only, grouped by record; looks deeper so `limit` records can fill."""
        from .searching import memory_search_vault

        return memory_search_vault(self._context(vault_id), query, limit=limit, match_mode=match_mode)

    def status(self, vault_id: str) -> StatusReport:
        """Model, vector space, chunk counts and cache use against the limits."""
        from .status import build_status

        ctx = self._context(vault_id)
        index = ctx.index()
        embedder: Embedder | None
        try:
            embedder = ctx.embedder()
            embedder.check_policy()  # a device-only vault cannot use a non-loopback service
            embedder.space_key  # noqa: B018 - a remote service without configured dims is asked once here
            problem = None
        except MemoriesError as exc:
            embedder, problem = None, exc
        else:
            ctx.ensure_vectors(embed_missing=False)  # count what the encrypted cache holds
        return build_status(ctx.vault_id, index, self.config.rag, embedder, problem,
                            len(self._state.indexes.cached()), cache_repairs=list(ctx.vault.cache_repairs))

    def _context(self, vault_ref: str) -> VaultContext:
        """The unlocked vault with this id (or name) and what work on it needs (context.py)."""
        return self._state.context(vault_ref)

    def _vault(self, vault_ref: str) -> UnlockedVault:
        return self._state.vaults.get(vault_ref).vault
