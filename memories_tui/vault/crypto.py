"""Key derivation, key wrapping and per-record AEAD.

Passphrase --Argon2id--> KEK --AES-256-GCM wrap--> random vault key (VK).
VK --HKDF(label)--> subkeys: one for record AEAD, one for the manifest MAC, one for
cached index/vector blobs. `vault passwd` re-wraps VK and never re-encrypts records.
"""

from __future__ import annotations

import hmac
import os
import unicodedata

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..errors import ErrorCode, InputRefusedError, TamperError, VaultError, WrongPassphraseError
from ..i18n import msg
from .format import MIN_MEMORY_KIB as MIN_MEMORY_KIB
from .format import KdfParams as KdfParams
from .format import length_prefixed as length_prefixed

KEY_BYTES = 32
NONCE_BYTES = 12
SALT_BYTES = 16

# Test-only hook: tests set this to cheap parameters. It is a module attribute, so no TOML,
# environment variable or command-line flag can reach it.
_TEST_KDF_OVERRIDE: KdfParams | None = None


def check_unlockable(params: KdfParams) -> None:
    params.check_unlockable(floor_lifted=_TEST_KDF_OVERRIDE is not None)


def creation_params() -> KdfParams:
    if _TEST_KDF_OVERRIDE is not None:
        return _TEST_KDF_OVERRIDE
    params = KdfParams()
    params.check_creatable()
    return params


def normalize_passphrase(passphrase: str) -> bytearray:
    """NFC then UTF-8, so the same passphrase typed on macOS (NFD) and Linux (NFC) agrees.
    A bytearray, so callers can wipe it once the KDF has run."""
    if not passphrase:
        raise InputRefusedError(msg("An empty passphrase is not allowed."), code=ErrorCode.EMPTY_PASSPHRASE)
    try:
        return bytearray(unicodedata.normalize("NFC", passphrase).encode("utf-8"))
    except UnicodeEncodeError:
        raise InputRefusedError(msg("The passphrase is not valid Unicode text (it holds undecodable bytes)."),
                                code=ErrorCode.INVALID_PASSPHRASE) from None


def derive_kek(passphrase: str, salt: bytes, params: KdfParams) -> bytearray:
    """Argon2id straight into a wipeable buffer (no immutable copy of the KEK is made)."""
    params.check_openable()
    kdf = Argon2id(salt=salt, length=KEY_BYTES, iterations=params.iterations, lanes=params.lanes,
                   memory_cost=params.memory_kib)
    secret = normalize_passphrase(passphrase)
    kek = bytearray(KEY_BYTES)
    try:
        kdf.derive_into(secret, kek)  # type: ignore[arg-type]  # the stub says bytes; any buffer works
    finally:
        zero(secret)
    return kek


def wrap_key(kek: bytearray, vault_key: bytearray, header_ad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(kek).encrypt(nonce, vault_key, header_ad)


def unwrap_key(kek: bytearray, wrapped: bytes, header_ad: bytes) -> bytearray:
    if len(wrapped) != NONCE_BYTES + KEY_BYTES + 16:
        raise VaultError(msg("The vault header's wrapped key has the wrong length; the file is damaged."))
    vault_key = bytearray(KEY_BYTES)
    try:
        AESGCM(kek).decrypt_into(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], header_ad, vault_key)
    except InvalidTag:
        zero(vault_key)
        raise WrongPassphraseError(
            msg("Wrong passphrase (or the vault header was altered): the vault key could not be unlocked.")
        ) from None
    return vault_key


def subkey_into(vault_key: bytearray, label: str, out: memoryview) -> None:
    """HKDF-SHA256(vault key, "memories/<label>") written into `out` (a slice of the key buffer)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=len(out), salt=None, info=f"memories/{label}".encode())
    hkdf.derive_into(vault_key, out)


def subkey(vault_key: bytearray, label: str) -> bytearray:
    out = bytearray(KEY_BYTES)
    subkey_into(vault_key, label, memoryview(out))
    return out


def seal(aead: AESGCM, plaintext: bytes | bytearray, ad: bytes) -> tuple[bytes, bytes]:
    nonce = os.urandom(NONCE_BYTES)
    return nonce, aead.encrypt(nonce, plaintext, ad)


def open_sealed(aead: AESGCM, nonce: bytes, ciphertext: bytes, ad: bytes, what: str) -> bytearray:
    """Decrypt into a fresh bytearray the caller wipes once it has parsed the plaintext."""
    if len(nonce) != NONCE_BYTES or len(ciphertext) < 16:
        raise TamperError(msg("{what} failed authentication: its nonce or ciphertext has the wrong length. "
                              "Nothing from it is shown.", what=what))
    out = bytearray(len(ciphertext) - 16)
    try:
        aead.decrypt_into(nonce, ciphertext, ad, out)
    except (InvalidTag, ValueError):
        raise TamperError(
            msg("{what} failed authentication: the vault file was altered, swapped or damaged. Nothing from "
                "it is shown.", what=what)
        ) from None
    return out


def mac(key: bytearray | memoryview, data: bytes) -> bytes:
    """HMAC-SHA256 through OpenSSL with the key passed as a buffer (no immutable key copy)."""
    return hmac.digest(key, data, "sha256")


def zero(buf: bytearray | None) -> None:
    """Overwrite a mutable buffer in place (works while memoryviews of it exist)."""
    if buf:
        buf[:] = bytes(len(buf))


def random_key() -> bytearray:
    """A fresh random key read straight into a wipeable buffer (os.urandom would leave a copy)."""
    key = bytearray(KEY_BYTES)
    try:
        with open("/dev/urandom", "rb", buffering=0) as fh:
            if fh.readinto(key) == KEY_BYTES:
                return key
    except OSError:
        pass
    key[:] = os.urandom(KEY_BYTES)
    return key
