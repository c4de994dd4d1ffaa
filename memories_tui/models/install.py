"""`memories rag model-install`: download, verify and place the pinned model files.

Per file, in manifest order:

* a final file that already exists is hashed: a match is *reused*; a mismatch *fails* that
  file with a message saying which file and what to do — the file is never touched;
* otherwise the file is fetched from ``{base}/{path}`` into ``<target>/<path>.part``,
  resuming an existing ``.part`` with ``Range: bytes=N-`` (a 206 must start exactly at N; a
  200 answer to a Range request restarts from byte 0), within a per-file deadline of
  ``download_timeout_seconds``; transfer failures resume from the bytes already written (up
  to ``retries`` extra times);
* the finished ``.part`` is SHA-256-checked and moved into place without ever replacing a
  file that appeared meanwhile (hard link + unlink; ``os.replace`` only where links are not
  supported and the final name is still free).

Every file is attempted and reported; ``InstallReport.ok`` is False if any failed. A
``cancel`` event stops the run with CancelledError and keeps the ``.part`` for a resume.

Redirects (max 5 hops) are followed by hand, each hop re-checked: to https anywhere, or
to plain http only on the same loopback origin as the current plain-http hop.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from ..config import HttpSettings
from ..errors import CancelledError, ErrorCode, NetworkError
from ..i18n import Message, msg
from . import http as nethttp
from .install_base import FileFailed, FileInstaller, run_install
from .install_files import (
    FileProgress,
    FileResult,
    InstallProgress,
    InstallReport,
    ProgressTracker,
    cancelled_error,
    sha256_file,
)
from .manifest import PINNED, ModelFile, ModelManifest
from .proxy import proxy_for

_CHUNK = 1 << 16
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)


class _Unreachable(Exception):
    """No connection to the download host at all: every other file would fail the same way."""


class _Transient(Exception):
    """A transfer broke part-way; resume (or restart) if the retry budget allows."""


# --------------------------------------------------------------------------- installer


class MirrorInstaller(FileInstaller):
    """Fetches each file from `{base}/{path}` over HTTP(S), resuming a `.part`."""

    placed = "downloaded"

    def __init__(self, target: Path, base: str, http: HttpSettings, cancel: threading.Event | None,
                 tracker: ProgressTracker) -> None:
        super().__init__(target, cancel, tracker)
        self.base = base
        self.http = http
        self._clients: dict[str | None, httpx.Client] = {}

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def client_for(self, url: str) -> httpx.Client:
        key = proxy_for(url, self.http)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = nethttp.make_client(self.http, url, download=True)
        return client

    def install_one(self, mf: ModelFile, fp: FileProgress) -> FileResult:
        try:
            return super().install_one(mf, fp)
        except _Unreachable:  # every other file would fail the same way: the run stops here
            fp.state = "failed"
            self.tracker.emit(force=True)
            raise

    def fetch(self, mf: ModelFile, fp: FileProgress, part: Path) -> str:
        return self._download(mf, fp, part)

    # ---- download

    def _download(self, mf: ModelFile, fp: FileProgress, part: Path) -> str:
        deadline = time.monotonic() + self.http.download_timeout_seconds
        failures = 0
        resumed = False
        restarted_after_mismatch = False
        while True:
            self.check_cancel()
            offset = part.stat().st_size if part.exists() else 0
            if offset > mf.bytes:  # ours, and longer than the pinned file: useless
                part.unlink()
                offset = 0
            if offset == mf.bytes:
                fp.bytes_done = offset
                fp.state = "verifying"
                self.tracker.emit(force=True)
                digest = sha256_file(part, self.cancel)
                if digest == mf.sha256:
                    return digest
                part.unlink()
                fp.bytes_done = 0
                if resumed and not restarted_after_mismatch:
                    # The mismatch may come from joining bytes of two different transfers.
                    restarted_after_mismatch = True
                    resumed = False
                    continue
                raise FileFailed(
                    f"the downloaded bytes do not match the pinned SHA-256 (expected {mf.sha256}, "
                    f"got {digest}); nothing was installed for this file. The server at {self.base} does not "
                    "serve the pinned file: check [rag] model_download_base_url."
                )
            resumed = resumed or offset > 0
            fp.bytes_done = offset
            fp.state = "downloading"
            self.tracker.emit(force=True)
            try:
                self._fetch(mf, fp, part, offset, deadline)
            except _Transient as exc:
                failures += 1
                if time.monotonic() >= deadline:
                    raise FileFailed(self._timeout_message(mf)) from None
                if failures > self.http.retries:
                    raise FileFailed(
                        f"download failed after {failures} attempt(s): {exc}. Run model-install again "
                        "to resume."
                    ) from None
                delay = min(nethttp.backoff_seconds(self.http, failures), max(deadline - time.monotonic(), 0.0))
                try:
                    nethttp._sleep(delay, self.cancel)
                except CancelledError:
                    raise cancelled_error() from None

    def _timeout_message(self, mf: ModelFile) -> str:
        return (
            f"download timed out (per-file budget [rag.http] download_timeout_seconds = "
            f"{self.http.download_timeout_seconds:g} s). Partial data was kept; run model-install again to resume, "
            "or raise the budget."
        )

    def _open(self, mf: ModelFile, offset: int, deadline: float) -> httpx.Response:
        url = f"{self.base}/{mf.path}"
        what = "download"
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        for _hop in range(nethttp.MAX_REDIRECTS + 1):
            client = self.client_for(url)
            hop_url = url
            try:
                response = nethttp.send_with_retries(
                    client, functools.partial(client.build_request, "GET", hop_url, headers=headers),
                    settings=self.http, cancel=self.cancel, deadline=deadline, stream=True, what=what,
                )
            except CancelledError:
                raise cancelled_error() from None
            except NetworkError as exc:
                if exc.code == ErrorCode.NETWORK_TIMEOUT and time.monotonic() >= deadline - 0.05:
                    raise FileFailed(self._timeout_message(mf)) from None
                if exc.code == ErrorCode.NETWORK_TIMEOUT:
                    raise FileFailed(f"{exc.message} Run model-install again to resume.") from None
                if exc.code == ErrorCode.NETWORK_UNREACHABLE:
                    raise _Unreachable(unreachable_cause(exc)) from None
                raise FileFailed(exc.message) from None
            if response.status_code not in nethttp.REDIRECT_STATUSES:
                return response
            location = response.headers.get("location")
            response.close()
            if not location:
                raise FileFailed("the server sent a redirect without a Location.")
            url = nethttp.check_redirect(url, location, what=what)
        raise FileFailed(f"more than {nethttp.MAX_REDIRECTS} redirects; refused.")

    def _fetch(self, mf: ModelFile, fp: FileProgress, part: Path, offset: int, deadline: float) -> None:
        response = self._open(mf, offset, deadline)
        try:
            self._receive(mf, fp, part, offset, deadline, response)
        finally:
            response.close()

    def _receive(self, mf: ModelFile, fp: FileProgress, part: Path, offset: int, deadline: float,
                 response: httpx.Response) -> None:
        mode, offset = self._resume_point(mf, part, offset, response)
        fp.bytes_done = offset
        written = offset
        try:
            with part.open(mode) as f:
                try:
                    for chunk in response.iter_raw(_CHUNK):
                        if self.cancel is not None and self.cancel.is_set():
                            raise cancelled_error()
                        if written + len(chunk) > mf.bytes:
                            f.close()
                            part.unlink(missing_ok=True)
                            fp.bytes_done = 0
                            raise FileFailed(
                                f"the server sent more than the pinned {mf.bytes:,} bytes; "
                                f"nothing was installed for this file. The server at {self.base} does not "
                                "serve the pinned file."
                            )
                        f.write(chunk)
                        written += len(chunk)
                        fp.bytes_done = written
                        self.tracker.session_bytes += len(chunk)
                        self.tracker.emit()
                        if time.monotonic() >= deadline:
                            raise FileFailed(self._timeout_message(mf))
                finally:
                    if not f.closed:
                        f.flush()
                        os.fsync(f.fileno())
        except nethttp.RETRYABLE_ERRORS as exc:
            raise _Transient(nethttp.describe_transport_error(exc)) from None
        except httpx.TransportError as exc:
            raise _Transient(nethttp.describe_transport_error(exc)) from None
        if written < mf.bytes:
            raise _Transient(f"the connection ended after {written:,} of {mf.bytes:,} bytes")

    def _resume_point(self, mf: ModelFile, part: Path, offset: int, response: httpx.Response) -> tuple[str, int]:
        """How the answer's body is written ("ab" appends to the partial file, "wb" starts over)
        and from which byte; a status or header that cannot give the pinned file raises."""
        status = response.status_code
        mode = "wb"
        if status == 206:
            m = _CONTENT_RANGE.match(response.headers.get("content-range", ""))
            if not m or offset == 0:
                part.unlink(missing_ok=True)
                raise _Transient("the server answered a range request with an unusable Content-Range")
            start, total = int(m.group(1)), m.group(3)
            if total != "*" and int(total) != mf.bytes:
                raise FileFailed(
                    f"the server's file has {int(total):,} bytes but the pinned file has "
                    f"{mf.bytes:,}; the server at {self.base} does not serve the pinned file."
                )
            if start != offset:
                part.unlink(missing_ok=True)
                raise _Transient(f"the server resumed at byte {start} instead of {offset}")
            mode = "ab"
        elif status == 200:
            length = response.headers.get("content-length")
            if length is not None and length.strip().isdigit() and int(length) != mf.bytes:
                part.unlink(missing_ok=True)
                raise FileFailed(
                    f"the server's file has {int(length):,} bytes but the pinned file has "
                    f"{mf.bytes:,}; the server at {self.base} does not serve the pinned file."
                )
            offset = 0  # a 200 to a Range request: the whole file again, start over
        elif status == 416 and offset:
            part.unlink(missing_ok=True)
            raise _Transient("the server refused the resume range (HTTP 416); starting over")
        elif status == 404:
            raise FileFailed(
                f"not found at {self.base}/{mf.path} (HTTP 404); the mirror must hold the pinned "
                "files under the same relative paths."
            )
        else:
            raise FileFailed(nethttp.status_error(response, what="download").message)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise FileFailed(f"the server sent the file {encoding}-encoded; expected raw bytes.")
        return mode, offset


def unreachable_cause(exc: NetworkError) -> Message | str:
    """Why the host could not be reached, without the file that was asked for (the sentence
    says which host): the transport's own sentence when the error carries one."""
    problem = exc.localizable.params.get("problem") if exc.localizable is not None else None
    return problem if isinstance(problem, Message) else exc.message.split(": ", 1)[-1].rstrip(".")


