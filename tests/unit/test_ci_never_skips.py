"""CI never skips silently (tests/helpers/paths.py and the hook in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO_ROOT, SHARED, in_ci, require_files


def test_shared_folder_is_found_beside_the_repository_root():
    assert (REPO_ROOT / "memories_tui").is_dir() and (REPO_ROOT / "tests" / "helpers").is_dir()
    assert SHARED == REPO_ROOT.parent / "shared"


@pytest.mark.parametrize("value,expected", [("true", True), ("1", True), ("yes", True), ("", False),
                                            ("false", False), ("0", False)])
def test_ci_variable(monkeypatch, value, expected):
    monkeypatch.setenv("CI", value)
    assert in_ci() is expected


def test_missing_input_skips_with_a_reason_outside_ci_and_fails_in_ci(monkeypatch, tmp_path):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"model.onnx not found in .*; run this"):
        require_files(tmp_path, ("model.onnx",), "run this")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing in CI: model.onnx"):
        require_files(tmp_path, ("model.onnx",), "run this")
    (tmp_path / "model.onnx").write_bytes(b"x")
    assert require_files(tmp_path, ("model.onnx",), "run this") == tmp_path


def test_any_skip_is_a_failure_under_ci(tmp_path):
    """A plain pytest.skip, run in a child pytest with this suite's conftest as a plugin."""
    (tmp_path / "test_child.py").write_text("import pytest\n\ndef test_skipped():\n    pytest.skip('no reason')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
           "--rootdir", str(tmp_path), str(tmp_path / "test_child.py")]
    outside = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert outside.returncode == 0 and "1 skipped" in outside.stdout, outside.stdout
    inside = subprocess.run(cmd, cwd=tmp_path, env={**env, "CI": "true"}, capture_output=True, text=True,
                            check=False)
    assert inside.returncode == 1 and "1 failed" in inside.stdout, inside.stdout
    assert "skipped under CI" in inside.stdout
