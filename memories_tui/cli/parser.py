"""`memories` — the command line's parser (running a command and its error output: run.py).

Every verb takes `--home`, `--config` and `--json` before or after it. With `--json` a call
prints exactly one JSON object on stdout (UTF-8, not ASCII-escaped); a failure prints
`{"error": {"code", "message"}}` and exits non-zero (2 for usage errors). Without it the
output is for people, with progress on stderr. The verbs live in *_verbs.py by area. The TUI
and MCP server are imported lazily, inside their commands, so the CLI never loads Textual.
"""

from __future__ import annotations

import argparse
import difflib
from typing import Any

from .. import __version__
from ..engine import KINDS, TEXT_KINDS
from ..errors import UsageError
from ..i18n import N_, _, msg
from . import ai_verbs, ask_verbs, completion_verbs, daemon_verbs, data_verbs, search_verbs, source_verbs, sync_verbs
from .context import Handler
from .language import LANG_CHOICES, LANG_HELP
from .record_verbs import (
    cmd_asset_add,
    cmd_memory_add,
    cmd_memory_delete,
    cmd_memory_list,
    cmd_memory_read,
    cmd_memory_update,
    cmd_rag_ingest,
)
from .vault_verbs import cmd_init, cmd_tui, cmd_vault_create, cmd_vault_list, cmd_vault_passwd, cmd_vault_policy

