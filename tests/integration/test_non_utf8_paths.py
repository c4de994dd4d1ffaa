"""A home, backup folder or export folder whose path is not UTF-8 (b'\\xff' in a name, as a
Latin-1 system makes): every command works, JSON output stays UTF-8 (the byte travels as a
`\\udcff` escape that decodes back to the same path) and people see `\\xff`; through the
resident engine as well."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.daemon import stop, unlock

STRICT = {"PYTHONIOENCODING": "utf-8"}  # a UTF-8 terminal or pipe: printing a raw surrogate would fail


def _odd(parent: Path, name: bytes) -> Path:
    return Path(os.fsdecode(os.fsencode(parent) + b"/" + name))


def _ok(result) -> dict:
    assert result.code == 0 and "Traceback" not in result.stderr, (result.stdout, result.stderr)
    return result.json


def test_a_home_and_backup_folder_with_a_non_utf8_byte_work(tmp_path: Path) -> None:
    home = _odd(tmp_path, b"h\xffome")
    backups = _odd(tmp_path, b"b\xffckups")
    backups.mkdir()
    _ok(run_cli(home, "--json", "vault", "create", "notes", env=STRICT))
    listed = _ok(run_cli(home, "--json", "vault", "list", env=STRICT))
    assert [v["name"] for v in listed["vaults"]] == ["notes"]
    _ok(run_cli(home, "--json", "memory", "add", "notes", "--title", "Kyoto", "--text", "JR pass", env=STRICT))
    backup = _ok(run_cli(home, "--json", "vault", "backup", "notes", str(backups), env=STRICT))
    assert Path(backup["path"]).parent == backups and Path(backup["path"]).is_file()  # the same bytes come back
    people = run_cli(home, "vault", "backup", "notes", str(backups), env=STRICT)
    assert people.code == 0 and "b\\xffckups" in people.stdout, people.stdout + people.stderr
    restored = _ok(run_cli(home, "--json", "vault", "restore", backup["path"], "--as", "copy", env=STRICT))
    assert restored["records"] == 1
    assert _ok(run_cli(home, "--json", "memory", "search", "copy", "Kyoto", env=STRICT))["results"]
    exported = _ok(run_cli(home, "--json", "vault", "export", "notes", str(_odd(backups, b"exp\xfe")), env=STRICT))
    assert (Path(exported["folder"]) / "Kyoto.md").is_file()
    try:
        _ok(unlock(home, "notes", env=STRICT))
        status = run_cli(home, "daemon", "status", env=STRICT)
        assert status.code == 0 and "h\\xffome" in status.stdout, status.stdout + status.stderr
        served = _ok(run_cli(home, "--json", "vault", "backup", "notes", str(backups), passphrase=None, env=STRICT))
        assert Path(served["path"]).parent == backups
        again = _ok(run_cli(home, "--json", "vault", "restore", backup["path"], "--force", env=STRICT))
        assert again["replaced"] is True and json.dumps(again)  # a restore through the daemon
    finally:
        stop(home)
