"""A folder target on a disk that really fills up: a tmpfs of 1 MiB mounted over the sync folder
in a mount namespace of its own (`unshare --user --map-root-user --mount`), so nothing outside
sees it and it is gone when the child ends. The child runs the whole story through the CLI (its
`memories` processes share the namespace) and prints what it saw; this test judges it:

a first sync fits; then the disk is filled to 48 KiB, records of ~150 KiB are added and synced:
one clear line (`sync_target_full`), no half-written object left in the folder, the other
device still syncs the state before it; the space freed, the same sync goes through and the
other device gets every record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

if __name__ == "__main__":  # the child, inside the namespace
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.helpers.cli import Result, run_cli
from tests.helpers.paths import REPO_ROOT, missing

_DISK = "1m"
_LEFT = 48 * 1024  # bytes left free on the disk before the big sync
_BIG = [f"big {i}" for i in range(12)]


def test_a_full_disk_is_one_clear_line_and_the_next_sync_delivers_everything(tmp_path):
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--user", "--map-root-user", "--mount", "true"],
                                         capture_output=True, check=False).returncode != 0:
        missing("a mount namespace for a small tmpfs (unshare --user --map-root-user --mount; util-linux)")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "--propagation", "private",
                            sys.executable, __file__, str(tmp_path)], capture_output=True, text=True,
                           env=env, timeout=600, check=False)
    assert child.returncode == 0, child.stderr[-3000:]
    seen = json.loads(child.stdout.splitlines()[-1])
    assert seen["first_sync"] == 0, seen
    full = seen["full"]
    assert full["code"] != 0 and full["error"] == "sync_target_full", full
    assert "Nothing was lost" in full["message"] and not full["traceback"], full
    assert seen["left_behind"] == [], "a half-written object stayed in the folder"
    assert seen["kept_here"] == sorted(["small", *_BIG]), "the records of the failed sync are gone"
    assert seen["other_before"] == ["small"], "the other device saw part of a failed push"
    assert seen["after_freeing"] == 0 and seen["other_after"] == sorted(["small", *_BIG])


def _titles(home: Path) -> list[str]:
    return sorted(r["title"] for r in run_cli(home, "--json", "memory", "list", "notes").json["records"])


def _checked(result: Result) -> int:
    if result.code != 0:
        raise SystemExit(f"unexpected failure: {result.stdout}\n{result.stderr}")
    return result.code


def _story(tmp: Path) -> dict[str, object]:
    """Everything runs with the tmpfs mounted over tmp/Sync (this process's namespace only)."""
    a, b, folder = tmp / "a", tmp / "b", tmp / "Sync"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={_DISK},mode=0700", "tmpfs", str(folder)], check=True)
    _checked(run_cli(a, "vault", "create", "notes"))
    _checked(run_cli(a, "memory", "add", "notes", "--title", "small", "--text", "fits"))
    _checked(run_cli(a, "sync", "add", "notes", str(folder)))
    first = run_cli(a, "sync", "notes").code
    _checked(run_cli(b, "sync", "join", str(folder)))
    stats = os.statvfs(folder)
    filler = folder / "filler.bin"  # something else on the disk: a user's own file
    filler.write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize - _LEFT))
    for title in _BIG:  # incompressible text: the bundle cannot shrink below the disk's room
        _checked(run_cli(a, "memory", "add", "notes", "--title", title, "--text", os.urandom(6000).hex()))
    failed = run_cli(a, "--json", "sync", "notes")
    error = json.loads(failed.stdout).get("error", {}) if failed.stdout.strip() else {}
    left = sorted(p.name for p in folder.rglob("*") if p.is_file() and p.name.startswith("."))
    kept = _titles(a)
    _checked(run_cli(b, "sync", "notes"))
    other_before = _titles(b)
    filler.unlink()
    after = run_cli(a, "sync", "notes").code
    _checked(run_cli(b, "sync", "notes"))
    return {"first_sync": first, "full": {"code": failed.code, "error": error.get("code"),
                                          "message": error.get("message", ""),
                                          "traceback": "Traceback" in failed.stderr + failed.stdout},
            "left_behind": left, "kept_here": kept, "other_before": other_before, "after_freeing": after,
            "other_after": _titles(b)}


if __name__ == "__main__":
    print(json.dumps(_story(Path(sys.argv[1]))))
