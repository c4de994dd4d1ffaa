"""scripts/mutants.py --check: says which planted bug no longer applies, and why, in one line each."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "mutants.py"


def _load():
    spec = importlib.util.spec_from_file_location("mutants_script", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants_script"] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


mutants = _load()


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "code.py").write_text("LIMIT = 10\n\n\ndef cap(n):\n    return min(n, LIMIT)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_code.py").write_text("def test_cap():\n    pass\n\n\nasync def test_async():\n    pass\n")
    return tmp_path


def test_a_mutant_that_applies_has_no_problems(tmp_path):
    root = _tree(tmp_path)
    m = mutants.Mutant("cap-off", "no cap", "pkg/code.py", (("LIMIT = 10", "LIMIT = 11"),),
                       ("tests/test_code.py::test_cap", "tests/test_code.py::test_async[x]", "tests/test_code.py"))
    assert mutants.check(m, root) == []


def test_every_reason_a_mutant_would_not_run_is_named(tmp_path):
    root = _tree(tmp_path)
    base = mutants.Mutant("cap-off", "no cap", "pkg/code.py", (("LIMIT = 10", "LIMIT = 11"),), ("tests/test_code.py",))
    assert "found 0 times" in mutants.check(replace(base, edits=(("LIMIT = 99", "LIMIT = 1"),)), root)[0]
    assert "found 2 times" in mutants.check(replace(base, edits=(("LIMIT", "CAP"),)), root)[0]
    assert "changes nothing" in mutants.check(replace(base, edits=(("LIMIT = 10", "LIMIT = 10"),)), root)[0]
    assert "does not compile" in mutants.check(replace(base, edits=(("return min(", "return min(("),)), root)[0]
    assert "does not exist" in mutants.check(replace(base, file="pkg/gone.py"), root)[0]
    assert "no function test_gone" in mutants.check(replace(base, tests=("tests/test_code.py::test_gone",)), root)[0]
    assert "tests/nope.py does not exist" in mutants.check(replace(base, tests=("tests/nope.py",)), root)[0]


def test_check_of_this_repository_passes_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"scripts/mutants.py --check: all {len(mutants.MUTANTS)} mutants apply")
    assert len({m.id for m in mutants.MUTANTS}) == len(mutants.MUTANTS)
