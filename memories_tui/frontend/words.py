"""The engine's words for things (record kinds, outcome statuses) as people read them.

The engine and `--json` keep the English codes (`card`, `unchanged`); front ends show these.
"""

from __future__ import annotations

import re

from ..i18n import N_, _

NOT_TEXT = N_("not a text or Markdown file ({suffix} files are not ingested)")  # as the engine's folder walk words it
_NOT_TEXT = re.compile(re.escape(NOT_TEXT).replace(re.escape("{suffix}"), "(.*)"))

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
    # source sync
    "moved": N_("moved"),
    "gone": N_("source gone"),
    "pruned": N_("pruned"),
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


# Why the resident engine locked a vault (its log keeps the English reason): the TUI's notice.
LOCK_NOTICES = {
    "expired": N_("Locked: the time it was unlocked for (--for) ran out."),
    "idle": N_("Locked: nobody used it for the daemon's idle time."),
    "lock": N_("Locked by `memories lock`."),
    "lock --all": N_("Locked by `memories lock --all`."),
    "restore": N_("Locked: a backup is being restored over it."),
    "locked in the Memories daemon": N_("Locked in the Memories daemon."),
    "the Memories daemon stopped": N_("Locked: the Memories daemon stopped."),
}


def lock_notice(reason: str) -> str:
    """The sentence saying a vault was locked elsewhere and why, in the interface language."""
    if reason in LOCK_NOTICES:
        return _(LOCK_NOTICES[reason])
    return _("Locked: {reason}.").format(reason=reason)  # a signal's name (SIGTERM) stays as it is


def kind_name(kind: str) -> str:
    """A record kind in the interface language (an unknown one as it is)."""
    return _(KIND_NAMES[kind]) if kind in KIND_NAMES else kind


def status_name(status: str) -> str:
    """An outcome status in the interface language (an unknown one as it is)."""
    return _(STATUS_NAMES[status]) if status in STATUS_NAMES else status


def reason_text(reason: str) -> str:
    """Why a file was skipped, in the interface language: the walk's fixed reasons are in the
    catalog (marked where they are written); a reader's refusal stays as the engine said it."""
    found = _NOT_TEXT.fullmatch(reason)
    if found:
        return _(NOT_TEXT).format(suffix=found[1])
    return _(reason) if reason else reason


def note_text(note: object) -> str:
    """A search or answer note in the interface language: the engine's fixed notes are in the
    catalog (marked where they are written); one with numbers in it stays English."""
    text = str(getattr(note, "text", note))
    return _(text)


def score_text(score: float) -> str:
    """Four decimals, or two significant digits for a tiny score: on a vault of a few records
    a word found in half of them or more gets BM25's floor weight (idf 1e-6), and "0.0000"
    would read as no match."""
    return f"{score:.4f}" if score == 0 or abs(score) >= 0.001 else f"{score:.1e}"
