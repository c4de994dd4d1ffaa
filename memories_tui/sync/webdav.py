"""A WebDAV target (Nextcloud, ownCloud, Apache mod_dav, nginx-dav, a NAS's WebDAV share) on httpx,
which Memories already depends on: WebDAV is plain HTTP verbs (PUT, GET, DELETE, MKCOL, MOVE,
PROPFIND), so no second HTTP stack is needed (webdav4 would bring fsspec-style layers we do not use).

Each object is PUT under a temporary name beside its final one and then MOVEd into place, so a
reader never takes half an upload for an object. Credentials come from the environment
(MEMORIES_WEBDAV_USERNAME / MEMORIES_WEBDAV_PASSWORD) or from ~/.netrc (or the file $NETRC names);
Memories never stores, prints or logs them, and a URL with a user or password in it is refused.
"""

from __future__ import annotations

import io
import os
import secrets
import time
import zlib
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit
from xml.etree import ElementTree

import httpx

from ..errors import ErrorCode, SyncError, SyncTamperedError, quotable
from ..i18n import msg
from . import bounds, reach

if TYPE_CHECKING:
    from .targets import TargetSpec

USER_VAR = "MEMORIES_WEBDAV_USERNAME"
PASSWORD_VAR = "MEMORIES_WEBDAV_PASSWORD"
_DAV = "{DAV:}"
_BUSY = (502, 503, 504)  # what a proxy answers for a server that is busy or restarting: tried again
_ATTEMPTS = 3
_WAIT_SECONDS = 0.5  # before the second try; twice that before the third
_ERROR_PAGE_BYTES = 64 << 10  # of an answer that is not the object: its status is what counts
_PROPFIND = (b'<?xml version="1.0" encoding="utf-8"?>'
             b'<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>')


def _is_temporary(name: str) -> bool:
    return name.startswith(".") or name.startswith("~") or name.endswith((".tmp", ".partial", ".part"))


def _auth(url: str) -> httpx.Auth | None:
    """Basic auth from the two environment variables, else the netrc entry for the host, else none
    (a public share; the server's 401 then says what is missing)."""
    user, password = os.environ.get(USER_VAR), os.environ.get(PASSWORD_VAR)
    if user and password is not None:
        return httpx.BasicAuth(user, password)
    if user or password:
        raise SyncError(msg("Set both {user_var} and {password_var} for the WebDAV target, or neither (to use "
                            "{netrc}).", user_var=USER_VAR, password_var=PASSWORD_VAR, netrc=reach.netrc_path()),
                        code=ErrorCode.SYNC_TARGET_CREDENTIALS)
    netrc_file = reach.netrc_path()
    if os.path.isfile(netrc_file):
        import netrc

        try:
            entry = netrc.netrc(netrc_file).authenticators(urlsplit(url).hostname or "")
        except (netrc.NetrcParseError, OSError):
            raise SyncError(msg("{path} cannot be read as a netrc file.", path=netrc_file),
                            code=ErrorCode.SYNC_TARGET_CREDENTIALS) from None
        if entry is not None:
            return httpx.BasicAuth(entry[0], entry[2] or "")
    return None


def webdav_url(url: str) -> str:
    """The URL a WebDAV target is kept under: `webdavs://` (and `webdav://`, as some file managers
    write it) become https:// (http://); a user or password in the URL is refused, never stored."""
    for alias, scheme in (("webdavs://", "https://"), ("webdav://", "http://")):
        if url.startswith(alias):
            url = scheme + url[len(alias):]
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise SyncError(msg("Put no user or password in the WebDAV URL (it would be stored in sync.json); set {user_var} "
                            "and {password_var}, or an entry for the host in {netrc}.", user_var=USER_VAR,
                            password_var=PASSWORD_VAR, netrc=reach.netrc_path()), code=ErrorCode.SYNC_BAD_TARGET)
    if not parts.hostname or parts.query or parts.fragment:
        raise SyncError(msg("{url} is not a WebDAV collection URL (https://HOST/PATH).", url=url),
                        code=ErrorCode.SYNC_BAD_TARGET)
    from ..models.http import check_endpoint_url

    check_endpoint_url(url, what="WebDAV URL")  # plain http:// would send the password in clear: loopback only
    return url.rstrip("/")


