"""Sync through a real WebDAV server (WsgiDAV on 127.0.0.1, started once for this file, stopped by
its pid): two homes converge through one collection, tampering is refused as for the other
targets, the server's folder holds no plaintext, and wrong credentials, a missing collection and
an unreachable server are clear errors. Credentials come from the environment variables."""

from __future__ import annotations

import json

import pytest

from memories_tui.errors import MemoriesError
from tests.helpers.sync import SYNC_PASS, first_device, joined_device, target_bytes


@pytest.fixture(scope="module")
def dav():
    from tests.helpers.dav import dav_server

    with dav_server() as server:
        yield server


@pytest.fixture
def dav_env(dav, monkeypatch, tmp_path):
    from tests.helpers.dav import PASSWORD, USER

    monkeypatch.setenv("MEMORIES_WEBDAV_USERNAME", USER)
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", PASSWORD)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    return dav


def _collection(dav, name: str) -> str:
    (dav.root / name).mkdir()
    return dav.url + name


def test_two_homes_converge_through_webdav_with_conflicts_kept_and_no_plaintext(dav_env, tmp_path, cheap_kdf):
    canary = "同步金絲雀 canary-dav 机密"
    url = _collection(dav_env, "Memories")
    a = first_device(tmp_path / "a", url, device_only=True)  # a server on 127.0.0.1 is on this machine
    rid = a.add("laptop note", f"written on the laptop {canary}")
    report = a.sync()
    b = joined_device(tmp_path / "b", url.replace("http://", "webdav://"))
    assert [h.title for h in b.engine.memory_search(b.vault_id, "laptop")] == ["laptop note"]
    assert b.records() == a.records()
    a.edit(rid, "offline edit on a")
    b.edit(rid, f"offline edit on b {canary}")
    for device in (a, b, a):
        device.sync()
    assert a.records() == b.records()
    assert a.conflicts() == b.conflicts() and len(a.conflicts()[rid]) == 1
    stored = target_bytes(dav_env.root / "Memories")
    assert b"memories-sync/1" in stored  # the clear join record is there: the search looks in the right place
    for encoding in ("utf-8", "gb18030"):
        assert canary.encode(encoding) not in stored
        assert "金絲雀".encode(encoding) not in stored
    assert rid.encode() not in stored and b"laptop" not in stored
    assert not [p for p in (dav_env.root / "Memories").rglob("*") if p.name.endswith(".tmp")]  # every upload moved
    first = a.engine.egress_log(a.vault_id).entries[0]
    assert (first.purpose, first.host, first.objects, first.bytes_sent) == (
        "sync", url, report.pushed_objects, report.pushed_bytes)
    registry = (tmp_path / "b" / "sync.json").read_text(encoding="utf-8")
    assert json.loads(registry)[b.vault_id]["url"] == url  # webdav:// is kept as the http URL it stands for
    from tests.helpers.dav import PASSWORD

    assert PASSWORD not in registry and PASSWORD not in (tmp_path / "a" / "sync.json").read_text(encoding="utf-8")
    a.close()
    b.close()


def test_an_altered_object_on_the_server_is_refused_and_changes_nothing(dav_env, tmp_path, cheap_kdf):
    url = _collection(dav_env, "tamper")
    a = first_device(tmp_path / "a", url)
    a.add("one", "1")
    a.sync()
    b = joined_device(tmp_path / "b", url)
    a.add("two", "2")
    device = a.sync().device
    bundle = dav_env.root / "tamper" / "d" / device / "0000000002"
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 1
    bundle.write_bytes(bytes(data))
    vault = b.engine._vault(b.vault_id)
    before = b.records(), vault.change_counter(), vault.sync_state()
    with pytest.raises(MemoriesError) as caught:
        b.sync()
    assert caught.value.code == "sync_target_tampered", caught.value.message
    assert (b.records(), vault.change_counter(), vault.sync_state()) == before
    a.close()
    b.close()


