"""A fresh virtual environment that holds our built wheel and nothing of the checkout.

Installing the wheel's dependencies from the index would take minutes and the network; instead
the new environment sees exactly the distributions the wheel's `Requires-Dist` names (and theirs,
recursively, extras and markers evaluated), linked one by one from the test run's own
environment into a folder that a `.pth` file adds to its path. A package the wheel imports but
does not declare is therefore missing there, as it would be after `pip install memories-tui`;
the test environment's other packages (pytest, onnx, the editable checkout) are not visible.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement

# What a copy of the checkout leaves out before building: environments, caches, build output.
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", ".models", "build", "dist",
                                     "*.egg-info", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                                     "__failures__")


@dataclass(frozen=True)
class FreshEnv:
    root: Path
    python: Path
    bin: Path
    site_packages: Path
    wheel: Path

    def env(self, home: Path) -> dict[str, str]:
        """The environment of a user who installed the wheel: its bin on PATH, no PYTHONPATH, a
        HOME of its own, no Memories variables, no package index."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("MEMORIES_", "PYTHON", "VIRTUAL_ENV", "PIP_", "_ARGCOMPLETE", "COMP_"))}
        keep.update(PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}", HOME=str(home),
                    PYTHONNOUSERSITE="1", PYTHONIOENCODING="utf-8", PIP_NO_INDEX="1", MEMORIES_NO_DAEMON="1")
        return keep


def build(source: Path, out: Path) -> tuple[Path, Path]:
    """sdist and wheel of a copy of `source` (build's own flow: the wheel is built from the sdist),
    with this environment's setuptools: no download of the build backend."""
    copy = out / "src"
    shutil.copytree(source, copy, ignore=_NOT_SOURCE, symlinks=True)
    dist = out / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(copy)],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"python -m build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


def wheel_requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(zf.read(name).decode("utf-8"))
    return meta.get_all("Requires-Dist") or []


def dependency_closure(requirements: list[str]) -> list[metadata.Distribution]:
    """The installed distributions that `requirements` need, recursively, for this interpreter."""
    found: dict[str, metadata.Distribution] = {}
    walked: set[tuple[str, frozenset[str]]] = set()
    todo = [(Requirement(r), frozenset({""})) for r in requirements]
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
            continue
        key = re.sub(r"[-_.]+", "-", req.name).lower()
        wanted = frozenset({"", *req.extras})
        if (key, wanted) in walked:
            continue
        walked.add((key, wanted))
        dist = metadata.distribution(req.name)  # PackageNotFoundError: needed but not installed here
        if not req.specifier.contains(dist.version, prereleases=True):
            raise AssertionError(f"{req} is not met by the installed {req.name} {dist.version}")
        found[key] = dist
        todo += [(Requirement(r), wanted) for r in dist.requires or []]
    return list(found.values())


def top_level_entries(dist: metadata.Distribution) -> set[Path]:
    """The files and folders `dist` put directly into its site-packages (packages, modules,
    compiled extensions, bundled .libs folders and its .dist-info)."""
    files = dist.files
    if not files:
        raise AssertionError(f"{dist.metadata['Name']} has no RECORD; cannot tell which files are its own")
    entries = set()
    for item in files:
        first = item.parts[0]
        if first in ("..", "__pycache__") or first.endswith(".pth"):
            continue
        entries.add(Path(str(dist.locate_file(first))))
    return entries


def make_fresh_env(root: Path, wheel: Path) -> FreshEnv:
    """A venv at `root` with `wheel` installed (no pip inside it: this environment's pip installs
    into it) and its dependencies linked in from this environment."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=300)
    python = root / "venv" / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    site_packages = Path(purelib)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--no-deps",
                           "--no-compile", "--quiet", str(wheel)], capture_output=True, text=True, check=False,
                          timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"pip install of the wheel failed:\n{done.stdout}\n{done.stderr}")
    deps = root / "deps"
    deps.mkdir()
    for dist in dependency_closure(wheel_requirements(wheel)):
        for entry in top_level_entries(dist):
            link = deps / entry.name
            if not link.exists() and entry.exists():
                link.symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    assert not (deps / "memories_tui").exists(), "the wheel must not depend on itself"
    (site_packages / "zz_memories_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return FreshEnv(root=root, python=python, bin=python.parent, site_packages=site_packages, wheel=wheel)
