"""Sync through a real S3-compatible server (SeaweedFS on 127.0.0.1, started once for this file,
stopped by its pid): two homes converge through one bucket, an offline edit on both is a
conflict with the same winner on both, the server's storage holds no plaintext, and S3 faults
are clear errors (the server checks the key pair, so refused credentials are tested too).
Credentials come from the standard AWS environment variables."""

from __future__ import annotations

import pytest

from memories_tui.errors import MemoriesError
from tests.helpers.sync import first_device, joined_device, target_bytes

BUCKET = "memories-sync"


@pytest.fixture(scope="module")
def seaweed():
    from tests.helpers.seaweed import seaweed_server

    with seaweed_server(credentials=("test", "test")) as server:  # a wrong key is refused, as by a real store
        import boto3

        boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id="test", aws_secret_access_key="test",
                     region_name="us-east-1").create_bucket(Bucket=BUCKET)
        yield server


@pytest.fixture
def s3_env(seaweed, monkeypatch, tmp_path):
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    return seaweed


def test_two_homes_converge_through_a_bucket_with_conflicts_kept_and_no_plaintext(s3_env, tmp_path, cheap_kdf):
    canary = "同步金絲雀 canary-s3 机密"
    url = f"s3://{BUCKET}/two-homes"
    a = first_device(tmp_path / "a", url, s3_env.endpoint, device_only=True)  # a loopback endpoint is allowed
    rid = a.add("laptop note", f"written on the laptop {canary}")
    a.sync()
    b = joined_device(tmp_path / "b", url, s3_env.endpoint)
    assert [h.title for h in b.engine.memory_search(b.vault_id, "laptop")] == ["laptop note"]
    a.edit(rid, "offline edit on a")
    b.edit(rid, f"offline edit on b {canary}")
    for device in (a, b, a):
        device.sync()
    assert a.records() == b.records()
    assert a.conflicts() == b.conflicts() and len(a.conflicts()[rid]) == 1
    stored = target_bytes(s3_env.data_dir) + _bucket_bytes(s3_env.endpoint)
    assert b"memories-sync/1" in stored  # the clear join record is there: the search looks in the right place
    for encoding in ("utf-8", "gb18030"):
        assert canary.encode(encoding) not in stored
        assert "金絲雀".encode(encoding) not in stored
    assert rid.encode() not in stored and b"laptop" not in stored
    a.close()
    b.close()


