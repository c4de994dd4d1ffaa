"""The YAML front matter of exported Markdown files, written and read back.

`vault export` starts each file with a block of `key: value` lines between `---` lines, every
value written as JSON (a YAML subset: double-quoted strings, numbers, flow lists), so any
title or tag round-trips exactly. `rag ingest` recognises such a block (it must name `id`,
`revision` and `kind`, as exports do) and takes the title, tags and source file name from it
and the rest of the file as the body, so re-importing an export gives the same searchable
text. It also reads the block after an editor rewrote it in plain YAML (unquoted scalars,
`- item` lists); anything else is not front matter and stays part of the body.
"""

from __future__ import annotations

import json
import re

FENCE = "---"
EXPORT_KEYS = ("id", "revision", "kind")  # what makes a block ours
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(?:[ \t]+(.*))?$")
MAX_BLOCK_LINES = 200

Value = str | int | float | bool | None | list[str]


def render(fields: dict[str, Value]) -> str:
    """The block for `fields` (insertion order), ending with the closing fence and a newline."""
    lines = [FENCE]
    for key, value in fields.items():
        text = json.dumps(value, ensure_ascii=False)
        # JSON leaves these raw; YAML treats them as line breaks inside a scalar
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\u0085", "\\u0085")
        lines.append(f"{key}: {text}")
    lines.append(FENCE)
    return "\n".join(lines) + "\n"


def split(text: str) -> tuple[dict[str, Value] | None, str]:
    """(fields, body) when `text` starts with an export's front matter, else (None, text)."""
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        return None, text
    lines = text.split("\n")
    end = next((i for i in range(1, min(len(lines), MAX_BLOCK_LINES)) if lines[i].rstrip("\r") == FENCE), None)
    if end is None:
        return None, text
    fields = _parse([line.rstrip("\r") for line in lines[1:end]])
    if fields is None or not all(k in fields for k in EXPORT_KEYS):
        return None, text
    return fields, "\n".join(lines[end + 1:])


def split_any(text: str) -> tuple[dict[str, Value] | None, str, bool]:
    """(fields, body, malformed) for any note's front matter (Obsidian's): a block that opens
    but does not close, or holds lines this reader does not understand, is `malformed` and the
    text is returned whole, so nothing of the note is lost."""
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        return None, text, False
    lines = text.split("\n")
    end = next((i for i in range(1, min(len(lines), MAX_BLOCK_LINES)) if lines[i].rstrip("\r") == FENCE), None)
    if end is None:
        return None, text, True
    fields = _parse([line.rstrip("\r") for line in lines[1:end]])
    if fields is None:
        return None, text, True
    return fields, "\n".join(lines[end + 1:]), False


def _parse(lines: list[str]) -> dict[str, Value] | None:
    fields: dict[str, Value] = {}
    current: str | None = None
    for line in lines:
        if not line.strip():
            continue
        item = re.match(r"^\s+-\s+(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and current is not None and isinstance(fields.get(current), list):
            value = _scalar(item[1])
            if not isinstance(value, str):
                value = json.dumps(value)
            fields[current].append(value)  # type: ignore[union-attr]
            continue
        match = _KEY.match(line)
        if match is None:
            return None
        current = match[1]
        raw = (match[2] or "").strip()
        fields[current] = [] if raw == "" else _scalar(raw)
    return fields


def _scalar(raw: str) -> Value:
    if raw[:1] in ('"', "[") or re.fullmatch(r"-?\d+(\.\d+)?|true|false|null", raw):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(value, list):
            return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value]
        return value if isinstance(value, (str, int, float, bool)) or value is None else raw
    if raw[:1] == "'" and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1].replace("''", "'")
    return raw
