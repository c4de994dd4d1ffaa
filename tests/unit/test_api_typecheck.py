"""mypy holds both engines to the table: a method of `Engine` or of `RemoteEngine` that drifts
from `EngineAPI` (gone, a parameter retyped or missing, another result) fails the type check.

Shown on drifted copies, in one run of mypy over a small module beside the package: every
line marked `# drift` must be reported, and nothing else (the unchanged copies pass). The
project's own mypy run then covers the real classes (engine/api.py `_engine_satisfies_the_api`,
and `RemoteEngine`'s declared base).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

from tests.helpers.paths import REPO_ROOT

DRIFTED = '''
from memories_tui.daemon.remote_engine import RemoteEngine
from memories_tui.engine import Engine, Record
from memories_tui.engine.api import EngineHandle


def _engine_as_it_is(engine: Engine) -> EngineHandle:
    return engine


class RemoteAsItIs(RemoteEngine):
    def vault_name(self, vault_id: str) -> str:
        return vault_id


class RemoteOtherResult(RemoteEngine):
    def vault_name(self, vault_id: str) -> int:  # drift
        return 0


class RemoteRetyped(RemoteEngine):
    def read_record(self, vault_id: str, record_id: int, revision: int | None = None) -> Record:  # drift
        raise NotImplementedError


class RemoteMissingParameter(RemoteEngine):
    def list_records(self, vault_id: str) -> list[Record]:  # drift
        return []


class EngineWithoutIt(Engine):
    vault_name = None  # type: ignore[assignment]


class EngineOtherResult(Engine):
    def revisions(self, vault_id: str, record_id: str) -> list[str]:  # type: ignore[override]
        return []


class EngineRetyped(Engine):
    def delete_record(self, vault_id: str, record_id: bytes) -> None:  # type: ignore[override]
        return None


def _without_it(engine: EngineWithoutIt) -> EngineHandle:
    return engine  # drift


def _other_result(engine: EngineOtherResult) -> EngineHandle:
    return engine  # drift


def _retyped(engine: EngineRetyped) -> EngineHandle:
    return engine  # drift
'''


@pytest.mark.slow
def test_mypy_reports_each_drift_from_the_table_and_nothing_else(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "drifted_engines.py"
    module.write_text(DRIFTED, encoding="utf-8")
    monkeypatch.chdir(REPO_ROOT)  # where the package is found, and the project's cache reused
    out, err, status = api.run(["--config-file", str(REPO_ROOT / "pyproject.toml"), "--no-error-summary",
                                "--show-error-codes", str(module)])
    reported = {int(line) for line in re.findall(r"drifted_engines\.py:(\d+): error", out)}
    marked = {n for n, line in enumerate(DRIFTED.splitlines(), start=1) if line.endswith("# drift")}
    assert len(marked) == 6
    assert reported == marked, out + err
    assert status == 1
