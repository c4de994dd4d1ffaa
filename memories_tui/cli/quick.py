"""`memories mcp --vault …` with a daemon running, before the parser is even built.

An AI client starts `memories mcp` for every session and waits for its `initialize` answer;
building the whole CLI (every verb's module, argparse, the catalogs) would be most of the
relay's start-up. This reads only the plain form (`--home`, `--config` before or after `mcp`;
`--vault`, `--expires`, `--passphrase-file` after it); anything else, or no daemon to relay to, or any error, goes the
ordinary way, which reports it as every command does.
"""

from __future__ import annotations

from collections.abc import Sequence

# --passphrase-file is accepted and unused: the daemon holds the keys (as on the ordinary way)
VALUED = {"--home": "home", "--config": "config", "--vault": "vault", "--expires": "expires",
          "--passphrase-file": "passphrase_file"}


def relayed(argv: Sequence[str]) -> bool:
    """Whether the MCP session was relayed to the daemon and has ended."""
    options = _plain_mcp(argv)
    if options is None or not options.get("vault"):
        return False
    from ..frontend.durations import parse_duration
    from ..mcp.relay import quick_relay

    home, config, expires = (options.get(key) for key in ("home", "config", "expires"))
    if expires:
        try:
            seconds: float | None = parse_duration(expires[-1])
        except Exception:  # noqa: BLE001 - the ordinary way refuses it properly
            return False
    else:
        seconds = None
    return quick_relay(home[-1] if home else None, config[-1] if config else None, options["vault"], seconds)


def _plain_mcp(argv: Sequence[str]) -> dict[str, list[str]] | None:
    """The options of `[--home H] [--config C] mcp [--vault V]… [--expires D]` (also `--opt=value`);
    None for any other command line."""
    options: dict[str, list[str]] = {}
    verb = False
    words = iter(argv)
    for word in words:
        if word == "mcp" and not verb:
            verb = True
            continue
        name, sep, value = word.partition("=")
        if name not in VALUED or (name in ("--vault", "--expires", "--passphrase-file") and not verb):
            return None
        if not sep:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None
        options.setdefault(VALUED[name], []).append(value)
    return options if verb else None
