"""An S3 store that really runs out of room: a SeaweedFS of sixteen 1 MiB volumes on 127.0.0.1
(its own, stopped by its pid), filled by another bucket and by the sync bucket's own other
objects until it refuses writes. A push then fails with one clear error and loses nothing: the
vault keeps its records, the other device still reads the state before it (the head goes
last), and once the other bucket is deleted the next sync delivers everything. SeaweedFS says
only "InternalError" (500) when full; the message says what that may mean."""

from __future__ import annotations

import os

import pytest

from memories_tui.errors import MemoriesError
from tests.helpers.sync import first_device, joined_device

_OBJECT = 300_000  # bytes of each filler object


@pytest.fixture
def small_store(monkeypatch, tmp_path):
    from tests.helpers.seaweed import seaweed_server, use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    with seaweed_server(volume_mb=1, volumes=16) as server:
        yield server


def _fill(client, bucket: str, prefix: str) -> list[str]:  # noqa: ANN001 - a boto3 client
    """Put objects until the store refuses one; their keys."""
    from botocore.exceptions import ClientError

    keys: list[str] = []
    for i in range(200):
        try:
            client.put_object(Bucket=bucket, Key=f"{prefix}/{i}", Body=os.urandom(_OBJECT))
        except ClientError:
            return keys
        keys.append(f"{prefix}/{i}")
    raise AssertionError("the small store never filled up")


def test_a_full_store_is_one_clear_error_and_the_next_sync_delivers_everything(small_store, tmp_path, cheap_kdf):
    import boto3
    from botocore.config import Config

    client = boto3.client("s3", endpoint_url=small_store.endpoint, config=Config(retries={"max_attempts": 1}))
    client.create_bucket(Bucket="sync-full")
    url = "s3://sync-full/vault"
    a = first_device(tmp_path / "a", url, small_store.endpoint)
    a.add("small", "fits")
    a.sync()
    b = joined_device(tmp_path / "b", url, small_store.endpoint)
    client.create_bucket(Bucket="someone-else")
    other = _fill(client, "someone-else", "f")  # takes the store's free volumes
    _fill(client, "sync-full", "filler")  # and the room left in the sync bucket's own
    big = {a.add(f"big {i}", os.urandom(6000).hex()) for i in range(12)}
    with pytest.raises(MemoriesError) as caught:
        a.sync()
    assert caught.value.code == "sync_target_unreachable", caught.value.message
    assert "out of space" in caught.value.message and "Nothing was lost" in caught.value.message
    assert big <= set(a.records())
    b.sync()
    assert {t for _k, t, _b in b.records().values()} == {"small"}, "the other device read part of a failed push"
    for key in other:
        client.delete_object(Bucket="someone-else", Key=key)
    client.delete_bucket(Bucket="someone-else")  # SeaweedFS frees that bucket's volumes
    a.sync()
    b.sync()
    assert b.records() == a.records() and big <= set(b.records())
    a.close()
    b.close()


@pytest.mark.parametrize(("code", "status"), [("XMinioStorageFull", 507), ("XMinioAdminBucketQuotaExceeded", 400),
                                              ("AccessDenied", 403)])
def test_what_other_stores_answer_when_full_is_a_full_target(code, status, monkeypatch, tmp_path):
    """MinIO's answers for a full disk and a bucket over quota, and B2's 403 "storage cap
    exceeded" (these stores are not run here: the answers are their documented ones)."""
    from botocore.exceptions import ClientError

    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import spec_from
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    message = "Cannot upload files, storage cap exceeded." if code == "AccessDenied" else "no room"
    answer = ClientError({"Error": {"Code": code, "Message": message},
                          "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")
    failed = S3Target(spec_from("s3://bucket/vault", "http://127.0.0.1:9"))._failed(answer)
    assert failed.code == "sync_target_full" and "Nothing was lost" in failed.message
