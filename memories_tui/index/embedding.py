"""Filling a vault index's vectors: encrypted cache first, then the model, under a budget.

Work goes in batches; the five-minute budget is checked between batches, and a
batch once embedded stays in memory and in the encrypted cache, so a retry only does what
is left. Vectors persist only as AEAD ciphertext inside the vault, named by an
HMAC of (vector space key, chunk hash) so the clear blob name reveals nothing about the text.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..errors import BudgetExceededError, CancelledError, LimitError, ModelError
from ..i18n import msg
from .cache import MIB, VaultIndex
from .reports import BUDGET_SECONDS, EmbedProgress, IndexReport
from .vectors import VectorMatrix

if TYPE_CHECKING:
    from ..models.remote import CallContext

BATCH_CHUNKS = 16
# Chunks are reordered by length inside windows of this many, so each batch holds chunks of
# similar length: padding costs like real tokens. On 10,000 real zh/en chunks in vault order
# 17.6 % of EmbeddingGemma's input was padding; windows of 64 cut it to 10.0 % (256: 7.9 %)
# while the newest-first order moves by at most 64 chunks (bench/bench_gemma.py).
LENGTH_WINDOW = 64


class EmbeddedBatch(Protocol):
    """What embedding a batch of documents gives back."""

    @property
    def vectors(self) -> np.ndarray: ...  # float32 (n, dims), L2-normalised, in input order

    @property
    def truncated(self) -> list[bool]: ...  # per item: the input was cut at the token cap

    @property
    def tokens(self) -> int: ...  # input processed, for the progress rate


class Embedder(Protocol):
    """What the engine asks of an embedding model. A new kind of model is one class with these
    members (models/local_onnx.py and models/remote_embed.py are the two today); nothing that
    uses one asks which kind it is."""

    @property
    def dims(self) -> int: ...

    @property
    def space_key(self) -> str: ...  # vectors of different keys are never mixed

    @property
    def max_tokens(self) -> int: ...  # 0: the model does not say

    @property
    def pinned(self) -> bool: ...  # the exact pinned build (a local model whose files match)

    def bind(self, ctx: CallContext) -> Embedder:
        """The same model calling under one vault's controls (policy, lock check, cancel)."""
        ...

    def check_policy(self) -> None:
        """Raise PolicyError when the bound vault may not send its data to this model."""
        ...

    def unknown_share(self, text: str) -> float: ...  # share of `text` the model cannot read

    def embed_documents(self, items: Sequence[tuple[str | None, str]], batch_size: int = ...,
                        cancel: threading.Event | None = ...) -> EmbeddedBatch: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class EmbeddingStore(Protocol):
    """What the vault offers for the encrypted embedding cache."""

    def embedding_names(self, space_key: str, chunk_hashes: list[str]) -> list[str]: ...
    def get_cache_blobs(self, names: list[str]) -> dict[str, bytes]: ...
    def put_cache_blobs(self, items: dict[str, bytes]) -> None: ...


def _pack(vector: np.ndarray, truncated: bool) -> bytes:
    return struct.pack(">BI", 1 if truncated else 0, vector.shape[0]) + vector.astype("<f4").tobytes()


def _unpack(data: bytes, dims: int) -> tuple[np.ndarray, bool] | None:
    if len(data) < 5:
        return None
    flag, n = struct.unpack(">BI", data[:5])
    if n != dims or len(data) != 5 + 4 * n:
        return None
    return np.frombuffer(data[5:], dtype="<f4").astype(np.float32), bool(flag)


def ensure_vectors(index: VaultIndex, embedder: Embedder, store: EmbeddingStore, *,
                   budget_seconds: float = BUDGET_SECONDS, progress: Callable[[EmbedProgress], None] | None = None,
                   cancel: threading.Event | None = None, still_valid: Callable[[], bool] | None = None,
                   embed_missing: bool = True, priority: Callable[[str], float] | None = None) -> IndexReport:
    """Give every chunk of `index` a vector in `embedder`'s space. Raises BudgetExceededError
    (work done so far is kept) or CancelledError between batches. With `embed_missing=False`
    only the encrypted cache is read (for status). `priority(record_id)`: records with higher
    values are embedded first (the engine ranks the newest and most recently read first)."""
    started = time.monotonic()
    report = IndexReport()
    with index.lock:
        if (index.vectors is not None and index.vector_space == embedder.space_key
                and len(index.vectors) == len(index.chunks)):
            # fast path for every query once all is embedded (removals keep both in step)
            report.truncated = len(index.truncated_keys)
            return report
        matrix, todo = _matrix_for(index, embedder)
        hashes = [index.chunks[k].chunk.chunk_hash for k in todo]
    report.reused = _load_cached(index, matrix, store, embedder, todo, hashes)
    items = _still_missing(index, matrix, priority)
    if not embed_missing:
        report.missing = len(items)
        report.seconds = time.monotonic() - started
        return report
    tokens_done = 0
    embed_started = time.monotonic()
    for start in range(0, len(items), BATCH_CHUNKS):
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Embedding cancelled; finished batches are kept and will be reused."))
        if time.monotonic() - started > budget_seconds:
            report.missing = len(items) - start
            report.seconds = time.monotonic() - started
            raise BudgetExceededError(
                msg("The {budget_seconds:g}-second embedding budget ran out with {missing:,} chunks left "
                    "({done:,} done). Run the same command again to continue; finished batches are reused.",
                    budget_seconds=budget_seconds, missing=report.missing, done=report.embedded + report.reused))
        batch = items[start:start + BATCH_CHUNKS]
        tokens_done += _embed_batch(index, matrix, store, embedder, batch, cancel, still_valid)
        report.embedded += len(batch)
        if progress is not None:
            elapsed = max(1e-6, time.monotonic() - embed_started)
            done = start + len(batch)
            rate = done / elapsed
            progress(EmbedProgress(done, len(items), tokens_done / elapsed,
                                   (len(items) - done) / rate if rate > 0 else None))
    with index.lock:
        report.truncated = len(index.truncated_keys & set(index.chunks))
    report.seconds = time.monotonic() - started
    return report


