"""Bear's export (TextBundle: a folder of `.textbundle` folders or `.textpack` zips) as cards.

A TextBundle holds `text.md` (or `text.markdown` / `text.txt`), an `info.json` and an `assets/`
folder. The title is the note's first heading (else the bundle's name); Bear's inline tags
(`#tag`, `#nested/tag`, `#multi word tag#`) become the card's tags; Bear's creation and
modification dates from `info.json` are kept. Assets are listed as skipped.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ...errors import ErrorCode, InputRefusedError
from ...i18n import msg
from ..sources import MAX_FILE_BYTES, derive_title
from .common import ImportedNote, Skipped, nfc, shown_name

APP = "bear"
TEXT_NAMES = ("text.md", "text.markdown", "text.txt")
_TAG = re.compile(r"(?:^|(?<=\s))#([^\s#][^#\n]*?[^\s#])#|(?:^|(?<=\s))#([^\s#]+)", re.MULTILINE)


def read_bear(path: Path) -> Iterator[ImportedNote | Skipped]:
    if not path.is_dir():
        raise InputRefusedError(msg("{path} is not a folder; give the folder Bear exported the TextBundles to.",
                                    path=shown_name(path)), code=ErrorCode.UNSUPPORTED_FILE)
    for bundle in sorted(p for p in path.rglob("*") if p.suffix.lower() in (".textbundle", ".textpack")):
        name = shown_name(bundle.relative_to(path))
        try:
            files = _bundle_files(bundle)
        except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError) as exc:
            yield Skipped(name, f"not a readable TextBundle ({exc})")
            continue
        text_name = next((n for n in TEXT_NAMES if n in files), None)
        if text_name is None:
            yield Skipped(name, "no text.md in the bundle")
            continue
        for asset in sorted(n for n in files if n.startswith("assets/")):
            yield Skipped(f"{name}/{asset}", "an attachment, not a note")
        body = files[text_name].replace("\r\n", "\n")
        stem = nfc(PurePosixPath(name).stem)
        meta: dict[str, object] = {"source_path": nfc(name)}
        info = _info(files.get("info.json", ""))
        for key, target in (("creationDate", "source_created"), ("modificationDate", "source_updated")):
            if isinstance(info.get(key), str):
                meta[target] = info[key]
        tags = tuple(dict.fromkeys(nfc((m.group(1) or m.group(2)).strip()) for m in _TAG.finditer(_no_code(body))))
        yield ImportedNote(key=nfc(name), name=nfc(name), title=nfc(derive_title(body, Path(stem))), body=body,
                           tags=tags, metadata=meta)


def _bundle_files(bundle: Path) -> dict[str, str]:
    """Text files of a bundle by name (assets by name, empty), from its folder or its zip."""
    out: dict[str, str] = {}
    if bundle.is_dir():
        for file in bundle.rglob("*"):
            rel = file.relative_to(bundle).as_posix()
            if file.is_file() and not file.is_symlink():
                out[rel] = "" if rel.startswith("assets/") else _decode(file.read_bytes()[:MAX_FILE_BYTES + 1])
        return out
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            parts = PurePosixPath(info.filename).parts
            rel = "/".join(parts[1:] if len(parts) > 1 and parts[0].endswith(".textbundle") else parts)
            if info.is_dir() or not rel:
                continue
            if rel.startswith("assets/"):
                out[rel] = ""
            elif info.file_size <= MAX_FILE_BYTES:
                with archive.open(info) as fh:
                    out[rel] = _decode(fh.read(MAX_FILE_BYTES + 1))
    return out


def _decode(data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise ValueError("a file over the size limit")
    return data.decode("utf-8").removeprefix("\ufeff")


def _info(text: str) -> dict[str, object]:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    bear = data.get("net.shinyfrog.bear") if isinstance(data, dict) else None
    return bear if isinstance(bear, dict) else {}


def _no_code(body: str) -> str:
    """The body without fenced code and headings, where `#` is not a tag."""
    body = re.sub(r"```.*?```", "", body, flags=re.DOTALL)
    return re.sub(r"^\s{0,3}#{1,6}\s.*$", "", body, flags=re.MULTILINE)
