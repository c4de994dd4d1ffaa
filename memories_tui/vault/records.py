"""Records, their kinds and who may see them: private, credential and asset records are never
indexed, searched, sent to a model or shown to an AI client."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ErrorCode, InputRefusedError, NotFoundError, UsageError
from ..i18n import msg
from ..serial import Jsonable, json_meta
from ..vocabulary import EXCLUDED_KINDS, GENERAL_KINDS, KINDS, Kind

__all__ = ["EXCLUDED_KINDS", "GENERAL_KINDS", "KINDS", "Kind", "NewRecord", "PulledRecord", "Record", "RecordUpdate",
           "is_searchable", "sensitivity_for"]


def sensitivity_for(kind: str) -> str:
    """`general` records may be indexed and searched; `excluded` ones never leave the vault."""
    return "general" if kind in GENERAL_KINDS else "excluded"


def is_searchable(kind: str) -> bool:
    return kind in GENERAL_KINDS

MAX_REVISION = 2**63 - 1  # SQLite's largest integer


@dataclass(frozen=True)
class Record(Jsonable):
    id: str
    revision: int
    kind: Kind
    title: str
    body: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)
    created: str = ""
    updated: str = ""
    data: bytes | None = field(default=None, metadata=json_meta(wire_only=True))  # a file asset's bytes (no body)

    JSON_COMPUTED = (("bytes", "size", None),)  # an asset's size, printed instead of its bytes

    @property
    def size(self) -> int | None:
        return len(self.data) if self.data is not None else None

    @property
    def sensitivity(self) -> str:
        return sensitivity_for(self.kind)

    def summary(self) -> dict[str, object]:
        """The short form lists print: no body, tags or metadata."""
        full = self.to_json()
        return {key: full[key] for key in ("id", "revision", "kind", "title", "updated")}


@dataclass(frozen=True)
class PulledRecord:
    """A revision another device sent, to store under this vault's number `revision`: checked
    already, kept as pulled (what the vault stores) rather than decoded, so a join holds each
    record once, not twice."""

    id: str
    revision: int
    kind: Kind
    payload: str


@dataclass(frozen=True)
class NewRecord:
    """What the store needs to write revision 1 of a record (id and timestamps are its own)."""

    kind: Kind
    title: str
    body: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)
    data: bytes | None = None  # a file asset's bytes
    record_id: str | None = None  # chosen ahead (an import links notes to each other before writing)


@dataclass(frozen=True)
class RecordUpdate:
    """A new revision of an existing record: None keeps that field as it was."""

    record_id: str
    title: str | None = None
    body: str | None = None
    tags: tuple[str, ...] | None = None
    metadata: dict[str, object] | None = None
    expected: int | None = None  # the revision the change was made on: refused if the record moved on since

    def check_at(self, current: int) -> None:
        """Refuse (`record_changed`) a change made on a revision the record has moved on from."""
        if self.expected is not None and current != self.expected:
            raise InputRefusedError(msg(
                "Record {record_id} changed since revision {expected} (it is at revision {current} now: another "
                "device's edit arrived by sync, or another program wrote it); nothing was saved.",
                record_id=self.record_id, expected=self.expected, current=current), code=ErrorCode.RECORD_CHANGED)


def check_record_id(record_id: object) -> str:
    if not isinstance(record_id, str):
        raise NotFoundError(msg("No record {record_id!r}.", record_id=record_id))
    try:
        record_id.encode("utf-8")
    except UnicodeEncodeError:
        raise NotFoundError(msg("No record with that id (it is not valid UTF-8 text).")) from None
    return record_id


def check_revision(revision: object) -> int:
    if type(revision) is not int or not 1 <= revision <= MAX_REVISION:
        raise UsageError(msg("A revision number is an integer from 1 to {max_revision}; got {revision!r}.",
                             max_revision=MAX_REVISION, revision=revision))
    return revision


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputRefusedError(msg("Unknown record kind {kind!r}; use one of {names}.",
                                    kind=kind, names=', '.join(KINDS)), code=ErrorCode.BAD_KIND)
