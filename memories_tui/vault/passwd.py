"""A new header for `vault passwd`: the same vault key wrapped under a new passphrase, with a
fresh salt and the current KDF parameters (never weaker than the header's). Records are never
re-encrypted; the store writes the returned header inside its write transaction."""

from __future__ import annotations

import os

from . import crypto
from .header import Header
from .keys import unwrap_header_key


def rewrapped(header: Header, old: str, new: str) -> Header:
    """`header` with its vault key unwrapped by `old` and wrapped again by `new`
    (WrongPassphraseError when `old` does not unwrap it; nothing is written here)."""
    crypto.zero(crypto.normalize_passphrase(new))  # refuse an empty one before any KDF work
    crypto.check_unlockable(header.kdf)
    kek = crypto.derive_kek(old, header.salt, header.kdf)
    try:
        vault_key = unwrap_header_key(kek, header)
    finally:
        crypto.zero(kek)
    current = crypto.creation_params()
    params = crypto.KdfParams(max(current.memory_kib, header.kdf.memory_kib),
                              max(current.iterations, header.kdf.iterations), current.lanes)
    fresh = Header(vault_id=header.vault_id, name=header.name, format=header.format, kdf=params,
                   salt=os.urandom(crypto.SALT_BYTES), wrapped_key=b"", created=header.created)
    try:
        new_kek = crypto.derive_kek(new, fresh.salt, params)
        try:
            wrapped = crypto.wrap_key(new_kek, vault_key, fresh.associated_data())
        finally:
            crypto.zero(new_kek)
    finally:
        crypto.zero(vault_key)
    return Header(**{**fresh.__dict__, "wrapped_key": wrapped})


def own_form(header: Header, passphrase: str) -> Header:
    """`header` with a key adopted from a sync target's join record wrapped again with the
    header's own associated data (same passphrase, salt and KDF), which binds its name again."""
    kek = crypto.derive_kek(passphrase, header.salt, header.kdf)
    try:
        vault_key = unwrap_header_key(kek, header)
        try:
            wrapped = crypto.wrap_key(kek, vault_key, header.associated_data())
        finally:
            crypto.zero(vault_key)
    finally:
        crypto.zero(kek)
    return Header(**{**header.__dict__, "wrapped_key": wrapped})
