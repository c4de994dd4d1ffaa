"""`memories` — the command line (SPEC §15).

Every verb takes `--home`, `--config` and `--json` before or after it. With `--json` a call
prints exactly one JSON object on stdout (UTF-8, not ASCII-escaped); a failure prints
`{"error": {"code", "message"}}` and exits non-zero (2 for usage errors). Without it the
output is for people, with progress on stderr. The TUI and MCP server are imported lazily,
inside their commands, so the CLI never loads Textual.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .errors import MemoriesError, UsageError

Payload = dict[str, Any]
Handler = Callable[["Context"], Payload]

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f\x9b]")


def clean(text: object) -> str:
    """Strip terminal escape sequences and control characters from anything we print."""
    return _ESCAPES.sub("", str(text))


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing and exiting, so --json sees it."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}. Try `{self.prog} --help`.")


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json = bool(getattr(args, "json", False))
        self._engine: Any = None
        self.color = sys.stdout.isatty() and not self.json and "NO_COLOR" not in os.environ

    @property
    def engine(self) -> Any:
        if self._engine is None:
            from .engine import Engine

            self._engine = Engine.open(getattr(self.args, "home", None), getattr(self.args, "config", None))
        return self._engine

    def unlock(self, ref: str, *, prompt: str | None = None) -> str:
        """Unlock `ref` with a passphrase from R-VAULT-2's sources; returns the vault id."""
        from .vault.passphrase import get_passphrase

        info = self.engine.resolve_vault(ref)
        passphrase = get_passphrase(file=getattr(self.args, "passphrase_file", None),
                                    prompt=prompt or f"Passphrase for vault {info.name}: ")
        self.engine.unlock(info.vault_id, passphrase)
        return info.vault_id

    def progress(self, text: str) -> None:
        if not self.json:
            print(clean(text), file=sys.stderr, flush=True)

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text

    def dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.color else text


# -- handlers ---------------------------------------------------------------------------

def cmd_init(ctx: Context) -> Payload:
    result = ctx.engine.init_home()
    if not ctx.json:
        state = "created" if result["config_created"] else "kept (already there)"
        print(f"Home:   {clean(result['home'])}\nConfig: {clean(result['config'])} ({state})")
    return result


def cmd_vault_create(ctx: Context) -> Payload:
    from .vault.passphrase import get_passphrase

    passphrase = get_passphrase(file=ctx.args.passphrase_file, confirm=True,
                                prompt=f"New passphrase for vault {ctx.args.name}: ")
    info = ctx.engine.create_vault(ctx.args.name, passphrase, device_only=ctx.args.device_only)
    payload = {"vault_id": info.vault_id, "name": info.name, "device_only": ctx.args.device_only}
    if not ctx.json:
        print(f"Created vault {clean(info.name)}  {ctx.bold(info.vault_id)}"
              + ("  (device-only)" if ctx.args.device_only else ""))
    return payload


def cmd_vault_list(ctx: Context) -> Payload:
    vaults = ctx.engine.list_vaults()
    rows = [{"vault_id": v.vault_id, "name": v.name, "records": v.records, "device_only": None} for v in vaults]
    if not ctx.json:
        if not rows:
            print("No vaults yet. Create one with: memories vault create NAME")
        else:
            _table(ctx, ["VAULT_ID", "NAME", "RECORDS"], [[r["vault_id"], r["name"], r["records"]] for r in rows])
            print(ctx.dim("(device-only flags are encrypted; `vault policy VAULT_ID` shows one after unlock)"))
    return {"vaults": rows}


def cmd_vault_passwd(ctx: Context) -> Payload:
    from .vault.passphrase import get_passphrase, read_passphrase_file

    info = ctx.engine.resolve_vault(ctx.args.vault)
    old = get_passphrase(file=ctx.args.passphrase_file, prompt=f"Current passphrase for vault {info.name}: ")
    if ctx.args.new_passphrase_file:
        new = read_passphrase_file(ctx.args.new_passphrase_file)
        if not new:
            from .errors import InputRefusedError

            raise InputRefusedError("An empty passphrase is not allowed.", code="empty_passphrase")
    else:
        new = get_passphrase(confirm=True, prompt="New passphrase: ", environ={})
    ctx.engine.change_passphrase(info.vault_id, old, new)
    if not ctx.json:
        print(f"Passphrase changed for vault {clean(info.name)} (records were not re-encrypted; the vault key was re-wrapped).")
    return {"vault_id": info.vault_id, "changed": True}


