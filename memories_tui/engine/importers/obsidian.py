"""An Obsidian vault (a folder of Markdown notes) as cards.

Front matter gives the title (else the file name, as Obsidian shows it), tags, aliases and
dates; its other fields are kept as the card's `properties`. `[[links]]` and `![[embeds]]`
stay in the text as written (readable anywhere) and are resolved to the cards they name,
kept in the card's `links`. Attachments (images, PDFs, …) are listed as skipped; `.obsidian/`
and other dot-folders are left out. Front matter this reader does not understand stays in
the text, with a warning, so nothing is lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from ... import frontmatter
from ...errors import ErrorCode, InputRefusedError
from ...i18n import N_, msg
from ..folders import TEXT_SUFFIXES, refusal_reason, scan_folder, suffix_of
from ..sources import MAX_FILE_BYTES, check_utf8_name, read_file
from .common import ImportedAsset, ImportedNote, Skipped, nfc, shown_name

MAX_ASSET_BYTES = 64 * 1024 * 1024  # as `asset add` takes

APP = "obsidian"
_LINK = re.compile(r"!?\[\[([^\]\|#\^\n]+)(?:[#\^][^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]")
DATE_KEYS = {"created": "source_created", "date": "source_created", "updated": "source_updated",
             "modified": "source_updated"}


def read_obsidian(folder: Path, assets: bool = False) -> Iterator[ImportedNote | ImportedAsset | Skipped]:
    """`assets`: attachments (images, PDFs, …) become encrypted asset records, else skipped rows."""
    if not folder.is_dir():
        raise InputRefusedError(msg("{path} is not a folder; give the Obsidian vault's folder.",
                                    path=shown_name(folder)), code=ErrorCode.UNSUPPORTED_FILE)
    scan = scan_folder(folder)
    for path, reason in scan.skipped:
        name = shown_name(path.relative_to(folder))
        if not assets or path.is_symlink() or suffix_of(path.name) in TEXT_SUFFIXES or not path.is_file():
            yield Skipped(name, _attachment(reason))
            continue
        try:
            check_utf8_name(path)
            yield ImportedAsset(name, nfc(path.name), read_file(path, MAX_ASSET_BYTES, N_("asset")))
        except InputRefusedError as exc:
            yield Skipped(name, refusal_reason(exc, path))
    for path in scan.readable:
        rel = path.relative_to(folder)
        name = shown_name(rel)
        if path.suffix.lower() not in (".md", ".markdown"):
            yield Skipped(name, "not a Markdown note")
            continue
        try:
            raw = read_file(path, MAX_FILE_BYTES, N_("ingest"))
            text = raw.decode("utf-8").removeprefix("\ufeff")
        except InputRefusedError as exc:
            yield Skipped(name, refusal_reason(exc, path))
            continue
        except UnicodeDecodeError as exc:
            yield Skipped(name, f"not valid UTF-8 (bad byte at offset {exc.start})")
            continue
        yield note_from_text(text, rel, path)


def note_from_text(text: str, rel: Path, path: Path) -> ImportedNote:
    fields, body, malformed = frontmatter.split_any(text.replace("\r\n", "\n"))
    fields = fields or {}
    stem = nfc(rel.stem)
    title = fields.get("title")
    meta: dict[str, object] = {"source_path": nfc(rel.as_posix())}
    for key, target in DATE_KEYS.items():
        if isinstance(fields.get(key), (str, int)) and target not in meta:
            meta[target] = str(fields[key])
    if "source_updated" not in meta:
        try:
            meta["source_updated"] = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except OSError:
            pass
    aliases = _list(fields.get("aliases")) + _list(fields.get("alias"))
    tags = tuple(dict.fromkeys(t.lstrip("#") for t in _list(fields.get("tags")) + _list(fields.get("tag")) if t))
    props = {k: v for k, v in fields.items() if k not in {"title", "tags", "tag", "aliases", "alias", *DATE_KEYS}}
    if props:
        meta["properties"] = props
    links = tuple(dict.fromkeys(nfc(m.group(1).strip()) for m in _LINK.finditer(body) if m.group(1).strip()))
    return ImportedNote(key=nfc(rel.as_posix()), name=nfc(rel.as_posix()),
                        title=nfc(title) if isinstance(title, str) and title.strip() else stem,
                        body=body, tags=tuple(nfc(t) for t in tags), metadata=meta,
                        link_names=tuple(dict.fromkeys([stem, nfc(rel.with_suffix("").as_posix()), *map(nfc, aliases)])),
                        links=links, file=nfc(rel.as_posix()),
                        warning="front matter not understood; kept in the text" if malformed else "")


def _list(value: object) -> list[str]:
    """A YAML list, a flow list written as text (`[a, b]`) or a comma/space separated string."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str):
        text = value.strip().removeprefix("[").removesuffix("]")
        return [part.strip().strip("\"'") for part in re.split(r"[,\s]+" if "," not in text else r",", text)
                if part.strip().strip("\"'")]
    return []


def _attachment(reason: str) -> str:
    return reason.replace("are not ingested", "are attachments, not notes") if "not a text" in reason else reason
