"""The daemon's client engine refuses, in a sentence, what it does not forward: an Engine method
that reached for a vault in this process would otherwise say the vault is locked or unknown,
while the daemon holds it unlocked."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.daemon import DaemonClient
from memories_tui.daemon.remote_engine import RemoteEngine
from memories_tui.engine import Engine
from memories_tui.errors import UsageError


@pytest.mark.parametrize("call", [
    lambda engine: engine.load_index("notes"),
    lambda engine: engine.add_records("notes", []),
])
def test_a_method_the_daemon_does_not_serve_says_how_to_run_it(tmp_path: Path, call) -> None:
    local = Engine.open(tmp_path / "home")
    remote = RemoteEngine(DaemonClient(local.home), local.home)
    with pytest.raises(UsageError) as refused:
        call(remote)
    assert refused.value.code == "daemon_unsupported"
    assert "--no-daemon" in refused.value.message
