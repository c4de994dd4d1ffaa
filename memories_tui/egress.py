"""What leaves the process: the values the HTTP layer and the vault's egress log share.

Every request that carries vault content to a model service (embedding, generation, rerank)
is described by an `Outbound` before its first attempt goes out; the hook the engine binds to
a vault (`EgressHook`) writes it into that vault's encrypted egress log, and the `Finish`
callable it returns records the outcome. A hook that cannot record stops the request: nothing
is sent unlogged. The MCP server names its client with `on_behalf_of`, so entries it caused
carry the client's name.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from .serial import Jsonable, json_meta

_ORIGIN: contextvars.ContextVar[str | None] = contextvars.ContextVar("memories_egress_origin", default=None)


@dataclass(frozen=True)
class SentChunk(Jsonable):
    """One chunk of a record in a request: which record and revision, and the chunk's hash
    (SHA-256 of its text). `record_id` is None until the engine looks the hash up."""

    record_id: str | None = field(metadata=json_meta(name="id"))
    revision: int | None
    chunk_hash: str


@dataclass(frozen=True)
class Outbound:
    """A request about to be sent (never its content)."""

    purpose: str  # embedding, query-embedding, generation, rerank
    host: str  # host[:port] of the endpoint
    loopback: bool
    chunks: tuple[SentChunk, ...]
    bytes_sent: int  # request body bytes, per attempt


# (outcome: "ok" or an error code, response bytes, attempts made)
Finish = Callable[[str, int, int], None]


class EgressHook(Protocol):
    def opened(self, request: Outbound) -> Finish:
        """Record `request` before it is sent (raise to stop it); return how to record its end."""


def current_origin() -> str | None:
    """Who asked, when not the user at this process's own prompt (e.g. "mcp:claude-code")."""
    return _ORIGIN.get()


@contextlib.contextmanager
def on_behalf_of(origin: str | None) -> Iterator[None]:
    """Mark requests made inside this block (and threads started with its context) as caused
    by `origin`, e.g. the name an MCP client gave when it connected."""
    token = _ORIGIN.set(origin[:80] if origin else None)
    try:
        yield
    finally:
        _ORIGIN.reset(token)
