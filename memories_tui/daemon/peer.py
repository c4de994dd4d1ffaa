"""Who is at the other end of a Unix socket: the kernel's answer, not the peer's claim.

Linux gives (pid, uid, gid) through `SO_PEERCRED`; macOS and the BSDs give the uid through
`LOCAL_PEERCRED` (a `struct xucred`). Both sides check it: the daemon refuses a connection
from another user, and a client refuses to hand a passphrase to a socket another user serves.
"""

from __future__ import annotations

import socket
import struct
import sys
from dataclasses import dataclass

_SOL_LOCAL = 0  # macOS <sys/un.h>
_LOCAL_PEERCRED = 0x001
_LOCAL_PEERPID = 0x002


@dataclass(frozen=True)
class Peer:
    uid: int
    pid: int | None  # None where the platform does not say


def peer_of(sock: socket.socket) -> Peer:
    """The connected peer's credentials; OSError when the platform cannot tell (then refuse)."""
    if hasattr(socket, "SO_PEERCRED"):
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        linux_pid, uid, _gid = struct.unpack("3i", raw)
        return Peer(uid=uid, pid=linux_pid or None)
    if sys.platform == "darwin" or "bsd" in sys.platform:
        # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]; }
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, struct.calcsize("IIh16I"))
        _version, uid = struct.unpack_from("II", raw)
        pid: int | None
        try:
            pid = struct.unpack("i", sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERPID, struct.calcsize("i")))[0]
        except OSError:
            pid = None
        return Peer(uid=uid, pid=pid)
    raise OSError("peer credentials are not available on this platform")
