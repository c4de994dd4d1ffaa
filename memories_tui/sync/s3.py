"""An S3-compatible target (AWS S3, Cloudflare R2, Backblaze B2, MinIO, SeaweedFS) through boto3.

boto3 signs the requests and finds the credentials the standard way (environment, the shared
credentials and config files, profiles, instance roles); Memories never stores or prints them.
Each object is one PUT, so a reader sees a whole object or none.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ErrorCode, SyncError
from ..i18n import Message, msg
from . import bounds, reach

if TYPE_CHECKING:
    from .targets import TargetSpec


_CLIENTS: dict[tuple[object, ...], Any] = {}
# what stores answer when they have no room: MinIO's disk and bucket quota, Ceph RGW's user quota
_FULL_CODES = frozenset({"XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "QuotaExceeded",
                         "StorageFull", "InsufficientStorage"})
_CLIENTS_LOCK = threading.Lock()


def _client(boto3: Any, endpoint_url: str | None, config: Any) -> Any:
    """One boto3 client per endpoint and credential source, reused by later syncs (making one
    costs tens of milliseconds, more than a small sync's requests on loopback). A changed AWS_*
    variable or a rewritten credentials/config file makes a new one in a new session, so rotated
    keys are used."""
    files = [os.environ.get("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
             os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")]
    stamps: list[tuple[int, int] | None] = []
    for name in files:
        try:
            stat = Path(name).expanduser().stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stamps.append(None)
    key = (endpoint_url, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))), tuple(stamps))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            # a session of its own: the default one keeps the credentials it first found
            client = boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=config)
            if len(_CLIENTS) >= 8:
                _CLIENTS.clear()  # mostly clients of credentials no longer in force
            _CLIENTS[key] = client
        return client


class S3Target:
    def __init__(self, spec: TargetSpec) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise SyncError(msg("S3 targets need boto3, in Memories' s3 extra: pipx install --force '.[s3]' from the clone (or "
                                "pipx inject memories-tui boto3; in a virtualenv, pip install '.[s3]')."),
                            code=ErrorCode.SYNC_S3_UNAVAILABLE) from None
        bucket, _, prefix = spec.url[5:].partition("/")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.description = spec.url
        self.on_this_machine = spec.on_this_machine
        config = Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=10, read_timeout=60,
                        s3={"addressing_style": "path"} if spec.endpoint_url else None)
        try:
            self._client: Any = _client(boto3, spec.endpoint_url, config)
        except Exception as exc:  # noqa: BLE001 - botocore raises many kinds for a bad profile or region
            if type(exc).__name__ == "ProfileNotFound":  # a credentials matter, not an unreachable store
                raise SyncError(msg("The AWS profile {profile} (AWS_PROFILE) is in neither ~/.aws/config nor "
                                    "~/.aws/credentials; name a profile they have, or unset AWS_PROFILE.",
                                    profile=os.environ.get("AWS_PROFILE", "?")),
                                code=ErrorCode.SYNC_TARGET_CREDENTIALS) from None
            raise SyncError(msg("Cannot set up the S3 client for {url}: {problem}.", url=spec.url,
                                problem=type(exc).__name__), code=ErrorCode.SYNC_TARGET_UNREACHABLE) from None

    def _failed(self, exc: Exception) -> SyncError:
        """One clear error for a failed request, always naming the endpoint tried (AWS's, with a
        word on --endpoint-url, when none was given) and never a credential."""
        from botocore.exceptions import ClientError, NoCredentialsError

        kwargs = getattr(exc, "kwargs", None)
        asked = kwargs.get("endpoint_url") if isinstance(kwargs, dict) else None  # a virtual-hosted bucket's host too
        endpoint = reach.Endpoint.of(str(asked or self._endpoint()))
        if isinstance(exc, NoCredentialsError):
            return self._error(msg("No S3 credentials were found for {url} (set AWS_ACCESS_KEY_ID and "
                                   "AWS_SECRET_ACCESS_KEY, or a profile with AWS_PROFILE).", url=self.description),
                               ErrorCode.SYNC_TARGET_CREDENTIALS)
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            if status == 507 or code in _FULL_CODES or "cap exceeded" in str(exc).lower():
                return self._error(msg("The S3 store for {url} is full or over its quota ({code}). Nothing was "
                                       "lost; free some space (or raise the quota) and sync again.",
                                       url=self.description, code=code or status), ErrorCode.SYNC_TARGET_FULL)
            if code == "NoSuchBucket":
                return self._error(msg("The bucket {bucket} does not exist at this endpoint. Create it first.",
                                       bucket=self.bucket), ErrorCode.SYNC_TARGET_MISSING)
            if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403"):
                return self._error(msg("The S3 store refused these credentials for {url} ({code}).",
                                       url=self.description, code=code), ErrorCode.SYNC_TARGET_CREDENTIALS)
            if status >= 500:  # a store out of room often says only this (SeaweedFS: InternalError)
                return self._error(msg("The S3 store for {url} failed to answer ({code}): it may be down or out "
                                       "of space. Nothing was lost; sync again later.", url=self.description,
                                       code=code or status), ErrorCode.SYNC_TARGET_UNREACHABLE)
            if status == 400 and endpoint.scheme == "http" and reach.speaks_tls(endpoint):  # nginx in front
                return self._error(msg("Cannot reach the S3 store for {url}: {cause}", url=self.description,
                                       cause=reach.speaks_https(endpoint, s3=True).text),
                                   ErrorCode.SYNC_TARGET_UNREACHABLE)
            return self._error(msg("The S3 store answered {code} for {url}.", code=code or "an error",
                                   url=self.description), ErrorCode.SYNC_TARGET_UNREACHABLE)
        cause = reach.cause_of(exc, endpoint, s3=True)
        if cause is not None:
            return self._error(msg("Cannot reach the S3 store for {url}: {cause}", url=self.description,
                                   cause=cause.text), ErrorCode.SYNC_TARGET_UNREACHABLE)
        return self._error(msg("Cannot reach the S3 store for {url} ({problem}). Nothing was lost; sync again "
                               "later.", url=self.description, problem=type(exc).__name__),
                           ErrorCode.SYNC_TARGET_UNREACHABLE)

    def _endpoint(self) -> str:
        return str(getattr(getattr(self._client, "meta", None), "endpoint_url", "") or "")

    def _error(self, problem: Message, code: str) -> SyncError:
        """`problem` and the endpoint it came from: AWS's own says how to reach another store."""
        endpoint = reach.Endpoint.of(self._endpoint())
        if endpoint.host.endswith((".amazonaws.com", ".amazonaws.com.cn")):
            where = msg("{endpoint} is AWS S3's endpoint: for MinIO, R2, B2 or SeaweedFS give --endpoint-url.",
                        endpoint=endpoint.origin)
        else:
            where = msg("Endpoint tried: {endpoint}.", endpoint=endpoint.origin)
        return SyncError(msg("{problem} {advice}", problem=problem, advice=where), code=code)

    def put(self, name: str, data: bytes) -> None:
        try:
            self._client.put_object(Bucket=self.bucket, Key=self.prefix + name, Body=data)
        except Exception as exc:  # noqa: BLE001 - turned into one clear SyncError
            raise self._failed(exc) from None

    def get(self, name: str, limit: int | None = None) -> bytes | None:
        from botocore.exceptions import ClientError

        bound = bounds.limit_for(name, limit)
        try:
            response = self._client.get_object(Bucket=self.bucket, Key=self.prefix + name)
            body = response["Body"]
            try:
                length = response.get("ContentLength")
                if length is not None and int(length) >= 0:  # read no further than that: one buffer, no copy
                    if int(length) > bound:
                        raise bounds.too_large(name, self.description, bound)
                    return bytes(body.read(int(length)))  # never past it (chunked framing beside a length wins)
                data = bytearray()
                for chunk in body.iter_chunks(1 << 20):  # no length said (or -1): bounded as it arrives
                    data += chunk
                    if len(data) > bound:
                        raise bounds.too_large(name, self.description, bound)
                return bytes(data)
            finally:
                body.close()
        except SyncError:
            raise
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code", "")) in ("NoSuchKey", "404"):
                return None
            raise self._failed(exc) from None
        except Exception as exc:  # noqa: BLE001
            raise self._failed(exc) from None

    def list(self, prefix: str) -> list[str]:
        out: list[str] = []
        try:
            pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                          Prefix=self.prefix + prefix)
            for page in pages:
                out += [item["Key"][len(self.prefix):] for item in page.get("Contents", [])
                        if str(item.get("Key", "")).startswith(self.prefix)]  # a store listing others' keys too
                if len(out) > bounds.MAX_LISTED_NAMES:  # a store that answers "more" for ever
                    raise bounds.too_many(self.description)
        except SyncError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._failed(exc) from None
        return sorted(out)

    def delete(self, name: str) -> None:
        try:
            self._client.delete_object(Bucket=self.bucket, Key=self.prefix + name)
        except Exception as exc:  # noqa: BLE001
            raise self._failed(exc) from None
