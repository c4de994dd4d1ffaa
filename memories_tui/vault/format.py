"""The parts of the vault format that need no cipher: Argon2id parameters and the
associated-data encoding. Listing vaults reads headers with these alone, so the TUI's first
frame does not wait for the `cryptography` library; `crypto` re-exports them."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import ErrorCode, VaultError
from ..i18n import msg

# Creation floor and opening ceiling: a new vault never gets parameters below the floor, and the
# ceiling is checked before any KDF work so a hostile header cannot make us allocate 1 TiB.
MIN_MEMORY_KIB = 64 * 1024
MIN_ITERATIONS = 3
MAX_MEMORY_KIB = 4 * 1024 * 1024
MAX_ITERATIONS = 16
MAX_LANES = 64


@dataclass(frozen=True)
class KdfParams:
    memory_kib: int = 256 * 1024
    iterations: int = 3
    lanes: int = 4

    def to_dict(self) -> dict[str, int | str]:
        return {"alg": "argon2id", "m": self.memory_kib, "t": self.iterations, "p": self.lanes}

    @classmethod
    def from_dict(cls, data: object) -> KdfParams:
        if not isinstance(data, dict) or data.get("alg") != "argon2id":
            raise VaultError(msg("The vault header names an unknown key derivation function."))
        try:
            params = cls(int(data["m"]), int(data["t"]), int(data["p"]))
        except (KeyError, TypeError, ValueError, OverflowError):
            raise VaultError(msg("The vault header has malformed key derivation parameters.")) from None
        params.check_openable()
        return params

    def check_openable(self) -> None:
        if not (8 <= self.memory_kib <= MAX_MEMORY_KIB and 1 <= self.iterations <= MAX_ITERATIONS
                and 1 <= self.lanes <= MAX_LANES):
            raise VaultError(
                msg("The vault header asks for key derivation parameters beyond the safe ceiling (m ≤ "
                    "{max_memory_kib} KiB, t ≤ {max_iterations}, p ≤ {max_lanes}); refusing to open it.",
                    max_memory_kib=MAX_MEMORY_KIB, max_iterations=MAX_ITERATIONS, max_lanes=MAX_LANES)
            )

    def check_unlockable(self, floor_lifted: bool = False) -> None:
        """The creation floor holds on unlock too: a vault whose header asks for less memory
        than we would create with is refused (`crypto.check_unlockable` lifts it only while its
        test-only hook is set)."""
        self.check_openable()
        if not floor_lifted and self.memory_kib < MIN_MEMORY_KIB:
            raise VaultError(
                msg("The vault header asks for Argon2id memory m = {memory_kib} KiB, below the floor of "
                    "{min_memory_kib} KiB; refusing to unlock it with such weak key derivation.",
                    memory_kib=self.memory_kib, min_memory_kib=MIN_MEMORY_KIB), code=ErrorCode.KDF_TOO_WEAK)

    def check_creatable(self) -> None:
        if self.memory_kib < MIN_MEMORY_KIB or self.iterations < MIN_ITERATIONS:
            raise VaultError(
                msg("Argon2id parameters below m = {min_memory_kib} KiB, t = {min_iterations} are too weak.",
                    min_memory_kib=MIN_MEMORY_KIB, min_iterations=MIN_ITERATIONS)
            )
        self.check_openable()


_PACK = struct.Struct(">I").pack


def length_prefixed(*parts: str | bytes | int) -> bytes:
    """Unambiguous encoding of associated data: each part is 4-byte length + bytes. (Called
    several times per record by a sync of a whole vault: one join, no intermediate copies.)"""
    out: list[bytes] = []
    for part in parts:
        raw = part.encode("utf-8") if isinstance(part, str) else str(part).encode() if isinstance(part, int) else part
        out += (_PACK(len(raw)), raw)
    return b"".join(out)
