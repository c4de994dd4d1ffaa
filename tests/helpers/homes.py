"""Test homes made the way a user makes them (the CLI in this process, cheap KDF), and the
daemons a test started in them stopped afterwards: the `homes` and `module_homes` fixtures
(tests/conftest.py). A test file that needs one particular home writes a two-line `home`
fixture on top of them instead of building it by hand."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.vaults import create_vault, home_with_a_note


class Homes:
    """Makes homes under one folder and stops their daemons at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: list[Path] = []

    def make(self, *, note: tuple[str, str] | None = None, vaults: tuple[str, ...] = ("notes",),
             name: str = "home") -> Path:
        """`<folder>/<name>` with the vaults made (the first holding `note`, a title and a text,
        when given); with `vaults=()` a home not made yet."""
        home = self.folder / name
        self.made.append(home)
        for n, vault in enumerate(vaults):
            if n == 0 and note is not None:
                home_with_a_note(home, *note)
            else:
                create_vault(home, vault)
        return home

    def stop_daemons(self) -> None:
        from tests.helpers.daemon import stop

        for home in self.made:
            stop(home)
