"""The bundled Memories skill (SKILL.md) and `memories inject`, which installs it and registers
the MCP server in AI clients' configs."""