def test_an_upload_still_under_its_temporary_name_is_not_there_yet(dav_env, tmp_path, cheap_kdf):
    url = _collection(dav_env, "halfway")
    a = first_device(tmp_path / "a", url)
    a.add("one", "1")
    device = a.sync().device
    half = dav_env.root / "halfway" / "d" / device / ".0000000002.1a2b3c4d.tmp"
    half.write_bytes(b"half an upload")
    b = joined_device(tmp_path / "b", url)
    assert [t for _, t, _ in b.records().values()] == ["one"]
    from memories_tui.sync.targets import open_target, spec_from

    names = open_target(spec_from(url)).list(f"d/{device}/")  # (b, a reader, has a head of its own)
    assert names == sorted([f"d/{device}/0000000001", f"d/{device}/head"])
    a.close()
    b.close()


def test_a_wrong_password_is_a_clear_error_that_does_not_show_it(dav_env, tmp_path, cheap_kdf, monkeypatch):
    url = _collection(dav_env, "wrong")
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", "not the password")
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", url)
    assert caught.value.code == "sync_target_credentials"
    assert "401" in caught.value.message and "MEMORIES_WEBDAV_PASSWORD" in caught.value.message
    assert "came from MEMORIES_WEBDAV_USERNAME and MEMORIES_WEBDAV_PASSWORD" in caught.value.message
    assert "not the password" not in caught.value.message


def test_credentials_come_from_netrc_when_the_variables_are_unset(dav_env, tmp_path, cheap_kdf, monkeypatch):
    from tests.helpers.dav import PASSWORD, USER

    url = _collection(dav_env, "netrc")
    monkeypatch.delenv("MEMORIES_WEBDAV_USERNAME")
    monkeypatch.delenv("MEMORIES_WEBDAV_PASSWORD")
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login {USER} password wrong-one\n", encoding="utf-8")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", url)
    assert caught.value.code == "sync_target_credentials"  # the netrc entry is the one used
    assert f"came from the entry for 127.0.0.1 in {netrc}." in caught.value.message  # $NETRC's file, named
    assert "~/.netrc" not in caught.value.message and "wrong-one" not in caught.value.message
    netrc.write_text(f'machine 127.0.0.1 login {USER} password "{PASSWORD}"\n', encoding="utf-8")
    a = first_device(tmp_path / "b", url)
    a.add("one", "1")
    assert a.sync().pushed_objects >= 1
    a.close()


def test_a_missing_collection_is_a_clear_error(dav_env, tmp_path, cheap_kdf):
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", dav_env.url + "no-such-folder/memories")
    assert caught.value.code == "sync_target_missing"
    assert "no-such-folder" in caught.value.message


def test_a_share_over_quota_is_a_clear_error(dav_env, tmp_path, cheap_kdf):
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", dav_env.full_url)
    assert caught.value.code == "sync_target_full"
    assert "507" in caught.value.message


def test_an_upload_limit_below_a_bundle_is_a_clear_error_and_loses_nothing(dav_env, tmp_path, cheap_kdf):
    """A proxy in front of Nextcloud often keeps its own upload limit (nginx: 1 MB unless set);
    a bundle above it is refused with 413. The sync says how large the object was and which
    setting to raise; the vault keeps every note, and the bundle waits to be sent again."""
    a = first_device(tmp_path / "a", dav_env.small_url)  # the join record is small
    rid = a.add("long note", "a paragraph of text. " * 8000)  # ~170 KB: one bundle above the 64 KB limit
    with pytest.raises(MemoriesError) as caught:
        a.sync()
    message = caught.value.message
    assert caught.value.code == "sync_bad_target"
    assert "413" in message and "client_max_body_size" in message and "KB" in message
    assert a.records()[rid][1] == "long note"
    with pytest.raises(MemoriesError) as again:  # the bundle waits in the vault's outbox, sent again each time
        a.sync()
    assert again.value.message == message and a.records()[rid][1] == "long note"


