"""Why an S3 endpoint or a WebDAV server could not be reached, in words a person can act on.

A setup mistake (a misspelled host, a wrong port, https:// to a plain-http server or the
reverse, an untrusted certificate) is worded as such, naming the host and port tried, and is
not told to "sync again later": waiting does not fix it. Only what waiting can fix (a timeout, a
server that is down or restarting, a lookup that failed for want of a network, a broken
connection) says so. Standard library only: httpx's and botocore's exceptions are read by
walking their chain of causes, down to the socket or TLS error underneath.
"""

from __future__ import annotations

import errno
import os
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..i18n import Message, msg
from ..loopback import is_loopback_host

PROBE_SECONDS = 3.0  # a TLS handshake with a server on the same port, after a failure only
# what OpenSSL says when the other side answers a TLS hello with something that is not TLS
_NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL"})
_NO_SUCH_NAME = frozenset(getattr(socket, name) for name in ("EAI_NONAME", "EAI_NODATA", "EAI_FAIL")
                          if hasattr(socket, name))
_NO_ROUTE = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN})


@dataclass(frozen=True)
class Endpoint:
    """The scheme, host and port a request went to (never a user, password, path or query)."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        scheme = parts.scheme.lower() or "https"
        try:
            port = parts.port
        except ValueError:
            port = None
        return cls(scheme, parts.hostname or "", port or (80 if scheme == "http" else 443))

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def origin(self) -> str:
        if self.port == {"http": 80, "https": 443}.get(self.scheme):
            return f"{self.scheme}://[{self.host}]" if ":" in self.host else f"{self.scheme}://{self.host}"
        return f"{self.scheme}://{self.address}"

    @property
    def on_this_machine(self) -> bool:
        return is_loopback_host(self.host)


@dataclass(frozen=True)
class Cause:
    text: Message  # a clause that ends with its own full stop (and "sync again later" when waiting can fix it)
    transient: bool  # worth trying again within the same sync


def netrc_path() -> str:
    """The netrc file the WebDAV target reads: $NETRC, else ~/.netrc."""
    return os.environ.get("NETRC") or os.path.expanduser("~/.netrc")


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it wraps: causes, contexts, botocore's `error=` and urllib3's nested args."""
    out: list[BaseException] = []
    todo: list[object] = [exc]
    while todo and len(out) < 24:
        item = todo.pop(0)
        if not isinstance(item, BaseException) or any(item is seen for seen in out):
            continue
        out.append(item)
        kwargs = getattr(item, "kwargs", None)
        todo += [item.__cause__, item.__context__, kwargs.get("error") if isinstance(kwargs, dict) else None,
                 getattr(item, "reason", None), *item.args]
    return out


def _named(chain: list[BaseException], *words: str) -> BaseException | None:
    return next((e for e in chain if any(w in type(e).__name__ for w in words)), None)


def cause_of(exc: BaseException, endpoint: Endpoint, *, s3: bool = False, probe: bool = True) -> Cause | None:
    """What went wrong underneath `exc` (a request to `endpoint` that got no answer), or None
    when it is none of the known causes. `probe` lets a broken plain-http connection be checked
    for a TLS server on that port (one handshake, only after the failure)."""
    chain = _chain(exc)
    where, host = endpoint.address, endpoint.host
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError):
            return Cause(msg("the server at {address} shows a certificate this machine does not trust ({reason}).",
                             address=where, reason=e.verify_message or e.reason or "certificate verify failed"), False)
    for e in chain:
        if isinstance(e, ssl.SSLError) and endpoint.scheme == "https":
            if str(e.reason or "") in _NOT_TLS:
                return Cause(_not_https(endpoint, s3), False)
            return Cause(msg("the TLS handshake with {address} failed ({reason}).", address=where,
                             reason=e.reason or type(e).__name__), False)
    for e in chain:
        if isinstance(e, socket.gaierror):
            if e.errno in _NO_SUCH_NAME:
                if s3:
                    return Cause(msg("the host name {host} does not resolve (check --endpoint-url).", host=host),
                                 False)
                return Cause(msg("the host name {host} does not resolve (check the URL).", host=host), False)
            if e.errno == getattr(socket, "EAI_AGAIN", None):
                return Cause(msg("the host name {host} cannot be looked up now (is this machine online?). Nothing "
                                 "was lost; sync again later.", host=host), True)
    for e in chain:
        if isinstance(e, ConnectionRefusedError) or (isinstance(e, OSError) and e.errno == errno.ECONNREFUSED):
            return Cause(msg("nothing answers at {address} (is the server running? is the port right?). Nothing "
                             "was lost; sync again once it runs.", address=where), True)
    for e in chain:
        if isinstance(e, OSError) and e.errno in _NO_ROUTE:
            return Cause(msg("{address} cannot be reached from this machine ({reason}; is the network up?). Nothing "
                             "was lost; sync again later.", address=where, reason=e.strerror or type(e).__name__),
                         True)
    if _named(chain, "Timeout") is not None or any(isinstance(e, TimeoutError) for e in chain):
        return Cause(msg("{address} did not answer in time. Nothing was lost; sync again later.", address=where), True)
    broken = _named(chain, "ConnectionReset", "RemoteProtocol", "ReadError", "ConnectionClosed", "RemoteDisconnected",
                    "ProtocolError", "BrokenPipe")
    if broken is not None:
        if endpoint.scheme == "http" and probe and speaks_tls(endpoint):
            return speaks_https(endpoint, s3)
        return Cause(msg("the connection to {address} broke ({problem}). Nothing was lost; sync again later.",
                         address=where, problem=type(broken).__name__), True)
    return None


def _not_https(endpoint: Endpoint, s3: bool) -> Message:
    if s3:
        return msg("the server at {address} does not speak https (TLS handshake failed): check the port, or give "
                   "--endpoint-url http://{address} if the store has no TLS.", address=endpoint.address)
    if endpoint.on_this_machine:
        return msg("the server at {address} does not speak https (TLS handshake failed): for a plain-http server on "
                   "this machine use http://{address}/…, or check the port.", address=endpoint.address)
    return msg("the server at {address} does not speak https (TLS handshake failed): check the port (plain http:// "
               "is allowed only on this machine).", address=endpoint.address)


def speaks_https(endpoint: Endpoint, s3: bool) -> Cause:
    """The cause for a plain-http request that a TLS server on that port could not take."""
    if s3:
        return Cause(msg("the server at {address} speaks https, not plain http: give --endpoint-url "
                         "https://{address}.", address=endpoint.address), False)
    return Cause(msg("the server at {address} speaks https, not plain http: use https://{address}/… in the URL.",
                     address=endpoint.address), False)


def speaks_tls(endpoint: Endpoint) -> bool:
    """Whether `endpoint`'s port answers a TLS handshake (not verified: only the protocol is asked)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((endpoint.host, endpoint.port), timeout=PROBE_SECONDS) as raw, \
                context.wrap_socket(raw, server_hostname=endpoint.host or None):
            return True
    except (OSError, ValueError):
        return False