def cmd_vault_policy(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    if ctx.args.device_only is not None:
        ctx.engine.set_device_only(vault_id, ctx.args.device_only == "on")
    on = ctx.engine.device_only(vault_id)
    if not ctx.json:
        print(f"Vault {clean(ctx.engine.vault_name(vault_id))}: device-only is {'on' if on else 'off'}")
    return {"vault_id": vault_id, "device_only": on}


def _read_text_input(ctx: Context, required: bool) -> str | None:
    from .errors import InputRefusedError
    from .ingest import read_source

    args = ctx.args
    if args.text is not None and args.file is not None:
        raise UsageError("Give either --text or --file, not both.")
    if args.text is not None:
        return args.text
    if args.file is not None:
        return read_source(Path(args.file)).body
    if not required:
        return None
    if sys.stdin.isatty():
        raise UsageError("Give the body with --text, --file, or on standard input.")
    raw = sys.stdin.buffer.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputRefusedError("Standard input is not valid UTF-8 text.", code="invalid_utf8") from None


def cmd_memory_add(ctx: Context) -> Payload:
    body = _read_text_input(ctx, required=True)
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.add_record(vault_id, kind=ctx.args.kind, title=ctx.args.title, body=body or "",
                                   tags=ctx.args.tag or ())
    if not ctx.json:
        print(f"Added {record.kind} {ctx.bold(record.id)} (revision {record.revision})")
    return {"id": record.id, "revision": record.revision, "kind": record.kind}


def cmd_memory_read(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.read_record(vault_id, ctx.args.id, ctx.args.revision)
    payload = record.to_json()
    if not ctx.json:
        print(ctx.bold(clean(record.title)))
        print(ctx.dim(f"{record.kind} {record.id} revision {record.revision} · created {record.created} · "
                      f"updated {record.updated}" + (f" · tags {', '.join(record.tags)}" if record.tags else "")))
        print()
        if record.data is not None:
            print(f"[file asset, {len(record.data):,} bytes]")
        else:
            print(clean(record.body).replace("\r", "") if record.body else ctx.dim("(empty)"))
    return payload


def cmd_memory_update(ctx: Context) -> Payload:
    body = _read_text_input(ctx, required=False)
    if body is None and ctx.args.title is None and ctx.args.tag is None:
        raise UsageError("Nothing to update: give --title, --text, --file or --tag.")
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.update_record(vault_id, ctx.args.id, title=ctx.args.title, body=body, tags=ctx.args.tag)
    if not ctx.json:
        print(f"Updated {ctx.bold(record.id)} → revision {record.revision}")
    return {"id": record.id, "revision": record.revision, "kind": record.kind}


def cmd_memory_delete(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    ctx.engine.delete_record(vault_id, ctx.args.id)
    if not ctx.json:
        print(f"Deleted {ctx.args.id} and all its revisions.")
    return {"id": ctx.args.id, "deleted": True}


def cmd_memory_list(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    records = ctx.engine.list_records(vault_id, ctx.args.kind)
    rows = [r.summary() for r in records]
    if not ctx.json:
        if not rows:
            print("No records yet.")
        else:
            _table(ctx, ["ID", "REV", "KIND", "UPDATED", "TITLE"],
                   [[r["id"], r["revision"], r["kind"], r["updated"], r["title"]] for r in rows])
    return {"records": rows}


def cmd_asset_add(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.add_asset(vault_id, Path(ctx.args.file), ctx.args.title)
    if not ctx.json:
        print(f"Stored asset {ctx.bold(record.id)} ({len(record.data or b''):,} bytes, encrypted; never indexed)")
    return {"id": record.id, "revision": record.revision, "kind": record.kind, "bytes": len(record.data or b"")}


def cmd_rag_ingest(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    paths = [Path(p) for p in ctx.args.files]

    def progress(stage: str, done: int, total: int) -> None:
        ctx.progress(f"[{done}/{total}] {'checked' if stage == 'read' else 'written'}")

    results = ctx.engine.ingest(vault_id, paths, title=ctx.args.title, progress=progress)
    if not ctx.json:
        _table(ctx, ["STATUS", "ID", "REV", "CHUNKS", "FILE", "TITLE"],
               [[r.status, r.id or "-", r.revision or "-", r.chunks, r.file, r.title] for r in results])
    return {"results": [r.to_json() for r in results]}


def cmd_tui(ctx: Context) -> Payload:
    from .tui.app import run_app

    run_app(home=getattr(ctx.args, "home", None), config=getattr(ctx.args, "config", None))
    return {}


# -- output helpers ---------------------------------------------------------------------

def _table(ctx: Context, headers: list[str], rows: list[list[Any]]) -> None:
    cells = [[clean(c) for c in row] for row in rows]
    widths = [max([len(h)] + [_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
    print(ctx.bold("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()))
    for row in cells:
        print("  ".join(_pad(c, w) for c, w in zip(row, widths, strict=True)).rstrip())


def _width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


# -- parser -----------------------------------------------------------------------------

def _common(parser: argparse.ArgumentParser, top: bool = False) -> None:
    default = None if top else argparse.SUPPRESS
    parser.add_argument("--home", metavar="DIR", default=default,
                        help="home folder (default: $MEMORIES_HOME, else the platform data dir)")
    parser.add_argument("--config", metavar="FILE", default=default, help="config file (default: HOME/config.toml)")
    parser.add_argument("--json", action="store_true", default=False if top else argparse.SUPPRESS,
                        help="print exactly one JSON object on stdout")


def _passphrase_opt(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--passphrase-file", metavar="FILE",
                        help="read the passphrase from FILE (else $MEMORIES_PASSPHRASE_FILE, "
                             "$MEMORIES_PASSPHRASE_COMMAND, $MEMORIES_PASSPHRASE, or a prompt)")


def _verb(sub: Any, name: str, handler: Handler, help_text: str, example: str,
          unlocks: bool = True) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text,
                            epilog=f"example:\n  {example}\n", formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser)
    if unlocks:
        _passphrase_opt(parser)
    parser.set_defaults(handler=handler)
    return parser


def _group(sub: Any, name: str, help_text: str, examples: str) -> Any:
    parser = sub.add_parser(name, help=help_text, description=help_text, epilog=f"examples:\n{examples}\n",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser)
    parser.set_defaults(handler=None, group_parser=parser)
    return parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memories",
        description="Memories: an encrypted personal memory vault with Chinese/English keyword and "
                    "semantic search. With no command, opens the TUI.",
        epilog="examples:\n"
               "  memories init\n"
               "  memories vault create notes\n"
               "  memories rag ingest notes ~/notes/*.md\n"
               "  memories rag search notes \"keywords\" --mode bm25\n"
               "  memories --json vault list\n\n"
               "Passphrases come from --passphrase-file, $MEMORIES_PASSPHRASE_FILE,\n"
               "$MEMORIES_PASSPHRASE_COMMAND, $MEMORIES_PASSPHRASE, else a prompt.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser, top=True)
    parser.set_defaults(handler=cmd_tui)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)

    _verb(sub, "init", cmd_init, "Create the home folder and a commented config.toml (never overwrites).",
          "memories init --home ~/memories", unlocks=False)
    _verb(sub, "tui", cmd_tui, "Open the terminal UI.", "memories tui --home ~/memories", unlocks=False)

    vault = _group(sub, "vault", "Create, list and manage encrypted vaults.",
                   "  memories vault create notes\n  memories vault list\n  memories vault passwd notes\n"
                   "  memories vault policy notes --device-only on")
    p = _verb(vault, "create", cmd_vault_create, "Create a vault and print its VAULT_ID.",
              "memories vault create notes --device-only")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--device-only", action="store_true",
                   help="never send this vault's data to a non-loopback model endpoint")
    _verb(vault, "list", cmd_vault_list, "List vaults (no passphrase needed).", "memories vault list --json",
          unlocks=False)
    p = _verb(vault, "passwd", cmd_vault_passwd, "Change a vault's passphrase (re-wraps the key; fast).",
              "memories vault passwd notes --new-passphrase-file new.txt")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--new-passphrase-file", metavar="FILE", help="read the new passphrase from FILE (else a prompt)")
    p = _verb(vault, "policy", cmd_vault_policy, "Show or set a vault's device-only policy.",
              "memories vault policy notes --device-only on")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--device-only", choices=("on", "off"), default=None)

    memory = _group(sub, "memory", "Add, read, update, delete, list and search records.",
                    "  memories memory add notes --title \"Idea\" --text \"…\"\n  memories memory list notes\n"
                    "  memories memory read notes ID --revision 1\n  memories memory search notes \"關鍵字\"")
    p = _verb(memory, "add", cmd_memory_add, "Add a record (body from --text, --file or standard input).",
              "echo \"密碼在保險箱\" | memories memory add notes --title \"Safe\" --kind private")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--title", required=True)
    p.add_argument("--kind", default="memory", choices=("memory", "card", "private", "credential"))
    p.add_argument("--text")
    p.add_argument("--file", metavar="FILE")
    p.add_argument("--tag", action="append", help="a tag (repeat for several)")
    p = _verb(memory, "read", cmd_memory_read, "Print a record (latest revision unless --revision).",
              "memories memory read notes 3f2a9c0d1e2b4a5f --revision 1")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p.add_argument("--revision", type=int)
    p = _verb(memory, "update", cmd_memory_update, "Write a new revision of a record.",
              "memories memory update notes 3f2a9c0d1e2b4a5f --file note.md")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p.add_argument("--title")
    p.add_argument("--text")
    p.add_argument("--file", metavar="FILE")
    p.add_argument("--tag", action="append")
    p = _verb(memory, "delete", cmd_memory_delete, "Delete a record and all its revisions.",
              "memories memory delete notes 3f2a9c0d1e2b4a5f")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p = _verb(memory, "list", cmd_memory_list, "List records, newest first.", "memories memory list notes --kind card")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--kind", choices=("memory", "card", "private", "credential", "asset"))

    asset = _group(sub, "asset", "Store binary file assets (encrypted, never indexed).",
                   "  memories asset add notes scan.pdf")
    p = _verb(asset, "add", cmd_asset_add, "Store a file as an encrypted asset.", "memories asset add notes scan.pdf")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--title")

    rag = _group(sub, "rag", "Ingest documents and search them (BM25, vector, hybrid).",
                 "  memories rag ingest notes notes.md --title \"Research notes\"\n"
                 "  memories rag search notes \"keywords\" --mode bm25 --match-mode all")
    p = _verb(rag, "ingest", cmd_rag_ingest,
              "Import UTF-8 text/Markdown files as encrypted knowledge cards (all files or none).",
              "memories rag ingest notes notes.md --title \"Research notes\"")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument("--title", help="card title (default: first Markdown heading, else the file name)")
    _add_search_verbs(rag, memory)
    from .skill import inject

    inject.register(sub, _verb)
    from .mcp import command as mcp_command

    mcp_command.register(sub, _verb)
    return parser


def _add_search_verbs(rag: Any, memory: Any) -> None:
    """Search, index and status verbs live in cli_search.py to keep this module readable."""
    from . import cli_search

    cli_search.register(rag, memory, _verb)


_LITERAL = "\x00"  # cannot occur in a real argv, so it safely marks words that came after `--`


def _parse(argv: list[str]) -> argparse.Namespace:
    """argparse loses `--` inside subcommands; keep words after it positional (`rag search V -- -x`)."""
    if "--" in argv:
        cut = argv.index("--")
        argv = argv[:cut] + [_LITERAL + word for word in argv[cut + 1:]]
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    # argparse cannot fill an optional positional after an option (`rag search V --json Q`);
    # one leftover word is that query.
    if len(extras) == 1 and getattr(args, "query", "") is None and not extras[0].startswith("-"):
        args.query, extras = extras[0], []
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(e.replace(_LITERAL, '') for e in extras)}")
    for key, value in vars(args).items():
        if isinstance(value, str) and value.startswith(_LITERAL):
            setattr(args, key, value[len(_LITERAL):])
        elif isinstance(value, list):
            setattr(args, key, [v[len(_LITERAL):] if isinstance(v, str) and v.startswith(_LITERAL) else v
                                for v in value])
    return args


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv[: argv.index("--") if "--" in argv else len(argv)]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    try:
        args = _parse(argv)
        if args.handler is None:
            args.group_parser.print_help(sys.stderr)
            raise UsageError(f"{args.group_parser.prog}: choose a command.")
        ctx = Context(args)
        try:
            payload = args.handler(ctx)
        finally:
            if ctx._engine is not None:
                ctx._engine.close()
        if as_json:
            print(json.dumps(payload, ensure_ascii=False))
        return 0
    except MemoriesError as exc:
        return _fail(exc, as_json)
    except BrokenPipeError:  # `memories … | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        from .errors import CancelledError

        return _fail(CancelledError("Interrupted."), as_json)


def _fail(exc: MemoriesError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({**exc.to_json(), **getattr(exc, "extra", {})}, ensure_ascii=False))
    else:
        print(f"memories: error: {clean(exc.message)}", file=sys.stderr)
    return exc.exit_code

