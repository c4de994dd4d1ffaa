"""The join record: what lets a new device join with the target and the passphrase alone.

It lies in the target as `key`: the vault id, the KDF parameters and salt of the passphrase,
and the vault key wrapped under the passphrase-derived key (as the vault header wraps it), plus
the vault's name and device-only flag sealed under a subkey of the vault key. The name is not
readable without the passphrase.

The sealed part also names a digest of the wrap and when its passphrase was set (`since`, in
milliseconds): only a device holding the vault key can write it, so after `vault passwd` on one
device the others adopt the new wrap at their next sync (`adoptable`), and only a newer one
than their own — an old record put back by the target is not taken.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from ..errors import ErrorCode, SyncError, SyncTamperedError, VaultError, WrongPassphraseError
from ..i18n import msg
from ..vault import crypto
from ..vault.format import KdfParams
from ..vault.header import Header
from ..vault.keys import VaultKeys, is_adopted, join_wrap_ad, unwrap_header_key
from .sealing import JOIN_NAME, join_ad, seal, unseal
from .targets import Target

_FORMAT = "memories-sync/1"


@dataclass(frozen=True)
class JoinRecord:
    vault_id: str
    kdf: KdfParams
    salt: bytes
    wrapped: bytes
    sealed: bytes

    def to_bytes(self) -> bytes:
        return json.dumps({"format": _FORMAT, "vault_id": self.vault_id, "kdf": self.kdf.to_dict(),
                           "salt": _b64(self.salt), "wrapped": _b64(self.wrapped), "sealed": _b64(self.sealed)},
                          sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> JoinRecord:
        try:
            v = json.loads(raw)
            if v["format"] != _FORMAT or not isinstance(v["vault_id"], str):
                raise ValueError("format")
            return cls(v["vault_id"], KdfParams.from_dict(v["kdf"]), base64.b64decode(v["salt"]),
                       base64.b64decode(v["wrapped"]), base64.b64decode(v["sealed"]))
        except (ValueError, KeyError, TypeError, RecursionError):
            raise SyncTamperedError(msg("The sync target's join record is malformed or not a Memories sync "
                                        "target.")) from None
        except VaultError:  # key derivation parameters Memories never writes (a ceiling far above, or under its floor)
            raise _altered_kdf() from None

    def wrap_ad(self) -> bytes:
        return join_wrap_ad(self.vault_id, self.kdf, self.salt)

    def wrap_digest(self) -> str:
        return hashlib.sha256(crypto.length_prefixed(self.wrap_ad(), self.wrapped)).hexdigest()


def _altered_kdf() -> SyncTamperedError:
    return SyncTamperedError(msg("The sync target's join record asks for key derivation parameters Memories never "
                                 "writes (beyond its ceiling or under its floor): it was altered. Nothing was changed "
                                 "here."))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def read_record(target: Target) -> JoinRecord | None:
    raw = target.get(JOIN_NAME)
    return JoinRecord.from_bytes(raw) if raw is not None else None


def check_same_vault(target: Target, vault_id: str) -> JoinRecord | None:
    record = read_record(target)
    if record is not None and record.vault_id != vault_id:
        raise SyncError(msg("The sync target {target} belongs to another vault; use another folder or prefix.",
                            target=target.description), code=ErrorCode.SYNC_TARGET_OTHER_VAULT)
    return record


def publish(target: Target, header: Header, passphrase: str | None, keys: VaultKeys, device_only: bool,
            since: int = 0) -> bool:
    """Put the join record in the target unless the one there already wraps the key under this
    device's passphrase (same salt and KDF); whether it was put. After `vault passwd` the salt
    differs, so the record follows the new passphrase (set at `since`). `header` is the vault
    file's as it is now; without the passphrase, the wrap made at unlock serves while it is
    this header's (sync_passphrase_needed once the passphrase changed since)."""
    existing = check_same_vault(target, header.vault_id)
    if existing is not None and (existing.salt, existing.kdf) == (header.salt, header.kdf):
        return False
    draft = JoinRecord(header.vault_id, header.kdf, header.salt, _wrapped(header, passphrase, keys), b"")
    sealed = seal(keys.sync_aead("join"), {"name": header.name, "device_only": device_only,
                                           "wrap": draft.wrap_digest(), "since": since}, join_ad(header.vault_id))
    record = JoinRecord(header.vault_id, header.kdf, header.salt, draft.wrapped, sealed)
    target.put(JOIN_NAME, record.to_bytes())
    return True


