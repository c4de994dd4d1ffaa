"""A random-weight replica of EmbeddingGemma-300m Q4, to measure the default model's *cost*.

The real ``onnx/model_q4.onnx`` cannot be downloaded here, so this builds a graph with the
published architecture and sizes (``config.json`` of the pinned revision) and the same
operators as the onnx-community export (its fp32 graph structure was inspected: ai.onnx 21 +
com.microsoft; SimplifiedLayerNormalization, RotaryEmbedding, MultiHeadAttention with an
additive mask, tanh Gelu), then quantizes it with onnxruntime's own MatMulNBits quantizer:
4-bit symmetric blocks of 32 for every MatMul *and* the embedding table
(GatherBlockQuantized), float32 scales. That lands within a few MB of the real external data
file (196,725,760 B).

- vocab 262,144 x 768, 24 Gemma-3 layers (5 local : 1 global RoPE, theta 1e4 / 1e6), 3 query
  heads / 1 KV head of 256 (KV repeated to 3 heads, as the export does), q/k RMSNorm,
  pre- and post-norms around attention and the GeGLU MLP (FFN 1,152), bidirectional
  attention over the padding mask, final norm -> ``last_hidden_state``;
- masked mean pool -> dense 768->3072 -> dense 3072->768 -> L2 -> ``sentence_embedding``.

The weights are RANDOM: the replica measures speed and memory, never quality.
Inputs/outputs match the export (``input_ids``, ``attention_mask`` int64 ->
``last_hidden_state``, ``sentence_embedding``), so the product's ``LocalEmbedder`` loads it
with the ``embeddinggemma`` profile, next to the real tokenizer files copied (never
committed) from ``../shared/models/embeddinggemma-small-files``.

    .venv/bin/python bench/gemma_replica.py [--rebuild] [--cache DIR]

Builds once into the git-ignored ``.cache/bench/<VERSION>/`` and reuses it afterwards.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VERSION = "embeddinggemma-300m-q4-replica-v1"  # bump when the graph or quantization changes
DEFAULT_CACHE = ROOT / ".cache" / "bench"
SMALL_FILES = ROOT.parent / "shared" / "models" / "embeddinggemma-small-files"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json",
                   "special_tokens_map.json", "generation_config.json")
MODEL = "onnx/model_q4.onnx"
DATA = "onnx/model_q4.onnx_data"
MARKER = "replica.json"
REAL_DATA_BYTES = 196_725_760  # the pinned model_q4.onnx_data


@dataclass(frozen=True)
class Arch:
    """EmbeddingGemma-300m as published (config.json at the pinned revision)."""

    vocab: int = 262_144
    hidden: int = 768
    layers: int = 24
    heads: int = 3
    kv_heads: int = 1
    head_dim: int = 256
    ffn: int = 1_152
    dense: int = 3_072
    out_dims: int = 768
    max_positions: int = 2_048
    rope_local: float = 10_000.0
    rope_global: float = 1_000_000.0
    global_every: int = 6  # layer_types: 5 sliding, then 1 full attention
    eps: float = 1e-6
    block_size: int = 32


def _rope_cache(arch: Arch, theta: float) -> tuple[np.ndarray, np.ndarray]:
    inv = 1.0 / theta ** (np.arange(0, arch.head_dim, 2, dtype=np.float64) / arch.head_dim)
    angles = np.outer(np.arange(arch.max_positions, dtype=np.float64), inv)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


class _Graph:
    """Collects nodes and initializers while the layers are written out."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.nodes: list = []
        self.inits: list = []
        self._n = 0

    def init(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, shape: tuple[int, ...], std: float) -> str:
        return self.init(name, (self.rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32))

    def norm_weight(self, name: str, size: int) -> str:
        return self.init(name, (1.0 + 0.05 * self.rng.standard_normal(size, dtype=np.float32)).astype(np.float32))

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs) -> str:
        from onnx import helper

        self._n += 1
        out = f"/{op_type.lower()}_{self._n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def rms(self, x: str, weight: str, eps: float, out: str | None = None) -> str:
        from onnx import helper

        if out is None:
            return self.op("SimplifiedLayerNormalization", [x, weight], axis=-1, epsilon=eps, stash_type=1)
        self.nodes.append(helper.make_node("SimplifiedLayerNormalization", [x, weight], [out], name=out,
                                           axis=-1, epsilon=eps, stash_type=1))
        return out


