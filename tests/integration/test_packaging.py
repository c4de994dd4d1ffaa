"""The sdist and wheel as a user gets them: built with `python -m build`, installed into a fresh
environment outside the checkout, and run through the installed `memories` and `memories-tui`.

The fresh environment gets the wheel's declared dependencies (and nothing else of this test
environment) linked in from here, see tests/helpers/wheel_env.py: no index, no network, seconds
instead of minutes. The vault commands run with the shipped Argon2id parameters (about a second
per create or unlock), exactly as installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

import memories_tui
from tests.helpers.paths import REPO_ROOT
from tests.helpers.wheel_env import FreshEnv, build, make_fresh_env

PASSPHRASE = "correct horse battery staple"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build(REPO_ROOT, tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="module")
def fresh(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> FreshEnv:
    return make_fresh_env(tmp_path_factory.mktemp("fresh"), built[1])


def _package_data() -> set[str]:
    """Every file under memories_tui/ that is not Python code, as the checkout tracks it."""
    listed = subprocess.run(["git", "-C", str(REPO_ROOT), "ls-files", "memories_tui"], capture_output=True,
                            text=True, check=False)
    names = listed.stdout.split() if listed.returncode == 0 and listed.stdout else [
        str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "memories_tui").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts]
    return {n for n in names if not n.endswith((".py", ".pyc"))}


def test_the_wheel_and_sdist_carry_everything_the_app_reads(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    assert wheel.name == f"memories_tui-{memories_tui.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"memories_tui-{memories_tui.__version__}.dist-info"
        meta = zf.read(f"{info}/METADATA").decode()
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
    data = _package_data()
    assert {"memories_tui/samples/01-welcome.md", "memories_tui/skill/SKILL.md", "memories_tui/tui/app.tcss",
            "memories_tui/config.example.toml"} <= data
    # the interface catalogs: the .po sources become the .mo files gettext reads (setup.py)
    catalogs = {n for n in data if n.endswith(".po")}
    assert {"memories_tui/locale/zh_Hant/LC_MESSAGES/memories.po"} <= catalogs
    assert {n.removesuffix(".po") + ".mo" for n in catalogs} <= names
    assert not catalogs & names, "the wheel carries compiled catalogs, not their sources"
    assert data - catalogs - names == set(), "package data missing from the wheel (pyproject [tool.setuptools.package-data])"
    assert {f"{info}/licenses/LICENSE", f"{info}/licenses/THIRD_PARTY_NOTICES.md"} <= names
    assert f"\nVersion: {memories_tui.__version__}\n" in meta
    assert "\nLicense-Expression: MIT\n" in meta
    assert "memories = memories_tui.cli:main" in entry_points
    assert "memories-tui = memories_tui.tui.app:main" in entry_points
    assert not [n for n in names if n.startswith(("tests/", "bench/", "scripts/"))]
    with tarfile.open(sdist) as tf:
        top = f"memories_tui-{memories_tui.__version__}"
        in_sdist = {m.name.removeprefix(f"{top}/") for m in tf.getmembers()}
    assert {"LICENSE", "THIRD_PARTY_NOTICES.md", "CHANGELOG.md", "README.md", "pyproject.toml",
            "config.example.toml", "docs/cli.md", "docs/security.md"} <= in_sdist
    assert data <= in_sdist


def test_the_example_config_at_the_root_is_the_packaged_one() -> None:
    """README links the root copy; `memories init` writes the packaged one. They must not drift."""
    root = (REPO_ROOT / "config.example.toml").read_text(encoding="utf-8")
    assert root == (REPO_ROOT / "memories_tui" / "config.example.toml").read_text(encoding="utf-8")


def _run(fresh: FreshEnv, cwd: Path, *args: str, passphrase: str | None = None) -> subprocess.CompletedProcess[str]:
    env = fresh.env(cwd / "user")
    if passphrase is not None:
        env["MEMORIES_PASSPHRASE"] = passphrase
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8",
                          check=False, timeout=300, stdin=subprocess.DEVNULL)


def test_the_installed_commands_work_with_no_checkout_around(fresh: FreshEnv, tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    where = _run(fresh, tmp_path, str(fresh.python), "-c", "import memories_tui; print(memories_tui.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(fresh.site_packages), where.stdout
    checked = subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh.python), "check"],
                             capture_output=True, text=True, check=False, env=fresh.env(tmp_path / "user"))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    version = _run(fresh, tmp_path, "memories", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"memories {memories_tui.__version__}"

    home = tmp_path / "home"
    init = _run(fresh, tmp_path, "memories", "--home", str(home), "init")
    assert init.returncode == 0, init.stderr
    assert "[rag]" in (home / "config.toml").read_text(encoding="utf-8")

    created = _run(fresh, tmp_path, "memories", "--home", str(home), "--json", "vault", "create", "notes",
                   passphrase=PASSPHRASE)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["name"] == "notes"

    samples = sorted((fresh.site_packages / "memories_tui" / "samples").glob("*.md"))
    assert len(samples) == 5
    ingested = _run(fresh, tmp_path, "memories", "--home", str(home), "--json", "rag", "ingest", "notes",
                    *map(str, samples), passphrase=PASSPHRASE)
    assert ingested.returncode == 0, ingested.stderr
    assert [r["status"] for r in json.loads(ingested.stdout)["results"]] == ["created"] * 5

    for query, title in (("starter", "Sourdough bread notes"), ("咖啡", "手沖咖啡筆記")):
        found = _run(fresh, tmp_path, "memories", "--home", str(home), "--json", "rag", "search", "notes", query,
                     passphrase=PASSPHRASE)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["title"] == title

    # the compiled catalogs came along (Babel is never imported for them: no .po is installed)
    chinese = _run(fresh, tmp_path, "memories", "--home", str(home), "--lang", "zh-Hans", "rag", "search", "notes",
                   "nothing-like-this", passphrase=PASSPHRASE)
    assert chinese.returncode == 0 and chinese.stdout.strip() == "没有结果。", chinese.stderr

    tui_help = _run(fresh, tmp_path, "memories-tui", "--help")
    assert tui_help.returncode == 0 and "memories-tui" in tui_help.stdout, tui_help.stderr
    script = _run(fresh, tmp_path, "memories", "completion", "bash")
    assert script.returncode == 0 and "complete " in script.stdout and "memories" in script.stdout, script.stderr


FIRST_FRAME = textwrap.dedent("""
    import asyncio, sys
    from memories_tui.engine import Engine
    from memories_tui.tui.app import MemoriesApp

    async def main() -> None:
        app = MemoriesApp(Engine.open(sys.argv[1]))
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(500):
                if type(app.screen).__name__ == "CreateVaultScreen":
                    break
                await pilot.pause(0.02)
            screen = app.screen
            print(type(screen).__name__)
            print(bool(screen.query("#samples")), bool(screen.query("#name")))
            print(len(app.stylesheet.rules) > 0)

    asyncio.run(main())
""")


def test_the_installed_tui_draws_its_first_run_screen(fresh: FreshEnv, tmp_path: Path) -> None:
    """Headless (Textual's run_test) with the wheel's own style sheet and sample notes."""
    (tmp_path / "user").mkdir()
    script = tmp_path / "first_frame.py"
    script.write_text(FIRST_FRAME, encoding="utf-8")
    drawn = _run(fresh, tmp_path, str(fresh.python), str(script), str(tmp_path / "home"))
    assert drawn.returncode == 0, drawn.stderr[-3000:]
    assert drawn.stdout.split("\n")[:3] == ["CreateVaultScreen", "True True", "True"], drawn.stdout
