"""The merge a user finishes by hand: markers only around what both sides changed, and exactly
the automatic merge when nothing overlaps."""

from __future__ import annotations

import random

from memories_tui.sync.threeway import marked_merge, merge_text

BASE = "title\none\ntwo\nthree\nfour\nfive\n"


def test_markers_surround_only_the_lines_both_changed():
    mine = BASE.replace("one", "ONE (mine)").replace("five", "FIVE")
    theirs = BASE.replace("one", "one (theirs)").replace("three", "THREE")
    assert marked_merge(BASE, mine, theirs, "a", "b") == (
        "title\n<<<<<<< a\nONE (mine)\n=======\none (theirs)\n>>>>>>> b\ntwo\nTHREE\nfour\nFIVE\n")


def test_a_last_line_without_newline_never_joins_a_marker():
    assert marked_merge("x", "y", "z", "a", "b") == "<<<<<<< a\ny\n=======\nz\n>>>>>>> b\n"


def test_without_overlap_it_is_the_automatic_merge():
    rng = random.Random(7)
    lines = BASE.splitlines(True)
    checked = 0
    for _ in range(300):
        sides = []
        for _side in range(2):
            edited = list(lines)
            at = rng.randrange(len(edited))
            edited[at] = f"changed {rng.randrange(3)}\n"
            sides.append("".join(edited))
        automatic = merge_text(BASE, sides[0], sides[1])
        if automatic is not None:
            checked += 1
            assert marked_merge(BASE, sides[0], sides[1], "a", "b") == automatic
        else:
            assert "<<<<<<< a\n" in marked_merge(BASE, sides[0], sides[1], "a", "b")
    assert checked > 50
