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

Paths are keys without the leading slash. Every request is recorded (method, path, headers);
the serving machinery is tests/helpers/loopback.py.
"""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler

from .loopback import Canned, LoopbackServer, Seen

CHUNK = 1 << 16


class Mirror(LoopbackServer):
    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        super().__init__()
        self.files: dict[str, bytes] = dict(files or {})
        self.cut_once: set[str] = set()
        self.wrong_bytes: set[str] = set()
        self.ignore_range: set[str] = set()
        self.slow: dict[str, float] = {}

    def respond(self, h: BaseHTTPRequestHandler, seen: Seen, reply: Canned | None) -> None:
        path = seen.path
        with self._lock:
            cut = path in self.cut_once
            self.cut_once.discard(path)
        data = self.files.get(path)
        if reply is not None or path in self.redirects or data is None:
            super().respond(h, seen, reply)
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
                self.send(h, 416, {"Content-Range": f"bytes */{len(data)}"}, b"")
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            payload = data[start:end + 1]
        else:
            payload = data
        self.send_head(h, status, headers, len(payload))
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
