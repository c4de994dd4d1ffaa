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


def test_what_needs_no_vault_key_runs_on_an_engine_of_this_process(engine: Engine) -> None:
    """The names of `LocalAPI` (methods, properties, `config`) answer from a second engine of
    this process on the same home, which holds nothing unlocked."""
    remote = RemoteEngine(DaemonClient(engine.home), engine.home)
    assert [v.vault_id for v in remote.list_vaults()] == [engine.test_vault_id]
    assert remote.resolve_vault("notes").vault_id == engine.test_vault_id
    assert remote.config.path == engine.config.path
    assert (remote.lock_epoch, remote.model_loaded, remote.unlocked_ids()) == (0, False, [])
    assert engine.unlocked_ids() == [engine.test_vault_id]
    remote.close()
