"""The pinned EmbeddingGemma files and the texts written beside them.

Paths are relative, POSIX-style, and map to ``{base_url}/{path}`` on the server and
``<model dir>/<path>`` on disk. The ONNX graph and its external data file sit in the same
folder (``onnx/``), as onnxruntime requires.
"""

from __future__ import annotations

from dataclasses import dataclass

GEMMA_TERMS_URL = "https://ai.google.dev/gemma/terms"
GEMMA_PROHIBITED_USE_URL = "https://ai.google.dev/gemma/prohibited_use_policy"


@dataclass(frozen=True)
class ModelFile:
    path: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class ModelManifest:
    repo: str
    revision: str
    files: tuple[ModelFile, ...]
    host: str = "https://huggingface.co"

    @property
    def default_base_url(self) -> str:
        return f"{self.host}/{self.repo}/resolve/{self.revision}"

    def file_urls(self) -> list[str]:
        """The exact address of every pinned file: host, repository, full revision, path."""
        return [f"{self.default_base_url}/{f.path}" for f in self.files]

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def file(self, path: str) -> ModelFile:
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)


PINNED = ModelManifest(
    repo="onnx-community/embeddinggemma-300m-ONNX",
    revision="5090578d9565bb06545b4552f76e6bc2c93e4a66",
    files=(
        ModelFile("onnx/model_q4.onnx", 519_322,
                  "ad1dfee81a70f7944b9b9d1cc6e48075b832881cf33fab2f2b248be78f3f0043"),
        ModelFile("onnx/model_q4.onnx_data", 196_725_760,
                  "599962c3143b040de2dd05e5975be3e9091dd067cacc6a8f7186e3203bab9e02"),
        ModelFile("tokenizer.json", 20_323_312,
                  "4dda02faaf32bc91031dc8c88457ac272b00c1016cc679757d1c441b248b9c47"),
        ModelFile("tokenizer_config.json", 1_156_830,
                  "3ca953eea6c3c9fcda9cf3df22949ff18b216f7c74bd6459230f3f1013953f3a"),
        ModelFile("config.json", 1_765,
                  "6e1f06404b7163e0325ed2ea3e6781cde50f4a50b31780a95ad0d30e8404d77b"),
        ModelFile("special_tokens_map.json", 662,
                  "2f7b0adf4fb469770bb1490e3e35df87b1dc578246c5e7e6fc76ecf33213a397"),
        ModelFile("generation_config.json", 133,
                  "1fb1efd221c1ca88a736d1b36cb47d754c177677e222acb3b1e5424c5d664870"),
    ),
)

NOTICE_FILENAME = "NOTICE.md"
MODEL_CARD_FILENAME = "MODEL_CARD.md"


def notice_text(manifest: ModelManifest = PINNED) -> str:
    return f"""# Notice: Gemma Terms of Use

The model files in this folder are EmbeddingGemma files (a Gemma model), downloaded from
`{manifest.repo}` at revision `{manifest.revision}`.

Gemma is provided under and subject to the Gemma Terms of Use found at
{GEMMA_TERMS_URL}

Use of these files must also follow the Gemma Prohibited Use Policy:
{GEMMA_PROHIBITED_USE_URL}

Memories did not create or modify these files; it downloaded them and checked each file's
SHA-256 against the pinned revision. If you share these files, pass this notice and the Gemma
Terms of Use along with them.
"""


def model_card_text(manifest: ModelManifest = PINNED) -> str:
    rows = "\n".join(f"| `{f.path}` | {f.bytes:,} | `{f.sha256}` |" for f in manifest.files)
    return f"""# Model card: EmbeddingGemma 300M (ONNX, Q4)

- Model: EmbeddingGemma 300M by Google DeepMind, ONNX export with 4-bit weights
  (`onnx/model_q4.onnx` + external data `onnx/model_q4.onnx_data`).
- Source: https://huggingface.co/{manifest.repo} at revision `{manifest.revision}`
  (upstream model: https://huggingface.co/google/embeddinggemma-300m; model card:
  https://ai.google.dev/gemma/docs/embeddinggemma/model_card).
- License: Gemma Terms of Use, {GEMMA_TERMS_URL} (see NOTICE.md).
- Output: 768-dimensional sentence embeddings (`sentence_embedding` output), L2-normalised
  by Memories; Matryoshka truncation to 512/256/128 dimensions is supported by the model.
- Inputs: `input_ids`, `attention_mask` (int64); the tokenizer adds `<bos>` and `<eos>`.
- Task prefixes used by Memories: queries `task: search result | query: ...`, documents
  `title: ... | text: ...`.
- Context: up to 2048 tokens; this export drifts from the reference model beyond 512 tokens,
  so Memories reports truncated and long chunks.
- Intended use: semantic search and retrieval over your own notes. Like any embedding model
  it reflects biases of its training data; do not use it for decisions about people.

## Files (all SHA-256 verified at install)

| file | bytes | sha256 |
|---|---|---|
{rows}
"""
