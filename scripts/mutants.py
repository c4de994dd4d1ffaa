#!/usr/bin/env python3
"""Plant known bugs one at a time and check that the test suite notices each.

Each mutant is a small, realistic edit to the product code (a text replacement that must match
exactly once). For every mutant the script copies the repository to a temporary folder, applies
the edit there (your working tree is never touched), runs the tests that guard that behaviour
and reports:

    killed    the tests failed: the bug would be caught
    SURVIVED  the tests passed with the bug in place: a hole in the suite
    STALE     the code it edits has moved (the replacement text no longer matches once): update
              the mutant
    ERROR     pytest could not run (collection error, timeout, …)

First it runs the same tests on an unmutated copy; they must pass, or no verdict means anything.
Exit status 0 only when every selected mutant is killed.

Usage:
    .venv/bin/python scripts/mutants.py            # every mutant (~10-17 min on 2 shared cores)
    .venv/bin/python scripts/mutants.py --list     # ids and descriptions
    .venv/bin/python scripts/mutants.py --check    # does every edit still apply? (scripts/test runs it)
    .venv/bin/python scripts/mutants.py rrf-k1-search bm25-weights-equal   # a subset
    .venv/bin/python scripts/mutants.py --no-baseline rrf-k1-search        # skip the unmutated run

The copy is laid out as <tmp>/repo with <tmp>/shared linking to the real ../shared and
tests/.models linking to the real model cache, so tests find their inputs exactly as in the
repository; PYTHONPATH points at the copy, so CLI subprocesses import the mutated code too.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class Mutant:
    id: str
    description: str
    file: str  # relative to the repository root
    edits: tuple[tuple[str, str], ...]  # (exact text, replacement); each must occur exactly once
    tests: tuple[str, ...]  # pytest paths or node ids


KDF_TESTS = ("tests/unit/test_kdf_defaults.py", "tests/integration/test_cli_real_kdf.py")
LEXICAL_TESTS = ("tests/unit/test_bm25_weights.py", "tests/unit/test_lexical.py")
MCP_TOOLS = "tests/integration/test_mcp_tools.py"
ANSWER_TESTS = "tests/unit/test_answer.py"
RULES_TESTS = "tests/unit/test_extractive_rules.py"
REMOTE_TESTS = "tests/integration/test_remote_services.py"
LOCK_CUT_TESTS = "tests/integration/test_lock_cuts_model_call.py"
TIMER_TESTS = "tests/integration/test_daemon_timers.py"
LIFECYCLE_TESTS = "tests/integration/test_daemon_lifecycle.py"
DAEMON_BURST = "tests/integration/test_daemon_burst.py"
DAEMON_LIMITS = "tests/integration/test_daemon_limits.py"
QUICK_CALL = "tests/integration/test_cli_quick_call.py"
DAEMON_FILES = "tests/integration/test_daemon_files.py"

MUTANTS: tuple[Mutant, ...] = (
    # ---- the first planted bugs: the weak spots a review of the suite named
    Mutant("kdf-cheap-creation", "creation_params() returns 8 KiB / 1 iteration / 1 lane",
           "memories_tui/vault/crypto.py",
           (("    params = KdfParams()\n    params.check_creatable()\n    return params\n",
             "    return KdfParams(memory_kib=8, iterations=1, lanes=1)\n"),),
           KDF_TESTS),
    Mutant("kdf-no-iteration-floor", "the creation floor checks memory only, not iterations",
           "memories_tui/vault/format.py",
           (("if self.memory_kib < MIN_MEMORY_KIB or self.iterations < MIN_ITERATIONS:",
             "if self.memory_kib < MIN_MEMORY_KIB:"),),
           KDF_TESTS),
    Mutant("kdf-default-one-iteration", "the default Argon2id iteration count is 1",
           "memories_tui/vault/format.py",
           (("    iterations: int = 3\n", "    iterations: int = 1\n"),),
           KDF_TESTS),
    Mutant("rrf-k1-search", "hybrid search fuses with k = 1 instead of 60",
           "memories_tui/retrieval/search.py",
           (("reciprocal_rank_fusion([lexical_rank, vector_rank], k=60)",
             "reciprocal_rank_fusion([lexical_rank, vector_rank], k=1)"),),
           ("tests/unit/test_search_fusion.py",)),
    Mutant("rrf-k1-default", "reciprocal_rank_fusion defaults to k = 1",
           "memories_tui/retrieval/fusion.py",
           (("k: int = 60", "k: int = 1"),),
           ("tests/unit/test_search_fusion.py", "tests/unit/test_fusion_rerank.py")),
    Mutant("score-fusion-weights-swapped", "score fusion weighs BM25 0.4 and cosine 0.6",
           "memories_tui/retrieval/fusion.py",
           (("BM25_WEIGHT = 0.6", "BM25_WEIGHT = 0.4"),),
           ("tests/unit/test_search_fusion.py", "tests/unit/test_fusion_rerank.py")),
    Mutant("fusion-setting-ignored", "the engine ignores [rag] fusion (always score fusion)",
           "memories_tui/engine/searching.py",
           (("                          fusion=rag.fusion,\n", ""),),
           ("tests/integration/test_semantic.py",)),
    Mutant("bm25-weights-equal", "BM25 column weights 1/1/1 instead of 5/1/2",
           "memories_tui/index/weights.py",
           (("WEIGHTS = (5.0, 1.0, 2.0)", "WEIGHTS = (1.0, 1.0, 1.0)"),),
           LEXICAL_TESTS),
    Mutant("bm25-meta-weight-zero", "the metadata column has BM25 weight 0",
           "memories_tui/index/weights.py",
           (("WEIGHTS = (5.0, 1.0, 2.0)", "WEIGHTS = (5.0, 1.0, 0.0)"),),
           LEXICAL_TESTS),
    Mutant("bm25-phrase-unweighted", "phrase queries (FTS5 path) rank with bm25() unweighted",
           "memories_tui/index/lexical.py",
           (("bm25(phr, {w})", "bm25(phr)"),),
           ("tests/unit/test_bm25_weights.py",)),
    Mutant("install-size-only-check", "an existing model file is reused when its size matches",
           "memories_tui/models/install_base.py",
           (("if size != mf.bytes or digest != mf.sha256:", "if size != mf.bytes:"),),
           ("tests/integration/test_install.py",)),
    Mutant("install-206-wrong-start", "a 206 whose Content-Range start differs from the request is appended",
           "memories_tui/models/install.py",
           (("            if start != offset:\n"
             "                part.unlink(missing_ok=True)\n"
             "                raise _Transient(f\"the server resumed at byte {start} instead of {offset}\")\n",
             ""),),
           ("tests/integration/test_install.py",)),
    Mutant("record-ad-no-revision", "the record AEAD associated data leaves out the revision",
           "memories_tui/vault/integrity.py",
           (('_kind_part(kind),\n                     _PACK(len(number)), number))', '_kind_part(kind)))'),),
           ("tests/integration/test_record_binding.py",)),
    Mutant("record-ad-no-kind", "the record AEAD associated data leaves out kind and sensitivity",
           "memories_tui/vault/integrity.py",
           (('ident, _kind_part(kind),\n', 'ident,\n'),),
           ("tests/integration/test_record_binding.py",)),
    # (Deleting the PRAGMA line instead is an equivalent mutant wherever SQLite is built with
    # SQLITE_SECURE_DELETE, as on this project's machines: the default is then already on.)
    Mutant("index-no-secure-delete", "the lexical index database runs with secure_delete off",
           "memories_tui/index/lexical.py",
           (('    conn.execute("PRAGMA secure_delete=ON")', '    conn.execute("PRAGMA secure_delete=OFF")'),),
           ("tests/unit/test_lexical.py",)),
    Mutant("tui-ignores-lock-epoch", "TUI screens accept worker results from before a lock",
           "memories_tui/tui/screens/base.py",
           (("        return epoch == self.engine.lock_epoch\n", "        return True\n"),
            ("        return epoch == self.engine.lock_epoch and self.engine.is_unlocked(self.vault_id)\n",
             "        return self.engine.is_unlocked(self.vault_id)\n")),
           ("tests/tui/test_app.py::test_late_search_results_after_lock_are_dropped",)),
    # ---- a few more realistic ones
    Mutant("fts-terms-unquoted", "query terms reach FTS5 MATCH without quoting",
           "memories_tui/index/lexical.py",
           ((""" return '"' + term.replace('"', '""') + '"'""", " return term"),),
           ("tests/unit/test_lexical.py", "tests/integration/test_cli_search.py")),
    Mutant("cards-only-ignored", "--cards-only does not filter the lexical search",
           "memories_tui/index/lexical.py",
           (('card = " AND (SELECT card FROM docs WHERE key = phr.rowid) = 1" if cards_only else ""',
             'card = ""'),
            ("ranked = self._bm25.top_k(terms, match_mode, limit, cards_only, per_group,",
             "ranked = self._bm25.top_k(terms, match_mode, limit, False, per_group,")),
           ("tests/integration/test_cli_search.py",)),
    Mutant("excluded-kinds-searchable", "private/credential/asset records are treated as searchable",
           "memories_tui/vault/records.py",
           (("    return kind in GENERAL_KINDS\n", "    return True\n"),),
           ("tests/integration/test_index_cache.py", "tests/integration/test_cli.py")),
    Mutant("retry-after-ignored", "a server's Retry-After header is ignored (plain backoff instead)",
           "memories_tui/models/http.py",
           (("    return min(float(int(value)), MAX_RETRY_AFTER_SECONDS)\n", "    return None\n"),),
           ("tests/unit/test_http.py",)),
    Mutant("cards-only-ignored-phrase", "--cards-only does not filter phrase queries (the FTS5 path)",
           "memories_tui/index/lexical.py",
           (('card = " AND (SELECT card FROM docs WHERE key = phr.rowid) = 1" if cards_only else ""',
             'card = ""'),),
           ("tests/integration/test_cli_search.py",)),
    Mutant("write-trusts-the-file", "a write takes the change counter as it is, without verifying the manifest",
           "memories_tui/vault/store.py",
           (("                    counter = self._check_current(conn)\n                    assert",
             "                    counter = conn.execute(\"SELECT change_counter FROM state\").fetchone()[0]\n"
             "                    assert"),),
           ("tests/integration/test_write_verify.py",)),
    Mutant("sync-one-huge-bundle", "a large push goes up as one bundle, whatever its size",
           "memories_tui/sync/run.py",
           (("lambda item: len(item[2] or \"\") + 128, BUNDLE_BYTES)", "lambda item: len(item[2] or \"\") + 128, 1 << 62)"),),
           ("tests/integration/test_sync_folder.py::test_a_large_push_goes_up_as_several_chained_bundles_and_joins_whole",)),
    Mutant("sync-stopped-push-forgets-rest", "a push stopped between two parts counts the records not committed "
           "as synced", "memories_tui/sync/run.py",
           (("        vault.touched.synced(mark, ok=done.whole)", "        vault.touched.synced(mark, ok=True)"),),
           ("tests/integration/test_sync_stream.py::"
            "test_ctrl_c_during_a_long_first_push_sends_what_was_committed_and_the_next_sync_the_rest",)),
    Mutant("sync-compact-deletes-unread", "compaction deletes bundles a known device has not read yet",
           "memories_tui/sync/compaction.py", (("        limit = got\n", "        pass\n"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_nothing_a_known_device_still_needs_is_deleted_and_it_catches_up_via_the_snapshot",)),
    Mutant("sync-compact-forgotten-holds-back", "a forgotten device still holds back the deleting of bundles",
           "memories_tui/sync/compaction.py", (("    mark = target.get(forgotten_name(head.device)) if forgotten_name(head.device) in listing else None\n",
                                                 "    mark = None\n"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_forget_releases_compaction_and_a_forgotten_device_comes_back_through_the_snapshot",)),
    Mutant("sync-rename-waits-for-a-change", "a renamed device's head keeps its old name until it has changes to push",
           "memories_tui/sync/compaction.py", (("    extra.publish |= own is not None and own.name != name",
                                                 "    extra.publish |= False"),),
           ("tests/integration/test_sync_cli.py::"
            "test_devices_are_listed_by_the_name_they_give_themselves_and_can_be_forgotten_by_it",)),
    Mutant("sync-forget-by-first-name", "forget by a name two devices give picks one of them",
           "memories_tui/engine/sync_ops.py", (("        if len(matches) > 1:\n", "        if False:\n"),),
           ("tests/integration/test_sync_cli.py::"
            "test_devices_are_listed_by_the_name_they_give_themselves_and_can_be_forgotten_by_it",)),
    Mutant("sync-lone-surrogate-opens", "a sealed object holding half a surrogate pair opens (and fails later, unhandled)",
           "memories_tui/sync/sealing.py", (("        if _SURROGATE_ESCAPE.search(plain):", "        if False:"),),
           ("tests/unit/test_sync_sealing.py",)),
    Mutant("sync-add-stale-join-wrap", "sync add through the daemon wraps the key under the passphrase it was unlocked with",
           "memories_tui/sync/join.py",
           (("    if ready is not None and (ready.salt, ready.kdf) == (header.salt, header.kdf):",
             "    if ready is not None:"),),
           ("tests/integration/test_sync_daemon_verbs.py::"
            "test_sync_add_is_served_without_a_passphrase_and_asks_one_after_a_passwd",)),
    Mutant("s3-full-said-as-refused", "an S3 store out of room is reported as an unexplained answer",
           "memories_tui/sync/s3.py", (("            if status >= 500:", "            if False:"),),
           ("tests/integration/test_sync_full_s3.py",)),
    Mutant("sync-add-empty-target-after-sync", "sync add takes an empty target for a vault whose changes are in another",
           "memories_tui/engine/sync_ops.py", (("        if record is None and _has_synced(vault):", "        if False:"),),
           ("tests/integration/test_sync_move.py::"
            "test_a_copy_of_the_target_at_a_new_place_is_taken_and_an_empty_one_refused",)),
    Mutant("sync-status-counts-writes-while-held", "sync status counts writes, not records, while the daemon holds the vault",
           "memories_tui/cli/sync_verbs.py",
           (("    vault_id = ctx.held_by_daemon(entry.vault_id)\n", "    vault_id = None\n"),),
           ("tests/integration/test_sync_ux.py::"
            "test_pending_counts_records_where_the_vault_is_open_and_writes_elsewhere",)),
    Mutant("tui-sync-failure-unsaid", "the TUI says nothing when the background sync starts failing",
           "memories_tui/tui/sync_notice.py", (("        if self._error:\n", "        if False:\n"),),
           ("tests/tui/test_sync_notice.py",)),
    Mutant("tui-sync-now-unbound", "s on the status screen does nothing",
           "memories_tui/tui/screens/status.py",
           (("        start_sync(self.memories, self.vault_id, self.engine.vault_name(self.vault_id), "
             "self.action_refresh_status)\n", "        pass\n"),),
           ("tests/tui/test_sync_notice.py::test_s_on_the_status_screen_syncs_now_and_says_how_it_went",)),
    Mutant("webdav-busy-not-retried", "a WebDAV request answered 503 by a busy proxy stops the sync",
           "memories_tui/sync/webdav.py", (("_BUSY = (502, 503, 504)", "_BUSY = ()"),),
           ("tests/integration/test_sync_webdav.py::"
            "test_a_server_that_answers_503_now_and_then_is_tried_again_within_the_sync",)),
    Mutant("sync-pull-gone-not-relisted", "a pull that meets another device's compaction calls the target damaged",
           "memories_tui/sync/chains.py", (("_PULLS = 3 ", "_PULLS = 1 "),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_join_that_meets_a_compaction_deleting_what_it_listed_starts_over_and_gets_everything",)),
    Mutant("sync-damaged-snapshot-not-rebuilt", "a device whose own snapshot the target damaged never compacts again",
           "memories_tui/sync/compaction.py",
           (("fixed = repair.rebuilt(state, extra.adopted, local, pulled.heads) if local is not None else None", "fixed = None"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_damaged_own_snapshot_is_rebuilt_from_the_vault_and_new_devices_join_again",)),
    Mutant("sync-damaged-bundle-stops-reader", "a reader behind stops at a damaged bundle its snapshot covers",
           "memories_tui/sync/chains.py", (("            if number > head.snap:\n", "            if True:\n"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_reader_behind_reads_a_damaged_bundle_from_the_snapshot_that_covers_it",)),
    Mutant("sync-snapshot-drops-policy", "a snapshot leaves out the policy changes of the bundles it replaces",
           "memories_tui/sync/snapshots.py", (("**({\"policy\": changes} if changes and not k else {})", "**{}"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_policy_change_reaches_devices_that_read_the_snapshot_and_a_rebuilt_one",)),
    Mutant("sync-snapshot-forgets-known-policy", "a snapshot leaves out the policy changes the vault knows of its devices",
           "memories_tui/sync/repair.py", (("if change.device in {state.device, *carried}]", "if False]"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_policy_change_reaches_devices_that_read_the_snapshot_and_a_rebuilt_one",)),
    Mutant("sync-policy-old-news-reported", "a policy change arriving after the one that replaced it is called a conflict",
           "memories_tui/sync/policy.py",
           (("            continue  # known, or replaced by a change known here", "            pass  # known, or replaced by a change known here"),),
           ("tests/unit/test_sync_policy_merge.py::"
            "test_a_chain_of_changes_arriving_in_any_order_is_no_conflict_and_the_last_wins",)),
    Mutant("sync-refused-leaves-own-snapshot-damaged", "a refused sync leaves its device's damaged snapshot as it is",
           "memories_tui/sync/run.py",
           (("        repair.restore_own(target, keys, state, _local(vault), Uploader(vault, target, state.device))\n",
             "        pass\n"),),
           ("tests/integration/test_sync_compaction.py::"
            "test_a_refused_sync_still_rebuilds_the_own_snapshot_it_finds_damaged_and_changes_nothing_here",)),
    Mutant("sync-rebuild-keeps-carrying-a-returned-device", "a rebuild keeps carrying a device whose own snapshot reaches as far",
           "memories_tui/sync/repair.py",
           (("        elif device in heads and heads[device].snap >= upto:", "        elif False:"),),
           ("tests/unit/test_sync_repair.py::"
            "test_a_carried_device_that_came_back_with_a_snapshot_of_its_own_is_carried_no_more",)),
    Mutant("sync-rebuild-gives-up-on-a-device-that-wrote-again", "a rebuild gives up on a carried device that wrote again",
           "memories_tui/sync/repair.py",
           (("        elif seen is not None and seen[0] > upto:", "        elif False:"),),
           ("tests/unit/test_sync_repair.py::"
            "test_a_carried_device_that_wrote_again_is_carried_as_far_as_this_device_read_it",)),
    Mutant("sync-revision-number-reused", "a record deleted after an unsynced edit comes back under a number it had",
           "memories_tui/sync/merge.py", (("            doc.high = max(doc.high, doc.local, counter)", "            doc.high = max(doc.high, doc.local)"),),
           ("tests/integration/test_sync_revision_numbers.py::"
            "test_a_record_brought_back_after_an_unsynced_edit_and_a_delete_gets_a_fresh_revision",)),
    Mutant("sync-carried-chain-drops-its-own-carry", "a device read from its carrier's snapshot stops carrying those it carried",
           "memories_tui/sync/compaction.py",
           (("    if found is not None and found[1] > head.snap and found[0] != device:",
             "    if found is not None and found[1] >= head.snap and found[0] != device:"),
            ("        _still_carried(out, aead, keys, head, target)\n", "")),
           ("tests/integration/test_sync_gc.py::test_two_devices_that_forgot_each_other_keep_carrying_each_other",)),
    Mutant("sync-stream-settles-a-record-without-text", "a streamed join commits a revision whose text is in a later part",
           "memories_tui/sync/stream.py", (("    waiting = _open_records(bundles, state)\n", "    waiting: set[str] = set()\n"),),
           ("tests/integration/test_sync_join_stream.py::test_a_streamed_join_ends_where_a_join_that_holds_everything_ends",
            "tests/unit/test_sync_stream_split.py")),
    Mutant("sync-stream-position-passes-held", "a streamed pull moves a device's position past its revisions that wait",
           "memories_tui/sync/stream.py",
           (("            (held if bundle.device in behind else ready).append(bundle)", "            ready.append(bundle)"),),
           ("tests/unit/test_sync_stream_split.py",)),
    Mutant("sync-stream-merges-on-part-of-the-view", "a streamed join merges two edits three-way before it has read "
           "that another device deleted one of them: the note changes everywhere to text nobody wrote",
           "memories_tui/sync/run.py", (("[], [], cancel, merge=False)", "[], [], cancel)"),),
           ("tests/integration/test_sync_join_stream.py::"
            "test_a_streamed_join_does_not_merge_an_edit_that_a_later_device_deleted",)),
    Mutant("sync-stream-leaves-edits-unmerged", "a streamed join leaves two edits of different lines as a conflict "
           "that a join holding everything merges, and so does the sync after a streamed join stopped part-way",
           "memories_tui/sync/run.py", (("    touched |= unmerged\n", ""), ("also=unmerged if number == 0 else ()", "also=()")),
           ("tests/integration/test_sync_join_stream.py::"
            "test_a_streamed_join_merges_edits_made_apart_once_it_has_read_everything",
            "tests/integration/test_sync_join_stream.py::"
            "test_edits_left_unmerged_by_a_join_stopped_part_way_merge_at_the_next_sync")),
    Mutant("sync-stream-drops-ancestor-texts", "a streamed commit that read the ancestor with both edits forgets its "
           "text: the last commit cannot merge them",
           "memories_tui/sync/run.py", (("texts=streamed.texts if number == 0 else None", "texts=None"),),
           ("tests/integration/test_sync_join_stream.py::"
            "test_a_streamed_join_merges_edits_made_apart_once_it_has_read_everything",)),
    Mutant("sync-collect-drops-a-chain-carried-by-a-returner", "a device deletes the objects of a forgotten device "
           "that came back and now carries another forgotten one: that chain is carried by nobody",
           "memories_tui/sync/compaction.py",
           (("        if head is not None and _carries_beyond(head, carried, state.device):\n",
             "        if False:\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_device_that_came_back_and_carries_another_is_not_deleted_with_that_chain",)),
    Mutant("sync-returner-never-carried-again", "a forgotten device that came back and carries another forgotten one "
           "is never carried again with that chain: its snapshot and head stay in the target for good",
           "memories_tui/sync/compaction.py",
           (("        again = device in mine and _carries_beyond(head, mine, state.device)\n",
             "        again = False\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_device_that_came_back_and_carries_another_is_not_deleted_with_that_chain",)),
    Mutant("sync-stop-waits-for-a-held-upload", "quitting the TUI (or stopping the daemon) waits 30 s for a "
           "background sync whose upload the server holds back",
           "memories_tui/engine/sync_watch.py", (("STOP_WAIT_SECONDS = 2.0\n", "STOP_WAIT_SECONDS = 30.0\n"),),
           ("tests/tui/test_sync_slow_target_quit.py",)),
    Mutant("sync-merge-device-stat-conflicts", "the same change of a source file, recorded on two devices with "
           "their own paths and times, is a conflict",
           "memories_tui/sync/threeway.py",
           (('_EACH_DEVICES_OWN = frozenset({"source_path", "source_size", "source_mtime_ns", "source_gone"})',
             "_EACH_DEVICES_OWN: frozenset[str] = frozenset()"),),
           ("tests/unit/test_sync_metadata_merge.py", "tests/integration/test_sync_sources.py")),
    Mutant("source-add-twice", "a folder another device's source keeps in step is added as a second source "
           "(every note twice)", "memories_tui/engine/source_ops.py",
           (("            if found is None or take_over:\n", "            if True:\n"),),
           ("tests/integration/test_sync_sources.py",)),
    Mutant("source-twins-kept", "a file two devices took in at once stays two cards for good",
           "memories_tui/engine/source_sync.py", (("        self._settle_twins()\n", ""),),
           ("tests/integration/test_sync_sources.py",)),
    Mutant("sync-merge-tags-conflict", "tags changed on two devices at once are a conflict instead of merging",
           "memories_tui/sync/threeway.py",
           (('            elif value is _CONFLICT and key == "tags" and all(isinstance(d.get(key), list) for d in docs):\n',
             '            elif False:\n'),),
           ("tests/unit/test_sync_metadata_merge.py", "tests/integration/test_sync_merge.py")),
    Mutant("record-update-ignores-expected", "an edit saved over a change made since it was opened (a sync's) drops "
           "that change without a word", "memories_tui/vault/store.py",
           (("                change.check_at(old.revision)\n", ""),),
           ("tests/integration/test_cli.py::test_memory_lifecycle_and_revisions",
            "tests/tui/test_editing.py::test_saving_over_a_change_made_meanwhile_merges_instead_of_dropping_it")),
    Mutant("sync-kept-deletion-by-arrival", "a deletion an edit beat is reported only where it arrived after "
           "that edit: devices list different conflicts", "memories_tui/sync/merge.py",
           (("            elif rev.deleted:  # a deletion needs no text: known from the tree, whenever it came\n"
             "                kept.setdefault(rev.rev_id, None)  # (one that lost to a deletion first is dropped below, "
             "then)\n", ""),),
           ("tests/unit/test_sync_kept_deletions.py",)),
    Mutant("sync-join-holds-everything", "a join verifies the whole vault before committing any of it (all of it in memory)",
           "memories_tui/sync/run.py", (("if _idle(vault, state) else None", "if False else None"),),
           ("tests/integration/test_sync_join_stream.py::test_a_streamed_join_ends_where_a_join_that_holds_everything_ends",)),
    Mutant("sync-stream-keeps-silently", "a streamed pull that stops says nothing was changed, though it kept what it verified",
           "memories_tui/sync/run.py", (("            raise _kept(exc, streamed.pulled, held_nothing) from None\n", "            raise\n"),),
           ("tests/integration/test_sync_join_stream.py",)),
    Mutant("sync-devices-lists-stray-folders", "`sync devices` takes any folder with a head file for a device",
           "memories_tui/engine/sync_ops.py",
           (("        devices = [d for d in device_ids(names) if head_name(d) in names]",
             "        devices = sorted({n.split('/')[1] for n in names if n.endswith('/head')})"),),
           ("tests/integration/test_sync_folder.py::test_stray_files_a_sync_tool_leaves_in_the_target_are_not_devices",)),
    Mutant("sync-pull-fetches-one-at-a-time", "a pull fetches each object after the one before (a round trip each)",
           "memories_tui/sync/ahead.py", (("AHEAD = 4  # requests in flight at once", "AHEAD = 1  # requests in flight at once"),),
           ("tests/unit/test_sync_ahead.py", "tests/integration/test_sync_fetch_ahead.py")),
    Mutant("sync-pull-asks-no-bundle-ahead", "a pull asks for the heads at once but each bundle only when it reads it",
           "memories_tui/sync/chains.py",
           (("    ahead.want((bundle_name(head.device, n) for n in range(first, head.seq + 1)), depth=LARGE_AHEAD)",
             "    pass"),),
           ("tests/integration/test_sync_fetch_ahead.py",)),
    Mutant("sync-pull-fetches-large-bundles-ahead", "a pull fetches megabyte bundles ahead too (each one waiting held in memory)",
           "memories_tui/sync/ahead.py",
           (("        self._depth = LARGE_AHEAD if blob is not None and len(blob) >= LARGE else AHEAD",
             "        self._depth = AHEAD"),),
           ("tests/unit/test_sync_ahead.py",)),
    Mutant("sync-reader-holds-everything", "a device with nothing to send holds its whole pull until it is verified",
           "memories_tui/sync/run.py", (("    return not (state.outbox or state.legacy or state.resolving) and not "
                                         "vault.sync_read(", "    return False and not vault.sync_read("),),
           ("tests/integration/test_sync_idle_stream.py",)),
    Mutant("sync-streams-over-local-changes", "a device with a change of its own commits a pull before verifying it all",
           "memories_tui/sync/run.py", (("        lambda conn, _keys: has_local_changes(conn, vault.touched))",
                                         "        lambda conn, _keys: False)"),),
           ("tests/integration/test_sync_idle_stream.py",)),
    Mutant("sync-reader-said-to-hold-nothing", "a reader's pull stopped part-way says the vault held nothing before",
           "memories_tui/sync/run.py", (("    if held_nothing:\n        return type(exc)", "    if True:\n        return type(exc)"),),
           ("tests/integration/test_sync_idle_stream.py",)),
    Mutant("sync-idle-check-forgets-what-it-found", "the check for local changes found some, and the sync then "
           "compares none of them (a fresh process's edit is not sent)",
           "memories_tui/vault/sync_rows.py", (("        touched.unknown()  # found here: local_changes compares every "
                                                "record again", "        pass"),),
           ("tests/integration/test_sync_cli.py",)),
    Mutant("sync-reader-cancel-said-to-hold-nothing", "a reader's pull cancelled part-way says the vault held nothing before",
           "memories_tui/sync/run.py", (("    if isinstance(exc, CancelledError):\n        if held_nothing:",
                                         "    if isinstance(exc, CancelledError):\n        if True:"),),
           ("tests/integration/test_sync_idle_stream.py::test_ctrl_c_during_a_readers_pull_keeps_what_it_received_and_says_so",)),
    Mutant("sync-snapshot-parts-one-after-another", "a join reads a snapshot's parts one request after the other",
           "memories_tui/sync/snapshots.py",
           (("                    upcoming([snapshot_name(device, upto, n) for n in range(1, total)])",
             "                    pass"),),
           ("tests/integration/test_sync_fetch_ahead.py::test_a_join_fetches_the_parts_of_a_snapshot_ahead",)),
    Mutant("sync-folder-reads-any-kind-of-file", "a pipe in the sync folder is opened and read (it would block "
           "for ever without O_NONBLOCK; with it, it reads as an empty object)",
           "memories_tui/sync/folder.py", (("            if not stat.S_ISREG(info.st_mode):", "            if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_head_that_is_not_a_regular_file_is_refused_at_once_and_changes_nothing",)),
    Mutant("sync-webdav-lists-folders-without-end", "a WebDAV listing is followed into folders however deep",
           "memories_tui/sync/webdav.py", (('elif rel.count("/") < 2 and rel + "/" not in visited:',
                                            'elif rel + "/" not in visited:'),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_listing_of_folders_without_end_or_in_a_ring_ends",)),
    Mutant("sync-webdav-lists-folders-in-a-ring", "a WebDAV listing that names a folder already listed lists it again",
           "memories_tui/sync/webdav.py", (('elif rel.count("/") < 2 and rel + "/" not in visited:',
                                            'elif rel.count("/") < 2:'),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_listing_of_folders_without_end_or_in_a_ring_ends",)),
    Mutant("sync-s3-lists-without-end", "an S3 listing that always says there is more is followed for ever",
           "memories_tui/sync/s3.py", (("                if len(out) > bounds.MAX_LISTED_NAMES:", "                if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_listing_that_says_there_is_more_for_ever_is_refused",)),
    Mutant("sync-folder-writes-through-a-linked-folder", "a device's folder in the sync folder that is a link is "
           "written, read and deleted through (outside the target)",
           "memories_tui/sync/folder.py", (('inner = os.open(part, os.O_RDONLY | _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)',
                                            "inner = os.open(part, os.O_RDONLY | _DIR_FLAGS, dir_fd=fd)"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_device_folder_that_is_a_link_is_neither_written_nor_read_through",)),
    Mutant("sync-read-waits-for-a-hung-target", "a sync reads the target in its own thread: ctrl+c and a lock wait "
           "until the server answers",
           "memories_tui/sync/watched.py", (("        blob = wait_for(lambda: self.target.get(name, limit), where=self.description, "
                                             "name=name, cancel=self._cancel,\n                        check=self._check)",
                                             "        blob = self.target.get(name, limit)"),),
           ("tests/integration/test_sync_slow_target.py::test_a_lock_ends_a_sync_whose_server_stopped_answering_at_once",
            "tests/integration/test_sync_slow_target.py::test_ctrl_c_ends_a_cli_sync_whose_server_stopped_answering_at_once")),
    Mutant("sync-second-ctrl-c-waits", "a second ctrl+c in `memories sync` still waits for an upload the server "
           "holds back (minutes, the client's timeouts)",
           "memories_tui/cli/sync_verbs.py", (("            if cancel.is_set():\n                raise CancelledError(",
                                               "            if False:\n                raise CancelledError("),),
           ("tests/integration/test_sync_slow_target.py::"
            "test_a_second_ctrl_c_leaves_a_cli_sync_whose_upload_hangs_and_nothing_is_lost",)),
    Mutant("sync-daemon-stop-waits-for-a-hung-read", "`daemon stop` waits out the background sync's grace period "
           "while it waits on a server that stopped answering",
           "memories_tui/engine/sync_watch.py", (("self.engine.background_sync(vault_id, self._stop)",
                                                   "self.engine.background_sync(vault_id)"),),
           ("tests/integration/test_sync_slow_target.py::"
            "test_stopping_the_daemon_ends_its_background_sync_waiting_on_the_server",)),
    Mutant("sync-devices-read-unwatched", "`sync devices` (and forget) read the target directly: a lock does not end "
           "one waiting on a server that stopped answering",
           "memories_tui/engine/sync_ops.py",
           (("        return self._watched(self._open_target(TargetSpec(entry.url, entry.endpoint_url), vault), vault)",
             "        return self._open_target(TargetSpec(entry.url, entry.endpoint_url), vault)"),),
           ("tests/integration/test_sync_slow_target.py::test_a_lock_ends_sync_devices_waiting_on_the_server",)),
    Mutant("tui-sync-now-outlives-the-app", "the TUI's \"sync now\" waiting on a hung server keeps running after the "
           "app ends (its thread holds the process back at exit)",
           "memories_tui/tui/screens/sync_now.py",
           (("        self.cancel = EitherCancel(stopping)\n", "        self.cancel = EitherCancel(threading.Event())\n"),),
           ("tests/tui/test_sync_slow_target_quit.py::test_quitting_ends_a_sync_now_waiting_on_the_server",)),
    Mutant("sync-read-has-no-deadline", "a target that trickles an object a byte at a time holds a sync for ever",
           "memories_tui/sync/waiting.py", (("        if time.monotonic() >= deadline:", "        if False:"),),
           ("tests/integration/test_sync_slow_target.py::test_a_server_that_trickles_an_object_is_given_up_on_with_a_clear_error",)),
    Mutant("sync-lock-not-watched", "a lock does not end a sync waiting for the target",
           "memories_tui/engine/sync_ops.py", (("WatchedTarget(target, vault.keys, progress, cancel, check=lambda: vault.keys)",
                                                "WatchedTarget(target, vault.keys, progress, cancel)"),),
           ("tests/integration/test_sync_slow_target.py::test_a_lock_ends_a_sync_whose_server_stopped_answering_at_once",)),
    Mutant("sync-join-record-read-unwatched", "the join record is read before the sync's reads are watched",
           "memories_tui/engine/sync_ops.py", (("record = join.check_same_vault(watched, vault.vault_id)",
                                                "record = join.check_same_vault(watched.target, vault.vault_id)"),),
           ("tests/integration/test_sync_slow_target.py::test_a_lock_ends_a_sync_whose_server_stopped_answering_at_once",)),
    Mutant("sync-folder-lists-without-end", "a folder target's listing has no bound",
           "memories_tui/sync/folder.py", (("                        if seen > bounds.MAX_LISTED_NAMES:", "                        if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_folder_listing_past_the_limit_is_refused",)),
    Mutant("sync-textless-revision-vague", "a revision a rebuilt snapshot carries without its text is reported as a "
           "vague 'missing from the sync state; sync again'",
           "memories_tui/sync/merge.py", (("            if content is None and winner.rev_id in payloads:  # pulled without its text",
                                           "            if False:"),),
           ("tests/integration/test_sync_compaction.py::test_a_note_a_rebuilt_snapshot_carries_without_its_text_names_its_device_until_that_device_syncs",)),
    Mutant("sync-folder-follows-links", "a link in the sync folder is followed (to a private key, to /dev/zero)",
           "memories_tui/sync/folder.py", (('_OPEN_FLAGS = os.O_RDONLY | _NOFOLLOW_CLOEXEC |',
                                            '_OPEN_FLAGS = os.O_RDONLY |'),),
           ("tests/integration/test_sync_target_bounds.py::test_a_head_that_is_not_a_regular_file_is_refused_at_once_and_changes_nothing",)),
    Mutant("sync-folder-reads-a-huge-file", "a file larger than any object is read whole",
           "memories_tui/sync/folder.py", (("            if info.st_size > bound:",
                                            "            if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_file_larger_than_any_object_is_refused_without_reading_it",)),
    Mutant("sync-s3-believes-a-huge-length", "an S3 answer that says it is larger than any object is read",
           "memories_tui/sync/s3.py", (('                    if int(length) > bound:',
                                        "                    if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_answer_past_the_limit_is_refused",)),
    Mutant("sync-s3-reads-an-endless-answer", "an S3 answer is read to its end, however long",
           "memories_tui/sync/s3.py", (("                    if len(data) > bound:",
                                        "                    if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_answer_past_the_limit_is_refused",)),
    Mutant("sync-webdav-reads-an-endless-answer", "a WebDAV answer is read to its end, however long",
           "memories_tui/sync/webdav.py", (("                if len(body) > limit:",
                                            "                if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_answer_past_the_limit_is_refused_before_or_as_it_arrives",)),
    Mutant("sync-webdav-believes-a-huge-length", "a WebDAV answer that says it is larger than any object is read",
           "memories_tui/sync/webdav.py", (('            elif int(response.headers.get("Content-Length") or 0) > '
                                            'limit:', "            elif False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_answer_past_the_limit_is_refused_before_or_as_it_arrives",)),
    Mutant("sync-s3-believes-a-negative-length", "an S3 answer of length -1 is read whole, however long",
           "memories_tui/sync/s3.py", (("if length is not None and int(length) >= 0:", "if length is not None:"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_length_beside_chunked_framing_bounds_nothing_more",)),
    Mutant("sync-s3-reads-past-its-length", "an S3 answer is read past the length it said (chunked framing beside it)",
           "memories_tui/sync/s3.py", (("return bytes(body.read(int(length)))", "return bytes(body.read())"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_length_beside_chunked_framing_bounds_nothing_more",)),
    Mutant("sync-s3-lists-others-keys", "an S3 listing's keys outside the target's prefix are taken as its objects",
           "memories_tui/sync/s3.py", (("                        if str(item.get(\"Key\", \"\")).startswith(self.prefix)]",
                                        "                        ]"),),
           ("tests/integration/test_sync_target_bounds.py::test_an_s3_listing_leaves_out_keys_outside_the_prefix",)),
    Mutant("sync-webdav-inflates-in-one-step", "a WebDAV answer in gzip is inflated a whole chunk at a time "
           "(a few kilobytes become gigabytes before the bound is looked at)",
           "memories_tui/sync/webdav.py", (("inflate.decompress(data, limit + 1 - len(body))", "inflate.decompress(data)"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_answer_inflated_past_the_limit_is_refused_as_it_inflates",)),
    Mutant("sync-webdav-takes-any-encoding", "a WebDAV answer in any Content-Encoding (gzip twice) is taken",
           "memories_tui/sync/webdav.py", (('if encoding not in ("", "identity", "gzip", "x-gzip"):', "if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_answer_inflated_past_the_limit_is_refused_as_it_inflates",)),
    Mutant("sync-webdav-lists-names-without-end", "a WebDAV listing of more names than any vault writes is taken",
           "memories_tui/sync/webdav.py", (("            if len(out) + len(visited) > bounds.MAX_LISTED_NAMES:",
                                            "            if False:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_listing_of_more_names_than_the_bound_is_refused",)),
    Mutant("sync-webdav-damaged-gzip-unexplained", "a WebDAV answer of damaged gzip ends the sync with a traceback",
           "memories_tui/sync/webdav.py", (("            except zlib.error:", "            except KeyError:"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_webdav_answer_of_damaged_gzip_is_refused_as_tampered",)),
    Mutant("sync-webdav-error-page-loses-headers", "a WebDAV answer that is not the object loses its headers "
           "(a redirect no longer names where to)",
           "memories_tui/sync/webdav.py", (("httpx.Response(response.status_code, headers=headers, content=body,",
                                            "httpx.Response(response.status_code, content=body,"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_gzipped_webdav_error_page_keeps_its_status_and_headers",
            "tests/integration/test_sync_webdav.py::test_a_redirect_names_the_url_to_use_instead")),
    Mutant("sync-edit-hurries-a-failing-target", "after a background sync failed, each edit starts another "
           "(a failing sync every few seconds while someone types)",
           "memories_tui/engine/sync_watch.py", (("        if seen.failures:\n            return False", "        if False:\n            return False"),),
           ("tests/integration/test_sync_background.py::test_background_sync_of_two_daemons",)),
    Mutant("sync-pending-ignores-the-outbox", "records in a bundle a refused upload left waiting are not counted as "
           "to push (the TUI's status said 'pending none')",
           "memories_tui/sync/run.py", (("    for seq, blob in state.outbox.items():\n        value = unseal(",
                                         "    for seq, blob in {}.items():\n        value = unseal("),),
           ("tests/integration/test_sync_faults.py::test_a_read_only_folder_is_one_clear_line_and_nothing_is_lost",)),
    Mutant("tui-serving-home-without-its-parents", "a fresh account (no ~/.local/share) is never served to the CLI "
           "and AI clients by the TUI",
           "memories_tui/daemon/paths.py", (("folder.mkdir(mode=0o700, parents=folder == self.home)",
                                             "folder.mkdir(mode=0o700)"),),
           ("tests/tui/test_daemon_link.py::test_the_tui_serves_a_home_whose_folders_are_not_made_yet",)),
    Mutant("tui-serving-not-retried", "a TUI that could not serve at start never tries again",
           "memories_tui/tui/daemon_link.py", (("            self.start()  # a start that failed",
                                                "            pass  # a start that failed"),),
           ("tests/tui/test_daemon_link.py::test_a_tui_that_could_not_serve_at_start_serves_from_its_next_unlock",)),
    Mutant("tui-devices-offers-dead-keys", "the devices screen offers f with no other device to forget",
           "memories_tui/tui/screens/sync_devices.py", (("            return any(not d.this_device for d in self.devices)",
                                                         "            return True"),),
           ("tests/tui/test_sync_devices_screen.py::test_lists_both_devices_and_forgets_the_other_one_after_asking",)),
    Mutant("tui-conflict-deleter-told-it-edited", "the device that deleted a note is told it edited it",
           "memories_tui/tui/screens/conflict.py", (("        if self.deletion is not None and self.deletion.here:\n"
                                                     "            return Text(",
                                                     "        if False:\n            return Text("),),
           ("tests/tui/test_conflicts.py::test_the_device_that_deleted_is_told_its_deletion_lost",)),
    Mutant("tui-conflict-merge-against-a-deletion", "keep both and merge are offered against a deletion (b keeps "
           "the shown text silently, m does nothing)",
           "memories_tui/tui/screens/conflict.py", (("        if action in _TEXT_ACTIONS and self.deletion is not None:",
                                                     "        if False:"),),
           ("tests/tui/test_conflicts.py::test_keep_both_and_merge_do_not_apply_against_a_deletion",)),
    Mutant("tui-conflict-own-edit-called-other", "the losing edit's pane says 'Other device' when this device made it",
           "memories_tui/tui/screens/conflict.py", (('side = _("This device\'s edit") if self.other.here else _("Other device")',
                                                     'side = _("Other device")'),),
           ("tests/tui/test_conflicts.py::test_keep_both_from_the_side_by_side_view",)),
    Mutant("tui-editor-deleted-note-strands-the-text", "ctrl+s on a note a sync deleted says only 'No record <id>' "
           "and the text can only be thrown away",
           "memories_tui/tui/screens/editor.py", (("        if message.gone:\n            self._offer_new_note()",
                                                   "        if False:\n            self._offer_new_note()"),),
           ("tests/tui/test_editor_sync.py::test_a_note_deleted_by_a_sync_while_edited_is_saved_as_a_new_note",)),
    Mutant("tui-editor-saves-markers-unasked", "a merge with its conflict markers left is saved (and synced) unasked",
           "memories_tui/tui/screens/editor.py", (("        if self.merged and has_conflict_markers(draft.body):",
                                                   "        if False:"),),
           ("tests/tui/test_editor_sync.py::test_a_merge_with_conflict_markers_left_asks_before_saving",)),
    Mutant("tui-conflict-asset-merge-silent", "m on two edits of a file asset does nothing, silently",
           "memories_tui/tui/screens/conflict.py", (('        if self.record.kind == "asset":\n            self.notify(',
                                                     '        if self.record.kind == "asset":\n            return\n'
                                                     '            self.notify('),),
           ("tests/tui/test_conflicts.py::test_m_on_a_file_asset_says_it_cannot_be_merged",)),
    Mutant("tui-reader-deletion-called-two-edits", "the reader says 'edited on two devices at once' of a record "
           "deleted on one device and edited on another",
           "memories_tui/tui/screens/records.py", (("        if record.id in self.against_deletion:", "        if False:"),),
           ("tests/tui/test_conflicts.py::test_the_device_that_deleted_is_told_its_deletion_lost",)),
    Mutant("cli-daemon-credentials-unexplained", "a sync the daemon ran without this shell's credentials says only "
           "that they are not set",
           "memories_tui/cli/served_credentials.py", (("if exc.code != ErrorCode.SYNC_TARGET_CREDENTIALS or not served "
                                                       "or not here:", "if True:"),),
           ("tests/integration/test_sync_webdav.py::test_a_daemon_without_this_shells_credentials_says_so",)),
    Mutant("sync-s3-unknown-profile-unreachable", "an unknown AWS_PROFILE is reported as an unreachable store",
           "memories_tui/sync/s3.py", (('if type(exc).__name__ == "ProfileNotFound":', "if False:"),),
           ("tests/integration/test_sync_s3.py::test_an_unknown_aws_profile_is_a_credentials_error_that_names_it",)),
    Mutant("tui-first-look-keeps-a-stale-list", "a sync that ended before the app's first look at the target "
           "leaves the list as it was before it",
           "memories_tui/tui/sync_notice.py", (("(vault_id != self._vault or ended != self._ended)",
                                                "(vault_id == self._vault and ended != self._ended)"),),
           ("tests/tui/test_sync_notice.py::test_the_list_shows_what_a_sync_brought_before_the_app_first_looked",)),
    Mutant("tui-conflict-own-text-kept-as-other", "o says it kept the other device's text when it kept this device's",
           "memories_tui/tui/screens/conflict.py", (("                   if self.other.here else",
                                                     "                   if False else"),),
           ("tests/tui/test_conflicts.py::test_keep_the_other_revision",)),
    Mutant("sync-pull-waits-for-each-large-bundle", "after a large bundle the next is fetched only when read (a "
           "join over a real link takes the download plus the vault work)",
           "memories_tui/sync/ahead.py", (("LARGE_AHEAD = 2", "LARGE_AHEAD = 0"),),
           ("tests/unit/test_sync_ahead.py::test_after_a_large_object_only_a_few_large_ones_are_fetched_ahead",)),
    Mutant("webdav-413-unexplained", "a WebDAV upload limit below a bundle is reported as a bare status",
           "memories_tui/sync/webdav.py", (("        if response.status_code == 413:", "        if False:"),),
           ("tests/integration/test_sync_webdav.py::test_an_upload_limit_below_a_bundle_is_a_clear_error_and_loses_nothing",)),
    Mutant("quick-call-names-no-api", "a served command line names no API, so a daemon of another API runs it",
           "memories_tui/cli/quick_call.py", (("{API_HEADER}: {this_api()}", "X-Memories-Apx: {this_api()}"),),
           ("tests/integration/test_daemon_handshake.py::"
            "test_a_client_of_another_build_is_told_to_restart_while_a_vault_is_unlocked",)),
    Mutant("sync-join-ignores-snapshot", "a new device reads bundles only, never the snapshot that replaced them",
           "memories_tui/sync/snapshots.py", (("    return head.snap > seen and (", "    return False and ("),),
           ("tests/integration/test_sync_compaction.py::test_join_after_compaction_reads_the_snapshot_and_brings_everything",)),
    Mutant("sync-reader-never-publishes", "a device that only reads never says how far it read (nothing is ever deleted)",
           "memories_tui/sync/compaction.py", (("    extra.publish = bool(extra.read) and (", "    extra.publish = False and ("),),
           ("tests/integration/test_sync_compaction.py::"
            "test_nothing_a_known_device_still_needs_is_deleted_and_it_catches_up_via_the_snapshot",)),
    Mutant("sync-collect-before-carried", "a forgotten device's objects are deleted although no snapshot carries its chain",
           "memories_tui/sync/compaction.py",
           (("    for device, upto in sorted(carried.items()):\n",
             "    for device, upto in sorted({d: h.seq for d, h in pulled.heads.items() if d != state.device}.items()):\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_forgotten_device_is_carried_then_deleted_and_a_new_device_gets_everything",)),
    Mutant("sync-snapshot-drops-carried", "a snapshot leaves out the chain of the forgotten device it says it carries",
           "memories_tui/sync/compaction.py", (("        chain.entries += theirs.entries\n", "        pass\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_forgotten_device_is_carried_then_deleted_and_a_new_device_gets_everything",)),
    Mutant("sync-reader-ignores-carried", "a device behind on a deleted forgotten device never reads the carrying snapshot",
           "memories_tui/sync/chains.py", (("    carried = sorted({d for h in out.heads.values() for d in h.adopted} - {state.device})\n",
                                             "    carried: list[str] = []\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_forgotten_device_is_carried_then_deleted_and_a_new_device_gets_everything",)),
    Mutant("sync-returning-forgotten-refused", "a forgotten device whose objects were deleted cannot sync again",
           "memories_tui/sync/chains.py",
           (("    shown = head.seq if head is not None else carried[1] if carried is not None else 0\n",
             "    shown = head.seq if head is not None else 0\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_forgotten_device_that_comes_back_after_its_objects_were_deleted_goes_on",)),
    Mutant("sync-damaged-forgotten-stops-compaction", "a forgotten device's damaged chain makes every sync of the carrier fail",
           "memories_tui/sync/compaction.py",
           (("        except SyncTamperedError:  # its objects are damaged or still being copied: not carried, tried again later\n"
             "            continue\n",
             "        except SyncTamperedError:  # its objects are damaged or still being copied: not carried, tried again later\n"
             "            raise\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_a_forgotten_device_whose_objects_are_damaged_is_not_carried_and_nothing_else_stops",)),
    Mutant("sync-hold-never-ends", "a device offline for good holds back deleting forever ([sync] hold_days ignored)",
           "memories_tui/sync/compaction.py",
           (("    return hold_days > 0 and seen is not None and now - seen[1] >= hold_days * DAY_MS\n",
             "    return False\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_an_offline_device_past_hold_days_stops_holding_back_and_catches_up_with_nothing_lost",)),
    Mutant("sync-hold-ends-at-once", "a device offline a moment no longer holds back deleting",
           "memories_tui/sync/compaction.py",
           (("    return hold_days > 0 and seen is not None and now - seen[1] >= hold_days * DAY_MS\n",
             "    return hold_days > 0 and seen is not None\n"),),
           ("tests/integration/test_sync_gc.py::"
            "test_an_offline_device_past_hold_days_stops_holding_back_and_catches_up_with_nothing_lost",)),
    Mutant("sync-hold-trusts-head-time", "how long a device was silent is read from its own head's time (its clock)",
           "memories_tui/sync/compaction.py",
           (("        watch[device] = old if old is not None and old[0] == sign and old[1] <= now else (sign, now)\n",
             "        watch[device] = (sign, int(__import__('datetime').datetime.fromisoformat(head.time).timestamp() * 1000))\n"),),
           ("tests/integration/test_sync_gc.py::test_a_device_whose_clock_is_a_year_off_does_not_make_another_delete_early",)),
    Mutant("ingest-commits-per-file", "a batch (ingest) is committed record by record, not all at once",
           "memories_tui/vault/store.py",
           (("        with self._write() as conn:\n"
             "            self._insert_many(conn, records)\n"
             "            pause_point(",
             "        for record in records:\n"
             "            with self._write() as conn:\n"
             "                self._insert_many(conn, [record])\n"
             "                if record is records[-1]:\n"
             "                    pause_point("),),
           ("tests/integration/test_crash_and_concurrency.py::test_kill_9_mid_ingest_leaves_all_or_nothing",)),
    Mutant("backoff-ignores-cancel", "the retry backoff sleeps through a cancel (checked only afterwards)",
           "memories_tui/models/http.py",
           (("    elif cancel.wait(seconds):\n        raise CancelledError(msg(\"Cancelled.\"))\n",
             "    else:\n        time.sleep(seconds)\n"),),
           ("tests/unit/test_http.py::test_cancel_interrupts_backoff",)),
    Mutant("search-limit-off-by-one", "a search asks for 101 results without error",
           "memories_tui/text/query.py",
           (("if limit > MAX_RESULTS:", "if limit > MAX_RESULTS + 1:"),),
           ("tests/unit/test_search_fusion.py", "tests/integration/test_cli_search.py")),
    Mutant("passphrase-not-normalised", "passphrases are not NFC-normalised before Argon2id",
           "memories_tui/vault/crypto.py",
           (('return bytearray(unicodedata.normalize("NFC", passphrase).encode("utf-8"))',
             'return bytearray(passphrase.encode("utf-8"))'),),
           ("tests/unit/test_crypto.py",)),
    Mutant("phrase-mode-as-all", "phrase queries match the words in any order (like all)",
           "memories_tui/index/lexical.py",
           (('        if match_mode != MATCH_PHRASE:\n            terms, pieces, chars = self._terms(query)',
             '        if True:\n            terms, pieces, chars = self._terms(query)'),
            ("ranked = self._bm25.top_k(terms, match_mode, limit,",
             'ranked = self._bm25.top_k(terms, MATCH_ALL if match_mode == MATCH_PHRASE else match_mode, limit,')),
           ("tests/unit/test_lexical.py",)),
    # ---- bugs planted in a copy that the whole suite once let through
    # (One more was planted and is left out as an equivalent mutant: VaultIndex.restore() also
    # rebuilding the chunks of a record whose revision moved on. The engine syncs every restored
    # index before anything reads it, and sync drops all chunks of a changed record first, so the
    # result cannot differ; tests/integration/test_index_cache.py::test_snapshot_holding_an_older_
    # revision_answers_from_the_current_one shows it, and passes with that edit in place.)
    Mutant("mcp-ask-no-grant-recheck", "memory_ask returns its answer without checking the grant again after the work",
           "memories_tui/access/tools.py",
           (('            return AskResult(vault_id=vid, question=question, answer=answer)\n\n'
             '        return self._run(vault_id, work)\n',
             '            return AskResult(vault_id=vid, question=question, answer=answer)\n\n'
             '        return work(self.grants.check(vault_id))\n'),),
           (MCP_TOOLS + "::test_memory_ask_drops_the_answer_when_the_grant_is_revoked_during_the_call",)),
    Mutant("mcp-retrieve-truncated-gt1", "memory_retrieve says truncated only when more than one chunk was left out",
           "memories_tui/access/tools.py",
           (("chunks=chunks, truncated=omitted > 0", "chunks=chunks, truncated=omitted > 1"),),
           (MCP_TOOLS + "::test_retrieve_budget_with_exactly_one_chunk_left_out",)),
    Mutant("mcp-search-truncated-gt1", "memory_search says truncated only when more than one record was left out",
           "memories_tui/access/tools.py",
           (("records=records, truncated=omitted > 0", "records=records, truncated=omitted > 1"),),
           (MCP_TOOLS + "::test_search_budget_with_exactly_one_record_left_out",)),
    Mutant("mcp-search-budget-before-add", "memory_search checks its byte budget before adding a row (one row too many)",
           "memories_tui/access/tools.py",
           (("if kept and used + cost > budget:", "if kept and used > budget:"),),
           (MCP_TOOLS + "::test_search_budget_with_exactly_one_record_left_out",)),
    Mutant("mcp-read-cut-mid-char", "memory_read cuts at the byte budget even inside a UTF-8 character",
           "memories_tui/access/tools.py",
           (("end = floor_char_boundary(body, start + READ_BUDGET)", "end = start + READ_BUDGET"),),
           (MCP_TOOLS + "::test_read_budget_never_cuts_a_character",)),
    Mutant("single-char-not-in-words", "a query character standing alone is met only as a word (燉 misses 燉煮)",
           "memories_tui/index/lexical.py",
           (("        return terms, pieces, segment.single_chars(terms, pieces)", "        return terms, pieces, []"),
            ("            return list(query.terms), list(query.pieces), list(query.chars)",
             "            return list(query.terms), list(query.pieces), []")),
           ("tests/integration/test_single_char_search.py",)),
    Mutant("all-char-in-run-not-anywhere", "all meets a character inside a longer query run only as a word or a "
           "query piece (廠區竹 misses 新竹廠區)",
           "memories_tui/text/query.py",
           (("                later = bool(any_of)", "                later = False"),),
           ("tests/integration/test_single_char_search.py::test_a_character_inside_a_longer_query_run_is_met_by_all_as_by_any",)),
    Mutant("all-second-tier-mixed", "all ranks the rows meeting a character only inside another word among the others",
           "memories_tui/index/bm25.py",
           (("                    return self._tiers(strong, loose, scores, k, cards_only, per_group)",
             "                    pass"),),
           ("tests/integration/test_single_char_search.py::test_a_character_inside_a_longer_query_run_is_met_by_all_as_by_any",)),
    Mutant("extractive-title-counts-half", "a question term in the note's title counts half for its sentences",
           "memories_tui/answer/extractive.py",
           (("TITLE_SHARE = 1.0", "TITLE_SHARE = 0.5"),),
           ("tests/integration/test_offline_answers.py",)),
    Mutant("latin-title-weight-5", "a title without CJK weighs 5 like a Chinese one",
           "memories_tui/index/weights.py",
           (("LATIN_TITLE_WEIGHT = 2.0\n", "LATIN_TITLE_WEIGHT = 5.0\n"),),
           ("tests/unit/test_bm25_weights.py",)),
    Mutant("extractive-cites-common-words", "an extractive answer cites a sentence sharing only common words",
           "memories_tui/answer/extractive.py",
           (("    return x.rare and x.support >= MIN_SUPPORT and x.evidence >= MIN_EVIDENCE",
             "    return x.score > 0"),),
           ("tests/integration/test_offline_answers.py",)),
    Mutant("extractive-common-term-counts-as-rare", "a sentence holding only a word most notes hold (今天, today) is cited",
           "memories_tui/answer/extractive.py",
           (("    return x.rare and x.support >= MIN_SUPPORT and x.evidence >= MIN_EVIDENCE",
             "    return x.support >= MIN_SUPPORT and x.evidence >= MIN_EVIDENCE"),),
           ("tests/integration/test_offline_answers.py::test_a_sentence_holding_only_a_word_most_notes_hold_is_not_cited",)),
    Mutant("extractive-how-heavy-is-a-term", "how heavy / 有多重 at a question's end is matched as a term (豆豆多重 declined)",
           "memories_tui/answer/extractive.py",
           (('terms = search_terms(_HOW_MUCH.sub(" ", question))', "terms = search_terms(question)"),),
           (RULES_TESTS + "::test_how_heavy_deep_or_far_asks_an_amount_and_is_not_a_term",)),
    Mutant("extractive-number-ends-no-sentence", "a full stop after a number never ends an English sentence (April 2025. The …)",
           "memories_tui/answer/extractive.py",
           ((r"|(?<=\d)\.(?=\s+[A-Z])|…+)", "|…+)"),),
           (RULES_TESTS + "::test_a_full_stop_after_a_number_ends_an_english_sentence",)),
    Mutant("question-kind-no-duration", "how long / 多久 no longer asks a duration (the sentence with 三天 loses its edge)",
           "memories_tui/answer/question_kind.py",
           (('(DURATION, re.compile(r"\\bhow\\s+long\\b|多久', '(DURATION, re.compile(r"\\bhow\\s+lon\\b|多久久'),),
           (RULES_TESTS + "::test_the_kind_of_fact_asked_picks_the_sentence_stating_it",)),
    Mutant("question-kind-no-place", "where / 哪裡 no longer asks a place",
           "memories_tui/answer/question_kind.py",
           (('(PLACE, re.compile(r"\\bwhere\\b|', '(PLACE, re.compile(r"\\bwher\\b|'),
            ("|哪里|哪儿|何处|何地|在哪|", "|哪哪里|")),
           (RULES_TESTS + "::test_the_kind_of_fact_asked_picks_the_sentence_stating_it",)),
    Mutant("question-kind-no-en-street", "an English street (on Mill Lane, 12 Baker St.) states no place",
           "memories_tui/answer/question_kind.py",
           (("(?:Street|St|Road|Rd|Avenue|Ave|Lane|Boulevard|Blvd|Way|Square|Drive)", "(?:Streetx)"),),
           (RULES_TESTS + "::test_an_english_street_is_a_place",)),
    Mutant("extractive-semicolon-ends-sentence", "a semicolon ends a sentence again, cutting an answer's list of clauses",
           "memories_tui/answer/extractive.py",
           (('rf"(?:[。！？!?]+|', 'rf"(?:[。！？；!?;]+|'),),
           (RULES_TESTS + "::test_a_semicolon_joins_the_clauses_of_one_sentence",)),
    Mutant("extractive-initial-ends-sentence", "an initial's full stop (Terry A. Gates) ends a sentence",
           "memories_tui/answer/extractive.py",
           (('for w in ("[A-Z]", "Mr",', 'for w in ("Mr",'),),
           (RULES_TESTS + "::test_an_initial_or_a_title_does_not_end_a_sentence",)),
    Mutant("extractive-title-bigrams-ignored", "the title's character pairs count only for sentences repeating them",
           "memories_tui/answer/extractive.py",
           (("len((_bigrams(x.folded) | title_bigrams[s.source_index]) & q_bigrams)",
             "len(_bigrams(x.folded) & q_bigrams)"),),
           (RULES_TESTS + "::test_the_titles_bigrams_count_for_each_of_its_sentences",)),
    Mutant("extractive-question-word-pieces-kept", "a piece of a question word (一位 of 哪一位) is matched as a term",
           "memories_tui/answer/extractive.py",
           (("if t not in dropped and not any(t in d for d in dropped)]", "if t not in dropped]"),),
           (RULES_TESTS,)),
    Mutant("extractive-no-title-trim", "a name glued to the next character (王連字) is not met as the title's name",
           "memories_tui/answer/extractive.py",
           (("if any(x.holds(t) >= 1.0 for x in titles)), None)", "if any(x.holds(t) >= 1.0 for x in [])), None)"),),
           (RULES_TESTS + "::test_a_name_jieba_glued_to_the_next_character_is_met_as_the_titles_name",)),
    Mutant("extractive-glue-partly-held", "a glued term held only in part (王沈是) is not unglued",
           "memories_tui/answer/extractive.py",
           (("or any(x.holds(term) >= 1.0 for x in texts):", "or any(x.holds(term) for x in texts):"),),
           (RULES_TESTS + "::test_a_name_glued_to_a_function_character_is_unglued_though_part_of_it_is_held",)),
    Mutant("meaning-kind-not-asked", "a question asking what a name means asks no kind of fact",
           "memories_tui/answer/question_kind.py",
           (('(MEANING, re.compile(r"意思|含义|', '(MEANING, re.compile(r"含义|'),),
           (RULES_TESTS + "::test_a_meaning_question_is_answered_by_the_sentence_saying_what_the_name_means",)),
    Mutant("extractive-cap-after-add", "the extractive length cap is checked before adding a sentence, not with it",
           "memories_tui/answer/extractive.py",
           (("or used + len(cand.sentence.text) > max_chars:", "or used > max_chars:"),),
           (ANSWER_TESTS + "::test_extractive_length_cap_binds_before_a_sentence_is_added",)),
    Mutant("extractive-rank-prior-flipped", "the extractive rank prior favours lower-ranked sources",
           "memories_tui/answer/extractive.py",
           (("- RANK_PRIOR * s.source_index", "+ RANK_PRIOR * s.source_index"),),
           (ANSWER_TESTS + "::test_extractive_prefers_the_higher_ranked_source_when_support_is_equal",)),
    Mutant("answer-cap-x1000", "the model answer's length cap is 1,000 times too high",
           "memories_tui/answer/citations.py",
           (("MAX_ANSWER_CHARS = 20_000\n", "MAX_ANSWER_CHARS = 20_000_000\n"),),
           (ANSWER_TESTS + "::test_model_answer_length_is_capped_at_20000_characters",)),
    Mutant("gemini-max-tokens-complete", "a Gemini reply cut off at MAX_TOKENS counts as a complete answer",
           "memories_tui/models/remote_generate.py",
           (('_GEMINI_OK_FINISH = {None, "STOP", "FINISH_REASON_UNSPECIFIED"}',
             '_GEMINI_OK_FINISH = {None, "STOP", "FINISH_REASON_UNSPECIFIED", "MAX_TOKENS"}'),),
           (REMOTE_TESTS + "::test_gemini_generation_refusals",)),
    Mutant("gemini-first-part-only", "only the first part of a Gemini answer is used",
           "memories_tui/models/remote_generate.py",
           (('        return "".join(texts)\n', "        return texts[0]\n"),),
           (REMOTE_TESTS + "::test_gemini_answer_in_several_parts_is_joined",)),
    Mutant("gemini-key-in-url", "the Gemini API key is also sent in the URL as ?key=",
           "memories_tui/models/remote.py",
           (("        url = url or self.service.url\n",
             '        url = (url or self.service.url) + (f"?key={self.api_key()}" if self.service.protocol == "gemini" '
             'else "")\n'),),
           (REMOTE_TESTS + "::test_api_keys_travel_only_in_their_header_never_in_a_url_or_body",)),
    Mutant("rerank-nonfinite-accepted", "the rerank service's scores are not checked for being finite",
           "memories_tui/models/remote_generate.py",
           (("            if not math.isfinite(value):\n"
             '                raise bad_response(self.client, f"results[{i}].relevance_score is not finite")\n', ""),),
           (REMOTE_TESTS + "::test_rerank_score_beyond_float_range_refused",)),
    Mutant("ask-batch-swallows-cancel", "a --questions batch notes a lock or vault change as one failed question and goes on",
           "memories_tui/cli/ask_verbs.py",
           (("        except (CancelledError, LockedError):\n"
             "            raise  # the whole batch stops: nothing further could be answered\n", ""),),
           ("tests/integration/test_cli_ask.py::test_batch_stops_when_the_vault_changes_under_it",)),
    Mutant("hybrid-lexical-depth-limit", "hybrid fuses only `limit` BM25 candidates instead of 100",
           "memories_tui/retrieval/search.py",
           (('lexical_depth = limit if mode == BM25 else max(CANDIDATES, limit)', "lexical_depth = limit"),),
           ("tests/integration/test_search_depth.py::test_hybrid_with_a_smaller_limit_is_the_top_of_the_same_ranking",)),
    Mutant("rerank-service-depth-limit", "the rerank service is sent only `limit` candidates",
           "memories_tui/retrieval/service_rerank.py",
           (("    return max(limit, min(MAX_CANDIDATES, limit * 3))\n", "    return limit\n"),),
           ("tests/integration/test_search_depth.py::test_rerank_service_sees_candidates_below_the_limit",)),
    Mutant("vector-names-unkeyed", "cached vectors are named by an unkeyed SHA-256 of the chunk",
           "memories_tui/vault/caches.py",
           (('crypto.mac(key, crypto.length_prefixed("emb", space_key, h)).hex()[:40]',
             '__import__("hashlib").sha256(crypto.length_prefixed("emb", space_key, h)).hexdigest()[:40]'),),
           ("tests/integration/test_cache_blob_names.py",)),
    Mutant("device-only-after-retrieval", "a device-only vault refuses remote generation only after retrieving",
           "memories_tui/engine/asking.py",
           (('    if rag.generation is not None:\n'
             '        refuse_if_device_only(rag.generation.url, ctx.device_only, "generation")\n'
             "    response = search_vault(ctx, question, mode=mode, match_mode=match_mode, limit=limit, cancel=cancel,\n"
             "                            rerank=rerank, cards_only=False, budget_seconds=BUDGET_SECONDS,\n"
             "                            progress=None)\n",
             "    response = search_vault(ctx, question, mode=mode, match_mode=match_mode, limit=limit, cancel=cancel,\n"
             "                            rerank=rerank, cards_only=False, budget_seconds=BUDGET_SECONDS,\n"
             "                            progress=None)\n"
             '    if rag.generation is not None:\n'
             '        refuse_if_device_only(rag.generation.url, ctx.device_only, "generation")\n'),),
           ("tests/integration/test_engine_ask.py::test_device_only_refuses_remote_generation_before_any_retrieval",)),
    # ---- the resident engine's timers and lock state at their edges
    Mutant("lock-leaves-request-running", "a lock does not cut a model request that is waiting (it runs to its deadline)",
           "memories_tui/models/inflight.py",
           (("        if self.stop is not None and self.stop():\n            return True\n", ""),),
           (LOCK_CUT_TESTS + "::test_a_lock_in_the_engine_ends_an_ask_waiting_on_the_model",)),
    Mutant("lock-cut-said-cancelled", "a daemon call cut by a lock of its vault is reported as a plain cancel",
           "memories_tui/daemon/served.py",
           (("    return {op.verb: _ended_by_lock(service, _method(service, op)) for op in operations()}\n",
             "    return {op.verb: _method(service, op) for op in operations()}\n"),),
           (LOCK_CUT_TESTS + "::test_memories_lock_ends_a_rag_ask_the_daemon_runs",)),
    Mutant("daemon-cancel-ignored", "a front end's cancel of a call the daemon serves is not passed on (the work runs on)",
           "memories_tui/daemon/connection.py",
           (("                    sock.shutdown(socket.SHUT_WR)\n", "                    pass\n"),),
           ("tests/integration/test_engine_protocol.py::test_cancel_stops_the_work_in_the_daemon_as_in_process",)),
    Mutant("daemon-path-not-as-typed", "a served backup reports its file by the path the daemon opened, not as typed",
           "memories_tui/daemon/served.py",
           (("                result = _renamed(result, str(resolved), str(given))\n", "                pass\n"),),
           ("tests/integration/test_daemon_data.py::test_backup_export_and_egress_print_and_write_the_same",)),
    Mutant("daemon-for-end-exclusive", "`unlock --for` ends only after its end, not at it (> instead of >=)",
           "memories_tui/daemon/service.py",
           (("times.expires_at is not None and now >= times.expires_at", "times.expires_at is not None and now > times.expires_at"),),
           (TIMER_TESTS + "::test_for_ends_at_exactly_its_end_and_idle_counts_from_the_last_served_call",)),
    Mutant("daemon-idle-from-unlock", "the daemon's idle time is counted from the unlock, not from the last use",
           "memories_tui/daemon/service.py",
           (("now - times.last_used >= self.idle_seconds", "now - times.unlocked_at >= self.idle_seconds"),),
           (TIMER_TESTS + "::test_for_ends_at_exactly_its_end_and_idle_counts_from_the_last_served_call",)),
    Mutant("daemon-served-call-not-use", "a call the daemon serves does not count as use for the idle lock",
           "memories_tui/daemon/service.py",
           (("        self._times_of(vault_id).last_used = testhooks.now()\n        return vault_id\n",
             "        return vault_id\n"),),
           (TIMER_TESTS + "::test_for_ends_at_exactly_its_end_and_idle_counts_from_the_last_served_call",)),
    Mutant("unlock-for-sent-raw", "`unlock --for` is sent to the daemon as a bare number, unchecked",
           "memories_tui/cli/daemon_verbs.py",
           (("for_seconds = parse_duration(ctx.args.duration) if ctx.args.duration else None",
             'for_seconds = float(ctx.args.duration.rstrip("smhdw")) if ctx.args.duration else None'),),
           (TIMER_TESTS + "::test_a_zero_or_negative_for_is_refused_before_any_daemon_hears_of_it",)),
    Mutant("unlock-ignores-lock-during-derivation", "a lock that arrives while the daemon derives a key is forgotten",
           "memories_tui/daemon/service.py",
           (("            if self.engine.lock_epoch != epoch:  # a lock came while the key was derived: it wins\n"
             "                self.engine.lock(vault_id)\n", "            if False:\n                pass\n"),),
           (TIMER_TESTS + "::test_a_lock_while_the_key_is_derived_wins",)),
    Mutant("mcp-reopen-loses-expiry", "an MCP session reopened after a daemon restart gets a fresh expiry",
           "memories_tui/daemon/mcp_sessions.py",
           (("            grants.expires_at = float(expires_at) if isinstance(expires_at, int | float) else None\n", ""),),
           (TIMER_TESTS + "::test_an_mcp_session_reopened_after_a_daemon_restart_keeps_its_expiry",)),
    Mutant("mcp-input-end-drops-open-calls", "a request read before the client closed its side is left unanswered",
           "memories_tui/access/stdio_guard.py",
           (("            if line is None:\n                self._out.wait_answered()\n",
             "            if line is None:\n"),),
           ("tests/integration/test_mcp_relay.py::test_requests_written_before_the_client_closes_its_side_are_still_answered",)),
    Mutant("relay-reopen-loses-expiry", "the MCP relay reopens its session after a daemon restart with a fresh expiry",
           "memories_tui/mcp/relay.py",
           (("        if self.grant:\n            args.update(started_at=self.grant[\"started_at\"], "
             "expires_at=self.grant[\"expires_at\"])\n", ""),),
           (TIMER_TESTS + "::test_a_relayed_mcp_session_reopened_after_a_daemon_restart_keeps_its_expiry",)),
    Mutant("mcp-call-no-lock-recheck", "an MCP call's answer is kept when the vault locked before the call's last check",
           "memories_tui/daemon/mcp_sessions.py",
           (("        if engine.lock_epoch != epoch or not engine.is_unlocked(vault_id):\n",
             "        if False:\n"),),
           (TIMER_TESTS + "::test_a_lock_between_an_mcp_answer_and_its_last_check_drops_the_answer",)),
    Mutant("revoke-at-start-ignored", "a revocation stamped exactly at a grant's start leaves the grant alive",
           "memories_tui/access/grants.py",
           (("if revoked is not None and revoked >= self.started_at:", "if revoked is not None and revoked > self.started_at:"),),
           ("tests/unit/test_grants.py::test_a_revocation_at_exactly_the_start_ends_the_grant",)),
    Mutant("daemon-folder-group-open", "a daemon folder the group may enter (0750, 0770) is accepted",
           "memories_tui/daemon/paths.py",
           (("    if info.st_mode & 0o077:\n", "    if info.st_mode & 0o007:\n"),),
           (LIFECYCLE_TESTS + "::test_a_daemon_folder_others_can_enter_is_refused",)),
    Mutant("daemon-folder-any-owner", "a daemon folder another uid owns is used",
           "memories_tui/daemon/paths.py",
           (("    if info.st_uid != os.getuid():\n", "    if False:\n"),),
           (LIFECYCLE_TESTS + "::test_a_daemon_folder_another_user_owns_is_refused",)),
    Mutant("daemon-env-keeps-passphrase-sources", "the detached daemon inherits MEMORIES_PASSPHRASE_FILE/_COMMAND",
           "memories_tui/daemon/spawn.py",
           (('if not k.startswith("MEMORIES_PASSPHRASE")}', 'if k != "MEMORIES_PASSPHRASE"}'),),
           (LIFECYCLE_TESTS + "::test_passphrase_never_reaches_the_daemons_argv_environment_or_log",)),
    Mutant("bm25-piece-weight-one", "the pieces field scores like the words (weight 1.0 instead of 0.5)",
           "memories_tui/index/weights.py",
           (("PIECE_WEIGHT = 0.5\n", "PIECE_WEIGHT = 1.0\n"),),
           ("tests/unit/test_bm25_weights.py::test_the_pieces_field_counts_half_a_word",)),
    Mutant("english-plural-zero-singular", "English takes the singular for a count of 0 (\"0 byte\")",
           "memories_tui/i18n.py",
           (("self.plural is None or self.count == 1 else self.plural", "self.plural is None or self.count <= 1 else self.plural"),),
           ("tests/unit/test_i18n.py::test_english_uses_the_plural_for_zero",)),
    Mutant("connect-timeout-past-deadline", "a model request's connect timeout is not capped by the time left",
           "memories_tui/models/http.py",
           (("        read, connect = min(read, left), min(connect, left)\n", "        read = min(read, left)\n"),),
           ("tests/unit/test_http.py::test_each_attempts_timeouts_are_capped_by_the_time_left_of_the_whole_request",)),
    Mutant("daemon-status-ignores-serving-tui", "`daemon status` leaves out the idle lock of the TUI serving the socket",
           "memories_tui/daemon/service.py",
           (("        tui_at = None if host_in is None else now + host_in\n", "        tui_at = None\n"),),
           ("tests/tui/test_daemon_link.py::test_daemon_status_tells_the_idle_lock_of_the_tui_that_serves_the_vault",)),
    Mutant("tui-poll-hides-idle-lock", "a TUI beside the daemon does not tell it when its own idle lock comes",
           "memories_tui/tui/daemon_link.py",
           ((', "lock_in": self.idle_lock_in()}', "}"),),
           ("tests/tui/test_daemon_link.py::test_daemon_status_tells_the_idle_lock_of_a_tui_beside_the_daemon",)),
    # ---- backups, restore, rollback and the egress log
    Mutant("backup-every-hours-as-minutes", "`[backup] every_hours` is read as minutes",
           "memories_tui/engine/backup_ops.py",
           (("moment - newest.taken < timedelta(hours=hours)", "moment - newest.taken < timedelta(minutes=hours)"),),
           ("tests/integration/test_backup.py::test_backup_if_due_follows_every_hours",)),
    Mutant("restore-up-to-date-without-force", "a backup that would lose nothing replaces the vault without --force",
           "memories_tui/vault/restore.py",
           (("    if not force:\n", "    if not force and lost:\n"),),
           ("tests/integration/test_restore.py::test_an_up_to_date_backup_is_not_restored_over_the_vault_without_force",)),
    Mutant("restore-keys-not-wiped", "restore leaves the backup's key buffer unwiped",
           "memories_tui/vault/restore.py",
           (("                                    cancel=cancel)\n        finally:\n            keys.wipe()\n",
             "                                    cancel=cancel)\n        finally:\n            pass\n"),),
           ("tests/integration/test_key_memory.py::test_restore_leaves_no_key_material",)),
    Mutant("rollback-diverged-as-equal", "a vault at the anchors' change count with other contents is accepted",
           "memories_tui/vault/anchor.py",
           (("return counter < self.counter or (counter == self.counter and bytes(manifest) != self.manifest)",
             "return counter < self.counter"),),
           ("tests/integration/test_rollback.py::test_two_copies_changed_apart_at_the_same_change_count_are_told_apart",)),
    Mutant("rollback-no-copy-outside-home", "the anchors are kept only in the home (a replay of the home lowers them)",
           "memories_tui/engine/data_ops.py",
           (('AnchorBook(home / "anchors", outside_store(home))', 'AnchorBook(home / "anchors")'),),
           ("tests/integration/test_rollback.py::"
            "test_the_whole_home_put_back_with_its_old_anchors_is_detected_and_accepted_on_purpose",)),
    Mutant("state-folder-is-the-home", "on macOS/Windows the anchors' outside copy lands in the default home itself",
           "memories_tui/vault/state_folder.py",
           (("    if home.is_relative_to(real):\n", "    if False:\n"),),
           ("tests/integration/test_rollback.py::test_the_state_folder_is_never_inside_the_home",)),
    Mutant("egress-gap-not-listed", "a deleted egress entry is not listed as missing",
           "memories_tui/vault/egress_log.py",
           (("                out.missing.extend(range(expected, seq))\n", ""),),
           ("tests/integration/test_egress.py::test_a_deleted_entry_is_a_gap_and_swapped_entries_fail_their_check",)),
    Mutant("egress-seq-not-bound", "an egress entry's associated data leaves out its sequence number",
           "memories_tui/vault/egress_log.py",
           (('return crypto.length_prefixed("egress/v1", vault_id, seq)',
             'return crypto.length_prefixed("egress/v1", vault_id)'),),
           ("tests/integration/test_egress.py::test_a_deleted_entry_is_a_gap_and_swapped_entries_fail_their_check",)),
    Mutant("egress-since-exclusive", "`rag egress --since T` leaves out an entry made exactly at T",
           "memories_tui/vault/egress_log.py",
           (("if since is None or entry.time >= since:", "if since is None or entry.time > since:"),),
           ("tests/integration/test_egress.py::test_since_is_inclusive_at_the_exact_time_of_an_entry",)),
    Mutant("daemon-connect-no-retry", "a connect that finds the daemon's queue full (EAGAIN) gives up at once",
           "memories_tui/daemon/connection.py",
           (("    if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):\n        return wait\n",
             "    if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):\n        return 0.0\n"),),
           (DAEMON_BURST + "::test_a_full_queue_is_tried_again_until_the_daemon_lets_the_call_in",)),
    Mutant("daemon-connect-refused-no-retry", "a refused connect is not tried again while the daemon's process lives",
           "memories_tui/daemon/connection.py",
           (("    if exc.errno == errno.ECONNREFUSED and holder_alive(paths):\n", "    if False:\n"),),
           (DAEMON_BURST + "::test_a_refused_connect_is_tried_again_only_while_the_daemons_process_lives",)),
    Mutant("daemon-stale-socket-waited-on", "a socket left by a killed daemon is waited on as if it were starting",
           "memories_tui/daemon/connection.py",
           (("    if exc.errno == errno.ECONNREFUSED and holder_alive(paths):\n",
             "    if exc.errno == errno.ECONNREFUSED:\n"),),
           (DAEMON_BURST + "::test_a_refused_connect_is_tried_again_only_while_the_daemons_process_lives",)),
    Mutant("daemon-shut-out-is-absent", "a daemon that lets nobody in counts as no daemon (the CLI asks for a passphrase)",
           "memories_tui/daemon/client.py",
           (('        if exc.code == ErrorCode.DAEMON_NOT_ANSWERING:\n            raise\n        return None\n',
             "        return None\n"),),
           (DAEMON_BURST + "::test_a_daemon_that_lets_nobody_in_is_not_answering_not_absent",)),
    Mutant("mcp-daemon-error-as-locked", "an MCP call the daemon could not be reached for is called a locked vault",
           "memories_tui/mcp/daemon_tools.py",
           (("                    continue\n                raise\n",
             '                    continue\n                raise self._locked(arguments["vault_id"]) from None\n'),),
           (DAEMON_BURST + "::test_an_unreachable_daemon_is_not_reported_as_a_locked_vault",)),
    Mutant("daemon-inflight-uncapped", "request bytes in flight across connections are not capped",
           "memories_tui/daemon/server.py",
           (("        if not self.server.inflight.take(length):\n",
             "        if not (self.server.inflight.take(length) or True):\n"),),
           (DAEMON_LIMITS + "::test_request_bytes_in_flight_across_connections_are_capped",)),
    Mutant("daemon-inflight-kept", "a finished request's bytes are never given back to the in-flight cap",
           "memories_tui/daemon/server.py",
           (("        self.server.inflight.give_back(self.reserved)\n", "        pass\n"),),
           (DAEMON_LIMITS + "::test_request_bytes_in_flight_across_connections_are_capped",)),
    Mutant("daemon-drip-forever", "a request dripped a byte at a time is never cut off",
           "memories_tui/daemon/limits.py",
           (("        left = self._deadline - time.monotonic()\n", '        left = float("inf")\n'),),
           (DAEMON_LIMITS + "::test_idle_and_dripping_connections_are_closed",)),
    Mutant("daemon-session-idles-out", "a relayed MCP session is cut by the idle limit meant for requests",
           "memories_tui/daemon/server.py",
           (("        self.connection.settimeout(None)\n        reader = self.connection.makefile(\"rb\")\n",
             "        reader = self.connection.makefile(\"rb\")\n"),),
           (DAEMON_LIMITS + "::test_a_relayed_mcp_session_idles_as_long_as_its_ai_client",)),
    Mutant("daemon-answer-shape-internal", "a daemon answer of an unknown shape is an internal error",
           "memories_tui/daemon/client.py",
           (("    except MISREAD:\n        raise incompatible(method) from None\n",
             "    except RecursionError:\n        raise incompatible(method) from None\n"),),
           ("tests/integration/test_daemon_compat.py",)),
    Mutant("quick-colour-of-the-daemon", "the daemon renders a command with colours whether or not the caller's "
           "stdout is a terminal",
           "memories_tui/cli/served_run.py",
           (("        self.color = request.color and not self.json\n", "        self.color = not self.json\n"),),
           (QUICK_CALL + "::test_colours_on_a_terminal_are_the_same",)),
    Mutant("quick-any-version", "the daemon renders the command line of a client of another version",
           "memories_tui/cli/served_run.py",
           (("            and build.get(\"version\") == request.version and", "            and"),),
           (QUICK_CALL + "::test_a_client_of_another_build_is_passed_back_and_told_as_ever",)),
    Mutant("quick-language-of-the-daemon", "the daemon renders a command line in its own language, not the caller's",
           "memories_tui/cli/served_run.py",
           (("    return resolve_language(setting, environ=request.env)\n",
             "    return resolve_language(setting)\n"),),
           (QUICK_CALL + "::test_in_the_callers_language",)),
    Mutant("daemon-build-unchecked", "a client of another version is served by the daemon as if it were its own",
           "memories_tui/daemon/server.py",
           (("        if (version, api) == (ours.get(\"version\"), ours.get(\"api\")):\n",
             "        if True:\n"),),
           ("tests/integration/test_daemon_handshake.py::"
            "test_a_client_of_another_build_is_told_to_restart_while_a_vault_is_unlocked",)),
    Mutant("daemon-never-restarted-for-client", "a daemon holding no unlocked vault is not restarted for a newer client",
           "memories_tui/daemon/client.py",
           (("        if daemon is None or daemon.kind != \"daemon\" or daemon.unlocked or daemon.config is None:\n",
             "        if True:\n"),),
           ("tests/integration/test_daemon_handshake.py::"
            "test_a_daemon_holding_no_unlocked_vault_restarts_for_the_newer_client",)),
    Mutant("daemon-prehandshake-given-work", "a daemon that names no version is given the call anyway",
           "memories_tui/daemon/client.py",
           (("            if response.getheader(VERSION_HEADER) is None and method not in RESTARTABLE:",
             "            if False:"),),
           ("tests/integration/test_daemon_compat.py::"
            "test_a_daemon_from_before_the_handshake_is_told_apart_before_it_is_given_work",)),
    Mutant("daemon-files-follow-links", "the daemon opens its lock file and log through a planted symbolic link",
           "memories_tui/daemon/paths.py",
           (("flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK", "flags | os.O_CREAT | os.O_NONBLOCK"),),
           (DAEMON_FILES + "::test_a_link_planted_at_a_daemon_file_is_refused_and_its_target_keeps_its_bytes",)),
    Mutant("daemon-socket-any-kind", "whatever is at the socket's name is removed as a stale socket",
           "memories_tui/daemon/paths.py",
           (("    if not stat.S_ISSOCK(info.st_mode):\n        raise _not_ours(path)\n", ""),),
           (DAEMON_FILES + "::test_a_folder_where_the_socket_goes_is_refused_clearly",)),
    Mutant("daemon-start-missing-config", "the detached daemon is named a config file that does not exist",
           "memories_tui/daemon/spawn.py",
           (('    named = ["--config", str(config)] if config.exists() or config.is_symlink() else []\n',
             '    named = ["--config", str(config)]\n'),),
           (DAEMON_FILES + "::test_unlock_in_a_home_without_a_config_file_starts_the_daemon",)),
    Mutant("sync-rewrites-touched-files", "source sync writes a new revision of a file touched but not changed",
           "memories_tui/engine/source_sync.py",
           (('        elif old.metadata.get("sha256") == src.sha256 and old.title == title and status != "moved" \\\n',
             '        elif False and old.metadata.get("sha256") == src.sha256 and status != "moved" \\\n'),),
           ("tests/integration/test_sources.py::test_sync_follows_new_changed_moved_deleted_and_recreated_files",)),
    Mutant("sync-move-is-delete-and-create", "a renamed file becomes a new card (its history left behind)",
           "memories_tui/engine/source_sync.py",
           (("        if old is None and src.sha256 in self.by_hash:", "        if False:"),),
           ("tests/integration/test_sources.py::test_sync_follows_new_changed_moved_deleted_and_recreated_files",)),
    Mutant("sync-gone-when-folder-vanished", "a folder that vanishes mid-sync marks its cards gone",
           "memories_tui/engine/source_sync.py",
           (('    return root.is_dir() and not (isinstance(where, str) and os.path.lexists(where))',
             '    return True'),),
           ("tests/integration/test_sources.py::test_a_folder_that_vanishes_mid_sync_marks_nothing_gone",)),
    Mutant("sync-stat-not-kept", "a file touched but not changed is read again at every sync",
           "memories_tui/engine/source_table.py",
           (("        return self.rows().get(rel) == [st.st_size, st.st_mtime_ns, st.st_ino, card.revision]",
             "        return False"),),
           ("tests/integration/test_source_stat.py",)),
    Mutant("sync-full-trusts-stat", "`source sync --full` skips files whose size and time look unchanged",
           "memories_tui/engine/source_sync.py",
           (("        if (not self.full and old is not None and rel in self.mine",
             "        if (old is not None and rel in self.mine"),),
           ("tests/integration/test_source_stat.py",)),
    Mutant("sync-quick-pass-misses-vanished", "a no-change sync does not notice a deleted file",
           "memories_tui/engine/source_stat.py",
           (("    if not _walk(walk, root, \"\", False) or len(walk.same) != len(mine):",
             "    if not _walk(walk, root, \"\", False):"),),
           ("tests/integration/test_sources.py::test_sync_follows_new_changed_moved_deleted_and_recreated_files",)),
    Mutant("import-duplicates-a-source", "importing a folder that is a source gives two cards per note",
           "memories_tui/engine/source_ops.py",
           (("        self._refuse_a_source(vault_id, path)\n", ""),),
           ("tests/integration/test_sources.py::test_importing_a_source_folder_is_refused_not_duplicated",)),
    Mutant("source-status-forgets-skips", "the status screen's sources show no skipped files",
           "memories_tui/engine/source_ops.py",
           (('            skipped = report.count("skipped") if whole else', '            skipped = 0 if whole else'),),
           ("tests/tui/test_status_screen.py::test_sources_show_in_status_and_gone_cards_are_marked_in_the_list",)),
    Mutant("source-add-failure-silent", "a source add whose first sync fails does not say the source stays",
           "memories_tui/cli/source_verbs.py",
           (("        except MemoriesError as exc:  # cards a batch", "        except NotImplementedError as exc:  # cards a batch"),),
           ("tests/integration/test_source_limits.py::test_source_add_whose_first_sync_fails_says_it_stays_and_how_to_remove_it",)),
    Mutant("source-keeps-torn-reads", "a file that changed while a sync read it is written half-read",
           "memories_tui/engine/source_sync.py",
           (("        if torn:  # an editor still writing", "        if False:  # an editor still writing"),),
           ("tests/integration/test_source_limits.py::test_a_file_changed_while_it_is_read_is_skipped_and_synced_next_time",)),
    Mutant("source-sync-ignores-room", "a sync writes every file of a folder bigger than the vault's limits",
           "memories_tui/engine/source_sync.py",
           (("        room, why = fitting(check_fits, wanted)", "        room, why = len(wanted), \"\""),),
           ("tests/integration/test_source_limits.py::test_a_folder_past_the_chunk_limit_takes_what_fits_and_lists_the_rest",)),
    Mutant("fitting-takes-too-many", "the halving that finds what fits keeps one item too many",
           "memories_tui/engine/fits.py",
           (("    return good, why\n", "    return min(good + 1, len(items)), why\n"),),
           ("tests/integration/test_source_limits.py::test_ingest_and_import_of_a_folder_past_the_limit_take_what_fits",)),
    Mutant("source-pending-uncounted", "the status screen counts no file changed since the last sync",
           "memories_tui/engine/source_stat.py",
           (("            pending += 1\n", "            pending += 0\n"),),
           ("tests/tui/test_source_pending.py::test_status_shows_files_changed_but_not_synced_yet",)),
    Mutant("source-duplicates-an-import", "a source added after an import of its folder makes a second card per note",
           "memories_tui/engine/source_sync.py",
           (("        self.imported = _imported_here(current, spec.path)\n",
             "        self.imported: dict[str, Record] = {}\n"),),
           ("tests/integration/test_sources.py::test_a_source_added_after_an_import_of_its_folder_adopts_the_cards",)),
    Mutant("notion-inner-zips-ignored", "the zips inside a large Notion export are taken as attachments",
           "memories_tui/engine/importers/notion.py",
           (('        if nested and name.suffix.lower() == ".zip":', "        if False:"),),
           ("tests/integration/test_import_faults.py::test_a_notion_export_split_into_zips_inside_the_zip_imports_every_part",)),
    Mutant("import-assets-ignored", "import --assets still lists attachments as skipped",
           "memories_tui/engine/importers/obsidian.py",
           (("        if not assets or path.is_symlink()", "        if True or path.is_symlink()"),),
           ("tests/integration/test_import_assets.py::test_obsidian_attachments_become_assets_linked_from_their_notes",)),
    Mutant("skip-reasons-untranslated", "a skipped file's reason stays English in a Chinese interface",
           "memories_tui/frontend/words.py",
           (("    return _(reason) if reason else reason", "    return reason"),),
           ("tests/integration/test_sources.py::test_skip_reasons_are_shown_in_the_interface_language",)),
    Mutant("import-not-idempotent", "importing an export again writes every note again",
           "memories_tui/engine/importers/common.py",
           (('            if old is not None and old.metadata.get("import_sha256") == meta["import_sha256"]:',
             '            if False:'),),
           ("tests/integration/test_importers.py::test_obsidian_import_keeps_front_matter_links_and_names_and_is_idempotent",)),
    Mutant("watch-no-catch-up", "the watcher syncs only on events: changes made while locked wait for the rescan",
           "memories_tui/engine/source_watch.py",
           (("        last_rescan: float | None = None", "        last_rescan: float | None = time.monotonic()"),),
           ("tests/integration/test_source_watch.py",)),
    Mutant("sync-background-keeps-locked-vault", "a vault locked and unlocked again keeps its schedule: no catch-up at unlock",
           "memories_tui/engine/sync_watch.py",
           (("                del self._seen[vault_id]\n", "                pass\n"),
            ("        if seen is None or seen.serial != self.engine.unlock_serial(vault_id):\n",
             "        if seen is None:\n")),
           ("tests/integration/test_sync_background.py",)),
    Mutant("sync-background-ignores-changes", "a local change waits for the next scheduled sync",
           "memories_tui/engine/sync_watch.py",
           (("        if self.engine.has_local_changes(vault_id):\n            return True\n", ""),),
           ("tests/integration/test_sync_background.py",)),
    Mutant("sync-background-mark-after", "an edit made while a background sync runs is counted as synced",
           "memories_tui/engine/sync_watch.py",
           (("            self.engine.background_sync(vault_id, self._stop)  # stop() ends a sync still reading at once\n",
             "            self.engine.background_sync(vault_id, self._stop)\n"
             "            mark = self.engine.local_change_mark(vault_id)\n"),),
           ("tests/integration/test_sync_background.py::test_an_edit_made_while_a_background_sync_runs_is_pushed_right_after_it",)),
    Mutant("sync-lock-is-last-error", "locking a vault while its background sync runs shows as the target's last error",
           "memories_tui/engine/sync_ops.py",
           (("            if exc.code == ErrorCode.VAULT_LOCKED:\n                raise  # locked while it ran",
             "            if False:\n                raise  # locked while it ran"),),
           ("tests/integration/test_sync_background.py::"
            "test_a_lock_while_a_background_sync_runs_is_not_the_targets_last_error",)),
    Mutant("sync-s3-key-in-url-kept", "an S3 endpoint URL with a key in it is stored in sync.json",
           "memories_tui/sync/targets.py",
           (('        if "@" in bucket or (endpoint_url and "@" in urlsplit(endpoint_url).netloc):\n',
             '        if False:\n'),),
           ("tests/integration/test_sync_cli.py::"
            "test_an_s3_url_or_endpoint_holding_a_key_is_refused_without_storing_or_repeating_it",)),
    Mutant("sync-passwd-replay", "an older join record put back by the target is adopted: an old passphrase comes back",
           "memories_tui/sync/join.py",
           (("    return stamp if type(stamp) is int and stamp > since else None\n",
             "    return stamp if type(stamp) is int else None\n"),),
           ("tests/integration/test_sync_passwd.py",)),
    Mutant("sync-passwd-unbound-wrap", "a join record whose wrap was swapped is adopted",
           "memories_tui/sync/join.py",
           (('    if not isinstance(value, dict) or value.get("wrap") != record.wrap_digest():\n        return None  #',
             '    if not isinstance(value, dict):\n        return None  #'),),
           ("tests/integration/test_sync_passwd.py",)),
    Mutant("sync-policy-last-applied-wins", "vault policy takes whichever change arrives last: devices disagree",
           "memories_tui/sync/policy.py",
           (("        if mine is None or change.ident > mine.ident:\n", "        if True:\n"),),
           ("tests/integration/test_sync_policy.py",)),
    Mutant("sync-renew-keeps-device", "--as-new-device keeps the old device id: the restored vault stays refused",
           "memories_tui/sync/renew.py",
           (("    state.device = secrets.token_hex(8)\n", ""),),
           ("tests/integration/test_sync_restored.py",)),
    Mutant("sync-device-behind-unchecked", "a vault that knows fewer of its own bundles than the target is synced on",
           "memories_tui/sync/chains.py", (("    if shown > state.own_seq:\n", "    if False:\n"),),
           ("tests/integration/test_sync_restored.py::"
            "test_a_home_put_back_with_its_state_folder_is_caught_by_the_sync_target",)),
    Mutant("sync-forget-for-good", "a forgotten device that writes again stays hidden from sync devices",
           "memories_tui/engine/sync_ops.py",
           (('                if isinstance(forgot_at, dict) and forgot_at.get("seq", -1) >= head.seq:\n',
             '                if isinstance(forgot_at, dict):\n'),),
           ("tests/integration/test_sync_cli.py::test_sync_forget_leaves_a_device_out_and_keeps_its_changes",)),
    Mutant("sync-now-not-served", "memories sync VAULT asks the passphrase while the daemon holds the vault",
           "memories_tui/cli/sync_verbs.py",
           (("    vault_id = ctx.unlock(ctx.args.vault)  # through the resident engine", "    vault_id = ctx.unlock(ctx.args.vault, local=True)  #"),),
           ("tests/integration/test_sync_background.py",)),
    # ---- write paths, ingest, CLI streams and parser, inject, export, egress (hardening round)
    Mutant("add-skips-write-limits", "memory add writes a note no index could hold (no fit check)",
           "memories_tui/engine/facade.py",
           (("        check_write_fits(self._context(vault_id), [(i.title, i.body) for i in items if is_searchable(i.kind)], ())\n",
             ""),),
           ("tests/integration/test_write_limits.py::test_a_15_mib_note_is_refused_and_search_keeps_working",)),
    Mutant("daemon-add-skips-write-limits", "the resident engine writes a note no index could hold",
           "memories_tui/engine/facade.py",
           (("        check_write_fits(self._context(vault_id), [(i.title, i.body) for i in items if is_searchable(i.kind)], ())\n",
             ""),),
           ("tests/integration/test_write_limits.py::test_the_resident_engine_refuses_the_same_write",)),
    Mutant("update-skips-write-limits", "memory update grows a record past the limits unchecked",
           "memories_tui/engine/facade.py",
           (("        if old is not None and is_searchable(old.kind) and (title is not None or body is not None):",
             "        if False:"),),
           ("tests/integration/test_write_limits.py::test_update_that_grows_past_the_limit_is_refused",)),
    Mutant("source-bytes-not-checked", "a write is checked against the chunk limit only, not source_mib",
           "memories_tui/engine/fits.py",
           (("        if after_bytes > cap_bytes:", "        if False:"),),
           ("tests/integration/test_write_limits.py::test_update_that_grows_past_the_limit_is_refused",)),
    Mutant("snapshot-counts-ignored", "records the saved index counted are taken as empty by the write check",
           "memories_tui/engine/fits.py",
           (("    chunks = sum(known[record_id][1] for record_id in live if record_id in known and record_id not in fresh)\n",
             "    chunks = 0\n"),),
           ("tests/integration/test_write_limits.py::test_usage_counted_from_the_saved_index_matches_a_fresh_count",)),
    Mutant("over-limit-names-no-record", "a vault over a limit does not say which record to shrink",
           "memories_tui/index/cache.py",
           (("                   title=title, id=record_id, chunks=len(keys), mib=nbytes / MIB)",
             '                   title="", id="?", chunks=len(keys), mib=nbytes / MIB)'),),
           ("tests/integration/test_write_limits.py::test_a_vault_over_a_lowered_limit_names_the_record_to_shrink",)),
    Mutant("ingest-follows-links-out", "folder ingest follows a file link out of the tree",
           "memories_tui/engine/folders.py",
           (("        outside = _link_leaves(Path(entry.path), tree) if entry.is_symlink() else None\n",
             "        outside = None\n"),),
           ("tests/integration/test_ingest_folder.py::test_links_to_files_outside_the_folder_are_skipped_not_read",)),
    Mutant("ingest-links-into-dot-folders", "a link inside the tree into .git is followed",
           "memories_tui/engine/folders.py",
           (('    if any(part.startswith(".") for part in inside.parts):', "    if False:"),),
           ("tests/integration/test_ingest_folder.py::test_links_to_files_outside_the_folder_are_skipped_not_read",)),
    Mutant("closed-stdout-runs-anyway", "a command runs with stdout closed (its report lost, a traceback)",
           "memories_tui/cli/run.py",
           (("    if sys.stdout is None:  # `memories … >&-`", "    if False:  # `memories … >&-`"),),
           ("tests/integration/test_cli_streams.py::test_closed_stdout_is_refused_before_anything_runs",)),
    Mutant("full-stdout-internal-error", "a full disk behind stdout is reported as an internal error",
           "memories_tui/cli/run.py",
           (("    except (BrokenPipeError, OutputFailed):\n        raise\n", "    except BrokenPipeError:\n        raise\n"),),
           ("tests/integration/test_cli_streams.py::test_a_full_disk_behind_stdout_is_one_sentence_on_stderr",)),
    Mutant("passphrase-file-after-verb-only", "--passphrase-file is not known before the verb",
           "memories_tui/cli/parser.py",
           (("    _passphrase_opt(parser, top=True)\n", ""),),
           ("tests/integration/test_cli_streams.py::test_global_options_work_before_the_verb",)),
    Mutant("verb-option-resets-global", "a verb's --passphrase-file default resets the one given before it",
           "memories_tui/cli/parser.py",
           (('parser.add_argument("--passphrase-file", metavar="FILE", default=None if top else argparse.SUPPRESS,',
             'parser.add_argument("--passphrase-file", metavar="FILE", default=None,'),),
           ("tests/integration/test_cli_streams.py::test_global_options_work_before_the_verb",)),
    Mutant("usage-error-memories-twice", "a top-level usage error says `memories:` twice",
           "memories_tui/cli/parser.py",
           (('        command = self.prog.removeprefix("memories").strip()', "        command = self.prog"),),
           ("tests/integration/test_cli_streams.py::test_usage_errors_say_memories_once",)),
    Mutant("inject-reads-any-size", "inject reads a client config of any size",
           "memories_tui/skill/config_files.py",
           (("        data = read_limited(path, MAX_CONFIG_BYTES,", "        data = read_limited(path, 1 << 40,"),),
           ("tests/integration/test_inject_cli.py::test_a_fifo_or_a_huge_file_at_a_client_config_is_refused_without_reading_it",)),
    Mutant("inject-numbers-as-floats", "inject rewrites 1e400 as Infinity (numbers parsed as floats)",
           "memories_tui/skill/config_files.py",
           (("        document = json.loads(raw, object_pairs_hook=_no_duplicate_keys, parse_float=_parse_float,\n"
             "                              parse_int=_parse_int, parse_constant=_Number)",
             "        document = json.loads(raw, object_pairs_hook=_no_duplicate_keys)"),),
           ("tests/integration/test_inject_cli.py::test_numbers_in_a_client_config_are_written_back_as_they_were",)),
    Mutant("dropped-egress-is-empty", "a dropped egress table reads as an empty log",
           "memories_tui/engine/egress_ops.py",
           (("    if not vault.egress.exists() and vault.settings().get(EGRESS_MARK):", "    if False:"),),
           ("tests/integration/test_egress.py::test_a_dropped_log_table_is_damage_not_an_empty_log",)),
    Mutant("unlock-does-not-mark-the-log", "a vault from before the mark is never marked at unlock",
           "memories_tui/engine/facade.py",
           (("            mark_kept_log(vault)\n", ""),),
           ("tests/integration/test_egress.py::test_a_vault_from_the_previous_version_is_marked_at_unlock",)),
    Mutant("export-com-superscript", "an export names a COM¹ title COM¹.md (a Windows device)",
           "memories_tui/filenames.py",
           (('_DIGITS = (*(str(i) for i in range(10)), "\\u00b9", "\\u00b2", "\\u00b3")',
             "_DIGITS = tuple(str(i) for i in range(10))"),),
           ("tests/integration/test_export.py::test_names_are_safe_unique_and_the_front_matter_is_complete",)),
    Mutant("vault-uri-strict-utf8", "a vault file is opened through a URI that must be UTF-8",
           "memories_tui/vault/header.py",
           (("urllib.parse.quote(os.fsencode(path.resolve()))", "urllib.parse.quote(str(path.resolve()))"),),
           ("tests/integration/test_non_utf8_paths.py",)),
    Mutant("json-raw-surrogates", "--json prints a non-UTF-8 path byte raw (output not UTF-8)",
           "memories_tui/cli/output.py",
           (('    return _SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text)\n', "    return text\n"),),
           ("tests/integration/test_non_utf8_paths.py",)),
    # ---- sync between devices
    Mutant("sync-head-rollback-unchecked", "a head older than what this vault read is not taken for a rollback",
           "memories_tui/sync/chains.py", (("        if head.seq < seq:\n", "        if False:\n"),),
           ("tests/integration/test_sync_tamper.py::test_a_replayed_head_and_a_rolled_back_chain_are_refused",)),
    Mutant("sync-delete-beats-edit", "a deletion wins over a concurrent edit",
           "memories_tui/sync/revtree.py",
           (("        return (not self.deleted, self.stamp, self.device, self.rev_id)",
             "        return (self.deleted, self.stamp, self.device, self.rev_id)"),),
           ("tests/integration/test_sync_folder.py::test_an_edit_beats_a_concurrent_delete_and_the_delete_is_reported",)),
    Mutant("sync-state-outside-manifest", "the sealed sync state is left out of the vault manifest",
           "memories_tui/vault/integrity.py",
           (("    if sync is not None:  # vaults", "    if False:  # vaults"),),
           ("tests/integration/test_sync_tamper.py::test_the_sync_state_cannot_be_rolled_back_apart_from_the_records",)),
    Mutant("sync-resolve-names-one-parent", "a resolving revision names only the winner, so the conflict stays",
           "memories_tui/sync/merge.py",
           (("        if record.record_id in state.resolving:\n", "        if False:\n"),),
           ("tests/integration/test_sync_folder.py::test_resolving_a_conflict_ends_it_on_every_device",
            "tests/integration/test_sync_folder.py::test_keeping_the_winner_ends_the_conflict_on_every_device")),
    Mutant("manifest-sum-not-adjusted", "a write re-MACs the row sum it started from, not the rows it changed",
           "memories_tui/vault/manifest.py",
           (("        total += mac if sign > 0 else -mac\n", "        pass\n"),),
           ("tests/integration/test_write_verify.py::test_back_to_back_writes_pass_over_no_rows_but_their_own",)),
    Mutant("sync-rows-table-forgets-records", "creating the sync rows table mid-write forgets the records noted",
           "memories_tui/vault/sync_rows.py",
           (("        rowmac.watch(conn, fresh=False)  # the records", "        rowmac.watch(conn)  # the records"),),
           ("tests/integration/test_sync_rows.py::test_a_state_of_the_first_form_moves_to_rows_and_syncs_on",)),
    Mutant("sync-trusts-its-own-writes-only", "a sync compares only the records written here, even after "
           "another process wrote", "memories_tui/vault/store.py",
           (("        self.touched.unknown()  # another process", "        pass  # another process"),),
           ("tests/integration/test_sync_rows.py::test_an_edit_by_another_process_is_still_found",)),
    Mutant("sync-failure-forgets-edits", "a sync that fails still counts the records it compared as synced",
           "memories_tui/vault/sync_rows.py",
           (("        if not ok:\n            self._ids = None\n", "        if not ok:\n            pass\n"),),
           ("tests/integration/test_sync_rows.py::test_a_failed_sync_forgets_nothing_it_was_to_push",)),
    Mutant("sync-state-base-unchecked", "two syncs of one vault at once may both commit a bundle under one number",
           "memories_tui/vault/sync_rows.py",
           (("    if read_state(conn, keys) != change.base:\n", "    if False:\n"),),
           ("tests/integration/test_sync_tamper.py::"
            "test_two_syncs_of_one_vault_at_once_never_commit_two_versions_of_a_bundle",)),
    Mutant("sync-passwd-join-record-stale", "vault passwd leaves the old wrap in the sync target",
           "memories_tui/engine/facade.py", (("        self.refresh_join_record(ref, new)\n", ""),),
           ("tests/integration/test_sync_folder.py::"
            "test_a_passphrase_change_reaches_the_target_for_devices_joining_later",)),
    Mutant("webdav-temporary-listed", "a WebDAV upload still under its temporary name is listed as an object",
           "memories_tui/sync/webdav.py", (("            if not _is_temporary(leaf):\n", "            if True:\n"),),
           ("tests/integration/test_sync_webdav.py::test_an_upload_still_under_its_temporary_name_is_not_there_yet",)),
    Mutant("webdav-401-unclear", "a WebDAV 401 is reported as an unreachable server, not as wrong credentials",
           "memories_tui/sync/webdav.py", (("        if status == 401:\n", "        if status == 4010:\n"),),
           ("tests/integration/test_sync_webdav.py::test_a_wrong_password_is_a_clear_error_that_does_not_show_it",)),
    Mutant("webdav-folder-not-remade", "an upload into a folder removed since this process made it fails",
           "memories_tui/sync/webdav.py",
           (("        if response.status_code == 409 and self._made:", "        if False:"),),
           ("tests/integration/test_sync_webdav.py::test_a_folder_removed_on_the_server_is_made_again_by_the_next_upload",)),
    Mutant("webdav-url-credentials", "a WebDAV URL with a user and password in it is not refused by the sync target",
           "memories_tui/sync/webdav.py",
           (("    if parts.username is not None or parts.password is not None:\n", "    if False:\n"),),
           ("tests/integration/test_sync_webdav.py::test_a_url_with_credentials_in_it_is_refused_without_repeating_them",)),
    Mutant("sync-revision-reused", "a record brought back after a delete gets revision 1 again",
           "memories_tui/sync/state.py",
           (("        self.high = max(self.high, self.local or 0) + 1", "        self.high = (self.local or 0) + 1"),),
           ("tests/integration/test_sync_folder.py::test_an_edit_beats_a_concurrent_delete_and_the_delete_is_reported",)),
    Mutant("sync-merge-overlap-taken", "overlapping edits of one body merge silently (one side's lines lost)",
           "memories_tui/sync/threeway.py",
           (("            lines.extend(chunks[2])\n        else:\n            return None\n",
             "            lines.extend(chunks[2])\n        else:\n            lines.extend(chunks[1])\n"),),
           ("tests/integration/test_sync_merge.py::test_overlapping_edits_and_two_new_titles_stay_a_conflict",)),
    Mutant("sync-merge-title-both-sides", "a title changed on both sides merges to one side's instead of a conflict",
           "memories_tui/sync/threeway.py",
           (("        return right\n    return _CONFLICT\n", "        return right\n    return left\n"),),
           ("tests/integration/test_sync_merge.py::test_overlapping_edits_and_two_new_titles_stay_a_conflict",)),
    Mutant("sync-merge-id-per-device", "two devices merging one pair write two different merged revisions",
           "memories_tui/sync/threeway.py",
           (("MERGE_DEVICE, False, payload.encode()), parents",
             "MERGE_DEVICE, False, payload.encode() + str(id(a)).encode()), parents"),),
           ("tests/integration/test_sync_merge.py::test_two_devices_merging_the_same_pair_on_their_own_write_one_revision",)),
    Mutant("sync-merge-ancestor-forgotten", "the content a later merge needs as its ancestor is not kept",
           "memories_tui/sync/merge.py", (("        bases[winner.rev_id] = doc.local\n", "        pass\n"),),
           ("tests/integration/test_sync_merge.py::test_two_devices_merging_the_same_pair_on_their_own_write_one_revision",)),
    Mutant("sync-keep-both-no-copy", "keep both ends the conflict without making the other revision a record",
           "memories_tui/engine/conflict_ops.py",
           (("        made = self.add_records(vault_id, notes) if notes else []", "        made = []"),),
           ("tests/integration/test_sync_cli.py::test_keep_both_makes_the_losing_revision_a_new_record_on_every_device",)),
    Mutant("sync-keep-both-drops-files", "keep both ends a file's conflict without keeping the other file",
           "memories_tui/engine/conflict_ops.py",
           (('        files = [vault.add(c) for c in copies if c.kind == "asset"]', "        files = []"),),
           ("tests/integration/test_sync_ux.py::test_keep_both_keeps_a_file_asset_too_with_its_bytes",)),
    Mutant("sync-pending-never-counted", "a sync does not note the change counter it ended at",
           "memories_tui/engine/sync_ops.py",
           (("                                   counter_at_sync=vault.change_counter(), left=report.left, pending=None))",
             "                                   left=report.left, pending=None))"),),
           ("tests/integration/test_sync_ux.py::test_pending_counts_local_writes_since_the_last_sync_and_drops_to_zero_after_one",)),
    Mutant("sync-ctrl-c-not-cancelling", "ctrl+c during a sync does not tell the sync to stop",
           "memories_tui/cli/sync_verbs.py",
           (("                                         \"this sync did not send yet, the next sync sends.\")) from None\n"
             "            cancel.set()",
             "                                         \"this sync did not send yet, the next sync sends.\")) from None\n"
             "            pass"),),
           ("tests/integration/test_sync_ux.py::test_ctrl_c_during_a_sync_changes_nothing_and_the_next_sync_pushes_everything",)),
    Mutant("tui-merge-whole-texts", "the TUI's merge ignores the common ancestor and marks both whole texts",
           "memories_tui/tui/screens/conflict.py",
           (("    if other.base is not None:\n        return marked_merge", "    if False:\n        return marked_merge"),),
           ("tests/tui/test_conflicts.py::test_merge_puts_markers_only_around_the_part_both_devices_changed",)),
    Mutant("tui-conflict-unmarked", "the records list does not mark a record with a conflict",
           "memories_tui/tui/screens/records.py",
           (('("⇄ " if record.id in self.conflicted else "")', '""'),),
           ("tests/tui/test_conflicts.py::test_keep_the_other_revision",)),
    Mutant("mcp-tool-bounds-dropped", "the MCP server publishes a tool's parameters without the table's bounds",
           "memories_tui/access/mcp_server.py",
           (("Field(description=arg.description, ge=arg.ge, le=arg.le)", "Field(description=arg.description)"),),
           ("tests/integration/test_mcp_tool_table.py::test_each_tools_input_schema_is_its_entry_in_the_table",)),
    Mutant("remote-local-not-forwarded", "the daemon's client engine leaves a LocalAPI method to the protocol's empty body",
           "memories_tui/daemon/remote_engine.py",
           (('    if _name != "home":  # this object\'s own\n', '    if _name not in ("home", "list_vaults"):\n'),),
           ("tests/unit/test_remote_engine.py::test_what_needs_no_vault_key_runs_on_an_engine_of_this_process",)),
    Mutant("snippet-starts-mid-word", "a search snippet may start inside a word (\"…ess s and search\")",
           "memories_tui/tui/text.py",
           (("    if spans and 0 < start < spans[0][0] and _latin(text[start - 1]) and _latin(text[start]):\n",
             "    if False:\n"),),
           ("tests/tui/test_narrow_and_wrapping.py::test_a_snippet_starts_at_a_word_boundary",)),
    Mutant("tui-sync-dialog-esc-does-not-cancel", "esc in the sync dialog only says \"Cancelling…\"; the sync goes on",
           "memories_tui/tui/screens/sync_now.py",
           (("        if self.running and not self.cancel.is_set():\n            self.cancel.set()\n",
             "        if self.running and not self.cancel.is_set():\n            Event.set(threading.Event())\n"),
            ("import threading\n", "import threading\nfrom threading import Event\n")),
           ("tests/tui/test_sync_now_dialog.py::test_esc_cancels_a_sync_whose_server_stopped_answering",)),
    Mutant("tui-closed-sync-dialog-says-nothing", "a sync whose dialog was closed while it ran ends without a notice",
           "memories_tui/tui/screens/sync_now.py",
           (("            self.host.call_from_thread(self.host.notify, text, title=_(\"Sync\"), markup=False)\n",
             "            pass\n"),),
           ("tests/tui/test_sync_now_dialog.py::"
            "test_a_second_esc_closes_while_an_upload_is_held_and_the_outcome_comes_as_a_notice",)),
    Mutant("tui-records-stale-after-sync", "the records list shows a background sync's notes only once left and opened",
           "memories_tui/tui/app.py",
           (("        if isinstance(self.screen, RecordsScreen) and self.screen.vault_id == vault_id:\n"
             "            self.screen.action_reload()\n",
             "        if isinstance(self.screen, RecordsScreen) and self.screen.vault_id == vault_id:\n"
             "            pass\n"),),
           ("tests/tui/test_sync_now_dialog.py::"
            "test_the_records_list_shows_what_a_background_sync_brought_without_leaving_it",)),
    Mutant("tui-reload-rerenders-the-reader", "a reload of the records list scrolls the note being read to its top",
           "memories_tui/tui/screens/records.py",
           (("        with table.prevent(DataTable.RowHighlighted):  # rebuilding moves the cursor: below decides what is "
             "shown\n", "        if True:\n"),),
           ("tests/tui/test_sync_now_dialog.py::"
            "test_the_records_list_shows_what_a_background_sync_brought_without_leaving_it",)),
    Mutant("tui-join-not-cancellable", "esc in the join dialog does not stop a join waiting on its server",
           "memories_tui/tui/screens/join.py",
           (("name=name, cancel=self.cancel,", "name=name, cancel=None,"),),
           ("tests/tui/test_join_dialog.py::test_esc_cancels_a_join_whose_server_stopped_answering",)),
    Mutant("tui-join-failure-leaves-vault-unlocked", "a join that failed after it made the vault leaves it "
           "unlocked behind the picker", "memories_tui/tui/screens/join.py",
           (("                engine.lock(made)  # vault left it unlocked", "                pass  # vault left it unlocked"),),
           ("tests/tui/test_join_dialog.py::test_a_join_stopped_after_the_vault_was_made_leaves_it_locked",)),
    Mutant("tui-target-dialog-skips-passphrase", "the sync target dialog never asks the passphrase it needs",
           "memories_tui/tui/screens/sync_target.py",
           (("            field.display = True\n", "            field.display = False\n"),),
           ("tests/tui/test_sync_target_dialog.py::test_the_passphrase_is_asked_only_once_it_changed_since_the_unlock",)),
    Mutant("cli-typo-gets-dash-hint", "a mistyped option gets the hint about queries that start with `-`",
           "memories_tui/cli/parser.py", (("        _unknown_option(parser, argv, extras)\n", ""),),
           ("tests/integration/test_cli_polish.py::test_a_mistyped_option_names_the_verbs_options_and_the_nearest",)),
    Mutant("tui-forget-without-asking", "the devices screen forgets the highlighted device whatever the answer",
           "memories_tui/tui/screens/sync_devices.py", (("            if yes:\n                self.busy = True",
                                                        "            if True:\n                self.busy = True"),),
           ("tests/tui/test_sync_devices_screen.py::test_lists_both_devices_and_forgets_the_other_one_after_asking",)),
    Mutant("tui-forget-this-device", "the devices screen offers to forget this very device",
           "memories_tui/tui/screens/sync_devices.py", (("        if device.this_device:\n", "        if False:\n"),),
           ("tests/tui/test_sync_devices_screen.py::test_lists_both_devices_and_forgets_the_other_one_after_asking",)),
    Mutant("tui-c-only-says-no-conflict", "c on a record without a conflict does not find the one with it",
           "memories_tui/tui/screens/records.py", (("        table.move_cursor(row=row)\n        self.notify(_n(",
                                                   "        self.notify(_n("),),
           ("tests/tui/test_sync_devices_screen.py::test_c_on_a_record_without_a_conflict_goes_to_the_one_with_it",)),
    Mutant("tui-bug-leaves-target-dialog-checking", "a bug under the set-up-sync dialog leaves it on 'Checking…'",
           "memories_tui/tui/screens/sync_target.py",
           (("        except Exception as exc:  # noqa: BLE001 - a bug too", "        except MemoriesError as exc:  # a bug too"),
            ("self._failed, as_error(exc, self.memories.engine.home))", "self._failed, exc)")),
           ("tests/tui/test_sync_dialog_bugs.py::test_a_bug_while_adding_a_target_is_said_in_the_dialog",)),
    Mutant("tui-passwd-no-confirmation", "the TUI's passphrase change takes a new passphrase typed once",
           "memories_tui/tui/screens/passphrase.py", (("        if new != again:\n", "        if False:\n"),),
           ("tests/tui/test_change_passphrase.py::test_mistakes_are_said_and_change_nothing_then_the_new_passphrase_"
            "opens_it",)),
    Mutant("tui-passwd-stale-target-fails", "a target out of reach makes the TUI say the change failed though it "
           "was made", "memories_tui/tui/screens/passphrase.py",
           (("        if error is None or error.code == ErrorCode.SYNC_JOIN_RECORD_STALE:",
             "        if error is None:"),),
           ("tests/tui/test_change_passphrase.py::test_a_target_out_of_reach_is_said_and_the_passphrase_stays_changed",)),
    Mutant("tui-passwd-esc-ignored-while-busy", "esc cannot close the passphrase dialog while the target holds "
           "the new wrap back", "memories_tui/tui/screens/passphrase.py",
           (("        self.closed = self.busy\n        self.dismiss(False)\n",
             "        if not self.busy:\n            self.dismiss(False)\n"),),
           ("tests/tui/test_change_passphrase.py::test_esc_closes_while_the_target_holds_the_new_wrap_back_and_the_"
            "outcome_comes_as_a_notice",)),
    Mutant("sync-stale-join-record-stays", "a sync never puts back the wrap a cut-short `vault passwd` failed to "
           "put in the target", "memories_tui/engine/sync_ops.py",
           (("                    republish_if_behind(watched, vault, record)\n", "                    pass\n"),),
           ("tests/integration/test_sync_folder.py::test_a_passphrase_change_reaches_the_target_for_devices_joining_"
            "later",)),
    Mutant("sync-stale-header-wrap-put-back", "a process unlocked before two passphrase changes elsewhere puts its "
           "own first passphrase in the target as the newest", "memories_tui/engine/passphrase_wrap.py",
           (("    header = vault.sync_read(lambda conn, _keys: header_from(conn, vault.path))\n",
             "    header = vault.header\n"),),
           ("tests/integration/test_sync_folder.py::test_a_process_unlocked_before_two_changes_elsewhere_never_puts_"
            "its_passphrase_back",)),
    Mutant("sync-held-wrap-stays-old", "the process that changed the passphrase keeps the old wrap for the target "
           "until a new unlock", "memories_tui/engine/sync_ops.py",
           (("            held.vault.keys.join_wrap = vault.keys.join_wrap", "            pass"),),
           ("tests/integration/test_sync_folder.py::test_the_process_that_changed_the_passphrase_mends_the_target_"
            "without_a_new_unlock",)),
    Mutant("tui-device-only-without-asking", "the TUI turns device-only over even when the question is answered no",
           "memories_tui/tui/data_actions.py", (("            if not yes:\n                return\n", ""),),
           ("tests/tui/test_device_only_policy.py::test_device_only_is_turned_on_and_off_after_asking",)),
    Mutant("sync-large-objects-fetched-ahead", "objects are fetched ahead of their turn whatever their size (a target "
           "makes a pull hold several of 1 GiB at once)",
           "memories_tui/sync/ahead.py", (("            return self._get(name, AHEAD_BYTES)", "            return self._get(name)"),),
           ("tests/integration/test_sync_target_bounds.py::test_large_objects_are_read_one_at_a_time_not_ahead_of_their_turn",
            "tests/unit/test_sync_ahead.py::test_an_object_over_the_fetch_ahead_bound_is_read_in_its_turn_only")),
    Mutant("sync-join-record-unbounded", "the join record may be as large as a bundle (parsed at every sync)",
           "memories_tui/sync/bounds.py", (("        limit = MAX_JOIN_BYTES", "        limit = MAX_OBJECT_BYTES"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_join_record_past_its_small_bound_is_refused_before_it_is_parsed",)),
    Mutant("sync-join-kdf-blamed-on-the-vault", "altered KDF parameters in the join record are reported as the "
           "user's vault file (vault_invalid)",
           "memories_tui/sync/join.py", (("        except VaultError:  # key derivation parameters Memories never writes",
                                          "        except KeyboardInterrupt:  # key derivation parameters Memories never writes"),),
           ("tests/integration/test_sync_target_bounds.py::test_a_join_record_altered_where_it_is_in_clear_is_refused_as_"
            "tampering",)),
    Mutant("sync-empty-folders-not-counted", "empty folders a replication peer made do not count towards the listing "
           "bound", "memories_tui/sync/folder.py", (("                        seen += 1\n",
                                                     "                        seen += not entry.is_dir()\n"),),
           ("tests/integration/test_sync_target_bounds.py::test_empty_folders_count_towards_the_listing_bound",)),
    Mutant("sync-cut-short-reported-whole", "a sync stopped between two parts reports nothing left (and status "
           "shows nothing pending)", "memories_tui/sync/run.py", (("    if not done.whole:  # stopped between two parts",
                                                                  "    if False:  # stopped between two parts"),),
           ("tests/integration/test_sync_stream.py::test_ctrl_c_during_a_long_first_push_sends_what_was_committed_"
            "and_the_next_sync_the_rest",)),
    Mutant("sync-join-cancel-hides-the-vault", "ctrl+c in a join after the vault was made does not say so",
           "memories_tui/engine/sync_ops.py", (("        except CancelledError:  # the vault is here now",
                                                "        except KeyboardInterrupt:  # the vault is here now"),),
           ("tests/integration/test_sync_ux.py::test_ctrl_c_during_a_cli_join_says_which_vault_it_made_and_the_next_"
            "sync_finishes_it",)),
    Mutant("passwd-stale-target-fails", "vault passwd whose target could not take the new wrap exits 1 (the "
           "passphrase is changed)", "memories_tui/cli/vault_verbs.py",
           (("        if exc.code != ErrorCode.SYNC_JOIN_RECORD_STALE:", "        if True:"),),
           ("tests/integration/test_sync_ux.py::test_a_passphrase_change_the_target_could_not_take_is_a_warning_not_a_"
            "failure",)),
    Mutant("sync-target-in-the-home", "a folder target may be the home, inside it or around it",
           "memories_tui/engine/sync_place.py", (("    if spec.is_s3 or spec.is_webdav:", "    if True:"),),
           ("tests/integration/test_sync_cli.py::test_a_folder_that_is_in_or_around_the_home_is_refused_with_what_to_do",)),
    Mutant("sync-re-add-blanks-status", "adding the same target again forgets its last sync",
           "memories_tui/sync/registry.py",
           (("        if before is not None and (before.url, before.endpoint_url) == (entry.url, entry.endpoint_url):",
             "        if False:"),),
           ("tests/integration/test_sync_cli.py::test_adding_the_same_target_again_keeps_the_status_and_another_target_"
            "starts_blank",)),
    Mutant("resolve-keep-deletion-refused", "--keep of a listed deletion is refused", "memories_tui/sync/types.py",
           (("        return [k for k in self.kept if k.revision == keep] or [",
             "        return [k for k in self.kept if k.revision == keep and not k.deleted] or ["),
            ("            k for k in self.kept if keep and k.revision.startswith(keep)]",
             "            k for k in self.kept if keep and k.revision.startswith(keep) and not k.deleted]")),
           ("tests/integration/test_sync_resolve_keep.py::test_keeping_a_listed_deletion_deletes_the_record_on_every_device",)),
    Mutant("resolve-delete-closes-one-leaf", "deleting a record being resolved names only the winner as parent "
           "(a losing edit comes back)", "memories_tui/sync/merge.py",
           (("            parents = (tuple(sorted(rev.rev_id for rev in doc.tree.leaves())) if record_id in state.resolving",
             "            parents = (tuple(sorted(rev.rev_id for rev in doc.tree.leaves())) if False"),),
           ("tests/integration/test_sync_resolve_keep.py::test_keeping_a_listed_deletion_deletes_the_record_on_every_device",)),
    Mutant("tui-keep-other-ignores-a-deletion", "o in the conflict view does nothing when the other side is a "
           "deletion", "memories_tui/tui/screens/conflict.py",
           (("        self.deletion = next((k for k in conflict.kept if k.deleted), None) if self.other is None else None",
             "        self.deletion = None"),),
           ("tests/tui/test_conflicts.py::test_o_lets_a_deletion_from_another_device_win_after_asking",)),
)

def _copy_repo(dest: Path) -> Path:
    repo = dest / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".models")
    repo.mkdir()
    for name in ("memories_tui", "tests"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    for name in ("pyproject.toml", "config.example.toml"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, repo / name)
    models = ROOT / "tests" / ".models"
    if models.exists():
        (repo / "tests" / ".models").symlink_to(models, target_is_directory=True)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (dest / "shared").symlink_to(shared, target_is_directory=True)
    return repo


def _mutated_text(text: str, mutant: Mutant) -> tuple[str, str | None]:
    """The file text with the mutant's edits applied, or a reason why they do not apply."""
    for old, new in mutant.edits:
        count = text.count(old)
        if count != 1:
            return text, f"{mutant.file}: expected text found {count} times (must be exactly once): {old.strip()[:70]!r}"
        if old == new:
            return text, f"{mutant.file}: the edit changes nothing"
        text = text.replace(old, new)
    return text, None


