"""`rag ask`: grounded answers with validated citations, or extractive answers offline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import DEFAULT_ASK_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, MATCH_MODES, MAX_RESULTS, MODES
from ..errors import CancelledError, LockedError, MemoriesError, UsageError
from ..frontend.words import note_text
from ..i18n import N_, _, msg
from .context import Context
from .output import Payload, clean
from .search_verbs import _read_queries

if TYPE_CHECKING:
    from ..engine import Answer

STATUS_LABEL = {"answered": N_("Answer (generated, citations checked)"),
                "extractive": N_("Extractive answer (sentences copied from your notes, not generated)"),
                "insufficient_evidence": N_("Insufficient evidence")}


def cmd_rag_ask(ctx: Context) -> Payload:
    args = ctx.args
    if (args.question is None) == (args.questions is None):
        raise UsageError(msg("Give either a QUESTION or --questions FILE.jsonl."))
    vault_id = ctx.held_by_daemon(args.vault)
    if vault_id is None or args.questions is not None:  # the daemon checks one question's options itself
        from ..engine import check_options

        check_options(args.mode, args.match_mode, args.limit)
    batch = _read_queries(Path(args.questions)) if args.questions is not None else None
    if vault_id is None:
        vault_id = ctx.unlock(args.vault, local=True)

    def ask(text: str) -> Answer:
        return ctx.engine.ask(vault_id, text, mode=args.mode, match_mode=args.match_mode, limit=args.limit,
                              rerank=not args.no_rerank)

    if batch is None:
        answer = ask(args.question)
        if not ctx.json:
            _print_answer(ctx, answer)
        return {"vault_id": vault_id, "question": args.question, "mode": args.mode, **answer.to_json()}
    out: list[dict[str, Any]] = []
    for qid, text in batch:
        if not ctx.json:
            print(ctx.bold(f"== {clean(qid)}: {clean(text)}"))
        try:
            answer = ask(text)
        except (CancelledError, LockedError):
            raise  # the whole batch stops: nothing further could be answered
        except MemoriesError as exc:
            out.append({"id": qid, **exc.to_json()})
            if not ctx.json:
                print("    " + _("error: {message}").format(message=clean(exc.localized())))
            continue
        out.append({"id": qid, **answer.to_json()})
        if not ctx.json:
            _print_answer(ctx, answer)
    failed = sum(1 for item in out if "error" in item)
    return {"vault_id": vault_id, "mode": args.mode, "answers": out, "failed": failed}


def _print_answer(ctx: Context, answer: Answer) -> None:
    label = STATUS_LABEL.get(answer.status)
    print(ctx.bold(_(label) if label else answer.status))
    if answer.answer:
        print(_with_citations_bold(ctx, answer))
    for c in answer.citations:
        print(f"  {ctx.bold('[' + c.label + ']')} {clean(c.title)}  "
              + ctx.dim(_("{id} r{revision} bytes {start}-{end}").format(
                  id=c.record_id, revision=c.revision, start=c.byte_start, end=c.byte_end)))
    for q in answer.quotes:
        if q.verified:
            line = _("quote [{source}] verified bytes {start}-{end}: {text}").format(
                source=q.source, start=q.byte_start, end=q.byte_end, text=clean(q.text))
        else:
            line = _("quote [{source}] NOT FOUND in its source: {text}").format(source=q.source, text=clean(q.text))
        print("  " + line)
    for note in answer.notes:
        if note.kind != "extractive":  # the heading line says it already
            print(ctx.dim(_("note: {note}").format(note=clean(note_text(note)))))


def _with_citations_bold(ctx: Context, answer: Answer) -> str:
    """The answer with each citation the check found in bold (on a colour terminal)."""
    text = answer.answer
    out, pos = [], 0
    for span in answer.citation_spans:
        out += [clean(text[pos:span.start]), ctx.bold(clean(text[span.start:span.end]))]
        pos = span.end
    return "".join([*out, clean(text[pos:])])


def register(rag: Any, verb: Any) -> None:
    p = verb(rag, "ask", cmd_rag_ask,
             _("Answer a question from the vault with checked [S#] citations (extractive without [rag.generation])."),
             "memories rag ask notes \"什麼是混合搜尋？\" --mode hybrid --limit 8")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("question", metavar="QUESTION", nargs="?")
    p.add_argument("--questions", metavar="FILE.jsonl", help=_("answer every {\"id\",\"text\"} line with one unlock"))
    p.add_argument("--mode", default=DEFAULT_MODE, choices=MODES,
                   help=_("retrieval mode (default {mode})").format(mode=DEFAULT_MODE))
    p.add_argument("--match-mode", default=DEFAULT_MATCH_MODE, choices=MATCH_MODES)
    p.add_argument("--limit", type=int, default=DEFAULT_ASK_LIMIT,
                   help=_("chunks retrieved and sent as sources (1–{max}, default {default})").format(
                       max=MAX_RESULTS, default=DEFAULT_ASK_LIMIT))
    p.add_argument("--no-rerank", action="store_true", help=_("skip the rerank stages"))
