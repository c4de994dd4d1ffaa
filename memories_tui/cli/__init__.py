"""The `memories` command line: parser.py (the parser), run.py (dispatch, error output), context.py (what a
verb handler gets), output.py (printing), and the verbs by area in *_verbs.py."""

from .parser import build_parser
from .run import main

__all__ = ["build_parser", "main"]
