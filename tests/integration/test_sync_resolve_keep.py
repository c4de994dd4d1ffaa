"""`memory resolve --keep` of what `memory conflicts` lists: a deletion an edit beat can be kept
(the record is deleted on every device, however many edits it conflicts with), and a unique
start of a revision id names it, as a unique start of a device id does for `sync forget`. An
unknown or ambiguous start is one clear line."""

from __future__ import annotations

import pytest

from memories_tui.errors import MemoriesError
from memories_tui.sync.types import Conflict, ConflictRevision
from tests.helpers.cli import call_cli
from tests.helpers.sync import first_device, joined_device


@pytest.fixture
def devices(tmp_path, cheap_kdf):
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("first note", "made on a")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    c = joined_device(tmp_path / "c", str(folder))
    yield a, b, c
    for device in (a, b, c):
        device.close()


def _sync_all(*devices) -> None:
    for _ in range(2):
        for device in devices:
            device.sync()


def test_keeping_a_listed_deletion_deletes_the_record_on_every_device(devices):
    """a deletes the note while b and c edit it (overlapping edits: no merge). The kept deletion
    must close both edits, else the losing one would win once the winner is deleted."""
    a, b, c = devices
    rid = next(iter(a.records()))
    a.delete(rid)
    b.edit(rid, "edit on b")
    c.edit(rid, "edit on c")
    _sync_all(a, b, c)
    winner = a.records()[rid][2]
    loser = ({"edit on b", "edit on c"} - {winner}).pop()
    for device in (a, b, c):
        assert device.conflicts() == {rid: {(True, None), (False, loser)}}
    deletion = next(k.revision for k in b.engine.conflicts(b.vault_id)[0].kept if k.deleted)
    ended = b.engine.resolve_conflict(b.vault_id, rid, keep=deletion)
    assert ended.record_id == rid and len(ended.kept) == 2
    assert rid not in b.records() and b.conflicts() == {}
    _sync_all(a, b, c)
    for device in (a, b, c):
        assert rid not in device.records() and device.conflicts() == {}
        assert device.engine.memory_search(device.vault_id, "edit") == []


def test_keep_takes_a_unique_start_of_a_listed_deletion_and_refuses_an_unknown_one(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    rid = call_cli(a, "--json", "memory", "add", "notes", "--title", "plan", "--text", "one").json["id"]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    assert call_cli(a, "memory", "delete", "notes", rid).code == 0
    assert call_cli(b, "memory", "update", "notes", rid, "--text", "kept alive on b").code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    [kept] = call_cli(a, "--json", "memory", "conflicts", "notes").json["conflicts"][0]["kept"]
    assert kept["deleted"] is True
    assert f"  {kept['revision']}  " in call_cli(a, "memory", "conflicts", "notes").stdout
    text = call_cli(a, "memory", "resolve", "notes", rid, "--keep", kept["revision"][:8])
    assert text.code == 0 and kept["revision"] in text.stdout and "deleted" in text.stdout, text.stdout + text.stderr
    unknown = call_cli(b, "memory", "resolve", "notes", rid, "--keep", "zzzz")  # b has not synced the resolution yet
    assert unknown.code != 0 and "Traceback" not in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    assert "zzzz" in unknown.stderr and "`memories memory conflicts notes`" in unknown.stderr, unknown.stderr
    assert call_cli(b, "--json", "memory", "resolve", "notes", rid, "--keep", "zz").json["error"]["code"] == (
        "no_conflict")
    for home in (a, b):
        assert call_cli(home, "sync", "notes").code == 0
        assert call_cli(home, "--json", "memory", "conflicts", "notes").json["conflicts"] == []
        assert call_cli(home, "--json", "memory", "read", "notes", rid).json["error"]["code"] == "not_found"


def test_keep_json_names_the_whole_revision_kept_from_a_start_of_it(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    rid = call_cli(a, "--json", "memory", "add", "notes", "--title", "plan", "--text", "one").json["id"]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for home, text in ((a, "on a"), (b, "on b")):
        assert call_cli(home, "memory", "update", "notes", rid, "--text", text).code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    [kept] = call_cli(b, "--json", "memory", "conflicts", "notes").json["conflicts"][0]["kept"]
    done = call_cli(b, "--json", "memory", "resolve", "notes", rid, "--keep", kept["revision"][:6].upper())
    assert done.json == {"vault_id": done.json["vault_id"], "record_id": rid, "kept": kept["revision"],
                         "deleted": False, "ended": 1}
    for home in (b, a):
        assert call_cli(home, "sync", "notes").code == 0
        assert call_cli(home, "--json", "memory", "read", "notes", rid).json["body"] == kept["body"]


def test_an_ambiguous_start_lists_the_revisions_it_could_be():
    from memories_tui.engine.conflict_ops import _named

    conflict = Conflict("r1", "note", [ConflictRevision("ab12" + "0" * 20, False, "x", "x"),
                                        ConflictRevision("ab34" + "0" * 20, True, None, None)])
    assert _named("notes", conflict, "ab3") == "ab34" + "0" * 20
    assert _named("notes", conflict, "ab12" + "0" * 20) == "ab12" + "0" * 20
    with pytest.raises(MemoriesError) as caught:
        _named("notes", conflict, "ab")
    message = caught.value.localized()
    assert caught.value.code == "no_conflict" and "\n" not in message
    assert "ab12" + "0" * 20 in message and "ab34" + "0" * 20 in message, message
    for nothing in ("", "  ", "cd"):
        with pytest.raises(MemoriesError):
            _named("notes", conflict, nothing)
