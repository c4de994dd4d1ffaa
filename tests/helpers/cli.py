"""Drive the CLI as a user's shell would: in this process through `cli.main(argv)` (`call_cli`), or
in a real subprocess (`run_cli`) where the process itself is under test."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memories_tui.vault.state_folder import STATE_DIR_ENV
from tests.helpers.vaults import PASS

CHEAP_CLI = Path(__file__).with_name("cheap_cli.py")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def cli_env(home: Path, passphrase: str | None = PASS, **extra: str) -> dict[str, str]:
    """The environment a child `memories` process gets: this one's without any MEMORIES_ setting
    but the tests' state folder (conftest.py), then the home, the passphrase (unless None) and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_") or k == STATE_DIR_ENV}
    env.update(MEMORIES_HOME=str(home), PYTHONIOENCODING="utf-8")
    if passphrase is not None:
        env["MEMORIES_PASSPHRASE"] = passphrase
    env.update(extra)
    return env


def run_cli(home: Path, *args: str, passphrase: str | None = PASS, stdin: str | bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 120, real_kdf: bool = False) -> Result:
    """`real_kdf=True` runs `python -m memories_tui` exactly as shipped (Argon2id 256 MiB, ~1 s per
    vault create/unlock); otherwise new vaults get cheap parameters (tests/helpers/cheap_cli.py)."""
    environ = cli_env(home, passphrase, **(env or {}))
    data = stdin.encode() if isinstance(stdin, str) else stdin
    entry = ["-m", "memories_tui"] if real_kdf else [str(CHEAP_CLI)]
    done = subprocess.run([sys.executable, *entry, *args], input=data if data is not None else b"",
                          capture_output=True, env=environ, timeout=timeout, check=False)
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


class _Stream(io.TextIOWrapper):
    """A UTF-8 text stream over bytes, as a pipe gives a real process (never a terminal)."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="surrogateescape", newline="")

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode("utf-8", errors="replace")


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: v for k, v in os.environ.items() if k.startswith("MEMORIES_") or k in values}
    for key in [k for k in os.environ if k.startswith("MEMORIES_") and k != STATE_DIR_ENV]:
        del os.environ[key]
    os.environ.update(values)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k.startswith("MEMORIES_") or k in values]:
            del os.environ[key]
        os.environ.update(saved)


def call_cli(home: Path, *args: str, passphrase: str | None = PASS, stdin: str | bytes | None = None,
             env: dict[str, str] | None = None) -> Result:
    """`memories ARGS` in this process through `cli.main(argv)`, with stdin, stdout and stderr
    captured and the environment a shell would give it. New vaults get the cheap KDF (as in
    `run_cli`); use `run_cli` where a real process matters (signals, exit, a terminal)."""
    from memories_tui.cli import main

    from .vaults import cheap_kdf

    values = {"MEMORIES_HOME": str(home), **({"MEMORIES_PASSPHRASE": passphrase} if passphrase is not None else {}),
              **(env or {})}
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    streams = _Stream(data), _Stream(), _Stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    with _environment(values), cheap_kdf():
        sys.stdin, sys.stdout, sys.stderr = streams
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's --help exits
            code = exc.code if isinstance(exc.code, int) else 0
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, streams[1].text(), streams[2].text())
