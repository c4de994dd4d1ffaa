"""SVG snapshots of TUI screens (a small stand-in for pytest-textual-snapshot, which pins
pytest < 9).

`check(app, name)` exports the current screen as SVG (Textual's own `export_screenshot`),
replaces volatile strings (random ids, temp paths) by same-length placeholders so the layout
is unchanged, and compares with `tests/tui/snapshots/NAME.svg`. A difference writes the new
image to `tests/tui/snapshots/__failures__/NAME.svg` for review (open both in a browser);
`SNAPSHOT_UPDATE=1` rewrites the stored images instead. A missing image is a failure too,
unless updating.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parents[1] / "tui" / "snapshots"
FAILURES = SNAPSHOTS / "__failures__"


def updating() -> bool:
    return os.environ.get("SNAPSHOT_UPDATE", "") not in ("", "0")


def normalize(svg: str, masks: dict[str, str]) -> str:
    for real, placeholder in sorted(masks.items(), key=lambda kv: -len(kv[0])):
        assert len(real) == len(placeholder), (real, placeholder)
        svg = svg.replace(real, placeholder)
        svg = svg.replace(real.replace(" ", "&#160;"), placeholder.replace(" ", "&#160;"))  # as the SVG spells it
    # Rich names its CSS classes after a hash of the content: recompute-free, stable name
    return re.sub(r"terminal-\d+", "terminal", svg)


def steady_cursors(app) -> bool:
    """Stop the blink of every text cursor on the screen (drawn steadily while focused, as the
    first blink phase shows it); True when one was blinking. Snapshots taken in either blink
    phase would otherwise differ by the cursor cell."""
    stopped = False
    for widget in app.screen.query("Input, TextArea"):
        if widget.cursor_blink:
            widget.cursor_blink = False
            # a text area keys its cached lines by "cursor shown while blinking", so a line cached
            # in the blink's off phase would be reused without the steady cursor: drop the cache
            widget.notify_style_update()
            widget.refresh()
            stopped = True
    return stopped


async def check(pilot, name: str, masks: dict[str, str] | None = None) -> str | None:
    """None when the screen matches its stored snapshot, else a sentence saying what to do.

    Blinking cursors are stopped before every export (a cursor shows steadily where the focus
    is; a field mounted late is caught too), and the image is taken once three exports 0.1 s
    apart agree, so it does not depend on timing."""
    app = pilot.app

    async def export() -> str:
        steady_cursors(app)
        await pilot.pause(0.05)  # let a stopped cursor and late layout repaint
        return normalize(app.export_screenshot(title=name), masks or {})

    svg = await export()
    # wait until the screen has settled (footer keys, late layout): three exports in a row agree
    agreeing = 1
    for _ in range(60):
        await pilot.pause(0.1)
        again = await export()
        agreeing = agreeing + 1 if again == svg else 1
        svg = again
        if agreeing == 3:
            break
    stored = SNAPSHOTS / f"{name}.svg"
    if updating():
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        stored.write_text(svg, encoding="utf-8")
        return None
    if stored.is_file() and stored.read_text(encoding="utf-8") == svg:
        return None
    FAILURES.mkdir(parents=True, exist_ok=True)
    (FAILURES / f"{name}.svg").write_text(svg, encoding="utf-8")
    what = "differs from" if stored.is_file() else "has no stored snapshot at"
    return (f"{name} {what} {stored.relative_to(SNAPSHOTS.parents[1])}; the new image is in "
            f"{(FAILURES / f'{name}.svg').relative_to(SNAPSHOTS.parents[1])}. Review it, then run with SNAPSHOT_UPDATE=1.")
