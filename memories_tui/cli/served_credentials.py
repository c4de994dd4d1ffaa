"""Telling a user whose sync the resident engine ran that it did not see this shell's credentials.

`memories sync` (and `sync add`, `devices`, `forget`) runs in the daemon, or the TUI, when it
holds the vault: that process reads S3 and WebDAV credentials from the environment it was
started in. A user who exports AWS_* or MEMORIES_WEBDAV_* in this shell was told only that no
credentials were found, which is untrue here and names no way out. Nothing is sent to the
daemon: the sentence names the variables set here (never their values) and the ways to use them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TypeVar

from ..errors import ErrorCode, MemoriesError, SyncError
from ..i18n import msg
from .context import Context

CREDENTIAL_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                        "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "MEMORIES_WEBDAV_USERNAME",
                        "MEMORIES_WEBDAV_PASSWORD", "NETRC")
T = TypeVar("T")


def says_whose_credentials(verb: Callable[[Context], T]) -> Callable[[Context], T]:
    """`verb`, whose credential failure in the resident engine names this shell's variables it did not use."""
    @functools.wraps(verb)
    def run(ctx: Context) -> T:
        try:
            return verb(ctx)
        except MemoriesError as exc:
            from ..engine import Engine

            here = [name for name in CREDENTIAL_VARIABLES if os.environ.get(name)]
            served = ctx.opened is not None and not isinstance(ctx.opened, Engine)
            if exc.code != ErrorCode.SYNC_TARGET_CREDENTIALS or not served or not here:
                raise
            raise SyncError(msg(
                "{problem} This ran in the Memories daemon (or the TUI), which reads credentials from the "
                "environment it was started in, not this shell's: {names} set here are not used. Run `memories "
                "daemon restart` from this shell and unlock again, keep the credentials in ~/.aws/credentials or "
                "~/.netrc, or add --no-daemon.", problem=exc, names=", ".join(here)),
                code=exc.code) from None

    return run