def _bucket_bytes(endpoint: str) -> bytes:
    """Every key and object as the S3 API serves it (the server's files may be compressed)."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    out = bytearray()
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        out += item["Key"].encode() + client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
    return bytes(out)


def test_a_missing_bucket_is_a_clear_error(s3_env, tmp_path, cheap_kdf):
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", "s3://no-such-bucket/x", s3_env.endpoint)
    assert caught.value.code == "sync_target_missing"
    assert "no-such-bucket" in caught.value.message


def test_refused_credentials_are_a_clear_error_that_does_not_show_them(s3_env, tmp_path, cheap_kdf, monkeypatch):
    first_device(tmp_path / "a", f"s3://{BUCKET}/creds", s3_env.endpoint).close()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "wrong-key-id-31")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-31")
    with pytest.raises(MemoriesError) as caught:
        joined_device(tmp_path / "b", f"s3://{BUCKET}/creds", s3_env.endpoint)
    assert caught.value.code == "sync_target_credentials"
    assert "wrong-secret-31" not in caught.value.message and "wrong-key-id-31" not in caught.value.message
    assert not list((tmp_path / "b").glob("vaults/*.mvault"))  # nothing made here


def test_an_unknown_aws_profile_is_a_credentials_error_that_names_it(tmp_path, monkeypatch):
    """It was "Cannot set up the S3 client …: ProfileNotFound.", sync_target_unreachable."""
    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import spec_from

    (tmp_path / "config").write_text("[profile laptop]\nregion = us-east-1\n", encoding="utf-8")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    with pytest.raises(MemoriesError) as caught:
        S3Target(spec_from("s3://bucket/prefix", "http://127.0.0.1:9"))
    assert caught.value.code == "sync_target_credentials" and "no-such-profile" in caught.value.message


def test_an_unreachable_endpoint_is_a_clear_error(s3_env, tmp_path, cheap_kdf):
    from tests.helpers.seaweed import _free_port

    port = _free_port()
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", f"s3://{BUCKET}/x", f"http://127.0.0.1:{port}")
    assert caught.value.code == "sync_target_unreachable"
    assert f"nothing answers at 127.0.0.1:{port} (is the server running?" in caught.value.message
    assert caught.value.message.endswith(f"Endpoint tried: http://127.0.0.1:{port}.")


def test_later_syncs_reuse_the_client_until_the_credentials_change(monkeypatch, tmp_path):
    pytest.importorskip("boto3")
    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import TargetSpec

    creds = tmp_path / "credentials"
    for name, value in {"AWS_ACCESS_KEY_ID": "one", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(creds)}.items():
        monkeypatch.setenv(name, value)
    spec = TargetSpec("s3://b/p", "http://127.0.0.1:9")
    first = S3Target(spec)._client
    assert S3Target(spec)._client is first  # a client costs tens of ms: a small sync must not pay it each time
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "two")
    rotated = S3Target(spec)._client
    assert rotated is not first and rotated._request_signer._credentials.access_key == "two"
    creds.write_text("[default]\naws_access_key_id = three\n", encoding="utf-8")
    assert S3Target(spec)._client is not rotated  # a rewritten credentials file is read again


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """The tests' key pair, and no DNS: every name but loopback's fails at once in this process."""
    pytest.importorskip("boto3")
    from tests.helpers.seaweed import use_test_credentials
    from tests.helpers.wrong_endpoints import without_dns

    use_test_credentials(monkeypatch, tmp_path)
    return without_dns(monkeypatch)


def test_without_an_endpoint_every_error_names_aws_and_the_endpoint_url_option(aws_env):
    """`s3://my-bucket/memories` without --endpoint-url goes to AWS: a newcomer who meant MinIO
    is told which endpoint was tried and what to give instead, whatever AWS answers."""
    from botocore.exceptions import ClientError

    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import spec_from

    target = S3Target(spec_from("s3://my-bucket/memories"))
    with pytest.raises(MemoriesError) as caught:
        target.list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert "the host name my-bucket.s3.amazonaws.com does not resolve" in caught.value.message
    aws = "https://s3.amazonaws.com is AWS S3's endpoint: for MinIO, R2, B2 or SeaweedFS give --endpoint-url."
    assert caught.value.message.endswith(aws)
    assert aws_env and {name.endswith(".amazonaws.com") for name in aws_env} == {True}  # asked nobody else
    refused = target._failed(ClientError({"Error": {"Code": "InvalidAccessKeyId"},  # what AWS answers MinIO's keys
                                          "ResponseMetadata": {"HTTPStatusCode": 403}}, "ListObjectsV2"))
    assert refused.code == "sync_target_credentials" and refused.message.endswith(aws)
    assert "test" not in refused.message  # the key pair (test/test) is never shown


def test_an_endpoint_host_that_does_not_resolve_is_named_and_not_left_to_waiting(aws_env):
    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import spec_from

    with pytest.raises(MemoriesError) as caught:
        S3Target(spec_from("s3://b/p", "https://minio.nohost.invalid:9000")).list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert caught.value.message == ("Cannot reach the S3 store for s3://b/p: the host name minio.nohost.invalid does "
                                    "not resolve (check --endpoint-url). Endpoint tried: "
                                    "https://minio.nohost.invalid:9000.")


@pytest.mark.parametrize("case", ["https to a plain-http server", "http to an https server", "an untrusted certificate"])
def test_a_wrong_endpoint_scheme_or_an_untrusted_certificate_names_the_port(case, aws_env, tmp_path):
    from memories_tui.sync.s3 import S3Target
    from memories_tui.sync.targets import spec_from
    from tests.helpers.wrong_endpoints import plain_http_server, tls_server

    with plain_http_server() as plain, tls_server(tmp_path) as tls:
        endpoint, expected = {
            "https to a plain-http server": (f"https://127.0.0.1:{plain}", (
                f"the server at 127.0.0.1:{plain} does not speak https (TLS handshake failed): check the port, or "
                f"give --endpoint-url http://127.0.0.1:{plain} if the store has no TLS.")),
            "http to an https server": (f"http://127.0.0.1:{tls}", (
                f"the server at 127.0.0.1:{tls} speaks https, not plain http: give --endpoint-url "
                f"https://127.0.0.1:{tls}.")),
            "an untrusted certificate": (f"https://127.0.0.1:{tls}", (
                f"the server at 127.0.0.1:{tls} shows a certificate this machine does not trust (self-signed "
                "certificate).")),
        }[case]
        with pytest.raises(MemoriesError) as caught:
            S3Target(spec_from("s3://b/p", endpoint)).list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert caught.value.message == f"Cannot reach the S3 store for s3://b/p: {expected} Endpoint tried: {endpoint}."
