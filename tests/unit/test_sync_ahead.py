"""A pull asks for the next few objects while it reads the current one (sync/ahead.py): each is
handed over in the order asked, a failure is raised where the object is taken, and objects a
pull will not read after all free their place."""

from __future__ import annotations

import threading
import time

import pytest

from memories_tui.errors import SyncError
from memories_tui.sync.ahead import AHEAD, LARGE, LARGE_AHEAD, Ahead


def test_several_objects_are_fetched_at_once_and_handed_over_in_order():
    both = threading.Barrier(2, timeout=10)  # broken (an error) unless two gets wait here at the same time

    def get(name: str, limit: int | None = None) -> bytes:
        if name in ("a", "b"):
            both.wait()
        return name.encode()

    with Ahead(get) as ahead:
        ahead.want(["a", "b", "c"])
        assert [ahead.take(n) for n in ("a", "b", "c")] == [b"a", b"b", b"c"]


def test_no_more_than_a_few_are_in_flight():
    flying, most, lock = 0, 0, threading.Lock()
    release = threading.Event()

    def get(name: str, limit: int | None = None) -> bytes:
        nonlocal flying, most
        with lock:
            flying += 1
            most = max(most, flying)
        release.wait(10)
        with lock:
            flying -= 1
        return name.encode()

    names = [f"n{i}" for i in range(3 * AHEAD)]
    with Ahead(get) as ahead:
        ahead.want(names)
        release.set()
        assert [ahead.take(n) for n in names] == [n.encode() for n in names]
    assert 1 < most <= AHEAD


def test_a_failed_get_is_raised_where_its_object_is_taken_and_the_rest_still_come():
    def get(name: str, limit: int | None = None) -> bytes | None:
        if name == "bad":
            raise SyncError("the store failed to answer")
        return None if name == "missing" else name.encode()

    with Ahead(get) as ahead:
        ahead.want(["ok", "bad", "missing", "after"])
        assert ahead.take("ok") == b"ok"
        with pytest.raises(SyncError):
            ahead.take("bad")
        assert ahead.take("missing") is None and ahead.take("after") == b"after"


def test_objects_dropped_free_their_place_and_one_never_asked_for_is_fetched_when_taken():
    asked: list[str] = []

    def get(name: str, limit: int | None = None) -> bytes:
        asked.append(name)
        return name.encode()

    with Ahead(get) as ahead:
        ahead.want([f"n{i}" for i in range(2 * AHEAD)])
        ahead.drop([f"n{i}" for i in range(1, 2 * AHEAD - 1)])  # a snapshot stood in for these
        assert ahead.take("n0") == b"n0" and ahead.take(f"n{2 * AHEAD - 1}") == f"n{2 * AHEAD - 1}".encode()
        assert ahead.take("other") == b"other"
    assert f"n{2 * AHEAD - 1}" in asked and "other" in asked


def test_after_a_large_object_only_a_few_large_ones_are_fetched_ahead():
    names = ["big", *(f"n{k}" for k in range(LARGE_AHEAD + 2))]
    asked: list[str] = []
    ahead_asked, release = threading.Semaphore(0), threading.Event()

    def get(name: str, limit: int | None = None) -> bytes:
        asked.append(name)
        if name != "big":
            ahead_asked.release()
            release.wait(10)
        return b"x" * LARGE

    with Ahead(get) as ahead:
        ahead.want(names, depth=1)
        assert len(ahead.take("big")) == LARGE
        try:  # the next ones download while the reader works on this one
            assert all(ahead_asked.acquire(timeout=10) for _ in range(max(1, LARGE_AHEAD)))
            time.sleep(0.1)  # room for a wrong further fetch to show (none comes here, however long)
            assert sorted(asked) == sorted(names[:LARGE_AHEAD + 1])  # and only those: each costs its size
        finally:
            release.set()
        assert [len(ahead.take(n)) for n in names[1:]] == [LARGE] * (LARGE_AHEAD + 2)
    assert sorted(asked) == sorted(names)


def test_an_object_over_the_fetch_ahead_bound_is_read_in_its_turn_only():
    """A target cannot make a pull hold several of the largest objects at once: ahead of its
    turn an object is fetched only up to AHEAD_BYTES."""
    from memories_tui.sync.bounds import AHEAD_BYTES, ObjectTooLarge

    calls: list[tuple[str, int | None]] = []
    lock = threading.Lock()

    def get(name: str, limit: int | None = None) -> bytes:
        with lock:
            calls.append((name, limit))
        if name == "big" and limit is not None:
            raise ObjectTooLarge("larger than the bound asked")
        return name.encode()

    with Ahead(get) as ahead:
        ahead.want(["big", "small"])
        assert ahead.take("big") == b"big" and ahead.take("small") == b"small"
    assert sorted(calls, key=str) == sorted([("big", AHEAD_BYTES), ("big", None), ("small", AHEAD_BYTES)], key=str)
