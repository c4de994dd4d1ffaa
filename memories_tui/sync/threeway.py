"""Merging two concurrent revisions of a record with their common ancestor, so edits that do not
overlap (different lines of a Markdown body, a title changed on one side only) need no one to
resolve them. The result depends only on the three revisions, so every device that merges the
same pair writes the same merged revision (its id is derived from its content and parents)."""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

from .hlc import Stamp
from .revtree import Rev, RevTree, rev_id_for

MERGE_DEVICE = "merge"  # the device field of a merged revision: no device wrote it alone


def common_ancestor(tree: RevTree, a: Rev, b: Rev) -> Rev | None:
    """The nearest revision both descend from (the highest-ordered one if several are nearest)."""
    common = _ancestors(tree, a) & _ancestors(tree, b)
    if not common:
        return None
    below = {p for rev_id in common for p in _ancestors(tree, tree.revs[rev_id]) if p != rev_id}
    nearest = [tree.revs[rev_id] for rev_id in common - below]
    return max(nearest, key=Rev.order) if nearest else None


def _ancestors(tree: RevTree, rev: Rev) -> set[str]:
    seen: set[str] = set()
    todo = [rev.rev_id]
    while todo:
        rev_id = todo.pop()
        if rev_id in seen or rev_id not in tree.revs:
            continue
        seen.add(rev_id)
        todo.extend(tree.revs[rev_id].parents)
    return seen


def merge_payloads(base: str, a: str, b: str) -> str | None:
    """The merged payload, or None when the two sides changed the same thing differently (or
    carry binary data, which is never merged). `updated` takes the later of the two."""
    try:
        docs = [json.loads(base), json.loads(a), json.loads(b)]
    except ValueError:
        return None
    if not all(isinstance(d, dict) for d in docs) or any("data" in d for d in docs):
        return None
    old, left, right = docs
    merged: dict[str, Any] = {}
    for key in list(left) + [k for k in right if k not in left]:
        if key == "updated":
            merged[key] = max(str(left.get(key, "")), str(right.get(key, "")))
        elif key == "body":
            body = merge_text(str(old.get(key, "")), str(left.get(key, "")), str(right.get(key, "")))
            if body is None:
                return None
            merged[key] = body
        else:
            value = _pick(old.get(key), left.get(key), right.get(key))
            if value is _CONFLICT and key == "metadata" and all(isinstance(d.get(key), dict) for d in docs):
                value = merge_metadata(old[key], left[key], right[key])  # only then: merges older builds make are unchanged
            elif value is _CONFLICT and key == "tags" and all(isinstance(d.get(key), list) for d in docs):
                value = merge_tags(old[key], left[key], right[key])
            if value is _CONFLICT:
                return None
            merged[key] = value
    return json.dumps(merged, ensure_ascii=False)


_CONFLICT = object()
# Where and when a device's own copy of a source file is (and when it found it gone): each device
# keeps the folder at its own path and stats its own copy, so two devices keeping one folder in
# step (a Syncthing folder) record the same change with different values here. Not a conflict:
# the winner's are kept.
_EACH_DEVICES_OWN = frozenset({"source_path", "source_size", "source_mtime_ns", "source_gone"})


def merge_metadata(old: dict[str, Any], left: dict[str, Any], right: dict[str, Any]) -> object:
    """The metadata key by key, as the other fields are merged (`left` is the winner's), when both
    sides changed it; _CONFLICT when one key was changed both ways, other than a device's own
    stat of a source file."""
    merged: dict[str, Any] = {}
    for key in list(left) + [k for k in right if k not in left]:
        value = _pick(old.get(key, _ABSENT), left.get(key, _ABSENT), right.get(key, _ABSENT))
        if value is _CONFLICT:
            if key not in _EACH_DEVICES_OWN:
                return _CONFLICT
            value = left.get(key, _ABSENT)
        if value is not _ABSENT:
            merged[key] = value
    return merged


_ABSENT = object()  # a key one side removed: removed in the merge unless the other side changed it


def merge_tags(old: list[Any], left: list[Any], right: list[Any]) -> list[Any]:
    """Tags changed on both sides (one device tagged a note "tea", the other "recipe"): every tag
    either side added, none that either side removed; the winner's (`left`) order, then the
    other's additions."""
    removed = {tag for tag in old if tag not in left or tag not in right}
    return [tag for tag in left if tag not in removed] + [tag for tag in right if tag not in left and tag not in removed]


