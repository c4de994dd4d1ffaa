"""What a target can make a sync read is bounded: in a folder only regular files are read (a
link to a private key or to /dev/zero, a pipe that would block for ever, are refused, and a
device's folder that is a link is not written, read or deleted through); no target's object is
read past MAX_OBJECT_BYTES (a file, an S3 answer or a WebDAV answer that says it is larger, or
that never ends); listings end (an S3 store that always says "more", a WebDAV server listing
folders without end or in a ring). Each is a clear `sync_target_tampered` error, at once, and
the vault is left unchanged."""

from __future__ import annotations

import gzip
import os
import sys
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler

import pytest

from memories_tui.errors import ErrorCode, MemoriesError
from memories_tui.sync import bounds
from memories_tui.sync.s3 import S3Target
from memories_tui.sync.targets import TargetSpec
from memories_tui.sync.webdav import WebDavTarget
from tests.helpers.loopback import QuietHTTPServer
from tests.helpers.sync import first_device, joined_device
from tests.helpers.threads import in_a_thread

WAIT = 60  # seconds a refused read may take at most: a pipe read would wait for ever
_ZEROS_GZIPPED = gzip.compress(bytes(64 << 20), compresslevel=9)


@pytest.fixture
def two(tmp_path, cheap_kdf):
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("first note", "made on a")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    a.add("second note", "also made on a")
    a.sync()
    yield a, b, folder
    a.close()
    b.close()


def _sync_in_a_thread(device) -> BaseException | None:  # noqa: ANN001 - a tests.helpers.sync.Device
    """The error the sync ends with (None if it succeeds); a sync still running after WAIT fails the test."""
    thread, outcome = in_a_thread(device.sync)
    thread.join(WAIT)
    assert outcome, "the sync is still reading the object"
    return outcome[0]


def _head_of_a(folder):  # noqa: ANN001, ANN202
    """The head of the device that wrote two bundles (b only reads)."""
    return next(p.parent / "head" for p in folder.rglob("0000000002"))


@pytest.mark.parametrize("replacement", ["pipe", "link to /dev/zero", "link to a private key"])
def test_a_head_that_is_not_a_regular_file_is_refused_at_once_and_changes_nothing(two, tmp_path, replacement):
    _a, b, folder = two
    head = _head_of_a(folder)
    saved = head.read_bytes()
    head.unlink()
    if replacement == "pipe":
        os.mkfifo(head)
    elif replacement == "link to /dev/zero":
        head.symlink_to("/dev/zero")
    else:
        key = tmp_path / "id_ed25519"
        key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- canary-key")
        head.symlink_to(key)
    before = b.records()
    exc = _sync_in_a_thread(b)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED
    assert "not a regular file or folder" in exc.message and "canary" not in exc.message
    assert b.records() == before  # the second note is not half-pulled
    head.unlink()
    head.write_bytes(saved)
    assert _sync_in_a_thread(b) is None
    assert sorted(t for _, t, _ in b.records().values()) == ["first note", "second note"]


def test_a_device_folder_that_is_a_link_is_neither_written_nor_read_through(two, tmp_path):
    a, b, folder = two
    device_folder = _head_of_a(folder).parent
    elsewhere = tmp_path / "elsewhere"
    device_folder.rename(elsewhere)
    device_folder.symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    a.add("third note", "made on a while its folder is a link")
    exc = _sync_in_a_thread(a)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED
    assert "not a regular file or folder" in exc.message
    before_b = b.records()
    assert _sync_in_a_thread(b) is None  # a linked folder is not listed: a withholding target, nothing new
    assert b.records() == before_b
    assert sorted(p.name for p in elsewhere.iterdir()) == before  # nothing written or deleted there
    device_folder.unlink()
    elsewhere.rename(device_folder)
    assert _sync_in_a_thread(a) is None and _sync_in_a_thread(b) is None
    assert sorted(t for _, t, _ in b.records().values()) == ["first note", "second note", "third note"]


