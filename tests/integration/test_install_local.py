"""Installing the model from a folder (`--from DIR`) and the unreachable-host message."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from memories_tui.errors import CancelledError, ModelError, NetworkError
from memories_tui.models.install import install_model
from memories_tui.models.install_local import install_from_folder
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
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(NetworkError) as info:
        install_model(tmp_path, base_url=f"http://127.0.0.1:{port}/m", http=FAST, manifest=manifest)
    message = info.value.message
    assert info.value.code == "network_unreachable"
    assert "Could not reach 127.0.0.1" in message
    assert "[rag] model_download_base_url" in message and "model-install --from DIR" in message
    assert message.count("could not connect") == 1
    assert not any(tmp_path.joinpath(f.path).exists() for f in manifest.files)