def _matrix_for(index: VaultIndex, embedder: Embedder) -> tuple[VectorMatrix, list[int]]:
    """The index's matrix in the embedder's space (a fresh one for another model: spaces never
    mix) and the chunks it lacks; LimitError when the vault's vectors would pass the cache limit.
    Called under the index lock."""
    if index.vectors is None or index.vector_space != embedder.space_key:
        # a different model or dims: never mix spaces, start a fresh matrix
        index.vectors = VectorMatrix(embedder.dims)
        index.vector_space = embedder.space_key
        index.truncated_keys.clear()
    matrix = index.vectors
    todo = [key for key in index.chunks if key not in matrix]
    limit_bytes = index.limits.vector_mib * MIB
    needed = (len(index.chunks)) * embedder.dims * 4
    if needed > limit_bytes:
        raise LimitError(
            msg("This vault needs {needed:.1f} MiB of vectors; the cache limit is {vector_mib:g} MiB per "
                "vault ([rag.limits] vector_mib in the config).",
                needed=needed / MIB, vector_mib=index.limits.vector_mib))
    return matrix, todo


def _still_missing(index: VaultIndex, matrix: VectorMatrix,
                   priority: Callable[[str], float] | None) -> list[tuple[int, str, str, str]]:
    """The chunks the cache did not have, in the order to embed them, grouped by length."""
    with index.lock:
        todo = [key for key in index.chunks if key not in matrix]
        if priority is not None:  # stable: a record's chunks keep their order
            rank = {record_id: priority(record_id) for record_id in {index.chunks[k].record_id for k in todo}}
            todo.sort(key=lambda k: -rank[index.chunks[k].record_id])
        return length_windows([(key, index.chunks[key].title, index.chunks[key].chunk.text,
                                index.chunks[key].chunk.chunk_hash) for key in todo])


def _embed_batch(index: VaultIndex, matrix: VectorMatrix, store: EmbeddingStore, embedder: Embedder,
                 batch: list[tuple[int, str, str, str]], cancel: threading.Event | None,
                 still_valid: Callable[[], bool] | None) -> int:
    """Embed one batch into the matrix (chunks removed meanwhile left out) and the encrypted
    cache; the tokens it took. Dropped whole when the vault was locked or changed meanwhile."""
    result = embedder.embed_documents([(title, text) for _, title, text, _ in batch], cancel=cancel)
    vectors = unit_vectors(result.vectors, len(batch), embedder.dims)
    truncated = result.truncated
    if still_valid is not None and not still_valid():
        raise CancelledError(msg("The vault was locked or changed while embedding; results were dropped."))
    with index.lock:
        live = [i for i, (key, *_rest) in enumerate(batch) if key in index.chunks]
        matrix.add([batch[i][0] for i in live], vectors[live])
        for i in live:
            if truncated[i]:
                index.truncated_keys.add(batch[i][0])
    names = store.embedding_names(embedder.space_key, [h for *_rest, h in batch])
    store.put_cache_blobs({name: _pack(vectors[i], bool(truncated[i])) for i, name in enumerate(names)})
    return int(result.tokens)


def unit_vectors(vectors: object, count: int, dims: int) -> np.ndarray:
    """`vectors` if it is `count` finite unit-length rows of `dims`; else ModelError, before
    anything reaches the index or the encrypted cache (a cached bad vector would be reused)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (count, dims) or not np.isfinite(matrix).all():
        raise ModelError(msg("The embedder returned {shape} vectors with non-finite values or the wrong shape "
                             "for {count} texts of {dims} dimensions; nothing was stored.",
                             shape=matrix.shape, count=count, dims=dims))
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
    if not np.all(np.abs(norms - 1.0) < 1e-3):
        raise ModelError(msg("The embedder returned vectors that are not unit length (e.g. all zero); nothing "
                             "was stored."))
    return matrix


def length_windows(items: list[tuple[int, str, str, str]], window: int = LENGTH_WINDOW) -> list[tuple[int, str, str, str]]:
    """Sort each run of `window` (key, title, text, hash) items by UTF-8 length of title + text:
    a cheap stand-in for token counts that holds for Chinese and English alike (~5-6 bytes a
    token). Order across windows is kept, so earlier chunks are still embedded first."""
    def size(item: tuple[int, str, str, str]) -> int:
        return len(item[1].encode()) + len(item[2].encode())

    return [it for w in range(0, len(items), window) for it in sorted(items[w:w + window], key=size)]


def _load_cached(index: VaultIndex, matrix: VectorMatrix, store: EmbeddingStore, embedder: Embedder,
                 keys: list[int], hashes: list[str]) -> int:
    if not keys:
        return 0
    names = store.embedding_names(embedder.space_key, hashes)
    found = store.get_cache_blobs(names)
    add_keys, add_vecs = [], []
    with index.lock:
        for key, name in zip(keys, names, strict=True):
            data = found.get(name)
            unpacked = _unpack(data, embedder.dims) if data is not None else None
            if unpacked is None or key not in index.chunks:
                continue
            vector, truncated = unpacked
            add_keys.append(key)
            add_vecs.append(vector)
            if truncated:
                index.truncated_keys.add(key)
        if add_keys:
            matrix.add(add_keys, np.stack(add_vecs))
    return len(add_keys)
