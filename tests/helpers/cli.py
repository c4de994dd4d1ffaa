"""Drive the CLI through a real subprocess, as a user's shell would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHEAP_CLI = Path(__file__).with_name("cheap_cli.py")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(home: Path, *args: str, passphrase: str | None = "correct horse", stdin: str | bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 120, real_kdf: bool = False) -> Result:
    """`real_kdf=True` runs `python -m memories_tui` exactly as shipped (Argon2id 256 MiB, ~1 s per
    vault create/unlock); otherwise new vaults get cheap parameters (tests/helpers/cheap_cli.py)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    environ["MEMORIES_HOME"] = str(home)
    environ["PYTHONIOENCODING"] = "utf-8"
    if passphrase is not None:
        environ["MEMORIES_PASSPHRASE"] = passphrase
    environ.update(env or {})
    data = stdin.encode() if isinstance(stdin, str) else stdin
    entry = ["-m", "memories_tui"] if real_kdf else [str(CHEAP_CLI)]
    done = subprocess.run([sys.executable, *entry, *args], input=data if data is not None else b"",
                          capture_output=True, env=environ, timeout=timeout, check=False)
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))