@pytest.mark.parametrize("which", ["head", "bundle"])
def test_a_file_larger_than_any_object_is_refused_without_reading_it(two, monkeypatch, which):
    _a, b, folder = two
    monkeypatch.setattr(bounds, "MAX_OBJECT_BYTES", 64 << 20)  # a bundle's bound, smaller for the test
    path = _head_of_a(folder) if which == "head" else _head_of_a(folder).parent / "0000000002"  # b has not read it
    saved = path.read_bytes()
    with open(path, "r+b") as fh:  # sparse: no disk is used, and nothing reads it
        fh.truncate(bounds.MAX_OBJECT_BYTES + 1)
    tracemalloc.start()
    try:
        exc = _sync_in_a_thread(b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # refused by its size, not read and then refused
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED
    assert "larger than Memories writes it" in exc.message
    path.write_bytes(saved)
    assert _sync_in_a_thread(b) is None


class _Endless(BaseHTTPRequestHandler):
    """Answers every GET 200 (and PROPFIND 207): `/said-large` says a body of 2 MiB and sends none (a client that
    believes it waits for its read timeout); anything else sends chunks that never end (until
    the client goes)."""

    protocol_version = "HTTP/1.1"

    def do_PROPFIND(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/many/" in self.path:  # one folder of 150 files
            self._send(207, ("<?xml version='1.0'?><d:multistatus xmlns:d='DAV:'>" + "".join(
                f"<d:response><d:href>/dav/many/f{n}</d:href><d:propstat><d:prop><d:resourcetype/></d:prop>"
                "</d:propstat></d:response>" for n in range(150)) + "</d:multistatus>").encode())
            return
        if "/ring/" not in self.path:
            self.do_GET(207)
            return
        here = self.path.rstrip("/")  # /dav/ring/...: a folder holding a deeper one and the first one again
        body = ("<?xml version='1.0'?><d:multistatus xmlns:d='DAV:'>"
                + "".join(f"<d:response><d:href>{href}/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/>"
                          "</d:resourcetype></d:prop></d:propstat></d:response>" for href in (here + "/x", "/dav/ring/x"))
                + f"<d:response><d:href>{here}/f</d:href><d:propstat><d:prop><d:resourcetype/></d:prop>"
                  "</d:propstat></d:response></d:multistatus>").encode()
        self.send_response(207)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self, status: int = 200) -> None:  # noqa: N802 - http.server's name
        if "list-type=2" in self.path:
            self._list_page()
            return
        if self.path.endswith(("gzip-bomb", "gzip-twice")):  # 64 MiB of zeros, gzipped once or twice: ~64 KB
            body = _ZEROS_GZIPPED if self.path.endswith("gzip-bomb") else gzip.compress(_ZEROS_GZIPPED)
            self._send(status, body, Content_Encoding="gzip" if self.path.endswith("gzip-bomb") else "gzip, gzip")
            return
        if self.path.endswith("gzip-damaged"):  # says gzip, is not
            self._send(status, b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4, Content_Encoding="gzip")
            return
        if self.path.endswith("gzip-redirect"):  # a gzipped error page: its status and Location still count
            self._send(307, gzip.compress(b"<html>moved</html>"), Content_Encoding="gzip",
                       Location="https://cloud.example.com/dav/elsewhere")
            return
        self.send_response(status)
        if self.path.endswith(("negative-length", "small-length")):  # a length beside chunked framing, which wins
            self.send_header("Content-Length", "-1" if self.path.endswith("negative-length") else "10")
        if self.path.endswith("said-large"):
            self.send_header("Content-Length", str(2 << 20))
            self.end_headers()
            self.wfile.flush()
            self.connection.settimeout(WAIT)
            try:
                self.connection.recv(1)  # until the client hangs up
            except OSError:
                pass
            self.close_connection = True
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"y" * 65536
        try:
            for _ in range(4096):  # 256 MiB at most: the test's limit is 1 MiB
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            return

    def _list_page(self) -> None:
        """An S3 listing page of ten names that always says there are more, under a new token (for
        the prefix `finite/`: one page, with a key of another prefix among them)."""
        if "prefix=finite" in self.path:
            keys = "".join(f"<Contents><Key>{key}</Key><Size>1</Size></Contents>"
                           for key in ("finite/d/0123456789abcdef/head", "other/d/fedcba9876543210/head"))
            self._send(200, ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/'
                             'doc/2006-03-01/"><Name>bucket</Name><Prefix>finite/</Prefix><KeyCount>2</KeyCount>'
                             f"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{keys}</ListBucketResult>"
                             ).encode(), Content_Type="application/xml")
            return
        page = type(self).pages = getattr(type(self), "pages", 0) + 1
        keys = "".join(f"<Contents><Key>prefix/d/0123456789abcdef/{page * 10 + n:010d}</Key><Size>1</Size></Contents>"
                       for n in range(10))
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>bucket</Name><Prefix>prefix/</Prefix><KeyCount>10</KeyCount><MaxKeys>1000</MaxKeys>"
                f"<IsTruncated>true</IsTruncated><NextContinuationToken>t{page}</NextContinuationToken>{keys}"
                "</ListBucketResult>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endless(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_OBJECT_BYTES", 1 << 20)
    server = QuietHTTPServer(("127.0.0.1", 0), _Endless)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name", ["d/0123456789abcdef/head", "d/0123456789abcdef/said-large"])
