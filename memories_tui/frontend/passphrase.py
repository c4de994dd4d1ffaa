"""Where a passphrase comes from, in the order the CLI documents.

`--passphrase-file`, `$MEMORIES_PASSPHRASE_FILE`, `$MEMORIES_PASSPHRASE_COMMAND` (stdout of a
command, like restic), `$MEMORIES_PASSPHRASE`, else a no-echo prompt (twice when creating).
A file or command output loses one trailing newline, nothing else.
"""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ..engine import read_limited
from ..errors import ErrorCode, InputRefusedError, UsageError
from ..i18n import N_, _, msg


def _strip_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


MAX_PASSPHRASE_FILE_BYTES = 64 * 1024
MIN_PASSPHRASE_CHARS = 8  # shorter ones need an explicit confirmation (--allow-weak-passphrase)


def read_passphrase_file(path: str | os.PathLike[str]) -> str:
    """A regular file or a pipe (`--passphrase-file <(pass show x)`), at most 64 KiB."""
    try:
        raw = read_limited(Path(path), MAX_PASSPHRASE_FILE_BYTES, what=N_("passphrase file"), allow_pipe=True)
    except InputRefusedError as exc:
        raise InputRefusedError(msg("Cannot use passphrase file: {reason}", reason=exc), code=ErrorCode.PASSPHRASE_SOURCE) from None
    try:
        return _strip_newline(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputRefusedError(msg("Passphrase file {path} is not UTF-8 text.", path=path), code=ErrorCode.PASSPHRASE_SOURCE) from None


def get_passphrase(*, file: str | None = None, confirm: bool = False, prompt: str | None = None,
                   environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    if file:
        return _nonempty(read_passphrase_file(file))
    if env.get("MEMORIES_PASSPHRASE_FILE"):
        return _nonempty(read_passphrase_file(env["MEMORIES_PASSPHRASE_FILE"]))
    if env.get("MEMORIES_PASSPHRASE_COMMAND"):
        command = env["MEMORIES_PASSPHRASE_COMMAND"]
        try:
            done = subprocess.run(shlex.split(command), capture_output=True, timeout=120, check=False)
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            raise InputRefusedError(msg("MEMORIES_PASSPHRASE_COMMAND could not run: {reason}.", reason=exc), code=ErrorCode.PASSPHRASE_SOURCE) from None
        if done.returncode != 0:
            raise InputRefusedError(msg("MEMORIES_PASSPHRASE_COMMAND exited with status {returncode}.",
                                        returncode=done.returncode),
                                    code=ErrorCode.PASSPHRASE_SOURCE)
        try:
            return _nonempty(_strip_newline(done.stdout.decode("utf-8")))
        except UnicodeDecodeError:
            raise InputRefusedError(msg("MEMORIES_PASSPHRASE_COMMAND printed non-UTF-8 output."), code=ErrorCode.PASSPHRASE_SOURCE) from None
    if "MEMORIES_PASSPHRASE" in env:
        return _nonempty(env["MEMORIES_PASSPHRASE"])
    if not sys.stdin.isatty():
        raise UsageError(
            msg("No passphrase given: use --passphrase-file, MEMORIES_PASSPHRASE_FILE, "
                "MEMORIES_PASSPHRASE_COMMAND or MEMORIES_PASSPHRASE, or run in a terminal to be asked.")
        )
    first = _nonempty(getpass.getpass(prompt if prompt is not None else _("Passphrase: ")))
    if confirm and getpass.getpass(_("Repeat passphrase: ")) != first:
        raise InputRefusedError(msg("The two passphrases differ; nothing was changed."), code=ErrorCode.PASSPHRASE_MISMATCH)
    return first


def _nonempty(value: str) -> str:
    if not value:
        raise InputRefusedError(msg("An empty passphrase is not allowed."), code=ErrorCode.EMPTY_PASSPHRASE)
    return value
