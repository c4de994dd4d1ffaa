"""The policy merge rule (sync/policy.py): a change that arrives after one that replaced it
(a device behind reads another's snapshot, or gets the chains in another order) is old news,
not a change made "on two devices at once"; two changes that did not see each other still are."""

from __future__ import annotations

import itertools

from memories_tui.sync import policy
from memories_tui.sync.hlc import Clock, Stamp
from memories_tui.sync.policy import Change


def _change(value: bool, ms: int, device: str, base: Change | None = None) -> Change:
    return Change("device_only", value, Stamp(ms, 0), device, base.ident if base is not None else None)


def _merge(settings: dict, incoming: list[Change]) -> policy.Outcome:
    return policy.merge(settings, Clock(Stamp(0, 0), 0), "c" * 16, incoming)


ON = _change(True, 10, "a" * 16)
OFF = _change(False, 20, "b" * 16, ON)  # b saw a's change
AGAIN = _change(True, 30, "d" * 16, OFF)  # d saw b's


def test_a_chain_of_changes_arriving_in_any_order_is_no_conflict_and_the_last_wins():
    for order in itertools.permutations([ON, OFF, AGAIN]):
        out = _merge(policy.seeded({}), list(order))
        assert out.concurrent == [] and out.settings["device_only"] is True, order


def test_an_old_change_arriving_in_a_later_sync_is_old_news():
    first = _merge(policy.seeded({}), [AGAIN, OFF])
    later = _merge(first.settings, [ON])  # a's snapshot, read after the chains that replaced it
    assert later.concurrent == [] and later.pulled == [] and later.settings["device_only"] is True


def test_two_changes_that_did_not_see_each_other_are_reported_once_and_the_later_wins():
    theirs = _change(True, 25, "e" * 16)  # e saw neither a's change nor b's
    first = _merge(policy.seeded({}), [ON, OFF])
    out = _merge(first.settings, [theirs])
    assert out.concurrent == ["device_only"] and out.settings["device_only"] is True
    assert _merge(out.settings, [theirs, OFF]).concurrent == []  # seen already: not reported again


def test_a_vault_whose_policy_never_changed_keeps_its_settings():
    settings = policy.seeded({"device_only": False})
    assert _merge(settings, []).settings == settings
