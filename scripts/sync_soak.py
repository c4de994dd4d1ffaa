#!/usr/bin/env python3
"""Soak sync with seeded random runs far harsher than use, and count how they end.

Each run: several homes on this machine are devices of one vault, syncing through one folder
with a snapshot every 1-3 bundles. They add, edit (whole bodies and single lines, which merge
three-way), delete, resolve conflicts, switch the device-only flag and sync at random; with
`--forget` they also forget each other (a forgotten device may come back), with `--damage` the
target truncates a snapshot part now and then; with `--wider` they also resolve by keeping a
revision that lost or both sides, change titles and tags, and stop syncs part-way (ctrl+c after a random
number of objects). With `--target webdav` the devices sync through a WebDAV server on
127.0.0.1 (WsgiDAV, from the test extra) instead of a folder; `--target flaky-webdav` answers one
request in four with 503 (a MOVE done first, its answer lost), so syncs also fail, and are retried,
at any request; `--target s3` through a SeaweedFS S3 server (from the test extra; the target is
then never damaged). Then every device writes and syncs a few rounds
(each compacts, and rebuilds a damaged snapshot of its own), and a new device joins. A run is:

    ok        every device (and the new one) holds the same records, conflicts and flag
    STUCK     a sync was still refused at the end (a damaged snapshot not rebuilt yet)
    FAILED    a sync was refused during a run where nothing was damaged, or not for damage: a bug
    DIVERGED  the devices disagree: a bug

    scripts/sync_soak.py --seeds 1-100 --damage
    scripts/sync_soak.py --seeds 1-100 --devices 4 --forget --damage
    scripts/sync_soak.py --seeds 1-100 --devices 4 --forget --damage --stream
    scripts/sync_soak.py --seeds 1-100 --devices 4 --forget --damage --stream --wider
    scripts/sync_soak.py --seeds 1-100 --wider --stream --target flaky-webdav

Device ids are random, so a seed repeats the operations, not every outcome. Needs the test
extra (it borrows the tests' cheap passphrase hashing); touches nothing outside a temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memories_tui.engine import Engine  # noqa: E402
from memories_tui.errors import MemoriesError  # noqa: E402
from memories_tui.sync import compaction, stream  # noqa: E402
from tests.helpers.sync import SYNC_PASS, Device, first_device, joined_device  # noqa: E402
from tests.helpers.vaults import use_cheap_kdf  # noqa: E402

_FLAKY = ("sync_target_unreachable", "sync_bad_target")  # a 503 that outlasted the client's retries
_AFTER_DAMAGE = ("sync_target_tampered",  # and a note a rebuilt snapshot carries without its text, until its
                 "sync_state_incomplete")  # device syncs again (docs/sync.md): both must clear by the end


class Stuck(Exception):
    """A sync was still refused once every device had synced again."""


class Failed(Exception):
    """A sync was refused during the run although nothing in the target was damaged."""


def _home(path: Path, compact_after: int) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(f"[sync]\ncompact_after = {compact_after}\n", encoding="utf-8")
    return path


# (a run's folder, seed) -> (the target's URL, its files on disk, the S3 endpoint URL or None)
Place = Callable[[Path, int], tuple[str, Path, str | None]]


def _in_folder(tmp: Path, _seed: int) -> tuple[str, Path, str | None]:
    folder = tmp / "Sync"
    folder.mkdir()
    return str(folder), folder, None


@contextlib.contextmanager
def _on_webdav(flaky: bool) -> Iterator[Place]:
    """A WebDAV server for the whole soak; each run syncs through a collection of its own."""
    from tests.helpers.dav import PASSWORD, USER, dav_server

    os.environ["MEMORIES_WEBDAV_USERNAME"], os.environ["MEMORIES_WEBDAV_PASSWORD"] = USER, PASSWORD
    with dav_server() as server:
        url, disk = (server.flaky_url, server.root.parent / "flaky") if flaky else (server.url.rstrip("/"), server.root)

        def place(_tmp: Path, seed: int) -> tuple[str, Path, str | None]:
            name = f"run-{seed}-{os.urandom(3).hex()}"
            (disk / name).mkdir()
            return f"{url}/{name}", disk / name, None

        yield place


@contextlib.contextmanager
def _on_s3() -> Iterator[Place]:
    """A SeaweedFS S3 server on 127.0.0.1 for each run (a store frees deleted objects' room only
    when vacuumed: a fresh one per run never fills up); stopped when the next run starts."""
    from tests.helpers.seaweed import seaweed_server

    for name, value in {"AWS_ACCESS_KEY_ID": "soak", "AWS_SECRET_ACCESS_KEY": "soak",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ[name] = value
    with contextlib.ExitStack() as servers:
        def place(tmp: Path, _seed: int) -> tuple[str, Path, str | None]:
            import boto3

            servers.close()
            server = servers.enter_context(seaweed_server())
            boto3.client("s3", endpoint_url=server.endpoint).create_bucket(Bucket="soak")
            return "s3://soak/vault", tmp / "no-files-here", server.endpoint

        yield place


T = TypeVar("T")
_ATTEMPTS = 10  # tries of a call the flaky server fails: a user runs it again


def _through(call: Callable[[], T], flaky: bool) -> T:
    """`call()`, tried again while the flaky server's 503s outlast the client's retries."""
    for attempt in range(_ATTEMPTS):
        try:
            return call()
        except MemoriesError as exc:
            if not flaky or exc.code not in _FLAKY or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _joined(home: Path, url: str, flaky: bool, endpoint: str | None = None) -> Device:
    """A device joined to `url`; a join the flaky server stopped after it made the vault is
    finished by syncing, as `sync join` then tells the user."""
    if not flaky:
        return joined_device(home, url, endpoint)
    engine = Engine.open(home)
    for _attempt in range(_ATTEMPTS):
        try:
            return Device(engine, engine.sync_join(url, SYNC_PASS).vault_id)
        except MemoriesError as exc:
            if exc.code not in _FLAKY:
                raise
            made = engine.list_vaults()
            if made:
                device = Device(engine, made[0].vault_id)
                if device.vault_id not in engine.unlocked_ids():
                    engine.unlock(device.vault_id, SYNC_PASS)
                _through(device.sync, flaky)
                return device
    raise AssertionError(f"no join of {url} went through in {_ATTEMPTS} tries")


def run(seed: int, operations: int, devices: int, forget: bool, damage: bool, keep: bool = False,
        wider: bool = False, place: Place = _in_folder) -> dict[str, int]:
    """One seeded run; its counts. Raises Stuck, or AssertionError when the devices diverge
    (with `keep`, the homes and the target of such a run stay, and the message names them)."""
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="memories-soak-"))
    ended = False
    try:
        url, folder, endpoint = place(tmp, seed)
        flaky = "flaky" in url
        every = rng.choice([1, 2, 3])
        first = _through(lambda: first_device(_home(tmp / "d0", every), url, endpoint), flaky)
        first.add("seed", "0")
        _through(first.sync, flaky)
        homes = [first] + [_joined(_home(tmp / f"d{n}", every), url, flaky, endpoint) for n in range(1, devices)]
        ids = [next(d.device for d in _through(lambda h=h: h.engine.sync_devices(h.vault_id), flaky) if d.this_device)
               for h in homes]
        counts = {"refused": 0, "textless": 0, "damaged": 0, "forgotten": 0}
        if wider:
            counts["cancelled"] = 0
        if flaky:
            counts["unreachable"] = 0

        def sync(home: Device, *, tolerate: bool = True, stop_after: int = 0) -> None:
            """Sync `home`; with `stop_after`, cancel it after that many objects fetched or sent."""
            cancel = threading.Event()
            seen = [0]

            def progress(_report: object) -> None:
                seen[0] += 1
                if seen[0] >= stop_after:
                    cancel.set()

            for attempt in range(_ATTEMPTS):
                try:
                    if stop_after:
                        home.engine.sync_now(home.vault_id, progress=progress, cancel=cancel)
                    else:
                        home.sync()
                    return
                except MemoriesError as exc:
                    if flaky and exc.code in _FLAKY:  # the server's 503s outlasted the client's retries
                        counts["unreachable"] += 1
                        if tolerate:
                            return
                        if attempt < _ATTEMPTS - 1:
                            continue  # as a user would: sync again
                        raise
                    if stop_after and exc.code == "cancelled":
                        counts["cancelled"] += 1
                        return
                    if not tolerate or exc.code not in _AFTER_DAMAGE or not counts["damaged"]:
                        raise
                    counts["refused" if exc.code == "sync_target_tampered" else "textless"] += 1
                    return

        for step in range(operations):
            _step(rng, step, homes, ids, folder, counts, forget, damage, sync, wider)
        for round_ in range(2 * every + 4):  # everyone pushes enough to compact again
            for number, home in enumerate(homes):
                home.add(f"last {round_} {number}", "")
                sync(home)
        try:
            for _ in range(3):
                for home in homes:
                    sync(home, tolerate=False)
        except MemoriesError as exc:
            raise Stuck(exc.message) from None
        late = _joined(_home(tmp / "late", every), url, flaky, endpoint)
        for number, other in enumerate([*homes[1:], late], start=1):
            ours, theirs = homes[0].records(), other.records()
            assert theirs == ours, f"records differ on device {number}: " + "; ".join(
                f"{k}: {ours.get(k)} vs {theirs.get(k)}" for k in sorted(set(ours) | set(theirs))
                if ours.get(k) != theirs.get(k))
            assert other.conflicts() == homes[0].conflicts(), "conflicts differ"
            assert _tags(other) == _tags(homes[0]), "tags differ"
            assert other.engine.device_only(other.vault_id) == homes[0].engine.device_only(homes[0].vault_id)
        for home in [*homes, late]:
            home.close()
        ended = True
        return counts
    except (Stuck, AssertionError) as exc:
        seen = " ".join(f"{k} {v}" for k, v in locals().get("counts", {}).items())
        raise type(exc)(f"{exc} ({seen})" + (f" [kept in {tmp}]" if keep else "")) from None
    except MemoriesError as exc:  # a sync refused mid-run, where nothing was damaged: a bug too
        raise Failed(f"{exc.code}: {exc.message}" + (f" [kept in {tmp}]" if keep else "")) from None
    finally:
        if ended or not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _tags(device: Device) -> dict[str, tuple[str, ...]]:
    return {r.id: tuple(r.tags) for r in device.engine.list_records(device.vault_id)}


def _step(rng: random.Random, step: int, homes: list[Device], ids: list[str], folder: Path,
          counts: dict[str, int], forget: bool, damage: bool, sync, wider: bool) -> None:  # noqa: ANN001
    home = rng.choice(homes)
    records = sorted(home.records())
    roll = rng.random()
    if roll < 0.2 or not records:
        home.add(f"note {step}", f"body {step} 中文")
    elif roll < 0.35:
        home.edit(rng.choice(records), f"edit {step}")
    elif roll < 0.5:
        record_id = rng.choice(records)
        home.edit_a_line(record_id, rng.randrange(6), f"line edit {step}")
    elif roll < 0.6:
        home.delete(rng.choice(records))
    elif roll < 0.64 and (conflicted := sorted(set(home.conflicts()) & set(records))):
        home.engine.resolve_conflict(home.vault_id, rng.choice(conflicted), keep=None)
    elif roll < 0.66:
        home.engine.set_device_only(home.vault_id, not home.engine.device_only(home.vault_id))
    elif forget and roll < 0.69:
        other = rng.choice([n for n, h in enumerate(homes) if h is not home])
        try:
            home.engine.sync_forget(home.vault_id, ids[other])
            counts["forgotten"] += 1
        except MemoriesError:
            pass  # it wrote nothing yet, or was forgotten already
    elif damage and roll < 0.72 and (parts := sorted(folder.glob("d/*/s*"))):
        part = rng.choice(parts)
        part.write_bytes(part.read_bytes()[:-3])
        counts["damaged"] += 1
    elif wider and roll < 0.75 and (conflicted := sorted(set(home.conflicts()) & set(records))):
        record_id = rng.choice(conflicted)
        kept = [k.revision for c in home.engine.conflicts(home.vault_id) if c.record_id == record_id
                for k in c.kept]  # a deletion too: keeping it deletes the record everywhere
        if kept and rng.random() < 0.5:
            home.engine.resolve_conflict(home.vault_id, record_id, keep=rng.choice(sorted(kept))[:10])
        else:
            home.engine.keep_both(home.vault_id, record_id)
    elif wider and roll < 0.78:
        if rng.random() < 0.5:
            home.engine.update_record(home.vault_id, rng.choice(records), title=f"title {step}")
        else:  # tags changed on two devices at once merge as sets
            home.engine.update_record(home.vault_id, rng.choice(records), tags=rng.sample(["tea", "bread", "jam"], 2))
    elif wider and roll < 0.82:
        sync(home, stop_after=rng.randrange(1, 8))
    else:
        sync(home)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1-20", help="a range of seeds, FIRST-LAST (default 1-20)")
    parser.add_argument("--operations", type=int, default=400, help="random operations a run (default 400)")
    parser.add_argument("--devices", type=int, default=3, help="devices (default 3)")
    parser.add_argument("--forget", action="store_true", help="devices also forget each other now and then")
    parser.add_argument("--damage", action="store_true", help="the target also truncates snapshot parts")
    parser.add_argument("--stream", action="store_true", help="joins, and syncs of a device with nothing of its "
                        "own to send, commit at every bundle and snapshot part (sync/stream.py commits every few "
                        "megabytes)")
    parser.add_argument("--wider", action="store_true", help="devices also keep a losing revision or both sides, "
                        "change titles and tags, and stop syncs part-way")
    parser.add_argument("--target", choices=("folder", "webdav", "flaky-webdav", "s3"), default="folder",
                        help="what the devices sync through (default folder)")
    parser.add_argument("--keep", action="store_true", help="keep the homes and the target of a run that did not end ok")
    args = parser.parse_args()
    first, _, last = args.seeds.partition("-")
    use_cheap_kdf()
    compaction.PUBLISH_EVERY = 1  # every read is published: deleting follows at once
    if args.stream:
        stream.STREAM_BYTES = 1
    outcomes = {"ok": 0, "STUCK": 0, "FAILED": 0, "DIVERGED": 0}
    where = (contextlib.nullcontext(_in_folder) if args.target == "folder" else _on_s3() if args.target == "s3"
             else _on_webdav(args.target == "flaky-webdav"))
    with where as place:
        for seed in range(int(first), int(last or first) + 1):
            try:
                counts = run(seed, args.operations, args.devices, args.forget, args.damage, args.keep, args.wider,
                             place)
                outcome, detail = "ok", " ".join(f"{k} {v}" for k, v in counts.items())
            except Stuck as exc:
                outcome, detail = "STUCK", str(exc)[-300:]
            except Failed as exc:
                outcome, detail = "FAILED", str(exc)[-400:]
            except AssertionError as exc:
                outcome, detail = "DIVERGED", str(exc)[-600:]
            outcomes[outcome] += 1
            print(f"seed {seed}: {outcome} ({detail})", flush=True)
    print(" · ".join(f"{k} {v}" for k, v in outcomes.items()))


if __name__ == "__main__":
    main()
