"""After lock no key material is left in the process, and no core dumps.

A child process unlocks a vault, reads, writes and searches, then locks. The parent derives
the same keys on its own (it knows the passphrase) and scans every readable mapping of the
child through /proc/PID/mem: first while unlocked (the scan must find the subkeys, so the test
can fail), then after lock, when none of them may be found.
"""

from __future__ import annotations

import hmac
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from memories_tui.engine import Engine
from memories_tui.vault.store import read_header
from tests.helpers.vaults import CHILD_PRELUDE, PASS

pytestmark = pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")

CHILD = CHILD_PRELUDE + """
import gc
from memories_tui.engine import Engine
eng = Engine.open(sys.argv[1])
vid = sys.argv[2]
eng.unlock(vid, "correct horse")
rec = eng.add_record(vid, kind="memory", title="note", body="zeppelin airship")
eng.update_record(vid, rec.id, body="zeppelin balloon")
eng.read_record(vid, rec.id, 1)
eng.search(vid, "zeppelin")
eng.device_only(vid)
print("unlocked", flush=True)
sys.stdin.readline()
eng.lock()
gc.collect()
print("locked", flush=True)
sys.stdin.readline()
"""


def _secrets(path: Path) -> dict[str, bytes]:
    header = read_header(path)
    kek = Argon2id(salt=header.salt, length=32, iterations=header.kdf.iterations, lanes=header.kdf.lanes,
                   memory_cost=header.kdf.memory_kib).derive(b"correct horse")
    wrapped = header.wrapped_key
    vault_key = AESGCM(kek).decrypt(wrapped[:12], wrapped[12:], header.associated_data())
    out = {"kek": kek, "vault key": vault_key,
           "hkdf prk": hmac.digest(bytes(32), vault_key, "sha256")}
    for label in ("record", "manifest", "blob-name", "blob", "anchor"):
        out[f"{label} subkey"] = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                                      info=f"memories/{label}".encode()).derive(vault_key)
    return out


def _found(pid: int, needles: dict[str, bytes]) -> set[str]:
    hits: set[str] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            if m is None or "r" not in m[3] or "[vvar]" in line:
                continue
            lo, hi = int(m[1], 16), int(m[2], 16)
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            hits |= {name for name, needle in needles.items() if needle in data}
    return hits


def _allow_core_dumps() -> None:
    """Start the child with core dumps allowed, so the test shows the vault turning them off."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard != 0:
        resource.setrlimit(resource.RLIMIT_CORE, (1 << 30 if hard == resource.RLIM_INFINITY else hard, hard))


def test_lock_leaves_no_key_material_and_core_dumps_are_off(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", PASS).vault_id
    eng.close()
    needles = _secrets(home / "vaults" / f"{vid}.mvault")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(home), vid], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).parents[2],
                             preexec_fn=_allow_core_dumps)
    try:
        assert child.stdout.readline().strip() == b"unlocked", child.stderr.read().decode()
        while_open = _found(child.pid, needles)
        assert {"record subkey", "manifest subkey"} <= while_open  # the scan does see live keys
        limits = Path(f"/proc/{child.pid}/limits").read_text()
        core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
        assert core.split()[4] == "0", core
        child.stdin.write(b"\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == b"locked", child.stderr.read().decode()
        assert _found(child.pid, needles) == set()
    finally:
        child.kill()
        child.wait()


RESTORER = CHILD_PRELUDE + """
import gc
from memories_tui.engine import Engine
eng = Engine.open(sys.argv[1])
eng.restore_vault(sys.argv[2], "correct horse", force=True)
gc.collect()
print("restored", flush=True)
sys.stdin.readline()
eng.unlock(sys.argv[3], "correct horse")
print("unlocked", flush=True)
sys.stdin.readline()
"""


def test_restore_leaves_no_key_material(tmp_path, cheap_kdf):
    """Restore opens the backup's keys to verify it and write the anchors; they are wiped after."""
    home = tmp_path / "home"
    eng = Engine.open(home)
    try:
        vid = eng.create_vault("v", PASS).vault_id
        eng.unlock(vid, PASS)
        eng.add_record(vid, kind="memory", title="note", body="zeppelin airship")
        backup = eng.backup_vault(vid, tmp_path / "bk").path
    finally:
        eng.close()
    needles = _secrets(backup)
    child = subprocess.Popen([sys.executable, "-c", RESTORER, str(home), str(backup), vid], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).parents[2])
    try:
        assert child.stdout.readline().strip() == b"restored", child.stderr.read().decode()
        assert _found(child.pid, needles) == set()
        child.stdin.write(b"\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == b"unlocked", child.stderr.read().decode()
        assert "record subkey" in _found(child.pid, needles)  # the scan does see live keys
    finally:
        child.kill()
        child.wait()
