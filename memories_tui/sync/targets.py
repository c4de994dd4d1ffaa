"""The sync target interface: put, get, list a prefix, delete. Nothing more is asked of storage,
so a folder replicated by another tool and an object store behave the same.

Names are '/'-separated and opaque (see sealing.py); a target never sees a record id or title.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from ..errors import ErrorCode, SyncError
from ..i18n import msg
from ..loopback import is_loopback_host


class Target(Protocol):
    """One sync target. `get` returns None for a name that is not there (yet), and refuses an
    object over `bounds.limit_for(name, limit)` with `bounds.ObjectTooLarge`."""

    description: str  # what the egress log and status show: a path, s3://bucket/prefix or a WebDAV URL
    on_this_machine: bool  # a folder, or an endpoint on loopback

    def put(self, name: str, data: bytes) -> None: ...

    def get(self, name: str, limit: int | None = None) -> bytes | None: ...

    def list(self, prefix: str) -> list[str]: ...

    def delete(self, name: str) -> None: ...


@dataclass(frozen=True)
class TargetSpec:
    """Where a vault syncs: a folder path, `s3://bucket/prefix` (with an optional endpoint URL
    for R2, B2, MinIO, SeaweedFS) or a WebDAV collection's http(s) URL. Credentials are never
    part of it: boto3 finds them, or the WebDAV target reads them from the environment or netrc."""

    url: str
    endpoint_url: str | None = None

    @property
    def is_s3(self) -> bool:
        return self.url.startswith("s3://")

    @property
    def is_webdav(self) -> bool:
        return self.url.startswith(("https://", "http://"))

    @property
    def on_this_machine(self) -> bool:
        if self.is_webdav:
            host = urlsplit(self.url).hostname
            return host is not None and is_loopback_host(host)
        if not self.is_s3:
            return True
        host = urlsplit(self.endpoint_url).hostname if self.endpoint_url else None
        return host is not None and is_loopback_host(host)


def spec_from(url: str, endpoint_url: str | None = None, *, cwd: Path | None = None) -> TargetSpec:
    """A target as the user typed it: a folder becomes an absolute path; an s3 URL is checked."""
    url = url.strip()
    if url.startswith("s3://"):
        bucket = url[5:].split("/", 1)[0]
        if not bucket:
            raise SyncError(msg("{url} names no bucket; write s3://BUCKET/PREFIX.", url=url), code=ErrorCode.SYNC_BAD_TARGET)
        if "@" in bucket or (endpoint_url and "@" in urlsplit(endpoint_url).netloc):
            raise SyncError(msg("Put no key or password in the S3 URL or the endpoint URL (it would be stored in "
                                "sync.json); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile with "
                                "AWS_PROFILE."), code=ErrorCode.SYNC_BAD_TARGET)
        if endpoint_url and urlsplit(endpoint_url).scheme not in ("http", "https"):
            raise SyncError(msg("The endpoint URL {endpoint} is not an http(s) URL.", endpoint=endpoint_url),
                            code=ErrorCode.SYNC_BAD_TARGET)
        return TargetSpec(url.rstrip("/"), endpoint_url or None)
    if url.startswith(("https://", "http://", "webdav://", "webdavs://")):
        if endpoint_url:
            raise SyncError(msg("--endpoint-url is for s3:// targets only."), code=ErrorCode.SYNC_BAD_TARGET)
        from .webdav import webdav_url

        return TargetSpec(webdav_url(url), None)
    if "://" in url:
        raise SyncError(msg("{url}: a sync target is a folder path, s3://BUCKET/PREFIX or a WebDAV https:// URL.",
                            url=url), code=ErrorCode.SYNC_BAD_TARGET)
    if endpoint_url:
        raise SyncError(msg("--endpoint-url is for s3:// targets only."), code=ErrorCode.SYNC_BAD_TARGET)
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return TargetSpec(str(path), None)


def open_target(spec: TargetSpec) -> Target:
    if spec.is_s3:
        from .s3 import S3Target

        return S3Target(spec)
    if spec.is_webdav:
        from .webdav import WebDavTarget

        return WebDavTarget(spec)
    from .folder import FolderTarget

    return FolderTarget(Path(spec.url))
