"""Ask: sources → generation → validated answer, or the offline fallback.

Engine-independent: the caller retrieves (any mode), turns hits into :class:`Source` s and
passes the configured :class:`Generator` (or None). Nothing is sent when nothing was
retrieved (``insufficient_evidence``). ``still_valid`` is asked after the service answers:
when the vault was locked or changed meanwhile, the late answer is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import CancelledError
from ..i18n import msg
from ..models.remote import CallContext
from ..models.remote_generate import Generator
from ..notes import CITATION_CHECK, NO_GENERATION_SERVICE, NOTHING_RETRIEVED, UNCITED, UNVERIFIED_QUOTE
from .citations import check_answer
from .extractive import Rarity, extract_answer
from .prompt import build_prompt
from .types import ANSWERED, INSUFFICIENT, Answer, Source


def answer_question(question: str, sources: Sequence[Source], generator: Generator | None, ctx: CallContext,
                    still_valid: Callable[[], bool] | None = None, rarity: Rarity | None = None) -> Answer:
    """``rarity``: each term's rarity in the vault, for the offline answer (``extract_answer``)."""
    sources = list(sources)
    if not sources:
        return Answer(INSUFFICIENT, "", notes=[NOTHING_RETRIEVED])
    if generator is None:
        answer = extract_answer(question, sources, rarity=rarity)
        answer.notes.append(NO_GENERATION_SERVICE)
    else:
        prompt = build_prompt(question, sources)
        reply = generator.generate(prompt.system, prompt.user, ctx)
        if still_valid is not None and not still_valid():
            raise CancelledError(msg("The vault was locked or changed during the ask; the late answer was dropped."))
        parsed, citations, quotes = check_answer(reply, sources)
        if not citations:
            answer = Answer(INSUFFICIENT, parsed.answer, quotes=quotes, sources=sources,
                            notes=[UNCITED])
        else:
            answer = Answer(ANSWERED, parsed.answer, citations=citations, quotes=quotes, sources=sources)
        if answer.has_unverified_quote:
            answer.notes.append(UNVERIFIED_QUOTE)
    if still_valid is not None and not still_valid():
        raise CancelledError(msg("The vault was locked or changed during the ask; the late answer was dropped."))
    answer.notes.append(CITATION_CHECK)
    return answer