def test_a_webdav_answer_past_the_limit_is_refused_before_or_as_it_arrives(endless, name):
    target = WebDavTarget(TargetSpec(endless + "/dav"))
    with pytest.raises(MemoriesError) as caught:
        target.get(name)
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and name in caught.value.message


def test_an_endless_webdav_listing_is_refused_as_it_arrives(endless):
    with pytest.raises(MemoriesError) as caught:
        WebDavTarget(TargetSpec(endless + "/dav")).list("d/")
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED


def test_a_webdav_listing_of_folders_without_end_or_in_a_ring_ends(endless):
    names: list[list[str]] = []
    thread = threading.Thread(target=lambda: names.append(WebDavTarget(TargetSpec(endless + "/dav/ring")).list("")),
                              daemon=True)
    thread.start()
    thread.join(WAIT)
    assert names == [["f", "x/f", "x/x/f"]]  # no object of ours lies deeper than d/DEVICE/NAME


@pytest.mark.parametrize("name", ["d/0123456789abcdef/head", "d/0123456789abcdef/said-large"])
def test_an_s3_answer_past_the_limit_is_refused(endless, name, monkeypatch, tmp_path):
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    target = S3Target(TargetSpec("s3://bucket/prefix", endless))
    with pytest.raises(MemoriesError) as caught:
        target.get(name)
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and name in caught.value.message


def test_an_s3_listing_that_says_there_is_more_for_ever_is_refused(endless, monkeypatch, tmp_path):
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    monkeypatch.setattr(bounds, "MAX_LISTED_NAMES", 100)
    names: list[object] = []

    def run() -> None:
        try:
            names.append(S3Target(TargetSpec("s3://bucket/prefix", endless)).list("d/"))
        except MemoriesError as exc:
            names.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT)
    assert len(names) == 1 and isinstance(names[0], MemoriesError)
    assert names[0].code == ErrorCode.SYNC_TARGET_TAMPERED and "more than 100 objects" in names[0].message


def test_a_folder_listing_past_the_limit_is_refused(two, monkeypatch):
    _a, b, folder = two
    monkeypatch.setattr(bounds, "MAX_LISTED_NAMES", 100)
    flood = folder / "d" / "0123456789abcdef"
    flood.mkdir()
    for n in range(101):
        (flood / f"{n:010d}").write_bytes(b"x")
    exc = _sync_in_a_thread(b)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED and "more than 100 objects" in exc.message


def _peak_while(work) -> tuple[int, BaseException | None]:  # noqa: ANN001 - a callable
    """(the most memory Python held while `work` ran in a thread, the error it ended with)."""
    tracemalloc.start()
    try:
        thread, outcome = in_a_thread(work)
        thread.join(WAIT)
        assert outcome, "still running"
        return tracemalloc.get_traced_memory()[1], outcome[0]
    finally:
        tracemalloc.stop()


