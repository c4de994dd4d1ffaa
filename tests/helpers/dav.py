"""A real WebDAV server for sync tests: WsgiDAV on cheroot (both from PyPI), in a subprocess on
127.0.0.1 with a free port, serving a temporary folder behind HTTP Basic authentication (one user).
The server is stopped by its own pid whatever happens; without wsgidav the tests skip with the
reason (in CI they fail, tests/helpers/paths.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import missing

READY_SECONDS = 60.0
USER = "alice"
PASSWORD = "correct horse battery"

# Runs in the child: the app and server from the JSON config given as argv[1]. Under /full/ the
# same kind of folder answers every write with 507 Insufficient Storage, as a share over quota does;
# under /flaky/ one request in four is answered 503 before it reaches WsgiDAV, as a proxy in front
# of a busy server does (a MOVE is done first, then its answer replaced: an answer lost on the way);
# under /small/ a request body over 64 KB is answered 413, as a proxy with a small upload limit does
# (nginx's client_max_body_size is 1 MB unless set); under /slow/, while the file `slow` beside the
# share holds "stall", a GET gets no answer until the file is gone (a server that hangs), and while it
# holds "drip" each GET's answer comes a byte every 0.2 s (within any read timeout, never done in time);
# the server writes `waiting` there once a GET is held back; "stall-put" holds PUTs back instead;
# "refuse-key" answers 403 to the upload of the join record (`key`) only.
_SERVER = """
import json, os, sys, time
from cheroot import wsgi
from wsgidav.dav_error import HTTP_INSUFFICIENT_STORAGE, DAVError
from wsgidav.fs_dav_provider import FileResource, FilesystemProvider, FolderResource
from wsgidav.wsgidav_app import WsgiDAVApp

class FullFolder(FolderResource):
    def create_empty_resource(self, name):
        raise DAVError(HTTP_INSUFFICIENT_STORAGE)
    def create_collection(self, name):
        raise DAVError(HTTP_INSUFFICIENT_STORAGE)

class FullFile(FileResource):
    def begin_write(self, **kwargs):
        raise DAVError(HTTP_INSUFFICIENT_STORAGE)

class FullProvider(FilesystemProvider):
    def get_resource_inst(self, path, environ):
        found = super().get_resource_inst(path, environ)
        if isinstance(found, FolderResource):
            found.__class__ = FullFolder
        elif isinstance(found, FileResource):
            found.__class__ = FullFile
        return found

class Flaky:
    def __init__(self, app, slow_flag):
        self.app, self.count, self.slow_flag = app, 0, slow_flag
    def slow_mode(self, environ):
        if not environ.get("PATH_INFO", "").startswith("/slow"):
            return ""
        try:
            with open(self.slow_flag) as flag:
                mode = flag.read().strip()
        except OSError:
            return ""
        if mode == "stall-put":  # uploads hang, reads answer
            return "stall" if environ["REQUEST_METHOD"] == "PUT" else ""
        if mode == "refuse-key":  # the join record's upload is forbidden, the rest goes through
            leaf = environ.get("PATH_INFO", "").rsplit("/", 1)[-1]
            return "refuse" if environ["REQUEST_METHOD"] == "PUT" and leaf.startswith(".key.") else ""
        return mode if environ["REQUEST_METHOD"] == "GET" else ""
    def held_back(self):
        with open(os.path.join(os.path.dirname(self.slow_flag), "waiting"), "w") as mark:
            mark.write("1")
    def __call__(self, environ, start_response):
        mode = self.slow_mode(environ)
        if mode == "refuse":
            start_response("403 Forbidden", [("Content-Length", "0")])
            return [b""]
        if mode == "stall":
            self.held_back()
            for _ in range(3000):  # 300 s at most
                if not os.path.exists(self.slow_flag):
                    break
                time.sleep(0.1)
        elif mode == "drip":
            self.held_back()
            body = b"".join(self.app(environ, start_response))
            def trickle():
                for n in range(len(body)):
                    time.sleep(0.2)
                    yield body[n:n + 1]
            return trickle()
        if environ.get("PATH_INFO", "").startswith("/small") and int(environ.get("CONTENT_LENGTH") or 0) > 65536:
            environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
            start_response("413 Request Entity Too Large", [("Content-Length", "0")])
            return [b""]
        if environ.get("PATH_INFO", "").startswith("/flaky"):
            self.count += 1
            if self.count % 4 == 1:
                if environ["REQUEST_METHOD"] == "MOVE":  # done, but its answer is lost on the way back
                    for _chunk in self.app(environ, lambda *args: None):
                        pass
                start_response("503 Service Unavailable", [("Content-Length", "0")])
                return [b""]
        return self.app(environ, start_response)

conf = json.loads(sys.argv[1])
conf["provider_mapping"]["/full"] = FullProvider(conf.pop("full_root"))
conf["provider_mapping"]["/flaky"] = conf.pop("flaky_root")
conf["provider_mapping"]["/small"] = conf.pop("small_root")
conf["provider_mapping"]["/slow"] = conf.pop("slow_root")
slow_flag = conf.pop("slow_flag")
server = wsgi.Server((conf["host"], conf["port"]), Flaky(WsgiDAVApp(conf), slow_flag))
server.start()
"""


@dataclass(frozen=True)
class DavServer:
    url: str  # the root collection, http://127.0.0.1:PORT/
    root: Path  # the folder the server stores the objects in
    full_url: str  # a collection whose every write is refused with 507 (over quota)
    flaky_url: str  # a collection where one request in four is answered 503 (a MOVE after it is done)
    small_url: str  # a collection behind an upload limit of 64 KB (413 above it)
    slow_url: str  # a collection whose GETs hang or trickle while `slow_flag` says so (above)
    slow_flag: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def dav_server() -> Iterator[DavServer]:
    if importlib.util.find_spec("wsgidav") is None or importlib.util.find_spec("cheroot") is None:
        missing("WsgiDAV is not installed (pip install -e '.[test]' installs wsgidav and cheroot)")
    base = Path(tempfile.mkdtemp(prefix="memories-dav-"))
    root = base / "share"
    root.mkdir()
    (base / "full").mkdir()
    (base / "flaky").mkdir()
    (base / "small").mkdir()
    (base / "slow-share").mkdir()
    port = _free_port()
    conf = {"host": "127.0.0.1", "port": port, "provider_mapping": {"/": str(root)}, "full_root": str(base / "full"),
            "flaky_root": str(base / "flaky"), "small_root": str(base / "small"),
            "slow_root": str(base / "slow-share"), "slow_flag": str(base / "slow"),
            "verbose": 1,
            "logging": {"enable": False}, "property_manager": True, "lock_storage": True,
            "http_authenticator": {"accept_basic": True, "accept_digest": False, "default_to_digest": False,
                                   "trusted_auth_header": None},
            "simple_dc": {"user_mapping": {"*": {USER: {"password": PASSWORD}}}}}
    log = open(base / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(conf)], stdout=log, stderr=subprocess.STDOUT,
                            cwd=base, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_ready(proc, port, base)
        yield DavServer(url, root, url + "full", url + "flaky", url + "small", url + "slow", base / "slow")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


def _wait_ready(proc: subprocess.Popen[bytes], port: int, base: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"wsgidav exited ({proc.returncode}): {(base / 'server.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"wsgidav not ready in {READY_SECONDS} s") from None
            time.sleep(0.2)


__all__ = ["PASSWORD", "USER", "DavServer", "dav_server"]
