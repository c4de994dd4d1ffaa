"""Validation of [rag.embedding], [rag.generation], [rag.rerank] at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.config import load_config, looks_like_key, parse_config
from memories_tui.errors import ConfigError

HOME = Path("/nonexistent-home")
GEMINI_EMBED = "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:embedContent"


def parse(table: str, **fields):
    return parse_config({"rag": {table: fields}}, HOME / "config.toml", HOME)


def test_full_tables_parse():
    cfg = parse_config({"rag": {
        "embedding": {"protocol": "gemini", "url": GEMINI_EMBED, "model": "gemini-embedding-001",
                      "dimensions": 768, "api_key_env": "GEMINI_API_KEY"},
        "generation": {"protocol": "compatible", "url": "http://127.0.0.1:8080/v1/chat/completions",
                       "model": "qwen2.5", "json_mode": False},
        "rerank": {"protocol": "compatible", "url": "https://rr.example/v1/rerank", "model": "bge-reranker",
                   "api_key_env": "RR_KEY"},
    }}, HOME / "config.toml", HOME)
    assert cfg.rag.embedding.dimensions == 768 and cfg.rag.embedding.batch_size == 32
    assert cfg.rag.generation.json_mode is False
    assert cfg.rag.rerank.api_key_env == "RR_KEY"


def test_asymmetric_settings():
    e = parse("embedding", protocol="compatible", url="http://localhost:9/v1/embeddings", model="e5",
              query_input_type="query", document_input_type="passage", query_prefix="query: ",
              document_prefix="passage: ").rag.embedding
    assert (e.query_input_type, e.document_prefix) == ("query", "passage: ")


@pytest.mark.parametrize("fields, match", [
    ({"url": "http://10.1.2.3/v1/embeddings"}, "not loopback"),
    ({"url": "http://127.1/v1/embeddings"}, "not loopback"),
    ({"url": "ftp://h.example/x"}, "http"),
    ({"url": "https://user:pw@h.example/v1"}, "credentials"),
    ({"url": "https://h.example/v1?key=abc"}, "query string"),
    ({"url": "https://h.example/v1#frag"}, "fragment"),
    ({"protocol": "openai"}, "protocol must be one of"),
    ({"api_key": "x"}, "api_key is not allowed"),
    ({"api_key_env": "MY-KEY"}, "name of an environment variable"),
    ({"dimensions": 0}, "dimensions"),
    ({"batch_size": 5000}, "batch_size"),
    ({"colour": "blue"}, "Unknown config key"),
    ({"query_prefix": 5}, "query_prefix"),
])
def test_refused(fields, match):
    base = {"protocol": "compatible", "url": "https://h.example/v1/embeddings", "model": "m"}
    base.update(fields)
    with pytest.raises(ConfigError, match=match):
        parse("embedding", **base)


def test_required_fields():
    with pytest.raises(ConfigError, match="rag.rerank.model is required"):
        parse("rerank", protocol="compatible", url="https://h.example/rerank")


def test_generation_has_no_dimensions():
    with pytest.raises(ConfigError, match="Unknown config key"):
        parse("generation", protocol="compatible", url="https://h.example/v1/chat", model="m", dimensions=3)


def test_gemini_operation_urls():
    with pytest.raises(ConfigError, match=":generateContent"):
        parse("generation", protocol="gemini", url="https://g.example/v1beta/models/x:embedContent", model="x")
    with pytest.raises(ConfigError, match=":embedContent or :batchEmbedContents"):
        parse("embedding", protocol="gemini", url="https://g.example/v1beta/models/x", model="x")


SECRET = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"


@pytest.mark.parametrize("fields", [
    {"model": SECRET},
    {"url": f"https://h.example/v1/{SECRET}/embeddings"},
    {"api_key_env": "sk-proj-abcdefghijklmnop1234"},
    {"model": "Bearer abc"},
    {"query_prefix": "xQ7tLm2Zp9Rk4Vw8Yb3Nc6Hd1Fg5Js0A"},
])
def test_key_shaped_values_refused_and_never_echoed(fields):
    base = {"protocol": "compatible", "url": "https://h.example/v1/embeddings", "model": "m"}
    base.update(fields)
    with pytest.raises(ConfigError) as err:
        parse("embedding", **base)
    assert "looks like an API key" in err.value.message
    for value in fields.values():
        assert value not in err.value.message


def test_model_names_are_not_keys():
    for name in ("text-embedding-3-small", "gemini-embedding-001", "intfloat/multilingual-e5-small",
                 "BAAI/bge-reranker-v2-m3", "Qwen2.5-7B-Instruct-GGUF",
                 "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
                 "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", "https://api.example.com/v1/Models/TextEmbedding3Large"):
        assert not looks_like_key(name)


def test_bad_url_message_redacts_credentials(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[rag.rerank]\nprotocol = "compatible"\nurl = "https://me:hunter2@h.example/x"\nmodel = "m"\n')
    with pytest.raises(ConfigError) as err:
        load_config(cfg, tmp_path)
    assert "hunter2" not in err.value.message and "rag.rerank.url" in err.value.message


def test_documented_examples_parse():
    import re

    import tomlkit

    docs = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", docs, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        cfg = parse_config(tomlkit.parse(block).unwrap(), HOME / "config.toml", HOME)
        assert cfg.rag.embedding is not None or cfg.rag.generation is not None
