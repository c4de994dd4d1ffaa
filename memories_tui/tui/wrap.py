"""Line breaking for Chinese and mixed text where the TUI wraps text itself.

Textual folds a run of CJK characters at any cell, so a line can start with `，` or `。`
("，之後…"). Here a line never starts with closing punctuation and never ends with an opening
bracket (the usual CJK rule, kinsoku): the character before such a mark moves down with it.
Latin words are broken at spaces, and only cut when one word is wider than the line.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

# may not start a line: closing punctuation, full and half width
NO_START = frozenset("，。、；：？！）」』】》〉〕｝］…‥・’”％‰℃,.;:!?)]}»›") | frozenset("ーぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮ")
# may not end a line: opening brackets and quotes
NO_END = frozenset("（「『【《〈〔｛［‘“([{«‹")


def _wide(char: str) -> bool:
    return cell_len(char) > 1


def can_break(text: str, index: int) -> bool:
    """May a line end just before `text[index]`?"""
    if index <= 0 or index >= len(text):
        return False
    before, after = text[index - 1], text[index]
    if after in NO_START or before in NO_END:
        return False
    if before.isspace() and not after.isspace():
        return True
    return _wide(before) or _wide(after)


def line_ranges(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) of each line of `text` wrapped to `width` cells; spaces at a break are
    dropped, newlines in the text are kept as breaks."""
    width = max(width, 2)
    ranges: list[tuple[int, int]] = []
    start = 0
    for paragraph in text.split("\n"):
        _wrap_paragraph(paragraph, start, width, ranges)
        start += len(paragraph) + 1
    return ranges


def _wrap_paragraph(text: str, offset: int, width: int, out: list[tuple[int, int]]) -> None:
    start, used, n = 0, 0, 0
    while n < len(text):
        cells = cell_len(text[n])
        if used + cells > width and n > start and not text[n].isspace():
            cut = _break_at(text, start, n)
            end = cut
            while end > start and text[end - 1].isspace():
                end -= 1
            out.append((offset + start, offset + end))
            start = cut
            while start < len(text) and text[start].isspace():
                start += 1
            used, n = cell_len(text[start:n]), max(n, start)
            continue
        used += cells
        n += 1
    end = len(text)
    while end > start and text[end - 1].isspace():
        end -= 1
    out.append((offset + start, offset + end))


def _break_at(text: str, start: int, overflow: int) -> int:
    """The break for a line from `start` whose character at `overflow` does not fit: the last
    allowed break, else (one word wider than the line) right before `overflow`."""
    for index in range(overflow, start, -1):
        if can_break(text, index):
            return index
    return overflow


def wrap(text: Text, width: int) -> Text:
    """`text` with its lines broken by the rules above (styles kept), one Text with newlines."""
    out = Text()
    for n, (start, end) in enumerate(line_ranges(text.plain, width)):
        if n:
            out.append("\n")
        out.append_text(text[start:end])
    return out


class BrokenLines:
    """A Rich renderable: `text` broken into lines by the rules above at whatever width it is
    drawn (Textual would turn a plain `Text` into its own content and fold it anywhere).
    `plain` and `str()` give the text, as for a `Text`."""

    def __init__(self, text: Text) -> None:
        self.text = text

    @property
    def plain(self) -> str:
        return self.text.plain

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield wrap(self.text, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, min(options.max_width, max((cell_len(line) for line in self.plain.split("\n")),
                                                          default=1)))


class Hanging:
    """Rows of a label and a text, the text broken by the rules above beside the label and
    its later lines indented as far as the label column (a help row stays readable at 80
    columns). `plain` and `str()` give the rows as one text, each label padded to `indent`."""

    def __init__(self, rows: list[tuple[Text, Text]], indent: int, head: Text | None = None) -> None:
        self.rows, self.indent, self.head = rows, indent, head

    @property
    def plain(self) -> str:
        lines = [self.head.plain] if self.head is not None else []
        lines += [label.plain + " " * (self.indent - cell_len(label.plain)) + text.plain for label, text in self.rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        out = Text()
        if self.head is not None:
            out.append_text(wrap(self.head, options.max_width))
        indent = min(self.indent, max(options.max_width // 2, 1))  # a very narrow box keeps room for the text
        for label, text in self.rows:
            if out:
                out.append("\n")
            out.append_text(label)
            out.append(" " * max(indent - cell_len(label.plain), 1 if cell_len(label.plain) >= indent else 0))
            body_width = max(options.max_width - max(indent, cell_len(label.plain) + 1), 2)
            for n, line in enumerate(wrap(text, body_width).split("\n")):
                if n:
                    out.append("\n" + " " * indent)
                out.append_text(line)
        yield out

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, min(options.max_width, max((cell_len(line) for line in self.plain.split("\n")),
                                                          default=1)))
