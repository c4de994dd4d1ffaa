"""kill -9 at each step of a sync (after verifying the pull, after the commit, between the
bundles and the head), then sync again: every device converges and nothing is lost. Only the
killed sync is a real process; the rest runs in this one (call_cli) to keep the test short."""

from __future__ import annotations

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.faults import killed_at


def _titles(home) -> set[str]:
    return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}


@pytest.mark.parametrize("point", ["sync-before-commit", "sync-after-commit", "sync-before-head"])
def test_a_sync_killed_at_any_step_resumes_and_converges(tmp_path, point):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "a-1", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    call_cli(b, "memory", "add", "notes", "--title", "b-1", "--text", "from b")
    assert call_cli(b, "sync", "notes").code == 0
    call_cli(a, "memory", "add", "notes", "--title", "a-2", "--text", "two")  # a has something to push and to pull
    killed_at(point, a, tmp_path, "sync", "notes")
    for home in (a, b, a):
        done = call_cli(home, "sync", "notes")
        assert done.code == 0, done.stderr
    assert _titles(a) == _titles(b) == {"a-1", "a-2", "b-1"}