def _apply(repo: Path, mutant: Mutant) -> str | None:
    """Apply the edits; return a reason when the mutant is stale."""
    path = repo / mutant.file
    if not path.is_file():
        return f"{mutant.file} does not exist"
    text, reason = _mutated_text(path.read_text(encoding="utf-8"), mutant)
    if reason:
        return reason
    path.write_text(text, encoding="utf-8")
    return None


def check(mutant: Mutant, root: Path = ROOT) -> list[str]:
    """Why `mutant` would not run as meant against the code under `root` (empty: it would).

    The edits must each match exactly once and leave valid Python, and every test it names
    must exist (a file, or a test function in it), so that neither a refactor of the product
    nor a renamed test silently retires the mutant."""
    problems: list[str] = []
    path = root / mutant.file
    if not path.is_file():
        problems.append(f"{mutant.file} does not exist")
    else:
        text, reason = _mutated_text(path.read_text(encoding="utf-8"), mutant)
        if reason:
            problems.append(reason)
        elif path.suffix == ".py":
            try:
                compile(text, str(path), "exec")
            except SyntaxError as exc:
                problems.append(f"{mutant.file}: the mutated code does not compile ({exc.msg}, line {exc.lineno})")
    for test in mutant.tests:
        file, _, name = test.partition("::")
        test_path = root / file
        if not test_path.exists():
            problems.append(f"test {file} does not exist")
            continue
        name = name.split("::")[-1].split("[")[0]
        if name and not re.search(rf"^\s*(?:async\s+)?def {re.escape(name)}\(", test_path.read_text(encoding="utf-8"),
                                  re.M):
            problems.append(f"test {test}: no function {name} in {file}")
    return problems


def check_all(mutants: tuple[Mutant, ...] = MUTANTS, verbose: bool = False) -> int:
    """`--check`: one line when all is well, one line per problem otherwise."""
    seen: set[str] = set()
    bad = 0
    for m in mutants:
        problems = check(m) + ([f"duplicate mutant id {m.id}"] if m.id in seen else [])
        seen.add(m.id)
        bad += bool(problems)
        for problem in problems:
            print(f"STALE  {m.id}: {problem}")
        if verbose and not problems:
            print(f"ok     {m.id}")
    if bad:
        print(f"scripts/mutants.py --check: {bad} of {len(mutants)} mutants no longer apply. Update their edits "
              "(text replacements) or tests in scripts/mutants.py to the new code, keeping the bug each one plants, "
              "then run the mutant: scripts/mutants.py ID.")
        return 1
    print(f"scripts/mutants.py --check: all {len(mutants)} mutants apply (each edit matches once and compiles; "
          "their tests exist)")
    return 0


def _pytest(repo: Path, tests: tuple[str, ...], *, first_failure: bool) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
    env["PYTHONPATH"] = str(repo)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", "-rfE"]
    if first_failure:
        cmd.append("-x")
    try:
        done = subprocess.run([*cmd, *tests], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_SECONDS} s"
    lines = [line for line in (done.stdout + done.stderr).strip().splitlines() if line.strip()]
    failed = [line.split(" - ")[0] for line in lines
              if line.startswith(("FAILED tests/", "ERROR tests/"))]  # not log lines that start with ERROR
    summary = lines[-1] if lines else ""
    return done.returncode, summary + (f" [{'; '.join(failed[:5])}]" if failed else "")


