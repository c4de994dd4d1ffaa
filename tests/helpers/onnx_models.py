"""Small, real ONNX graphs with the contracts of the local embedding profiles.

- ``build_gemma_shaped_model``: the EmbeddingGemma export's contract — inputs ``input_ids``,
  ``attention_mask`` (int64 [batch, seq]); outputs ``last_hidden_state`` FIRST
  ([batch, seq, dims]) and ``sentence_embedding`` second ([batch, dims]); weights as external
  data in ``onnx/model_q4.onnx_data``. ``sentence_embedding`` is the masked mean of
  ``last_hidden_state`` passed through an extra dense layer, so it differs from a mean-pool of
  the first output and a test can prove the loader picks the output by name. The embedding
  table is a Gather on a small table with ``ids mod rows`` so any id of the real Gemma vocab
  (262,145 with added tokens) is valid while the data file stays small (~2.6 MB).
- ``build_st_shaped_model``: a BERT-like sentence-transformers export — inputs ``input_ids``,
  ``attention_mask``, ``token_type_ids``; one output ``last_hidden_state``. ``token_type_ids``
  changes the output, so feeding it wrongly would show.
- ``build_wordlevel_tokenizer``: a tiny BERT-style tokenizer.json ([CLS]/[SEP], baked-in
  padding and truncation that the loader must reset), so the sentence-transformers profile
  can be tested without a download.

The numpy reference functions compute the same outputs by hand.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.helpers.paths import GEMMA_SMALL_FILES, GEMMA_TOKENIZER  # found relative to the repo root

OPSET = 17
IR_VERSION = 8


@dataclass
class GemmaWeights:
    table: np.ndarray  # (rows, hidden)
    w1: np.ndarray  # (hidden, dims)
    w2: np.ndarray  # (dims, dims) dense head
    b2: np.ndarray  # (dims,)

    def last_hidden_state(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        emb = self.table[np.asarray(ids) % self.table.shape[0]]
        return np.tanh(emb @ self.w1) * mask.astype(np.float32)[..., None]

    def mean_pool(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        h = self.last_hidden_state(ids, mask)
        m = mask.astype(np.float32)[..., None]
        return h.sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)

    def sentence_embedding(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Raw (un-normalised) ``sentence_embedding`` output, as the graph computes it."""
        return self.mean_pool(ids, mask) @ self.w2 + self.b2


def _const_i64(name: str, values: list[int]) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.asarray(values, dtype=np.int64), name=name + "_value"))


def _masked_mean_nodes(hidden: str, mask_f3: str, out: str) -> list[onnx.NodeProto]:
    return [
        _const_i64("axis1", [1]),
        helper.make_node("ReduceSum", [hidden, "axis1"], ["sum_h"], keepdims=0),
        helper.make_node("ReduceSum", [mask_f3, "axis1"], ["count"], keepdims=0),
        helper.make_node("Max", ["count", "eps"], ["count_safe"]),
        helper.make_node("Div", ["sum_h", "count_safe"], [out]),
    ]


