"""The loopback test servers stay quiet when a client hangs up: socketserver printed a
traceback for it outside any test's capture, into CI's log."""

from __future__ import annotations

import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler

from tests.helpers.loopback import QuietHTTPServer


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


def test_a_client_resetting_a_kept_alive_connection_prints_nothing(capfd):
    server = QuietHTTPServer(("127.0.0.1", 0), _KeepAlive)
    server.daemon_threads = False  # so that server_close waits for the handler to end
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    try:
        client = socket.create_connection(("127.0.0.1", server.server_address[1]))
        client.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        assert client.recv(4) == b"HTTP"  # answered; the rest stays unread
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
        client.close()
    finally:
        server.shutdown()
        server.server_close()  # joins the handler, which has met the reset
        serving.join()
    assert "Exception occurred" not in capfd.readouterr().err
