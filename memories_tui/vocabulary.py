"""The words the engine and its front ends share: search modes, match modes, record kinds,
answer states and limits, each spelled once.

Front ends take choices and defaults from here (through `memories_tui.engine`), so a new
mode or kind is one edit, and mypy catches a misspelt one. Nothing here imports anything.
"""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["bm25", "vector", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
BM25, VECTOR, HYBRID = MODES
SEMANTIC_MODES: tuple[Mode, ...] = (VECTOR, HYBRID)  # need the embedding model
DEFAULT_MODE: Mode = BM25

MatchMode = Literal["any", "all", "phrase"]
MATCH_MODES: tuple[MatchMode, ...] = get_args(MatchMode)
MATCH_ANY, MATCH_ALL, MATCH_PHRASE = MATCH_MODES
DEFAULT_MATCH_MODE: MatchMode = MATCH_ANY

# The score of each ranking stage a hit carries (`SearchHit.scores`).
Stage = Literal["bm25", "vector", "fusion", "rerank", "service"]

Kind = Literal["memory", "card", "private", "credential", "asset"]
GENERAL_KINDS: tuple[Kind, ...] = ("memory", "card")  # indexed and searchable
EXCLUDED_KINDS: tuple[Kind, ...] = ("private", "credential", "asset")  # never indexed, never leave the vault
KINDS: tuple[Kind, ...] = GENERAL_KINDS + EXCLUDED_KINDS
TEXT_KINDS: tuple[Kind, ...] = ("memory", "card", "private", "credential")  # a record with a text body

AnswerStatus = Literal["answered", "insufficient_evidence", "extractive"]
IngestStatus = Literal["created", "updated", "unchanged", "skipped"]

MAX_RESULTS = 100  # results one search may return
DEFAULT_LIMIT = 10  # results a search returns unless told
DEFAULT_ASK_LIMIT = 10  # retrieved chunks an answer is written from unless told
