"""Model installer against a loopback mirror.

The five real small EmbeddingGemma files are served with their real pinned hashes; the ONNX
pair are stand-in bytes whose hashes go into a test manifest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from pathlib import Path

import pytest

from memories_tui.config import HttpSettings
from memories_tui.errors import CancelledError, ConfigError, PolicyError
from memories_tui.models.install import InstallProgress, install_model
from memories_tui.models.manifest import PINNED, ModelFile
from tests.helpers.mirror import Mirror
from tests.helpers.paths import GEMMA_SMALL_NAMES, require_gemma_small_files

REAL = list(GEMMA_SMALL_NAMES)
FAST = HttpSettings(use_env_proxy=False, retries=2, backoff_ms=1, connect_timeout_seconds=2,
                    timeout_seconds=5, download_timeout_seconds=30)


def _standin(name: str, size: int) -> bytes:
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


@pytest.fixture(scope="module")
def payload() -> dict[str, bytes]:
    small = require_gemma_small_files()
    files = {n: (small / n).read_bytes() for n in REAL}
    for n in REAL:
        assert hashlib.sha256(files[n]).hexdigest() == PINNED.file(n).sha256, n
    files["onnx/model_q4.onnx"] = _standin("graph", 519_322)
    files["onnx/model_q4.onnx_data"] = _standin("data", 3 * 1024 * 1024 + 17)
    return files


@pytest.fixture(scope="module")
def manifest(payload: dict[str, bytes]):
    entries = []
    for f in PINNED.files:
        if f.path.startswith("onnx/"):
            data = payload[f.path]
            entries.append(ModelFile(f.path, len(data), hashlib.sha256(data).hexdigest()))
        else:
            entries.append(f)
    return dataclasses.replace(PINNED, files=tuple(entries))


@pytest.fixture
def mirror(payload: dict[str, bytes]):
    with Mirror(payload) as m:
        yield m


def _by_path(report):
    return {r.path: r for r in report.files}


def _assert_installed(target: Path, payload: dict[str, bytes]) -> None:
    for path, data in payload.items():
        assert (target / path).read_bytes() == data, path
        assert not (target / (path + ".part")).exists(), path


def test_success_writes_files_notice_and_card(tmp_path, mirror, manifest, payload):
    seen: list[InstallProgress] = []
    report = install_model(tmp_path / "m", base_url=mirror.url, http=FAST, progress=seen.append,
                           manifest=manifest)
    assert report.ok, report
    assert [r.status for r in report.files] == ["downloaded"] * 7
    for r in report.files:
        assert r.sha256 == manifest.file(r.path).sha256
    _assert_installed(tmp_path / "m", payload)
    assert (tmp_path / "m" / "onnx" / "model_q4.onnx").parent == (tmp_path / "m" / "onnx" / "model_q4.onnx_data").parent
    notice = (tmp_path / "m" / "NOTICE.md").read_text()
    assert "https://ai.google.dev/gemma/terms" in notice
    assert PINNED.revision in (tmp_path / "m" / "MODEL_CARD.md").read_text()
    # progress: coalesced, ends complete, never exceeds the total
    assert seen and seen[-1].bytes_done == seen[-1].bytes_total == manifest.total_bytes
    assert all(p.bytes_done <= p.bytes_total for p in seen)
    assert {f.state for f in seen[-1].files} == {"downloaded"}
    assert len(seen) < 200
    # requests asked for raw bytes
    assert all(r.headers.get("accept-encoding") == "identity" for r in mirror.requests)


def test_resume_after_cut_connection_uses_range(tmp_path, mirror, manifest, payload):
    mirror.cut_once.add("tokenizer.json")
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    reqs = mirror.requests_for("tokenizer.json")
    assert len(reqs) == 2
    assert "range" not in reqs[0].headers
    rng = reqs[1].headers["range"]
    assert rng.startswith("bytes=") and rng.endswith("-")
    assert 0 < int(rng[6:-1]) < len(payload["tokenizer.json"])
    _assert_installed(tmp_path, payload)


def test_cut_connection_without_retries_keeps_part_then_resumes(tmp_path, mirror, manifest, payload):
    mirror.cut_once.add("tokenizer.json")
    report = install_model(tmp_path, base_url=mirror.url, http=dataclasses.replace(FAST, retries=0),
                           manifest=manifest)
    assert not report.ok
    failed = _by_path(report)["tokenizer.json"]
    assert failed.status == "failed" and "tokenizer.json" not in failed.error  # the row names the file, once
    assert (tmp_path / "tokenizer.json.part").stat().st_size > 0
    assert not (tmp_path / "tokenizer.json").exists()
    assert [r.status for r in report.files if r.path != "tokenizer.json"] == ["downloaded"] * 6
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok
    assert _by_path(report)["tokenizer.json"].status == "downloaded"
    assert mirror.requests_for("tokenizer.json")[-1].headers["range"] != "bytes=0-"
    _assert_installed(tmp_path, payload)


def test_wrong_bytes_fail_without_final_file(tmp_path, mirror, manifest):
    mirror.wrong_bytes.add("config.json")
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert not report.ok
    r = _by_path(report)["config.json"]
    assert r.status == "failed"
    assert "SHA-256" in r.error and not r.error.startswith("config.json")
    assert not (tmp_path / "config.json").exists()
    assert not (tmp_path / "config.json.part").exists()
    assert sum(x.status == "downloaded" for x in report.files) == 6


def test_existing_mismatching_file_is_left_untouched(tmp_path, mirror, manifest):
    victim = tmp_path / "tokenizer_config.json"
    original = b'{"mine": true}\n'
    victim.write_bytes(original)
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert not report.ok
    r = _by_path(report)["tokenizer_config.json"]
    assert r.status == "failed"
    assert str(victim) in r.error  # where the mismatching file is
    assert "Move it away" in r.error and "local_model_dir" in r.error
    assert victim.read_bytes() == original
    assert not mirror.requests_for("tokenizer_config.json")
    assert sum(x.status == "downloaded" for x in report.files) == 6


def test_redirect_to_plain_http_is_refused(tmp_path, mirror, manifest):
    mirror.redirects["config.json"] = "http://example.invalid/config.json"
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    r = _by_path(report)["config.json"]
    assert not report.ok and r.status == "failed"
    assert "redirect" in r.error and "example.invalid" in r.error
    assert not (tmp_path / "config.json").exists()


def test_redirect_to_other_loopback_port_over_http_is_refused(tmp_path, mirror, manifest, payload):
    with Mirror(payload) as other:
        mirror.redirects["config.json"] = f"{other.url}/config.json"
        report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
        assert not other.requests
    assert _by_path(report)["config.json"].status == "failed"


def test_redirect_within_same_loopback_origin_is_followed(tmp_path, mirror, manifest, payload):
    mirror.files["moved/config.json"] = payload["config.json"]
    mirror.redirects["config.json"] = "/moved/config.json"
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert mirror.requests_for("moved/config.json")


def test_too_many_redirects(tmp_path, mirror, manifest):
    mirror.redirects["config.json"] = "/config.json"
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    r = _by_path(report)["config.json"]
    assert r.status == "failed" and "redirects" in r.error
    assert len(mirror.requests_for("config.json")) == 6


def test_503_then_success(tmp_path, mirror, manifest, payload):
    mirror.queue("config.json", 503)
    mirror.queue("generation_config.json", 429, {"Retry-After": "0"})
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert len(mirror.requests_for("config.json")) == 2
    assert len(mirror.requests_for("generation_config.json")) == 2
    _assert_installed(tmp_path, payload)


def test_404_is_reported(tmp_path, mirror, manifest):
    del mirror.files["special_tokens_map.json"]
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    r = _by_path(report)["special_tokens_map.json"]
    assert r.status == "failed" and "404" in r.error


def test_timeout_gives_clear_error(tmp_path, mirror, manifest):
    mirror.hang.add("special_tokens_map.json")
    http = dataclasses.replace(FAST, retries=0, timeout_seconds=0.3, download_timeout_seconds=5)
    report = install_model(tmp_path, base_url=mirror.url, http=http, manifest=manifest)
    assert not report.ok
    r = _by_path(report)["special_tokens_map.json"]
    assert r.status == "failed" and "timed out" in r.error and "special_tokens_map.json" not in r.error
    assert sum(x.status == "downloaded" for x in report.files) == 6


def test_per_file_deadline(tmp_path, mirror, manifest):
    mirror.slow["onnx/model_q4.onnx_data"] = 0.05
    http = dataclasses.replace(FAST, download_timeout_seconds=0.5)
    report = install_model(tmp_path, base_url=mirror.url, http=http, manifest=manifest)
    r = _by_path(report)["onnx/model_q4.onnx_data"]
    assert r.status == "failed" and "download_timeout_seconds" in r.error
    assert (tmp_path / "onnx" / "model_q4.onnx_data.part").exists()


def test_second_run_reuses_verified_files(tmp_path, mirror, manifest):
    assert install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest).ok
    before = len(mirror.requests)
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok
    assert [r.status for r in report.files] == ["reused"] * 7
    assert len(mirror.requests) == before


def test_cancel_then_resume(tmp_path, mirror, manifest, payload):
    mirror.slow["tokenizer.json"] = 0.01
    cancel = threading.Event()

    def on_progress(p: InstallProgress) -> None:
        for f in p.files:
            if f.path == "tokenizer.json" and f.bytes_done >= 1_000_000:
                cancel.set()

    with pytest.raises(CancelledError):
        install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest, progress=on_progress,
                      cancel=cancel)
    part = tmp_path / "tokenizer.json.part"
    kept = part.stat().st_size
    assert 1_000_000 <= kept < len(payload["tokenizer.json"])
    assert not (tmp_path / "tokenizer.json").exists()
    mirror.slow.clear()
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert mirror.requests_for("tokenizer.json")[-1].headers["range"] == f"bytes={kept}-"
    _assert_installed(tmp_path, payload)


def test_range_ignored_by_server_restarts_from_zero(tmp_path, mirror, manifest, payload):
    (tmp_path / "tokenizer.json.part").write_bytes(b"garbage that must not survive")
    mirror.ignore_range.add("tokenizer.json")
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert mirror.requests_for("tokenizer.json")[0].headers["range"].startswith("bytes=")
    _assert_installed(tmp_path, payload)


def test_corrupt_part_is_restarted_once(tmp_path, mirror, manifest, payload):
    data = payload["tokenizer_config.json"]
    (tmp_path / "tokenizer_config.json.part").write_bytes(b"X" * 1000)  # wrong prefix, resumed
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert (tmp_path / "tokenizer_config.json").read_bytes() == data
    ranges = [r.headers.get("range") for r in mirror.requests_for("tokenizer_config.json")]
    assert ranges == ["bytes=1000-", None]


def test_plain_http_remote_base_url_refused(tmp_path, manifest):
    with pytest.raises(PolicyError):
        install_model(tmp_path, base_url="http://mirror.example/models", http=FAST, manifest=manifest)
    with pytest.raises(PolicyError):
        install_model(tmp_path, base_url="https://u:p@mirror.example/models", http=FAST, manifest=manifest)


def test_bad_proxy_environment_fails_before_any_request(tmp_path, manifest, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "socks4://proxy:1080")
    with pytest.raises(ConfigError):
        install_model(tmp_path, base_url="https://mirror.example/models", http=HttpSettings(), manifest=manifest)


def test_existing_file_of_the_right_size_but_wrong_bytes_is_not_reused(tmp_path, mirror, manifest, payload):
    victim = tmp_path / "config.json"
    wrong = bytes(b ^ 0x01 for b in payload["config.json"])  # same length, every byte different
    victim.write_bytes(wrong)
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    r = _by_path(report)["config.json"]
    assert not report.ok and r.status == "failed"
    assert "does not match the pinned SHA-256" in r.error and "Move it away" in r.error
    assert victim.read_bytes() == wrong  # never replaced
    assert not mirror.requests_for("config.json")


def test_206_resuming_at_the_wrong_byte_is_refused_at_once(tmp_path, mirror, manifest, payload):
    """A 206 whose Content-Range starts elsewhere than asked is refused before any byte is
    appended (here its length would even complete the file, so a late hash check could not
    tell), and the .part is dropped so the next attempt starts from zero."""
    name = "tokenizer_config.json"
    data = payload[name]
    total = len(data)
    part = tmp_path / (name + ".part")
    part.write_bytes(data[:1000])
    mirror.queue(name, 206, {"Content-Range": f"bytes 500-{total - 501}/{total}"}, data[500:total - 500])
    report = install_model(tmp_path, base_url=mirror.url, http=dataclasses.replace(FAST, retries=0),
                           manifest=manifest)
    r = _by_path(report)[name]
    assert r.status == "failed" and "resumed at byte 500 instead of 1000" in r.error
    assert [q.headers.get("range") for q in mirror.requests_for(name)] == ["bytes=1000-"]
    assert not part.exists() and not (tmp_path / name).exists()
    report = install_model(tmp_path, base_url=mirror.url, http=FAST, manifest=manifest)
    assert report.ok, report
    assert mirror.requests_for(name)[-1].headers.get("range") is None
    assert (tmp_path / name).read_bytes() == data
