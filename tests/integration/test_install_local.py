"""Installing the model from a folder (`--from DIR`) and the unreachable-host message."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.errors import CancelledError, ModelError, NetworkError
from memories_tui.models.install import install_model
from memories_tui.models.install_local import install_from_folder
from tests.helpers.loopback import unused_port
from tests.integration.test_install import FAST, manifest, payload  # noqa: F401 - fixtures


def _folder(root: Path, files: dict[str, bytes], *, flat: bool = False) -> Path:
    for path, data in files.items():
        dest = root / (Path(path).name if flat else path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return root


@pytest.mark.parametrize("flat", [False, True])
def test_install_from_folder_checks_every_hash(tmp_path, manifest, payload, flat):  # noqa: F811
    source = _folder(tmp_path / "download", payload, flat=flat)
    states: set[str] = set()
    report = install_from_folder(tmp_path / "model", source, manifest=manifest,
                                 progress=lambda p: states.update(f.state for f in p.files))
    assert report.ok, report.files
    assert [r.status for r in report.files] == ["copied"] * 7
    assert "copying" in states
    for path, data in payload.items():
        assert (tmp_path / "model" / path).read_bytes() == data
        assert not (tmp_path / "model" / (path + ".part")).exists()
    assert (tmp_path / "model" / "NOTICE.md").is_file()
    again = install_from_folder(tmp_path / "model", source, manifest=manifest)
    assert [r.status for r in again.files] == ["reused"] * 7


def test_install_from_folder_refuses_wrong_and_missing_files(tmp_path, manifest, payload):  # noqa: F811
    files = dict(payload)
    files["config.json"] = files["config.json"][:-1] + b" "  # same size, other bytes
    del files["tokenizer.json"]
    files["special_tokens_map.json"] += b"\n"  # other size
    source = _folder(tmp_path / "download", files)
    report = install_from_folder(tmp_path / "model", source, manifest=manifest)
    assert not report.ok
    by_path = {r.path: r for r in report.files}
    assert by_path["config.json"].status == "failed" and "SHA-256" in by_path["config.json"].error
    assert by_path["tokenizer.json"].status == "failed" and "not found" in by_path["tokenizer.json"].error
    assert "bytes" in by_path["special_tokens_map.json"].error
    assert by_path["onnx/model_q4.onnx"].status == "copied"
    for bad in ("config.json", "tokenizer.json", "special_tokens_map.json"):
        assert not (tmp_path / "model" / bad).exists() and not (tmp_path / "model" / (bad + ".part")).exists()


def test_install_from_folder_bad_source_and_cancel(tmp_path, manifest, payload):  # noqa: F811
    with pytest.raises(ModelError, match="not a folder"):
        install_from_folder(tmp_path / "model", tmp_path / "nowhere", manifest=manifest)
    source = _folder(tmp_path / "download", payload)
    import threading

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        install_from_folder(tmp_path / "model", source, manifest=manifest, cancel=cancel)


def test_unreachable_host_is_one_clear_error(tmp_path, manifest):  # noqa: F811
    port = unused_port()  # a loopback port nobody listens on
    with pytest.raises(NetworkError) as info:
        install_model(tmp_path, base_url=f"http://127.0.0.1:{port}/m", http=FAST, manifest=manifest)
    message = info.value.message
    assert info.value.code == "network_unreachable"
    assert "Could not reach 127.0.0.1" in message
    assert "[rag] model_download_base_url" in message and "model-install --from DIR" in message
    assert message.count("could not connect") == 1
    assert not any(tmp_path.joinpath(f.path).exists() for f in manifest.files)


def _max_paren_depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    return deepest


def test_folder_install_errors_name_each_file_once(tmp_path, manifest):  # noqa: F811
    empty = tmp_path / "empty"
    empty.mkdir()
    report = install_from_folder(tmp_path / "model", empty, manifest=manifest)
    for f in report.files:
        assert f.status == "failed" and f.error is not None
        assert Path(f.path).name not in f.error  # the row (or `path: error`) names the file; the error does not again
        assert str(empty) in f.error and _max_paren_depth(f.error) <= 1


def test_cli_folder_install_summary_and_table_name_each_file_once(tmp_path):
    from memories_tui.models.manifest import PINNED
    from tests.helpers.cli import run_cli

    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli(tmp_path / "home", "--json", "rag", "model-install", "--from", str(empty), passphrase=None)
    message = result.json["error"]["message"]
    assert result.code == 1 and message.startswith("Model install failed for 7 files: ")
    entries = message.removeprefix("Model install failed for 7 files: ").split("; ")
    assert [e.split(": ", 1)[0] for e in entries] == [f.path for f in PINNED.files]
    assert all(Path(path).name not in rest for path, rest in (e.split(": ", 1) for e in entries))
    text = run_cli(tmp_path / "home", "rag", "model-install", "--from", str(empty), passphrase=None)
    row = next(line for line in text.stdout.splitlines() if line.startswith("failed") and "tokenizer.json" in line)
    assert row.count("tokenizer.json") == 1 and "((" not in text.stdout + text.stderr


def test_unreachable_host_gives_the_full_revision_and_where_the_urls_are(tmp_path, manifest):  # noqa: F811
    port = unused_port()  # a loopback port nobody listens on
    with pytest.raises(NetworkError) as info:
        install_model(tmp_path, base_url=f"http://127.0.0.1:{port}/m", http=FAST, manifest=manifest)
    message = info.value.message
    assert manifest.revision in message and len(manifest.revision) == 40
    # base + full revision, whatever mirror was tried; the TUI lists the files one per row
    assert f"https://huggingface.co/{manifest.repo}/resolve/{manifest.revision}/ " in message
    assert "model-install --list" in message and not any(f.path in message for f in manifest.files)
    assert _max_paren_depth(message) <= 1


def test_cli_unreachable_host_gives_every_exact_url(tmp_path):
    from memories_tui.models.manifest import PINNED
    from tests.helpers.cli import run_cli

    port = unused_port()  # a loopback port nobody listens on
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[rag]\nmodel_download_base_url = "http://127.0.0.1:{port}/m"\n\n[rag.http]\nretries = 0\n',
        encoding="utf-8")
    result = run_cli(home, "--json", "rag", "model-install", passphrase=None)
    assert result.code == 1 and result.json["error"]["code"] == "network_unreachable"
    message = result.json["error"]["message"]
    for f in PINNED.files:  # base + full revision + path, whatever mirror was tried
        assert f"https://huggingface.co/{PINNED.repo}/resolve/{PINNED.revision}/{f.path}" in message
    assert [f["url"] for f in result.json["files"]] == PINNED.file_urls()
    assert _max_paren_depth(message) <= 1
    text = run_cli(home, "rag", "model-install", passphrase=None)
    assert text.code == 1 and all(url in text.stderr for url in PINNED.file_urls())


def test_model_install_list_prints_every_pinned_file_without_network(tmp_path):
    from memories_tui.models.manifest import PINNED
    from tests.helpers.cli import run_cli

    out = run_cli(tmp_path / "home", "--json", "rag", "model-install", "--list", passphrase=None)
    assert out.code == 0, out.stderr
    data = out.json
    assert data["repo"] == PINNED.repo and data["revision"] == PINNED.revision
    assert [(f["path"], f["bytes"], f["sha256"]) for f in data["files"]] == [(f.path, f.bytes, f.sha256)
                                                                             for f in PINNED.files]
    assert all(f["url"] == f"https://huggingface.co/{PINNED.repo}/resolve/{PINNED.revision}/{f['path']}"
               for f in data["files"])
    text = run_cli(tmp_path / "home", "rag", "model-install", "--list", passphrase=None).stdout
    assert PINNED.revision in text and all(f["url"] in text for f in data["files"])
    assert not (tmp_path / "home" / "models").exists()  # nothing installed, nothing fetched
