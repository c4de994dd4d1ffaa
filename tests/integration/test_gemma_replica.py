"""The bench's EmbeddingGemma replica (bench/gemma_replica.py) has the export's contract.

A scaled-down build (real vocabulary and tokenizer, 2 narrow layers) goes through the same
code and the same onnxruntime quantizer as the full 300M replica that bench_gemma.py times,
so these checks cover what the figures rely on: the product's LocalEmbedder loads it with
the embeddinggemma profile, every weight is 4-bit, and padding in a batch changes nothing
(bidirectional attention and pooling honour the mask).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_replica_module():
    spec = importlib.util.spec_from_file_location("gemma_replica", ROOT / "bench" / "gemma_replica.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


replica = _load_replica_module()


@pytest.fixture(scope="module")
def small_replica(tmp_path_factory, gemma_small_files) -> Path:
    assert replica.SMALL_FILES == gemma_small_files  # the replica reads the tokenizer files from there
    folder = tmp_path_factory.mktemp("replica")
    arch = replica.Arch(hidden=64, layers=2, heads=2, kv_heads=1, head_dim=32, ffn=96, dense=256)
    replica.write_replica(folder, arch=arch, log=lambda _msg: None)
    return folder


def test_replica_has_the_export_contract_and_only_4bit_weights(small_replica: Path) -> None:
    import onnx
    import onnxruntime as ort

    session = ort.InferenceSession(str(small_replica / replica.MODEL), providers=["CPUExecutionProvider"])
    assert [(i.name, i.type) for i in session.get_inputs()] == [
        ("input_ids", "tensor(int64)"), ("attention_mask", "tensor(int64)")]
    assert [o.name for o in session.get_outputs()] == ["last_hidden_state", "sentence_embedding"]
    model = onnx.load(str(small_replica / replica.MODEL), load_external_data=False)
    ops = [n.op_type for n in model.graph.node]
    assert "MatMul" not in ops and "Gather" not in ops  # every weight matrix and the table quantized
    assert ops.count("MatMulNBits") == 2 * 7 + 2 and ops.count("GatherBlockQuantized") == 1
    assert ops.count("MultiHeadAttention") == 2 and ops.count("RotaryEmbedding") == 4
    blocks = {a.i for n in model.graph.node for a in n.attribute if a.name == "block_size"}
    bits = {a.i for n in model.graph.node for a in n.attribute if a.name == "bits"}
    assert blocks == {32} and bits == {4}
    assert (small_replica / replica.DATA).stat().st_size > 0
    assert not (ROOT / ".gitignore").is_file() or ".cache/" in (ROOT / ".gitignore").read_text()


def test_product_embedder_runs_the_replica_and_padding_changes_nothing(small_replica: Path) -> None:
    from memories_tui.models.local_onnx import LocalEmbedder

    emb = LocalEmbedder(small_replica, profile="embeddinggemma", threads=1)
    assert emb.dims == 768 and not emb.pinned
    alone = emb.embed_documents([("筆記", "混合搜尋 hybrid search")]).vectors[0]
    batched = emb.embed_documents([("筆記", "混合搜尋 hybrid search"), ("long", "a much longer note " * 30)],
                                  batch_size=2)
    assert batched.vectors.shape == (2, 768)
    np.testing.assert_allclose(alone, batched.vectors[0], atol=1e-5)
    other = emb.embed_query("sourdough bread")
    assert np.isfinite(other).all() and abs(float(np.linalg.norm(other)) - 1.0) < 1e-4
    assert float(alone @ other) < 0.9999  # different texts, different vectors
