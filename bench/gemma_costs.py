"""Cost measurements of an EmbeddingGemma-shaped model (used by bench_gemma.py).

Everything here times real onnxruntime calls on the replica (or a real install): session
load and memory in a fresh child process, raw ``session.run`` tokens/s per thread count and
batch shape, the product's ``LocalEmbedder`` against raw runs on identical batches, query
latency, and a cost model fitted to the raw timings that prices the product's batching of a
10,000-chunk vault built from real zh/en chunks.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import find_collections, is_chinese, load_collection, percentile  # noqa: E402

from memories_tui.index.embedding import BATCH_CHUNKS, LENGTH_WINDOW, length_windows  # noqa: E402
from memories_tui.models.local_onnx import MAX_BATCH_TOKENS, LocalEmbedder, create_session  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402

OUTPUT = "sentence_embedding"
VOCAB_TOP = 262_000  # random ids stay inside the real vocabulary


def rss_mib() -> dict[str, float]:
    """Current and peak resident set size of this process (Linux /proc)."""
    out = {"rss_mib": float("nan"), "peak_rss_mib": float("nan")}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss_mib"] = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                out["peak_rss_mib"] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


def random_feeds(rng: np.random.Generator, batch: int, seq: int) -> dict[str, np.ndarray]:
    ids = rng.integers(3, VOCAB_TOP, size=(batch, seq), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 2, 1  # <bos> ... <eos>
    return {"input_ids": ids, "attention_mask": np.ones_like(ids)}


def padded_feeds(seqs: list[list[int]], pad_id: int = 0) -> dict[str, np.ndarray]:
    width = max(len(s) for s in seqs)
    ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, s in enumerate(seqs):
        ids[row, :len(s)] = s
        mask[row, :len(s)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def timed_run(session, feeds: dict[str, np.ndarray]) -> float:
    t = time.perf_counter()
    session.run([OUTPUT], feeds)
    return time.perf_counter() - t


# --- load and memory (child process) --------------------------------------------------

def probe(kind: str, model_dir: Path, threads: int) -> dict:
    """Run inside a fresh process: load time and RSS of a raw session or of LocalEmbedder."""
    before = rss_mib()["rss_mib"]
    t = time.perf_counter()
    rng = np.random.default_rng(0)
    if kind == "raw":
        session = create_session(model_dir / "onnx" / "model_q4.onnx", threads)
        load_s = time.perf_counter() - t
        loaded = rss_mib()["rss_mib"]
        for batch, seq in ((16, 128), (4, 512)):  # the product's largest batch shapes
            session.run([OUTPUT], random_feeds(rng, batch, seq))
    else:
        emb = LocalEmbedder(model_dir, profile="embeddinggemma", threads=threads)
        load_s = time.perf_counter() - t
        loaded = rss_mib()["rss_mib"]
        emb.embed_documents([("note", "混合搜尋 hybrid search " * 40)] * 16)
    out = {"kind": kind, "threads": threads, "load_s": load_s, "rss_before_mib": before,
           "rss_loaded_mib": loaded, "peak_rss_mib": rss_mib()["peak_rss_mib"]}
    if kind == "product":  # where the init time goes (measured again, after the fact)
        from tokenizers import Tokenizer

        t = time.perf_counter()
        Tokenizer.from_file(str(emb.tokenizer_path))
        out["tokenizer_load_s"] = time.perf_counter() - t
        t = time.perf_counter()
        for rel in emb.file_hashes:
            digest = hashlib.sha256()
            with (model_dir / rel).open("rb") as f:
                for block in iter(lambda f=f: f.read(1 << 20), b""):
                    digest.update(block)
        out["sha256_files_s"] = time.perf_counter() - t
    return out


def run_probe(kind: str, model_dir: Path, threads: int) -> dict:
    script = Path(__file__).resolve().parent / "bench_gemma.py"
    out = subprocess.run([sys.executable, str(script), "--probe", kind, "--model", str(model_dir),
                          "--threads", str(threads)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- raw throughput ---------------------------------------------------------------------

def throughput_grid(model_path: Path, threads_list: list[int], shapes: list[tuple[int, int]], reps: int,
                    log, variants: dict[str, Path] | None = None) -> tuple[list[dict], dict[int, object]]:
    """tokens/s of raw session.run per (threads, batch, seq); rounds interleave the settings
    so that load from other processes hits them alike. `variants` (label -> another build of
    the model) run at 1 thread in the same rounds. Returns the rows and the default sessions."""
    sessions = {("default", t): create_session(model_path, t) for t in threads_list}
    for label, path in (variants or {}).items():
        sessions[(label, 1)] = create_session(path, 1)
    rng = np.random.default_rng(1)
    feeds = {shape: random_feeds(rng, *shape) for shape in shapes}
    for session in sessions.values():
        session.run([OUTPUT], random_feeds(rng, 1, 16))  # warm-up: first-run allocations
    seconds: dict[tuple[str, int, int, int], list[float]] = {}
    for rep in range(reps):
        log(f"  throughput round {rep + 1}/{reps}")
        for (label, t), session in sessions.items():
            for shape in shapes:
                seconds.setdefault((label, t, *shape), []).append(timed_run(session, feeds[shape]))
    rows = [{"variant": label, "threads": t, "batch": b, "seq": s, "seconds": statistics.median(v),
             "tokens_per_s": b * s / statistics.median(v)} for (label, t, b, s), v in seconds.items()]
    return rows, {t: session for (label, t), session in sessions.items() if label == "default"}


@dataclass(frozen=True)
class CostModel:
    """seconds(batch, width) = batch * width * (per_token + per_token_pair * width): the
    projections cost per token, attention per token *pair*; padding counts like real tokens.
    No per-run term: a run's fixed cost is milliseconds, below the noise of these timings."""

    per_token: float
    per_token_pair: float

    @classmethod
    def fit(cls, rows: list[dict]) -> CostModel:
        x = np.array([[r["batch"] * r["seq"], r["batch"] * r["seq"] ** 2] for r in rows], dtype=float)
        y = np.array([r["seconds"] for r in rows])
        (a, c), *_ = np.linalg.lstsq(x, y, rcond=None)
        if c < 0 or a < 0:  # noise: fall back to a flat per-token cost
            a, c = float(y.sum() / x[:, 0].sum()), 0.0
        return cls(float(a), float(c))

    def seconds(self, batch: int, width: int) -> float:
        return batch * width * (self.per_token + self.per_token_pair * width)


