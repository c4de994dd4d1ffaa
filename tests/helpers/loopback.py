"""What every loopback test server shares: a threaded HTTP/1.1 server on 127.0.0.1 (port 0),
started and stopped as a context manager, that records each request and misbehaves on cue.

    srv.queue(path, 503, {"Retry-After": "1"}, b"")  # canned replies, first in first out
    srv.hang.add(path)                               # accept, never answer (until the server stops)
    srv.redirects[path] = "http://…"                 # answer 302 to there
    srv.requests_for(path)                           # what was asked, in order

Subclasses answer everything else in `respond` (mirror.py serves files, model_server.py speaks
the model APIs). Paths are keys without the leading slash or query string.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

HANG_SECONDS = 30  # a hung request is released when the server stops; this only guards a leak


class QuietHTTPServer(ThreadingHTTPServer):
    """A threaded server on which a client hanging up between two keep-alive requests (what a
    client that gave up or timed out does) is not an error: socketserver would print its
    traceback outside any test's capture, into the run's log."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def unused_port() -> int:
    """A loopback port nobody listens on right now (bound once by us, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Seen:
    method: str
    path: str  # without the query string (what a server dispatches on)
    headers: dict[str, str]  # lower-case names
    body: bytes = b""
    target: str = ""  # the request line's target exactly as sent, query string and all

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Canned:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class LoopbackServer:
    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.queued: dict[str, deque[Canned]] = {}
        self.hang: set[str] = set()
        self.redirects: dict[str, str] = {}
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._server = QuietHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    # ---- control

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, path: str, status: int, headers: dict[str, str] | None = None, body: bytes | str = b"") -> None:
        data = body.encode() if isinstance(body, str) else body
        with self._lock:
            self.queued.setdefault(path, deque()).append(Canned(status, dict(headers or {}), data))

    def requests_for(self, path: str) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- serving

    def respond(self, h: BaseHTTPRequestHandler, seen: Seen, reply: Canned | None) -> None:
        """Answer one request (`reply` is the next canned reply for its path, if any)."""
        if reply is not None:
            self.send(h, reply.status, reply.headers, reply.body)
        elif seen.path in self.redirects:
            self.send(h, 302, {"Location": self.redirects[seen.path]}, b"")
        else:
            self.send(h, 404, {"Content-Type": "text/plain"}, b"not found")

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path.lstrip("/")
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        seen = Seen(h.command, path, {k.lower(): v for k, v in h.headers.items()}, body, h.path)
        with self._lock:
            self.requests.append(seen)
            canned = self.queued.get(path)
            reply = canned.popleft() if canned else None
        if path in self.hang:
            self.release.wait(HANG_SECONDS)
            h.close_connection = True
            return
        self.respond(h, seen, reply)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def do_POST(self) -> None:  # noqa: N802
                self._serve()

            def _serve(self) -> None:
                try:
                    server._serve(self)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    self.close_connection = True

        return Handler

    @staticmethod
    def send_head(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], length: int) -> None:
        """Status line and headers of a reply whose body (`length` bytes) the caller writes."""
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(length))
        h.end_headers()

    @classmethod
    def send(cls, h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
        cls.send_head(h, status, headers, len(body))
        if body:
            h.wfile.write(body)
