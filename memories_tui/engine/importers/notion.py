"""A Notion export ("Markdown & CSV", as the zip Notion sends or its unpacked folder) as cards.

Notion names every page and database `Title <32 hex id>`; the id is taken off titles and
paths and kept as the note's key, so a page renamed in Notion is still the same card. Nested
pages keep their path (`notion_path`). Each database row becomes a card with the row's
columns as `properties`: the row's own page (a Markdown file beside the CSV) is its text,
else the properties are. Images and other attachments are listed as skipped.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from ...errors import ErrorCode, InputRefusedError
from ...i18n import N_, msg
from ..sources import MAX_FILE_BYTES, derive_title, read_file
from .common import ImportedNote, Skipped, nfc, shown_name

APP = "notion"
MAX_INNER_ZIP = 512 * 2**20  # a zip inside the export is read into memory: this much at most
_ID = re.compile(r"\s+([0-9a-f]{32})$")
Reader = Callable[[], bytes]


def read_notion(path: Path) -> Iterator[ImportedNote | Skipped]:
    problems: list[Skipped] = []
    files = _zip_files(path, problems) if path.is_file() else _folder_files(path, problems)
    yield from problems
    tables: dict[str, dict[str, dict[str, str]]] = {}  # stripped db path -> row title -> properties
    pages: list[tuple[PurePosixPath, Reader]] = []
    for name, read in sorted(files.items(), key=lambda item: str(item[0])):
        suffix = name.suffix.lower()
        if suffix == ".csv":
            if name.stem.endswith("_all") or name.with_name(name.stem + "_all.csv") not in files:
                try:
                    table, rows = _read_csv(name, read())
                except (InputRefusedError, UnicodeDecodeError, csv.Error, OSError, zipfile.BadZipFile) as exc:
                    yield Skipped(str(name), _why(exc))
                    continue
                tables[table] = rows
        elif suffix in (".md", ".markdown"):
            pages.append((name, read))
        else:
            yield Skipped(str(name), "an attachment, not a page")
    for name, read in pages:
        parts = [_strip(p) for p in name.with_suffix("").parts]
        stripped = "/".join(t for t, _ in parts)
        page_id = parts[-1][1]
        try:
            text = read().decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
        except (InputRefusedError, UnicodeDecodeError, OSError, zipfile.BadZipFile) as exc:
            yield Skipped(str(name), _why(exc))
            continue
        title = derive_title(text, Path(parts[-1][0])) if text.lstrip().startswith("#") else parts[-1][0]
        meta: dict[str, object] = {"notion_path": stripped}
        if page_id:
            meta["notion_id"] = page_id
        table = "/".join(t for t, _ in parts[:-1])
        row = tables.get(table, {}).pop(parts[-1][0], None)
        if row is not None:
            meta["properties"] = row
            meta["notion_database"] = table
        yield ImportedNote(key=page_id or stripped, name=stripped, title=nfc(title), body=text, metadata=meta,
                           link_names=(stripped,), file=str(name))
    for table, rows in tables.items():
        for title, props in rows.items():  # rows with no page of their own
            body = "\n".join(f"{k}: {v}" for k, v in props.items() if v)
            yield ImportedNote(key=f"{table}/{title}", name=f"{table}/{title}", title=title, body=body,
                               metadata={"notion_path": f"{table}/{title}", "notion_database": table,
                                         "properties": props})


def _strip(part: str) -> tuple[str, str]:
    """(title, id) of a Notion name `Title 0123…cdef` (id "" when there is none)."""
    part = nfc(part)
    match = _ID.search(part)
    return (part[:match.start()], match.group(1)) if match else (part, "")


def _read_csv(name: PurePosixPath, raw: bytes) -> tuple[str, dict[str, dict[str, str]]]:
    stem = name.stem.removesuffix("_all")
    table = "/".join([*(_strip(p)[0] for p in name.parent.parts), _strip(stem)[0]]).lstrip("./")
    reader = csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline=""))
    header = next(reader, [])
    rows: dict[str, dict[str, str]] = {}
    for values in reader:
        if values and values[0].strip():
            rows[nfc(values[0].strip())] = {nfc(k): nfc(v) for k, v in zip(header[1:], values[1:], strict=False)}
    return table, rows


def _zip_files(path: Path, problems: list[Skipped]) -> dict[PurePosixPath, Reader]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputRefusedError(msg("{path} is not a readable zip file ({problem}); give the zip Notion sent, or "
                                    "its unpacked folder.", path=shown_name(path), problem=str(exc)),
                                code=ErrorCode.BAD_EXPORT) from None
    out: dict[PurePosixPath, Reader] = {}
    _members(archive, out, problems, nested=True)
    return out


def _members(archive: zipfile.ZipFile, out: dict[PurePosixPath, Reader], problems: list[Skipped], *,
             nested: bool) -> None:
    """A zip's files into `out`; with `nested`, the files of a zip inside it too (Notion splits a
    large export into `…-Part-1.zip`, `…-Part-2.zip` inside the one it sends), one level deep."""
    for info in archive.infolist():
        name = PurePosixPath(nfc(info.filename))
        if info.is_dir() or any(p.startswith(".") or p == ".." for p in name.parts) or name.is_absolute():
            continue
        if nested and name.suffix.lower() == ".zip":
            _inner_zip(str(name), info.file_size, _member_bytes(archive, info), out, problems)
            continue
        out[name] = _member_reader(archive, info)


def _member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], bytes]:
    def read() -> bytes:
        with archive.open(info) as fh:
            return fh.read(MAX_INNER_ZIP + 1)
    return read


def _inner_zip(label: str, size: int, read: Callable[[], bytes], out: dict[PurePosixPath, Reader],
               problems: list[Skipped]) -> None:
    """The pages of a zip found inside the export, at the export's top level as Notion means them.
    Read into memory (a zip cannot be read without seeking, and no plaintext copy goes to disk),
    so one over MAX_INNER_ZIP is listed as skipped: unpack it and import the folder."""
    if size > MAX_INNER_ZIP:
        problems.append(Skipped(label, "a zip inside the export over 512 MiB; unpack it and import the folder"))
        return
    try:
        data = read()
        if len(data) > MAX_INNER_ZIP:
            raise zipfile.BadZipFile("larger than its directory says")
        _members(zipfile.ZipFile(io.BytesIO(data)), out, problems, nested=False)
    except (zipfile.BadZipFile, OSError, InputRefusedError, EOFError) as exc:
        problems.append(Skipped(label, f"a zip inside the export that cannot be read ({_why(exc)})"))


def _member_reader(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Reader:
    def read() -> bytes:
        if info.file_size > MAX_FILE_BYTES:
            raise InputRefusedError(msg("{path} is over the {limit:,}-byte limit for a note.", path=info.filename,
                                        limit=MAX_FILE_BYTES), code=ErrorCode.FILE_TOO_LARGE)
        with archive.open(info) as fh:
            return fh.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    return read


def _folder_files(path: Path, problems: list[Skipped]) -> dict[PurePosixPath, Reader]:
    if not path.is_dir():
        raise InputRefusedError(msg("{path} does not exist or cannot be opened.", path=shown_name(path)),
                                code=ErrorCode.NOT_FOUND)
    from ..folders import scan_folder

    scan = scan_folder(path)
    out: dict[PurePosixPath, Reader] = {}
    for file in [*scan.readable, *(p for p, _ in scan.skipped)]:
        name = PurePosixPath(shown_name(file.relative_to(path)))
        if name.suffix.lower() == ".zip" and file.is_file():
            _inner_zip(str(name), file.stat().st_size, _file_bytes(file), out, problems)
            continue
        out[name] = _file_reader(file)
    return out


def _file_bytes(file: Path) -> Callable[[], bytes]:
    return lambda: read_file(file, MAX_INNER_ZIP, N_("ingest"))


def _file_reader(file: Path) -> Reader:
    return lambda: read_file(file, MAX_FILE_BYTES, N_("ingest"))


def _why(exc: Exception) -> str:
    if isinstance(exc, InputRefusedError):
        return exc.message
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (bad byte at offset {exc.start})"
    return f"could not be read ({exc})"
