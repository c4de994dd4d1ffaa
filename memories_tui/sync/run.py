"""One sync of one vault with one target: pull and verify, merge, write, push.

Everything pulled is verified before the vault is touched; the merge result, the new bundle of
this device's changes and the state that names both are committed in one vault transaction;
only then is the bundle uploaded (then the head). A sync killed after the commit uploads the
same sealed bundle next time, so other devices never see two versions of one bundle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from ..egress import SentChunk
from ..errors import CancelledError, ErrorCode, SyncError
from ..i18n import msg
from ..testhooks import pause_point
from ..vault.egress_log import EgressEntry
from ..vault.records import Record
from ..vault.store import UnlockedVault
from ..vault.sync_rows import SyncedChange
from .chains import entry, pull
from .hlc import Clock
from .merge import Plan, merge_pulled, record_local
from .revtree import Rev
from .sealing import Head, bundle_ad, bundle_name, digest, head_name, seal
from .state import SyncState
from .targets import Target
from .types import SyncReport

ProgressFn = Callable[[str], None]
_ATTEMPTS = 3
BUNDLE_BYTES = 4 << 20


def load_state(vault: UnlockedVault) -> SyncState:
    raw = vault.sync_state()
    return SyncState.from_bytes(raw) if raw is not None else SyncState()


def run_sync(vault: UnlockedVault, target: Target, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, now_ms: int | None = None) -> SyncReport:
    """Sync once; a local edit racing the write makes it start over (up to three times)."""
    for attempt in range(_ATTEMPTS):
        try:
            return _once(vault, target, progress, cancel, now_ms)
        except SyncError as exc:
            if exc.code != ErrorCode.SYNC_BUSY or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _once(vault: UnlockedVault, target: Target, progress: ProgressFn | None, cancel: threading.Event | None,
          now_ms: int | None) -> SyncReport:
    state = load_state(vault)
    keys = vault.keys
    pulled = pull(target, keys, state, cancel=cancel, progress=progress)
    clock = Clock(state.clock, now_ms)
    known = {rid: doc.local for rid, doc in state.docs.items() if doc.local is not None}
    _counter, live, changed = vault.refresh(known)
    plan = Plan()
    record_local(state, clock, live, changed, plan)
    fresh: dict[str, Record] = {r.id: r for r in changed}
    merge_pulled(state, clock, pulled.bundles, lambda rid: fresh.get(rid) or vault.read(rid), plan, vault.read)
    for bundle in pulled.bundles:
        state.seen[bundle.device] = (bundle.seq, bundle.digest)
    for part in _parts(plan.outgoing):
        seq = state.own_seq + 1
        blob = seal(keys.sync_aead("bundle"), {"prev": state.own_digest, "revs": [entry(*item) for item in part]},
                    bundle_ad(keys.vault_id, state.device, seq))
        state.own_seq, state.own_digest, state.outbox[seq] = seq, digest(blob), blob
    state.resolving -= {record_id for record_id, _rev, _payload in plan.outgoing}
    state.clock = clock.last
    state.last_sync = _now()
    if cancel is not None and cancel.is_set():
        raise CancelledError(msg("Sync cancelled; nothing was changed here."))
    pause_point("sync-before-commit")  # crash tests kill -9 here (testhooks): pulled, verified, nothing written
    stored, base = state.commit_form()
    vault.apply_synced(SyncedChange(plan.puts, plan.deletes, plan.expected, stored, base=base))
    pause_point("sync-after-commit")  # committed here, nothing uploaded yet
    objects, sent = upload(vault, target, state)
    return SyncReport(vault.vault_id, target.description, state.device, len(pulled.devices), len(plan.outgoing),
                      objects, sent, plan.pulled, pulled.objects, pulled.bytes, len(plan.puts) + len(plan.deletes),
                      len(state.kept))


def _parts(outgoing: list[tuple[str, Rev, str | None]]) -> Iterator[list[tuple[str, Rev, str | None]]]:
    """The revisions in order, cut into bundles of about BUNDLE_BYTES of content each: a first
    push of a large vault is several ordinary objects, not one that every store must take whole."""
    part: list[tuple[str, Rev, str | None]] = []
    size = 0
    for item in outgoing:
        cost = len(item[2] or "") + 128
        if part and size + cost > BUNDLE_BYTES:
            yield part
            part, size = [], 0
        part.append(item)
        size += cost
    if part:
        yield part


def upload(vault: UnlockedVault, target: Target, state: SyncState) -> tuple[int, int]:
    """Upload the bundles committed but not yet sent, then the head; log the push; empty the
    outbox. The egress entry is written before anything leaves."""
    if not state.outbox:
        return 0, 0
    keys = vault.keys
    head = Head(state.device, state.own_seq, state.own_digest, _now()).sealed(keys.sync_aead("head"), keys.vault_id)
    objects = len(state.outbox) + 1
    size = sum(len(b) for b in state.outbox.values()) + len(head)
    logged = vault.egress.append(EgressEntry(seq=0, time=_now(), host=target.description, purpose="sync",
                                             loopback=target.on_this_machine, chunks=tuple[SentChunk, ...](),
                                             bytes_sent=size, objects=objects))
    for seq in sorted(state.outbox):
        target.put(bundle_name(state.device, seq), state.outbox[seq])
    pause_point("sync-before-head")  # bundles uploaded, the head not yet
    target.put(head_name(state.device), head)
    from dataclasses import replace

    vault.egress.rewrite(replace(logged, outcome="ok", attempts=1))
    state.outbox.clear()
    fresh, base = state.commit_form()
    vault.apply_synced(SyncedChange(state=fresh, base=base))
    return objects, size


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
