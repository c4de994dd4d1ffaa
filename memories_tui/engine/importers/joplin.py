"""A Joplin export (JEX: a tar of items; or the RAW folder of the same items) as cards.

Every Joplin item is one `<id>.md`: the title on the first line, a blank line, the body, then
`key: value` lines (`id`, `parent_id`, `created_time`, `updated_time`, `type_`, …), the way
Joplin serializes them. Notes (`type_: 1`) become cards keyed by their Joplin id, with their
notebook path (folders, `type_: 2`, by `parent_id`) and tags (`type_: 5`, linked by
note-tag items, `type_: 6`). Resources (attachments) are listed as skipped.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

from ...errors import ErrorCode, InputRefusedError
from ...i18n import msg
from ..sources import MAX_FILE_BYTES
from .common import ImportedNote, Skipped, nfc, shown_name

APP = "joplin"
_PROP = re.compile(r"^([a-z_]+): ?(.*)$")


def read_joplin(path: Path) -> Iterator[ImportedNote | Skipped]:
    items: dict[str, dict[str, str]] = {}
    bodies: dict[str, tuple[str, str]] = {}
    skipped: list[Skipped] = []
    for name, text, fault in _entries(path):
        if fault:
            skipped.append(Skipped(name, fault))
            continue
        if name.startswith("resources/") or not name.endswith(".md"):
            skipped.append(Skipped(name, "an attachment (resource), not a note"))
            continue
        if text is None:
            skipped.append(Skipped(name, "not valid UTF-8 text, or over the size limit"))
            continue
        props, title, body = parse_item(text)
        if "id" not in props or "type_" not in props:
            skipped.append(Skipped(name, "not a Joplin item (no id or type_ line)"))
            continue
        items[props["id"]] = props
        bodies[props["id"]] = (title, body)
    yield from skipped
    tags: dict[str, list[str]] = {}
    for props in items.values():
        if props.get("type_") == "6" and props.get("tag_id") in items:
            tags.setdefault(props.get("note_id", ""), []).append(nfc(bodies[props["tag_id"]][0]))
    for item_id, props in items.items():
        if props.get("type_") == "4":
            yield Skipped(nfc(bodies[item_id][0]) or item_id, "an attachment (resource), not a note")
        if props.get("type_") != "1":
            continue
        title, body = bodies[item_id]
        notebook = _notebook(props.get("parent_id", ""), items, bodies)
        meta: dict[str, object] = {"joplin_id": item_id, "notebook": notebook}
        for key, target in (("user_created_time", "source_created"), ("user_updated_time", "source_updated"),
                            ("created_time", "source_created"), ("updated_time", "source_updated")):
            if props.get(key) and target not in meta:
                meta[target] = props[key]
        if props.get("source_url"):
            meta["source_url"] = props["source_url"]
        name = f"{notebook}/{nfc(title)}" if notebook else nfc(title)
        yield ImportedNote(key=item_id, name=name, title=nfc(title) or item_id, body=body,
                           tags=tuple(dict.fromkeys(tags.get(item_id, []))), metadata=meta)


def parse_item(text: str) -> tuple[dict[str, str], str, str]:
    """(properties, title, body) of one serialized Joplin item."""
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    props: dict[str, str] = {}
    while lines and (match := _PROP.match(lines[-1])):
        props[match[1]] = match[2]
        lines.pop()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return props, "", ""
    title = lines[0].strip()
    return props, title, "\n".join(lines[2:] if len(lines) > 1 and not lines[1].strip() else lines[1:]) + "\n"


def _notebook(parent: str, items: dict[str, dict[str, str]], bodies: dict[str, tuple[str, str]]) -> str:
    path: list[str] = []
    while parent in items and items[parent].get("type_") == "2" and len(path) < 50:
        path.insert(0, nfc(bodies[parent][0]))
        parent = items[parent].get("parent_id", "")
    return "/".join(path)


def _entries(path: Path) -> Iterator[tuple[str, str | None, str]]:
    """(name, text or None when unreadable, fault) of every item: a JEX tar, or a RAW export
    folder; a tar damaged part-way gives the items before the damage, then one fault."""
    if path.is_dir():
        for file in sorted(path.rglob("*")):
            if file.is_file() and not file.is_symlink():
                yield shown_name(file.relative_to(path)), _text(file.read_bytes()[:MAX_FILE_BYTES + 1]), ""
        return
    try:
        archive = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise InputRefusedError(msg("{path} is not a readable JEX (tar) file ({problem}); give the file Joplin "
                                    "exported, or a RAW export folder.", path=shown_name(path), problem=str(exc)),
                                code=ErrorCode.BAD_EXPORT) from None
    with archive:
        try:
            for member in archive:
                if not member.isfile():
                    continue
                handle = archive.extractfile(member)
                data = handle.read(MAX_FILE_BYTES + 1) if handle is not None else b""
                yield nfc(member.name.removeprefix("./")), _text(data), ""
        except (tarfile.TarError, OSError, EOFError) as exc:
            yield shown_name(path), None, f"the archive is damaged from here on ({exc}); the items before it were read"


def _text(data: bytes) -> str | None:
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
