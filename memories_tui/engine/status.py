"""`rag status`: what model would embed, how much is embedded, and cache use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import RagSettings
from ..errors import MemoriesError
from ..index.cache import MIB, VaultIndex
from .types import CacheFigures, StatusReport

if TYPE_CHECKING:
    from ..index.embedding import Embedder


def build_status(vault_id: str, index: VaultIndex, rag: RagSettings, embedder: Embedder | None,
                 problem: MemoriesError | None, cached_vaults: int, cache_repairs: list[str] | None = None) -> StatusReport:
    """`embedder` is None when no usable model is installed (`problem` says why);
    `cache_repairs` lists damaged cache blobs that were dropped and rebuilt."""
    limits = rag.limits
    remote = rag.embedding
    backend, profile, directory = "local-onnx", rag.local_model_profile, str(rag.local_model_dir)
    if remote is not None:
        backend, profile, directory = f"remote-{remote.protocol}", remote.protocol, remote.url
    if embedder is None:
        pinned, model = None, ("remote service unusable" if remote is not None else "not installed")
    elif remote is not None:
        pinned, model = None, f"{remote.model} ({remote.protocol} service)"
    else:
        pinned = embedder.pinned
        model = ("EmbeddingGemma 300M Q4 (pinned build)" if embedder.pinned else
                 f"{rag.local_model_profile} model in {rag.local_model_dir}"
                 + (" — not the pinned build" if rag.local_model_profile == "embeddinggemma" else ""))
    with index.lock:
        chunks = len(index.chunks)
        same_space = embedder is not None and index.vector_space == embedder.space_key
        embedded = len(index.vectors) if (index.vectors is not None and same_space) else 0
        truncated = len(index.truncated_keys) if same_space else 0
        vector_bytes = index.vectors.nbytes if index.vectors is not None else 0
    return StatusReport(
        vault_id=vault_id, backend=backend, profile=profile, directory=directory,
        installed=embedder is not None, model=model, pinned=pinned,
        problem=problem.message if problem is not None else None,
        problem_localizable=problem.localizable.to_wire() if problem is not None and problem.localizable else None,
        vector_space=embedder.space_key if embedder else None,
        dimensions=embedder.dims if embedder else None,
        max_tokens=embedder.max_tokens if embedder else rag.max_tokens,
        chunks=chunks, records_indexed=len(index.record_revisions()), embedded=embedded,
        missing=chunks - embedded, truncated=truncated,
        limits=CacheFigures(limits.chunks, limits.source_mib, limits.vector_mib, limits.cached_vaults),
        usage=CacheFigures(chunks, round(index.source_bytes / MIB, 3), round(vector_bytes / MIB, 3), cached_vaults),
        last_build=index.built_at, last_build_seconds=round(index.build_seconds, 3),
        cache_repairs=list(cache_repairs or []),
    )