def unreachable_message(base: str, detail: Message | str, manifest: ModelManifest = PINNED) -> Message:
    """What to do when the download host cannot be reached (offline, firewall, blocked host):
    where the pinned files live (repository, full revision), so they can be fetched on another
    machine. File names stay out: the TUI lists them one per row, the CLI adds every URL."""
    host = httpx.URL(base).host or base
    return msg("Could not reach {host} to download the model: {detail}. Nothing more was tried. To install "
               "without it, fetch the {count} pinned files of {repo} at revision {revision} from {base}/ on a "
               "machine that can (`memories rag model-install --list` prints each file's exact URL, size and "
               "SHA-256), put them in one folder and run `memories rag model-install --from DIR` here; every "
               "file's size and SHA-256 is checked. Or set [rag] model_download_base_url to a mirror that holds "
               "the same files.", host=host, detail=detail.rstrip(".") if isinstance(detail, str) else detail, count=len(manifest.files),
               repo=manifest.repo, revision=manifest.revision, base=manifest.default_base_url)


def install_model(
    target: Path,
    *,
    base_url: str | None,
    http: HttpSettings,
    progress: Callable[[InstallProgress], None] | None = None,
    cancel: threading.Event | None = None,
    manifest: ModelManifest = PINNED,
) -> InstallReport:
    """Install `manifest`'s files into `target`; see the module docstring for the rules.

    Raises PolicyError for a base URL that breaks the URL policy, ConfigError for an unusable
    proxy environment variable, NetworkError when the host cannot be reached at all, ModelError
    if `target` cannot be written, CancelledError when `cancel` is set. Per-file problems do
    not raise: they are in the report, and ``report.ok`` is False.
    """
    base = (base_url or manifest.default_base_url).rstrip("/")
    nethttp.check_endpoint_url(base, what="Model download base URL")
    proxy_for(base, http)  # a malformed proxy environment variable fails here, once
    try:
        return run_install(Path(target), manifest,
                           lambda tracker: MirrorInstaller(Path(target), base, http, cancel, tracker),
                           progress=progress, cancel=cancel)
    except _Unreachable as exc:
        raise NetworkError(unreachable_message(base, exc.args[0], manifest), code=ErrorCode.NETWORK_UNREACHABLE) from None
