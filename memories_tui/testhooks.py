"""Fault-injection points for the crash tests; inert in normal use.

Only the environment variable ``MEMORIES_TEST_PAUSE_AT=<point>:<ready-file>`` (documented in
README, Testing) activates a point: when the process reaches `<point>` it writes its pid to
`<ready-file>` and sleeps, so a test can `kill -9` it at exactly that moment instead of racing
a timer. No TOML key or command-line flag reaches this; without the variable a point is one
dictionary lookup.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ENV = "MEMORIES_TEST_PAUSE_AT"
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
