"""The engine's words for things (record kinds, outcome statuses) as people read them.

The engine and `--json` keep the English codes (`card`, `unchanged`); front ends show these.
"""

from __future__ import annotations

from ..i18n import N_, _

KIND_NAMES = {
    "memory": N_("memory"),
    "card": N_("card"),
    "private": N_("private"),
    "credential": N_("credential"),
    "asset": N_("asset"),
}

STATUS_NAMES = {
    # ingest
    "created": N_("created"),
    "updated": N_("updated"),
    "unchanged": N_("unchanged"),
    "skipped": N_("skipped"),
    # model install
    "downloaded": N_("downloaded"),
    "reused": N_("reused"),
    "copied": N_("copied"),
    "failed": N_("failed"),
    # inject
    "added": N_("added"),
    "kept": N_("kept"),
    "replaced": N_("replaced"),
    "error": N_("error"),
}


def kind_name(kind: str) -> str:
    """A record kind in the interface language (an unknown one as it is)."""
    return _(KIND_NAMES[kind]) if kind in KIND_NAMES else kind


def status_name(status: str) -> str:
    """An outcome status in the interface language (an unknown one as it is)."""
    return _(STATUS_NAMES[status]) if status in STATUS_NAMES else status


def note_text(note: object) -> str:
    """A search or answer note in the interface language: the engine's fixed notes are in the
    catalog (marked where they are written); one with numbers in it stays English."""
    text = str(getattr(note, "text", note))
    return _(text)