EXAMPLES = """
  memories init
  memories vault create notes
  memories rag ingest notes ~/notes/*.md
  memories rag search notes "keywords" --mode bm25
  memories --json vault list

"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing and exiting, so --json sees it."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("memories").strip()  # the error line already starts `memories:`
        if command:
            raise UsageError(msg("{command}: {problem}. Try `{prog} --help`.", command=command, prog=self.prog,
                                 problem=message))
        raise UsageError(msg("{problem}. Try `{prog} --help`.", prog=self.prog, problem=message))


# -- parser -----------------------------------------------------------------------------

def _common(parser: argparse.ArgumentParser, top: bool = False) -> None:
    default = None if top else argparse.SUPPRESS
    parser.add_argument("--home", metavar="DIR", default=default,
                        help=_("home folder (default: $MEMORIES_HOME, else the platform data dir)"))
    parser.add_argument("--config", metavar="FILE", default=default, help=_("config file (default: HOME/config.toml)"))
    parser.add_argument("--json", action="store_true", default=False if top else argparse.SUPPRESS,
                        help=_("print exactly one JSON object on stdout"))
    parser.add_argument("--debug", action="store_true", default=False if top else argparse.SUPPRESS,
                        help=_("on an unexpected error, print the full traceback on stderr"))
    parser.add_argument("--no-daemon", action="store_true", default=False if top else argparse.SUPPRESS,
                        help=_("work in this process even when the daemon holds the vault (also $MEMORIES_NO_DAEMON=1)"))
    parser.add_argument("--lang", choices=LANG_CHOICES, default="auto" if top else argparse.SUPPRESS,
                        help=_(LANG_HELP))


def _passphrase_opt(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """Also on `memories` itself, so `memories --passphrase-file F rag search …` works: a verb's
    own copy must not reset what was given before it (hence SUPPRESS below the top)."""
    parser.add_argument("--passphrase-file", metavar="FILE", default=None if top else argparse.SUPPRESS,
                        help=_("read the passphrase from FILE (else $MEMORIES_PASSPHRASE_FILE, "
                             "$MEMORIES_PASSPHRASE_COMMAND, $MEMORIES_PASSPHRASE, or a prompt)"))
    parser.add_argument("--accept-rollback", action="store_true", default=False if top else argparse.SUPPRESS,
                        help=_("open the vault even if it is older than this home has seen (moves the anchor)"))


def _verb(sub: Any, name: str, handler: Handler, help_text: str, example: str,
          unlocks: bool = True) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text,
                            epilog=_("example:") + f"\n  {example}\n", formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser)
    if unlocks:
        _passphrase_opt(parser)
    parser.set_defaults(handler=handler)
    return parser


def _group(sub: Any, name: str, help_text: str, examples: str) -> Any:
    parser = sub.add_parser(name, help=help_text, description=help_text, epilog=_("examples:") + f"\n{examples}\n",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser)
    parser.set_defaults(handler=None, group_parser=parser)
    return parser.add_subparsers(title=_("commands"), metavar="COMMAND", parser_class=_Parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _top_parser()
    sub = parser.add_subparsers(title=_("commands"), metavar="COMMAND", parser_class=_Parser)
    _verb(sub, "init", cmd_init, _("Create the home folder and a commented config.toml (never overwrites)."),
          "memories init --home ~/memories", unlocks=False)
    _verb(sub, "tui", cmd_tui, _("Open the terminal UI."), "memories tui --home ~/memories", unlocks=False)
    vault = _vault_verbs(sub)
    memory = _record_verbs(sub)
    rag = _rag_verbs(sub)
    search_verbs.register(rag, memory, _verb)
    data_verbs.register(vault, rag, _verb)
    ask_verbs.register(rag, _verb)
    ai_verbs.register(sub, _verb)
    source_verbs.register(sub, _group, _verb)
    completion_verbs.register(sub, _verb)
    daemon_verbs.register(sub, _verb)
    sync_verbs.register(sub, memory, _verb, _group)
    return parser


def _top_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memories",
        description=_("Memories: an encrypted personal memory vault with Chinese/English keyword and "
                      "semantic search. With no command, opens the TUI."),
        epilog=_("examples:") + EXAMPLES + _("Passphrases come from --passphrase-file, $MEMORIES_PASSPHRASE_FILE,\n"
                                             "$MEMORIES_PASSPHRASE_COMMAND, $MEMORIES_PASSPHRASE, else a prompt."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser, top=True)
    _passphrase_opt(parser, top=True)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.set_defaults(handler=cmd_tui)
    return parser


def _vault_verbs(sub: Any) -> Any:
    vault = _group(sub, "vault", _("Create, list and manage encrypted vaults."),
                   "  memories vault create notes\n  memories vault list\n  memories vault passwd notes\n"
                   "  memories vault policy notes --device-only on")
    p = _verb(vault, "create", cmd_vault_create, _("Create a vault and print its VAULT_ID."),
              "memories vault create notes --device-only")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--allow-weak-passphrase", action="store_true",
                   help=_("accept a passphrase shorter than 8 characters"))
    p.add_argument("--device-only", action="store_true",
                   help=_("never send this vault's data to a non-loopback model endpoint"))
    _verb(vault, "list", cmd_vault_list, _("List vaults (no passphrase needed)."), "memories vault list --json",
          unlocks=False)
    p = _verb(vault, "passwd", cmd_vault_passwd, _("Change a vault's passphrase (re-wraps the key; fast)."),
              "memories vault passwd notes --new-passphrase-file new.txt")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--new-passphrase-file", metavar="FILE", help=_("read the new passphrase from FILE (else a prompt)"))
    p.add_argument("--allow-weak-passphrase", action="store_true",
                   help=_("accept a new passphrase shorter than 8 characters"))
    p = _verb(vault, "policy", cmd_vault_policy, _("Show or set a vault's device-only policy."),
              "memories vault policy notes --device-only on")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--device-only", choices=("on", "off"), default=None)
    return vault


def _record_verbs(sub: Any) -> Any:
    """`memory …` and `asset …`; the `memory` group, which search verbs join."""
    memory = _group(sub, "memory", _("Add, read, update, delete, list and search records."),
                    "  memories memory add notes --title \"Idea\" --text \"…\"\n  memories memory list notes\n"
                    "  memories memory read notes ID --revision 1\n  memories memory search notes \"關鍵字\"")
    p = _verb(memory, "add", cmd_memory_add, _("Add a record (body from --text, --file or standard input)."),
              "echo \"密碼在保險箱\" | memories memory add notes --title \"Safe\" --kind private")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--title", required=True)
    p.add_argument("--kind", default="memory", choices=TEXT_KINDS)
    p.add_argument("--text")
    p.add_argument("--file", metavar="FILE")
    p.add_argument("--tag", action="append", help=_("a tag (repeat for several)"))
    p = _verb(memory, "read", cmd_memory_read, _("Print a record (latest revision unless --revision)."),
              "memories memory read notes 3f2a9c0d1e2b4a5f --revision 1")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p.add_argument("--revision", type=int)
    p = _verb(memory, "update", cmd_memory_update, _("Write a new revision of a record."),
              "memories memory update notes 3f2a9c0d1e2b4a5f --file note.md")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p.add_argument("--title")
    p.add_argument("--text")
    p.add_argument("--file", metavar="FILE")
    p.add_argument("--tag", action="append")
    p.add_argument("--expect-revision", type=int, metavar="N",
                   help=_("refuse (record_changed) unless the record is still at revision N: a script that read it "
                          "there does not save over a change made since (another device's, brought by sync)"))
    p = _verb(memory, "delete", cmd_memory_delete, _("Delete a record and all its revisions."),
              "memories memory delete notes 3f2a9c0d1e2b4a5f")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("id", metavar="ID")
    p = _verb(memory, "list", cmd_memory_list, _("List records, newest first."), "memories memory list notes --kind card")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--kind", choices=KINDS)
    asset = _group(sub, "asset", _("Store binary file assets (encrypted, never indexed)."),
                   "  memories asset add notes scan.pdf")
    p = _verb(asset, "add", cmd_asset_add, _("Store a file as an encrypted asset."), "memories asset add notes scan.pdf")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--title")
    return memory


def _rag_verbs(sub: Any) -> Any:
    rag = _group(sub, "rag", _("Ingest documents and search them (BM25, vector, hybrid)."),
                 "  memories rag ingest notes notes.md --title \"Research notes\"\n"
                 "  memories rag search notes \"keywords\" --mode bm25 --match-mode all\n"
                 "  memories rag ask notes \"what did I decide about hybrid search?\"")
    p = _verb(rag, "ingest", cmd_rag_ingest,
              _("Import UTF-8 text/Markdown files as encrypted knowledge cards (all files or none)."),
              "memories rag ingest notes notes.md --title \"Research notes\"")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("files", metavar="FILE", nargs="+")
    p.add_argument("--title", help=_("card title (default: first Markdown heading, else the file name)"))
    p.add_argument("--recursive", "-r", action="store_true",
                   help=_("a FILE that is a folder stands for the text and Markdown files in its tree; other files "
                          "are skipped and listed with the reason, dot-folders left out"))
    return rag


_LITERAL = "\x00"  # cannot occur in a real argv, so it safely marks words that came after `--`


def parse_argv(argv: list[str], parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    """argparse loses `--` inside subcommands; keep words after it positional (`rag search V -- -x`).
    `parser`: one built before, in the language in force (the daemon keeps one per language)."""
    argv = sync_verbs.sync_argv(argv)
    if "--" in argv:
        cut = argv.index("--")
        argv = argv[:cut] + [_LITERAL + word for word in argv[cut + 1:]]
    parser = build_parser() if parser is None else parser
    completion_verbs.answer_if_asked(parser)  # the shell's completion function asking; exits when it is
    try:
        args, extras = parser.parse_known_args(argv)
    except UsageError as exc:  # `memory search V -x`: the query was taken for an option
        if "are required" in exc.message and any(w.startswith("-") and w not in _option_strings(parser)
                                                 for w in argv):
            raise UsageError(exc.message.replace(". Try `", f"{_DASH_HINT}. Try `", 1)) from None
        misplaced = _misplaced_option(parser, argv) if "invalid choice" in exc.message else None
        if misplaced:
            raise UsageError(msg(
                "{option} belongs to a command: write it after the command, e.g. `memories rag search notes "
                "\"words\" --mode bm25`. Before the command go only {options}.", option=misplaced,
                options=", ".join(_top_options(parser)))) from None
        raise
    # argparse cannot fill an optional positional after an option (`rag search V --json Q`,
    # `rag ask V --mode bm25 -- Q`); one leftover word is that query or question.
    for name in ("query", "question"):
        if len(extras) == 1 and getattr(args, name, "") is None and not extras[0].startswith("-"):
            setattr(args, name, extras[0])
            extras = []
    if extras:
        _unknown_option(parser, argv, extras)
        words = [e.replace(_LITERAL, "") for e in extras]
        hint = _DASH_HINT if any(w.startswith("-") for w in words) else ""
        parser.error(_("unrecognized arguments: %s") % " ".join(words) + (_(hint) if hint else ""))
    for key, value in vars(args).items():
        if isinstance(value, str) and value.startswith(_LITERAL):
            setattr(args, key, value[len(_LITERAL):])
        elif isinstance(value, list):
            setattr(args, key, [v[len(_LITERAL):] if isinstance(v, str) and v.startswith(_LITERAL) else v
                                for v in value])
    return args


_DASH_HINT = N_(". A query, question or title that starts with `-` goes after `--`, e.g. "
              "`memories rag search notes -- \"-x\"`")


def _unknown_option(parser: argparse.ArgumentParser, argv: list[str], extras: list[str]) -> None:
    """`memory add V --body …`: say which options the verb has (and the nearest one), rather
    than the hint about queries that start with `-`, which a mistyped option name is not."""
    verb, top = _verb_parser(parser, argv), _own_options(parser)
    names = sorted(o for a in verb._actions for o in a.option_strings if o.startswith("--")
                   and a.help != argparse.SUPPRESS and o not in top)
    unknown = [e.split("=")[0] for e in extras if e.startswith("--") and len(e) > 2]
    if verb is parser or not unknown or not names or unknown[0] in names:
        return
    near = difflib.get_close_matches(unknown[0], names, n=1, cutoff=0.6)
    verb.error(str(msg("no option {option}{near}; its options are {options}", option=unknown[0],
                       near=msg(" (did you mean {option}?)", option=near[0]) if near else "", options=", ".join(names))))


def _verb_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the verb `argv` names (`memories memory add …` → memory add's)."""
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
    return parser


def _top_options(parser: argparse.ArgumentParser) -> list[str]:
    return [a.option_strings[-1] for a in parser._actions
            if a.option_strings and a.option_strings[-1] not in ("--help", "--version")]


def _misplaced_option(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """A verb's option written before the verb (`memories --mode bm25 rag search …`), if any."""
    top = _own_options(parser)
    takes_value = {o for a in parser._actions for o in a.option_strings if a.nargs != 0}
    known = set(_option_strings(parser)) - top
    words = iter(argv)
    for word in words:
        if not word.startswith("-"):
            return None
        if word.split("=")[0] in known:
            return word.split("=")[0]
        if word in takes_value:  # `--home H`: H is its value, not the command
            next(words, None)
    return None


def _own_options(parser: argparse.ArgumentParser) -> set[str]:
    """The options this parser itself takes (the top level's: `--home`, `--json`, …), not its verbs'."""
    return {o for a in parser._actions for o in a.option_strings}


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option any verb knows (`--json`, `--mode`, …), to tell them from a query like `-x`."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _option_strings(sub)
    return out