def build_float_model(arch: Arch = Arch(), seed: int = 300):
    """The float32 graph (weights in memory, ~1.2 GB); quantize() turns it into the Q4 replica."""
    from onnx import TensorProto, helper

    g = _Graph(np.random.default_rng(seed))
    i64 = lambda name, values: g.init(name, np.asarray(values, dtype=np.int64))  # noqa: E731
    f32 = lambda name, value: g.init(name, np.asarray(value, dtype=np.float32))  # noqa: E731
    i64("one", 1)
    i64("axes_12", [1, 2])
    i64("axes_1", [1])
    i64("axes_m1", [-1])
    i64("heads_1d", [arch.heads])
    i64("head_shape", [0, -1, arch.head_dim])
    i64("hidden_shape", [0, -1, arch.heads * arch.head_dim])
    f32("f_one", 1.0)
    f32("f_min", -3.4028234663852886e38)
    f32("f_embed_scale", math.sqrt(arch.hidden))
    f32("f_tiny", 1e-9)
    f32("f_l2eps", 1e-6)
    for kind, theta in (("local", arch.rope_local), ("global", arch.rope_global)):
        cos, sin = _rope_cache(arch, theta)
        g.init(f"cos_cache_{kind}", cos)
        g.init(f"sin_cache_{kind}", sin)

    # Additive attention mask [B, heads, S, S] (0 for tokens, float min for padding), as exported.
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias_2d = g.op("Mul", [g.op("Sub", ["f_one", mask_f]), "f_min"])
    shape = g.op("Shape", ["attention_mask"])
    batch = g.op("Slice", [shape, g.init("s0", np.asarray([0])), g.init("s1", np.asarray([1]))])
    seq = g.op("Slice", [shape, "s1", g.init("s2", np.asarray([2]))])
    bias = g.op("Expand", [g.op("Unsqueeze", [bias_2d, "axes_12"]),
                           g.op("Concat", [batch, "heads_1d", seq, seq], axis=0)])
    positions = g.op("Sub", [g.op("CumSum", ["attention_mask", "one"]), "one"])

    table = g.weight("model.embed_tokens.weight", (arch.vocab, arch.hidden), 0.03)
    x = g.op("Mul", [g.op("Gather", [table, "input_ids"], axis=0), "f_embed_scale"])
    std_in, std_ffn = 1 / math.sqrt(arch.hidden), 1 / math.sqrt(arch.ffn)
    for layer in range(arch.layers):
        p = f"model.layers.{layer}."
        rope = "global" if (layer + 1) % arch.global_every == 0 else "local"
        h = g.rms(x, g.norm_weight(p + "input_layernorm.weight", arch.hidden), arch.eps)
        q = g.op("MatMul", [h, g.weight(p + "attn.q_proj.MatMul.weight", (arch.hidden, arch.heads * arch.head_dim), std_in)])
        k = g.op("MatMul", [h, g.weight(p + "attn.k_proj.MatMul.weight", (arch.hidden, arch.kv_heads * arch.head_dim), std_in)])
        v = g.op("MatMul", [h, g.weight(p + "attn.v_proj.MatMul.weight", (arch.hidden, arch.kv_heads * arch.head_dim), std_in)])
        q = g.op("Reshape", [g.rms(g.op("Reshape", [q, "head_shape"]),
                                   g.norm_weight(p + "attn.q_norm.weight", arch.head_dim), arch.eps), "hidden_shape"])
        k = g.rms(k, g.norm_weight(p + "attn.k_norm.weight", arch.head_dim), arch.eps)
        rot = dict(domain="com.microsoft", interleaved=0, num_heads=0, rotary_embedding_dim=0)
        q = g.op("RotaryEmbedding", [q, positions, f"cos_cache_{rope}", f"sin_cache_{rope}"], **rot)
        k = g.op("RotaryEmbedding", [k, positions, f"cos_cache_{rope}", f"sin_cache_{rope}"], **rot)
        repeat = arch.heads // arch.kv_heads  # grouped-query attention: every query head reads the one KV head
        k = g.op("Concat", [k] * repeat, axis=-1)
        v = g.op("Concat", [v] * repeat, axis=-1)
        attn = g.op("MultiHeadAttention", [q, k, v, "", "", bias], domain="com.microsoft",
                    num_heads=arch.heads, scale=arch.head_dim ** -0.5)
        o = g.op("MatMul", [attn, g.weight(p + "attn.o_proj.MatMul.weight", (arch.heads * arch.head_dim, arch.hidden),
                                           1 / math.sqrt(arch.heads * arch.head_dim))])
        x = g.op("Add", [x, g.rms(o, g.norm_weight(p + "post_attention_layernorm.weight", arch.hidden), arch.eps)])
        h = g.rms(x, g.norm_weight(p + "pre_feedforward_layernorm.weight", arch.hidden), arch.eps)
        gate = g.op("MatMul", [h, g.weight(p + "mlp.gate_proj.MatMul.weight", (arch.hidden, arch.ffn), std_in)])
        up = g.op("MatMul", [h, g.weight(p + "mlp.up_proj.MatMul.weight", (arch.hidden, arch.ffn), std_in)])
        act = g.op("Mul", [g.op("Gelu", [gate], approximate="tanh"), up])
        down = g.op("MatMul", [act, g.weight(p + "mlp.down_proj.MatMul.weight", (arch.ffn, arch.hidden), std_ffn)])
        x = g.op("Add", [x, g.rms(down, g.norm_weight(p + "post_feedforward_layernorm.weight", arch.hidden), arch.eps)])
    last = g.rms(x, g.norm_weight("model.final_norm.weight", arch.hidden), arch.eps, out="last_hidden_state")

    # sentence-transformers head: masked mean pool, Dense(768->3072), Dense(3072->768), Normalize.
    mask3 = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", "axes_m1"])], to=TensorProto.FLOAT)
    summed = g.op("ReduceSum", [g.op("Mul", [last, mask3]), "axes_1"], keepdims=0)
    count = g.op("Clip", [g.op("ReduceSum", [mask3, "axes_1"], keepdims=0), "f_tiny"])
    pooled = g.op("Div", [summed, count])
    d1 = g.op("MatMul", [pooled, g.weight("st.dense_1.weight", (arch.hidden, arch.dense), std_in)])
    d2 = g.op("MatMul", [d1, g.weight("st.dense_2.weight", (arch.dense, arch.out_dims), 1 / math.sqrt(arch.dense))])
    norm = g.op("Sqrt", [g.op("Add", [g.op("ReduceSum", [g.op("Mul", [d2, d2]), "axes_m1"], keepdims=1), "f_l2eps"])])
    g.nodes.append(helper.make_node("Div", [d2, norm], ["sentence_embedding"], name="/l2_normalize"))

    graph = helper.make_graph(
        g.nodes, "embeddinggemma_300m_random_replica",
        inputs=[helper.make_tensor_value_info(n, TensorProto.INT64, ["batch_size", "total_sequence_length"])
                for n in ("input_ids", "attention_mask")],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                               ["batch_size", "total_sequence_length", arch.hidden]),
                 helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch_size", arch.out_dims])],
        initializer=g.inits)
    model = helper.make_model(graph, producer_name="memories-bench-replica",
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    return model


def quantize(model, arch: Arch = Arch(), accuracy_level: int | None = None):
    """onnxruntime's MatMulNBits quantizer: 4-bit symmetric blocks for MatMul and Gather.
    `accuracy_level` None leaves the attribute out (fp32 compute, the quantizer's default);
    4 lets the CPU kernels compute in int8."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    quantizer = MatMulNBitsQuantizer(model, bits=4, block_size=arch.block_size, is_symmetric=True,
                                     accuracy_level=accuracy_level, op_types_to_quantize=("MatMul", "Gather"),
                                     quant_axes=(("MatMul", 0), ("Gather", 1)))
    quantizer.process()
    return quantizer.model.model


def _marker_ok(folder: Path) -> bool:
    try:
        info = json.loads((folder / MARKER).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return (info.get("version") == VERSION
            and all((folder / rel).is_file() and (folder / rel).stat().st_size == size
                    for rel, size in info.get("files", {}).items()))


def copy_tokenizer_files(folder: Path, source: Path = SMALL_FILES) -> None:
    """The real Gemma tokenizer and configs, copied at run time (Gemma terms; never committed)."""
    missing = [name for name in TOKENIZER_FILES if not (source / name).is_file()]
    if missing:
        raise SystemExit(f"The EmbeddingGemma tokenizer files are missing in {source}: {', '.join(missing)}")
    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, folder / name)


def write_replica(folder: Path, arch: Arch = Arch(), seed: int = 300, log: Callable[[str], None] = print,
                  tokenizer_source: Path = SMALL_FILES, accuracy_level: int | None = None) -> dict:
    """Build the quantized replica into ``folder`` (``onnx/model_q4.onnx`` + data, tokenizer)."""
    import onnx

    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    copy_tokenizer_files(folder, tokenizer_source)
    started = time.perf_counter()
    model = build_float_model(arch, seed)
    log(f"  float graph built in {time.perf_counter() - started:.1f} s; quantizing (4-bit, blocks of {arch.block_size})")
    t = time.perf_counter()
    model = quantize(model, arch, accuracy_level)
    log(f"  quantized in {time.perf_counter() - t:.1f} s; saving")
    onnx.save_model(model, str(folder / MODEL), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=Path(DATA).name, size_threshold=1024)
    files = {rel: (folder / rel).stat().st_size for rel in (MODEL, DATA, *TOKENIZER_FILES)}
    ops: dict[str, int] = {}
    for node in model.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    info = {"version": VERSION, "arch": asdict(arch), "seed": seed, "accuracy_level": accuracy_level,
            "files": files, "ops": ops,
            "build_seconds": round(time.perf_counter() - started, 1),
            "note": "random weights: measures cost (speed, memory), not quality"}
    (folder / MARKER).write_text(json.dumps(info, indent=1), "utf-8")
    return info


def ensure_replica(cache: Path = DEFAULT_CACHE, rebuild: bool = False, log: Callable[[str], None] = print,
                   accuracy_level: int | None = None) -> Path:
    """The replica's model folder, built on first use and reused while VERSION is unchanged."""
    name = VERSION + (f"-accuracy{accuracy_level}" if accuracy_level else "")
    folder = cache / name
    if not rebuild and _marker_ok(folder):
        return folder
    tmp = cache / (name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"building the EmbeddingGemma-300m replica in {folder} (once; ~0.5-2 minutes, ~4 GB peak RAM)")
    write_replica(tmp, log=log, accuracy_level=accuracy_level)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def replica_info(folder: Path) -> dict:
    return json.loads((folder / MARKER).read_text("utf-8"))


def check_with_product(folder: Path, threads: int = 2) -> dict:
    """Load the replica through the product's LocalEmbedder (embeddinggemma profile) and embed."""
    sys.path.insert(0, str(ROOT))
    from memories_tui.models.local_onnx import LocalEmbedder

    t = time.perf_counter()
    emb = LocalEmbedder(folder, profile="embeddinggemma", threads=threads)
    load_s = time.perf_counter() - t
    docs = emb.embed_documents([("混合搜尋", "繁體與简体中文的筆記 notes in English too"),
                                ("Bread", "Sourdough needs a long, cool fermentation.")])
    query = emb.embed_query("how do I bake bread")
    vectors = np.vstack([docs.vectors, query[None, :]])
    norms = np.linalg.norm(vectors, axis=1)
    if not (np.isfinite(vectors).all() and np.allclose(norms, 1.0, atol=1e-3) and emb.dims == 768):
        raise SystemExit(f"LocalEmbedder returned bad vectors from the replica: norms {norms}")
    return {"load_seconds": round(load_s, 2), "dims": emb.dims, "pinned": emb.pinned, "tokens": docs.tokens,
            "space_key": emb.space_key}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="cache root (default: .cache/bench)")
    ap.add_argument("--rebuild", action="store_true", help="build again even when the cache is valid")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--accuracy-level", type=int, choices=(1, 2, 3, 4), default=None,
                    help="MatMulNBits accuracy_level (default: unset, fp32 compute, as the quantizer does)")
    args = ap.parse_args()
    log = (lambda msg: print(msg, file=sys.stderr)) if args.json else print
    folder = ensure_replica(args.cache, args.rebuild, log=log, accuracy_level=args.accuracy_level)
    info = replica_info(folder)
    check = check_with_product(folder)
    if args.json:
        print(json.dumps({"folder": str(folder), **info, "product_check": check}, ensure_ascii=False))
        return
    data = info["files"][DATA]
    print(f"replica: {folder}")
    print(f"  {MODEL}: {info['files'][MODEL]:,} B; {DATA}: {data:,} B "
          f"(real pinned file: {REAL_DATA_BYTES:,} B, {data / REAL_DATA_BYTES - 1:+.1%})")
    print(f"  ops: {', '.join(f'{k} {v}' for k, v in sorted(info['ops'].items(), key=lambda kv: -kv[1]))}")
    print(f"  LocalEmbedder (embeddinggemma profile) loads it in {check['load_seconds']} s, "
          f"{check['dims']}-d unit vectors, pinned={check['pinned']} (expected False: random weights)")


if __name__ == "__main__":
    main()
