"""The `memories` command line: parser.py (the parser), run.py (dispatch, error output), context.py
(what a verb handler gets), output.py (printing), and the verbs by area in *_verbs.py. quick.py relays
`memories mcp` to a running daemon before any of that loads, and quick_call.py has the daemon run
a served verb's command line (served_run.py is the daemon's side)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # not typing's: importing typing would be a tenth of a served call's imports
if TYPE_CHECKING:
    from typing import Any

    from .parser import build_parser

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (parser.main)."""
    from .quick import relayed

    words = list(sys.argv[1:] if argv is None else argv)
    if relayed(words):
        return 0
    from .quick_call import served

    status = served(words)
    if status is not None:
        return status
    from .run import main as run

    return run(argv, daemon_methods=_daemon_methods)


def _daemon_methods(service: Any) -> dict[str, Any]:
    """What `memories daemon` serves for quick_call.py: served verbs' command lines."""
    from .served_run import methods

    return methods(service)


def __getattr__(name: str) -> Any:
    if name == "build_parser":
        from .parser import build_parser

        return build_parser
    raise AttributeError(name)
