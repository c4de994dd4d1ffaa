"""Flip one byte of a small vault file at a time (a seeded sample of 500 offsets;
MEMORIES_SWEEP_SAMPLE / MEMORIES_SWEEP_SEED change it, MEMORIES_SWEEP_ALL=1 flips every byte) and run every read command on it. Each command must
either print exactly what it printed for the original file, or fail with a MemoriesError code
(never `internal_error`, never a traceback, never different data).

Commands run in-process through the CLI's `main` (the same code path as the `memories`
script) so 500 flips stay fast enough for CI; a few flips also go through real subprocesses.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from memories_tui import cli
from memories_tui.errors import InternalError
from tests.helpers.cli import call_cli
from tests.helpers.vaults import PASS

SAMPLE = 500
# Every code a command may legitimately fail with on a damaged file.
ALLOWED = {"vault_tampered", "vault_damaged", "vault_invalid", "vault_busy", "not_found", "wrong_passphrase",
           "kdf_too_weak", "limit_exceeded"}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = cli.main(["--json", *args])
    out, err = capsys.readouterr()
    if "Traceback" in err or out.count("\n") != 1:
        return 99, {"error": {"code": "not_one_json_line", "message": (out + err)[-2000:]}}
    return code, json.loads(out)


def _comparable(args: tuple[str, ...], payload: dict) -> dict:
    if args[:2] == ("vault", "list"):
        # the record count is read without a key and is not authenticated; a vault that fails
        # its header check moves to `problems`, which is a reported failure, not wrong data
        return {"vaults": [{k: v for k, v in row.items() if k != "records"} for row in payload["vaults"]]}
    return payload


@pytest.fixture
def small_vault(tmp_path, cheap_kdf, monkeypatch, capsys):
    # on tmpfs when there is one: the sweep is about integrity, not durability, and thousands
    # of fsyncs on a shared disk would dominate its run time
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="memories-sweep-", dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) \
        else tmp_path
    home = base / "home"
    # argparse setup costs more than a whole command here; the parser is stateless, build it once
    monkeypatch.setattr(cli, "build_parser", functools.lru_cache(maxsize=1)(cli.build_parser))
    monkeypatch.setenv("MEMORIES_HOME", str(home))
    monkeypatch.setenv("MEMORIES_PASSPHRASE", PASS)
    code, created = _run(capsys, "vault", "create", "sweep")
    assert code == 0
    vid = created["vault_id"]
    _, first = _run(capsys, "memory", "add", vid, "--title", "Zeppelin notes", "--text",
                    "The zeppelin airship floated over the harbour at dawn.")
    _run(capsys, "memory", "update", vid, first["id"], "--text",
         "The zeppelin airship floated over the harbour at dawn, then turned north.")
    _run(capsys, "memory", "add", vid, "--kind", "card", "--title", "茶葉 card", "--text",
         "烏龍茶的香氣 oolong tea aroma, brewed twice.")
    _run(capsys, "memory", "add", vid, "--kind", "credential", "--title", "bank", "--text", "PIN 4321")
    commands = [
        ("vault", "list"),
        ("vault", "policy", vid),
        ("memory", "list", vid),
        ("memory", "read", vid, first["id"]),
        ("memory", "read", vid, first["id"], "--revision", "1"),
        ("memory", "search", vid, "zeppelin harbour"),
        ("rag", "search", vid, "oolong tea"),
    ]
    for args in commands:  # builds and saves the encrypted index snapshot too
        assert _run(capsys, *args)[0] == 0
    path = home / "vaults" / f"{vid}.mvault"
    original = path.read_bytes()
    baseline = {args: _comparable(args, _run(capsys, *args)[1]) for args in commands}
    assert path.read_bytes() == original  # reads of an intact vault write nothing
    yield home, path, original, commands, baseline
    if base != tmp_path:
        shutil.rmtree(base, ignore_errors=True)


def _install(path: Path, data: bytes) -> None:
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(data)


def test_every_flipped_byte_is_refused_or_harmless(small_vault, capsys):
    home, path, original, commands, baseline = small_vault
    offsets = list(range(len(original)))
    if not os.environ.get("MEMORIES_SWEEP_ALL"):
        sample = int(os.environ.get("MEMORIES_SWEEP_SAMPLE", SAMPLE))
        seed = int(os.environ.get("MEMORIES_SWEEP_SEED", 20261202))
        offsets = sorted(random.Random(seed).sample(offsets, min(sample, len(offsets))))
    failures: dict[str, int] = {}
    bad: list[str] = []
    unchanged = 0
    for offset in offsets:
        flipped = bytearray(original)
        flipped[offset] ^= 0xFF
        _install(path, bytes(flipped))
        for args in commands:
            code, payload = _run(capsys, *args)
            if code == 0 and payload.get("problems"):  # vault list: the file is reported, not listed
                (problem,) = payload["problems"]
                assert problem["file"] == path.name and payload["vaults"] == [], payload
                payload = {"error": {"code": problem["code"]}}
                code = 1
            if code == 0:
                if _comparable(args, payload) != baseline[args]:
                    bad.append(f"offset {offset}: {args} returned other data: {payload}")
                unchanged += 1
            else:
                error = payload["error"]["code"]
                if error not in ALLOWED or error == InternalError.code:
                    bad.append(f"offset {offset}: {args} failed with {payload}")
                failures[error] = failures.get(error, 0) + 1
    _install(path, original)
    assert not bad, f"{len(bad)} bad outcomes, e.g.:\n" + "\n".join(sorted(set(bad), key=bad.index)[:15])
    # the sweep really exercised both outcomes
    assert unchanged > 0 and failures, (unchanged, failures)


def test_a_few_flips_through_real_subprocesses(small_vault):
    home, path, original, commands, baseline = small_vault
    rng = random.Random(7)
    for offset in rng.sample(range(len(original)), 5):
        flipped = bytearray(original)
        flipped[offset] ^= 0xFF
        _install(path, bytes(flipped))
        for args in commands[2:4]:
            result = call_cli(home, "--json", *args)
            assert "Traceback" not in result.stderr, result.stderr
            if result.code == 0:
                assert _comparable(args, result.json) == baseline[args]
            else:
                assert result.json["error"]["code"] in ALLOWED, result.stdout
