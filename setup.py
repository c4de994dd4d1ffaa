"""Compile the interface catalogs (`memories_tui/locale/*/LC_MESSAGES/memories.po`) into the
`.mo` files gettext reads, into the build, so a wheel carries compiled catalogs and no `.po`
(everything else about the package is in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogs(build_py):
    def run(self) -> None:
        super().run()
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in sorted(Path("memories_tui/locale").glob("*/LC_MESSAGES/*.po")):
            target = Path(self.build_lib) / po.with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            with po.open("rb") as source, target.open("wb") as out:
                write_mo(out, read_po(source), use_fuzzy=False)
            target.with_suffix(".po").unlink(missing_ok=True)  # the sdist's MANIFEST.in brings it along


setup(cmdclass={"build_py": BuildWithCatalogs})
