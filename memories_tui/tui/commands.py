"""Command palette provider for the main actions (context-aware: vault actions need an unlocked vault)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..i18n import LANGUAGE_NAMES, N_, _

# (title, help, app action, needs an unlocked vault)
COMMANDS = [
    (N_("Search"), N_("BM25, vector and hybrid results side by side"), "open_search", True),
    (N_("Ask"), N_("A grounded answer with checked [S#] citations (extractive offline)"), "open_ask", True),
    (N_("Ingest files"), N_("Import text files as knowledge cards"), "open_ingest", True),
    (N_("Records"), N_("List the vault's records with a reader"), "open_records", True),
    (N_("Vault status"), N_("Index, limits and model status"), "open_status", True),
    (N_("Back up vault"), N_("A verified, encrypted copy in the backup folder"), "backup_vault", True),
    (N_("Egress log"), N_("Every request that sent this vault's content out"), "open_egress", True),
    (N_("Install embedding model"), N_("Download and verify the model for vector search"), "open_model", False),
    (N_("Lock vault"), N_("Forget keys and indexes, back to the unlock screen"), "lock", True),
    (N_("Create vault"), N_("Create a new encrypted vault"), "create_vault", False),
    (N_("Switch vault"), N_("Lock and pick another vault"), "switch_vault", False),
]
# the interface language: each entry is named in its own script, so a reader finds theirs
LANGUAGE_CHOICES = [("en", "English"), ("zh-Hant", LANGUAGE_NAMES["zh-Hant"]), ("zh-Hans", LANGUAGE_NAMES["zh-Hans"]),
                    ("auto", N_("system default"))]


class MemoriesCommands(Provider):
    def _available(self) -> list[tuple[str, str, str]]:
        unlocked = getattr(self.app, "vault", None) is not None
        found = [(_(title), _(help_text), action) for title, help_text, action, needs in COMMANDS if unlocked or not needs]
        for setting, name in LANGUAGE_CHOICES if hasattr(self.app, "action_switch_language") else ():
            shown = _(name) if setting == "auto" else name
            found.append((_("Language: {name}").format(name=shown),
                          _("Show the interface in {name} (kept in config.toml)").format(name=shown),
                          f"switch_language({setting!r})"))
        return found

    async def discover(self) -> Hits:
        for title, help_text, action in self._available():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=help_text)
