"""The interface language: English, Traditional Chinese (Taiwan usage) or Simplified Chinese.

Strings people read go through gettext catalogs in `memories_tui/locale/` (`.po` in the
repository, compiled to `.mo` by the build and by `scripts/i18n compile`):

- `_("text")` translates now, `_n("{n} file", "{n} files", n)` picks the plural form;
- `N_("text")` only marks a constant for extraction (translate it with `_()` where it is shown);
- `msg("Vault {name} not found.", name=…)` is a `Message`: English when printed with `str()`
  (`--json`, logs, MCP), in the reader's language with `.localized()`. Errors carry one, so
  the same failure reads in English in JSON and in Chinese on a Chinese terminal.

Only the standard library loads here (the first frame of the TUI waits for this module); Babel
is imported only to compile a catalog whose `.mo` is missing or older than its `.po`.
"""

from __future__ import annotations

import contextlib
import gettext
import io
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh-Hant", "zh-Hans")
SETTINGS = ("auto", *LANGUAGES)
LANGUAGE_NAMES = {"en": "English", "zh-Hant": "繁體中文", "zh-Hans": "简体中文"}
DOMAIN = "memories"
LOCALE_DIR = Path(__file__).parent / "locale"

_TRADITIONAL_TERRITORIES = {"TW", "HK", "MO"}
_SIMPLIFIED_TERRITORIES = {"CN", "SG"}

_language = "en"
_catalog: gettext.NullTranslations = gettext.NullTranslations()
_loaded: dict[str, gettext.NullTranslations] = {}
_this_thread = threading.local()  # a language one thread speaks for a while (in_language), else the process's


# -- which language ------------------------------------------------------------------------

def language_from_locale(value: str) -> str | None:
    """`zh_TW.UTF-8` → zh-Hant, `zh_CN` → zh-Hans, `en_US` → en; None for an empty value
    (so the next variable decides, as POSIX does for LC_ALL, LC_MESSAGES and LANG)."""
    name = value.split(".")[0].split("@")[0].replace("-", "_")
    if not name:
        return None
    parts = name.split("_")
    if parts[0].lower() != "zh":
        return "en"
    rest = {p.upper() for p in parts[1:]}
    if "HANT" in rest or rest & _TRADITIONAL_TERRITORIES:
        return "zh-Hant"
    if "HANS" in rest or rest & _SIMPLIFIED_TERRITORIES:
        return "zh-Hans"
    return "en"


def resolve_language(setting: str | None = "auto", environ: Mapping[str, str] | None = None) -> str:
    """The language for a `[ui] language` or `--lang` value: itself, or for "auto" (and None)
    the first of LC_ALL, LC_MESSAGES, LANG that is set."""
    if setting and setting != "auto":
        return normalize_setting(setting)
    env = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        found = language_from_locale(env.get(variable, ""))
        if found is not None:
            return found
    return "en"


def normalize_setting(value: str) -> str:
    """The canonical spelling of a setting (`zh-hant` → `zh-Hant`); ValueError when unknown."""
    for known in SETTINGS:
        if value.strip().lower() == known.lower():
            return known
    raise ValueError(f"unknown language {value!r}; use one of {', '.join(SETTINGS)}")


# -- catalogs ------------------------------------------------------------------------------

def catalog_dir(language: str) -> Path:
    return LOCALE_DIR / language.replace("-", "_") / "LC_MESSAGES"


def load_catalog(language: str) -> gettext.NullTranslations:
    """The compiled catalog of `language`. A `.mo` older than its `.po` (a translator's edit
    not yet compiled) is compiled again in memory with Babel; with no catalog at all the
    strings stay English rather than failing."""
    if language == "en":
        return gettext.NullTranslations()
    if language in _loaded:
        return _loaded[language]
    folder = catalog_dir(language)
    po, mo = folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"
    catalog: gettext.NullTranslations = gettext.NullTranslations()
    try:
        if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
            with mo.open("rb") as fh:
                catalog = gettext.GNUTranslations(fh)
        elif po.is_file():
            catalog = gettext.GNUTranslations(io.BytesIO(compile_po(po, mo)))
    except (OSError, ValueError, ImportError) as exc:
        print(f"memories: warning: the {language} interface catalog cannot be read ({type(exc).__name__}); "
              "showing English.", file=sys.stderr)
    _loaded[language] = catalog
    return catalog


