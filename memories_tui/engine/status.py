"""`rag status` (R-EMB-5): what model would embed, how much is embedded, and cache use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import RagSettings
from ..index.cache import MIB, VaultIndex
from .types import CacheFigures, StatusReport

if TYPE_CHECKING:  # typing only: onnxruntime loads when a model is used
    from ..models.local_onnx import LocalEmbedder


def build_status(vault_id: str, index: VaultIndex, rag: RagSettings, embedder: LocalEmbedder | None,
                 problem: str | None, cached_vaults: int) -> StatusReport:
    """`embedder` is None when no usable model is installed (`problem` says why)."""
    limits = rag.limits
    if embedder is None:
        pinned, model = None, "not installed"
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
        vault_id=vault_id, backend="local-onnx", profile=rag.local_model_profile, directory=str(rag.local_model_dir),
        installed=embedder is not None, model=model, pinned=pinned, problem=problem,
        vector_space=embedder.space_key if embedder else None,
        dimensions=embedder.dims if embedder else None,
        max_tokens=embedder.max_tokens if embedder else rag.max_tokens,
        chunks=chunks, records_indexed=len(index.record_revisions()), embedded=embedded,
        missing=chunks - embedded, truncated=truncated,
        limits=CacheFigures(limits.chunks, limits.source_mib, limits.vector_mib, limits.cached_vaults),
        usage=CacheFigures(chunks, round(index.source_bytes / MIB, 3), round(vector_bytes / MIB, 3), cached_vaults),
        last_build=index.built_at, last_build_seconds=round(index.build_seconds, 3),
    )
