"""One sync of one vault with one target: pull and verify, merge, write, push.

Everything pulled is verified before the vault is touched; the merge result, the new bundle of
this device's changes and the state that names both are committed in one vault transaction;
only then is the bundle uploaded (then the head). A sync killed after the commit uploads the
same sealed bundle next time, so other devices never see two versions of one bundle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..errors import CancelledError, ErrorCode, MemoriesError, SyncError, SyncTamperedError
from ..i18n import msg
from ..testhooks import hold_point, pause_point
from ..vault.store import UnlockedVault
from ..vault.sync_rows import LocalChange, LocalRef, changed_since_sync, has_local_changes, read_docs, read_outbox
from . import compaction, policy, repair
from .chains import Incoming, Pulled, entry, pull
from .hlc import Clock
from .merge import Plan, merge_pulled, record_local
from .push import Uploader, now
from .revtree import Rev
from .sealing import bundle_ad, cut_by_size, digest, head_name, seal, unseal
from .snapshots import snapshot_name
from .state import Doc, SyncState
from .stream import Stream
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


def records_to_push(vault: UnlockedVault) -> int:
    """What the next push sends, in records: those added, edited or deleted since the last sync,
    and those in bundles an earlier sync made but could not upload (a target that refused them):
    those left the list of local changes when their bundle was made."""
    changed, gone = vault.sync_read(lambda conn, _keys: changed_since_sync(conn))
    ids = {record_id for record_id, _rev in changed} | set(gone)
    state = load_state(vault)  # its records' entries are read only if asked for: they are not here
    aead = vault.keys.sync_aead("bundle")
    for seq, blob in state.outbox.items():
        value = unseal(aead, blob, bundle_ad(vault.keys.vault_id, state.device, seq), f"Bundle {seq} waiting to upload")
        ids.update(str(item["id"]) for item in value["revs"])
    return len(ids)


def run_sync(vault: UnlockedVault, target: Target, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, now_ms: int | None = None,
             compact_after: int = compaction.COMPACT_AFTER, hold_days: float = compaction.HOLD_DAYS,
             device_name: str = "") -> SyncReport:
    """Sync once; a local edit racing the write makes it start over (up to three times).
    `compact_after` 0 never writes a snapshot; a device not seen to sync for `hold_days` no
    longer holds back deleting (compaction.py); `device_name` is how the others list this one."""
    for attempt in range(_ATTEMPTS):
        try:
            return _once(vault, target, progress, cancel, now_ms, compact_after, hold_days, device_name)
        except SyncError as exc:
            if exc.code != ErrorCode.SYNC_BUSY or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _once(vault: UnlockedVault, target: Target, progress: ProgressFn | None, cancel: threading.Event | None,
          now_ms: int | None, compact_after: int, hold_days: float = compaction.HOLD_DAYS,
          device_name: str = "") -> SyncReport:
    state = load_state(vault)
    earlier = len(state.outbox)  # bundles an earlier sync committed and could not upload: sent now
    if state.legacy:  # every record's entry still in the one blob: move them to their rows first
        vault.apply_synced(state.change())
    keys = vault.keys
    clock = Clock(state.clock, now_ms)
    streamed = _Committed(policy.Outcome({}))
    held_nothing = not (state.own_seq or state.seen)  # when it streams (below): a join, as records never synced are changes
    try:
        pulled = pull(target, keys, state, cancel=cancel, progress=progress,
                      stream=_stream(vault, state, clock, cancel, streamed) if _idle(vault, state) else None)
    except MemoriesError as exc:
        if isinstance(exc, SyncTamperedError):  # this device's own snapshot may be what is damaged: put it right
            repair.restore_own(target, keys, state, _local(vault), Uploader(vault, target, state.device))
        if streamed.pulled:
            raise _kept(exc, streamed.pulled, held_nothing) from None
        raise
    compaction.observe(state, pulled.heads)  # committed with the state: how long each device has been still
    changed, deleted, mark = vault.sync_changes()
    hold_point("sync-after-read")  # tests edit the vault here: that edit is for the next sync
    push = Uploader(vault, target, state.device)
    try:
        try:
            done = _commit_in_parts(vault, state, clock, pulled, changed, deleted, cancel, push, streamed)
        except BaseException:
            vault.touched.synced(mark, ok=False)  # the next sync compares every record again
            raise
        vault.touched.synced(mark, ok=done.whole)  # stopped between two parts: the rest is found again
        objects, sent = upload(vault, target, state, pulled, compact_after, hold_days, push, device_name)
    finally:
        push.close()
    done.add(streamed)
    rules = done.rules
    left = 0
    if not done.whole:  # stopped between two parts: what waits for the next sync
        changed_now, gone_now = vault.sync_read(lambda conn, _keys: changed_since_sync(conn))
        left = len(changed_now) + len(gone_now)
    return SyncReport(vault.vault_id, target.description, state.device, len(pulled.devices), done.outgoing,
                      objects, sent, done.pulled, pulled.objects, pulled.bytes, done.written,
                      len(state.kept), policy_pulled=sorted(set(rules.pulled)),
                      policy_conflicts=sorted(set(rules.concurrent)), left=left, resent_bundles=earlier)


def _idle(vault: UnlockedVault, state: SyncState) -> bool:
    """Nothing here to send or to lose (a join, or a device that only reads since its last
    sync): its pull is committed as it is read (stream.py)."""
    return not (state.outbox or state.legacy or state.resolving) and not vault.sync_read(
        lambda conn, _keys: has_local_changes(conn, vault.touched))


def _kept(exc: MemoriesError, count: int, held_nothing: bool) -> MemoriesError:
    """`exc`, saying that a streamed pull kept what it had verified before it."""
    if isinstance(exc, CancelledError):
        if held_nothing:
            return CancelledError(msg("Sync cancelled; the {count} change(s) received so far are kept here (this "
                                      "vault held nothing before this sync), and the next sync brings the rest.",
                                      count=count))
        return CancelledError(msg("Sync cancelled; the {count} change(s) received so far are kept here (this "
                                  "device had no change of its own to send), and the next sync brings the rest.",
                                  count=count))
    if held_nothing:
        return type(exc)(msg("{problem} This vault held nothing before this sync: the {count} change(s) verified "
                             "before the problem are kept here, and the next sync goes on from there.",
                             problem=exc, count=count), code=exc.code)
    return type(exc)(msg("{problem} This device had no change of its own to send: the {count} change(s) verified "
                         "before the problem are kept here, and the next sync goes on from there.",
                         problem=exc, count=count), code=exc.code)


def _stream(vault: UnlockedVault, state: SyncState, clock: Clock, cancel: threading.Event | None,
            done: _Committed) -> Stream:
    """Commit pulled bundles as the pull reads them (stream.py), counting what they did in `done`."""
    def commit(bundles: list[Incoming]) -> None:
        plan, rules = _merge_and_commit(vault, state, clock, Pulled(bundles=bundles), [], [], cancel, merge=False)
        done.add(_Committed(rules, len(plan.outgoing), plan.pulled, len(plan.puts) + len(plan.deletes)))
        done.texts.update(plan.texts)  # for the last commit, which merges with everything read
        pause_point("sync-after-streamed-commit")  # crash tests kill -9 here: part of a join committed

    return Stream(state, commit)


def _commit_in_parts(vault: UnlockedVault, state: SyncState, clock: Clock, pulled: Pulled, changed: list[LocalRef],
                     deleted: list[str], cancel: threading.Event | None, push: Uploader,
                     streamed: _Committed) -> _Committed:
    """Commit the pulled revisions and this device's changes, a bundle's worth of changes at a
    time: the first commit holds everything pulled, the deletions and the changes of the records
    the pulled revisions touch, and cancelling before it changes nothing; each later one is an
    ordinary sync of only local changes (a sync stopped between two leaves the rest for the next
    one). Each commit's bundles go to the uploader at once; only counts are kept of each part.
    The first also tries again to merge every record with edits made apart (a live revision
    among its kept conflicts): those a streamed pull committed without merging (with the texts
    it pulled for them, `streamed`), and those an earlier one left so when it stopped part-way
    (a damaged object, ctrl+c, a local edit that made the sync start over), which the
    revisions pulled now may not touch. A merge that failed before fails again: the same
    texts, or fewer."""
    unmerged = {record_id for record_id, lost in state.kept.items() if any(text is not None for text in lost.values())}
    touched = {record_id for bundle in pulled.bundles for record_id, _rev, _payload in bundle.revs}
    touched |= unmerged
    first = [ref for ref in changed if ref.record_id in touched]
    rest = list(cut_by_size((ref for ref in changed if ref.record_id not in touched),
                            lambda ref: ref.size + 128, BUNDLE_BYTES))
    parts = [first + rest[0], *rest[1:]] if rest else [first]
    done = _Committed(policy.Outcome({}))
    for number, part in enumerate(parts):
        if number and ((cancel is not None and cancel.is_set()) or push.failed):
            done.whole = False  # what was committed is uploaded; the rest is for the next sync
            return done
        opened = vault.sync_opened(part)
        plan, rules = _merge_and_commit(vault, state, clock, pulled if number == 0 else Pulled(), opened,
                                        deleted if number == 0 else [], cancel if number == 0 else None,
                                        also=unmerged if number == 0 else (),
                                        texts=streamed.texts if number == 0 else None)
        if number == 0:
            pause_point("sync-after-commit")  # committed here, nothing uploaded yet
            done.pulled, done.rules = plan.pulled, rules
        done.outgoing += len(plan.outgoing)
        done.written += len(plan.puts) + len(plan.deletes)
        del plan, opened
        for seq in sorted(state.outbox):  # an interrupted sync's bundles first, then this commit's
            push.send(seq, state.outbox.pop(seq))
            state.pushed.append(seq)
    return done


@dataclass
class _Committed:
    rules: policy.Outcome  # the first part's (the only one that pulled, unless the pull was streamed)
    outgoing: int = 0
    pulled: int = 0
    written: int = 0  # records written or deleted in the vault
    whole: bool = True  # every part was committed
    texts: dict[str, str] = field(default_factory=dict)  # what a streamed pull read of records it did not merge

    def add(self, other: _Committed) -> None:
        """Count in what another commit of the same sync did (a streamed pull's)."""
        self.outgoing += other.outgoing
        self.pulled += other.pulled
        self.written += other.written
        self.rules.pulled += other.rules.pulled
        self.rules.concurrent += other.rules.concurrent


def _merge_and_commit(vault: UnlockedVault, state: SyncState, clock: Clock, pulled: Pulled,
                      changed: list[LocalChange], deleted: list[str], cancel: threading.Event | None, *,
                      merge: bool = True, also: Iterable[str] = (), texts: dict[str, str] | None = None
                      ) -> tuple[Plan, policy.Outcome]:
    """Make this device's revisions, merge the pulled ones and the vault's policy, seal the new
    bundles and commit it all (`merge`, `also`, `texts`: merge.merge_pulled)."""
    keys = vault.keys
    plan = Plan()
    record_local(state, clock, deleted, changed, plan, vault.change_counter() if deleted else 0)
    merge_pulled(state, clock, pulled.bundles, vault.read, plan, vault.read, merge=merge, also=also, texts=texts)
    settings = vault.settings()
    rules = policy.merge(settings, clock, state.device, [c for bundle in pulled.bundles for c in bundle.policy])
    for bundle in pulled.bundles:
        if bundle.position:
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
    state.last_sync = now()
    if cancel is not None and cancel.is_set():
        raise CancelledError(msg("Sync cancelled; nothing was changed here."))
    pause_point("sync-before-commit")  # crash tests kill -9 here (testhooks): pulled, verified, nothing written
    if rules.settings != settings:  # pulled policy first: a sync that then fails pulls it again, the same
        vault.set_settings(rules.settings)
    vault.apply_synced(state.change(puts=plan.puts, deletes=plan.deletes, expected=plan.expected))
    if rules.outgoing:  # in the committed bundle now: what this device knows as the last change
        vault.set_settings(policy.recorded(vault.settings(), rules.outgoing))
    return plan, rules


def _parts(outgoing: list[tuple[str, Rev, str | None]]) -> Iterator[list[tuple[str, Rev, str | None]]]:
    """The revisions in order, cut into bundles of about BUNDLE_BYTES of content each: a first
    push of a large vault is several ordinary objects, not one that every store must take whole."""
    return cut_by_size(outgoing, lambda item: len(item[2] or "") + 128, BUNDLE_BYTES)


def _local(vault: UnlockedVault) -> repair.Local:
    """What the vault gives a snapshot built or rebuilt here (repair.py)."""
    return repair.Local(lambda refs: {(change.record_id, change.revision): change.payload
                                      for change in vault.sync_opened(refs)}, lambda: policy.known(vault.settings()))


def upload(vault: UnlockedVault, target: Target, state: SyncState, pulled: Pulled,
           compact_after: int = compaction.COMPACT_AFTER, hold_days: float = compaction.HOLD_DAYS,
           push: Uploader | None = None, device_name: str = "") -> tuple[int, int]:
    """Upload the bundles committed but not yet sent (the uploader may have sent some already),
    and a snapshot when one is due, then the head; log the push; empty the outbox; then delete
    what compaction allows. The egress entry is written before anything leaves."""
    keys = vault.keys
    push = push or Uploader(vault, target, state.device)
    for seq in sorted(state.outbox):
        push.send(seq, state.outbox.pop(seq))
        state.pushed.append(seq)
    push.finish()
    extra = compaction.prepare(target, keys, state, pulled, compact_after, device_name, _local(vault))
    sent = push.sent
    if sent or extra.publish or extra.parts:
        head = extra.head(state, now()).sealed(keys.sync_aead("head"), keys.vault_id)
        push.announce(len(extra.parts) + 1, sum(len(p) for p in extra.parts) + len(head))
        for k, part in enumerate(extra.parts):
            target.put(snapshot_name(state.device, extra.snap, k), part)
        pause_point("sync-before-head")  # bundles (and a snapshot) uploaded, the head not yet
        target.put(head_name(state.device), head)
        push.done()
    if sent:
        vault.apply_synced(state.change(uploaded=sent))
    pause_point("sync-before-prune")  # the head names the new snapshot; nothing deleted yet
    compaction.prune(target, keys, state, pulled, extra, sent, hold_days)
    return push.objects, push.bytes