def compile_po(po: Path, mo: Path | None = None) -> bytes:
    """Compile a `.po` with Babel (fuzzy entries left out, as msgfmt does); also write `mo`
    when it is given and writable (an installed package may be read-only: then memory only)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as fh:
        catalog = read_po(fh)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    data = out.getvalue()
    if mo is not None:
        try:
            tmp = mo.with_suffix(".mo.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, mo)
        except OSError:
            pass
    return data


def set_language(language: str) -> None:
    """Switch every later `_()` and `.localized()` to `language` (one of LANGUAGES)."""
    global _language, _catalog
    language = normalize_setting(language)
    if language == "auto":
        language = resolve_language("auto")
    _catalog = load_catalog(language)
    _language = language


def current_language() -> str:
    return getattr(_this_thread, "language", _language)


@contextlib.contextmanager
def in_language(language: str) -> Iterator[None]:
    """Speak `language` in this thread only, for the block: the resident engine renders one
    client's command in that client's language while other threads speak their own."""
    language = normalize_setting(language)
    if language == "auto":
        language = resolve_language("auto")
    saved = getattr(_this_thread, "language", None), getattr(_this_thread, "catalog", None)
    _this_thread.language, _this_thread.catalog = language, load_catalog(language)
    try:
        yield
    finally:
        if saved[0] is None:
            del _this_thread.language, _this_thread.catalog
        else:
            _this_thread.language, _this_thread.catalog = saved


# -- marking and translating ---------------------------------------------------------------

def _(text: str) -> str:
    return getattr(_this_thread, "catalog", _catalog).gettext(text)


def _n(singular: str, plural: str, count: int) -> str:
    return getattr(_this_thread, "catalog", _catalog).ngettext(singular, plural, count)


def N_(text: str) -> str:
    """Mark `text` for the catalog without translating it yet (module constants)."""
    return text


class Message:
    """A sentence with named `{placeholders}` that is rendered late: `str()` gives English
    (for JSON, logs and MCP), `localized()` the current language. A value that is itself a
    Message or an error carrying one is rendered in the same language as its host."""

    __slots__ = ("template", "plural", "count", "params", "literal")

    def __init__(self, template: str, params: Mapping[str, Any], plural: str | None = None,
                 count: int | None = None, *, literal: bool = False) -> None:
        self.template = template
        self.plural = plural
        self.count = count
        self.params = dict(params)
        self.literal = literal  # no placeholders: shown as it is (may hold braces)

    def english(self) -> str:
        text = self.template if self.plural is None or self.count == 1 else self.plural
        return text if self.literal else text.format(**self._values(localized=False))

    def localized(self) -> str:
        if self.plural is None:
            text = _(self.template)
        else:
            text = _n(self.template, self.plural, self.count if self.count is not None else 0)
        if self.literal:
            return text
        try:
            return text.format(**self._values(localized=True))
        except (KeyError, IndexError, ValueError):  # a translation with a broken placeholder
            return self.english()

    def _values(self, *, localized: bool) -> dict[str, Any]:
        values = {}
        for key, value in self.params.items():
            if isinstance(value, Message):
                value = value.localized() if localized else value.english()
            elif localized and callable(getattr(value, "localized", None)):
                value = value.localized()  # an error carrying its own message
            elif isinstance(value, BaseException) and isinstance(getattr(value, "message", None), str):
                value = value.message  # type: ignore[attr-defined]
            values[key] = value
        return values

    def __str__(self) -> str:
        return self.english()

    def to_wire(self) -> dict[str, Any]:
        """A JSON form another process (the resident engine's client) renders in its own
        language: numbers stay numbers (format specs such as `{size:,}` need them), a nested
        message or error nests, anything else is sent as the text it would show."""
        params: dict[str, Any] = {}
        for key, value in self.params.items():
            inner = getattr(value, "localizable", None)
            if isinstance(inner, Message):
                value = inner
            if isinstance(value, Message):
                params[key] = {"message": value.to_wire()}
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                params[key] = value
            else:
                params[key] = str(value)
        return {"template": self.template, "plural": self.plural, "count": self.count, "params": params,
                "literal": self.literal}

    @classmethod
    def from_wire(cls, data: object) -> Message | None:
        """The message `to_wire` described, or None for anything else (then the English is shown)."""
        if not isinstance(data, dict) or not isinstance(data.get("template"), str) \
                or not isinstance(data.get("params"), dict):
            return None
        params: dict[str, Any] = {}
        for key, value in data["params"].items():
            nested = cls.from_wire(value.get("message")) if isinstance(value, dict) else None
            params[str(key)] = nested if nested is not None else value
        plural, count = data.get("plural"), data.get("count")
        return cls(data["template"], params, plural if isinstance(plural, str) else None,
                   count if isinstance(count, int) else None, literal=data.get("literal") is True)

    def __repr__(self) -> str:
        return f"Message({self.template!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and (self.template, self.plural, self.count, self.params, self.literal) == (
            other.template, other.plural, other.count, other.params, other.literal)

    __hash__ = None  # type: ignore[assignment]


def msg(template: str, /, **params: Any) -> Message:
    """A late-rendered sentence; write literal braces as `{{` and `}}`."""
    return Message(template, params)


def msg_n(singular: str, plural: str, count: int, /, **params: Any) -> Message:
    """A late-rendered sentence with plural forms; `count` picks the form."""
    return Message(singular, params, plural=plural, count=count)


def term(text: str) -> Message:
    """A fragment marked elsewhere with `N_()` (or any text: unknown ones stay as they are),
    translated when its host sentence is shown; braces in it are kept as they are."""
    return Message(text, {}, literal=True)


def localized(text: object) -> str:
    """Any shown value in the reader's language: a Message (or an error carrying one)
    rendered now, anything else as it is."""
    render = getattr(text, "localized", None)
    return str(render()) if callable(render) else str(text)
