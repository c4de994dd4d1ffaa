"""What an AI client may read, and how: the grants a server holds, the four memory tools (their
work, defaults and budgets) and the results they return.

Below both front ends that serve the tools: the MCP server runs them in its own process
(mcp/), the resident engine runs them for MCP servers that forward to it (daemon/); neither
imports the other for them. Like every front end, it uses only the engine's public API.
"""
