"""Metadata in a three-way merge: one side's change is taken whole, as before (so a merge older
builds make is the same revision); changed on both sides it merges key by key, and a key both
changed differently is a conflict, except a device's own stat of a source file (two devices
keeping one Syncthing folder as a source record one change with their own paths and times)."""

from __future__ import annotations

import json

from memories_tui.sync.threeway import merge_payloads


def _payload(body: str, **metadata: object) -> str:
    return json.dumps({"title": "Tea", "body": body, "metadata": metadata, "updated": "2026-12-06T10:00:00Z"})


BASE = _payload("Oolong\n", source_id="8bd457a7", source_rel="tea.md", sha256="aa", source_path="/home/a/Notes/tea.md",
                source_size=7, source_mtime_ns=1)


def test_the_same_file_change_recorded_on_two_devices_merges_with_the_winners_stat() -> None:
    winner = _payload("Oolong, 90C\n", source_id="8bd457a7", source_rel="tea.md", sha256="bb",
                      source_path="/home/a/Notes/tea.md", source_size=12, source_mtime_ns=5)
    other = _payload("Oolong, 90C\n", source_id="8bd457a7", source_rel="tea.md", sha256="bb",
                     source_path="/Users/a/Sync/Notes/tea.md", source_size=12, source_mtime_ns=6)
    merged = merge_payloads(BASE, winner, other)
    assert merged is not None
    fields = json.loads(merged)
    assert fields["body"] == "Oolong, 90C\n" and fields["metadata"]["sha256"] == "bb"
    assert fields["metadata"]["source_mtime_ns"] == 5  # changed both ways: the winner's
    assert fields["metadata"]["source_path"] == "/Users/a/Sync/Notes/tea.md"  # changed on one side only: that side's
    assert json.loads(merge_payloads(BASE, other, winner) or "{}")["metadata"]["source_mtime_ns"] == 6


def test_metadata_keys_changed_on_different_sides_merge_and_one_changed_both_ways_conflicts() -> None:
    left = _payload("Oolong\n", **{**json.loads(BASE)["metadata"], "source_gone": "2026-12-06T11:00:00Z"})
    right = _payload("Oolong\n", **{**json.loads(BASE)["metadata"], "origin": "phone"})
    merged = merge_payloads(BASE, left, right)
    assert merged is not None
    assert {"source_gone", "origin"} <= set(json.loads(merged)["metadata"])
    one = _payload("Oolong\n", **{**json.loads(BASE)["metadata"], "sha256": "cc"})
    two = _payload("Oolong\n", **{**json.loads(BASE)["metadata"], "sha256": "dd"})
    assert merge_payloads(BASE, one, two) is None  # the file's bytes differ: not a device's own stat


def test_metadata_changed_on_one_side_is_taken_whole_as_before() -> None:
    changed = _payload("Oolong\n", z_last="1", source_rel="tea.md", sha256="aa")  # keys reordered and removed
    merged = merge_payloads(BASE, BASE, changed)
    assert merged is not None and list(json.loads(merged)["metadata"]) == ["z_last", "source_rel", "sha256"]


def test_tags_changed_on_both_sides_keep_every_addition_and_no_removal() -> None:
    def tagged(*tags: str) -> str:
        return json.dumps({"title": "Tea", "body": "x\n", "tags": list(tags), "updated": "2026-12-06T10:00:00Z"})

    merged = merge_payloads(tagged("tea", "old"), tagged("tea", "green"), tagged("recipe", "tea", "old"))
    assert merged is not None and json.loads(merged)["tags"] == ["tea", "green", "recipe"]
    assert json.loads(merge_payloads(tagged("a"), tagged("a", "b"), tagged("a")) or "{}")["tags"] == ["a", "b"]
