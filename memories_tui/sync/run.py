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
from ..testhooks import hold_point, pause_point
from ..vault.egress_log import EgressEntry
from ..vault.store import UnlockedVault
from ..vault.sync_rows import LocalChange, read_docs, read_outbox
from . import compaction, policy
from .chains import Pulled, entry, pull
from .hlc import Clock
from .merge import Plan, merge_pulled, record_local
from .revtree import Rev
from .sealing import bundle_ad, bundle_name, cut_by_size, digest, head_name, seal
from .snapshots import snapshot_name
from .state import Doc, SyncState
from .targets import Target
from .types import SyncReport

ProgressFn = Callable[[str], None]
_ATTEMPTS = 3
BUNDLE_BYTES = 4 << 20


def load_state(vault: UnlockedVault) -> SyncState:
    """The state's blob; each record's entry is read from its row when first needed."""
    def load(record_ids: list[str] | None) -> dict[str, Doc]:
        rows = vault.sync_read(lambda conn, keys: read_docs(conn, keys, record_ids))
        return {record_id: Doc.from_row(row, local) for record_id, (local, row) in rows.items()}

    raw = vault.sync_state()
    state = SyncState.from_bytes(raw, load) if raw is not None else SyncState(loader=load)
    for seq, blob in vault.sync_read(read_outbox).items():
        state.outbox.setdefault(seq, blob)
    return state


def run_sync(vault: UnlockedVault, target: Target, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, now_ms: int | None = None,
             compact_after: int = compaction.COMPACT_AFTER, hold_days: float = compaction.HOLD_DAYS) -> SyncReport:
    """Sync once; a local edit racing the write makes it start over (up to three times).
    `compact_after` 0 never writes a snapshot; a device not seen to sync for `hold_days` no
    longer holds back deleting (compaction.py)."""
    for attempt in range(_ATTEMPTS):
        try:
            return _once(vault, target, progress, cancel, now_ms, compact_after, hold_days)
        except SyncError as exc:
            if exc.code != ErrorCode.SYNC_BUSY or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _once(vault: UnlockedVault, target: Target, progress: ProgressFn | None, cancel: threading.Event | None,
          now_ms: int | None, compact_after: int, hold_days: float = compaction.HOLD_DAYS) -> SyncReport:
    state = load_state(vault)
    if state.legacy:  # every record's entry still in the one blob: move them to their rows first
        vault.apply_synced(state.change())
    keys = vault.keys
    pulled = pull(target, keys, state, cancel=cancel, progress=progress)
    compaction.observe(state, pulled.heads)  # committed with the state: how long each device has been still
    clock = Clock(state.clock, now_ms)
    changed, deleted, mark = vault.sync_changes()
    hold_point("sync-after-read")  # tests edit the vault here: that edit is for the next sync
    try:
        plan, rules = _merge_and_commit(vault, state, clock, pulled, changed, deleted, cancel)
    except BaseException:
        vault.touched.synced(mark, ok=False)  # the next sync compares every record again
        raise
    vault.touched.synced(mark, ok=True)
    pause_point("sync-after-commit")  # committed here, nothing uploaded yet
    objects, sent = upload(vault, target, state, pulled, compact_after, hold_days)
    return SyncReport(vault.vault_id, target.description, state.device, len(pulled.devices), len(plan.outgoing),
                      objects, sent, plan.pulled, pulled.objects, pulled.bytes, len(plan.puts) + len(plan.deletes),
                      len(state.kept), policy_pulled=sorted(set(rules.pulled)),
                      policy_conflicts=sorted(set(rules.concurrent)))


