"""Endpoints a sync target can be wrongly set up against, all on 127.0.0.1 and without DNS:
a plain-http server (for an https:// URL), a TLS server with a self-signed certificate (for an
http:// URL, and an untrusted certificate), and a resolver that knows no name but loopback's.

`without_dns` answers every other name with EAI_NONAME at once, in this process: a name under
`.invalid` is not resolved locally by glibc (it asks the configured DNS server, which on a
machine without network can take the resolver's whole timeout and then says EAI_AGAIN)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.helpers.loopback import QuietHTTPServer

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


class _NotFound(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    status = 404

    def _answer(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_PROPFIND = do_MKCOL = do_DELETE = do_HEAD = _answer  # noqa: N815 - http.server's naming

    def log_message(self, *args: object) -> None:
        pass


class _TlsServer(QuietHTTPServer):
    context: ssl.SSLContext

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        # the handshake happens at the handler's first read, in its own thread, not in the accept loop
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a plain-http client's request is not a TLS hello: expected here


def _self_signed(folder: Path) -> Path:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    pem = folder / "self-signed.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return pem


@contextmanager
def _serving(server: QuietHTTPServer) -> Iterator[int]:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def plain_http_server(status: int = 404) -> Iterator[int]:
    """The port of a plain-http server on 127.0.0.1 that answers `status` to everything."""
    handler = type("Answer", (_NotFound,), {"status": status})
    with _serving(QuietHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield port


@contextmanager
def tls_server(folder: Path) -> Iterator[int]:
    """The port of an https server on 127.0.0.1 with a self-signed certificate (for 127.0.0.1)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(_self_signed(folder))
    server = _TlsServer(("127.0.0.1", 0), _NotFound)
    server.context = context
    with _serving(server) as port:
        yield port


def without_dns(monkeypatch: Any) -> list[str]:
    """Every name but loopback's fails to resolve (EAI_NONAME) at once; the names asked are listed."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK_NAMES:
            asked.append(name)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked
