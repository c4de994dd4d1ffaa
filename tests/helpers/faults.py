"""Real faults for subprocess tests: an unwritable folder even for root, a file system that
refuses to grow a file, a process stopped at a named point and killed with SIGKILL."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memories_tui import testhooks
from tests.helpers.cli import CHEAP_CLI, Result, cli_env

_PR_CAPBSET_DROP = 24
_DAC_CAPS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def obey_permissions() -> None:
    """preexec_fn: a root child loses the capabilities that bypass file permissions, so a
    0500 folder is as unwritable for it as for any user (no-op when not root)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _DAC_CAPS:
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def file_size_limit(limit: int) -> Callable[[], None]:
    """preexec_fn: the child cannot grow any file past `limit` bytes (EFBIG, as on a full
    disk); SIGXFSZ is ignored so the write fails instead of killing the process."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def run_cli_as(home: Path, *args: str, preexec: Callable[[], None] | None = None,
               env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    done = subprocess.run([sys.executable, str(CHEAP_CLI), *args], capture_output=True, env=env or cli_env(home),
                          timeout=timeout, check=False, preexec_fn=preexec, input=b"")
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def killed_at(point: str, home: Path, tmp: Path, *args: str) -> None:
    """Run the CLI until it reaches pause point `point`, then kill -9 it there."""
    ready = tmp / f"paused-{point}"
    env = cli_env(home, **{testhooks.ENV: f"{point}:{ready}"})
    proc = subprocess.Popen([sys.executable, str(CHEAP_CLI), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300  # a guard against a hang only; never reached when healthy
        while not ready.exists():
            if proc.poll() is not None:
                raise AssertionError(f"exited with {proc.returncode} before {point}: {proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"never reached {point}")
            time.sleep(0.01)
        assert int(ready.read_text()) == proc.pid
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