def _merge_and_commit(vault: UnlockedVault, state: SyncState, clock: Clock, pulled: Pulled,
                      changed: list[LocalChange], deleted: list[str], cancel: threading.Event | None
                      ) -> tuple[Plan, policy.Outcome]:
    """Make this device's revisions, merge the pulled ones and the vault's policy, seal the new
    bundles and commit it all."""
    keys = vault.keys
    plan = Plan()
    record_local(state, clock, deleted, changed, plan)
    merge_pulled(state, clock, pulled.bundles, vault.read, plan, vault.read)
    settings = vault.settings()
    rules = policy.merge(settings, clock, state.device, [c for bundle in pulled.bundles for c in bundle.policy])
    for bundle in pulled.bundles:
        state.seen[bundle.device] = (bundle.seq, bundle.digest)
    for number, part in enumerate(list(_parts(plan.outgoing)) or ([[]] if rules.outgoing else [])):
        seq = state.own_seq + 1
        body: dict[str, object] = {"prev": state.own_digest, "revs": [entry(*item) for item in part]}
        if number == 0 and rules.outgoing:
            body["policy"] = [change.to_json() for change in rules.outgoing]
        blob = seal(keys.sync_aead("bundle"), body, bundle_ad(keys.vault_id, state.device, seq))
        state.own_seq, state.own_digest, state.outbox[seq] = seq, digest(blob), blob
        state.unsaved.add(seq)
    state.resolving -= {record_id for record_id, _rev, _payload in plan.outgoing}
    state.clock = clock.last
    state.last_sync = _now()
    if cancel is not None and cancel.is_set():
        raise CancelledError(msg("Sync cancelled; nothing was changed here."))
    pause_point("sync-before-commit")  # crash tests kill -9 here (testhooks): pulled, verified, nothing written
    if rules.settings != settings:  # pulled policy first: a sync that then fails pulls it again, the same
        vault.set_settings(rules.settings)
    vault.apply_synced(state.change(puts=plan.puts, deletes=plan.deletes, expected=plan.expected,
                                    encoded=plan.encoded))
    if rules.outgoing:  # in the committed bundle now: what this device knows as the last change
        vault.set_settings(policy.recorded(vault.settings(), rules.outgoing))
    return plan, rules


def _parts(outgoing: list[tuple[str, Rev, str | None]]) -> Iterator[list[tuple[str, Rev, str | None]]]:
    """The revisions in order, cut into bundles of about BUNDLE_BYTES of content each: a first
    push of a large vault is several ordinary objects, not one that every store must take whole."""
    return cut_by_size(outgoing, lambda item: len(item[2] or "") + 128, BUNDLE_BYTES)


def upload(vault: UnlockedVault, target: Target, state: SyncState, pulled: Pulled,
           compact_after: int = compaction.COMPACT_AFTER, hold_days: float = compaction.HOLD_DAYS) -> tuple[int, int]:
    """Upload the bundles committed but not yet sent (and a snapshot when one is due), then the
    head; log the push; empty the outbox; then delete what compaction allows. The egress entry
    is written before anything leaves."""
    keys = vault.keys
    extra = compaction.prepare(target, keys, state, pulled, compact_after)
    sent = sorted(state.outbox)
    objects = size = 0
    if sent or extra.publish or extra.parts:
        head = extra.head(state, _now()).sealed(keys.sync_aead("head"), keys.vault_id)
        objects = len(sent) + len(extra.parts) + 1
        size = sum(len(b) for b in state.outbox.values()) + sum(len(p) for p in extra.parts) + len(head)
        logged = vault.egress.append(EgressEntry(seq=0, time=_now(), host=target.description, purpose="sync",
                                                 loopback=target.on_this_machine, chunks=tuple[SentChunk, ...](),
                                                 bytes_sent=size, objects=objects))
        for seq in sent:
            target.put(bundle_name(state.device, seq), state.outbox[seq])
        for k, part in enumerate(extra.parts):
            target.put(snapshot_name(state.device, extra.snap, k), part)
        pause_point("sync-before-head")  # bundles (and a snapshot) uploaded, the head not yet
        target.put(head_name(state.device), head)
        from dataclasses import replace

        vault.egress.rewrite(replace(logged, outcome="ok", attempts=1))
    if sent:
        state.outbox.clear()
        vault.apply_synced(state.change(uploaded=sent))
    pause_point("sync-before-prune")  # the head names the new snapshot; nothing deleted yet
    compaction.prune(target, keys, state, pulled, extra, sent, hold_days)
    return objects, size


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
