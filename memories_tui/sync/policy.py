"""Vault policy that follows the vault between devices (today the device-only flag), by the rule
records follow: every change is stamped with the hybrid logical clock and travels in the device's
next bundle; the change with the later (stamp, device) wins on every device, and two changes that
did not see each other (each names the change it replaced: `base`) are reported.

What this device knows is kept in the vault's settings under META: for each key the winning
change (value, stamp, device). A value that differs from it was changed here since the last sync.
A key never changed anywhere and still at its default is not sent, so a device that never touched
it cannot turn back a change made elsewhere. Settings that belong to one device (source folders,
the passphrase's date, the egress mark) never sync.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .hlc import Clock, Stamp

SYNCED: dict[str, bool] = {"device_only": False}  # key -> its default
META = "sync_policy"
LINEAGE = "sync_policy_seen"  # key -> the changes known here and those they replaced: one arriving late is old news
_LINEAGE_KEPT = 64


@dataclass(frozen=True)
class Change:
    key: str
    value: bool
    stamp: Stamp
    device: str
    base: tuple[int, int, str] | None  # the change it replaced, as this device knew it

    @property
    def ident(self) -> tuple[int, int, str]:
        return (self.stamp.ms, self.stamp.counter, self.device)

    def to_json(self) -> dict[str, Any]:
        return {"k": self.key, "v": self.value, "s": [self.stamp.ms, self.stamp.counter], "d": self.device,
                "b": list(self.base) if self.base is not None else None}

    @classmethod
    def from_json(cls, item: Any) -> Change:
        """ValueError when malformed (the caller refuses the bundle)."""
        if not isinstance(item, dict) or item.get("k") not in SYNCED or type(item.get("v")) is not bool:
            raise ValueError("policy change")
        ms, counter = item["s"]
        base = item["b"]
        if not (type(ms) is int and type(counter) is int and isinstance(item["d"], str)):
            raise ValueError("policy change")
        if base is not None:
            b_ms, b_counter, b_device = base
            if not (type(b_ms) is int and type(b_counter) is int and isinstance(b_device, str)):
                raise ValueError("policy change")
            base = (b_ms, b_counter, b_device)
        return cls(item["k"], item["v"], Stamp(ms, counter), item["d"], base)


@dataclass
class Outcome:
    settings: dict[str, Any]  # the settings with the winners applied (and nothing of this sync's own yet)
    outgoing: list[Change] = field(default_factory=list)  # changes made here, for this sync's bundle
    pulled: list[str] = field(default_factory=list)  # keys another device's change set here
    concurrent: list[str] = field(default_factory=list)  # keys changed on two devices without seeing each other


def _known(settings: dict[str, Any], key: str) -> Change | None:
    meta = settings.get(META)
    item = meta.get(key) if isinstance(meta, dict) else None
    try:
        return Change.from_json(item) if item is not None else None
    except (ValueError, TypeError, KeyError):
        return None


def merge(settings: dict[str, Any], clock: Clock, device: str, incoming: list[Change]) -> Outcome:
    """This device's policy changes since the last sync, and the other devices' changes pulled
    now, decided by the same rule everywhere."""
    current = {key: _known(settings, key) for key in SYNCED}
    lineage = _lineage(settings, current)
    out = Outcome(dict(settings))
    for key, default in SYNCED.items():
        value = bool(settings.get(key, default))
        known = current[key]
        if (known.value if known is not None else default) != value:
            base = known.ident if known is not None else None
            change = Change(key, value, clock.tick(), device, base)
            out.outgoing.append(change)
            current[key] = change
            _note(lineage[key], change)
    for change in incoming:
        clock.receive(change.stamp)
        if change.ident in lineage[change.key]:
            continue  # known, or replaced by a change known here (a snapshot repeats a device's last one)
        _note(lineage[change.key], change)
        mine = current[change.key]
        if (mine is not None and mine.stamp.ms > 0 and change.base != mine.ident and mine.value != change.value):
            out.concurrent.append(change.key)
        if mine is None or change.ident > mine.ident:
            current[change.key] = change
            if bool(out.settings.get(change.key, SYNCED[change.key])) != change.value:
                out.pulled.append(change.key)
            out.settings[change.key] = change.value
            meta = dict(out.settings.get(META) or {})
            meta[change.key] = change.to_json()
            out.settings[META] = meta
    kept = {key: [list(ident) for ident in sorted(known)[-_LINEAGE_KEPT:]] for key, known in lineage.items() if known}
    if kept:  # a vault whose policy never changed keeps its settings as they were
        out.settings[LINEAGE] = kept
    return out


def _lineage(settings: dict[str, Any], current: dict[str, Change | None]) -> dict[str, set[tuple[int, int, str]]]:
    """Per key, the changes this device has seen and the ones they replaced (a vault from before
    this was kept starts from the change it knows)."""
    stored = settings.get(LINEAGE)
    out: dict[str, set[tuple[int, int, str]]] = {}
    for key in SYNCED:
        items = stored.get(key) if isinstance(stored, dict) else None
        known = {(i[0], i[1], i[2]) for i in items if isinstance(i, list) and len(i) == 3
                 and type(i[0]) is int and type(i[1]) is int and isinstance(i[2], str)} if isinstance(items, list) else set()
        change = current[key]
        if change is not None and change.device:
            _note(known, change)
        out[key] = known
    return out


def _note(known: set[tuple[int, int, str]], change: Change) -> None:
    known.add(change.ident)
    if change.base is not None:
        known.add(change.base)


def known(settings: dict[str, Any]) -> list[Change]:
    """The change this device knows as the last of each key (a joined vault's seeded value is
    no device's change and is left out)."""
    return [change for key in SYNCED if (change := _known(settings, key)) is not None and change.device]


def recorded(settings: dict[str, Any], pushed: list[Change]) -> dict[str, Any]:
    """The settings once this sync's own changes are committed in its bundle: they are what this
    device knows as the last change of their keys (unless a pulled one won)."""
    meta = dict(settings.get(META) or {})
    for change in pushed:
        known = _known({META: meta}, change.key)
        if known is None or change.ident > known.ident:
            meta[change.key] = change.to_json()
    return {**settings, META: meta}


def seeded(settings: dict[str, Any]) -> dict[str, Any]:
    """A joined vault's settings: its policy as the join record gave it, known as the oldest
    possible change (stamp zero), so it is not sent as this device's own and any change the
    other devices made since wins."""
    meta = {key: Change(key, bool(settings.get(key, default)), Stamp(0, 0), "", None).to_json()
            for key, default in SYNCED.items()}
    return {**settings, META: meta}
