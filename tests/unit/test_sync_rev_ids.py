"""Revision ids and the associated data of sync rows are part of what devices and vault files
keep: the same revision must get the same id on every device and every build, and a row sealed
by an earlier build must still open. The unrolled encodings a sync uses per record must agree
with the plain length-prefixed ones they replace, and with ids earlier builds wrote."""

from __future__ import annotations

import hashlib
import random

import pytest

from memories_tui.sync.hlc import Stamp
from memories_tui.sync.revtree import rev_id_for
from memories_tui.vault.crypto import length_prefixed
from memories_tui.vault.sync_rows import doc_ad


def _plain_rev_id(record_id: str, parents: tuple[str, ...], stamp: Stamp, device: str, deleted: bool,
                  payload: bytes) -> str:
    data = length_prefixed("rev/v1", record_id, ",".join(sorted(parents)), stamp.ms, stamp.counter, device,
                           int(deleted), hashlib.sha256(payload).hexdigest())
    return hashlib.sha256(data).hexdigest()[:24]


def test_the_unrolled_encodings_agree_with_the_plain_ones() -> None:
    rng = random.Random(31)
    for _ in range(2000):
        record_id = rng.choice(["0123abcd", "記錄", "x" * rng.randint(0, 300), ""])
        args = (record_id, tuple(rng.sample(["a1", "b2", "c3", "記"], rng.randint(0, 3))),
                Stamp(rng.randint(0, 2**45), rng.randint(0, 70000)),
                rng.choice(["fedcba9876543210", "merge", "é"]), rng.random() < 0.5,
                rng.randbytes(rng.randint(0, 60)))
        assert rev_id_for(*args) == _plain_rev_id(*args)
        vault_id, local = rng.choice(["0123456789abcdef", "v"]), rng.choice([None, 0, 1, 17, 2**40])
        assert doc_ad(vault_id, record_id, local) == length_prefixed(
            "sync-doc/v1", vault_id, record_id, "-" if local is None else local)


@pytest.mark.parametrize(("args", "expected"), [  # computed by the build before the encoding was unrolled
    (("0123abcd", ("bbb", "aaa"), Stamp(1733400000000, 3), "fedcba9876543210", False, "同步 body".encode()),
     "1a3bac24bc86c41f7b472dd1"),
    (("0123abcd", ("aaa",), Stamp(1733400000001, 0), "fedcba9876543210", True, b""), "8b9c91dbab48708a73f6da9e"),
])
def test_ids_are_those_earlier_builds_wrote(args: tuple[str, tuple[str, ...], Stamp, str, bool, bytes],
                                            expected: str) -> None:
    assert rev_id_for(*args) == expected
