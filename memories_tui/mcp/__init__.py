"""The MCP stdio server (`memories mcp`): tools over the engine's public API, under grants."""
