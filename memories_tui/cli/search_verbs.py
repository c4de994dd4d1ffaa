"""Search, index, model and status verbs: `rag search/index/model-install/status`, `memory search`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import BM25, DEFAULT_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, MATCH_MODES, MAX_RESULTS, MODES
from ..errors import ErrorCode, InputRefusedError, LimitError, ModelError, NetworkError, UsageError
from ..frontend.words import note_text, score_text, status_name
from ..i18n import N_, _, msg, msg_n
from .context import Context
from .output import Payload, cell_width, clean, cut_cells, pad_cells
from .progress import BYTES, ProgressReport

if TYPE_CHECKING:  # the query parser (segmenter) loads only when this process searches; httpx only for an install
    from ..engine import EmbedProgress, InstallProgress, ModelManifest, Query, SearchHit


def cmd_rag_search(ctx: Context) -> Payload:
    args = ctx.args
    if (args.query is None) == (args.queries is None):
        raise UsageError(msg("Give either a QUERY or --queries FILE.jsonl."))
    vault_id = ctx.held_by_daemon(args.vault)
    query: str | Query = args.query  # the daemon parses and checks a query itself, with the same errors
    if args.queries is not None:
        from ..engine import check_options

        queries = _read_queries(Path(args.queries))
        check_options(args.mode, args.match_mode, args.limit)  # they hold for the whole batch
    elif vault_id is None:  # parsed before the passphrase is asked: a bad query costs no unlock
        from ..engine import parse_query

        query = parse_query(args.query, mode=args.mode, match_mode=args.match_mode, limit=args.limit)
    if vault_id is None:
        vault_id = ctx.unlock(args.vault, local=True)
    engine = ctx.engine

    def progress(p: EmbedProgress) -> None:  # on-demand embedding of chunks that have no vector yet
        ctx.progress(_("embedding missing chunks: {progress}").format(progress=_embed_line(p)))

    if args.queries is None:
        response = engine.search(vault_id, query, mode=args.mode, match_mode=args.match_mode, limit=args.limit,
                                 cards_only=args.cards_only, rerank=not args.no_rerank, progress=progress)
        if not ctx.json:
            for note in response.notes:
                ctx.progress(_("note: {note}").format(note=note_text(note)))
            _print_hits(ctx, response.results)
        return response.to_json()
    out: list[dict[str, object]] = []
    batch = ProgressReport(_("Searching"), unit=_("queries"), enabled=not ctx.json)
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
            print("    " + _("error: {message}").format(message=clean(exc.localized())))
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
    line = _("embedded {done:,}/{total:,} chunks, {rate:,.0f} tokens/s").format(
        done=p.done, total=p.total, rate=p.tokens_per_second)
    return line + (_(", ETA {seconds:.0f} s").format(seconds=p.eta_seconds) if p.eta_seconds is not None else "")


def _read_queries(path: Path) -> list[tuple[str, str]]:
    from ..engine import MAX_FILE_BYTES, read_limited

    raw = read_limited(path, MAX_FILE_BYTES, what=N_("queries file"))
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputRefusedError(msg("Cannot read {path} as UTF-8 text: {reason}.", path=path, reason=exc), code=ErrorCode.INVALID_UTF8) from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            raise InputRefusedError(msg("{path} line {n} is not JSON; each line must be {{\"id\", \"text\"}}.",
                                        path=path, n=n),
                                    code=ErrorCode.BAD_QUERIES_FILE) from None
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or "id" not in item:
            raise InputRefusedError(msg("{path} line {n} must be an object with \"id\" and string \"text\".",
                                        path=path, n=n),
                                    code=ErrorCode.BAD_QUERIES_FILE)
        out.append((str(item["id"]), item["text"]))
    return out


def _print_hits(ctx: Context, hits: list[SearchHit]) -> None:
    if not hits:
        print(_("No results."))
        return
    for hit in hits:
        print(f"{ctx.bold('[' + hit.citation + ']')} {score_text(hit.score)}  {clean(hit.title)}  "
              + ctx.dim(_("{id} r{revision} bytes {start}-{end}").format(
                  id=hit.record_id, revision=hit.revision, start=hit.byte_start, end=hit.byte_end)))
        print("    " + clean(hit.snippet))


def cmd_memory_search(ctx: Context) -> Payload:
    args = ctx.args
    vault_id = ctx.held_by_daemon(args.vault)
    query: str | Query = args.query  # the daemon parses and checks it itself, with the same errors
    if vault_id is None:
        from ..engine import parse_query

        query = parse_query(args.query, mode=BM25, match_mode=args.match_mode, limit=args.limit)
        vault_id = ctx.unlock(args.vault, local=True)
    rows = ctx.engine.memory_search(vault_id, query, limit=args.limit, match_mode=args.match_mode)
    if not ctx.json:
        if not rows:
            print(_("No results."))
        else:
            ctx.table([_("RELEVANCE"), _("ID"), _("REV"), _("TITLE"), _("SNIPPET")],
                      [[f"{r.relevance:.2f}", r.id, r.revision, r.title, cut_cells(r.snippet, 80)] for r in rows])
    return {"vault_id": vault_id, "query": args.query, "results": [r.to_json() for r in rows]}


def cmd_rag_status(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    status = ctx.engine.status(vault_id)
    if not ctx.json:
        limits, usage = status.limits, status.usage
        lines = [
            (_("backend"), f"{status.backend} ({status.profile})"),
            (_("model"), _(status.model) + ("" if status.installed else f" — {status.problem_localized() or ''}")),
            (_("vector space"), status.vector_space or "-"),
            (_("dimensions"), status.dimensions or "-"),
            (_("chunks"), _("{chunks:,} lexical · {embedded:,} embedded · {missing:,} missing · {truncated:,} truncated "
                            "(> {max_tokens} tokens)").format(
                chunks=status.chunks, embedded=status.embedded, missing=status.missing, truncated=status.truncated,
                max_tokens=status.max_tokens)),
            (_("cache"), _("{chunks:,}/{chunk_limit:,} chunks · {text:.2f}/{text_limit:g} MiB text · "
                           "{vectors:.2f}/{vector_limit:g} MiB vectors · {vaults}/{vault_limit} vaults").format(
                chunks=usage.chunks, chunk_limit=limits.chunks, text=usage.source_mib, text_limit=limits.source_mib,
                vectors=usage.vector_mib, vector_limit=limits.vector_mib, vaults=usage.cached_vaults,
                vault_limit=limits.cached_vaults)),
            (_("last build"), _("{seconds} s").format(seconds=status.last_build_seconds)),
        ]
        width = max(12, *(cell_width(key) for key, _value in lines))
        for key, value in lines:
            print(f"{ctx.bold(pad_cells(key, width, right=True))}  {value}")
    return status.to_json()


def cmd_rag_index(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    with ProgressReport(_("Embedding"), unit=_("chunks"), enabled=not ctx.json) as bar:
        report = ctx.engine.build_vector_index(
            vault_id, progress=lambda p: bar.update(p.done, p.total, _("{rate:,.0f} tokens/s").format(
                rate=p.tokens_per_second)))
    if not ctx.json:
        print(_("Embedded {embedded:,}, reused {reused:,} from the encrypted cache, {missing:,} missing, "
                "{truncated:,} truncated, in {seconds:.1f} s").format(
            embedded=report.embedded, reused=report.reused, missing=report.missing, truncated=report.truncated,
            seconds=report.seconds))
    return dict(report.to_json())


def cmd_rag_model_install(ctx: Context) -> Payload:
    if ctx.args.list:
        return _list_model_files(ctx)
    cancel = threading.Event()
    source = Path(ctx.args.source).expanduser() if ctx.args.source else None
    with ProgressReport(_("Copying") if source else _("Downloading"), unit=BYTES, enabled=not ctx.json) as bar:
        def progress(p: InstallProgress) -> None:
            bar.update(p.bytes_done, p.bytes_total, p.current or "")

        try:
            report = ctx.engine.install_model(progress=progress, cancel=cancel, source=source)
        except KeyboardInterrupt:
            cancel.set()
            raise
        except NetworkError as exc:
            if exc.code != ErrorCode.NETWORK_UNREACHABLE:
                raise
            raise _with_file_urls(exc) from None
    files = [f.to_json() for f in report.files]
    if not ctx.json:
        ctx.table([_("STATUS"), _("BYTES"), _("FILE"), _("PROBLEM")],
                  [[status_name(f.status), f"{f.bytes:,}", f.path, f.error or ""] for f in report.files])
        print(_("Model folder: {folder}").format(folder=report.directory))
    if not report.ok:
        failed = [f for f in report.files if f.status == "failed"]
        detail = "; ".join(f"{f.path}: {(f.error or 'failed').rstrip('.')}" for f in failed)
        error = ModelError(msg_n("Model install failed for {count} file: {detail}.",
                                 "Model install failed for {count} files: {detail}.", len(failed),
                                 count=len(failed), detail=detail), code=ErrorCode.MODEL_INSTALL_FAILED)
        error.extra = {"files": files, "directory": str(report.directory)}  # type: ignore[attr-defined]
        raise error
    return {"files": files, "directory": str(report.directory)}


def _pinned() -> ModelManifest:
    from ..engine import PINNED_MODEL

    return PINNED_MODEL


def _pinned_files() -> list[dict[str, object]]:
    model = _pinned()
    return [{"path": f.path, "bytes": f.bytes, "sha256": f.sha256, "url": url}
            for f, url in zip(model.files, model.file_urls(), strict=True)]


def _with_file_urls(exc: NetworkError) -> NetworkError:
    """The download host is unreachable: the same error with the exact URL of every pinned
    file, to fetch them on another machine (`--json`: also as `files`)."""
    urls = " ".join(_pinned().file_urls())
    error = NetworkError(msg("{problem} The files: {urls}", problem=exc, urls=urls), code=exc.code)
    error.extra = {"files": _pinned_files()}  # type: ignore[attr-defined]
    return error


def _list_model_files(ctx: Context) -> Payload:
    """`model-install --list`: what to fetch on another machine (no network)."""
    model = _pinned()
    files = _pinned_files()
    if not ctx.json:
        print(_("{repo} at revision {revision} ({count} files, {size:,} bytes).").format(
            repo=model.repo, revision=model.revision, count=len(files), size=model.total_bytes))
        print(_("Download each URL into one folder, then run `memories rag model-install --from DIR`."))
        for f in files:
            print(f"{f['url']}\n    " + _("{size:,} bytes  sha256 {sha256}").format(size=f["bytes"], sha256=f["sha256"]))
    return {"repo": model.repo, "revision": model.revision, "files": files}


VerbFn = Callable[..., Any]  # parser._verb: argparse's sub-parser objects are untyped


def register(rag: Any, memory: Any, verb: VerbFn) -> None:
    p = verb(rag, "search", cmd_rag_search, _("Search chunks (BM25, vector or hybrid) with citation labels."),
             "memories rag search notes \"keywords\" --mode bm25 --match-mode all --limit 8")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("query", metavar="QUERY", nargs="?")
    p.add_argument("--queries", metavar="FILE.jsonl", help=_("run every {\"id\",\"text\"} line with one unlock"))
    _search_options(p)
    p.add_argument("--cards-only", action="store_true", help=_("only knowledge cards"))
    p.add_argument("--no-rerank", action="store_true", help=_("skip the rerank stages"))
    p = verb(memory, "search", cmd_memory_search, _("Lexical search grouped by record (best chunk as snippet)."),
             "memories memory search notes \"中文 English\" --match-mode all")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    p.add_argument("--match-mode", default=DEFAULT_MATCH_MODE, choices=MATCH_MODES)
    p = verb(rag, "index", cmd_rag_index,
             _("Embed every chunk that has no vector yet (resumable; 5-minute budget per run)."),
             "memories rag index notes")
    p.add_argument("vault", metavar="VAULT_ID")
    p = verb(rag, "model-install", cmd_rag_model_install,
             _("Download and verify the pinned EmbeddingGemma files (~209 MiB; resumes; never replaces a mismatching "
             "file), or install them from a folder of already-downloaded files with --from."),
             "memories rag model-install --from ~/Downloads/embeddinggemma", unlocks=False)
    p.add_argument("--from", dest="source", metavar="DIR",
                   help=_("install from this folder instead of downloading (each file's size and SHA-256 is checked)"))
    p.add_argument("--list", action="store_true",
                   help=_("print the pinned revision and every file's exact URL, size and SHA-256 (to fetch them "
                          "elsewhere), and do nothing else"))
    p = verb(rag, "status", cmd_rag_status, _("Show index, embedding and cache status for a vault."),
             "memories rag status notes --json")
    p.add_argument("vault", metavar="VAULT_ID")


def _search_options(p: Any) -> None:
    p.add_argument("--mode", default=DEFAULT_MODE, choices=MODES)
    p.add_argument("--match-mode", default=DEFAULT_MATCH_MODE, choices=MATCH_MODES)
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                   help=_("results to return (1–{max})").format(max=MAX_RESULTS))