# --- the product's batching -------------------------------------------------------------

def product_batches(lengths: list[int], batch_size: int = 16) -> list[list[int]]:
    """Index lists exactly as LocalEmbedder._embed_ids batches them (sorted, token-capped)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, start = [], 0
    while start < len(order):
        end = start + 1
        while (end < len(order) and end - start < batch_size
               and (end - start + 1) * lengths[order[end]] <= MAX_BATCH_TOKENS):
            end += 1
        out.append(order[start:end])
        start = end
    return out


def vault_batches(lengths: list[int], group: int = BATCH_CHUNKS, batch_size: int = 16) -> list[tuple[int, int]]:
    """(batch, width) shapes run for chunks of these token lengths in this order:
    ensure_vectors hands groups of `group` chunks to embed_documents, which batches them."""
    shapes = []
    for g in range(0, len(lengths), group):
        part = lengths[g:g + group]
        for idx in product_batches(part, batch_size):
            shapes.append((len(idx), max(part[i] for i in idx)))
    return shapes


# --- pipeline vs raw ------------------------------------------------------------------

def pipeline_vs_raw(emb: LocalEmbedder, session, items: list[tuple[str, str]], batch_size: int,
                    reps: int) -> dict:
    """The product's embed_documents against raw session.run over identical batches. Each
    batch is timed both ways back to back (alternating which goes first), so a change in the
    machine's load hits both sides alike."""
    seqs = [emb.document_token_ids(t, x) for t, x in items]
    batches = product_batches([len(s) for s in seqs], batch_size)
    feeds = [padded_feeds([seqs[i] for i in idx], emb._pad_id) for idx in batches]
    tokens = sum(len(s) for s in seqs)
    emb.embed_documents(items[:2], batch_size=batch_size)  # warm-up
    raw = pipe = 0.0
    for rep in range(reps):
        for n, (idx, feed) in enumerate(zip(batches, feeds, strict=True)):
            part = [items[i] for i in idx]
            for side in ((0, 1) if (n + rep) % 2 == 0 else (1, 0)):
                if side == 0:
                    raw += timed_run(session, feed)
                else:
                    t = time.perf_counter()
                    emb.embed_documents(part, batch_size=batch_size)
                    pipe += time.perf_counter() - t
    raw, pipe = raw / reps, pipe / reps
    shapes = [(int(f["input_ids"].shape[0]), int(f["input_ids"].shape[1])) for f in feeds]
    return {"chunks": len(items), "tokens": tokens, "threads": emb.threads, "batch_size": batch_size,
            "batches": len(feeds), "shapes": shapes, "rounds": reps, "raw_s": raw, "pipeline_s": pipe,
            "raw_tokens_per_s": tokens / raw, "pipeline_tokens_per_s": tokens / pipe, "ratio": raw / pipe}


# --- queries --------------------------------------------------------------------------