def test_a_server_that_answers_503_now_and_then_is_tried_again_within_the_sync(dav_env, tmp_path, cheap_kdf):
    """A proxy in front of a busy Nextcloud answers 502/503 now and then, sometimes after passing
    a MOVE on: each request is tried again (twice at most, after a short wait), a MOVE already
    done is taken as done, and the sync goes through instead of failing."""
    a = first_device(tmp_path / "a", dav_env.flaky_url)
    a.add("through a busy proxy", "kept")
    a.sync()
    b = joined_device(tmp_path / "b", dav_env.flaky_url)
    b.add("back through it", "kept too")
    b.sync()
    a.sync()
    assert a.records() == b.records() and len(a.records()) == 2
    a.close()
    b.close()


def test_an_unreachable_server_is_a_clear_error(dav_env, tmp_path, cheap_kdf):
    from tests.helpers.dav import _free_port

    port = _free_port()
    with pytest.raises(MemoriesError) as caught:
        first_device(tmp_path / "a", f"http://127.0.0.1:{port}/Memories")
    assert caught.value.code == "sync_target_unreachable"
    assert f"nothing answers at 127.0.0.1:{port} (is the server running?" in caught.value.message


def test_no_credentials_at_all_names_the_netrc_file_looked_in(dav_env, tmp_path, monkeypatch):
    from memories_tui.sync.targets import open_target, spec_from

    url = _collection(dav_env, "nobody")
    monkeypatch.delenv("MEMORIES_WEBDAV_USERNAME")
    monkeypatch.delenv("MEMORIES_WEBDAV_PASSWORD")
    netrc = tmp_path / "elsewhere" / "netrc-file"
    monkeypatch.setenv("NETRC", str(netrc))
    with pytest.raises(MemoriesError) as caught:
        open_target(spec_from(url)).list("d/")
    assert caught.value.code == "sync_target_credentials"
    assert f"No credentials were sent: MEMORIES_WEBDAV_USERNAME and MEMORIES_WEBDAV_PASSWORD are not set, and there " \
        f"is no {netrc}." in caught.value.message
    assert "~/.netrc" not in caught.value.message
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", "only-half-31")
    with pytest.raises(MemoriesError) as half:
        open_target(spec_from(url))
    assert f"or neither (to use {netrc})" in half.value.message and "only-half-31" not in half.value.message


def test_a_host_name_that_does_not_resolve_is_said_once_and_not_left_to_waiting(monkeypatch, tmp_path):
    """No DNS is asked: every name but loopback's fails in this process (tests/helpers/wrong_endpoints.py)."""
    from memories_tui.sync.targets import open_target, spec_from
    from tests.helpers.wrong_endpoints import without_dns

    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    asked = without_dns(monkeypatch)
    with pytest.raises(MemoriesError) as caught:
        open_target(spec_from("https://cloud.nohost.invalid/remote.php/dav/files/me/Memories")).list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert "the host name cloud.nohost.invalid does not resolve (check the URL)." in caught.value.message
    assert "sync again" not in caught.value.message
    assert asked == ["cloud.nohost.invalid"]  # not tried again: waiting does not fix a misspelled host


def test_a_server_error_is_one_that_waiting_can_fix(monkeypatch, tmp_path):
    from memories_tui.sync.targets import open_target, spec_from
    from tests.helpers.wrong_endpoints import plain_http_server

    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    with plain_http_server(500) as port, pytest.raises(MemoriesError) as caught:
        open_target(spec_from(f"http://127.0.0.1:{port}/Memories")).list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert "failed to answer (500)" in caught.value.message and "sync again later" in caught.value.message


