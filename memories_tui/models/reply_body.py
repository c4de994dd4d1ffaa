"""Read a reply body under a byte cap that binds while the bytes arrive.

A reply is never held whole before its size is judged: a declared length over the cap is
refused before a byte of the body is read, the raw (possibly compressed) bytes are counted as
they come off the socket, and a gzip body is inflated by us in bounded steps, so a small gzip
"bomb" is refused as soon as its output passes the cap instead of being expanded first.

Only ``gzip`` is asked for (``Accept-Encoding: gzip``, set by the client factory); a reply in
any other encoding (``br``, ``zstd``, ``deflate``) is refused rather than decoded by a library
whose output we cannot bound.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import httpx

from ..errors import ErrorCode, ModelError
from ..i18n import msg

MAX_REPLY_BYTES = 64 * 1024 * 1024
INFLATE_STEP = 1024 * 1024  # at most this much decompressed output per zlib call
ACCEPT_ENCODING = "gzip"
_GZIP = ("gzip", "x-gzip")


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def too_large(what: str, limit: int, detail: str = "") -> ModelError:
    return ModelError(msg("{what} sent a reply larger than {limit}{detail}; it was refused and not read "
                          "further.", what=what, limit=_mib(limit), detail=detail),
                      code=ErrorCode.MODEL_BAD_RESPONSE)


class _Gunzip:
    """Inflates gzip members as raw bytes arrive, never producing more than `limit` bytes."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit, self.what = limit, what
        self.out = bytearray()
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> None:
        try:
            while data:
                room = self.limit - len(self.out)
                piece = self._z.decompress(data, min(INFLATE_STEP, room + 1))
                if len(piece) > room:
                    raise too_large(self.what, self.limit, " once decompressed (gzip)")
                self.out += piece
                if self._z.eof:  # what follows is a further gzip member (concatenated streams are one body)
                    data = self._z.unused_data
                    if data:
                        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                else:
                    data = self._z.unconsumed_tail
        except zlib.error:
            raise ModelError(msg("{what} sent a damaged gzip body.", what=self.what), code=ErrorCode.MODEL_BAD_RESPONSE) from None

    def finish(self) -> bytes:
        if not self._z.eof:
            raise ModelError(msg("{what} sent a gzip body that ends early.", what=self.what), code=ErrorCode.MODEL_BAD_RESPONSE)
        return bytes(self.out)


def read_capped(response: httpx.Response, *, limit: int, what: str, between: Callable[[], None]) -> bytes:
    """The body of an open streamed `response`, refused past `limit` bytes raw or decoded.

    `between()` runs before each chunk is taken (cancel, lock and deadline checks); whatever
    it raises propagates. The response is closed on every path.
    """
    try:
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity", *_GZIP):
            raise ModelError(msg("{what} sent its reply {encoding}-encoded; only gzip or plain bodies are read.",
                                 what=what, encoding=encoding[:20]),
                             code=ErrorCode.MODEL_BAD_RESPONSE)
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise too_large(what, limit, f" (it announced {int(declared):,} bytes)")
        gunzip = _Gunzip(limit, what) if encoding in _GZIP else None
        body = bytearray()
        raw = 0
        for chunk in response.iter_raw():
            between()
            raw += len(chunk)
            if raw > limit:
                raise too_large(what, limit)
            if gunzip is not None:
                gunzip.feed(chunk)
            else:
                body += chunk
        between()
        if gunzip is not None:
            return gunzip.finish() if raw else b""
        return bytes(body)
    finally:
        response.close()
