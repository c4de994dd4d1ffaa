"""Command palette provider for the main actions (context-aware: vault actions need an unlocked vault)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..i18n import LANGUAGE_NAMES, LANGUAGES, N_, _, load_catalog

# (title, help, app action, needs an unlocked vault)
COMMANDS = [
    (N_("Search"), N_("BM25, vector and hybrid results side by side"), "open_search", True),
    (N_("Ask"), N_("A grounded answer with checked [S#] citations (extractive offline)"), "open_ask", True),
    (N_("Ingest files"), N_("Import text files as knowledge cards"), "open_ingest", True),
    (N_("Records"), N_("List the vault's records with a reader"), "open_records", True),
    (N_("Vault status"), N_("Index, limits and model status"), "open_status", True),
    (N_("Back up vault"), N_("A verified, encrypted copy in the backup folder"), "backup_vault", True),
    (N_("Sync now"), N_("Push this vault's changes to its sync target and pull the other devices'"), "sync_now",
     True),
    (N_("Set up sync"), N_("Sync this vault with your other devices through a folder, S3 or WebDAV"),
     "set_up_sync", True),
    (N_("Sync devices"), N_("The devices that sync this vault; forget one, or stop syncing here"),
     "open_sync_devices", True),
    (N_("Egress log"), N_("Every request that sent this vault's content out"), "open_egress", True),
    (N_("Install embedding model"), N_("Download and verify the model for vector search"), "open_model", False),
    (N_("Change passphrase"), N_("Wrap this vault's key under a new passphrase (the other devices follow)"),
     "change_passphrase", True),
    (N_("Device-only policy"), N_("Keep this vault's text off remote services and network sync targets, or allow "
                                  "them"), "device_only", True),
    (N_("Lock vault"), N_("Forget keys and indexes, back to the unlock screen"), "lock", True),
    (N_("Create vault"), N_("Create a new encrypted vault"), "create_vault", False),
    (N_("Join a vault from another device"), N_("Bring a vault another device syncs to its target here"),
     "join_vault", False),
    (N_("Switch vault"), N_("Lock and pick another vault"), "switch_vault", False),
]
# the interface language: each entry is named in its own script, so a reader finds theirs
LANGUAGE_CHOICES = [("en", "English"), ("zh-Hant", LANGUAGE_NAMES["zh-Hant"]), ("zh-Hans", LANGUAGE_NAMES["zh-Hans"]),
                    ("auto", N_("system default"))]
# the help line names the language in the reader's own words ("以英文顯示介面")
LANGUAGE_IN_HELP = {"en": N_("English"), "zh-Hant": N_("Traditional Chinese"), "zh-Hans": N_("Simplified Chinese")}
LANGUAGE_TITLE = N_("Language: {name}")
LANGUAGE_HELP = N_("Show the interface in {name} (kept in config.toml)")
SYSTEM_LANGUAGE_HELP = N_("Show the interface in the system's language (kept in config.toml)")


def every_wording(text: str, **fields: str) -> list[str]:
    """`text` in English and in each interface language, so the palette finds a command by
    the words of any of them ("language", "語言" and "语言" all find the language switch)."""
    return [load_catalog(language).gettext(text).format(**fields) for language in LANGUAGES]


class MemoriesCommands(Provider):
    def _available(self) -> list[tuple[str, str, str, list[str]]]:
        """(title, help, action, every wording of the title) of each command offered now."""
        unlocked = getattr(self.app, "vault", None) is not None
        found = [(_(title), _(help_text), action, every_wording(title))
                 for title, help_text, action, needs in COMMANDS if unlocked or not needs]
        for setting, name in LANGUAGE_CHOICES if hasattr(self.app, "action_switch_language") else ():
            if setting == "auto":
                title, help_text = _(LANGUAGE_TITLE).format(name=_(name)), _(SYSTEM_LANGUAGE_HELP)
                wordings = [wording for each in every_wording(name)
                            for wording in every_wording(LANGUAGE_TITLE, name=each)]
            else:
                title = _(LANGUAGE_TITLE).format(name=name)
                help_text = _(LANGUAGE_HELP).format(name=_(LANGUAGE_IN_HELP[setting]))
                wordings = every_wording(LANGUAGE_TITLE, name=name)
            found.append((title, help_text, f"switch_language({setting!r})", wordings))
        return found

    async def discover(self) -> Hits:
        for title, help_text, action, _wordings in self._available():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action, wordings in self._available():
            score = max(matcher.match(text) for text in [title, *wordings])
            if score > 0:
                shown = matcher.highlight(title) if matcher.match(title) > 0 else title
                yield Hit(score, shown, partial(self.app.run_action, action), help=help_text)
