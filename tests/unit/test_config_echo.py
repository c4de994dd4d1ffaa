"""Config errors never echo a value shaped like a key, in any field: a key
pasted into the wrong place (`[rag.http] retries = "gsk_…"`) must not be printed back."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.config import load_config, looks_like_key, parse_config
from memories_tui.errors import ConfigError, redact

HOME = Path("/tmp/memories-home")
KEYS = [
    "gsk_A1b2C3d4E5f6G7h8J9k0L1m2N3o4P5q6R7s8T9u0",  # Groq
    "sk-proj-Abc123Def456Ghi789Jkl012",              # OpenAI
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",       # Google
    "xai-Q7tLm2Zp9Rk4Vw8Yb3Nc6Hd1Fg5Js0A",           # xAI
    "xQ7tLm2Zp9Rk4Vw8Yb3Nc6Hd1Fg5Js0Ab",             # an opaque token
]
FIELDS = [
    ("rag", "http", "retries"),
    ("rag", "http", "backoff_ms"),
    ("rag", "http", "timeout_seconds"),
    ("rag", "http", "request_timeout_seconds"),
    ("rag", "local_threads"),
    ("rag", "fusion"),
    ("rag", "local_model_profile"),
    ("rag", "limits", "chunks"),
    ("tui", "idle_lock_minutes"),
]


def _nested(path: tuple[str, ...], value: object) -> dict:
    data: dict = {path[-1]: value}
    for part in reversed(path[:-1]):
        data = {part: data}
    return data


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("field", FIELDS, ids=[".".join(f) for f in FIELDS])
def test_no_field_echoes_a_key_shaped_value(field, key):
    with pytest.raises(ConfigError) as err:
        parse_config(_nested(field, key), HOME / "config.toml", HOME)
    assert ".".join(field) in err.value.message  # still says where the problem is
    assert key not in err.value.message and key[:12] not in err.value.message
    assert "not shown" in err.value.message


def test_a_key_pasted_as_a_key_name_or_a_protocol_is_not_echoed():
    key = KEYS[0]
    for data in ({"rag": {"http": {key: 1}}},
                 {"rag": {"rerank": {"protocol": "openai", "url": "https://h.example/r", "model": "m"}}}):
        with pytest.raises(ConfigError) as err:
            parse_config(data, HOME / "config.toml", HOME)
        assert key not in err.value.message
    with pytest.raises(ConfigError) as err:
        parse_config({"rag": {"generation": {"protocol": key, "url": "https://h.example/g", "model": "m"}}},
                     HOME / "config.toml", HOME)
    assert key not in err.value.message


def test_ordinary_wrong_values_are_still_shown():
    with pytest.raises(ConfigError, match="got 'three'"):
        parse_config({"rag": {"http": {"retries": "three"}}}, HOME / "config.toml", HOME)
    with pytest.raises(ConfigError, match="got 9"):
        parse_config({"rag": {"http": {"retries": 9}}}, HOME / "config.toml", HOME)


def test_groq_and_other_prefixed_keys_are_recognised_and_redacted():
    for key in KEYS:
        assert looks_like_key(key), key
    for key in KEYS[:4]:  # every message is redacted too (known prefixes; an opaque token is not)
        assert key not in redact(f"the value {key} was wrong")


def test_load_config_from_a_file(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[rag.http]\nretries = "{KEYS[0]}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg, tmp_path)
    assert KEYS[0] not in err.value.message and "rag.http.retries" in err.value.message
