"""`rag ask` over one unlocked vault: retrieval, then a generated or extractive answer.

Retrieval uses the engine's own search (any mode, rerank stages included); the hits become
labelled sources; `answer.ask` does the rest. A device-only vault refuses a non-loopback
generation service before anything (even retrieval) runs. The vault's lock guard, widened to
the revisions of the sources, is checked between HTTP attempts and after the service answers:
a lock, or a change to a source record meanwhile, drops the late answer.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..index.reports import BUDGET_SECONDS
from ..vocabulary import DEFAULT_ASK_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, MatchMode, Mode

if TYPE_CHECKING:
    from ..answer.types import Answer
    from .context import VaultContext

STALE_MESSAGE = "The vault was locked or a source changed during the ask; nothing more was sent."


def ask_vault(ctx: VaultContext, question: str, *, mode: Mode = DEFAULT_MODE, match_mode: MatchMode = DEFAULT_MATCH_MODE,
              limit: int = DEFAULT_ASK_LIMIT, rerank: bool = True,
              cancel: threading.Event | None = None) -> Answer:
    from ..answer.ask import answer_question  # httpx loads only when a command asks
    from ..answer.types import Source
    from ..egress import SentChunk
    from ..models.remote import refuse_if_device_only
    from .searching import search_vault

    guard = ctx.guard()
    rag = ctx.config.rag
    if rag.generation is not None:
        refuse_if_device_only(rag.generation.url, ctx.device_only, "generation")
    response = search_vault(ctx, question, mode=mode, match_mode=match_mode, limit=limit, cancel=cancel,
                            rerank=rerank, cards_only=False, budget_seconds=BUDGET_SECONDS,
                            progress=None)
    sources = [Source.from_hit(h) for h in response.results]
    guard = guard.with_sources({s.record_id: s.revision for s in sources})

    generator = None
    if rag.generation is not None:
        from ..models.remote_generate import Generator

        generator = Generator(rag.generation, rag.http)
    call = ctx.call_context(cancel, guard, STALE_MESSAGE,
                            sends=tuple(SentChunk(s.record_id, s.revision, s.chunk_hash) for s in sources))
    rarity = ctx.index().lexical.rarity if generator is None else None  # the offline answer weighs terms by it
    answer = answer_question(question, sources, generator, call, guard.valid, rarity=rarity)
    answer.notes[:0] = response.notes
    return answer