def run(selected: list[Mutant], keep: bool, baseline: bool = True) -> int:
    union = tuple(dict.fromkeys(t for m in selected for t in m.tests))
    with tempfile.TemporaryDirectory(prefix="memories-mutants-") as tmp:
        if baseline:
            base = Path(tmp) / "baseline"
            base.mkdir()
            repo = _copy_repo(base)
            started = time.monotonic()
            code, tail = _pytest(repo, union, first_failure=False)
            print(f"baseline (no mutant), {len(union)} test paths: exit {code} · {tail} "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
            if code != 0:
                print("The unmutated code fails these tests; fix that first.", file=sys.stderr)
                return 2
        else:
            print("baseline skipped (--no-baseline): a 'killed' verdict assumes the tests pass unmutated")
        verdicts: dict[str, str] = {}
        for mutant in selected:
            work = Path(tmp) / mutant.id
            work.mkdir()
            repo = _copy_repo(work)
            stale = _apply(repo, mutant)
            if stale:
                verdicts[mutant.id] = "STALE"
                print(f"STALE     {mutant.id}: {stale}", flush=True)
                continue
            started = time.monotonic()
            code, tail = _pytest(repo, mutant.tests, first_failure=True)
            seconds = time.monotonic() - started
            verdict = {0: "SURVIVED", 1: "killed"}.get(code, "ERROR")
            verdicts[mutant.id] = verdict
            print(f"{verdict:9} {mutant.id}: {mutant.description} · {tail} ({seconds:.0f} s)", flush=True)
            if not keep:
                shutil.rmtree(work, ignore_errors=True)
        if keep:
            kept = Path(tempfile.mkdtemp(prefix="memories-mutants-kept-"))
            shutil.copytree(tmp, kept, dirs_exist_ok=True, symlinks=True)
            print(f"copies kept in {kept}")
    killed = sum(v == "killed" for v in verdicts.values())
    print(f"\n{killed}/{len(verdicts)} mutants killed", end="")
    others = {v: [k for k, x in verdicts.items() if x == v] for v in ("SURVIVED", "STALE", "ERROR")}
    print("".join(f"; {v.lower()}: {', '.join(ids)}" for v, ids in others.items() if ids))
    return 0 if killed == len(verdicts) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", help="mutant ids to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant still applies to the current code (no tests run)")
    ap.add_argument("--verbose", action="store_true", help="with --check: also list the mutants that apply")
    ap.add_argument("--keep", action="store_true", help="keep the mutated copies for inspection")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated run (only when the suite is known to be green)")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.id:28} {m.description}\n{'':28} {m.file} → {' '.join(m.tests)}")
        return 0
    if args.check:
        return check_all(verbose=args.verbose)
    known = {m.id: m for m in MUTANTS}
    unknown = [i for i in args.ids if i not in known]
    if unknown:
        print(f"unknown mutant id(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    selected = [known[i] for i in args.ids] if args.ids else list(MUTANTS)
    return run(selected, args.keep, baseline=not args.no_baseline)


if __name__ == "__main__":
    sys.exit(main())
