"""Checks on record input before anything reaches the store (a clear refusal instead of a stored surprise)."""

from __future__ import annotations

from ..errors import ErrorCode, InputRefusedError
from ..i18n import msg
from ..vault.records import KINDS, NewRecord, RecordUpdate


def check_new_record(item: NewRecord) -> None:
    if item.kind not in KINDS or item.kind == "asset":
        raise InputRefusedError(
            msg("Unknown record kind {kind!r}; use memory, card, private or credential (assets: `asset add`).",
                kind=item.kind),
            code=ErrorCode.BAD_KIND)
    if not item.title.strip():
        raise InputRefusedError(msg("A record needs a non-empty title (--title)."), code=ErrorCode.BAD_TITLE)
    check_text(item.title, "The title")
    check_text("", "A tag", *item.tags)
    check_body(item.body)


def check_update(change: RecordUpdate) -> None:
    if change.title is not None and not change.title.strip():
        raise InputRefusedError(msg("A title cannot be empty."), code=ErrorCode.BAD_TITLE)
    check_text(change.title or "", "The title")
    check_text("", "A tag", *(change.tags or ()))
    if change.body is not None:
        check_body(change.body)


def check_body(body: str) -> None:
    if "\x00" in body:
        raise InputRefusedError(msg("The text contains NUL characters; only text can be stored as a body."),
                                code=ErrorCode.INVALID_TEXT)
    check_text(body, "The text")


def check_text(text: str, what: str, *more: str) -> None:
    """Lone surrogates (non-UTF-8 bytes on a command line, `\\ud800` in JSON) cannot be stored."""
    for value in (text, *more):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputRefusedError(msg("{what} is not valid Unicode text (it holds undecodable bytes).", what=what),
                                    code=ErrorCode.INVALID_TEXT) from None
