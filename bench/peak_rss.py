"""Run `python -m memories_tui ARGS` in this process and print its peak resident memory (VmHWM,
bytes) on the last line of stderr. `ru_maxrss` from wait4 would count the parent's pages the
child carried between fork and exec, so the process reports its own peak instead."""

from __future__ import annotations

import runpy
import sys


def main() -> None:
    sys.argv = ["memories", *sys.argv[1:]]
    try:
        runpy.run_module("memories_tui", run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    else:
        code = 0
    with open("/proc/self/status", encoding="ascii") as handle:
        peak = next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmHWM:"))
    print(f"peak-rss {peak}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
