"""This device's sync state, kept sealed inside the vault (vault/sync_rows.py).

One sealed blob holds the device id, the clock, this device's own chain position, every other
device's position as last verified, and the content of revisions that lost (the conflicts kept
for the user). The bundles committed here but maybe not uploaded yet (an interrupted sync
uploads the very same bytes again) are rows of their own. Each record's revision tree, the revision the vault
holds and the ancestors a merge needs lie in a sealed row of their own, read when a sync touches
that record and written only when it changed: a sync costs what it changes, not the vault's size.
A state of the first form (every record in the one blob) is read and written back in rows.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import TamperError
from ..i18n import msg
from ..vault.sync_rows import SyncedChange
from .hlc import Stamp
from .revtree import Rev, RevTree
from .sealing import compact_json


@dataclass
class Doc:
    cur: str | None = None  # the revision whose content the vault holds
    local: int | None = None  # the vault's revision number of it (None: no record there)
    high: int = 0  # the highest revision number this vault ever gave the record: never reused, so
    # a record deleted and brought back never looks unchanged to caches keyed by revision

    raw: dict[str, Any] | None = None  # the revisions as stored, parsed on first use: a sync
    # touches few records, and building every tree on every sync cost more than the sync itself
    _tree: RevTree | None = None
    bases: dict[str, int] = field(default_factory=dict)  # rev -> the vault revision holding its
    # content: the common ancestor a three-way merge of a later concurrent edit needs
    stored: bytes | None = None  # its row as last read or written (None: not in a row yet)

    @property
    def tree(self) -> RevTree:
        if self._tree is None:
            try:
                self._tree = RevTree({rev_id: Rev.from_list(rev_id, row) for rev_id, row in (self.raw or {}).items()})
            except (ValueError, TypeError, AttributeError):
                raise TamperError(msg("The vault's sync state is malformed; refusing it.")) from None
            self.raw = None
        return self._tree

    def stored_revs(self) -> dict[str, Any]:
        if self._tree is None:
            return self.raw or {}
        return {r.rev_id: r.to_list() for r in self._tree.revs.values()}

    def next_revision(self) -> int:
        self.high = max(self.high, self.local or 0) + 1
        return self.high

    def row(self) -> bytes:
        value = {"revs": self.stored_revs(), "cur": self.cur, "high": self.high, "bases": self.bases}
        return compact_json(value).encode("utf-8")

    @classmethod
    def from_row(cls, raw: bytes, local: int | None) -> Doc:
        try:
            v: Any = json.loads(raw)
            bases = _req(v["bases"], dict)
            if not all(type(n) is int for n in bases.values()):
                raise TypeError("bases")
            doc = cls(_opt(v["cur"], str), local, _req(v["high"], int), _req(v["revs"], dict), bases=bases)
        except (ValueError, KeyError, TypeError, RecursionError):
            raise TamperError(msg("The vault's sync state is malformed; refusing it.")) from None
        doc.stored = bytes(raw)
        return doc


DocLoader = Callable[[list[str] | None], dict[str, Doc]]  # the rows of these records (None: every row)


@dataclass
class SyncState:
    device: str = field(default_factory=lambda: secrets.token_hex(8))
    clock: Stamp = Stamp(0, 0)
    own_seq: int = 0
    own_digest: str = ""
    outbox: dict[int, bytes] = field(default_factory=dict)
    seen: dict[str, tuple[int, str]] = field(default_factory=dict)
    docs: dict[str, Doc] = field(default_factory=dict)  # the records read or touched so far
    kept: dict[str, dict[str, str | None]] = field(default_factory=dict)  # record -> losing rev -> payload
    last_sync: str | None = None
    resolving: set[str] = field(default_factory=set)  # records whose next revision closes every leaf
    loaded: bytes | None = field(default=None, repr=False, compare=False)  # the stored form it was read from
    loader: DocLoader | None = field(default=None, repr=False, compare=False)
    legacy: bool = False  # read from the first form: every record's row is still to be written
    unsaved: set[int] = field(default_factory=set)  # outbox bundles not in the vault's rows yet
    watch: dict[str, tuple[str, int]] = field(default_factory=dict)  # device -> (its head as last seen, since
    # when by this device's wall clock, ms): how long another device has not synced (compaction.py)
    pushed: list[int] = field(default_factory=list)  # bundles this sync handed to the uploader (off `outbox`)

    def commit_form(self) -> tuple[bytes, bytes | None]:
        """(the new stored form, the one it replaces); from now on the new one is the base."""
        fresh, base = self.to_bytes(), self.loaded
        self.loaded = fresh
        return fresh, base

    def change(self, **rows: Any) -> SyncedChange:
        """What a commit of this state writes: its blob, the entries and bundles not yet in rows,
        plus `rows` (records to write, bundles uploaded); from now on those are the stored ones."""
        docs = self.dirty_rows()
        outbox = {seq: self.outbox[seq] for seq in sorted(self.unsaved) if seq in self.outbox}
        self.unsaved.clear()
        stored, base = self.commit_form()
        return SyncedChange(state=stored, base=base, docs=docs, outbox=outbox, **rows)

    def doc(self, record_id: str) -> Doc:
        """The record's entry, read from its row the first time (a new one if it has none)."""
        doc = self.docs.get(record_id)
        if doc is None:
            self.prefetch([record_id])
            doc = self.docs.setdefault(record_id, Doc())
        return doc

    def find(self, record_id: str) -> Doc | None:
        if record_id not in self.docs:
            self.prefetch([record_id])
        doc = self.docs.get(record_id)
        return doc if doc is not None and (doc.stored is not None or doc.cur is not None) else None

    def prefetch(self, record_ids: list[str]) -> None:
        """Read the rows of many records in one go (a join touches every record)."""
        wanted = [record_id for record_id in dict.fromkeys(record_ids) if record_id not in self.docs]
        if wanted and self.loader is not None and not self.legacy:
            found = self.loader(wanted)
            self.docs.update({record_id: found.get(record_id) or Doc() for record_id in wanted})  # no row: a new entry

    def every_doc(self) -> dict[str, Doc]:
        """Every record's entry (reads every row: for tests and repairs, not a sync's hot path)."""
        if self.loader is not None and not self.legacy:
            for record_id, doc in self.loader(None).items():
                self.docs.setdefault(record_id, doc)
        return self.docs

    def dirty_rows(self) -> list[tuple[str, int | None, bytes]]:
        """(record, vault revision, row) of every entry read or made since that differs from its
        row; from now on those are their rows, read again when next needed (so a later commit of
        this state does not compare every entry of a first push again, nor keep them all)."""
        out = []
        for record_id, doc in self.docs.items():
            if doc.stored is None and doc.cur is None:
                continue  # looked up, never used
            row = doc.row()
            if row != doc.stored:
                out.append((record_id, doc.local, row))
                doc.stored = row
        if self.loader is not None:
            self.docs.clear()
        self.legacy = False
        return out

    def to_bytes(self) -> bytes:
        value = {
            "v": 2, "device": self.device, "clock": [self.clock.ms, self.clock.counter],
            "own": [self.own_seq, self.own_digest],
            "seen": {d: list(p) for d, p in self.seen.items()},
            "kept": self.kept, "last_sync": self.last_sync, "resolving": sorted(self.resolving),
        }
        if self.watch:
            value["watch"] = {d: list(w) for d, w in sorted(self.watch.items())}
        return compact_json(value).encode("utf-8")

    @classmethod
    def from_bytes(cls, raw: bytes, loader: DocLoader | None = None) -> SyncState:
        try:
            v: Any = json.loads(raw)
            docs = {}
            legacy = v.get("v") == 1
            if legacy:  # the first form: every record in this blob; they move to rows at the next commit
                bases = _req(v.get("bases", {}), dict)
                for record_id, d in v["docs"].items():
                    docs[record_id] = Doc(_opt(d["cur"], str), _opt(d["local"], int), _req(d["high"], int),
                                          _req(d["revs"], dict), bases=_req(bases.get(record_id, {}), dict))
            elif v.get("v") != 2:
                raise ValueError("unknown form")
            state = cls(device=_req(v["device"], str), clock=Stamp(*map(int, v["clock"])),
                        own_seq=int(v["own"][0]), own_digest=_req(v["own"][1], str),
                        outbox={int(k): base64.b64decode(b) for k, b in v.get("outbox", {}).items()},
                        seen={d: (int(p[0]), _req(p[1], str)) for d, p in v["seen"].items()},
                        docs=docs, kept=_req(v["kept"], dict), last_sync=_opt(v["last_sync"], str),
                        resolving={_req(r, str) for r in v.get("resolving", [])},
                        loaded=bytes(raw), loader=loader, legacy=legacy,
                        watch={d: (_req(w[0], str), int(w[1])) for d, w in v.get("watch", {}).items()})
            state.unsaved = set(state.outbox)  # a blob that still held bundles: they move to rows
        except (ValueError, KeyError, TypeError, IndexError, RecursionError, AttributeError):
            raise TamperError(msg("The vault's sync state is malformed; refusing it.")) from None
        return state


def _req(value: object, kind: type) -> Any:
    if not isinstance(value, kind):
        raise TypeError(kind.__name__)
    return value


def _opt(value: object, kind: type) -> Any:
    return None if value is None else _req(value, kind)
