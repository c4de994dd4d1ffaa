"""The MCP tools' input schemas come from the tools' table (`ToolsAPI` in access/tools.py):
what the official SDK client lists is each parameter declared there (name, type, default,
bounds, the modes of vocabulary.py), and a parameter added to the table reaches a client
and the tool with no edit to the server."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Annotated, Literal

from mcp import Client

from memories_tui.access.grants import GrantedVault, Grants
from memories_tui.access.mcp_server import build_server
from memories_tui.access.results import SearchResult
from memories_tui.access.tools import SEARCH_LIMIT, TOOLS, Arg, MemoryTools, ToolsAPI, VaultRef, tool_parameters
from memories_tui.engine import DEFAULT_MATCH_MODE, Engine, MatchMode
from memories_tui.vocabulary import MATCH_MODES, MODES


def _server(engine: Engine, tools_class: type[MemoryTools] = MemoryTools):
    grants = Grants(engine.home, [GrantedVault(engine.test_vault_id, "notes")])
    return build_server(tools_class(engine, grants), list(grants.vaults.values()))


async def test_each_tools_input_schema_is_its_entry_in_the_table(engine: Engine) -> None:
    async with Client(_server(engine)) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert sorted(listed) == sorted(tool.name for tool in TOOLS)
    for tool in TOOLS:
        schema, declared = listed[tool.name], tool_parameters(tool)
        assert list(schema["properties"]) == [parameter.name for parameter, _, _ in declared], tool.name
        assert schema["required"] == [p.name for p, _, _ in declared if p.default is inspect.Parameter.empty]
        for parameter, base, arg in declared:
            prop = schema["properties"][parameter.name]
            where = f"{tool.name}.{parameter.name}"
            assert prop["description"] == arg.description, where
            if parameter.default is not inspect.Parameter.empty:
                assert prop["default"] == parameter.default, where
            typed = prop["anyOf"][0] if "anyOf" in prop else prop  # `int | None`: the int, then null
            assert (typed.get("minimum"), typed.get("maximum")) == (arg.ge, arg.le), where
            value = typing.get_args(base)[0] if typing.get_origin(base) is types.UnionType else base
            if typing.get_origin(value) is Literal:
                assert typed["enum"] == list(typing.get_args(value)), where
            else:
                assert typed["type"] == {str: "string", int: "integer", bool: "boolean"}[value], where
            if parameter.name in ("mode", "match_mode"):
                assert typed["enum"] == list(MODES if parameter.name == "mode" else MATCH_MODES), where
    assert listed["memory_search"]["properties"]["limit"]["default"] == SEARCH_LIMIT


def _search_with_a_new_parameter(
    self: ToolsAPI,
    vault_id: VaultRef,
    query: Annotated[str, Arg("Keywords, Chinese or English.")],
    limit: Annotated[int, Arg("How many records at most.", ge=1, le=50)] = SEARCH_LIMIT,
    match_mode: Annotated[MatchMode, Arg("any term (default), all terms, or the exact phrase.")] = DEFAULT_MATCH_MODE,
    titles_only: Annotated[bool, Arg("Match record titles only.")] = False,
) -> SearchResult:
    """Which notes mention something."""
    raise NotImplementedError


class ToolsWithTheNewParameter(MemoryTools):
    """What a change that adds the parameter also writes: the tool's work using it."""

    asked: list[bool] = []

    def search(self, vault_id: str, query: str, limit: int = SEARCH_LIMIT, match_mode: MatchMode = DEFAULT_MATCH_MODE,
               titles_only: bool = False) -> SearchResult:
        self.asked.append(titles_only)
        return super().search(vault_id, query, limit, match_mode)


async def test_a_parameter_added_to_the_table_reaches_the_client_and_the_tool(engine: Engine, monkeypatch) -> None:
    monkeypatch.setattr(ToolsAPI, "search", _search_with_a_new_parameter)
    async with Client(_server(engine, ToolsWithTheNewParameter)) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        added = listed["memory_search"]["properties"]["titles_only"]
        assert (added["type"], added["default"], added["description"]) == ("boolean", False, "Match record titles only.")
        result = await client.call_tool("memory_search", {"vault_id": engine.test_vault_id, "query": "lantern",
                                                          "titles_only": True})
        assert result.is_error is False, result.content[0].text
        refused = await client.call_tool("memory_search", {"vault_id": engine.test_vault_id, "query": "lantern",
                                                           "titles_only": "perhaps"})
        assert refused.is_error is True
    assert ToolsWithTheNewParameter.asked == [True]
