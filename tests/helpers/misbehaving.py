"""Raw replies for `ModelServer.custom`: bodies too big to hold, gzip bombs, trickles.

Each writer records what it managed to send in a `Sent` the test reads afterwards:
`sent` (body bytes written before the client went away), `finished` (the whole reply went
out) and `ended` (an Event set when the writer returns, however it ended), `started` (set
once the first byte is out, so a test can act while a reply is in progress).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError)
MiB = 1024 * 1024


@dataclass
class Sent:
    sent: int = 0
    finished: bool = False
    started: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)


Writer = Callable[[BaseHTTPRequestHandler], None]


def _run(record: Sent, h: BaseHTTPRequestHandler, head: bytes, pieces: Callable[[], Iterable[bytes]]) -> None:
    try:
        h.wfile.write(head)
        h.wfile.flush()
        record.started.set()
        for piece in pieces():
            h.wfile.write(piece)
            h.wfile.flush()
            record.sent += len(piece)
        record.finished = True
    except GONE:
        pass
    finally:
        record.started.set()
        record.ended.set()


def _head(headers: dict[str, str]) -> bytes:
    lines = ["HTTP/1.1 200 OK", "Content-Type: application/json", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def big_body(total: int, record: Sent, *, declare_length: bool) -> Writer:
    """`total` bytes of JSON-looking text, 1 MiB per write; with or without Content-Length."""
    piece = b"[" + b"1," * (MiB // 2 - 1) + b"1"

    def pieces():  # noqa: ANN202
        left = total
        while left > 0:
            yield piece[:left]
            left -= len(piece)

    headers = {"Content-Length": str(total)} if declare_length else {}
    return lambda h: _run(record, h, _head(headers), pieces)


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
DAMAGED_BLOCK = b"\xff" * 64  # BFINAL=1, BTYPE=11: a deflate block type that does not exist


def gzip_bomb(inflated: int, record: Sent, *, damaged_after: bool = False) -> Writer:
    """A gzip member of `inflated` zero bytes (~1 KB on the wire per MiB).

    Each MiB is compressed after a full flush, so every MiB after the first has the same
    compressed bytes: a 1 GiB bomb costs ~1 MB to build. With `damaged_after`, a damaged
    deflate block follows the zeros: a client that inflates that far fails on it.
    """
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MiB)
    first = z.compress(zeros) + z.flush(zlib.Z_FULL_FLUSH)
    repeat = z.compress(zeros) + z.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(inflated // MiB):
        crc = zlib.crc32(zeros, crc)
    trailer = crc.to_bytes(4, "little") + (inflated % 2**32).to_bytes(4, "little")
    end = DAMAGED_BLOCK if damaged_after else z.flush(zlib.Z_FINISH)[:-8] + trailer

    def pieces():  # noqa: ANN202
        yield first
        for _ in range(inflated // MiB - 1):
            yield repeat
        yield end

    return lambda h: _run(record, h, _head({"Content-Encoding": "gzip"}), pieces)


def gzip_stored(total: int, record: Sent) -> Writer:
    """`total` bytes in stored (uncompressed) deflate blocks: more bytes on the wire than inflated."""
    block = b"\x00" + (65535).to_bytes(2, "little") + (0).to_bytes(2, "little") + b" " * 65535

    def pieces():  # noqa: ANN202
        yield _GZIP_HEADER
        for _ in range(total // 65535):
            yield block

    return lambda h: _run(record, h, _head({"Content-Encoding": "gzip"}), pieces)


def gzip_of(data: bytes, record: Sent) -> Writer:
    """`data` gzip-compressed (level 0 when it is random: the compressed size exceeds it)."""
    body = zlib.compress(data, 0, wbits=16 + zlib.MAX_WBITS)
    return lambda h: _run(record, h, _head({"Content-Encoding": "gzip", "Content-Length": str(len(body))}),
                          lambda: [body[i:i + 64 * 1024] for i in range(0, len(body), 64 * 1024)])


def trickle(record: Sent, stop: threading.Event, *, interval: float, in_headers: bool,
            total: int = 100_000) -> Writer:
    """One byte every `interval` seconds (until `stop` is set or the client leaves): in the
    headers (an endless header block) or in the body (`total` bytes announced)."""

    def pieces():  # noqa: ANN202
        for _ in range(total):
            if stop.wait(interval):
                return
            yield b"a" if in_headers else b" "

    if in_headers:
        head = b"HTTP/1.1 200 OK\r\nX-Slow: "
    else:
        head = _head({"Content-Length": str(total)})
    return lambda h: _run(record, h, head, pieces)
