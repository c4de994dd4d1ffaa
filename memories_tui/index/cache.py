"""In-memory per-vault indexes with size limits, LRU and change tracking.

A `VaultIndex` mirrors the searchable records of one unlocked vault: their chunks, the FTS5
index and (once embedded) their vectors. `sync()` brings it up to date with the current
records by removing what changed and adding only new revisions, so one edit never
re-segments the whole vault. Excluded kinds (private, credential, asset) never get here.
"""

from __future__ import annotations

import json
import sqlite3
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..config import Limits
from ..errors import LimitError
from ..i18n import Message, msg
from ..text import segment
from ..text.chunking import Chunk, chunk_text
from ..vault.records import Kind, Record, is_searchable
from . import chunk_table
from .gcpause import gc_paused
from .lexical import LexicalDoc, LexicalIndex
from .vectors import VectorMatrix

MIB = 1024 * 1024
# 3: BM25 part here, the FTS5 phrase image in PHRASE_BLOB (loaded on first use); 4: BM25 rows
# carry their record's group; 5: a CJK pieces field beside the words. Another format is not
# read: the index is built again.
SNAPSHOT_FORMAT = 5
SNAPSHOT_BLOB = "lexical-index"
PHRASE_BLOB = "lexical-phrase"
_SNAPSHOT_MAGIC = b"MLX1"


@dataclass(frozen=True)
class IndexedChunk:
    key: int
    record_id: str
    revision: int
    kind: Kind
    title: str
    chunk: Chunk


def safe_metadata_text(record: Record) -> str:
    """What of a record's metadata is searchable: its tags and the source file name."""
    parts = list(record.tags)
    source = record.metadata.get("source") if isinstance(record.metadata, dict) else None
    if isinstance(source, str):
        parts.append(source)
    return " ".join(parts)


