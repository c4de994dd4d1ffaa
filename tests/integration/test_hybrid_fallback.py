"""One rule for hybrid search without an embedding model, in the engine, for every front end:
it answers with the BM25 results and says so (`fallback: "bm25"` in JSON and MCP, a note in
text output and in the MCP result), in-process and through the resident engine alike. A vector
search without a model stays an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.daemon import stop, unlock
from tests.integration.test_mcp_server import connect, error_text, structured

QUERY = ("--", "JR pass")


@pytest.fixture(scope="module")
def no_model_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("fallback") / "home"  # default config: EmbeddingGemma, not installed
    assert call_cli(home, "vault", "create", "notes").code == 0
    for title, text in (("Kyoto", "Kyoto trip: the JR pass covers local lines."), ("Bread", "Bake at 250 °C."),
                        ("Rail", "A rail pass for Hokkaido.")):
        assert call_cli(home, "memory", "add", "notes", "--title", title, "--text", text).code == 0
    return home


def test_cli_hybrid_without_model_answers_with_bm25_and_says_so(no_model_home: Path) -> None:
    home = no_model_home
    hybrid = call_cli(home, "--no-daemon", "--json", "rag", "search", "notes", "--mode", "hybrid", *QUERY)
    assert hybrid.code == 0, hybrid.stdout + hybrid.stderr
    bm25 = call_cli(home, "--no-daemon", "--json", "rag", "search", "notes", "--mode", "bm25", *QUERY).json
    out = hybrid.json
    assert out["mode"] == "hybrid" and out["fallback"] == "bm25" and "fallback" not in bm25
    assert out["results"] == bm25["results"] and [r["title"] for r in out["results"]] == ["Kyoto", "Rail"]
    assert out["notes"] == ["No embedding model is installed, so hybrid shows the BM25 results "
                            "(`memories rag model-install` installs it)."]
    text = call_cli(home, "--no-daemon", "rag", "search", "notes", "--mode", "hybrid", *QUERY)
    assert text.code == 0 and "Kyoto" in text.stdout and "note: No embedding model is installed" in text.stderr
    vector = call_cli(home, "--no-daemon", "--json", "rag", "search", "notes", "--mode", "vector", *QUERY)
    assert vector.code == 1 and vector.json["error"]["code"] == "model_not_installed"
    ask = call_cli(home, "--no-daemon", "--json", "rag", "ask", "notes", "--mode", "hybrid", "--",
                   "Does the JR pass cover local lines?")
    assert ask.code == 0 and ask.json["status"] == "extractive" and "JR pass" in ask.json["answer"]
    assert any("hybrid shows the BM25 results" in n for n in ask.json["notes"])


def test_the_resident_engine_falls_back_the_same_way(no_model_home: Path) -> None:
    home = no_model_home
    try:
        assert unlock(home, "notes").code == 0
        served = {}
        for args in (("--json", "rag", "search", "notes", "--mode", "hybrid", *QUERY),
                     ("rag", "search", "notes", "--mode", "hybrid", *QUERY),
                     ("--json", "rag", "search", "notes", "--mode", "vector", *QUERY)):
            alone = call_cli(home, "--no-daemon", *args)
            served[args] = call_cli(home, *args, passphrase=None)
            assert (served[args].code, served[args].stdout, served[args].stderr) == (alone.code, alone.stdout,
                                                                                    alone.stderr)
        hybrid, text, vector = served.values()
        assert hybrid.code == 0 and hybrid.json["fallback"] == "bm25" and hybrid.json["results"][0]["title"] == "Kyoto"
        assert "note: No embedding model is installed" in text.stderr
        assert vector.code == 1 and vector.json["error"]["code"] == "model_not_installed"
    finally:
        stop(home)


async def test_mcp_hybrid_without_model_answers_with_bm25_and_says_so(no_model_home: Path) -> None:
    async with connect({"home": no_model_home}, "--no-daemon", "--vault", "notes") as client:
        data = structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "JR pass",
                                                                     "mode": "hybrid"}))
        assert data["fallback"] == "bm25" and data["chunks"][0]["title"] == "Kyoto"
        assert any("hybrid shows the BM25 results" in n for n in data["notes"])
        plain = structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "JR pass"}))
        assert plain["fallback"] is None and plain["chunks"] == data["chunks"]
        vector = await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "JR pass", "mode": "vector"})
        assert "model-install" in error_text(vector)
