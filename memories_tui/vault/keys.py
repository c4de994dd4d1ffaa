"""The subkeys of one unlocked vault, kept in a single wipeable buffer (one place to zero on lock).

The vault key goes through HKDF straight into slices of one bytearray; the two AES-GCM
contexts are built from those slices (no `bytes` copy is made) and OpenSSL clears their key
schedules when they are freed. `wipe()` overwrites the buffer and drops the contexts. What
Python cannot wipe (the passphrase string, decrypted text in `str` objects) is listed in
docs/security.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import LockedError
from ..i18n import msg
from . import crypto

if TYPE_CHECKING:
    from .header import Header

# "anchor" keys the home's record of the newest state it saw of this vault (anchor.py)
# "sync-*" seal what leaves for a sync target: bundles of revisions, device heads, the join record,
# snapshots of a device's chain (compaction)
_LABELS = ("record", "manifest", "blob-name", "blob", "anchor", "sync-bundle", "sync-head", "sync-join",
           "sync-snapshot")
_core_dumps_disabled = False


def disable_core_dumps() -> None:
    """RLIMIT_CORE soft limit 0 from the first unlock until the process exits: freed memory
    may still hold decrypted text after lock, so a later crash must not write it to a core file."""
    global _core_dumps_disabled
    if _core_dumps_disabled:
        return
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
        _core_dumps_disabled = True
    except (ImportError, ValueError, OSError):
        pass  # not on this platform (Windows): nothing to disable


@dataclass(frozen=True)
class JoinWrap:
    """The vault key wrapped in a sync target's join-record form under the passphrase of the
    header with this KDF and salt: made at unlock, while the passphrase is at hand, so that a
    resident engine can add a sync target without asking for it again. Only the passphrase
    opens it, as the header's own wrap."""

    kdf: crypto.KdfParams
    salt: bytes
    wrapped: bytes


class VaultKeys:
    def __init__(self, vault_key: bytearray, vault_id: str) -> None:
        self.vault_id = vault_id
        self.join_wrap: JoinWrap | None = None
        self._buffer = bytearray(crypto.KEY_BYTES * len(_LABELS))
        view = memoryview(self._buffer)
        self._views = [view[i * crypto.KEY_BYTES:(i + 1) * crypto.KEY_BYTES] for i in range(len(_LABELS))]
        view.release()
        for label, out in zip(_LABELS, self._views, strict=True):
            crypto.subkey_into(vault_key, label, out)
        self._record: AESGCM | None = AESGCM(self._views[0])
        self._blob: AESGCM | None = AESGCM(self._views[3])

    @property
    def record(self) -> AESGCM:
        if self._record is None:
            raise LockedError(msg("The vault is locked; unlock it again."))
        return self._record

    @property
    def blob(self) -> AESGCM:
        if self._blob is None:
            raise LockedError(msg("The vault is locked; unlock it again."))
        return self._blob

    def sync_aead(self, purpose: str) -> AESGCM:
        """An AEAD context for one sync purpose ("bundle", "head", "join" or "snapshot"), each its own subkey."""
        return AESGCM(self._live(_LABELS.index(f"sync-{purpose}")))

    @property
    def manifest(self) -> memoryview:
        return self._live(1)

    @property
    def blob_mac(self) -> memoryview:
        return self._live(2)

    @property
    def anchor(self) -> memoryview:
        return self._live(4)

    def _live(self, index: int) -> memoryview:
        if self._record is None:
            raise LockedError(msg("The vault is locked; unlock it again."))
        return self._views[index]

    def wipe(self) -> None:
        self._record = self._blob = None
        self.join_wrap = None
        crypto.zero(self._buffer)
        for view in self._views:
            view.release()
        self._views = []


def open_keys(header: Header, passphrase: str) -> VaultKeys:
    """The passphrase → KEK → vault key → subkeys of the vault with this header (and the key
    wrapped for a join record, `JoinWrap`); the KEK and the vault key are wiped before returning
    (WrongPassphraseError when it does not unwrap)."""
    crypto.check_unlockable(header.kdf)
    disable_core_dumps()
    kek = crypto.derive_kek(passphrase, header.salt, header.kdf)
    try:
        vault_key = unwrap_header_key(kek, header)
        try:
            join_wrap = JoinWrap(header.kdf, header.salt, crypto.wrap_key(
                kek, vault_key, join_wrap_ad(header.vault_id, header.kdf, header.salt)))
        except BaseException:
            crypto.zero(vault_key)
            raise
    finally:
        crypto.zero(kek)
    try:
        keys = VaultKeys(vault_key, header.vault_id)
        keys.join_wrap = join_wrap
        return keys
    finally:
        crypto.zero(vault_key)


ADOPTED = b"\x01"  # marks a header key taken as it came from a sync target's join record


def join_wrap_ad(vault_id: str, kdf: crypto.KdfParams, salt: bytes) -> bytes:
    """What binds the vault key wrapped in a sync target's join record: the vault and the KDF
    (no device's name: every device adopts the same wrap after `vault passwd` elsewhere)."""
    import json

    return crypto.length_prefixed("sync-join-wrap/v1", vault_id, json.dumps(kdf.to_dict(), sort_keys=True), salt)


def is_adopted(header: Header) -> bool:
    """Whether the header's key is a join record's wrap (until the next unlock re-wraps it)."""
    return header.wrapped_key[:1] == ADOPTED and len(header.wrapped_key) == crypto.NONCE_BYTES + crypto.KEY_BYTES + 17


def unwrap_header_key(kek: bytearray, header: Header) -> bytearray:
    """The vault key of `header` (WrongPassphraseError when `kek` does not unwrap it): wrapped
    with the header's own associated data, or adopted from a join record (`is_adopted`)."""
    if is_adopted(header):
        return crypto.unwrap_key(kek, header.wrapped_key[1:], join_wrap_ad(header.vault_id, header.kdf, header.salt))
    return crypto.unwrap_key(kek, header.wrapped_key, header.associated_data())