def test_large_objects_are_read_one_at_a_time_not_ahead_of_their_turn(two, monkeypatch):
    """A target that replaced several bundles in a row by large files made a pull hold all of
    them at once (four reads ahead: 7 GB for six of 1 GiB); one is held at a time now."""
    from memories_tui.sync import run

    a, b, folder = two
    monkeypatch.setattr(run, "BUNDLE_BYTES", 3000)
    for i in range(12):
        a.add(f"note {i}", f"{i} " + "line of text " * 60)
    a.sync()
    device = _head_of_a(folder).parent
    unread = sorted(p for p in device.iterdir() if p.name.isdigit() and int(p.name) > 2)
    assert len(unread) >= 4, "a must have written several bundles b has not read"
    size = 24 << 20  # above bounds.AHEAD_BYTES: read in turn only
    for path in unread:
        with open(path, "r+b") as fh:
            fh.truncate(size)  # sparse: zeros that fail authentication once read
    before = b.records()
    peak, exc = _peak_while(b.sync)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED
    assert peak < 2.5 * size, f"{peak >> 20} MiB held for objects of {size >> 20} MiB"
    assert b.records() == before


def test_a_join_record_past_its_small_bound_is_refused_before_it_is_parsed(two, tmp_path):
    """The join record is read at every sync: a target that made it megabytes of JSON made every
    device parse it, at 17 times its size in memory."""
    _a, b, folder = two
    key = folder / "key"
    saved = key.read_bytes()
    key.write_bytes(b"[" + b"{}," * (3 << 20) + b"{}]")  # 9 MiB that json.loads would turn into 3 M dicts
    peak, exc = _peak_while(b.sync)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED
    assert "larger than Memories writes it" in exc.message
    assert peak < 4 << 20
    with pytest.raises(MemoriesError) as caught:
        joined_device(tmp_path / "c", str(folder))
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED
    key.write_bytes(saved)
    assert _sync_in_a_thread(b) is None


def test_a_folder_nested_past_any_depth_is_not_walked(two):
    """No object of ours lies deeper than d/DEVICE/NAME: a replication peer's folders nested
    1,200 deep made the walk fail with RecursionError (an "internal error")."""
    a, b, folder = two
    levels = [str(folder / "d" / "0123456789abcdef")]
    for _ in range(sys.getrecursionlimit() + 200):  # os.makedirs and rmtree recurse too
        levels.append(levels[-1] + "/x")
    for level in levels:
        os.mkdir(level)
    with open(levels[-1] + "/0000000001", "wb") as fh:
        fh.write(b"not ours")
    a.add("third note", "after the nesting")
    assert _sync_in_a_thread(a) is None and _sync_in_a_thread(b) is None
    assert sorted(t for _, t, _ in b.records().values()) == ["first note", "second note", "third note"]
    os.remove(levels[-1] + "/0000000001")
    for level in reversed(levels):  # for the temporary folder's cleanup
        os.rmdir(level)


def test_empty_folders_count_towards_the_listing_bound(two, monkeypatch):
    """Folders cost a listing as much as files: a peer that made a million empty ones slowed
    every sync without end."""
    _a, b, folder = two
    monkeypatch.setattr(bounds, "MAX_LISTED_NAMES", 100)
    for n in range(101):
        (folder / "d" / f"{n:016x}").mkdir()
    exc = _sync_in_a_thread(b)
    assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED and "more than 100 objects" in exc.message


