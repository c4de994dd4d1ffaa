"""Reading files for `rag ingest`: text in, everything else refused with a reason.

The whole batch is read and checked before anything is written; the engine then writes all
accepted files in one transaction. A batch with any refused file writes nothing, so a
mixed batch never leaves the vault half-imported (the user fixes or drops the bad file and
runs the same command again; files already imported then report `unchanged`).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import frontmatter
from ..errors import ErrorCode, InputRefusedError
from ..files import read_limited
from ..i18n import N_, msg, term

MAX_FILE_BYTES = 16 * 1024 * 1024

# Signatures of common binary formats users try to ingest, with the name we tell them.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", N_("a PDF document")),
    (b"PK\x03\x04", N_("a ZIP-based file (DOCX, XLSX, ODT, EPUB or ZIP)")),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", N_("a legacy Office document (DOC/XLS/PPT)")),
    (b"{\\rtf", N_("an RTF document")),
    (b"\x89PNG\r\n\x1a\n", N_("a PNG image")),
    (b"\xff\xd8\xff", N_("a JPEG image")),
    (b"GIF8", N_("a GIF image")),
    (b"\x7fELF", N_("an executable")),
    (b"\x1f\x8b", N_("a gzip archive")),
)
_CONVERT_HINT = N_("Memories ingests UTF-8 text and Markdown only; convert it to text first, then ingest the text file.")
_HEADING = re.compile(r"^\s{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass(frozen=True)
class SourceFile:
    path: Path  # as the user named it: results and messages show this
    title: str
    body: str
    sha256: str
    resolved: Path  # the file itself, absolute: recorded as the card's source
    tags: tuple[str, ...] = ()  # from an export's front matter
    exported: bool = False  # the file is a `vault export` file: `source` below replaces the file name
    source: str | None = None  # the original file name its front matter names (None: it had none)


def read_file(path: Path, limit: int, what: str, advice: str = "", *, base: Path | None = None) -> bytes:
    """A regular file's bytes, or InputRefusedError naming the file: a name that is not UTF-8,
    missing, a folder, a device or FIFO, unreadable or over `limit` bytes (checked while
    reading; see files.py). A relative `path` is found in `base` when given (the caller's
    working folder)."""
    check_utf8_name(path if base is None else base / path)
    return read_limited(path, limit, what=what, advice=advice, base=base)


def check_utf8_name(path: Path) -> None:
    """The file's name and path are kept in the note (title, source), which is UTF-8 text: a
    name in another encoding is refused with the bytes shown as escapes, never guessed at."""
    try:
        str(path.absolute()).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(str(path)).decode("utf-8", "backslashreplace")
        raise InputRefusedError(msg("{shown}: the file's name (or a folder's) is not valid UTF-8, so it "
                                    "cannot be kept as the note's source. Rename it to UTF-8 (e.g. `convmv -f "
                                    "latin1 -t utf-8 FILE`) and try again.", shown=shown), code=ErrorCode.BAD_FILE_NAME) from None


def read_source(path: Path, title: str | None = None, *, base: Path | None = None) -> SourceFile:
    """Read one file as UTF-8 text or raise InputRefusedError naming the file and the fix."""
    raw = read_file(path, MAX_FILE_BYTES, N_("ingest"), N_("Split it into smaller text files."), base=base)
    for magic, kind in _SIGNATURES:
        if raw.startswith(magic):
            raise InputRefusedError(msg("{path} is {kind}. {hint}",
                                        path=path, kind=term(kind), hint=term(_CONVERT_HINT)), code=ErrorCode.UNSUPPORTED_FILE)
    if b"\x00" in raw:
        raise InputRefusedError(msg("{path} contains NUL bytes, so it is a binary file. {hint}",
                                    path=path, hint=term(_CONVERT_HINT)),
                                code=ErrorCode.UNSUPPORTED_FILE)
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputRefusedError(
            msg("{path} is not valid UTF-8 (bad byte at offset {start}). {hint} If it is text in "
                "another encoding, re-save it as UTF-8.",
                path=path, start=exc.start, hint=term(_CONVERT_HINT)), code=ErrorCode.INVALID_UTF8) from None
    if body.startswith("\ufeff"):
        body = body[1:]
    resolved = (path if base is None else base / path).resolve()
    fields, body = frontmatter.split(body)  # a `vault export` file: its title, tags and source name
    if fields is not None:
        named = fields.get("title")
        tags = fields.get("tags")
        source = fields.get("source")
        return SourceFile(path=path, title=title or (named if isinstance(named, str) and named else
                                                     derive_title(body, path)), body=body,
                          sha256=hashlib.sha256(raw).hexdigest(), resolved=resolved,
                          tags=tuple(tags) if isinstance(tags, list) else (), exported=True,
                          source=source if isinstance(source, str) and source else None)
    return SourceFile(path=path, title=title or derive_title(body, path), body=body,
                      sha256=hashlib.sha256(raw).hexdigest(), resolved=resolved)


def derive_title(body: str, path: Path) -> str:
    """The first Markdown heading, else the file name."""
    match = _HEADING.search(body)
    if match and match.group(1).strip():
        return match.group(1).strip()
    return path.name
