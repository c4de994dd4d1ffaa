"""Test homes made the way a user makes them (the CLI in this process, cheap KDF), and the
daemons a test started in them stopped afterwards: the `homes` and `module_homes` fixtures
(tests/conftest.py). A test file that needs one particular home writes a two-line `home`
fixture on top of them instead of building it by hand."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.vaults import create_vault, home_with_a_note


def minilm_config(model_dir: Path, threads: int = 1) -> str:
    """config.toml text for the MiniLM test model (`minilm_dir` fixture) as the local embedder."""
    return (f'[rag]\nlocal_model_dir = "{model_dir}"\nlocal_model_profile = "sentence-transformers"\n'
            f'local_threads = {threads}\n')


def write_config(home: Path, text: str) -> Path:
    """`home` (made when missing) with config.toml holding `text`."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")
    return home


class Homes:
    """Makes homes under one folder and stops their daemons at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: list[Path] = []

    def make(self, *, note: tuple[str, str] | None = None, vaults: tuple[str, ...] = ("notes",),
             config: str | None = None, name: str = "home") -> Path:
        """`<folder>/<name>` with its config.toml (when `config` is given) and the vaults made (the
        first holding `note`, a title and a text, when given); with neither a home not made yet."""
        home = self.folder / name
        self.made.append(home)
        if config is not None:
            write_config(home, config)
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
