"""What leaves for a target, and how each object is checked when it comes back.

Object names are opaque: `key` (the join record), `d/<device>/head` and `d/<device>/<seq>`,
where the device id is random and the sequence number counts that device's bundles. A bundle
is AES-256-GCM sealed with its own subkey, its associated data binding the vault id, the
device and the sequence number (a bundle moved to another place, another device or another
vault fails), and it names the SHA-256 digest of its predecessor (a dropped or swapped bundle
breaks the chain). A head, sealed with another subkey, names the device's last bundle and
its digest (a truncated chain is seen); its sequence number never goes back (a replayed head
is seen).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import SyncTamperedError
from ..i18n import msg
from ..vault.crypto import NONCE_BYTES, length_prefixed

T = TypeVar("T")

JOIN_NAME = "key"
DEVICES = "d/"
MAX_NAME = 64  # characters of a device name a head may carry


_DEVICE_ID = re.compile(r"^[0-9a-f]{16}$")


def device_ids(names: list[str]) -> list[str]:
    """The devices that have objects among these names (from a listing of DEVICES), in order."""
    return sorted({n.split("/")[1] for n in names if n.count("/") == 2 and _DEVICE_ID.match(n.split("/")[1])})


def bundle_name(device: str, seq: int) -> str:
    return f"d/{device}/{seq:010d}"


def head_name(device: str) -> str:
    return f"d/{device}/head"


def forgotten_name(device: str) -> str:
    return f"d/{device}/forgotten"


def forget_ad(vault_id: str, device: str) -> bytes:
    return length_prefixed("sync-forget/v1", vault_id, device)


def digest(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


# json.dumps with options builds an encoder per call; a sync encodes once per record
compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def seal(aead: AESGCM, value: Any, ad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    data = compact_json(value).encode("utf-8")
    return nonce + aead.encrypt(nonce, data, ad)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def unseal(aead: AESGCM, blob: bytes, ad: bytes, what: str) -> Any:
    """The decrypted JSON value; anything that fails authentication or parsing is tampering."""
    try:
        if len(blob) < NONCE_BYTES + 16:
            raise ValueError("too short")
        plain = aead.decrypt(blob[:NONCE_BYTES], memoryview(blob)[NONCE_BYTES:], ad)  # no copy of a large one
        value = json.loads(plain)
        if _SURROGATE_ESCAPE.search(plain):  # JSON may escape half a UTF-16 pair, which no text can hold
            json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone one raises UnicodeEncodeError
        return value
    except (InvalidTag, ValueError, RecursionError):  # UnicodeError is a ValueError
        raise SyncTamperedError(msg("{what} in the sync target failed authentication: it was altered, truncated, "
                                    "moved or belongs to another vault. Nothing was changed here.",
                                    what=what)) from None


def bundle_ad(vault_id: str, device: str, seq: int) -> bytes:
    return length_prefixed("sync-bundle/v1", vault_id, device, seq)


def head_ad(vault_id: str, device: str) -> bytes:
    return length_prefixed("sync-head/v1", vault_id, device)


def join_ad(vault_id: str) -> bytes:
    return length_prefixed("sync-join/v1", vault_id)


@dataclass(frozen=True)
class Head:
    device: str
    seq: int  # the device's last bundle (0: none yet)
    digest: str  # that bundle's digest ("" when seq is 0)
    time: str  # when the head was written (UTC)
    snap: int = 0  # the bundle its current snapshot reaches (0: none; snapshots.py)
    snap_digest: str = ""  # the digest of that snapshot's parts, so no other snapshot passes for it
    read: dict[str, int] = field(default_factory=dict)  # how far it has read each other device
    adopted: dict[str, int] = field(default_factory=dict)  # forgotten devices its snapshot carries, up to where
    name: str = ""  # what the device calls itself (`[sync] device_name`, else its host name); sealed like the rest

    def sealed(self, aead: AESGCM, vault_id: str) -> bytes:
        value: dict[str, Any] = {"seq": self.seq, "digest": self.digest, "time": self.time}
        if self.snap:
            value.update(snap=self.snap, snapd=self.snap_digest)
        if self.read:
            value["read"] = self.read
        if self.adopted:
            value["adopted"] = self.adopted
        if self.name:
            value["name"] = self.name
        return seal(aead, value, head_ad(vault_id, self.device))

    @classmethod
    def opened(cls, aead: AESGCM, vault_id: str, device: str, blob: bytes) -> Head:
        value = unseal(aead, blob, head_ad(vault_id, device), f"The head of device {device}")
        try:
            seq, dig, time = value["seq"], value["digest"], value["time"]
            snap, snapd, read = value.get("snap", 0), value.get("snapd", ""), value.get("read", {})
            adopted, name = value.get("adopted", {}), value.get("name", "")
            if type(seq) is not int or seq < 0 or not isinstance(dig, str) or not isinstance(time, str):
                raise TypeError
            if type(snap) is not int or not 0 <= snap <= seq or not isinstance(snapd, str) or not isinstance(read, dict) \
                    or not all(isinstance(d, str) and type(n) is int and n >= 0 for d, n in read.items()) \
                    or not isinstance(adopted, dict) or (adopted and not snap) \
                    or not all(isinstance(d, str) and type(n) is int and n > 0 for d, n in adopted.items()) \
                    or not isinstance(name, str) or len(name) > MAX_NAME:
                raise TypeError
        except (TypeError, KeyError, AttributeError):
            raise SyncTamperedError(msg("The head of device {device} is malformed.", device=device)) from None
        return cls(device, seq, dig, time, snap, snapd, read, adopted, name)


def cut_by_size(items: Iterable[T], cost: Callable[[T], int], limit: int) -> Iterator[list[T]]:
    """`items` in order, in runs whose summed `cost` stays within `limit` (one item over it is a
    run of its own): many ordinary objects instead of one that every store must take whole."""
    part: list[T] = []
    size = 0
    for item in items:
        weight = cost(item)
        if part and size + weight > limit:
            yield part
            part, size = [], 0
        part.append(item)
        size += weight
    if part:
        yield part
