"""The low-severity findings of the attack run, each through the real CLI:
vectors that cannot be normalised, file names that are not UTF-8, and (in a real subprocess) a
reader that leaves the pipe early."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env
from tests.helpers.model_server import ModelServer, bag_vector


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Bread", "Bake at 250 degrees."))


def test_huge_embedding_values_are_refused_not_cached_as_zero_vectors(home):
    with ModelServer() as srv:
        (home / "config.toml").write_text(
            f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\nmodel = "m"\n'
            'dimensions = 8\n\n[rag.http]\nretries = 0\n', encoding="utf-8")
        srv.vector = lambda text, dims: [1e308] * dims  # finite, but its length overflows
        bad = call_cli(home, "--json", "rag", "index", "notes")
        assert bad.code != 0 and bad.json["error"]["code"] == "model_bad_response", bad.stdout
        assert "cannot be normalised" in bad.json["error"]["message"]
        assert "RuntimeWarning" not in bad.stderr and "Traceback" not in bad.stderr
        srv.vector = lambda text, dims: [0.0] * dims
        zero = call_cli(home, "--json", "rag", "index", "notes")
        assert zero.code != 0 and "cannot be normalised" in zero.json["error"]["message"]
        srv.vector = bag_vector  # a sound service: every chunk is embedded now, none came from the cache
        good = call_cli(home, "--json", "rag", "index", "notes")
        assert good.code == 0, good.stdout + good.stderr
        assert good.json["embedded"] == 1 and good.json["reused"] == 0


def _non_utf8_file(tmp_path: Path) -> Path:
    name = os.fsdecode(b"notes-\xff\xfe.md")  # not UTF-8: the name arrives with surrogate escapes
    path = tmp_path / name
    with open(os.fsencode(str(path)), "w", encoding="utf-8") as f:
        f.write("# Latin-1 name\n\nThe file's text is fine UTF-8.\n")
    return path


@pytest.mark.parametrize("verb", [("rag", "ingest"), ("asset", "add")])
def test_file_name_that_is_not_utf8_is_refused_clearly(home, tmp_path, verb):
    path = _non_utf8_file(tmp_path)
    before = call_cli(home, "--json", "memory", "list", "notes").json
    done = subprocess.run([sys.executable, str(CHEAP_CLI), "--json", *verb, "notes", os.fsencode(str(path))],
                          capture_output=True, env=cli_env(home), timeout=120, check=False)
    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["error"]["code"] == "bad_file_name", done.stdout
    assert "\\xff\\xfe" in out["error"]["message"] and "UTF-8" in out["error"]["message"]
    assert b"Traceback" not in done.stderr
    assert call_cli(home, "--json", "memory", "list", "notes").json == before  # nothing written


@pytest.mark.parametrize("args,status", [
    (("--json", "memory", "read", "notes", "no-such-id"), 1),   # the error path prints JSON to stdout
    (("--json", "vault", "list"), 0),
    (("memory", "list", "notes"), 0),                           # human output
])
def test_a_reader_that_left_the_pipe_gets_no_traceback(home, args, status):
    """`memories … | true`: the read end is closed before the command writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, str(CHEAP_CLI), *args], stdout=write_end, stderr=subprocess.PIPE,
                              env=cli_env(home), timeout=120, check=False)
    finally:
        os.close(write_end)
    assert done.stderr == b"", done.stderr.decode()
    assert done.returncode == status


def test_a_copied_vault_file_is_reported_and_the_name_still_works(home):
    listed = call_cli(home, "--json", "vault", "list").json
    (vault,) = listed["vaults"]
    folder = home / "vaults"
    shutil.copy2(folder / f"{vault['vault_id']}.mvault", folder / "a-copy.mvault")  # sorts before the original
    after = call_cli(home, "--json", "vault", "list").json
    assert after["vaults"] == [vault]
    (problem,) = after["problems"]
    assert problem["file"] == "a-copy.mvault" and problem["code"] == "vault_duplicate"
    assert vault["vault_id"] in problem["message"]
    by_name = call_cli(home, "--json", "memory", "list", "notes")
    assert by_name.code == 0 and [r["title"] for r in by_name.json["records"]] == ["Bread"], by_name.stdout
    assert call_cli(home, "--json", "memory", "list", vault["vault_id"]).code == 0
    human = call_cli(home, "vault", "list")
    assert human.code == 0 and "a-copy.mvault" in human.stderr


def test_a_vault_cannot_be_named_after_an_existing_vault_id(home):
    (vault,) = call_cli(home, "--json", "vault", "list").json["vaults"]
    refused = call_cli(home, "--json", "vault", "create", vault["vault_id"])
    assert refused.code != 0 and refused.json["error"]["code"] == "vault_exists"
    assert "VAULT_ID" in refused.json["error"]["message"]
    assert call_cli(home, "--json", "vault", "list").json["vaults"] == [vault]