@pytest.mark.parametrize("change", ["kdf beyond the ceiling", "kdf under the floor", "wrap cut short"])
def test_a_join_record_altered_where_it_is_in_clear_is_refused_as_tampering(two, tmp_path, change, monkeypatch):
    """Its KDF parameters and wrap are clear (a joining device needs them before it has a key):
    altered, they are the target's tampering, not the user's vault file (`vault_invalid` said so)."""
    import base64
    import json

    from memories_tui.vault import crypto

    _a, b, folder = two
    key = folder / "key"
    saved = key.read_bytes()
    record = json.loads(saved)
    if change == "kdf beyond the ceiling":
        record["kdf"]["m"] = 99_999_999_999
    elif change == "kdf under the floor":
        record["kdf"]["m"] = 8
    else:
        record["wrapped"] = base64.b64encode(base64.b64decode(record["wrapped"])[:-1]).decode()
    key.write_text(json.dumps(record))
    if change == "kdf beyond the ceiling":  # parsed at each sync
        exc = _sync_in_a_thread(b)
        assert exc is not None and exc.code == ErrorCode.SYNC_TARGET_TAMPERED, exc
        assert "join record" in exc.message
    if change == "kdf under the floor":
        monkeypatch.setattr(crypto, "_TEST_KDF_OVERRIDE", None)  # the tests' cheap hashing lifts the floor
    with pytest.raises(MemoriesError) as caught:
        joined_device(tmp_path / "c", str(folder))
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and "join record" in caught.value.message
    assert not list((tmp_path / "c").glob("**/*.vault"))
    key.write_bytes(saved)
    monkeypatch.undo()
    assert _sync_in_a_thread(b) is None


@pytest.mark.parametrize("name", ["d/0123456789abcdef/negative-length", "d/0123456789abcdef/small-length"])
def test_an_s3_length_beside_chunked_framing_bounds_nothing_more(endless, name, monkeypatch, tmp_path):
    """A length of -1 (or a small one) beside a body sent in chunks that never end: -1 was read as
    "no bound" and the body read to its end (gigabytes); a small one is all that is read."""
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    target = S3Target(TargetSpec("s3://bucket/prefix", endless))
    if name.endswith("negative-length"):
        with pytest.raises(MemoriesError) as caught:
            target.get(name)
        assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and name in caught.value.message
    else:
        assert len(target.get(name) or b"") <= 10


def test_an_s3_listing_leaves_out_keys_outside_the_prefix(endless, monkeypatch, tmp_path):
    from tests.helpers.seaweed import use_test_credentials

    use_test_credentials(monkeypatch, tmp_path)
    assert S3Target(TargetSpec("s3://bucket/finite", endless)).list("") == ["d/0123456789abcdef/head"]


@pytest.mark.parametrize("name", ["d/0123456789abcdef/gzip-bomb", "d/0123456789abcdef/gzip-twice"])
def test_a_webdav_answer_inflated_past_the_limit_is_refused_as_it_inflates(endless, name):
    """64 KB of gzip is 64 MiB of zeros (gzipped twice, gigabytes from a few kilobytes): inflated a
    step at a time, or refused for its layers, never held whole."""
    target = WebDavTarget(TargetSpec(endless + "/dav"))
    tracemalloc.start()
    try:
        with pytest.raises(MemoriesError) as caught:
            target.get(name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and name in caught.value.message
    assert peak < 8 << 20, f"{peak >> 20} MiB held"


def test_a_webdav_answer_of_damaged_gzip_is_refused_as_tampered(endless):
    with pytest.raises(MemoriesError) as caught:
        WebDavTarget(TargetSpec(endless + "/dav")).get("d/0123456789abcdef/gzip-damaged")
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and "damaged gzip" in caught.value.message


def test_a_gzipped_webdav_error_page_keeps_its_status_and_headers(endless):
    """Only the status and headers of an answer that is not the object are used; read as gzip, they stay."""
    with pytest.raises(MemoriesError) as caught:
        WebDavTarget(TargetSpec(endless + "/dav")).get("d/0123456789abcdef/gzip-redirect")
    assert caught.value.code == "sync_bad_target" and "https://cloud.example.com/dav/elsewhere" in caught.value.message


def test_a_webdav_listing_of_more_names_than_the_bound_is_refused(endless, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_LISTED_NAMES", 100)
    with pytest.raises(MemoriesError) as caught:
        WebDavTarget(TargetSpec(endless + "/dav/many")).list("")
    assert caught.value.code == ErrorCode.SYNC_TARGET_TAMPERED and "more than 100 objects" in caught.value.message
