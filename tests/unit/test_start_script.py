"""`scripts/start` on a first run shows one line about the set-up, not pip's and setuptools'
chatter (the editable-install banner), and shows all of it when the install fails.

The script runs for real in a copy of the repository's start files; `python3` on its PATH is a
stand-in that makes a `.venv` whose pip prints what setuptools prints for an editable install
(no package index is reached)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BANNER = "BuildBackendWarning: Editable installation.\\n  Please be careful with folders in your working directory"

FAKE_PYTHON3 = """#!/usr/bin/env bash
# `python3 -m venv .venv`: a venv whose pip chatters like setuptools' editable install
mkdir -p .venv/bin
cat > .venv/bin/python <<'PY'
#!/usr/bin/env bash
if [ "$1 $2" = "-m pip" ]; then
  printf '%b\\n' "BANNER" >&2
  [ -n "${FAIL_INSTALL:-}" ] && { echo "ERROR: no matching distribution" >&2; exit 1; }
fi
exit 0
PY
printf '#!/usr/bin/env bash\\necho "the TUI runs"\\n' > .venv/bin/memories-tui
chmod +x .venv/bin/python .venv/bin/memories-tui
"""


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "start", repo / "scripts" / "start")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(FAKE_PYTHON3.replace("BANNER", BANNER), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return repo, env


def test_first_start_is_quiet(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path)
    done = subprocess.run(["bash", "scripts/start"], cwd=repo, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the TUI runs\n"
    assert "Editable installation" not in done.stderr and "careful" not in done.stderr
    assert done.stderr.strip().splitlines() == ["Setting up .venv (first run or pyproject.toml changed), about a minute…"]
    assert "Editable installation" in (repo / ".venv" / "install.log").read_text(encoding="utf-8")


def test_failed_install_shows_everything(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path)
    done = subprocess.run(["bash", "scripts/start"], cwd=repo, env={**env, "FAIL_INSTALL": "1"}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert "no matching distribution" in done.stderr and "install.log" in done.stderr
