"""`memories completion bash|zsh|fish`: a shell completion script, and the answers it asks for.

The script comes from argcomplete, which completes from the live argparse parser: the shell calls
`memories` again with the command line in its environment, and we answer from the same parser
that runs the command. So every verb and option, including ones added later, completes without
a list to keep in step, and vault names come from the home's vault files (read-only, no
passphrase). argcomplete is imported only when a script is printed or a completion is asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from ..i18n import _
from .context import Context
from .output import Payload

SHELLS = ("bash", "zsh", "fish")
INSTALL_LINES = """
  bash  memories completion bash > ~/.local/share/bash-completion/completions/memories
  zsh   memories completion zsh > ~/.zfunc/_memories   (with fpath+=~/.zfunc; compinit in ~/.zshrc)
  fish  memories completion fish > ~/.config/fish/completions/memories.fish
"""
PROG = "memories"


def register(sub: Any, verb: Callable[..., argparse.ArgumentParser]) -> None:
    p = verb(sub, "completion", cmd_completion,
             _("Print a shell completion script for bash, zsh or fish (verbs, options, vault names)."),
             'eval "$(memories completion bash)"    # or add it to ~/.bashrc', unlocks=False)
    p.epilog = (p.epilog or "") + "\n" + _("install:") + INSTALL_LINES

    p.add_argument("shell", choices=SHELLS, help=_("the shell to print the script for"))


def cmd_completion(ctx: Context) -> Payload:
    import argcomplete

    script = argcomplete.shellcode([PROG], shell=ctx.args.shell)
    if not ctx.json:
        sys.stdout.write(script)
    return {"shell": ctx.args.shell, "script": script}


def answer_if_asked(parser: argparse.ArgumentParser) -> None:
    """When the shell's completion function runs us (argcomplete sets `_ARGCOMPLETE`), print the
    completions of the command line in the environment and exit; otherwise return at once."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    for action in _arguments(parser):
        if action.dest == "vault" or action.metavar == "VAULT_ID":
            action.completer = vault_names  # type: ignore[attr-defined]
    # options are offered once a `-` is typed: a bare TAB lists verbs, choices and vault names
    argcomplete.autocomplete(parser, always_complete_options=False)


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every argument and option of `parser` and of all its subcommands, however deep."""
    found: list[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                found += _arguments(sub)
        else:
            found.append(action)
    return found


def vault_names(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """Names of the vaults in the home the command line names (else the default home). A name
    that several vault files share (one copied in from another home) is offered as their
    VAULT_IDs instead. Never fails: a completion that cannot read the home offers nothing."""
    from ..engine import Engine

    try:
        engine = Engine.open(getattr(parsed_args, "home", None), getattr(parsed_args, "config", None))
        vaults = engine.list_vaults()
    except Exception:
        return []
    names = [v.name for v in vaults]
    offered = [v.name if names.count(v.name) == 1 else v.vault_id for v in vaults]
    return sorted(word for word in set(offered) if word.startswith(prefix))
