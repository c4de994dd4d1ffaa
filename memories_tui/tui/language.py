"""Text in the reader's language for the TUI: sentences with styled parts kept whole for the
translator (the catalogs are memories_tui.i18n's)."""

from __future__ import annotations

from string import Formatter

from rich.text import Text


def styled(template: str, base_style: str = "", **parts: str | tuple[str, str]) -> Text:
    """A translated sentence as rich Text, its `{placeholders}` filled with text or (text, style)
    pairs: the sentence stays whole for the translator, the parts keep their styles; nothing in
    it is read as markup."""
    out = Text()
    for literal, field, _spec, _conversion in Formatter().parse(template):
        if literal:
            out.append(literal, style=base_style)
        if field is not None:
            value = parts[field]
            text, style = value if isinstance(value, tuple) else (value, "")
            out.append(text, style=style)
    return out
