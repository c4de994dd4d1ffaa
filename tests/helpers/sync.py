"""Several homes on one machine are several devices: each `Device` is an engine on its own home
with the same vault unlocked, syncing with one target (a folder, an S3 bucket or a WebDAV server)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memories_tui.engine import Engine

SYNC_PASS = "sync test passphrase"


@dataclass
class Device:
    engine: Engine
    vault_id: str

    def add(self, title: str, body: str = "", kind: str = "memory", tags: tuple[str, ...] = ()) -> str:
        return self.engine.add_record(self.vault_id, kind=kind, title=title, body=body, tags=tags).id  # type: ignore[arg-type]

    def edit(self, record_id: str, body: str) -> None:
        self.engine.update_record(self.vault_id, record_id, body=body)

    def delete(self, record_id: str) -> None:
        self.engine.delete_record(self.vault_id, record_id)

    def sync(self):  # noqa: ANN201 - a SyncReport
        return self.engine.sync_now(self.vault_id)

    def edit_a_line(self, record_id: str, line: int, text: str) -> None:
        """Put `text` in place of line `line` of the body's first six (padded to six): concurrent
        edits of different lines merge three-way, of the same line conflict."""
        lines = (self.records()[record_id][2].splitlines() + [f"line {n}" for n in range(6)])[:6]
        lines[line] = text
        self.edit(record_id, "\n".join(lines) + "\n")

    def records(self) -> dict[str, tuple[str, str, str]]:
        """id -> (kind, title, body): what must be equal on converged devices."""
        return {r.id: (r.kind, r.title, r.body) for r in self.engine.list_records(self.vault_id)}

    def conflicts(self) -> dict[str, set[tuple[bool, str | None]]]:
        return {c.record_id: {(k.deleted, k.body) for k in c.kept} for c in self.engine.conflicts(self.vault_id)}

    def close(self) -> None:
        self.engine.close()


def first_device(home: Path, target: str, endpoint_url: str | None = None, *, device_only: bool = False) -> Device:
    engine = Engine.open(home)
    info = engine.create_vault("notes", SYNC_PASS, device_only=device_only)
    engine.unlock(info.vault_id, SYNC_PASS)
    engine.sync_add(info.vault_id, target, SYNC_PASS, endpoint_url=endpoint_url)
    return Device(engine, info.vault_id)


def joined_device(home: Path, target: str, endpoint_url: str | None = None) -> Device:
    engine = Engine.open(home)
    report = engine.sync_join(target, SYNC_PASS, endpoint_url=endpoint_url)
    return Device(engine, report.vault_id)


def a_note_on_two_devices(tmp_path: Path, title: str, body: str, kind: str = "memory",
                          tags: tuple[str, ...] = ()) -> tuple[Device, Device, str]:
    """Device a (home a) with the note and an untouched "Other note", synced through a folder
    (tmp_path/Sync), and device b joined to it: (a, b, the note's id); both open."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    rid = a.add(title, body, kind=kind, tags=tags)
    a.add("Other note", "untouched")
    a.sync()
    return a, joined_device(tmp_path / "b", str(folder)), rid


def news_for_a_joined_device(tmp_path: Path) -> tuple[Device, Path]:
    """Device A (home a) pushed "Quince jam", home b joined the folder, then A pushed "Medlar
    tart": what b must still fetch itself. (A, open; the folder.)"""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("Quince jam", "Simmer with lemon peel.")
    a.sync()
    joined_device(tmp_path / "b", str(folder)).close()
    a.add("Medlar tart", "Bletted medlars.")  # pushed after b joined
    a.sync()
    return a, folder


def target_bytes(folder: Path) -> bytes:
    """Every byte of every file under `folder` (names included), to search for plaintext."""
    out = bytearray()
    for path in sorted(folder.rglob("*")):
        out += str(path.relative_to(folder)).encode()
        if path.is_file():
            out += path.read_bytes()
    return bytes(out)
