"""The one helper that makes a folder a user named for our files (backups, exports): private,
with its parents, a file in the way named in the caller's own sentence, a folder that exists
(or that another process made meanwhile) taken as it is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memories_tui.errors import VaultError
from memories_tui.files import make_private_folder
from memories_tui.i18n import msg

FILE = msg("{what} is a file", what="x")
INSIDE = msg("{what} lies inside a file", what="x")


def test_a_missing_folder_is_made_private_with_its_parents(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    assert make_private_folder(folder, is_a_file=FILE, inside_a_file=INSIDE) is True
    assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0


def test_an_existing_folder_is_taken_as_it_is(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    assert make_private_folder(tmp_path, is_a_file=FILE, inside_a_file=INSIDE) is False
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # not ours to change


def test_a_file_in_the_way_is_not_a_folder_in_the_callers_words(tmp_path: Path) -> None:
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x")
    with pytest.raises(VaultError) as at:
        make_private_folder(blocker, is_a_file=FILE, inside_a_file=INSIDE)
    assert at.value.code == "not_a_folder" and str(at.value) == "x is a file"
    with pytest.raises(VaultError) as inside:
        make_private_folder(blocker / "sub", is_a_file=FILE, inside_a_file=INSIDE)
    assert inside.value.code == "not_a_folder" and str(inside.value) == "x lies inside a file"
    assert blocker.read_text() == "x"


def test_a_dangling_link_is_an_os_error_for_the_caller_to_name(tmp_path: Path) -> None:
    link = tmp_path / "gone"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        make_private_folder(link, is_a_file=FILE, inside_a_file=INSIDE)
