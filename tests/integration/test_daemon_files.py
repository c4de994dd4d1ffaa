"""The daemon's own files: a link (or a hard link, a folder) planted where its lock file, log
or socket goes is refused with a clear error and the file it points at keeps every byte; and
a home without config.toml starts its daemon like any other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.daemon import unlock

PRECIOUS = b"a file the daemon must never truncate or append to\n"


@pytest.fixture
def home(homes) -> Path:
    home = homes.make()
    (home / "daemon").mkdir(mode=0o700)
    return home


def refused(home: Path, name: str) -> None:
    for verb in (("daemon", "--detach"), ("unlock", "notes")):
        result = run_cli(home, "--json", *verb)
        assert result.code != 0, result.stdout
        error = result.json["error"]
        assert error["code"] == "home_invalid", error
        assert name in error["message"] and "Move it away" in error["message"]


@pytest.mark.parametrize(("name", "plant"), [("daemon.lock", "symlink"), ("daemon.log", "symlink"),
                                             ("daemon.lock", "hardlink")])
def test_a_link_planted_at_a_daemon_file_is_refused_and_its_target_keeps_its_bytes(
        home: Path, tmp_path: Path, name: str, plant: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(PRECIOUS)
    planted = home / "daemon" / name
    planted.symlink_to(victim) if plant == "symlink" else os.link(victim, planted)
    refused(home, name)
    assert victim.read_bytes() == PRECIOUS


def test_a_folder_where_the_socket_goes_is_refused_clearly(home: Path) -> None:
    (home / "daemon" / "daemon.sock").mkdir()
    refused(home, "daemon.sock")


def test_unlock_in_a_home_without_a_config_file_starts_the_daemon(home: Path) -> None:
    (home / "config.toml").unlink(missing_ok=True)
    result = unlock(home, "notes")
    assert result.code == 0, result.stdout + result.stderr
    assert result.json["vault_id"]
