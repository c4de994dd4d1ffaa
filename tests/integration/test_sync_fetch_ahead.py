"""A pull asks for several objects at once (sync/ahead.py): the heads of the devices, then the
bundles of a chain a few ahead of the one being read (small ones: a large bundle is fetched when
it is read), so a remote target's round trips overlap.
Each getter below lets its object go only once another one is asked for at the same time: a
pull that fetched one object after the other would wait there and fail."""

from __future__ import annotations

import threading

from memories_tui.sync import run, snapshots
from memories_tui.sync.folder import FolderTarget
from tests.helpers.sync import first_device, joined_device


def _waits_for_company(monkeypatch, wanted) -> list[str]:  # noqa: ANN001
    """FolderTarget.get, where the names `wanted` picks wait for each other in pairs."""
    pair = threading.Barrier(2, timeout=10)
    real = FolderTarget.get
    met: list[str] = []
    lock = threading.Lock()

    def get(self, name, limit=None):  # noqa: ANN001, ANN202
        with lock:
            waits = wanted(name) and len(met) < 2
            if waits:
                met.append(name)
        if waits:
            pair.wait()  # BrokenBarrierError (the sync fails) unless a second get comes meanwhile
        return real(self, name, limit)

    monkeypatch.setattr(FolderTarget, "get", get)
    return met


def test_the_heads_and_the_bundles_of_a_pull_are_fetched_a_few_at_once(tmp_path, cheap_kdf, monkeypatch):
    monkeypatch.setattr(run, "BUNDLE_BYTES", 3000)  # a push of several bundles
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("from a", "first")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    c = joined_device(tmp_path / "c", str(folder))
    c.add("from c", "second")
    c.sync()
    for i in range(12):
        a.add(f"note {i}", f"{i} " + "line of text " * 60)
    a.sync()
    met = _waits_for_company(monkeypatch, lambda name: name.endswith("/head"))
    b.sync()  # the heads of a, b and c
    assert len(met) == 2
    a_id, read = next((d.device, d.bundles) for d in a.engine.sync_devices(a.vault_id) if d.this_device)
    for i in range(12):
        a.add(f"more {i}", f"{i} " + "line of text " * 60)
    a.sync()
    met = _waits_for_company(monkeypatch, lambda name: name.startswith(f"d/{a_id}/") and name[-1].isdigit()
                             and int(name.rsplit("/", 1)[1]) > read + 1)  # the first tells how large they are
    b.sync()  # a's new bundles
    assert len(met) == 2
    assert b.records() == a.records() and len(b.records()) == 26  # every note, a's and c's


def test_a_join_fetches_the_parts_of_a_snapshot_ahead(tmp_path, cheap_kdf, monkeypatch):
    monkeypatch.setattr(snapshots, "PART_BYTES", 2000)  # a snapshot of several parts
    folder = tmp_path / "Sync"
    folder.mkdir()
    home = tmp_path / "a"
    home.mkdir()
    (home / "config.toml").write_text("[sync]\ncompact_after = 1\n", encoding="utf-8")
    a = first_device(home, str(folder))
    for i in range(8):
        a.add(f"note {i}", f"{i} " + "line of text " * 40)
    a.sync()
    a.add("one more", "after the first bundle")
    a.sync()  # compacts: the head names a snapshot
    assert len(list(folder.glob("d/*/s*-*"))) >= 3, "no snapshot of several parts: the test would test little"
    met = _waits_for_company(monkeypatch, lambda name: "/s" in name and not name.endswith("-0000"))
    b = joined_device(tmp_path / "b", str(folder))  # the first part tells how many follow
    assert len(met) == 2
    assert b.records() == a.records() and len(b.records()) == 9
