"""The sync verbs as a user types them: add, `sync VAULT`, status (with and without a vault,
--json), join on a fresh home, `memory conflicts`, and clear one-line errors for bad targets
(a key in an S3 URL is refused, never stored)."""

from __future__ import annotations

import shutil

from tests.helpers.cli import call_cli


def test_sync_verbs_from_add_to_conflicts(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    vault_id = call_cli(a, "--json", "vault", "create", "notes").json["vault_id"]
    rid = call_cli(a, "--json", "memory", "add", "notes", "--title", "hello", "--text", "one").json["id"]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    pushed = call_cli(a, "--json", "sync", "notes")  # `sync VAULT` is `sync now VAULT`
    assert pushed.code == 0 and pushed.json["pushed_revisions"] == 1
    egress = call_cli(a, "rag", "egress", "notes").stdout.splitlines()  # the push as a reader sees it
    column = next(line for line in egress if "OBJECTS" in line).index("OBJECTS")
    row = next(line for line in egress if " sync " in line)
    assert row[column:].split()[0] == str(pushed.json["pushed_objects"])
    joined = call_cli(b, "--json", "sync", "join", str(folder))
    assert joined.code == 0 and joined.json["vault_id"] == vault_id
    assert call_cli(a, "--json", "memory", "update", "notes", rid, "--text", "on a").code == 0
    assert call_cli(b, "--json", "memory", "update", "notes", rid, "--text", "on b").code == 0
    for home in (a, b, a):
        synced = call_cli(home, "sync", "now", "notes")
        assert synced.code == 0
    assert "`memories memory conflicts notes`" in synced.stdout, synced.stdout  # the name the user gave
    shown = [call_cli(home, "--json", "memory", "conflicts", "notes").json["conflicts"] for home in (a, b)]
    here = [[kept.pop("here") for c in listing for kept in c["kept"]] for listing in shown]
    assert len(here[0]) == 1 and here[0] == [not h for h in here[1]]  # the edit that lost was made on one of them
    assert shown[0] == shown[1] and [c["record_id"] for c in shown[0]] == [rid]
    for home, made_here in zip((a, b), here, strict=True):  # reading the record says so; the listing shows
        assert call_cli(home, "--json", "memory", "read", "notes", rid).json["conflict"] is True
        read = call_cli(home, "memory", "read", "notes", rid).stdout
        assert f"`memories memory resolve notes {rid}`" in read, read
        listed = call_cli(home, "memory", "conflicts", "notes").stdout
        lost = shown[0][0]["kept"][0]
        assert lost["revision"] in listed and f"    {lost['body']}" in listed and "--keep-both" in listed, listed
        assert ("(this device's edit)" in listed) == made_here[0], listed  # the text that lost, whose, what to do
    assert "conflict" not in call_cli(a, "--json", "memory", "read", "notes", rid, "--revision", "1").json
    status = call_cli(a, "--json", "sync", "status", passphrase=None).json["targets"]
    assert [(s["name"], s["vault_id"], s["url"], s["conflicts"], s["last_error"]) for s in status] == [
        ("notes", vault_id, str(folder), 1, None)]
    text = call_cli(b, "sync", "status", "notes", passphrase=None)
    assert str(folder) in text.stdout and text.code == 0
    assert text.stdout.splitlines()[1].startswith("notes ")  # the vault's name first, no passphrase asked
    assert "`memories memory conflicts notes` lists" in text.stdout
    devices = call_cli(a, "--json", "sync", "devices", "notes").json["devices"]
    assert sorted((d["this_device"], d["bundles"], d["read_here"]) for d in devices) == [(False, 1, 1), (True, 2, 2)]
    assert call_cli(b, "--json", "memory", "resolve", "notes", rid).json["ended"] == 1
    for home in (b, a):
        assert call_cli(home, "sync", "notes").code == 0
        assert call_cli(home, "--json", "memory", "conflicts", "notes").json["conflicts"] == []
        assert call_cli(home, "--json", "memory", "read", "notes", rid).json["conflict"] is False
        assert "conflict" not in call_cli(home, "memory", "read", "notes", rid).stdout


def test_bad_targets_are_one_clear_line(tmp_path):
    home = tmp_path / "a"
    call_cli(home, "vault", "create", "notes")
    missing = call_cli(home, "sync", "add", "notes", str(tmp_path / "absent"))
    assert missing.code == 1 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    assert call_cli(home, "--json", "sync", "notes").json["error"]["code"] == "sync_no_target"
    bad = call_cli(home, "--json", "sync", "add", "notes", "ftp://host/x")
    assert bad.json["error"]["code"] == "sync_bad_target"
    empty = tmp_path / "Empty"
    empty.mkdir()
    nothing = call_cli(tmp_path / "b", "--json", "sync", "join", str(empty))
    assert nothing.json["error"]["code"] == "sync_nothing_to_join"


def test_a_folder_that_is_in_or_around_the_home_is_refused_with_what_to_do(tmp_path, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    call_cli(home, "vault", "create", "notes")
    (home / "inside").mkdir()
    elsewhere.mkdir()
    (elsewhere / "to-home").symlink_to(home)
    (elsewhere / "to-vaults").symlink_to(home / "vaults")
    monkeypatch.chdir(elsewhere)
    for target in (str(home), str(home / "vaults"), str(home / "inside"), str(tmp_path), "to-home",
                   "to-vaults", "to-home/inside", ".."):
        refused = call_cli(home, "--json", "sync", "add", "notes", target)
        assert refused.code == 1 and refused.json["error"]["code"] == "sync_bad_target", (target, refused.stdout)
        assert "~/Sync/memories" in refused.json["error"]["message"]
    fresh = tmp_path / "fresh"  # a home that is made by the join
    for target in (str(fresh), str(fresh / "vaults"), str(tmp_path), "../fresh"):
        joined = call_cli(fresh, "--json", "sync", "join", target)
        assert joined.code == 1 and joined.json["error"]["code"] == "sync_bad_target", (target, joined.stdout)
    assert not fresh.exists()
    shown = call_cli(home, "sync", "add", "notes", str(home))
    assert shown.code == 1 and len(shown.stderr.strip().splitlines()) == 1 and "Traceback" not in shown.stderr
    assert "vault files" in shown.stderr and "~/Sync/memories" in shown.stderr
    for folder in (home, home / "vaults", tmp_path):  # nothing of a target written, no target stored
        assert {"key", "d", "sync.json"}.isdisjoint(p.name for p in folder.iterdir()), folder
    assert not list((home / "inside").iterdir())
    assert call_cli(home, "--json", "sync", "add", "notes", str(elsewhere)).code == 0  # beside the home: fine


def test_adding_the_same_target_again_keeps_the_status_and_another_target_starts_blank(tmp_path):
    home, folder = tmp_path / "a", tmp_path / "Sync"
    folder.mkdir()
    call_cli(home, "vault", "create", "notes")
    assert call_cli(home, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(home, "sync", "notes").code == 0
    call_cli(home, "memory", "add", "notes", "--title", "after the sync", "--text", "waits to be pushed")

    def status():
        [target] = call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"]
        return {k: target[k] for k in ("url", "last_sync", "pending", "last_error", "conflicts")}

    before = status()
    assert before["last_sync"] is not None and before["pending"] == 1
    assert call_cli(home, "sync", "add", "notes", str(folder)).code == 0  # as after `vault passwd`
    assert status() == before
    assert call_cli(home, "sync", "remove", "notes").code == 0
    assert call_cli(home, "sync", "add", "notes", str(folder)).code == 0  # after `sync remove`
    assert status() == before
    shown = call_cli(home, "sync", "status", passphrase=None).stdout.splitlines()[1].split()
    assert before["last_sync"] in shown and "1" in shown, shown  # LAST SYNC and PENDING, not "-"
    moved = tmp_path / "Moved"
    shutil.copytree(folder, moved)
    assert call_cli(home, "sync", "add", "notes", str(moved)).code == 0  # another target: blank
    assert status() == {"url": str(moved), "last_sync": None, "pending": None, "last_error": None, "conflicts": 0}
    assert call_cli(home, "sync", "remove", "notes").code == 0
    assert call_cli(home, "sync", "add", "notes", str(folder)).code == 0  # not the one removed last: blank
    assert status()["last_sync"] is None


def test_an_s3_url_or_endpoint_holding_a_key_is_refused_without_storing_or_repeating_it(tmp_path):
    home = tmp_path / "a"
    call_cli(home, "vault", "create", "notes")
    for args in (("s3://bucket/p", "--endpoint-url", "http://AKIDEXAMPLE:s3cr3t-31@127.0.0.1:9"),
                 ("s3://AKIDEXAMPLE:s3cr3t-31@bucket/p",)):
        refused = call_cli(home, "--json", "sync", "add", "notes", *args)
        assert refused.code == 1 and refused.json["error"]["code"] == "sync_bad_target"
        assert "s3cr3t-31" not in refused.stdout + refused.stderr
        joined = call_cli(tmp_path / "b", "sync", "join", *args)
        assert joined.code == 1 and "s3cr3t-31" not in joined.stdout + joined.stderr
    assert not (home / "sync.json").exists() or "s3cr3t-31" not in (home / "sync.json").read_text(encoding="utf-8")


def test_keep_both_makes_the_losing_revision_a_new_record_on_every_device(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    rid = call_cli(a, "--json", "memory", "add", "notes", "--title", "plan", "--text", "one",
                   "--tag", "trip").json["id"]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for home, text in ((a, "on a"), (b, "on b")):
        assert call_cli(home, "memory", "update", "notes", rid, "--text", text).code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    winner = call_cli(a, "--json", "memory", "read", "notes", rid).json["body"]
    loser = ({"on a", "on b"} - {winner}).pop()
    both = call_cli(a, "--json", "memory", "resolve", "notes", rid, "--keep-both")
    assert both.code == 0 and len(both.json["copies"]) == 1
    copy = call_cli(a, "--json", "memory", "read", "notes", both.json["copies"][0]).json
    assert (copy["title"], copy["body"], copy["tags"]) == ("plan (conflict copy)", loser, ["trip"])
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    for home in (a, b):
        assert call_cli(home, "--json", "memory", "conflicts", "notes").json["conflicts"] == []
        listed = call_cli(home, "--json", "memory", "list", "notes").json
        assert sorted(r["title"] for r in listed["records"]) == [
            "plan", "plan (conflict copy)"]
    again = call_cli(a, "--json", "memory", "resolve", "notes", rid, "--keep-both")
    assert again.code != 0 and again.json["error"]["code"] == "no_conflict"
def test_sync_forget_leaves_a_device_out_and_keeps_its_changes(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "from a", "--text", "first")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    rid = call_cli(b, "--json", "memory", "add", "notes", "--title", "from b", "--text", "kept").json["id"]
    assert call_cli(b, "sync", "notes").code == 0
    devices = {d["this_device"]: d["device"] for d in call_cli(a, "--json", "sync", "devices", "notes").json["devices"]}
    self_refused = call_cli(a, "--json", "sync", "forget", "notes", devices[True])
    assert self_refused.json["error"]["code"] == "sync_forget_self"
    unknown = call_cli(a, "--json", "sync", "forget", "notes", "ffffffffffff")
    assert unknown.json["error"]["code"] == "sync_unknown_device"
    gone = call_cli(a, "--json", "sync", "forget", "notes", devices[False][:8])  # a unique prefix is enough
    assert gone.code == 0 and gone.json["forgotten"]["device"] == devices[False]
    for home in (a, b):
        listed = call_cli(home, "--json", "sync", "devices", "notes").json["devices"]
        assert devices[False] not in [d["device"] for d in listed] or home == b  # b still sees itself
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(a, "--json", "memory", "read", "notes", rid).json["title"] == "from b"  # its changes stay
    call_cli(b, "memory", "add", "notes", "--title", "b again", "--text", "back")
    assert call_cli(b, "sync", "notes").code == 0  # it writes again: listed again
    assert devices[False] in [d["device"] for d in call_cli(a, "--json", "sync", "devices", "notes").json["devices"]]


def test_joining_where_the_name_is_taken_says_how_to_join_under_another(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    call_cli(b, "vault", "create", "notes")  # another vault of the same name on this home
    taken = call_cli(b, "--json", "sync", "join", str(folder))
    assert taken.code == 1 and taken.json["error"]["code"] == "vault_exists"
    assert f"memories sync join {folder} --as NAME" in taken.json["error"]["message"]
    assert call_cli(b, "sync", "join", str(folder), "--as", "notes from a").code == 0
    listed = call_cli(b, "--json", "vault", "list", passphrase=None).json
    assert sorted(v["name"] for v in listed["vaults"]) == ["notes", "notes from a"]


def _named(home, name: str | None):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("" if name is None else f'[sync]\ndevice_name = "{name}"\n', encoding="utf-8")
    return home


def test_devices_are_listed_by_the_name_they_give_themselves_and_can_be_forgotten_by_it(tmp_path):
    import socket

    from tests.helpers.sync import target_bytes

    a, b, c = _named(tmp_path / "a", "Laptop 筆電"), _named(tmp_path / "b", "desktop"), _named(tmp_path / "c", None)
    folder = tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    none_yet = call_cli(a, "sync", "devices", "notes")  # a bare header would look like a failure
    assert none_yet.code == 0 and "No device has sent changes" in none_yet.stdout and "DEVICE" not in none_yet.stdout
    call_cli(a, "memory", "add", "notes", "--title", "from a", "--text", "first")
    assert call_cli(a, "sync", "notes").code == 0
    for home in (b, c):
        assert call_cli(home, "sync", "join", str(folder)).code == 0
        call_cli(home, "memory", "add", "notes", "--title", f"from {home.name}", "--text", "more")
        assert call_cli(home, "sync", "notes").code == 0

    listed = call_cli(a, "--json", "sync", "devices", "notes").json["devices"]
    assert sorted((d["name"], d["this_device"]) for d in listed) == sorted(
        [("Laptop 筆電", True), ("desktop", False), (" ".join(socket.gethostname().split())[:64], False)])
    table = call_cli(a, "sync", "devices", "notes")
    assert table.code == 0 and "NAME" in table.stdout and "Laptop 筆電" in table.stdout and "desktop" in table.stdout
    stored = target_bytes(folder)
    assert "筆電".encode() not in stored and b"desktop" not in stored and b"Laptop" not in stored  # sealed in the heads

    (b / "config.toml").write_text('[sync]\ndevice_name = "study"\n', encoding="utf-8")
    assert call_cli(b, "sync", "notes").code == 0  # nothing to push: the head is written again for the new name
    names = {d["name"]: d["device"] for d in call_cli(a, "--json", "sync", "devices", "notes").json["devices"]}
    assert "study" in names and "desktop" not in names
    gone = call_cli(a, "--json", "sync", "forget", "notes", "STUDY")  # a name, in any case
    assert gone.code == 0 and gone.json["forgotten"]["device"] == names["study"]
    assert "study" not in {d["name"] for d in call_cli(a, "--json", "sync", "devices", "notes").json["devices"]}

    (c / "config.toml").write_text('[sync]\ndevice_name = "Laptop 筆電"\n', encoding="utf-8")
    assert call_cli(c, "sync", "notes").code == 0
    twice = call_cli(c, "--json", "sync", "forget", "notes", "laptop 筆電")  # a's and c's name: which one is meant?
    assert twice.code != 0 and twice.json["error"]["code"] == "sync_unknown_device"
    assert "2" in twice.json["error"]["message"]
