"""Record kinds and who may see them (R-VAULT-4, R-SEC-1)."""

from __future__ import annotations

from dataclasses import dataclass, field

GENERAL_KINDS = ("memory", "card")
EXCLUDED_KINDS = ("private", "credential", "asset")
KINDS = GENERAL_KINDS + EXCLUDED_KINDS


def sensitivity_for(kind: str) -> str:
    """`general` records may be indexed and searched; `excluded` ones never leave the vault."""
    return "general" if kind in GENERAL_KINDS else "excluded"


def is_searchable(kind: str) -> bool:
    return kind in GENERAL_KINDS


@dataclass(frozen=True)
class Record:
    id: str
    revision: int
    kind: str
    title: str
    body: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)
    created: str = ""
    updated: str = ""
    data: bytes | None = None  # raw bytes of a file asset; body is then empty

    @property
    def sensitivity(self) -> str:
        return sensitivity_for(self.kind)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id, "revision": self.revision, "kind": self.kind, "title": self.title,
            "body": self.body, "tags": list(self.tags), "metadata": self.metadata,
            "created": self.created, "updated": self.updated,
        }
        if self.data is not None:
            out["bytes"] = len(self.data)
        return out

    def summary(self) -> dict[str, object]:
        return {"id": self.id, "revision": self.revision, "kind": self.kind, "title": self.title,
                "updated": self.updated}


@dataclass(frozen=True)
class NewRecord:
    """What the store needs to write revision 1 of a record (id and timestamps are its own)."""

    kind: str
    title: str
    body: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)
    data: bytes | None = None  # a file asset's bytes


@dataclass(frozen=True)
class RecordUpdate:
    """A new revision of an existing record: None keeps that field as it was."""

    record_id: str
    title: str | None = None
    body: str | None = None
    tags: tuple[str, ...] | None = None
    metadata: dict[str, object] | None = None
