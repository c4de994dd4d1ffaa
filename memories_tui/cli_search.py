"""Search, index and status verbs of the CLI (kept apart from cli.py's vault/record verbs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputRefusedError, UsageError

if TYPE_CHECKING:
    from .cli import Context


def cmd_rag_search(ctx: Context) -> dict[str, Any]:
    from .cli import clean

    args = ctx.args
    if (args.query is None) == (args.queries is None):
        raise UsageError("Give either a QUERY or --queries FILE.jsonl.")
    if args.queries is not None:
        queries = _read_queries(Path(args.queries))
        for _qid, text in queries:  # validate every query before unlocking
            ctx_check(text, args)
    else:
        ctx_check(args.query, args)
    vault_id = ctx.unlock(args.vault)
    engine = ctx.engine
    if args.queries is None:
        response = engine.search(vault_id, args.query, mode=args.mode, match_mode=args.match_mode,
                                 limit=args.limit, cards_only=args.cards_only, rerank=not args.no_rerank)
        if not ctx.json:
            _print_hits(ctx, response.results, response.terms, clean)
        return response.to_json()
    out = []
    for qid, text in queries:
        response = engine.search(vault_id, text, mode=args.mode, match_mode=args.match_mode, limit=args.limit,
                                 cards_only=args.cards_only, rerank=not args.no_rerank)
        out.append({"id": qid, "results": response.to_json()["results"]})
        if not ctx.json:
            print(ctx.bold(f"== {clean(qid)}: {clean(text)}"))
            _print_hits(ctx, response.results, response.terms, clean)
    return {"vault_id": vault_id, "mode": args.mode, "match_mode": args.match_mode, "queries": out}


def ctx_check(query: str, args: Any) -> None:
    from .retrieval.search import check_request

    check_request(query, args.mode, args.match_mode, args.limit)


def _read_queries(path: Path) -> list[tuple[str, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputRefusedError(f"{path} does not exist.", code="file_not_found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputRefusedError(f"Cannot read {path} as UTF-8 text: {exc}.", code="file_unreadable") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            raise InputRefusedError(f"{path} line {n} is not JSON; each line must be {{\"id\", \"text\"}}.",
                                    code="bad_queries_file") from None
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or "id" not in item:
            raise InputRefusedError(f"{path} line {n} must be an object with \"id\" and string \"text\".",
                                    code="bad_queries_file")
        out.append((str(item["id"]), item["text"]))
    return out


def _print_hits(ctx: Context, hits: list[Any], terms: list[str], clean: Any) -> None:
    from .retrieval.highlight import snippet

    if not hits:
        print("No results.")
        return
    for hit in hits:
        print(f"{ctx.bold('[' + hit.citation + ']')} {hit.score:.4f}  {clean(hit.title)}  "
              + ctx.dim(f"{hit.asset_id} r{hit.revision} bytes {hit.byte_start}-{hit.byte_end}"))
        print("    " + clean(snippet(hit.text, terms)))


def cmd_memory_search(ctx: Context) -> dict[str, Any]:
    from .cli import _table
    from .retrieval.search import check_request

    args = ctx.args
    check_request(args.query, "bm25", args.match_mode, args.limit)
    vault_id = ctx.unlock(args.vault)
    rows = ctx.engine.memory_search(vault_id, args.query, limit=args.limit, match_mode=args.match_mode)
    if not ctx.json:
        if not rows:
            print("No results.")
        else:
            _table(ctx, ["SCORE", "ID", "REV", "TITLE", "SNIPPET"],
                   [[f"{r['score']:.4f}", r["id"], r["revision"], r["title"], r["snippet"][:80]] for r in rows])
    return {"vault_id": vault_id, "query": args.query, "results": rows}


def cmd_rag_status(ctx: Context) -> dict[str, Any]:
    vault_id = ctx.unlock(ctx.args.vault)
    status = ctx.engine.status(vault_id)
    if not ctx.json:
        for key, value in status.items():
            print(f"{key:>20}  {value}")
    return status


def register(rag: Any, memory: Any, verb: Any) -> None:
    p = verb(rag, "search", cmd_rag_search, "Search chunks (BM25, vector or hybrid) with citation labels.",
             "memories rag search notes \"keywords\" --mode bm25 --match-mode all --limit 8")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("query", metavar="QUERY", nargs="?")
    p.add_argument("--queries", metavar="FILE.jsonl", help="run every {\"id\",\"text\"} line with one unlock")
    _search_options(p)
    p.add_argument("--cards-only", action="store_true", help="only knowledge cards")
    p.add_argument("--no-rerank", action="store_true", help="skip the rerank stages")
    p = verb(memory, "search", cmd_memory_search, "Lexical search grouped by record (best chunk as snippet).",
             "memories memory search notes \"中文 English\" --match-mode all")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--match-mode", default="any", choices=("any", "all", "phrase"))
    p = verb(rag, "status", cmd_rag_status, "Show index, embedding and cache status for a vault.",
             "memories rag status notes --json")
    p.add_argument("vault", metavar="VAULT_ID")


def _search_options(p: Any) -> None:
    p.add_argument("--mode", default="bm25", choices=("bm25", "vector", "hybrid"))
    p.add_argument("--match-mode", default="any", choices=("any", "all", "phrase"))
    p.add_argument("--limit", type=int, default=10, help="results to return (1–100)")
