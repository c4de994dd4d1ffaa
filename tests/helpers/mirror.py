"""A threaded HTTP server on 127.0.0.1 that serves files with Range support and misbehaves on cue.

    with Mirror({"config.json": b"..."}) as m:
        m.cut_once.add("config.json")      # send half the body, then drop the connection (once)
        m.wrong_bytes.add("config.json")   # same length, different bytes
        m.queue("config.json", 503)        # canned responses served before the real one
        m.redirects["config.json"] = "http://example.invalid/x"
        m.hang.add("config.json")          # accept, never answer (until the mirror stops)
        m.slow["config.json"] = 0.01       # sleep this long between 64 KiB chunks
        m.ignore_range.add("config.json")  # answer Range requests with 200 + whole body
        ... m.url ... m.requests_for("config.json")

Paths are keys without the leading slash. Every request is recorded (method, path, headers).
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

CHUNK = 1 << 16


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class Canned:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class Mirror:
    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files: dict[str, bytes] = dict(files or {})
        self.requests: list[Seen] = []
        self.cut_once: set[str] = set()
        self.wrong_bytes: set[str] = set()
        self.ignore_range: set[str] = set()
        self.hang: set[str] = set()
        self.slow: dict[str, float] = {}
        self.redirects: dict[str, str] = {}
        self.queued: dict[str, deque[Canned]] = {}
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ---- control

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, path: str, status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        with self._lock:
            self.queued.setdefault(path, deque()).append(Canned(status, dict(headers or {}), body))

    def requests_for(self, path: str) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def start(self) -> Mirror:
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

    def __enter__(self) -> Mirror:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- serving

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        mirror = self

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
                    mirror._serve(self)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    self.close_connection = True

        return Handler

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path.lstrip("/")
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        with self._lock:
            self.requests.append(Seen(h.command, path, {k.lower(): v for k, v in h.headers.items()}, body))
            canned = self.queued.get(path)
            reply = canned.popleft() if canned else None
            cut = path in self.cut_once
            self.cut_once.discard(path)
        if path in self.hang:
            self.release.wait(30)
            h.close_connection = True
            return
        if reply is not None:
            self._send(h, reply.status, reply.headers, reply.body)
            return
        if path in self.redirects:
            self._send(h, 302, {"Location": self.redirects[path]}, b"")
            return
        data = self.files.get(path)
        if data is None:
            self._send(h, 404, {"Content-Type": "text/plain"}, b"not found")
            return
        if path in self.wrong_bytes:
            data = bytes(b ^ 0x5A for b in data)
        start = 0
        rng = h.headers.get("Range")
        status = 200
        headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
        if rng and path not in self.ignore_range:
            spec = rng.strip().removeprefix("bytes=")
            first, _, last = spec.partition("-")
            start = int(first)
            end = int(last) if last else len(data) - 1
            if start >= len(data):
                self._send(h, 416, {"Content-Range": f"bytes */{len(data)}"}, b"")
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            payload = data[start:end + 1]
        else:
            payload = data
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if cut:
            h.wfile.write(payload[: len(payload) // 2])
            h.wfile.flush()
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        delay = self.slow.get(path)
        for i in range(0, len(payload), CHUNK):
            h.wfile.write(payload[i:i + CHUNK])
            if delay:
                h.wfile.flush()
                if self.release.wait(delay):
                    h.close_connection = True
                    return

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if body:
            h.wfile.write(body)
