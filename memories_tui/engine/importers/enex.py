"""An Evernote export (`.enex`) as cards, read as a stream.

The file is parsed note by note with `iterparse`, and each note's elements are dropped once
it is read, so a 1 GB export needs about one note's worth of memory. A note's ENML (XHTML)
becomes Markdown with `markdownify`; encrypted sections (`<en-crypt>`) and resources
(images, PDFs) are not imported: each leaves a marker in the text and is named in the
note's reason. An export that stops being well-formed XML keeps the notes read before the
fault; the fault is reported as one skipped item.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from ...errors import ErrorCode, InputRefusedError
from ...i18n import _, msg
from .common import ImportedNote, Skipped, nfc, shown_name

APP = "evernote"
_CRYPT = re.compile(r"<en-crypt\b[^>]*>.*?</en-crypt>", re.DOTALL | re.IGNORECASE)
_MEDIA = re.compile(r"<en-media\b([^>]*)/?>(?:\s*</en-media>)?", re.IGNORECASE)
_PROLOGUE = re.compile(r"^\s*(<\?xml[^>]*\?>)?\s*(<!DOCTYPE[^>]*>)?", re.IGNORECASE)
_TYPE = re.compile(r'\btype="([^"]*)"')
CHUNK_BYTES = 1024 * 1024


def read_enex(path: Path) -> Iterator[ImportedNote | Skipped]:
    if not path.is_file():
        raise InputRefusedError(msg("{path} does not exist or is not a file; give the .enex file Evernote "
                                    "exported.", path=shown_name(path)), code=ErrorCode.NOT_FOUND)
    notebook = nfc(path.stem)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    root: ET.Element | None = None
    count = 0
    fault: ET.ParseError | None = None
    try:
        with path.open("rb") as fh:
            while fault is None and (chunk := fh.read(CHUNK_BYTES)):
                try:
                    parser.feed(chunk)
                except ET.ParseError as exc:
                    fault = exc  # the events parsed before it are still read below
                for event, elem in cast("Iterator[tuple[str, object]]", parser.read_events()):
                    if not isinstance(elem, ET.Element):
                        continue
                    if event == "start":
                        if root is None:
                            root = elem
                            if elem.tag != "en-export":
                                raise InputRefusedError(msg("{path} is not an Evernote export (it starts with "
                                                            "<{tag}>, not <en-export>).", path=shown_name(path),
                                                            tag=elem.tag), code=ErrorCode.BAD_EXPORT)
                    elif elem.tag == "data":  # a resource's base64 bytes: not kept past this point
                        elem.text = None
                    elif elem.tag == "note":
                        count += 1
                        yield _note(elem, notebook, count)
                        if root is not None:
                            root.clear()
            if fault is None:
                parser.close()
    except ET.ParseError as exc:
        fault = exc
    except OSError as exc:
        yield Skipped(shown_name(path), f"could not be read ({exc.strerror or exc})")
    if fault is not None:
        line, column = fault.position
        yield Skipped(f"{shown_name(path)}:{line}",
                      f"the export is not well-formed XML from line {line}, column {column}; the {count} notes "
                      "before it were read")


def _note(elem: ET.Element, notebook: str, n: int) -> ImportedNote | Skipped:
    title = nfc((elem.findtext("title") or "").strip()) or _("Untitled note {n}").format(n=n)
    created = _date(elem.findtext("created"))
    updated = _date(elem.findtext("updated"))
    tags = tuple(dict.fromkeys(nfc(t.text.strip()) for t in elem.findall("tag") if t.text and t.text.strip()))
    resources = []
    for res in elem.findall("resource"):
        mime = res.findtext("mime") or "file"
        name = res.findtext("resource-attributes/file-name") or mime
        resources.append(nfc(name))
    left_out = []
    try:
        body, crypts = enml_to_markdown(elem.findtext("content") or "")
    except Exception as exc:  # noqa: BLE001 - a converter failure is this note's problem, not the import's
        return Skipped(title, f"its content could not be converted ({type(exc).__name__})")
    if crypts:
        left_out.append(f"{crypts} encrypted section(s)")
    if resources:
        left_out.append(f"{len(resources)} attachment(s): " + ", ".join(resources))
    meta: dict[str, object] = {"notebook": notebook}
    if created:
        meta["source_created"] = created
    if updated:
        meta["source_updated"] = updated
    url = elem.findtext("note-attributes/source-url")
    if url:
        meta["source_url"] = url
    author = elem.findtext("note-attributes/author")
    if author:
        meta["author"] = nfc(author)
    if resources:
        meta["attachments_skipped"] = resources
    key = f"{notebook}|{created or ''}|{title}"
    return ImportedNote(key=key, name=title, title=title, body=body, tags=tags, metadata=meta,
                        warning=("not imported: " + "; ".join(left_out)) if left_out else "")


def enml_to_markdown(enml: str) -> tuple[str, int]:
    """(Markdown, encrypted sections left out) of a note's ENML."""
    from markdownify import markdownify

    text = _PROLOGUE.sub("", enml, count=1)
    text, crypts = _CRYPT.subn("<p>[encrypted section not imported]</p>", text)
    text = _MEDIA.sub(lambda m: f"<p>[attachment not imported: {_media_type(m.group(1))}]</p>", text)
    text = re.sub(r"</?en-note\b[^>]*>", "", text, flags=re.IGNORECASE)
    markdown = markdownify(text, heading_style="ATX", bullets="-", strip=["script", "style"])
    return nfc(re.sub(r"\n{3,}", "\n\n", markdown).strip()) + "\n", crypts


def _media_type(attrs: str) -> str:
    match = _TYPE.search(attrs)
    return match.group(1) if match else "file"


def _date(value: str | None) -> str | None:
    """Evernote's `20231201T120000Z` as `2023-12-01T12:00:00Z`."""
    if not value:
        return None
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", value.strip())
    return f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}Z" if m else value.strip()