def build_gemma_shaped_model(dir: Path, dims: int = 768, hidden: int = 32, table_rows: int = 4096,
                             seed: int = 1234, copy_tokenizer: bool = True) -> GemmaWeights:
    """Write ``dir/onnx/model_q4.onnx`` (+ ``model_q4.onnx_data``) and, when available, the real
    Gemma ``tokenizer.json`` (and config.json). Returns the weights for hand computation."""
    rng = np.random.default_rng(seed)
    w = GemmaWeights(
        table=rng.standard_normal((table_rows, hidden)).astype(np.float32),
        w1=(rng.standard_normal((hidden, dims)) / np.sqrt(hidden)).astype(np.float32),
        w2=(rng.standard_normal((dims, dims)) / np.sqrt(dims)).astype(np.float32),
        b2=(rng.standard_normal(dims) * 0.1).astype(np.float32),
    )
    inits = [
        numpy_helper.from_array(w.table, "embed_table"),
        numpy_helper.from_array(w.w1, "proj_w"),
        numpy_helper.from_array(w.w2, "dense_w"),
        numpy_helper.from_array(w.b2, "dense_b"),
        numpy_helper.from_array(np.asarray([table_rows], dtype=np.int64), "rows"),
        numpy_helper.from_array(np.asarray([1e-9], dtype=np.float32), "eps"),
    ]
    nodes = [
        helper.make_node("Mod", ["input_ids", "rows"], ["ids_mod"]),
        helper.make_node("Gather", ["embed_table", "ids_mod"], ["emb"], axis=0),
        helper.make_node("MatMul", ["emb", "proj_w"], ["proj"]),
        helper.make_node("Tanh", ["proj"], ["act"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        _const_i64("axis2", [2]),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask_f3"]),
        helper.make_node("Mul", ["act", "mask_f3"], ["last_hidden_state"]),
        *_masked_mean_nodes("last_hidden_state", "mask_f3", "pooled"),
        helper.make_node("MatMul", ["pooled", "dense_w"], ["dense"]),
        helper.make_node("Add", ["dense", "dense_b"], ["sentence_embedding"]),
    ]
    graph = helper.make_graph(
        nodes, "embeddinggemma_shaped",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "sequence_length"]),
        ],
        outputs=[  # order matters: last_hidden_state first, as in the real export
            helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                          ["batch_size", "sequence_length", dims]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch_size", dims]),
        ],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="memories-tests")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx_dir = Path(dir) / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(onnx_dir / "model_q4.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="model_q4.onnx_data", size_threshold=0)
    if copy_tokenizer and GEMMA_TOKENIZER.is_file():
        shutil.copyfile(GEMMA_TOKENIZER, Path(dir) / "tokenizer.json")
        if (GEMMA_SMALL_FILES / "config.json").is_file():
            shutil.copyfile(GEMMA_SMALL_FILES / "config.json", Path(dir) / "config.json")
    return w


@dataclass
class StWeights:
    table: np.ndarray  # (vocab, dims)
    type_table: np.ndarray  # (2, dims)

    def last_hidden_state(self, ids: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        return np.tanh(self.table[np.asarray(ids) % self.table.shape[0]] + self.type_table[type_ids])


def build_st_shaped_model(path: Path, dims: int = 48, vocab: int = 128, seed: int = 7) -> StWeights:
    """Write a BERT-shaped ``model.onnx`` (weights inline) at ``path``."""
    rng = np.random.default_rng(seed)
    w = StWeights(table=rng.standard_normal((vocab, dims)).astype(np.float32),
                  type_table=rng.standard_normal((2, dims)).astype(np.float32))
    nodes = [
        helper.make_node("Mod", ["input_ids", "vocab"], ["ids_mod"]),
        helper.make_node("Gather", ["table", "ids_mod"], ["emb"], axis=0),
        helper.make_node("Gather", ["type_table", "token_type_ids"], ["temb"], axis=0),
        helper.make_node("Add", ["emb", "temb"], ["sum"]),
        helper.make_node("Tanh", ["sum"], ["last_hidden_state"]),
        # attention_mask is declared (as in BERT) and used only to keep it live in the graph.
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["mask_f"], ["mask_total"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "st_shaped",
        inputs=[helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
                for n in ("input_ids", "attention_mask", "token_type_ids")],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", dims]),
                 helper.make_tensor_value_info("mask_total", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(w.table, "table"),
                     numpy_helper.from_array(w.type_table, "type_table"),
                     numpy_helper.from_array(np.asarray([vocab], dtype=np.int64), "vocab")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="memories-tests")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path))
    return w


def build_wordlevel_tokenizer(path: Path, words: list[str]) -> dict[str, int]:
    """A BERT-style WordLevel tokenizer.json with baked-in padding (to 32) and truncation (to 8)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for word in words:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    tok.enable_padding(length=32, pad_id=0, pad_token="[PAD]")
    tok.enable_truncation(8)
    tok.save(str(path))
    return vocab
