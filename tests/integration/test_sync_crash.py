"""kill -9 at each step of a sync (after verifying the pull, after the commit, between the
bundles and the head), then sync again: every device converges and nothing is lost. Only the
killed sync is a real process; the rest runs in this one (call_cli) to keep the test short."""

from __future__ import annotations

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.faults import killed_at


def _titles(home) -> set[str]:
    return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}


@pytest.mark.parametrize("point", ["sync-before-commit", "sync-after-commit", "sync-before-head"])
def test_a_sync_killed_at_any_step_resumes_and_converges(tmp_path, point):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "a-1", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    call_cli(b, "memory", "add", "notes", "--title", "b-1", "--text", "from b")
    assert call_cli(b, "sync", "notes").code == 0
    call_cli(a, "memory", "add", "notes", "--title", "a-2", "--text", "two")  # a has something to push and to pull
    killed_at(point, a, tmp_path, "sync", "notes")
    for home in (a, b, a):
        done = call_cli(home, "sync", "notes")
        assert done.code == 0, done.stderr
    assert _titles(a) == _titles(b) == {"a-1", "a-2", "b-1"}


@pytest.mark.parametrize("device", ["joining", "behind"])
def test_a_pull_killed_after_it_committed_part_of_what_it_pulled_goes_on_at_the_next_sync(tmp_path, cheap_kdf,
                                                                                         device):
    """A join, or a sync of a device with nothing of its own to send, commits every few
    megabytes as it reads (sync/stream.py): killed after the first of those commits, it leaves
    a vault holding that part; the next sync brings the rest."""
    from memories_tui.engine import Engine
    from memories_tui.vault.records import NewRecord
    from tests.helpers.cli import PASS

    folder, b = tmp_path / "Sync", tmp_path / "b"
    folder.mkdir()
    for home in (tmp_path / "a", b):  # room for more chunks than the default limit
        home.mkdir()
        (home / "config.toml").write_text("[rag.limits]\nchunks = 100000\n", encoding="utf-8")
    engine = Engine.open(tmp_path / "a")
    vault = engine.create_vault("notes", PASS)
    engine.unlock(vault.vault_id, PASS)
    engine.sync_add(vault.vault_id, str(folder), PASS)
    if device == "behind":  # b joins while the vault holds one note, then a imports the rest
        engine.add_records(vault.vault_id, [NewRecord("memory", "first", "one note")])
        engine.sync_now(vault.vault_id)
        assert call_cli(b, "sync", "join", str(folder)).code == 0
    text = "同步 a paragraph of notes. " * 90  # ~2.4 KB: 3,000 of them are about two commits' worth
    engine.add_records(vault.vault_id, [NewRecord("memory", f"n{i}", f"{i} {text}") for i in range(3000)])
    engine.sync_now(vault.vault_id)
    titles = {r.title for r in engine.list_records(vault.vault_id)}
    engine.close()
    if device == "joining":
        killed_at("sync-after-streamed-commit", b, tmp_path, "sync", "join", str(folder))
    else:
        killed_at("sync-after-streamed-commit", b, tmp_path, "sync", "notes")
    part = _titles(b)
    assert len(titles) - 3000 < len(part) < len(titles) and part < titles
    done = call_cli(b, "sync", "notes")
    assert done.code == 0, done.stderr
    assert _titles(b) == titles
