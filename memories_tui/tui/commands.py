"""Command palette provider for the main actions (context-aware: vault actions need an unlocked vault)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (title, help, app action, needs an unlocked vault)
COMMANDS = [
    ("Search", "BM25, vector and hybrid results side by side", "open_search", True),
    ("Ask", "A grounded answer with checked [S#] citations (extractive offline)", "open_ask", True),
    ("Ingest files", "Import text files as knowledge cards", "open_ingest", True),
    ("Records", "List the vault's records with a reader", "open_records", True),
    ("Vault status", "Index, limits and model status", "open_status", True),
    ("Back up vault", "A verified, encrypted copy in the backup folder", "backup_vault", True),
    ("Egress log", "Every request that sent this vault's content out", "open_egress", True),
    ("Install embedding model", "Download and verify the model for vector search", "open_model", False),
    ("Lock vault", "Forget keys and indexes, back to the unlock screen", "lock", True),
    ("Create vault", "Create a new encrypted vault", "create_vault", False),
    ("Switch vault", "Lock and pick another vault", "switch_vault", False),
]


class MemoriesCommands(Provider):
    def _available(self) -> list[tuple[str, str, str]]:
        unlocked = getattr(self.app, "vault", None) is not None
        return [(title, help_text, action) for title, help_text, action, needs in COMMANDS if unlocked or not needs]

    async def discover(self) -> Hits:
        for title, help_text, action in self._available():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=help_text)
