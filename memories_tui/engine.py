"""The engine facade every front end (TUI, CLI, MCP server) builds through `Engine.open`.

Synchronous and thread-safe; knows nothing of Textual. Long operations take a `progress`
callback and a `threading.Event` for cancellation. Unlocked vaults and their indexes live
only in this process's memory; `lock()` zeroes keys and drops indexes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Config, load_config
from .errors import (
    BudgetExceededError,
    CancelledError,
    InputRefusedError,
    LimitError,
    LockedError,
    MemoriesError,
    NotFoundError,
    UsageError,
)
from .home import resolve_config, resolve_home
from .index.cache import MIB, SNAPSHOT_BLOB, IndexCache, VaultIndex
from .index.embedding import BUDGET_SECONDS, EmbedProgress, IndexReport, ensure_vectors
from .ingest import SourceFile, read_file, read_source
from .retrieval.search import SearchResponse, check_request, group_by_record, search
from .text.segment import MAX_RESULTS
from .vault import store
from .vault.records import KINDS, Record
from .vault.store import UnlockedVault

if TYPE_CHECKING:  # heavy imports (onnxruntime, httpx) load only when a command needs them
    from .models.install import InstallProgress, InstallReport
    from .models.local_onnx import LocalEmbedder

VAULT_SUFFIX = ".mvault"
MAX_ASSET_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class VaultInfo:
    vault_id: str
    name: str
    path: Path
    records: int = 0

    def to_json(self, device_only: bool | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"vault_id": self.vault_id, "name": self.name, "records": self.records}
        if device_only is not None:
            out["device_only"] = device_only
        return out


@dataclass(frozen=True)
class IngestResult:
    file: str
    id: str | None
    revision: int | None
    status: str  # created | updated | unchanged
    chunks: int
    title: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "id": self.id, "revision": self.revision, "status": self.status,
                "chunks": self.chunks, "title": self.title}


@dataclass
class _OpenVault:
    vault: UnlockedVault
    records: dict[str, Record] = field(default_factory=dict)
    counter: int = -1
    lock: threading.RLock = field(default_factory=threading.RLock)


ProgressFn = Callable[[str, int, int], None]


class Engine:
    def __init__(self, home: Path, config: Config) -> None:
        self.home = home
        self.config = config
        self._open: dict[str, _OpenVault] = {}
        self._lock = threading.RLock()
        self.indexes = IndexCache(config.rag.limits)
        self.lock_epoch = 0
        self._embedder: LocalEmbedder | None = None
        self._embedder_lock = threading.Lock()

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, config: str | os.PathLike[str] | None = None) -> Engine:
        home_path = resolve_home(home)
        config_path = resolve_config(home_path, config)
        if config is not None and not config_path.exists():
            raise NotFoundError(f"Config file {config_path} does not exist.")
        return cls(home_path, load_config(config_path, home_path))

    # -- home -----------------------------------------------------------------------------
    @property
    def vaults_dir(self) -> Path:
        return self.home / "vaults"

    def init_home(self) -> dict[str, Any]:
        """Create the home and a commented config; never overwrite an existing config."""
        self.vaults_dir.mkdir(parents=True, exist_ok=True)
        _restrict(self.home)
        config_path = self.config.path
        created = False
        if not config_path.exists():
            config_path.parent.mkdir(parents=True, exist_ok=True)
            text = resources.files("memories_tui").joinpath("config.example.toml").read_text(encoding="utf-8")
            with open(config_path, "x", encoding="utf-8") as fh:
                fh.write(text)
            created = True
        return {"home": str(self.home), "config": str(config_path), "config_created": created}

    # -- vaults ---------------------------------------------------------------------------
    def list_vaults(self) -> list[VaultInfo]:
        if not self.vaults_dir.is_dir():
            return []
        out = []
        for path in sorted(self.vaults_dir.glob(f"*{VAULT_SUFFIX}")):
            header = store.read_header(path)
            out.append(VaultInfo(header.vault_id, header.name, path, store.count_records(path)))
        return sorted(out, key=lambda v: v.name.casefold())

    def resolve_vault(self, ref: str) -> VaultInfo:
        """A VAULT_ID, or a unique vault name."""
        path = self.vaults_dir / f"{ref}{VAULT_SUFFIX}"
        if ref and "/" not in ref and path.is_file():
            header = store.read_header(path)
            return VaultInfo(header.vault_id, header.name, path)
        matches = [v for v in self.list_vaults() if v.name == ref]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            ids = ", ".join(v.vault_id for v in matches)
            raise UsageError(f"Several vaults are named {ref!r} ({ids}); use the VAULT_ID instead.")
        raise NotFoundError(f"No vault {ref!r} in {self.home}. `memories vault list` shows the vaults.")

    def create_vault(self, name: str, passphrase: str, *, device_only: bool = False) -> VaultInfo:
        name = name.strip()
        if not name or len(name) > 200 or any(ord(c) < 32 for c in name):
            raise InputRefusedError("A vault name must be 1–200 printable characters.", code="bad_name")
        if any(v.name == name for v in self.list_vaults()):
            raise InputRefusedError(f"A vault named {name!r} already exists; pick another name.", code="vault_exists")
        self.init_home()
        tmp = self.vaults_dir / f".new-{os.getpid()}-{time.monotonic_ns()}{VAULT_SUFFIX}"
        header = store.create_vault_file(tmp, name, passphrase, device_only=device_only)
        final = self.vaults_dir / f"{header.vault_id}{VAULT_SUFFIX}"
        os.replace(tmp, final)
        return VaultInfo(header.vault_id, name, final)

    def unlock(self, ref: str, passphrase: str) -> VaultInfo:
        info = self.resolve_vault(ref)
        with self._lock:
            if info.vault_id in self._open:
                return info
        vault = UnlockedVault(info.path, passphrase)
        with self._lock:
            self._open[info.vault_id] = _OpenVault(vault)
        return info

    def is_unlocked(self, vault_id: str) -> bool:
        with self._lock:
            return vault_id in self._open

    def lock(self, vault_id: str | None = None) -> None:
        """Zero keys, forget decrypted records, drop indexes and bump the lock epoch (R-CACHE-3)."""
        with self._lock:
            self.save_indexes()
            ids = list(self._open) if vault_id is None else [vault_id]
            for vid in ids:
                entry = self._open.pop(vid, None)
                if entry is not None:
                    with entry.lock:
                        entry.records.clear()
                        entry.vault.close()
                self.indexes.drop(vid)
            self.lock_epoch += 1

    def close(self) -> None:
        self.lock()

    def _restore_index(self, vault_id: str, vault: UnlockedVault, records: dict[str, Record]) -> VaultIndex | None:
        """The encrypted snapshot of the last built index, so an unchanged vault is searchable
        right after unlock and only changed records are re-segmented."""
        data = vault.get_blob(SNAPSHOT_BLOB)
        if data is None:
            return None
        return VaultIndex.restore(vault_id, self.config.rag.limits, data, records, load_blob=vault.get_blob)

    def save_indexes(self) -> None:
        """Persist changed lexical indexes as AEAD blobs inside their vaults (before lock/exit)."""
        for vault_id in self.indexes.cached():
            index = self.indexes.peek(vault_id)
            entry = self._open.get(vault_id)
            if index is None or entry is None or not index.dirty:
                continue
            try:
                entry.vault.put_cache_blobs(index.snapshot_blobs())
            except (MemoriesError, sqlite3.Error):
                pass  # a cache: failing to save it only costs a rebuild next time

    def change_passphrase(self, ref: str, old: str, new: str) -> None:
        info = self.resolve_vault(ref)
        vault = UnlockedVault(info.path, old)
        try:
            vault.change_passphrase(old, new)
        finally:
            vault.close()

    def _entry(self, vault_ref: str) -> _OpenVault:
        with self._lock:
            entry = self._open.get(vault_ref)
            if entry is None:
                for candidate in self._open.values():
                    if candidate.vault.name == vault_ref:
                        entry = candidate
                        break
        if entry is None:
            raise LockedError(f"Vault {vault_ref} is locked; unlock it first.")
        return entry

    def vault_name(self, vault_id: str) -> str:
        return self._entry(vault_id).vault.name

    def vault_id_of(self, vault_ref: str) -> str:
        return self._entry(vault_ref).vault.vault_id

    # -- policy ---------------------------------------------------------------------------
    def device_only(self, vault_id: str) -> bool:
        return bool(self._entry(vault_id).vault.settings().get("device_only", False))

    def set_device_only(self, vault_id: str, on: bool) -> None:
        vault = self._entry(vault_id).vault
        settings = vault.settings()
        settings["device_only"] = bool(on)
        vault.set_settings(settings)

    # -- records --------------------------------------------------------------------------
    def records(self, vault_id: str) -> dict[str, Record]:
        """Latest revision of every record, refreshed when any process changed the vault."""
        entry = self._entry(vault_id)
        with entry.lock:
            if entry.vault.change_counter() != entry.counter:
                known = {rid: r.revision for rid, r in entry.records.items()}
                counter, live, changed = entry.vault.refresh(known)
                for rid in [rid for rid in entry.records if rid not in live]:
                    del entry.records[rid]
                for record in changed:
                    entry.records[record.id] = record
                entry.counter = counter
            return dict(entry.records)

    def list_records(self, vault_id: str, kind: str | None = None) -> list[Record]:
        records = self.records(vault_id).values()
        if kind is not None:
            records = [r for r in records if r.kind == kind]
        return sorted(records, key=lambda r: (r.updated, r.id), reverse=True)

    def add_record(self, vault_id: str, *, kind: str, title: str, body: str = "", tags: Sequence[str] = (),
                   metadata: dict[str, Any] | None = None) -> Record:
        _check_record_input(kind, title, body)
        return self._entry(vault_id).vault.add(kind, title, body, tags=tuple(tags), metadata=metadata or {})

    def read_record(self, vault_id: str, record_id: str, revision: int | None = None) -> Record:
        return self._entry(vault_id).vault.read(record_id, revision)

    def update_record(self, vault_id: str, record_id: str, *, title: str | None = None, body: str | None = None,
                      tags: Sequence[str] | None = None) -> Record:
        if title is not None and not title.strip():
            raise InputRefusedError("A title cannot be empty.", code="bad_title")
        if body is not None:
            _check_body(body)
        return self._entry(vault_id).vault.update(record_id, title=title, body=body,
                                                  tags=tuple(tags) if tags is not None else None)

    def delete_record(self, vault_id: str, record_id: str) -> None:
        self._entry(vault_id).vault.delete(record_id)

    def revisions(self, vault_id: str, record_id: str) -> list[int]:
        return self._entry(vault_id).vault.revisions(record_id)

    def add_asset(self, vault_id: str, path: Path, title: str | None = None) -> Record:
        data = read_file(path, MAX_ASSET_BYTES, "asset")
        return self._entry(vault_id).vault.add_many(
            [("asset", title or path.name, "", (), {"source": path.name, "bytes": len(data)}, data)])[0]

    # -- ingest ---------------------------------------------------------------------------
    def ingest(self, vault_id: str, paths: Sequence[Path], *, title: str | None = None,
               progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> list[IngestResult]:
        """Import text files as knowledge cards: every file is checked first, then all accepted
        files are written in one transaction (all or nothing; see ingest.py)."""
        if not paths:
            raise UsageError("Name at least one file to ingest.")
        sources: list[SourceFile] = []
        for n, path in enumerate(paths, 1):
            if cancel is not None and cancel.is_set():
                raise CancelledError("Ingest cancelled; nothing was written.")
            sources.append(read_source(Path(path), title))
            if progress:
                progress("read", n, len(paths))
        existing = [r for r in self.records(vault_id).values() if r.kind == "card"]
        by_path = {r.metadata.get("source_path"): r for r in existing if r.metadata.get("source_path")}
        by_hash = {r.metadata.get("sha256"): r for r in existing if r.metadata.get("sha256")}
        to_add: list[tuple[int, SourceFile, dict[str, Any]]] = []
        to_update: list[tuple[int, SourceFile, Record, dict[str, Any]]] = []
        results: dict[int, IngestResult] = {}
        seen: set[tuple[str, str]] = set()
        for i, src in enumerate(sources):
            source_path = str(src.path.resolve())
            meta = {"source": src.path.name, "source_path": source_path, "sha256": src.sha256}
            old = by_path.get(source_path)
            if old is None and src.sha256 in by_hash and by_hash[src.sha256].title == src.title:
                old = by_hash[src.sha256]
                meta = dict(old.metadata)
            if old is not None and old.metadata.get("sha256") == src.sha256 and old.title == src.title:
                results[i] = IngestResult(str(src.path), old.id, old.revision, "unchanged",
                                          _count_chunks(old.body), old.title)
            elif (src.sha256, source_path) in seen:
                results[i] = IngestResult(str(src.path), None, None, "unchanged", 0, src.title)
            elif old is not None:
                to_update.append((i, src, old, meta))
            else:
                to_add.append((i, src, meta))
            seen.add((src.sha256, source_path))
        if cancel is not None and cancel.is_set():
            raise CancelledError("Ingest cancelled; nothing was written.")
        vault = self._entry(vault_id).vault
        added = vault.add_many([("card", s.title, s.body, (), m, None) for _, s, m in to_add]) if to_add else []
        updated = (vault.update_many([(old.id, s.title, s.body, None, m) for _, s, old, m in to_update])
                   if to_update else [])
        for (i, src, *_), record, status in [(a, r, "created") for a, r in zip(to_add, added, strict=True)] + \
                [(u, r, "updated") for u, r in zip(to_update, updated, strict=True)]:
            results[i] = IngestResult(str(src.path), record.id, record.revision, status,
                                      _count_chunks(record.body), record.title)
        if progress:
            progress("written", len(paths), len(paths))
        return [results[i] for i in range(len(sources))]

    def import_samples(self, vault_id: str) -> list[IngestResult]:
        """Ingest the bundled sample notes (Chinese, English, mixed) so a new vault shows
        something real. Read in place from the package: no plaintext copy lands in the home."""
        with resources.as_file(resources.files("memories_tui").joinpath("samples")) as folder:
            return self.ingest(vault_id, sorted(Path(folder).glob("*.md")))

    # -- index ----------------------------------------------------------------------------
    def index(self, vault_id: str) -> VaultIndex:
        """The up-to-date in-memory index of an unlocked vault (built or refreshed on demand)."""
        vault_id = self.vault_id_of(vault_id)
        records = self.records(vault_id)
        vault = self._entry(vault_id).vault
        tag = vault.policy_tag()
        index = self.indexes.peek(vault_id)
        if index is not None and index.policy_tag != tag:  # policy or passphrase changed: start over
            self.indexes.drop(vault_id)
            index = None
        if index is None:
            index = self._restore_index(vault_id, vault, records) or VaultIndex(vault_id, self.config.rag.limits)
            index.policy_tag = tag
            self.indexes.put(index)
        else:
            self.indexes.get(vault_id)  # mark as most recently used
        counter = self._entry(vault_id).counter
        if index.synced_counter != counter:  # skip the O(records) diff when nothing changed
            try:
                index.sync(records.values())
            except LimitError:
                self.indexes.drop(vault_id)
                raise
            index.synced_counter = counter
        return index

    # -- embeddings -----------------------------------------------------------------------
    def embedder(self) -> LocalEmbedder:
        """The local embedding model, loaded once per process (R-EMB-1)."""
        with self._embedder_lock:
            if self._embedder is None:
                from .models.local_onnx import LocalEmbedder

                rag = self.config.rag
                self._embedder = LocalEmbedder(rag.local_model_dir, profile=rag.local_model_profile,
                                               threads=rag.local_threads, max_tokens=rag.max_tokens)
            return self._embedder

    def ensure_vectors(self, vault_id: str, *, budget_seconds: float = BUDGET_SECONDS,
                       progress: Callable[[EmbedProgress], None] | None = None,
                       cancel: threading.Event | None = None, embed_missing: bool = True) -> IndexReport:
        """Embed every chunk that has no vector yet (cache first); `rag index` and on-demand search."""
        vault_id = self.vault_id_of(vault_id)
        embedder = self.embedder()
        index = self.index(vault_id)
        epoch = self.lock_epoch
        vault = self._entry(vault_id).vault
        return ensure_vectors(index, embedder, vault, budget_seconds=budget_seconds, progress=progress,
                              cancel=cancel, still_valid=lambda: self.lock_epoch == epoch,
                              embed_missing=embed_missing)

    def embed_in_background(self, vault_id: str, *, progress: Callable[[EmbedProgress], None] | None = None,
                            cancel: threading.Event | None = None) -> IndexReport:
        """Call from a worker thread after unlock: lowers this thread's CPU priority (so searches
        stay fast meanwhile) and embeds in budgeted slices until every chunk has a vector.
        Resumable across restarts through the encrypted cache."""
        _lower_thread_priority()
        while True:
            try:
                return self.ensure_vectors(vault_id, progress=progress, cancel=cancel)
            except BudgetExceededError:
                continue  # nobody waits on background work: go on with the next slice

    def build_vector_index(self, vault_id: str, *, budget_seconds: float = BUDGET_SECONDS,
                           progress: Callable[[EmbedProgress], None] | None = None,
                           cancel: threading.Event | None = None) -> IndexReport:
        """`rag index`: embed what is missing, then drop cached vectors of text that no longer exists."""
        report = self.ensure_vectors(vault_id, budget_seconds=budget_seconds, progress=progress, cancel=cancel)
        vault_id = self.vault_id_of(vault_id)
        index = self.index(vault_id)
        vault = self._entry(vault_id).vault
        with index.lock:
            hashes = [c.chunk.chunk_hash for c in index.chunks.values()]
        vault.prune_cache_blobs("emb:", set(vault.embedding_names(self.embedder().space_key, hashes)))
        return report

    def install_model(self, *, progress: Callable[[InstallProgress], None] | None = None,
                      cancel: threading.Event | None = None) -> InstallReport:
        """`rag model-install` into `[rag] local_model_dir` (default <home>/models/embeddinggemma)."""
        from .models.install import install_model

        rag = self.config.rag
        report = install_model(rag.local_model_dir, base_url=rag.model_download_base_url, http=rag.http,
                               progress=progress, cancel=cancel)
        with self._embedder_lock:
            self._embedder = None  # files may have changed
        return report

    # -- search ---------------------------------------------------------------------------
    def search(self, vault_id: str, query: str, *, mode: str = "bm25", match_mode: str = "any", limit: int = 10,
               cards_only: bool = False, rerank: bool = True, budget_seconds: float = BUDGET_SECONDS,
               progress: Callable[[EmbedProgress], None] | None = None,
               cancel: threading.Event | None = None) -> SearchResponse:
        terms = check_request(query, mode, match_mode, limit)  # before any index or model work
        vault_id = self.vault_id_of(vault_id)
        index = self.index(vault_id)
        if mode == "bm25":
            return search(index, query, mode=mode, match_mode=match_mode, limit=limit, cards_only=cards_only,
                          rerank=rerank, terms=terms)
        embedder = self.embedder()
        return search(index, query, mode=mode, match_mode=match_mode, limit=limit, cards_only=cards_only,
                      rerank=rerank, terms=terms, embed_query=embedder.embed_query, unknown_share=embedder.unknown_share(query),
                      ensure_vectors=lambda: self.ensure_vectors(vault_id, budget_seconds=budget_seconds,
                                                                 progress=progress, cancel=cancel))

    def memory_search(self, vault_id: str, query: str, *, limit: int = 10, match_mode: str = "any") -> list[dict[str, Any]]:
        """Lexical only, grouped by record (R-LEX-6); looks deeper so `limit` records can fill."""
        terms = check_request(query, "bm25", match_mode, limit)
        response = search(self.index(vault_id), query, mode="bm25", match_mode=match_mode,
                          limit=MAX_RESULTS, rerank=False, terms=terms)
        return group_by_record(response, limit)

    def status(self, vault_id: str) -> dict[str, Any]:
        """R-EMB-5: model, vector space, chunk counts and cache use against the limits."""
        from .errors import ModelError

        vault_id = self.vault_id_of(vault_id)
        index = self.index(vault_id)
        rag = self.config.rag
        limits = rag.limits
        model: dict[str, Any] = {"backend": "local-onnx", "profile": rag.local_model_profile,
                                 "directory": str(rag.local_model_dir)}
        try:
            embedder = self.embedder()
        except ModelError as exc:
            embedder = None
            model.update(installed=False, model="not installed", problem=exc.message)
        else:
            self.ensure_vectors(vault_id, embed_missing=False)  # count what the encrypted cache holds
            model.update(installed=True, pinned=embedder.pinned,
                         model=("EmbeddingGemma 300M Q4 (pinned build)" if embedder.pinned else
                                f"{rag.local_model_profile} model in {rag.local_model_dir}"
                                + (" — not the pinned build" if rag.local_model_profile == "embeddinggemma" else "")))
        with index.lock:
            chunks = len(index.chunks)
            same_space = embedder is not None and index.vector_space == embedder.space_key
            embedded = len(index.vectors) if (index.vectors is not None and same_space) else 0
            truncated = len(index.truncated_keys) if same_space else 0
            vector_bytes = index.vectors.nbytes if index.vectors is not None else 0
        return {
            "vault_id": vault_id,
            **model,
            "vector_space": embedder.space_key if embedder else None,
            "dimensions": embedder.dims if embedder else None,
            "max_tokens": embedder.max_tokens if embedder else rag.max_tokens,
            "chunks": chunks,
            "records_indexed": len(index.record_revisions()),
            "embedded": embedded,
            "missing": chunks - embedded,
            "truncated": truncated,
            "limits": {"chunks": limits.chunks, "source_mib": limits.source_mib, "vector_mib": limits.vector_mib,
                       "cached_vaults": limits.cached_vaults},
            "usage": {"chunks": chunks, "source_mib": round(index.source_bytes / MIB, 3),
                      "vector_mib": round(vector_bytes / MIB, 3), "cached_vaults": len(self.indexes.cached())},
            "last_build": index.built_at,
            "last_build_seconds": round(index.build_seconds, 3),
        }


def _count_chunks(body: str) -> int:
    from .text.chunking import chunk_text

    return len(chunk_text(body))


def _check_body(body: str) -> None:
    if "\x00" in body:
        raise InputRefusedError("The text contains NUL characters; only text can be stored as a body.",
                                code="invalid_text")


def _check_record_input(kind: str, title: str, body: str) -> None:
    if kind not in KINDS or kind == "asset":
        raise InputRefusedError(
            f"Unknown record kind {kind!r}; use memory, card, private or credential (assets: `asset add`).",
            code="bad_kind")
    if not title.strip():
        raise InputRefusedError("A record needs a non-empty title (--title).", code="bad_title")
    _check_body(body)


def _lower_thread_priority(niceness: int = 10) -> None:
    """Linux nice values are per thread: lower only the calling thread's priority."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + niceness))
    except (AttributeError, OSError):
        pass  # not supported here: background work simply runs at normal priority


def _restrict(path: Path) -> None:
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
