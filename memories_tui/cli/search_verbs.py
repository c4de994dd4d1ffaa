"""Search, index, model and status verbs: `rag search/index/model-install/status`, `memory search`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import (
    DEFAULT_LIMIT,
    DEFAULT_MATCH_MODE,
    DEFAULT_MODE,
    MATCH_MODES,
    MAX_FILE_BYTES,
    MAX_RESULTS,
    MODES,
    PINNED_MODEL,
    EmbedProgress,
    Query,
    SearchHit,
    check_options,
    parse_query,
    read_limited,
)
from ..errors import InputRefusedError, LimitError, ModelError, NetworkError, UsageError
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport

if TYPE_CHECKING:  # httpx loads only when a model is installed
    from ..engine import InstallProgress


def cmd_rag_search(ctx: Context) -> Payload:
    args = ctx.args
    if (args.query is None) == (args.queries is None):
        raise UsageError("Give either a QUERY or --queries FILE.jsonl.")
    query: Query | None = None
    if args.queries is not None:
        queries = _read_queries(Path(args.queries))
        check_options(args.mode, args.match_mode, args.limit)  # they hold for the whole batch
    else:
        query = parse_query(args.query, mode=args.mode, match_mode=args.match_mode, limit=args.limit)
    vault_id = ctx.unlock(args.vault)
    engine = ctx.engine

    def progress(p: EmbedProgress) -> None:  # on-demand embedding of chunks that have no vector yet
        ctx.progress("embedding missing chunks: " + _embed_line(p))

    if query is not None:
        response = engine.search(vault_id, query, cards_only=args.cards_only, rerank=not args.no_rerank,
                                 progress=progress)
        if not ctx.json:
            for note in response.notes:
                ctx.progress(f"note: {note}")
            _print_hits(ctx, response.results)
        return response.to_json()
    out: list[dict[str, object]] = []
    batch = ProgressReport("Searching", unit="queries", enabled=not ctx.json)
    with batch:
        for n, (qid, text) in enumerate(queries):
            batch.update(n, len(queries))
            out.append(_batch_item(ctx, qid, text, vault_id, progress))
        batch.update(len(queries), len(queries))
    failed = sum(1 for item in out if "error" in item)
    return {"vault_id": vault_id, "mode": args.mode, "match_mode": args.match_mode, "queries": out,
            "failed": failed}


def _batch_item(ctx: Context, qid: str, text: str, vault_id: str,
                progress: Callable[[EmbedProgress], None]) -> dict[str, object]:
    """One query of a `--queries` batch; an over-limit query becomes its own error entry."""
    args = ctx.args
    if not ctx.json:
        print(ctx.bold(f"== {clean(qid)}: {clean(text)}"))
    try:
        response = ctx.engine.search(vault_id, text, mode=args.mode, match_mode=args.match_mode, limit=args.limit,
                                     cards_only=args.cards_only, rerank=not args.no_rerank, progress=progress)
    except (LimitError, UsageError) as exc:  # one bad query (too long, empty) must not sink a batch
        if not ctx.json:
            print(f"    error: {clean(exc.message)}")
        return {"id": qid, "results": [], **exc.to_json()}
    item: dict[str, object] = {"id": qid, "results": [h.to_json() for h in response.results]}
    if response.fallback is not None:
        item["fallback"] = response.fallback
    if response.notes:
        item["notes"] = response.notes
    if not ctx.json:
        _print_hits(ctx, response.results)
    return item


def _embed_line(p: EmbedProgress) -> str:
    eta = f", ETA {p.eta_seconds:.0f} s" if p.eta_seconds is not None else ""
    return f"embedded {p.done:,}/{p.total:,} chunks, {p.tokens_per_second:,.0f} tokens/s{eta}"


def _read_queries(path: Path) -> list[tuple[str, str]]:
    raw = read_limited(path, MAX_FILE_BYTES, what="queries file")
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputRefusedError(f"Cannot read {path} as UTF-8 text: {exc}.", code="invalid_utf8") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            raise InputRefusedError(f"{path} line {n} is not JSON; each line must be {{\"id\", \"text\"}}.",
                                    code="bad_queries_file") from None
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or "id" not in item:
            raise InputRefusedError(f"{path} line {n} must be an object with \"id\" and string \"text\".",
                                    code="bad_queries_file")
        out.append((str(item["id"]), item["text"]))
    return out


def _print_hits(ctx: Context, hits: list[SearchHit]) -> None:
    if not hits:
        print("No results.")
        return
    for hit in hits:
        print(f"{ctx.bold('[' + hit.citation + ']')} {hit.score:.4f}  {clean(hit.title)}  "
              + ctx.dim(f"{hit.asset_id} r{hit.revision} bytes {hit.byte_start}-{hit.byte_end}"))
        print("    " + clean(hit.snippet))


def cmd_memory_search(ctx: Context) -> Payload:
    args = ctx.args
    query = parse_query(args.query, mode="bm25", match_mode=args.match_mode, limit=args.limit)
    vault_id = ctx.unlock(args.vault)
    rows = ctx.engine.memory_search(vault_id, query)
    if not ctx.json:
        if not rows:
            print("No results.")
        else:
            ctx.table(["SCORE", "ID", "REV", "TITLE", "SNIPPET"],
                      [[f"{r.score:.4f}", r.id, r.revision, r.title, r.snippet[:80]] for r in rows])
    return {"vault_id": vault_id, "query": args.query, "results": [r.to_json() for r in rows]}


def cmd_rag_status(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    status = ctx.engine.status(vault_id)
    if not ctx.json:
        limits, usage = status.limits, status.usage
        lines = [
            ("backend", f"{status.backend} ({status.profile})"),
            ("model", status.model + ("" if status.installed else f" — {status.problem or ''}")),
            ("vector space", status.vector_space or "-"),
            ("dimensions", status.dimensions or "-"),
            ("chunks", f"{status.chunks:,} lexical · {status.embedded:,} embedded · "
                       f"{status.missing:,} missing · {status.truncated:,} truncated (> {status.max_tokens} tokens)"),
            ("cache", f"{usage.chunks:,}/{limits.chunks:,} chunks · {usage.source_mib:.2f}/{limits.source_mib:g} MiB text · "
                      f"{usage.vector_mib:.2f}/{limits.vector_mib:g} MiB vectors · "
                      f"{usage.cached_vaults}/{limits.cached_vaults} vaults"),
            ("last build", f"{status.last_build_seconds} s"),
        ]
        for key, value in lines:
            print(f"{ctx.bold(key.rjust(12))}  {value}")
    return status.to_json()


def cmd_rag_index(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    with ProgressReport("Embedding", unit="chunks", enabled=not ctx.json) as bar:
        report = ctx.engine.build_vector_index(
            vault_id, progress=lambda p: bar.update(p.done, p.total, f"{p.tokens_per_second:,.0f} tokens/s"))
    if not ctx.json:
        print(f"Embedded {report.embedded:,}, reused {report.reused:,} from the encrypted cache, "
              f"{report.missing:,} missing, {report.truncated:,} truncated, in {report.seconds:.1f} s")
    return dict(report.to_json())


def cmd_rag_model_install(ctx: Context) -> Payload:
    if ctx.args.list:
        return _list_model_files(ctx)
    cancel = threading.Event()
    source = Path(ctx.args.source).expanduser() if ctx.args.source else None
    with ProgressReport("Copying" if source else "Downloading", unit="bytes", enabled=not ctx.json) as bar:
        def progress(p: InstallProgress) -> None:
            bar.update(p.bytes_done, p.bytes_total, p.current or "")

        try:
            report = ctx.engine.install_model(progress=progress, cancel=cancel, source=source)
        except KeyboardInterrupt:
            cancel.set()
            raise
        except NetworkError as exc:
            if exc.code != "network_unreachable":
                raise
            raise _with_file_urls(exc) from None
    files = [f.to_json() for f in report.files]
    if not ctx.json:
        ctx.table(["STATUS", "BYTES", "FILE", "PROBLEM"],
                  [[f.status, f"{f.bytes:,}", f.path, f.error or ""] for f in report.files])
        print(f"Model folder: {report.directory}")
    if not report.ok:
        failed = [f for f in report.files if f.status == "failed"]
        detail = "; ".join(f"{f.path}: {(f.error or 'failed').rstrip('.')}" for f in failed)
        count = f"{len(failed)} file{'s' if len(failed) != 1 else ''}"
        error = ModelError(f"Model install failed for {count}: {detail}.", code="model_install_failed")
        error.extra = {"files": files, "directory": str(report.directory)}  # type: ignore[attr-defined]
        raise error
    return {"files": files, "directory": str(report.directory)}


def _pinned_files() -> list[dict[str, object]]:
    model = PINNED_MODEL
    return [{"path": f.path, "bytes": f.bytes, "sha256": f.sha256, "url": url}
            for f, url in zip(model.files, model.file_urls(), strict=True)]


def _with_file_urls(exc: NetworkError) -> NetworkError:
    """The download host is unreachable: the same error with the exact URL of every pinned
    file, to fetch them on another machine (`--json`: also as `files`)."""
    urls = " ".join(PINNED_MODEL.file_urls())
    error = NetworkError(f"{exc.message} The files: {urls}", code=exc.code)
    error.extra = {"files": _pinned_files()}  # type: ignore[attr-defined]
    return error


def _list_model_files(ctx: Context) -> Payload:
    """`model-install --list`: what to fetch on another machine (no network)."""
    model = PINNED_MODEL
    files = _pinned_files()
    if not ctx.json:
        print(f"{model.repo} at revision {model.revision} ({len(files)} files, {model.total_bytes:,} bytes).")
        print("Download each URL into one folder, then run `memories rag model-install --from DIR`.")
        for f in files:
            print(f"{f['url']}\n    {f['bytes']:,} bytes  sha256 {f['sha256']}")
    return {"repo": model.repo, "revision": model.revision, "files": files}


VerbFn = Callable[..., Any]  # parser._verb: argparse's sub-parser objects are untyped


def register(rag: Any, memory: Any, verb: VerbFn) -> None:
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
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    p.add_argument("--match-mode", default=DEFAULT_MATCH_MODE, choices=MATCH_MODES)
    p = verb(rag, "index", cmd_rag_index,
             "Embed every chunk that has no vector yet (resumable; 5-minute budget per run).",
             "memories rag index notes")
    p.add_argument("vault", metavar="VAULT_ID")
    p = verb(rag, "model-install", cmd_rag_model_install,
             "Download and verify the pinned EmbeddingGemma files (~209 MiB; resumes; never replaces a mismatching "
             "file), or install them from a folder of already-downloaded files with --from.",
             "memories rag model-install --from ~/Downloads/embeddinggemma", unlocks=False)
    p.add_argument("--from", dest="source", metavar="DIR",
                   help="install from this folder instead of downloading (each file's size and SHA-256 is checked)")
    p.add_argument("--list", action="store_true",
                   help="print the pinned revision and every file's exact URL, size and SHA-256 (to fetch them "
                        "elsewhere), and do nothing else")
    p = verb(rag, "status", cmd_rag_status, "Show index, embedding and cache status for a vault.",
             "memories rag status notes --json")
    p.add_argument("vault", metavar="VAULT_ID")


def _search_options(p: Any) -> None:
    p.add_argument("--mode", default=DEFAULT_MODE, choices=MODES)
    p.add_argument("--match-mode", default=DEFAULT_MATCH_MODE, choices=MATCH_MODES)
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"results to return (1–{MAX_RESULTS})")

