"""Real-terminal smoke run: the TUI in tmux at 80×24 and 140×45.

A real process in a real pseudo-terminal, driven by `tmux send-keys` and read with
`tmux capture-pane`: launch, unlock, search with no model, F1 help, lock, quit, sync now with a second home
— and no traceback on the screen or on stderr. A first run in an empty home fills the create
form in one burst of keys, as a paste or a password manager's auto-type sends them. tmux runs on a private socket (-L) with no
config. The vault is made by the CLI with the real KDF defaults, so the TUI runs with no test hook. Without tmux the test skips (scripts/test installs it when it runs as root in CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "memories_tui" / "samples"
PASSPHRASE = "smoke test passphrase"
NEW_PASSPHRASE = "a longer smoke test passphrase"

pytestmark = pytest.mark.slow


def _tmux() -> str:
    tmux = shutil.which("tmux")
    if tmux is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is missing in CI; scripts/test installs it when it runs as root")
        pytest.skip("tmux is not installed (apt-get install tmux); the real-terminal smoke run needs it")
    return tmux


class Terminal:
    def __init__(self, tmux: str, socket: str, session: str) -> None:
        self.tmux, self.socket, self.session = tmux, socket, session

    def run(self, *args: str) -> str:
        return subprocess.run([self.tmux, "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, timeout=30).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def wait_for(self, text: str, timeout: float = 120.0) -> str:  # generous: CI machines are shared
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            assert "Traceback" not in screen, screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} did not appear within {timeout:g} s; the screen:\n{screen}")
            time.sleep(0.2)


def quit_cleanly(term: Terminal, exit_file: Path, *banned: str) -> None:
    """ctrl+q: the app exits with 0 and nothing it printed on the way out shows a traceback
    (Textual draws on stderr: one would be printed here on exit) or any of `banned`."""
    term.keys("C-q")
    deadline = time.monotonic() + 30
    while not exit_file.exists():
        assert time.monotonic() < deadline, term.screen()
        time.sleep(0.2)
    after = term.screen()
    assert exit_file.read_text().strip() == "0", after
    assert not [word for word in ("Traceback", *banned) if word in after], after


@contextmanager
def tui_in_tmux(home: Path, width: int, height: int, name: str, exit_file: Path | None = None,
                locale: str = "C.UTF-8") -> Iterator[Terminal]:
    """`memories-tui --home HOME` in a private tmux server, in `locale` (the interface language
    follows it); its exit code goes to `exit_file`."""
    tmux = _tmux()
    socket = f"memories-smoke-{os.getpid()}-{name}"
    # COLUMNS/LINES (set by some test runners) would override the terminal's own size in the app
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMORIES_") and k not in ("LC_ALL", "LC_MESSAGES", "LANGUAGE", "COLUMNS", "LINES")}
    env["LANG"] = locale
    record_exit = ["echo", "$?", ">", str(exit_file), ";"] if exit_file else []
    command = " ".join([
        "cd", str(Path(__file__).resolve().parents[2]), "&&",
        sys.executable, "-m", "memories_tui.tui.app", "--home", str(home), ";", *record_exit, "sleep 30"])
    subprocess.run([tmux, "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "smoke", "-x", str(width),
                    "-y", str(height), "-e", "TERM=xterm-256color", command], check=True, env=env, timeout=30)
    try:
        yield Terminal(tmux, socket, "smoke")
    finally:
        subprocess.run([tmux, "-L", socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("smoke") / "home"
    # The real Argon2id defaults (~1 s each time): the TUI process in tmux has no test hooks.
    created = run_cli(home, "vault", "create", "Personal", passphrase=PASSPHRASE, real_kdf=True)
    assert created.code == 0, created.stderr
    ingested = run_cli(home, "rag", "ingest", "Personal", *map(str, sorted(SAMPLES.glob("*.md"))),
                       passphrase=PASSPHRASE, real_kdf=True)
    assert ingested.code == 0, ingested.stderr
    return home


@pytest.mark.parametrize("width,height", [(80, 24), (140, 45)])
def test_tui_in_a_real_terminal(home: Path, width: int, height: int) -> None:
    exit_file = home.parent / f"exit-{width}"
    with tui_in_tmux(home, width, height, str(width), exit_file) as term:
        term.wait_for("Unlock Personal")
        term.keys(PASSPHRASE, literal=True)
        term.keys("Enter")
        term.wait_for("Welcome to Memories", timeout=240)  # the records list (real Argon2id unlock)

        term.keys("s")
        term.wait_for("Hybrid")
        term.keys("sourdough", literal=True)
        term.keys("Enter")
        term.wait_for("[S1]")
        if width < 120:  # one pane at a time, tabs above it: f3 shows Vector, then Hybrid
            term.keys("F3")
            term.wait_for("Needs the embedding model")
            term.keys("F3")
        screen = term.wait_for("Keyword results")  # Hybrid falls back to BM25 without a model
        assert "BM25" in screen and "F2 installs it" in screen

        term.keys("F1")
        term.wait_for("Keys · Search")
        term.keys("Escape")
        term.wait_for("Hybrid")

        term.keys("C-l")
        term.wait_for("Unlock Personal")
        quit_cleanly(term, exit_file, "Error")


def test_first_run_form_takes_a_burst_of_keys(tmp_path: Path) -> None:
    """Enter, passphrase, tab, passphrase, enter in one write: each key reaches the field that has
    focus after the keys before it (Textual's tab binding and Input.Submitted moved the focus only
    after the keys behind them had been routed to the old field)."""
    home = tmp_path / "home"
    with tui_in_tmux(home, 80, 24, "first-run") as term:
        term.wait_for("Create your first vault")
        term.keys("Enter", PASSPHRASE, "Tab", PASSPHRASE, "Enter")  # one send-keys call, one burst
        term.wait_for("Imported 5 sample notes", timeout=240)  # the real Argon2id at creation
        assert (home / "vaults").is_dir() and any((home / "vaults").glob("*.mvault"))
        term.keys("C-q")


def test_a_taiwanese_locale_opens_a_traditional_chinese_first_run(tmp_path: Path) -> None:
    """LANG=zh_TW.UTF-8 and nothing else: the create form, its footer and the created vault's
    records screen are in Traditional Chinese (memories-tui used to start in English)."""
    home = tmp_path / "home"
    with tui_in_tmux(home, 80, 24, "zh-tw", locale="zh_TW.UTF-8") as term:
        screen = term.wait_for("歡迎使用")
        assert "說明" in screen and "Create" not in screen, screen
        term.keys("Enter", PASSPHRASE, "Tab", PASSPHRASE, "Enter")
        screen = term.wait_for("搜尋", timeout=240)  # the records screen's footer after the real Argon2id
        term.keys("C-q")


def test_keys_typed_during_the_unlock_and_an_over_long_query(home: Path) -> None:
    """In a real terminal, one burst after the lock: the passphrase,
    enter, `s`, 京都, enter — while the real Argon2id runs — unlocks (no "Wrong passphrase")
    and searches for 京都. Then, with results shown, a 1,100-byte query: the limit is named
    and the app keeps running (it used to exit with a traceback that printed local values)."""
    exit_file = home.parent / "exit-burst"
    with tui_in_tmux(home, 140, 45, "burst", exit_file) as term:
        term.wait_for("Unlock Personal")
        term.keys(PASSPHRASE, "Enter", "s", "京都", "Enter")  # one send-keys call, one burst
        screen = term.wait_for("[S1]", timeout=240)
        assert "京都旅行" in screen and "Wrong passphrase" not in screen, screen

        # (ctrl+u runs as a binding once the key has bubbled up to the app, after the letters
        # typed behind it went in: it is never part of a burst here)
        term.keys("C-f", "x" * 1100, "Enter")
        term.wait_for("the limit is 1,024")
        term.keys("C-u")
        term.wait_for("Search (English, 中文, or both)")  # the field's placeholder: it is empty
        term.keys("sourdough", "Enter")
        screen = term.wait_for("Sourdough bread")
        assert "[S1]" in screen and "the limit is" not in screen

        quit_cleanly(term, exit_file, "locals")


def test_sync_now_brings_another_devices_note_in_a_real_terminal(tmp_path: Path) -> None:
    """Two homes on one folder target, made with the CLI: the TUI of the first is open when the
    other device writes a note; `t` then `s` opens the sync dialog, which says what came, and
    the records list shows the note. Then "Change passphrase" from the palette (real Argon2id):
    the other device takes the new passphrase at its next sync, and its old one stops working; a
    third, empty home joins from its palette with the new one. Both dialogs get their fields in
    one burst of keys, as a password manager's auto-type sends them."""
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    for home, args in ((a, ("vault", "create", "Personal")), (a, ("memory", "add", "Personal", "--title", "Oven",
                                                                  "--text", "Bake bread at 250 °C.")),
                       (a, ("sync", "add", "Personal", str(folder))), (a, ("sync", "Personal")),
                       (b, ("sync", "join", str(folder)))):
        done = run_cli(home, *args, passphrase=PASSPHRASE, real_kdf=True)
        assert done.code == 0, (args, done.stderr)
    exit_file = tmp_path / "exit-sync"
    with tui_in_tmux(a, 100, 30, "sync", exit_file) as term:
        term.wait_for("Unlock Personal")
        term.keys(PASSPHRASE, "Enter")
        term.wait_for("Oven", timeout=240)  # the records list (real Argon2id unlock)
        for args in (("memory", "add", "Personal", "--title", "Medlar tart", "--text", "Written on the laptop."),
                     ("sync", "Personal")):
            done = run_cli(b, *args, passphrase=PASSPHRASE, real_kdf=True)
            assert done.code == 0, (args, done.stderr)
        term.keys("t")
        term.wait_for("s Sync now")  # the status screen's footer (its sync section is further down)
        term.keys("s")
        screen = term.wait_for("Synced.", timeout=120)
        text = " ".join(screen.replace("█", " ").split())  # the dialog wraps its lines inside its border
        assert "1 received from 1 other device(s)" in text and "1 record(s) updated here" in text, screen
        term.keys("Escape")
        term.wait_for("r Refresh")
        term.keys("Escape")
        term.wait_for("Medlar tart")
        term.keys("C-p")
        term.wait_for("Search")  # the palette's list
        term.keys("Change passphrase")
        term.wait_for("Wrap this vault's key")
        term.keys("Enter")
        term.wait_for("current passphrase")
        term.keys(PASSPHRASE, "Enter", NEW_PASSPHRASE, "Enter", NEW_PASSPHRASE, "Enter")
        term.wait_for("Passphrase changed for Personal", timeout=240)
        quit_cleanly(term, exit_file)
    followed = run_cli(b, "sync", "Personal", passphrase=PASSPHRASE, real_kdf=True)  # its file still opens with the old
    assert followed.code == 0 and "changed on another device" in followed.stdout + followed.stderr, followed
    assert run_cli(b, "memory", "list", "Personal", passphrase=PASSPHRASE, real_kdf=True).code != 0
    listed = run_cli(b, "memory", "list", "Personal", passphrase=NEW_PASSPHRASE, real_kdf=True)
    assert listed.code == 0 and "Medlar tart" in listed.stdout, listed
    exit_file = tmp_path / "exit-join"
    with tui_in_tmux(tmp_path / "c", 100, 30, "join", exit_file) as term:
        term.wait_for("Create your first vault")
        term.keys("C-p")
        term.wait_for("Create vault")  # the palette's list
        term.keys("Join a vault")
        term.wait_for("Bring a vault")
        term.keys("Enter")
        term.wait_for("Name here (empty")  # the dialog's last field (its title is the palette's entry too)
        term.keys(str(folder), "Enter", NEW_PASSPHRASE, "Enter")  # one send-keys call, one burst
        term.wait_for("Medlar tart", timeout=240)  # joined (the real Argon2id), the records list
        quit_cleanly(term, exit_file)