@pytest.mark.parametrize("case", ["https to a plain-http server", "http to an https server", "an untrusted certificate"])
def test_a_wrong_scheme_or_an_untrusted_certificate_names_the_port_and_what_to_use(case, monkeypatch, tmp_path):
    from memories_tui.sync.targets import open_target, spec_from
    from tests.helpers.wrong_endpoints import plain_http_server, tls_server

    monkeypatch.setenv("MEMORIES_WEBDAV_USERNAME", "u")
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", "p-never-shown")
    with plain_http_server() as plain, tls_server(tmp_path) as tls:
        url, expected = {
            "https to a plain-http server": (f"https://127.0.0.1:{plain}/Memories", (
                f"the server at 127.0.0.1:{plain} does not speak https (TLS handshake failed): for a plain-http "
                f"server on this machine use http://127.0.0.1:{plain}/…, or check the port.")),
            "http to an https server": (f"http://127.0.0.1:{tls}/Memories", (
                f"the server at 127.0.0.1:{tls} speaks https, not plain http: use https://127.0.0.1:{tls}/… in the "
                "URL.")),
            "an untrusted certificate": (f"https://127.0.0.1:{tls}/Memories", (
                f"the server at 127.0.0.1:{tls} shows a certificate this machine does not trust (self-signed "
                "certificate).")),
        }[case]
        with pytest.raises(MemoriesError) as caught:
            open_target(spec_from(url)).list("d/")
    assert caught.value.code == "sync_target_unreachable"
    assert caught.value.message == f"Cannot reach the WebDAV server for {url}: {expected}"
    assert "p-never-shown" not in caught.value.message


def test_a_device_only_vault_refuses_a_remote_webdav_server_before_contacting_it(tmp_path, cheap_kdf):
    from memories_tui.engine import Engine

    engine = Engine.open(tmp_path / "a")
    info = engine.create_vault("notes", SYNC_PASS, device_only=True)
    engine.unlock(info.vault_id, SYNC_PASS)
    with pytest.raises(MemoriesError) as caught:
        engine.sync_add(info.vault_id, "https://cloud.example.com/remote.php/dav/files/me/Memories", SYNC_PASS)
    assert caught.value.code == "policy_denied"
    assert "device-only" in caught.value.message
    assert engine.sync_status() == []
    engine.close()


@pytest.mark.parametrize("url", ["https://me:secret@cloud.example.com/dav/Memories", "webdavs://me@cloud.example.com/x"])
def test_a_url_with_credentials_in_it_is_refused_without_repeating_them(url):
    from memories_tui.sync.targets import spec_from

    with pytest.raises(MemoriesError) as caught:
        spec_from(url)
    assert caught.value.code == "sync_bad_target"
    assert "secret" not in caught.value.message and "me@" not in caught.value.message


def test_webdavs_stands_for_https():
    from memories_tui.sync.targets import spec_from

    spec = spec_from("webdavs://cloud.example.com/remote.php/dav/files/me/Memories/")
    assert (spec.url, spec.is_webdav, spec.on_this_machine) == (
        "https://cloud.example.com/remote.php/dav/files/me/Memories", True, False)


def test_plain_http_to_another_machine_is_refused_since_it_would_send_the_password_in_clear():
    from memories_tui.sync.targets import spec_from

    with pytest.raises(MemoriesError) as caught:
        spec_from("http://cloud.example.com/remote.php/dav/files/me/Memories")
    assert "https://" in caught.value.message and "cloud.example.com" in caught.value.message
    assert spec_from("webdav://127.0.0.1:8080/x").url == "http://127.0.0.1:8080/x"


def test_the_cli_syncs_through_webdav_and_a_wrong_password_is_one_line(dav_env, tmp_path):
    from tests.helpers.cli import call_cli
    from tests.helpers.dav import PASSWORD, USER

    url = _collection(dav_env, "cli")
    a, b = tmp_path / "a", tmp_path / "b"
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "hello", "--text", "from a")
    half = call_cli(a, "sync", "add", "notes", url, env={"MEMORIES_WEBDAV_PASSWORD": "hunter2-wrong"})
    assert half.code == 1 and "MEMORIES_WEBDAV_USERNAME" in half.stderr and "hunter2" not in half.stderr
    wrong = call_cli(a, "sync", "add", "notes", url,
                     env={"MEMORIES_WEBDAV_USERNAME": USER, "MEMORIES_WEBDAV_PASSWORD": "hunter2-wrong"})
    assert wrong.code == 1 and "401" in wrong.stderr and "Traceback" not in wrong.stderr
    assert "hunter2-wrong" not in wrong.stderr + wrong.stdout
    env = {"MEMORIES_WEBDAV_USERNAME": USER, "MEMORIES_WEBDAV_PASSWORD": PASSWORD}
    assert call_cli(a, "sync", "add", "notes", url, env=env).code == 0
    assert call_cli(a, "sync", "notes", env=env).code == 0
    assert call_cli(b, "sync", "join", url.replace("http://", "webdav://"), env=env).code == 0
    found = call_cli(b, "--json", "memory", "list", "notes").json
    assert "hello" in str(found)
    status = call_cli(b, "--json", "sync", "status", passphrase=None).json["targets"]
    assert [s["url"] for s in status] == [url]