def _wrapped(header: Header, passphrase: str | None, keys: VaultKeys) -> bytes:
    """The vault key in the join record's form under `header`'s passphrase."""
    if is_adopted(header):
        return header.wrapped_key[1:]  # taken from a join record: it is in that form already
    ready = keys.join_wrap
    if ready is not None and (ready.salt, ready.kdf) == (header.salt, header.kdf):
        return ready.wrapped
    if passphrase is None:
        raise SyncError(msg("The passphrase of this vault was changed since it was unlocked here; the sync target "
                            "needs it to let new devices join. Give it again."), code=ErrorCode.SYNC_PASSPHRASE_NEEDED)
    kek = crypto.derive_kek(passphrase, header.salt, header.kdf)
    try:
        vault_key = unwrap_header_key(kek, header)
        try:
            return crypto.wrap_key(kek, vault_key, join_wrap_ad(header.vault_id, header.kdf, header.salt))
        finally:
            crypto.zero(vault_key)
    finally:
        crypto.zero(kek)


@dataclass
class Joined:
    vault_id: str
    name: str
    device_only: bool
    vault_key: bytearray  # the caller wipes it


def open_record(record: JoinRecord, passphrase: str) -> Joined:
    """WrongPassphraseError when the passphrase does not unwrap the key."""
    try:
        crypto.check_unlockable(record.kdf)
    except VaultError:
        raise _altered_kdf() from None
    kek = crypto.derive_kek(passphrase, record.salt, record.kdf)
    try:
        vault_key = crypto.unwrap_key(kek, record.wrapped, record.wrap_ad())
    except WrongPassphraseError:
        raise WrongPassphraseError(msg("Wrong passphrase (or the sync target's join record was altered): the vault "
                                       "key could not be unlocked. Nothing was changed here.")) from None
    except VaultError:  # a wrap of the wrong length
        raise SyncTamperedError(msg("The sync target's join record is malformed or not a Memories sync "
                                    "target.")) from None
    finally:
        crypto.zero(kek)
    keys = VaultKeys(vault_key, record.vault_id)
    try:
        value = unseal(keys.sync_aead("join"), record.sealed, join_ad(record.vault_id), "The join record")
    finally:
        keys.wipe()
    if not (isinstance(value, dict) and isinstance(value.get("name"), str)
            and isinstance(value.get("device_only"), bool)):
        crypto.zero(vault_key)
        raise SyncTamperedError(msg("The sync target's join record is malformed."))
    return Joined(record.vault_id, value["name"], value["device_only"], vault_key)


def adoptable(record: JoinRecord, keys: VaultKeys, header: Header, since: int) -> int | None:
    """When the record's passphrase was set, if this device should take its wrap: another
    passphrase than this header's, sealed by a holder of the vault key together with the digest
    of this very wrap, and set later than `since` (when this device's passphrase was). Else None."""
    if (record.salt, record.kdf) == (header.salt, header.kdf) or record.vault_id != header.vault_id:
        return None
    value = unseal(keys.sync_aead("join"), record.sealed, join_ad(record.vault_id), "The join record")
    if not isinstance(value, dict) or value.get("wrap") != record.wrap_digest():
        return None  # written before wraps were sealed, or the wrap was swapped: never adopted
    stamp = value.get("since")
    return stamp if type(stamp) is int and stamp > since else None


def sealed_since(record: JoinRecord, keys: VaultKeys) -> int:
    """When the record's passphrase was set (0 for a record written before that was sealed)."""
    value = unseal(keys.sync_aead("join"), record.sealed, join_ad(record.vault_id), "The join record")
    stamp = value.get("since") if isinstance(value, dict) and value.get("wrap") == record.wrap_digest() else 0
    return stamp if type(stamp) is int else 0