def _pick(old: object, left: object, right: object) -> object:
    """A field changed on one side only takes that side's value; changed on both, the same way or not at all."""
    if left == right or right == old:
        return left
    if left == old:
        return right
    return _CONFLICT


def merge_text(base: str, a: str, b: str) -> str | None:
    """Three-way line merge (diff3, as git and Breezy's merge3 do it, on the standard library's
    difflib: merge3 is GPL-2.0-or-later and this app is MIT). None when the edits overlap: the
    same lines, neighbouring lines, or insertions at the same place."""
    if a == b or b == base:
        return a
    if a == base:
        return b
    old, left, right = base.splitlines(True), a.splitlines(True), b.splitlines(True)
    lines: list[str] = []
    at_old = at_left = at_right = 0
    for start, end, in_left, in_right in _stable(old, left, right):
        chunks = old[at_old:start], left[at_left:in_left], right[at_right:in_right]
        if chunks[1] == chunks[2] or chunks[2] == chunks[0]:
            lines.extend(chunks[1])
        elif chunks[1] == chunks[0]:
            lines.extend(chunks[2])
        else:
            return None
        lines.extend(old[start:end])
        at_old, at_left, at_right = end, in_left + end - start, in_right + end - start
    return "".join(lines)


def marked_merge(base: str, a: str, b: str, label_a: str, label_b: str) -> str:
    """The three-way merge of `a` and `b` with git-style conflict markers only around the parts
    both changed: what one side changed alone is taken as in `merge_text`."""
    old, left, right = base.splitlines(True), a.splitlines(True), b.splitlines(True)
    lines: list[str] = []
    at_old = at_left = at_right = 0
    for start, end, in_left, in_right in _stable(old, left, right):
        was, mine, theirs = old[at_old:start], left[at_left:in_left], right[at_right:in_right]
        if mine == theirs or theirs == was:
            lines.extend(mine)
        elif mine == was:
            lines.extend(theirs)
        else:
            lines.extend([f"<<<<<<< {label_a}\n", *_ended(mine), "=======\n", *_ended(theirs), f">>>>>>> {label_b}\n"])
        lines.extend(old[start:end])
        at_old, at_left, at_right = end, in_left + end - start, in_right + end - start
    return "".join(lines)


def _ended(lines: list[str]) -> list[str]:
    """A side's lines with the last one ended, so a marker never joins the text's last line."""
    return [*lines[:-1], lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"] if lines else []


def _stable(old: list[str], left: list[str], right: list[str]) -> list[tuple[int, int, int, int]]:
    """Runs of the ancestor's lines that both sides kept, as (start, end, where the run starts in
    `left`, in `right`), ending with an empty run at the end of all three."""
    in_left = SequenceMatcher(None, old, left, autojunk=False).get_matching_blocks()
    in_right = SequenceMatcher(None, old, right, autojunk=False).get_matching_blocks()
    runs: list[tuple[int, int, int, int]] = []
    i = j = 0
    while i < len(in_left) and j < len(in_right):
        lo, lpos, llen = in_left[i]
        ro, rpos, rlen = in_right[j]
        start, end = max(lo, ro), min(lo + llen, ro + rlen)
        if start < end:
            runs.append((start, end, lpos + start - lo, rpos + start - ro))
        if lo + llen < ro + rlen:
            i += 1
        else:
            j += 1
    runs.append((len(old), len(old), len(left), len(right)))
    return runs


def merged_rev(record_id: str, a: Rev, b: Rev, payload: str) -> Rev:
    """The merged revision of leaves `a` and `b`: both are its parents and its stamp follows
    both, so it wins over them; nothing in it depends on the device that computed it."""
    parents = tuple(sorted((a.rev_id, b.rev_id)))
    top = max(a.stamp, b.stamp)
    stamp = Stamp(top.ms, top.counter + 1)
    return Rev(rev_id_for(record_id, parents, stamp, MERGE_DEVICE, False, payload.encode()), parents, stamp,
               MERGE_DEVICE, False, a.kind)
