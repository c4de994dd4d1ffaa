"""Front-end helpers shared by the CLI, the TUI and the MCP server (not engine work)."""
