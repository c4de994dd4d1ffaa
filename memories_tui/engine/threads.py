"""Thread hygiene for background work."""

from __future__ import annotations

import os
import threading


def lower_thread_priority(niceness: int = 10) -> None:
    """Lower only the calling thread's CPU priority (Linux nice values are per thread), so
    background embedding leaves the cores to searches and the UI."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + niceness))
    except (AttributeError, OSError):
        pass  # not supported here: background work simply runs at normal priority
