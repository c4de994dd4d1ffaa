"""Fault-injection points for the crash tests, and the clock the resident engine's tests move;
inert in normal use.

Only the environment variable ``MEMORIES_TEST_PAUSE_AT=<point>:<ready-file>`` (documented in
docs/testing.md) activates a point: when the process reaches `<point>` it writes its pid to
`<ready-file>` and sleeps, so a test can `kill -9` it at exactly that moment instead of racing
a timer. No TOML key or command-line flag reaches this; without the variable a point is one
dictionary lookup.

``MEMORIES_TEST_HOLD_AT=<point>:<ready-file>`` is the same for a race a test must win without
killing anything: the first time the process reaches `<point>` it writes its pid to
`<ready-file>` and waits until the test removes that file, then carries on (a lock that
arrives while a key is derived, a lock between a call's answer and its last check).

``MEMORIES_TEST_CLOCK=<file>`` makes `now()` read the time from `<file>` (seconds since the
epoch, written by the test) instead of the system clock, so idle locks and `unlock --for`
expiry are tested by moving time forward rather than by sleeping.

``MEMORIES_TEST_DAEMON_LIMITS=idle=0.5,request=2,inflight=1000000`` lowers the daemon's
connection limits (see `daemon_limit`).

``MEMORIES_TEST_BUILD=<version>[:<api>]`` makes this process (and a daemon it starts) claim another
package version or API fingerprint, so the version handshake is tested without two installs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ENV = "MEMORIES_TEST_PAUSE_AT"
HOLD_ENV = "MEMORIES_TEST_HOLD_AT"
CLOCK_ENV = "MEMORIES_TEST_CLOCK"
BUILD_ENV = "MEMORIES_TEST_BUILD"
_held: set[str] = set()
# A forgotten variable must not hang a process forever: after this long it carries on.
MAX_PAUSE_SECONDS = 600


def pause_point(name: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    point, sep, ready_file = spec.partition(":")
    if point != name or not sep or not ready_file:
        return
    tmp = Path(ready_file + ".tmp")
    tmp.write_text(str(os.getpid()), encoding="ascii")
    os.replace(tmp, ready_file)  # appears complete or not at all
    time.sleep(MAX_PAUSE_SECONDS)


def hold_point(name: str) -> None:
    """Wait here, once per process, until the test removes the ready file (see above)."""
    spec = os.environ.get(HOLD_ENV)
    if not spec:
        return
    point, sep, ready_file = spec.partition(":")
    if point != name or not sep or not ready_file or name in _held:
        return
    _held.add(name)
    ready = Path(ready_file)
    tmp = Path(ready_file + ".tmp")
    tmp.write_text(str(os.getpid()), encoding="ascii")
    os.replace(tmp, ready)
    deadline = time.monotonic() + MAX_PAUSE_SECONDS
    while ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def now() -> float:
    """Seconds since the epoch: the system clock, or the test's clock file when one is named."""
    clock_file = os.environ.get(CLOCK_ENV)
    if clock_file:
        try:
            return float(Path(clock_file).read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            pass  # a clock file being rewritten: fall back to real time for this one reading
    return time.time()


LIMITS_ENV = "MEMORIES_TEST_DAEMON_LIMITS"


def daemon_limit(name: str, default: float) -> float:
    """The resident engine's limit `name`, lowered by ``MEMORIES_TEST_DAEMON_LIMITS=name=value,…``
    so a test reaches it without waiting half a minute or sending gigabytes. Only ever lowered:
    a forgotten variable cannot lift a limit."""
    for item in os.environ.get(LIMITS_ENV, "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip() == name:
            try:
                chosen = float(value)
            except ValueError:
                return default
            return min(default, chosen) if chosen > 0 else default
    return default