class VaultIndex:
    def __init__(self, vault_id: str, limits: Limits) -> None:
        self.vault_id = vault_id
        self.limits = limits
        self.lexical = LexicalIndex()
        self.chunks: dict[int, IndexedChunk] = {}
        self._by_record: dict[str, tuple[int, list[int], int]] = {}  # record_id → (revision, keys, bytes)
        self._next_key = 1
        self.source_bytes = 0
        self.built_at: float | None = None
        self.build_seconds = 0.0
        self.lock = threading.RLock()
        self.vectors: VectorMatrix | None = None  # filled by index.embedding.ensure_vectors
        self.vector_space: str | None = None
        self.truncated_keys: set[int] = set()
        self.policy_tag: bytes | None = None  # set by the engine; see UnlockedVault.policy_tag
        self.dirty = False  # changed since the last snapshot
        self.synced_counter: int | None = None  # vault change counter at the last sync
        self._folded: dict[int, str] = {}
        self._meta: dict[str, str] = {}  # record id -> searchable metadata text (phrase rebuild)
        self._meta_source: dict[str, Record] = {}  # records given to restore(), for the same

    def sync(self, records: Iterable[Record]) -> None:
        """Make the index match `records` (latest revisions); raises LimitError, never half-built."""
        started = time.perf_counter()
        with self.lock, gc_paused():
            current = {r.id: r for r in records if is_searchable(r.kind)}
            stale = [record_id for record_id, (rev, _, _) in self._by_record.items()
                     if record_id not in current or current[record_id].revision != rev]
            fresh = [r for record_id, r in current.items()
                     if record_id not in self._by_record or self._by_record[record_id][0] != r.revision]
            if not stale and not fresh:
                return
            removed: list[int] = []
            for record_id in stale:
                _, keys, nbytes = self._by_record.pop(record_id)
                self.source_bytes -= nbytes
                for key in keys:
                    self.chunks.pop(key, None)  # absent when restored from an older snapshot
                    self._folded.pop(key, None)
                removed.extend(keys)
            if removed:
                self.dirty = True  # the saved snapshot must not keep tokens of deleted text
                self.lexical.remove(removed)
                if self.vectors is not None:
                    self.vectors.remove(removed)
                self.truncated_keys.difference_update(removed)
            docs: list[LexicalDoc] = []
            for record in fresh:
                meta = safe_metadata_text(record)
                keys = []
                group = self._next_key  # a record's chunks share its first key as their group
                for chunk in chunk_text(record.body):
                    key = self._next_key
                    self._next_key += 1
                    item = IndexedChunk(key, record.id, record.revision, record.kind, record.title, chunk)
                    self.chunks[key] = item
                    keys.append(key)
                    docs.append(LexicalDoc(key=key, title=record.title, body=chunk.text, meta=meta,
                                           is_card=record.kind == "card", group=group))
                self._meta[record.id] = meta
                nbytes = len(record.body.encode()) + len(record.title.encode()) + len(meta.encode())
                self._by_record[record.id] = (record.revision, keys, nbytes)
                self.source_bytes += nbytes
            self._check_limits()
            self.lexical.add(docs)
            self.dirty = True
            self.built_at = time.time()
            self.build_seconds = time.perf_counter() - started

    # -- persistence (AEAD-encrypted by the caller: no plaintext ever reaches the disk) -------
    def _phrase_docs(self, keys: set[int]) -> list[LexicalDoc]:
        """Documents of the given keys, for rebuilding the phrase table of a restored index
        whose phrase blob is missing or belongs to another build."""
        self.dirty = True  # save the rebuilt part with the next snapshot
        docs = []
        for key in keys:
            item = self.chunks.get(key)
            if item is None:
                continue  # a restored chunk of a record that changed: sync() removes it
            meta = self._meta.get(item.record_id)
            if meta is None:
                source = self._meta_source.get(item.record_id)
                meta = safe_metadata_text(source) if source is not None else ""
            docs.append(LexicalDoc(key, item.title, item.chunk.text, meta, item.kind == "card"))
        return docs

    def snapshot_blobs(self) -> dict[str, bytes]:
        """The built index as vault blobs: SNAPSHOT_BLOB (a short JSON head, the chunk table of
        offsets and hashes, no text, see chunk_table.py, and the BM25 part) and PHRASE_BLOB."""
        with self.lock:
            table = chunk_table.ChunkTable([], [], [], [], [], [], [], [], [], [], "")
            hashes = []
            for record_id, (rev, keys, nbytes) in self._by_record.items():
                table.record_ids.append(record_id)
                table.revisions.append(rev)
                table.source_bytes.append(nbytes)
                table.counts.append(len(keys))
                for k in keys:
                    c = self.chunks[k].chunk
                    table.keys.append(k)
                    table.indexes.append(c.index)
                    table.char_starts.append(c.char_start)
                    table.char_ends.append(c.char_end)
                    table.byte_starts.append(c.byte_start)
                    table.byte_ends.append(c.byte_end)
                    hashes.append(c.chunk_hash)
            table.hashes = "".join(hashes)
            head = json.dumps({"format": SNAPSHOT_FORMAT, "segmenter": segment.backend(),
                               "next_key": self._next_key}).encode()
            main, phrase = self.lexical.serialize_parts()
            self.dirty = False
            return {SNAPSHOT_BLOB: b"".join((_SNAPSHOT_MAGIC, struct.pack(">I", len(head)), head,
                                             chunk_table.encode(table), main)),
                    PHRASE_BLOB: phrase}

    @staticmethod
    def snapshot_usage(data: bytes) -> dict[str, tuple[int, int, int]]:
        """Record id -> (revision, chunks, source bytes) as the snapshot `data` counted them,
        without restoring the index ({} when it is not a snapshot this version reads)."""
        if not data.startswith(_SNAPSHOT_MAGIC) or len(data) < 8:
            return {}
        view = memoryview(data)
        (size,) = struct.unpack(">I", view[4:8])
        try:
            if json.loads(bytes(view[8:8 + size])).get("format") != SNAPSHOT_FORMAT:
                return {}
            table, _ = chunk_table.decode(view[8 + size:])
        except (ValueError, AttributeError, struct.error):
            return {}
        return {record_id: (rev, count, nbytes) for record_id, rev, nbytes, count
                in zip(table.record_ids, table.revisions, table.source_bytes, table.counts, strict=True)}

    @classmethod
    def restore(cls, vault_id: str, limits: Limits, data: bytes, records: dict[str, Record],
                load_blob: Callable[[str], bytes | None] | None = None) -> VaultIndex | None:
        """Rebuild from a snapshot; records whose revision moved on are left for sync() to
        replace. Returns None when the snapshot is unusable (other format or segmenter).
        ``load_blob(PHRASE_BLOB)`` is called on the first phrase query or write."""
        with gc_paused():
            return cls._restore(vault_id, limits, data, records, load_blob)

    @classmethod
    def _restore(cls, vault_id: str, limits: Limits, data: bytes, records: dict[str, Record],
                 load_blob: Callable[[str], bytes | None] | None) -> VaultIndex | None:
        if not data.startswith(_SNAPSHOT_MAGIC) or len(data) < 8:
            return None
        view = memoryview(data)
        (size,) = struct.unpack(">I", view[4:8])
        try:
            meta = json.loads(bytes(view[8:8 + size]))
            if meta.get("format") != SNAPSHOT_FORMAT or meta.get("segmenter") != segment.backend():
                return None
            table, used = chunk_table.decode(view[8 + size:])
            index = cls(vault_id, limits)
            index.lexical = LexicalIndex.deserialize_parts(
                view[8 + size + used:], (lambda: load_blob(PHRASE_BLOB)) if load_blob else (lambda: None),
                index._phrase_docs)
        except (ValueError, sqlite3.DatabaseError):
            return None
        index._next_key = int(meta["next_key"])
        index._meta_source = records
        chunks = index.chunks
        by_record = index._by_record
        keys, idx, cs, ce, bs, be = (table.keys, table.indexes, table.char_starts, table.char_ends,
                                     table.byte_starts, table.byte_ends)
        hashes = table.hashes
        pos = 0
        for record_id, rev, nbytes, count in zip(table.record_ids, table.revisions, table.source_bytes,
                                                 table.counts, strict=True):
            end = pos + count
            record = records.get(record_id)
            if record is not None and record.revision == rev:
                body, kind, title = record.body, record.kind, record.title
                for j, key, n, a, b, c, d in zip(range(pos, end), keys[pos:end], idx[pos:end], cs[pos:end],
                                                 ce[pos:end], bs[pos:end], be[pos:end], strict=True):
                    chunk = Chunk(n, body[a:b], a, b, c, d, hashes[j * 64:j * 64 + 64])
                    chunks[key] = IndexedChunk(key, record_id, rev, kind, title, chunk)
            by_record[record_id] = (rev, keys[pos:end], nbytes)
            index.source_bytes += nbytes
            pos = end
        index.built_at = time.time()
        return index

    def _check_limits(self) -> None:
        if len(self.chunks) > self.limits.chunks:
            raise LimitError(msg("{problem} {advice}", problem=msg(
                "This vault has {count:,} chunks; the cache limit is {chunks:,} chunks per vault "
                "([rag.limits] chunks in the config).", count=len(self.chunks), chunks=self.limits.chunks),
                advice=self._largest(lambda keys, nbytes: len(keys))))
        if self.source_bytes > self.limits.source_mib * MIB:
            raise LimitError(msg("{problem} {advice}", problem=msg(
                "This vault has {used:.1f} MiB of source text and metadata; the cache limit is "
                "{source_mib:g} MiB per vault ([rag.limits] source_mib in the config).",
                used=self.source_bytes / MIB, source_mib=self.limits.source_mib),
                advice=self._largest(lambda keys, nbytes: nbytes)))

    def _largest(self, size: Callable[[list[int], int], int]) -> Message:
        """The sentence naming the record that takes most of what is over the limit: what to shrink."""
        record_id, (_, keys, nbytes) = max(self._by_record.items(), key=lambda item: size(item[1][1], item[1][2]))
        title = next((self.chunks[k].title for k in keys if k in self.chunks), "")
        return msg("The largest record is “{title}” (id {id}, {chunks:,} chunks, {mib:.1f} MiB): shorten or delete "
                   "it (`memories memory update` or `memory delete`), or raise the limit.",
                   title=title, id=record_id, chunks=len(keys), mib=nbytes / MIB)

    def folded_text(self, key: int) -> str:
        """Script- and case-folded title + text of a chunk, memoised for the rerank."""
        text = self._folded.get(key)
        if text is None:
            item = self.chunks[key]
            text = self._folded[key] = " ".join(segment.fold(f"{item.title}\n{item.chunk.text}").split())
        return text

    def record_revisions(self) -> dict[str, int]:
        with self.lock:
            return {record_id: rev for record_id, (rev, _, _) in self._by_record.items()}


class IndexCache:
    """At most `limits.cached_vaults` vault indexes; least recently used is dropped."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._items: OrderedDict[str, VaultIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, vault_id: str) -> VaultIndex:
        with self._lock:
            index = self._items.get(vault_id)
            if index is None:
                index = VaultIndex(vault_id, self.limits)
                self._items[vault_id] = index
            self._items.move_to_end(vault_id)
            while len(self._items) > self.limits.cached_vaults:
                self._items.popitem(last=False)
            return index

    def put(self, index: VaultIndex) -> None:
        with self._lock:
            self._items[index.vault_id] = index
            self._items.move_to_end(index.vault_id)
            while len(self._items) > self.limits.cached_vaults:
                self._items.popitem(last=False)

    def peek(self, vault_id: str) -> VaultIndex | None:
        with self._lock:
            return self._items.get(vault_id)

    def cached(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def drop(self, vault_id: str | None = None) -> None:
        with self._lock:
            if vault_id is None:
                self._items.clear()
            else:
                self._items.pop(vault_id, None)
