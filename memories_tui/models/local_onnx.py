"""In-process local embeddings with onnxruntime + tokenizers (nothing leaves the machine).

Two profiles:

- ``embeddinggemma`` (default): ``onnx/model_q4.onnx`` with its external data file
  ``onnx/model_q4.onnx_data`` in the same folder, and ``tokenizer.json``. Inputs ``input_ids``
  and ``attention_mask``; the output ``sentence_embedding`` is selected *by name* (the first
  output, ``last_hidden_state``, would skip the model's dense head). Documents and queries get
  the model's task prefixes. 768 dimensions.
- ``sentence-transformers``: ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``;
  BERT-style inputs (``token_type_ids`` only if the graph declares it), mean pooling of
  ``last_hidden_state`` over the attention mask. Dimensions come from the model. No prefixes.

All vectors are float32 and L2-normalised. Texts longer than the token cap are truncated and
reported per item. ONNX Runtime telemetry is disabled once per process before the first
``InferenceSession`` is created.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CancelledError, ModelError, ModelNotInstalledError
from ..i18n import msg

if TYPE_CHECKING:
    from .remote import CallContext

PROFILES = ("embeddinggemma", "sentence-transformers")

GEMMA_MODEL = "onnx/model_q4.onnx"
GEMMA_DATA = "onnx/model_q4.onnx_data"
TOKENIZER = "tokenizer.json"
GEMMA_DIMS = 768
GEMMA_OUTPUT = "sentence_embedding"
ST_OUTPUT = "last_hidden_state"
ST_MODEL_CANDIDATES = ("model.onnx", "onnx/model.onnx")

# Hard caps on the token window when config.json does not say (max_position_embeddings).
_DEFAULT_POSITIONS = {"embeddinggemma": 2048, "sentence-transformers": 512}

# Tokens per batch (padded length x batch size): 16 x 128, 4 x 512 or one 2048-token item.
# Larger batches bought no throughput on CPU (EmbeddingGemma: within a few % of batch 1,
# bench/bench_gemma.py) but hold the cores longer per run, which delays cancel, lock and a
# query's own embedding, and they pad more.
MAX_BATCH_TOKENS = 2048

# Pinned sha256 of the EmbeddingGemma files (revision 5090578d), from the manifest
# module; the local copy is a fallback only (same values) so this module never depends on it.
_FALLBACK_PINNED_SHA256 = {
    GEMMA_MODEL: "ad1dfee81a70f7944b9b9d1cc6e48075b832881cf33fab2f2b248be78f3f0043",
    GEMMA_DATA: "599962c3143b040de2dd05e5975be3e9091dd067cacc6a8f7186e3203bab9e02",
    TOKENIZER: "4dda02faaf32bc91031dc8c88457ac272b00c1016cc679757d1c441b248b9c47",
}
try:
    from .manifest import PINNED as _PINNED_MANIFEST

    PINNED_SHA256 = {f.path: f.sha256 for f in _PINNED_MANIFEST.files}
except ImportError:  # pragma: no cover - manifest module absent
    PINNED_SHA256 = dict(_FALLBACK_PINNED_SHA256)

INSTALL_HINT = "run `memories rag model-install`"

# --- telemetry ---------------------------------------------------------------------------

_telemetry_lock = threading.Lock()
TELEMETRY_DISABLED = False  # module flag: set once disable_telemetry_events() has been called


def ensure_telemetry_disabled() -> None:
    """Call ``onnxruntime.disable_telemetry_events()`` once per process: a local model reports nothing anywhere."""
    global TELEMETRY_DISABLED
    with _telemetry_lock:
        if TELEMETRY_DISABLED:
            return
        import onnxruntime as ort

        ort.disable_telemetry_events()
        TELEMETRY_DISABLED = True


def create_session(model_path: Path, threads: int):
    """An onnxruntime CPU session with telemetry disabled first and the thread caps applied."""
    import onnxruntime as ort

    ensure_telemetry_disabled()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = max(1, int(threads))
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise ModelError(msg("Cannot load the ONNX model {model_path}: {problem}",
                             model_path=model_path, problem=_short(exc))) from exc


# --- hashing -----------------------------------------------------------------------------

_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def sha256_file(path: Path) -> str:
    """sha256 of a file, memoised per process on (path, size, mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _hash_lock:
        hit = _hash_cache.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _hash_lock:
        _hash_cache[key] = digest
    return digest


# --- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbedResult:
    vectors: np.ndarray  # float32 (n, dims), L2-normalised, in input order
    truncated: list[bool]  # per item: input was cut at the token cap
    tokens: int  # model input tokens processed (after truncation, without padding)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _np_int_type(ort_type: str):
    return np.int32 if ort_type == "tensor(int32)" else np.int64


class LocalEmbedder:
    """Embeds documents and queries with a local ONNX model. Thread-safe for concurrent use."""

    def __init__(self, model_dir: Path, profile: str = "embeddinggemma", threads: int = 4,
                 max_tokens: int = 2048) -> None:
        if profile not in PROFILES:
            raise ModelError(msg("Unknown local model profile {profile!r}; use one of {names}.",
                                 profile=profile, names=', '.join(PROFILES)))
        if int(max_tokens) < 4:
            raise ModelError(msg("max_tokens must be at least 4; got {max_tokens}.", max_tokens=max_tokens))
        self.model_dir = Path(model_dir)
        self.profile = profile
        self.threads = max(1, int(threads))
        files = self._locate_files()
        self.model_path: Path = files["model"]
        self.tokenizer_path: Path = files["tokenizer"]
        positions = self._max_positions()
        self.max_tokens = min(int(max_tokens), positions)

        self._tok = self._load_tokenizer()
        self._session = create_session(self.model_path, self.threads)
        self._input_types = {i.name: i.type for i in self._session.get_inputs()}
        self._check_inputs()
        self._output_name = self._pick_output()
        self.dims: int = self._find_dims()
        if profile == "embeddinggemma" and self.dims != GEMMA_DIMS:
            raise ModelError(msg("The EmbeddingGemma model in {model_dir} gives {dims}-d vectors; expected "
                                 "{expected}. Reinstall it: run `memories rag model-install`.",
                                 model_dir=self.model_dir, dims=self.dims, expected=GEMMA_DIMS))

        self.file_hashes: dict[str, str] = {rel: sha256_file(self.model_dir / rel) for rel in self._hashed_files()}
        self.pinned: bool = profile == "embeddinggemma" and all(
            self.file_hashes.get(rel) == PINNED_SHA256[rel] for rel in (GEMMA_MODEL, GEMMA_DATA, TOKENIZER))
        key_material = json.dumps({
            "profile": profile,
            "files": self.file_hashes,
            "dims": self.dims,
            "max_tokens": self.max_tokens,
        }, sort_keys=True).encode()
        self.space_key: str = f"local:{profile}:{self.dims}:{hashlib.sha256(key_material).hexdigest()[:24]}"

    # --- loading -------------------------------------------------------------------------

    def _locate_files(self) -> dict[str, Path]:
        d = self.model_dir
        if self.profile == "embeddinggemma":
            missing = [rel for rel in (GEMMA_MODEL, GEMMA_DATA, TOKENIZER) if not (d / rel).is_file()]
            if missing:
                raise ModelNotInstalledError(msg("EmbeddingGemma is not installed in {folder}; run `memories rag model-install` "
                                                 "(missing: {names}).",
                                                 folder=d, names=', '.join(missing)))
            return {"model": d / GEMMA_MODEL, "tokenizer": d / TOKENIZER}
        model = next((d / rel for rel in ST_MODEL_CANDIDATES if (d / rel).is_file()), None)
        tok = d / TOKENIZER
        if model is None or not tok.is_file():
            need = [] if model is not None else ["model.onnx (or onnx/model.onnx)"]
            need += [] if tok.is_file() else [TOKENIZER]
            raise ModelNotInstalledError(msg("No sentence-transformers ONNX model in {folder} (missing: {names}); "
                                             "point [rag] local_model_dir at a folder with model.onnx and "
                                             "tokenizer.json.", folder=d, names=', '.join(need)))
        return {"model": model, "tokenizer": tok}

    def _hashed_files(self) -> list[str]:
        rels = [self.model_path.relative_to(self.model_dir).as_posix(), TOKENIZER]
        data = self.model_path.with_name(self.model_path.name + "_data")
        if data.is_file():  # external data of either profile belongs to the vector space
            rels.insert(1, data.relative_to(self.model_dir).as_posix())
        return rels

    def _max_positions(self) -> int:
        default = _DEFAULT_POSITIONS[self.profile]
        cfg = self.model_dir / "config.json"
        try:
            value = json.loads(cfg.read_text("utf-8")).get("max_position_embeddings")
        except (OSError, ValueError, AttributeError):
            return default
        return int(value) if isinstance(value, int) and value >= 4 else default

    def _load_tokenizer(self):
        from tokenizers import Tokenizer

        try:
            tok = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:
            raise ModelError(msg("Cannot read the tokenizer {tokenizer_path}: {problem}",
                                 tokenizer_path=self.tokenizer_path, problem=_short(exc))) from exc
        # Ignore any padding/truncation baked into tokenizer.json; we pad per batch ourselves.
        tok.no_padding()
        tok.no_truncation()
        tok.enable_truncation(self.max_tokens)
        # Text that happens to contain "<bos>" or "[SEP]" must not become control tokens:
        # exactly one <bos>/<eos> (or [CLS]/[SEP]) per input, added by the post-processor.
        if hasattr(tok, "encode_special_tokens"):
            tok.encode_special_tokens = True
        probe = tok.encode("a")
        if self.profile == "embeddinggemma":
            if probe.ids[:1] != [2] or probe.ids[-1:] != [1]:
                raise ModelError(msg("The tokenizer {tokenizer_path} does not add <bos>=2/<eos>=1; it is not "
                                     "EmbeddingGemma's. Reinstall: run `memories rag model-install`.",
                                     tokenizer_path=self.tokenizer_path))
        pad_id = None
        for name in ("<pad>", "[PAD]", "<PAD>"):
            pad_id = tok.token_to_id(name)
            if pad_id is not None:
                break
        self._pad_id = int(pad_id) if pad_id is not None else 0
        unk = [tok.token_to_id(name) for name in ("[UNK]", "<unk>", "<UNK>")]
        self._unk_id = next((int(u) for u in unk if u is not None), None)
        return tok

    def _check_inputs(self) -> None:
        names = set(self._input_types)
        required = {"input_ids", "attention_mask"}
        allowed = required | ({"token_type_ids"} if self.profile == "sentence-transformers" else set())
        if not required <= names or not names <= allowed:
            raise ModelError(msg("The ONNX model {model_path} has inputs {inputs}; the {profile} profile feeds "
                                 "{fed}.",
                                 model_path=self.model_path, inputs=sorted(names), profile=self.profile, fed=sorted(allowed)))

    def _pick_output(self) -> str:
        outputs = [o.name for o in self._session.get_outputs()]
        want = GEMMA_OUTPUT if self.profile == "embeddinggemma" else ST_OUTPUT
        if want in outputs:
            return want
        if self.profile == "sentence-transformers":
            # Some exports name the token output differently; take a rank-3 output.
            for o in self._session.get_outputs():
                if len(o.shape or []) == 3:
                    return o.name
        raise ModelError(msg("The ONNX model {model_path} has no output {want!r} (outputs: {outputs}).",
                             model_path=self.model_path, want=want, outputs=outputs))

    def _find_dims(self) -> int:
        out = next(o for o in self._session.get_outputs() if o.name == self._output_name)
        last = (out.shape or [None])[-1]
        if isinstance(last, int) and last > 0:
            return last
        return int(self._run_batch([self._tok.encode("a").ids]).shape[1])

    # --- encoding ------------------------------------------------------------------------

    @staticmethod
    def document_text(profile: str, title: str | None, text: str) -> str:
        if profile == "embeddinggemma":
            return f"title: {title or 'none'} | text: {text}"
        return text

    @staticmethod
    def query_text(profile: str, text: str) -> str:
        if profile == "embeddinggemma":
            return f"task: search result | query: {text}"
        return text

    def document_token_ids(self, title: str | None, text: str) -> list[int]:
        """Model input ids for one document (prefix, special tokens, truncation applied)."""
        return list(self._tok.encode(self.document_text(self.profile, title, text)).ids)

    def query_token_ids(self, text: str) -> list[int]:
        return list(self._tok.encode(self.query_text(self.profile, text)).ids)

    def unknown_share(self, text: str) -> float:
        """Share of the text's tokens the model cannot read ([UNK]): an English-only model
        turns about half of Chinese characters into [UNK], and its vectors then say little."""
        ids = self._tok.encode(text, add_special_tokens=False).ids
        if not ids or self._unk_id is None:
            return 0.0
        return sum(1 for i in ids if i == self._unk_id) / len(ids)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` alone: no prefix, no special tokens, not truncated."""
        enc = self._tok.encode(text, add_special_tokens=False)
        return len(enc.ids) + sum(len(o.ids) for o in enc.overflowing)

    # --- inference -----------------------------------------------------------------------

    def _run_batch(self, seqs: list[list[int]]) -> np.ndarray:
        """Pad one batch, run the session, return L2-normalised float32 (len(seqs), dims)."""
        width = max(len(s) for s in seqs)
        ids = np.full((len(seqs), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        for row, s in enumerate(seqs):
            ids[row, :len(s)] = s
            mask[row, :len(s)] = 1
        feeds = {}
        for name, ort_type in self._input_types.items():
            arr = ids if name == "input_ids" else mask if name == "attention_mask" else np.zeros_like(ids)
            feeds[name] = arr.astype(_np_int_type(ort_type), copy=False)
        try:
            (out,) = self._session.run([self._output_name], feeds)
        except Exception as exc:
            raise ModelError(msg("The local embedding model failed: {problem}", problem=_short(exc))) from exc
        out = np.asarray(out, dtype=np.float32)
        if self.profile == "sentence-transformers":
            if out.ndim != 3:
                raise ModelError(msg("Output {output!r} has shape {shape}; expected [batch, seq, dims].",
                                     output=self._output_name, shape=out.shape))
            m = mask.astype(np.float32)[:, :, None]
            out = (out * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        elif out.ndim != 2:
            raise ModelError(msg("Output {output!r} has shape {shape}; expected [batch, dims].",
                                 output=self._output_name, shape=out.shape))
        if out.shape[0] != len(seqs) or not np.isfinite(out).all():
            raise ModelError(msg("The local embedding model returned malformed or non-finite vectors."))
        wide = out.astype(np.float64)  # float32 squares of large outputs would overflow to inf
        norms = np.linalg.norm(wide, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise ModelError(msg("The local embedding model returned an all-zero vector, which has no direction."))
        return (wide / norms).astype(np.float32)

    def _embed_ids(self, seqs: list[list[int]], batch_size: int, cancel: threading.Event | None) -> np.ndarray:
        """Length-bucketed batches: sort by length, batch, restore the input order."""
        out = np.zeros((len(seqs), self.dims), dtype=np.float32)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        batch_size = max(1, int(batch_size))
        start = 0
        while start < len(order):
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Embedding was cancelled."))
            end = start + 1
            # Sorted ascending: the item at `end` is the longest so far, so it sets the width.
            while (end < len(order) and end - start < batch_size
                   and (end - start + 1) * len(seqs[order[end]]) <= MAX_BATCH_TOKENS):
                end += 1
            idx = order[start:end]
            out[idx] = self._run_batch([seqs[i] for i in idx])
            start = end
        return out

    def embed_documents(self, items: Sequence[tuple[str | None, str]], batch_size: int = 16,
                        cancel: threading.Event | None = None) -> EmbedResult:
        """Embed ``(title, text)`` pairs. Vectors come back in input order."""
        if not items:
            return EmbedResult(np.zeros((0, self.dims), dtype=np.float32), [], 0)
        texts = [self.document_text(self.profile, title, text) for title, text in items]
        encs = self._tok.encode_batch(texts)
        seqs = [list(e.ids) for e in encs]
        truncated = [bool(e.overflowing) for e in encs]
        vectors = self._embed_ids(seqs, batch_size, cancel)
        return EmbedResult(vectors=vectors, truncated=truncated, tokens=sum(len(s) for s in seqs))

    def embed_query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector of shape (dims,)."""
        return self._run_batch([self.query_token_ids(text)])[0]

    def bind(self, ctx: CallContext) -> LocalEmbedder:
        """Nothing leaves the machine and a batch is short: one vault's controls change nothing."""
        return self

    def check_policy(self) -> None:
        """A local model suits every vault, device-only ones included."""

    def __repr__(self) -> str:
        return (f"LocalEmbedder(profile={self.profile!r}, dims={self.dims}, threads={self.threads}, "
                f"max_tokens={self.max_tokens}, pinned={self.pinned}, dir={os.fspath(self.model_dir)!r})")
