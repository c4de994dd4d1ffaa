"""The grant records in a home that every front end shares (which MCP servers run and what they may read).

`revoke(home, VAULT_ID)` writes `<home>/mcp/revoked/<VAULT_ID>` with the time of revocation:
any MCP server started before that time loses the vault at its next call (a server started
later is a fresh grant). Each running server keeps `<home>/mcp/servers/<pid>.json` (pid, vault
ids, start and expiry; no content), so the CLI and the TUI can list and revoke them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..i18n import msg


def mcp_dir(home: Path) -> Path:
    return home / "mcp"


def _revocation_path(home: Path, vault_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", vault_id):
        raise UsageError(msg("{vault_id!r} is not a vault id.", vault_id=vault_id))
    return mcp_dir(home) / "revoked" / vault_id


def revoke(home: Path, vault_id: str, *, now: float | None = None) -> float:
    """End every running server's grant for `vault_id`; returns the revocation time."""
    when = time.time() if now is None else now
    _atomic_write(_revocation_path(home, vault_id), f"{when!r}\n")
    return when


def revoked_at(home: Path, vault_id: str) -> float | None:
    try:
        return float(_revocation_path(home, vault_id).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def write_server_record(home: Path, pid: int, vaults: list[str], started_at: float,
                        expires_at: float | None) -> Path:
    path = mcp_dir(home) / "servers" / f"{pid}.json"
    _atomic_write(path, json.dumps({"pid": pid, "vaults": sorted(vaults), "started_at": started_at,
                                    "expires_at": expires_at}) + "\n")
    return path


def remove_server_record(home: Path, pid: int) -> None:
    (mcp_dir(home) / "servers" / f"{pid}.json").unlink(missing_ok=True)


@dataclass(frozen=True)
class ServerRecord:
    pid: int
    vaults: list[str]
    started_at: float
    expires_at: float | None


def running_servers(home: Path, vault_id: str | None = None) -> list[ServerRecord]:
    """Live servers (their process still exists) holding an unexpired, unrevoked grant."""
    out = []
    now = time.time()
    for path in sorted((mcp_dir(home) / "servers").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record = ServerRecord(int(data["pid"]), list(data["vaults"]), float(data["started_at"]),
                                  None if data.get("expires_at") is None else float(data["expires_at"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _alive(record.pid):
            path.unlink(missing_ok=True)  # a server that was killed could not remove its record
            continue
        live = [v for v in record.vaults
                if (record.expires_at is None or now < record.expires_at)
                and ((revoked := revoked_at(home, v)) is None or revoked < record.started_at)]
        if live and (vault_id is None or vault_id in live):
            out.append(ServerRecord(record.pid, live, record.started_at, record.expires_at))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in (path.parent.parent, path.parent):  # <home>/mcp and its subfolder: owner only
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
