"""Running one `memories` command: dispatch to its handler and the error output.

Kept apart from the parser because its job is the process's edges, not the grammar: a closed
or full stdout, a reader that left early (`| head`), `--json` errors as one object, and the
one-line report of an unplanned exception (its type and place, never its text).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..engine import json_of
from ..errors import CancelledError, InternalError, MemoriesError, OutputError, UsageError, describe_error, redact
from ..i18n import Message, _, current_language, msg, set_language
from .context import Context, DaemonMethods
from .language import choose_language
from .output import GuardedStdout, OutputFailed, clean, json_text, say_on_stderr
from .parser import parse_argv


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in _options(argv)


def _options(argv: Sequence[str]) -> Sequence[str]:
    """The words before `--` (after it everything is a positional, e.g. a query)."""
    return argv[: argv.index("--") if "--" in argv else len(argv)]


def main(argv: Sequence[str] | None = None, *, daemon_methods: DaemonMethods | None = None) -> int:
    """Run one command; its exit status. A reader that left early (`memories … | head`,
    `| true`) is not an error of ours: output stops quietly, the status stays the command's.
    `daemon_methods`: what a daemon this command starts serves besides the engine (context.py)."""
    language = current_language()  # a caller in the same process (tests, the TUI) keeps its own
    if sys.stdout is None:  # `memories … >&-`: refuse before doing anything whose report would be lost
        return _output_failed(msg("Standard output is closed, so nothing could be reported; nothing was done. "
                                  "Send the output somewhere, e.g. `>/dev/null`."))
    stdout = sys.stdout
    sys.stdout = GuardedStdout(stdout)
    try:
        status = _run(argv, daemon_methods)
        sys.stdout.flush()  # a pipe buffers: find out here, not at interpreter exit
        return status
    except BrokenPipeError:
        return _reader_left(0)
    except OutputFailed as exc:
        return _output_failed(msg("Could not write to standard output ({reason}); the output is lost. What the "
                                  "command changed, if anything, stays changed.", reason=str(exc)))
    finally:
        sys.stdout = stdout
        set_language(language)


def _output_failed(message: Message) -> int:
    """Standard output is unusable: the sentence goes to stderr (if that works), and no
    buffered output is left to fail again at exit."""
    error = OutputError(message)
    say_on_stderr(_("memories: error: {message}").format(message=clean(describe_error(error))))
    return _reader_left(error.exit_code)


def _run(argv: Sequence[str] | None, daemon_methods: DaemonMethods | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(argv)
    choose_language(argv)
    try:
        args = parse_argv(argv)
        if args.handler is None:
            args.group_parser.print_help(sys.stderr)
            raise UsageError(msg("Choose a command; `{prog} --help` lists them.", prog=args.group_parser.prog))
        ctx = Context(args)
        ctx.daemon_methods = daemon_methods
        handle(ctx, args, as_json)
        return 0
    except MemoriesError as exc:
        return _fail(exc, as_json)
    except (BrokenPipeError, OutputFailed):
        raise
    except KeyboardInterrupt:
        return _fail(CancelledError(msg("Interrupted.")), as_json)
    except Exception as exc:  # last resort: one line (and a code), never a traceback unless --debug
        return _internal_error(exc, as_json, "--debug" in _options(argv))


def _reader_left(status: int) -> int:
    """stdout's reader is gone: point stdout (and stderr, if it went too) at /dev/null so
    nothing buffered raises again at exit, and keep `status`."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (getattr(sys.stdout, "_stream", sys.stdout), sys.stderr):
        if stream is None:  # closed before we started: nothing buffered
            continue
        try:
            stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            try:
                os.dup2(devnull, stream.fileno())
            except (ValueError, OSError):
                pass
    os.close(devnull)
    return status


def _internal_error(exc: Exception, as_json: bool, debug: bool) -> int:
    """An exception nobody planned for: its type and place only (its text may quote vault
    content), the redacted traceback on stderr with --debug."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "memories_tui" in f.filename] or frames
    where = f" in {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    error = InternalError(msg("Unexpected {kind}{where}. This is a bug in Memories; run the command again with "
                              "--debug for the full traceback and report it.", kind=type(exc).__name__, where=where))
    if debug:
        print(redact("".join(traceback.format_exception(exc))), file=sys.stderr)
    return _fail(error, as_json)


def handle(ctx: Context, args: argparse.Namespace, as_json: bool) -> None:
    """The verb's handler, its engine closed whatever happens, its payload printed when --json asks."""
    try:
        payload = args.handler(ctx)
    finally:
        if ctx.opened is not None:
            ctx.opened.close()
    if as_json:
        print(json_text(json.dumps(payload, ensure_ascii=False, default=json_of)))


def _fail(exc: MemoriesError, as_json: bool) -> int:
    human = _("memories: error: {message}").format(message=clean(describe_error(exc)))
    try:
        if as_json:
            print(json_text(json.dumps({**exc.to_json(), **getattr(exc, "extra", {})}, ensure_ascii=False)),
                  flush=True)
        elif sys.stderr is not None:  # print(file=None) would write to stdout
            print(human, file=sys.stderr, flush=True)
    except BrokenPipeError:
        return _reader_left(exc.exit_code)
    except OutputFailed:  # the JSON could not be written: say the error where it can still be read
        say_on_stderr(human)
        raise
    return exc.exit_code

