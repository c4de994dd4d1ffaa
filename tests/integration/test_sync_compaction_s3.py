"""Compaction through a real S3-compatible server (SeaweedFS on 127.0.0.1, stopped by its pid):
deletes go through the same client as puts, the bucket's object count stays bounded over many
syncs, and a device joining afterwards gets everything from the snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.sync import compaction
from tests.helpers.sync import first_device, joined_device

BUCKET = "memories-compact"
K = 3


@pytest.fixture(scope="module")
def seaweed():
    from tests.helpers.seaweed import seaweed_server

    with seaweed_server() as server:
        yield server


@pytest.fixture
def bucket(seaweed, monkeypatch, tmp_path):
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    import boto3

    client = boto3.client("s3", endpoint_url=seaweed.endpoint)
    try:
        client.create_bucket(Bucket=BUCKET)
    except client.exceptions.BucketAlreadyOwnedByYou:  # the server is shared by the module's tests
        pass
    return client


def _home(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.toml").write_text(f"[sync]\ncompact_after = {K}\n", encoding="utf-8")
    return path


def _count(client, prefix: str) -> int:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sum(len(page.get("Contents", [])) for page in pages)


def test_the_bucket_stays_bounded_and_a_late_join_reads_the_snapshot(bucket, seaweed, tmp_path, cheap_kdf,
                                                                     monkeypatch):
    monkeypatch.setattr(compaction, "PUBLISH_EVERY", 1)
    url = f"s3://{BUCKET}/vault"
    a = first_device(_home(tmp_path / "a"), url, seaweed.endpoint)
    rid = a.add("note", "v0 同步")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), url, seaweed.endpoint)
    counts = []
    for i in range(24):
        a.edit(rid, f"v{i + 1} 同步")
        a.sync()
        b.sync()
        counts.append(_count(bucket, "vault/"))
    assert max(counts[8:]) <= max(counts[:8]) + 1 and counts[-1] <= 2 * K + 6  # no growth with the syncs
    late = joined_device(_home(tmp_path / "late"), url, seaweed.endpoint)
    assert late.records() == a.records() == b.records()
    assert late.records()[rid][2] == "v24 同步"
    for device in (a, b, late):
        device.close()


def test_a_forgotten_device_is_deleted_from_the_bucket_and_an_offline_one_stops_holding_back(
        bucket, seaweed, tmp_path, cheap_kdf, monkeypatch):
    """Through S3: `lost` is forgotten, carried in a's snapshot, then every object under its
    prefix is deleted and a device joining afterwards has its records; `away` stays offline
    past `hold_days` by a's clock, a's bundles go, and `away` catches up with its own edit kept."""
    import time

    monkeypatch.setattr(compaction, "PUBLISH_EVERY", 1)
    url = f"s3://{BUCKET}/gc"
    a = first_device(_home(tmp_path / "a"), url, seaweed.endpoint)
    rid = a.add("note", "v0")
    a.sync()
    lost = joined_device(_home(tmp_path / "lost"), url, seaweed.endpoint)
    away = joined_device(_home(tmp_path / "away"), url, seaweed.endpoint)
    from_lost = lost.add("from the lost device", "同步 kept")
    lost_id = lost.sync().device
    a.sync()
    a.engine.sync_forget(a.vault_id, lost_id)
    from_away = away.add("written while away", "kept")
    for i in range(2 * K):
        a.edit(rid, f"v{i + 1}")
        device_a = a.sync().device
    assert _count(bucket, f"gc/d/{lost_id}/") == 0
    assert _count(bucket, f"gc/d/{device_a}/0000000002") == 1  # away has not read it: held
    real = time.time_ns
    monkeypatch.setattr(compaction, "wall_ms", lambda: real() // 1_000_000 + 31 * compaction.DAY_MS)
    a.edit(rid, "last")
    a.sync()
    assert _count(bucket, f"gc/d/{device_a}/0000000002") == 0
    monkeypatch.setattr(compaction, "wall_ms", lambda: real() // 1_000_000)
    away.sync()
    a.sync()
    late = joined_device(_home(tmp_path / "late"), url, seaweed.endpoint)
    assert late.records() == a.records() == away.records()
    assert from_lost in late.records() and from_away in late.records() and late.records()[rid][2] == "last"
    for device in (a, lost, away, late):
        device.close()
