"""`rag ask` over one unlocked vault (R-ASK-1…5, R-PLUS-1, R-MCP-2).

Retrieval uses the engine's own search (any mode, rerank stages included); the hits become
labelled sources; `answer.ask` does the rest. A device-only vault refuses a non-loopback
generation service before anything (even retrieval) runs. The lock epoch and the revisions of
the sources are re-checked between HTTP attempts and after the service answers: a lock, or
a change to a source record meanwhile, drops the late answer (R-ASK-5).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..errors import CancelledError

if TYPE_CHECKING:
    from ..answer.types import Answer
    from .facade import Engine

DEFAULT_ASK_LIMIT = 10


def ask_vault(engine: Engine, vault_id: str, question: str, *, mode: str = "bm25", match_mode: str = "any",
              limit: int = DEFAULT_ASK_LIMIT, rerank: bool = True,
              cancel: threading.Event | None = None) -> Answer:
    from ..answer.ask import answer_question  # httpx loads only when a command asks
    from ..answer.types import Source
    from ..models.remote import CallContext, refuse_if_device_only

    vault_id = engine.vault_id_of(vault_id)
    epoch = engine.lock_epoch
    rag = engine.config.rag
    device_only = engine.device_only(vault_id)
    if rag.generation is not None:
        refuse_if_device_only(rag.generation.url, device_only, "generation")
    response = engine.search(vault_id, question, mode=mode, match_mode=match_mode, limit=limit, rerank=rerank,
                             cancel=cancel)
    sources = [Source.from_hit(h) for h in response.results]
    revisions = {s.record_id: s.revision for s in sources}

    def still_valid() -> bool:
        if engine.lock_epoch != epoch or not engine.is_unlocked(vault_id):
            return False
        current = engine.current_records(vault_id)
        return all(rid in current and current[rid].revision == rev for rid, rev in revisions.items())

    def check() -> None:
        if not still_valid():
            raise CancelledError("The vault was locked or a source changed during the ask; nothing more was sent.")

    generator = None
    if rag.generation is not None:
        from ..models.remote_generate import Generator

        generator = Generator(rag.generation, rag.http)
    ctx = CallContext(cancel=cancel, check=check, device_only=device_only)
    answer = answer_question(question, sources, generator, ctx, still_valid)
    answer.notes[:0] = response.notes
    return answer
