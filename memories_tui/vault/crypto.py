"""Key derivation, key wrapping and per-record AEAD (R-VAULT-3, DESIGN §2).

Passphrase --Argon2id--> KEK --AES-256-GCM wrap--> random vault key (VK).
VK --HKDF(label)--> subkeys: one for record AEAD, one for the manifest MAC, one for
cached index/vector blobs. `vault passwd` re-wraps VK and never re-encrypts records.
"""

from __future__ import annotations

import hmac
import os
import struct
import unicodedata
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..errors import InputRefusedError, TamperError, VaultError, WrongPassphraseError

KEY_BYTES = 32
NONCE_BYTES = 12
SALT_BYTES = 16

# Creation floor and opening ceiling (DESIGN §2). The ceiling is checked before any KDF
# work so a hostile header cannot make us allocate 1 TiB.
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
            raise VaultError("The vault header names an unknown key derivation function.")
        try:
            params = cls(int(data["m"]), int(data["t"]), int(data["p"]))
        except (KeyError, TypeError, ValueError, OverflowError):
            raise VaultError("The vault header has malformed key derivation parameters.") from None
        params.check_openable()
        return params

    def check_openable(self) -> None:
        if not (8 <= self.memory_kib <= MAX_MEMORY_KIB and 1 <= self.iterations <= MAX_ITERATIONS
                and 1 <= self.lanes <= MAX_LANES):
            raise VaultError(
                "The vault header asks for key derivation parameters beyond the safe ceiling "
                f"(m ≤ {MAX_MEMORY_KIB} KiB, t ≤ {MAX_ITERATIONS}, p ≤ {MAX_LANES}); refusing to open it."
            )

    def check_unlockable(self) -> None:
        """The creation floor holds on unlock too: a vault whose header asks for less memory
        than we would create with is refused (only while the test-only hook is set is it lifted)."""
        self.check_openable()
        if _TEST_KDF_OVERRIDE is None and self.memory_kib < MIN_MEMORY_KIB:
            raise VaultError(
                f"The vault header asks for Argon2id memory m = {self.memory_kib} KiB, below the floor of "
                f"{MIN_MEMORY_KIB} KiB; refusing to unlock it with such weak key derivation.", code="kdf_too_weak")

    def check_creatable(self) -> None:
        if self.memory_kib < MIN_MEMORY_KIB or self.iterations < MIN_ITERATIONS:
            raise VaultError(
                f"Argon2id parameters below m = {MIN_MEMORY_KIB} KiB, t = {MIN_ITERATIONS} are too weak."
            )
        self.check_openable()


# Test-only hook: tests set this to cheap parameters. It is a module attribute, so no TOML,
# environment variable or command-line flag can reach it.
_TEST_KDF_OVERRIDE: KdfParams | None = None


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
        raise InputRefusedError("An empty passphrase is not allowed.", code="empty_passphrase")
    try:
        return bytearray(unicodedata.normalize("NFC", passphrase).encode("utf-8"))
    except UnicodeEncodeError:
        raise InputRefusedError("The passphrase is not valid Unicode text (it holds undecodable bytes).",
                                code="invalid_passphrase") from None


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
        raise VaultError("The vault header's wrapped key has the wrong length; the file is damaged.")
    vault_key = bytearray(KEY_BYTES)
    try:
        AESGCM(kek).decrypt_into(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], header_ad, vault_key)
    except InvalidTag:
        zero(vault_key)
        raise WrongPassphraseError(
            "Wrong passphrase (or the vault header was altered): the vault key could not be unlocked."
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


def length_prefixed(*parts: str | bytes | int) -> bytes:
    """Unambiguous encoding of associated data: each part is 4-byte length + bytes."""
    out = bytearray()
    for part in parts:
        if isinstance(part, int):
            raw = str(part).encode()
        elif isinstance(part, str):
            raw = part.encode("utf-8")
        else:
            raw = part
        out += struct.pack(">I", len(raw)) + raw
    return bytes(out)


def seal(aead: AESGCM, plaintext: bytes | bytearray, ad: bytes) -> tuple[bytes, bytes]:
    nonce = os.urandom(NONCE_BYTES)
    return nonce, aead.encrypt(nonce, plaintext, ad)


def open_sealed(aead: AESGCM, nonce: bytes, ciphertext: bytes, ad: bytes, what: str) -> bytearray:
    """Decrypt into a fresh bytearray the caller wipes once it has parsed the plaintext."""
    if len(nonce) != NONCE_BYTES or len(ciphertext) < 16:
        raise TamperError(f"{what} failed authentication: its nonce or ciphertext has the wrong length. "
                          "Nothing from it is shown.")
    out = bytearray(len(ciphertext) - 16)
    try:
        aead.decrypt_into(nonce, ciphertext, ad, out)
    except (InvalidTag, ValueError):
        raise TamperError(
            f"{what} failed authentication: the vault file was altered, swapped or damaged. "
            "Nothing from it is shown."
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