def test_a_folder_removed_on_the_server_is_made_again_by_the_next_upload(dav_env):
    import shutil

    from memories_tui.sync.targets import open_target, spec_from

    url = _collection(dav_env, "remade")
    target = open_target(spec_from(url))
    target.put("d/0123456789abcdef/0000000001", b"one")
    shutil.rmtree(dav_env.root / "remade" / "d")  # another client emptied the folder meanwhile
    target.put("d/0123456789abcdef/0000000002", b"two")
    assert target.list("d/") == ["d/0123456789abcdef/0000000002"]
    assert target.get("d/0123456789abcdef/0000000002") == b"two"
    assert target.get("d/0123456789abcdef/0000000001") is None
    target.delete("d/0123456789abcdef/0000000002")
    assert target.list("d/") == []


def test_a_redirect_names_the_url_to_use_instead(tmp_path, cheap_kdf, monkeypatch):
    import threading
    from http.server import BaseHTTPRequestHandler

    from tests.helpers.loopback import QuietHTTPServer

    class Redirect(BaseHTTPRequestHandler):
        def _moved(self) -> None:
            self.send_response(301)
            self.send_header("Location", "https://cloud.example.com/remote.php/dav/files/me/Memories/join?x=1")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_PUT = do_MKCOL = do_PROPFIND = _moved  # noqa: N815 - http.server's naming

        def log_message(self, *args: object) -> None:
            pass

    monkeypatch.setenv("MEMORIES_WEBDAV_USERNAME", "u")
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", "p")
    server = QuietHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(MemoriesError) as caught:
            first_device(tmp_path / "a", f"http://127.0.0.1:{server.server_address[1]}/Memories")
    finally:
        server.shutdown()
        server.server_close()
    assert caught.value.code == "sync_bad_target"
    assert "https://cloud.example.com/remote.php/dav/files/me/Memories/join" in caught.value.message
    assert "x=1" not in caught.value.message


def test_a_daemon_without_this_shells_credentials_says_so(dav_env, tmp_path):
    """`memories sync` runs in the daemon when it holds the vault, and the daemon reads credentials
    from its own environment: with them exported only in this shell, the 401 said "not set" of
    variables that were set. It now names them (never their values) and the ways out."""
    from tests.helpers.cli import call_cli
    from tests.helpers.daemon import daemon, unlock
    from tests.helpers.dav import PASSWORD, USER

    shell = {"MEMORIES_WEBDAV_USERNAME": USER, "MEMORIES_WEBDAV_PASSWORD": PASSWORD}  # exported here only
    home, url = tmp_path / "a", _collection(dav_env, "daemon-env")
    assert call_cli(home, "vault", "create", "notes").code == 0
    assert call_cli(home, "sync", "add", "notes", url, env=shell).code == 0  # this process: they work
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n[sync]\nbackground = false\n",
                                      encoding="utf-8")
    with daemon(home):  # started without MEMORIES_WEBDAV_* (the helpers drop MEMORIES_ settings)
        assert unlock(home, "notes").code == 0
        failed = call_cli(home, "--json", "sync", "notes", passphrase=None, env=shell)
        error = failed.json["error"]
        assert error["code"] == "sync_target_credentials", failed.stdout
        assert "ran in the Memories daemon" in error["message"] and "daemon restart" in error["message"]
        assert "MEMORIES_WEBDAV_USERNAME, MEMORIES_WEBDAV_PASSWORD" in error["message"]
        assert PASSWORD not in failed.stdout + failed.stderr
    assert call_cli(home, "--no-daemon", "sync", "notes", env=shell).code == 0  # as the sentence says