class WebDavTarget:
    def __init__(self, spec: TargetSpec) -> None:
        self.base = spec.url.rstrip("/") + "/"
        self.description = spec.url
        self.on_this_machine = spec.on_this_machine
        self._base_path = unquote(urlsplit(self.base).path)
        self._made: set[str] = set()  # collections known to exist, so a push makes each once
        from ..config import HttpSettings
        from ..models.http import make_client

        # the app's one client factory: TLS verified, the proxy rules, no redirects followed
        self._client = make_client(HttpSettings(), spec.url)
        auth = _auth(spec.url)
        if auth is not None:
            self._client.auth = auth

    def _url(self, name: str) -> str:
        """The URL of an object or folder name ('/'-separated, opaque); odd names are refused."""
        parts = name.rstrip("/").split("/")
        if any(p in ("", ".", "..") or _is_temporary(p) for p in parts):
            raise SyncError(msg("Refusing the object name {name!r}.", name=name), code=ErrorCode.SYNC_BAD_TARGET)
        return self.base + quote(name)

    def _request(self, method: str, url: str, limit: int | None = None, **kwargs: object) -> httpx.Response:
        return self._send(method, url, limit, **kwargs)[0]

    def _send(self, method: str, url: str, limit: int | None = None,
              **kwargs: object) -> tuple[httpx.Response, bool]:
        """One request, and whether it was sent more than once: a dropped connection or a
        502/503/504 (a proxy in front of a busy server) is tried again, twice at most, after a
        short wait. Every request here may be sent twice: PUT writes a temporary name, MKCOL and
        DELETE accept "there already" and "gone", and `put` takes a MOVE the first try made."""
        failure: Exception | None = None
        for attempt in range(_ATTEMPTS):
            if attempt:
                time.sleep(_WAIT_SECONDS * attempt)
            try:
                response = self._bounded(method, url, bounds.MAX_OBJECT_BYTES if limit is None else limit, **kwargs)
            except httpx.TransportError as exc:
                failure = exc
                cause = reach.cause_of(exc, reach.Endpoint.of(self.base), probe=False)
                if cause is not None and not cause.transient:
                    break  # a wrong host, port or scheme: trying again changes nothing
                continue
            except httpx.HTTPError as exc:
                failure = exc
                break
            if response.status_code not in _BUSY or attempt == _ATTEMPTS - 1:
                return response, attempt > 0
        raise self._unreachable(failure) from None

    def _unreachable(self, exc: Exception | None) -> SyncError:
        """No answer: why, in words that say what to check (the host and port tried, never a credential)."""
        cause = reach.cause_of(exc, reach.Endpoint.of(self.base)) if exc is not None else None
        if cause is None:
            return SyncError(msg("Cannot reach the WebDAV server for {url} ({problem}). Nothing was lost; sync "
                                 "again later.", url=self.description, problem=type(exc).__name__ if exc else "?"),
                             code=ErrorCode.SYNC_TARGET_UNREACHABLE)
        return SyncError(msg("Cannot reach the WebDAV server for {url}: {cause}", url=self.description,
                             cause=cause.text), code=ErrorCode.SYNC_TARGET_UNREACHABLE)

    def _bounded(self, method: str, url: str, limit: int, **kwargs: object) -> httpx.Response:
        """An object or a listing, read as it arrives and refused past `limit` bytes, raw or
        inflated: a server cannot make a sync hold more than the largest object Memories writes,
        read without end, or inflate a few kilobytes of gzip into gigabytes."""
        name = url[len(self.base):] or "/"
        with self._client.stream(method, url, **kwargs) as response:  # type: ignore[arg-type]
            wanted = method in ("GET", "PROPFIND") and response.status_code in (200, 207)
            if not wanted:
                limit = _ERROR_PAGE_BYTES  # only its status is used: what is past this is not read
            elif int(response.headers.get("Content-Length") or 0) > limit:
                raise bounds.too_large(name, self.description, limit)
            encoding = response.headers.get("Content-Encoding", "").strip().lower()
            if encoding not in ("", "identity", "gzip", "x-gzip"):  # "gzip, gzip" too: a bomb in layers
                raise SyncTamperedError(msg("The WebDAV server sent {name} {encoding}-encoded, though Memories "
                                            "asks for plain or gzip; refusing it. Nothing was changed here.",
                                            name=name, encoding=quotable(encoding, 200)))
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding in ("gzip", "x-gzip") else None
            body = bytearray()
            try:
                for chunk in response.iter_raw():
                    data = chunk
                    while data:  # inflated a step at a time: never more than `limit` + 1 bytes
                        piece = inflate.decompress(data, limit + 1 - len(body)) if inflate is not None else data
                        data = inflate.unconsumed_tail if inflate is not None and not inflate.eof else b""
                        body += piece
                        if len(body) > limit:
                            if not wanted:
                                return _decoded(response, b"")
                            raise bounds.too_large(name, self.description, limit)
            except zlib.error:
                raise SyncTamperedError(msg("The WebDAV server sent {name} as damaged gzip; refusing it. Nothing was "
                                            "changed here.", name=name)) from None
        return _decoded(response, bytes(body))

    def _failed(self, response: httpx.Response) -> SyncError:
        status = response.status_code
        if status == 401:
            host, netrc_file = urlsplit(self.base).hostname or "", reach.netrc_path()
            refused = msg("The WebDAV server refused the credentials for {url} (401). Set {user_var} and "
                          "{password_var} (a Nextcloud app password), or an entry for {host} in {netrc}.",
                          url=self.description, user_var=USER_VAR, password_var=PASSWORD_VAR, host=host,
                          netrc=netrc_file)
            if self._client.auth is None:
                sent = (msg("No credentials were sent: {user_var} and {password_var} are not set, and {netrc} has no "
                            "entry for {host}.", user_var=USER_VAR, password_var=PASSWORD_VAR, netrc=netrc_file,
                            host=host) if os.path.isfile(netrc_file) else
                        msg("No credentials were sent: {user_var} and {password_var} are not set, and there is no "
                            "{netrc}.", user_var=USER_VAR, password_var=PASSWORD_VAR, netrc=netrc_file))
            elif os.environ.get(USER_VAR):
                sent = msg("The credentials sent came from {user_var} and {password_var}.", user_var=USER_VAR,
                           password_var=PASSWORD_VAR)
            else:
                sent = msg("The credentials sent came from the entry for {host} in {netrc}.", host=host,
                           netrc=netrc_file)
            return SyncError(msg("{problem} {advice}", problem=refused, advice=sent),
                             code=ErrorCode.SYNC_TARGET_CREDENTIALS)
        if status == 403:
            return SyncError(msg("The WebDAV server does not let these credentials write to {url} (403).",
                                 url=self.description), code=ErrorCode.SYNC_TARGET_READONLY)
        if status in (404, 409):
            return SyncError(msg("The WebDAV collection {url} does not exist ({status}). Create the folder first "
                                 "(in Nextcloud: Files, New folder).", url=self.description, status=status),
                             code=ErrorCode.SYNC_TARGET_MISSING)
        if 300 <= status < 400:
            location = response.headers.get("Location", "")
            return SyncError(msg("The WebDAV server redirects {url} to {location}; redirects are not followed, so add "
                                 "the target with the final URL.", url=self.description,
                                 location=quotable(urlsplit(location)._replace(query="", fragment="").geturl(), 200) or "?"),
                             code=ErrorCode.SYNC_BAD_TARGET)
        if status == 507:
            return SyncError(msg("The WebDAV server has no space left for {url} (507). Nothing was lost; free some "
                                 "space or raise the quota and sync again.", url=self.description),
                             code=ErrorCode.SYNC_TARGET_FULL)
        if status == 400 and urlsplit(self.base).scheme == "http":  # nginx: "plain HTTP request sent to HTTPS port"
            endpoint = reach.Endpoint.of(self.base)
            if reach.speaks_tls(endpoint):
                return SyncError(msg("Cannot reach the WebDAV server for {url}: {cause}", url=self.description,
                                     cause=reach.speaks_https(endpoint, s3=False).text),
                                 code=ErrorCode.SYNC_TARGET_UNREACHABLE)
        if status >= 500:
            return SyncError(msg("The WebDAV server for {url} failed to answer ({status}): it may be down or busy. "
                                 "Nothing was lost; sync again later.", url=self.description, status=status),
                             code=ErrorCode.SYNC_TARGET_UNREACHABLE)
        return SyncError(msg("The WebDAV server answered {status} for {url}.", status=status, url=self.description),
                         code=ErrorCode.SYNC_TARGET_UNREACHABLE)

    def _collections(self, name: str) -> None:
        """MKCOL every missing folder above `name` (the root must exist: 409 says it does not)."""
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth]) + "/"
            if folder in self._made:
                continue
            response = self._request("MKCOL", self._url(folder))
            if response.status_code not in (201, 405):  # 405: it exists already
                raise self._failed(response)
            self._made.add(folder)

    def put(self, name: str, data: bytes) -> None:
        final = self._url(name)
        self._collections(name)
        folder, _, leaf = name.rpartition("/")
        tmp = self.base + quote(f"{folder}/" * bool(folder) + f".{leaf}.{secrets.token_hex(4)}.tmp")
        response = self._request("PUT", tmp, content=data)
        if response.status_code == 409 and self._made:  # a folder made earlier was removed meanwhile
            self._made.clear()
            self._collections(name)
            response = self._request("PUT", tmp, content=data)
        if response.status_code == 413:
            raise SyncError(msg(
                "The WebDAV server for {url} refused an object of {size} KB as too large (413): raise its upload "
                "limit above that (a Nextcloud behind nginx: client_max_body_size, by default 1 MB; behind Apache: "
                "LimitRequestBody). Nothing was lost; sync again once it is raised.",
                url=self.description, size=-(-len(data) // 1024)), code=ErrorCode.SYNC_BAD_TARGET)
        if response.status_code not in (200, 201, 204):
            raise self._failed(response)
        response, retried = self._send("MOVE", tmp, headers={"Destination": final, "Overwrite": "T"})
        if response.status_code == 404 and retried:
            return  # the first try moved it, and its answer was lost
        if response.status_code not in (201, 204):
            self._request("DELETE", tmp)
            raise self._failed(response)

    def get(self, name: str, limit: int | None = None) -> bytes | None:
        response = self._request("GET", self._url(name), bounds.limit_for(name, limit))
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._failed(response)
        return response.content

    def _children(self, folder: str) -> list[tuple[str, bool]] | None:
        """(name relative to the root, is a collection) for each member of `folder`; None if absent."""
        response = self._request("PROPFIND", self._url(folder) if folder else self.base, bounds.MAX_LISTING_BYTES,
                                 headers={"Depth": "1", "Content-Type": "application/xml"}, content=_PROPFIND)
        if response.status_code == 404:
            return None
        if response.status_code != 207:
            raise self._failed(response)
        out: list[tuple[str, bool]] = []
        try:  # each response taken and let go as it is parsed: the tree of a large listing is never held whole
            for _event, item in ElementTree.iterparse(io.BytesIO(response.content), events=("end",)):
                if item.tag != f"{_DAV}response":
                    continue
                href = unquote(urlsplit(item.findtext(f"{_DAV}href") or "").path)
                is_folder = item.find(f".//{_DAV}resourcetype/{_DAV}collection") is not None
                item.clear()
                if not href.startswith(self._base_path):
                    continue
                rel = href[len(self._base_path):]
                if rel.rstrip("/") in ("", folder.rstrip("/")):
                    continue  # the folder itself
                leaf = rel.rstrip("/").rsplit("/", 1)[-1]
                if not _is_temporary(leaf):
                    out.append((rel.rstrip("/"), is_folder))
        except ElementTree.ParseError:
            raise SyncError(msg("The WebDAV server sent a listing of {url} that is not XML.", url=self.description),
                            code=ErrorCode.SYNC_TARGET_UNREACHABLE) from None
        return out

    def list(self, prefix: str) -> list[str]:
        folder = prefix.strip("/")
        pending = [folder + "/" if folder else ""]
        visited = set(pending)
        out: list[str] = []
        while pending:
            current = pending.pop()
            members = self._children(current)
            if members is None:
                if current == "" or (current == folder + "/" and self._children("") is None):
                    raise self._failed(httpx.Response(404))
                continue
            for rel, is_folder in members:
                if not is_folder:
                    out.append(rel)
                elif rel.count("/") < 2 and rel + "/" not in visited:  # names are d/DEVICE/NAME: a
                    visited.add(rel + "/")  # server listing folders without end, or in a ring, is not followed
                    pending.append(rel + "/")
            if len(out) + len(visited) > bounds.MAX_LISTED_NAMES:  # folders count too: each is a request
                raise bounds.too_many(self.description)
        return sorted(set(out))

    def delete(self, name: str) -> None:
        response = self._request("DELETE", self._url(name))
        if response.status_code not in (200, 204, 404):
            raise self._failed(response)


def _decoded(response: httpx.Response, body: bytes) -> httpx.Response:
    """The answer with its body as read and inflated here: its headers kept (a redirect's Location,
    a 401's realm) but not those that would have httpx decode or measure the body a second time."""
    headers = [(key, value) for key, value in response.headers.multi_items()
               if key.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=body, request=response.request)