def query_latency(emb: LocalEmbedder, session, queries: list[str]) -> dict:
    """embed_query (prefix, tokenize, run, L2) against raw session.run on the same ids."""
    emb.embed_query(queries[0])
    product, raw = [], []
    for q in queries:
        ids = emb.query_token_ids(q)
        raw.append(timed_run(session, padded_feeds([ids])) * 1000)
        t = time.perf_counter()
        emb.embed_query(q)
        product.append((time.perf_counter() - t) * 1000)
    return {"queries": len(queries), "threads": emb.threads,
            "p50_ms": statistics.median(product), "p95_ms": percentile(product, 95),
            "raw_p50_ms": statistics.median(raw), "raw_p95_ms": percentile(raw, 95)}


# --- real zh/en chunks ------------------------------------------------------------------

@dataclass
class RealText:
    zh_chunks: list[tuple[str, str]]
    en_chunks: list[tuple[str, str]]
    zh_queries: list[str]
    en_queries: list[str]
    zh_docs: list[tuple[str, str]]
    en_docs: list[tuple[str, str]]
    sources: list[str]


def load_real_text(data_dir: Path) -> RealText:
    """Every collection under `data_dir`, chunked with the product's chunker, split by script."""
    out = RealText([], [], [], [], [], [], [])
    for name in find_collections(data_dir):
        coll = load_collection(data_dir, name)
        if coll is None:
            continue
        zh = is_chinese(coll)
        out.sources.append(f"{name} ({'zh' if zh else 'en'})")
        chunks, queries, docs = ((out.zh_chunks, out.zh_queries, out.zh_docs) if zh
                                 else (out.en_chunks, out.en_queries, out.en_docs))
        for d in coll.corpus.values():
            docs.append((d["title"], d["text"]))
            chunks.extend((d["title"], ch.text) for ch in chunk_text(d["text"]))
        queries.extend(coll.queries.values())
    if not (out.zh_chunks or out.en_chunks):
        raise SystemExit(f"No collections in {data_dir} (folders with corpus.jsonl, queries.jsonl, qrels.tsv).")
    return out


def mixed_sample(zh: list, en: list, n: int, seed: int) -> list:
    """n items, half zh and half en when both exist (resampled with replacement when a side is
    smaller), shuffled like records of both languages written over time."""
    rng = random.Random(seed)
    sides = [s for s in (zh, en) if s]
    picks = []
    for i, side in enumerate(sides):
        k = n // len(sides) + (1 if i < n % len(sides) else 0)
        picks += rng.sample(side, k) if k <= len(side) else rng.choices(side, k=k)
    rng.shuffle(picks)
    return picks


def vault_estimate(emb: LocalEmbedder, text: RealText, models: dict[int, CostModel], ratio: float,
                   chunks: int = 10_000) -> dict:
    """Price a first embedding of `chunks` real zh/en chunks with each thread count's cost
    model, under today's batching and two alternatives (model-only, divided by the measured
    pipeline/raw ratio)."""
    zh_n = chunks // 2 if text.zh_chunks and text.en_chunks else (chunks if text.zh_chunks else 0)
    zh = mixed_sample(text.zh_chunks, [], zh_n, 11) if zh_n else []
    en = mixed_sample([], text.en_chunks, chunks - zh_n, 12) if chunks - zh_n else []
    order = zh + en
    random.Random(13).shuffle(order)
    encs = emb._tok.encode_batch([emb.document_text(emb.profile, t, x) for t, x in order])
    lengths = [len(e.ids) for e in encs]
    zh_len = [len(emb._tok.encode(emb.document_text(emb.profile, t, x)).ids) for t, x in zh[:500]]
    en_len = [len(emb._tok.encode(emb.document_text(emb.profile, t, x)).ids) for t, x in en[:500]]
    product_order = [key for key, *_ in length_windows([(i, t, x, "") for i, (t, x) in enumerate(order)])]
    policies = {
        f"product: UTF-8-length-sorted windows of {LENGTH_WINDOW}, groups of {BATCH_CHUNKS}":
            vault_batches([lengths[i] for i in product_order]),
        f"before: vault order, groups of {BATCH_CHUNKS}": vault_batches(lengths),
        "one chunk per run (no padding at all)": [(1, n) for n in lengths],
    }
    real = sum(lengths)
    rows = []
    for policy, shapes in policies.items():
        padded = sum(b * w for b, w in shapes)
        hours = {str(t): sum(m.seconds(b, w) for b, w in shapes) / max(ratio, 1e-9) / 3600
                 for t, m in models.items()}
        rows.append({"policy": policy, "runs": len(shapes), "padded_tokens": padded,
                     "padding_share": 1 - real / padded, "hours_by_threads": hours})
    return {"chunks": len(order), "zh_chunks": len(zh), "en_chunks": len(en), "tokens": real,
            "mean_tokens_zh": statistics.fmean(zh_len) if zh_len else None,
            "mean_tokens_en": statistics.fmean(en_len) if en_len else None,
            "truncated": sum(1 for e in encs if e.overflowing), "pipeline_ratio_used": ratio,
            "policies": rows}
