"""TOML config → frozen, validated settings.

Unknown keys and wrong types are errors, not silently ignored: a typo in a security
setting must not fall back to a default the user did not choose. API keys never live in
TOML; only the *name* of the environment variable that holds one does.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

from .config_background import BackupSettings, SourcesSettings, SyncSettings, parse_backup
from .config_values import (
    choice_value,
    declared,
    declared_default,
    looks_like_key,
    parse_table,
    section,
    setting,
    table_value,
)
from .config_values import int_value as _int
from .config_values import shown as _shown
from .config_values import text_value as _str
from .errors import ConfigError, InputRefusedError
from .files import read_limited
from .i18n import N_, SETTINGS, msg, normalize_setting
from .loopback import is_loopback_host

PROFILES = ("embeddinggemma", "sentence-transformers")
FUSION_POLICIES = ("score", "rrf")  # hybrid fusion, see retrieval/fusion.py
PROTOCOLS = ("gemini", "compatible")
PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How much one vault's in-memory index may hold; `[rag.limits]` may raise or lower them."""

    chunks: int = setting(10_000, lo=1, hi=10_000_000)
    source_mib: float = setting(16.0, lo=0.001, hi=65_536)
    vector_mib: float = setting(32.0, lo=0.001, hi=65_536)
    cached_vaults: int = setting(2, lo=1, hi=64)


@dataclass(frozen=True)
class HttpSettings:
    use_env_proxy: bool = setting(True)
    proxy_url: str | None = setting(None, custom=True)
    retries: int = setting(2, lo=0, hi=5)
    backoff_ms: int = setting(500, lo=0, hi=60_000)
    connect_timeout_seconds: float = setting(10.0, lo=0.01, hi=600)
    timeout_seconds: float = setting(60.0, lo=0.01, hi=3600)  # per read: the longest silence between two bytes
    request_timeout_seconds: float = setting(300.0, lo=0.01, hi=86_400)  # one model-service request, retries included
    download_timeout_seconds: float = setting(900.0, lo=0.01, hi=86_400)


@dataclass(frozen=True)
class RemoteService:
    """One `[rag.embedding]`, `[rag.generation]` or `[rag.rerank]` table.

    Asymmetric embedding models tell queries from documents: ``query_input_type`` /
    ``document_input_type`` go on the wire (``input_type`` for compatible servers, ``taskType``
    for Gemini, which defaults to RETRIEVAL_QUERY / RETRIEVAL_DOCUMENT), and
    ``query_prefix`` / ``document_prefix`` are put in front of the text (e5's ``query: ``).
    """

    protocol: str = setting(choices=PROTOCOLS)
    url: str = setting(custom=True)
    model: str = setting()
    api_key_env: str | None = setting(None, custom=True)
    dimensions: int | None = setting(None, lo=1, hi=65_536)
    query_input_type: str | None = setting(None)
    document_input_type: str | None = setting(None)
    query_prefix: str = setting("", custom=True)
    document_prefix: str = setting("", custom=True)
    batch_size: int = setting(32, custom=True)  # at most 100 for gemini, 2048 for compatible
    json_mode: bool = setting(True)


@dataclass(frozen=True)
class RagSettings:
    local_model_dir: Path = setting(custom=True)  # default <home>/models/embeddinggemma
    local_model_profile: str = setting("embeddinggemma", choices=PROFILES)
    local_threads: int = setting(lo=1, hi=64, factory=lambda: default_local_threads())
    max_tokens: int = setting(2048, lo=16, hi=8192)
    model_download_base_url: str | None = setting(None, custom=True)
    fusion: str = setting("score", choices=FUSION_POLICIES)  # hybrid: min-max convex, or "rrf" (k = 60)
    limits: Limits = section(Limits)
    http: HttpSettings = section(HttpSettings)
    embedding: RemoteService | None = section()
    generation: RemoteService | None = section()
    rerank: RemoteService | None = section()


@dataclass(frozen=True)
class TuiSettings:
    idle_lock_minutes: float = setting(15.0, lo=0, hi=24 * 60)
    # [tui.keys]: binding id -> key(s), as App.set_keymap
    keys: dict[str, str] = setting(custom=True, factory=dict)


@dataclass(frozen=True)
class DaemonSettings:
    """The resident engine (`memories daemon`): a vault nobody used for this long is locked."""

    idle_lock_minutes: float = setting(30.0, lo=0, hi=24 * 60)


@dataclass(frozen=True)
class UiSettings:
    # "auto" (from LC_ALL / LC_MESSAGES / LANG), "en", "zh-Hant" or "zh-Hans"
    language: str = setting("auto", custom=True)


@dataclass(frozen=True)
class Config:
    """The whole file; `path` is where it was read from, every other field is a table."""

    path: Path
    rag: RagSettings = section(required=True)
    tui: TuiSettings = section(TuiSettings)
    daemon: DaemonSettings = section(DaemonSettings)
    backup: BackupSettings = section(BackupSettings)
    ui: UiSettings = section(UiSettings)
    sources: SourcesSettings = section(SourcesSettings)
    sync: SyncSettings = section(SyncSettings)


def default_local_threads() -> int:
    """Half the logical CPUs, 1 to 4. More onnxruntime threads than cores made EmbeddingGemma
    slower, not faster, and its pool threads are not niced, so background embedding would take
    the cores that searches and the TUI need (bench/bench_gemma.py)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def default_model_dir(home: Path) -> Path:
    return home / "models" / "embeddinggemma"


def load_config(path: Path, home: Path) -> Config:
    """Read and validate `path`; a missing file means all defaults."""
    data: dict[str, Any] = {}
    if path.exists() or path.is_symlink():
        try:
            text = read_limited(path, MAX_CONFIG_BYTES, what=N_("config file")).decode("utf-8")
        except InputRefusedError as exc:
            raise ConfigError(msg("Cannot read the config file: {reason}", reason=exc)) from None
        except UnicodeDecodeError:
            raise ConfigError(msg("Config file {path} is not UTF-8 text.", path=path)) from None
        try:
            data = tomllib.loads(text)  # stdlib, ~50x faster than tomlkit for a commented config
        except (ValueError, RecursionError) as exc:
            raise ConfigError(msg("Config file {path} is not valid TOML: {reason}", path=path, reason=exc)) from None
    return parse_config(data, path, home)


def configured_language(home: str | None, config: str | None) -> str | None:
    """`[ui] language` as set in the config (None when unset or unreadable), read before
    anything else so a command's help and errors can be in it; a broken config is reported
    by the command that loads it, not here."""
    from .home import resolve_config, resolve_home

    try:
        # read like the config proper: size-limited, regular files only (never /dev/zero)
        raw = read_limited(resolve_config(resolve_home(home), config), MAX_CONFIG_BYTES, what="config file")
        value = tomllib.loads(raw.decode("utf-8")).get("ui", {}).get("language")
        return normalize_setting(value) if isinstance(value, str) else None
    except Exception:  # noqa: BLE001 - any problem means "not set" here
        return None


def parse_config(data: dict[str, Any], path: Path, home: Path) -> Config:
    top = table_value(data, "", set(declared(Config)))
    rag = table_value(top.get("rag", {}), "rag", set(declared(RagSettings)))
    model_dir_value = rag.get("local_model_dir")
    if model_dir_value is None:
        model_dir = default_model_dir(home)
    else:
        model_dir = Path(_str(model_dir_value, "rag.local_model_dir")).expanduser()
        if not model_dir.is_absolute():
            model_dir = (path.parent / model_dir).resolve()
    base_url = rag.get("model_download_base_url")
    if base_url is not None:
        base_url = _url(_str(base_url, "rag.model_download_base_url"), "rag.model_download_base_url",
                        allow_query=False)
    settings = parse_table(
        RagSettings, rag, "rag", local_model_dir=model_dir, model_download_base_url=base_url,
        limits=parse_table(Limits, rag.get("limits", {}), "rag.limits"),
        http=_http(rag.get("http", {})),
        embedding=_service(rag.get("embedding"), "rag.embedding"),
        generation=_service(rag.get("generation"), "rag.generation"),
        rerank=_service(rag.get("rerank"), "rag.rerank"),
    )
    tui = table_value(top.get("tui", {}), "tui", set(declared(TuiSettings)))
    keys = tui.get("keys", {})
    keys = table_value(keys, "tui.keys", set(keys) if isinstance(keys, dict) else set())
    tui_settings = parse_table(TuiSettings, tui, "tui", keys={str(k): _str(v, f"tui.keys.{k}") for k, v in keys.items()})
    ui = table_value(top.get("ui", {}), "ui", set(declared(UiSettings)))
    language = _str(ui.get("language", declared_default(UiSettings, "language")), "ui.language")
    try:
        language = normalize_setting(language)
    except ValueError:
        raise ConfigError(msg("ui.language must be one of {names}; got {shown}.",
                              names=', '.join(SETTINGS), shown=_shown(language))) from None
    return Config(path=path, rag=settings, tui=tui_settings,
                  daemon=parse_table(DaemonSettings, top.get("daemon", {}), "daemon"),
                  backup=parse_backup(top.get("backup", {}), path), ui=UiSettings(language=language),
                  sources=parse_table(SourcesSettings, top.get("sources", {}), "sources"),
                  sync=parse_table(SyncSettings, top.get("sync", {}), "sync"))


def _http(value: Any) -> HttpSettings:
    t = table_value(value, "rag.http", set(declared(HttpSettings)))
    proxy = t.get("proxy_url")
    if proxy is not None:
        proxy = _str(proxy, "rag.http.proxy_url")
        parts = _split(proxy, "rag.http.proxy_url")
        if parts.scheme not in PROXY_SCHEMES or not parts.hostname:
            raise ConfigError(
                msg("rag.http.proxy_url must be an {names} URL with a host (value not shown).",
                    names='/'.join(PROXY_SCHEMES))
            )
        if parts.username or parts.password:
            raise ConfigError(
                msg("rag.http.proxy_url must not contain credentials; put an authenticated proxy in the "
                    "HTTPS_PROXY/ALL_PROXY environment variable instead.")
            )
    return parse_table(HttpSettings, t, "rag.http", proxy_url=proxy)


_BASE_KEYS = {"protocol", "url", "model", "api_key_env"}
# Which of RemoteService's keys each service table takes.
SERVICE_KEYS: dict[str, set[str]] = {
    "rag.embedding": _BASE_KEYS | {"dimensions", "query_input_type", "document_input_type", "query_prefix",
                                   "document_prefix", "batch_size"},
    "rag.generation": _BASE_KEYS | {"json_mode"},
    "rag.rerank": _BASE_KEYS,
}


def _service(value: Any, name: str) -> RemoteService | None:
    if value is None:
        return None
    allowed = SERVICE_KEYS[name]
    t = table_value(value, name, allowed | {"api_key"})
    if "api_key" in t:
        raise ConfigError(
            msg("{name}.api_key is not allowed: never put a key in TOML. Set api_key_env to the name of an "
                "environment variable that holds it.", name=name)
        )
    for key, item in t.items():
        if isinstance(item, str) and looks_like_key(item):
            raise ConfigError(
                msg("{name}.{key} looks like an API key (value not shown). Keys never go in the config: put "
                    "the key in an environment variable and set {name}.api_key_env to that variable's name.",
                    name=name, key=key)
            )
    for key in ("protocol", "url", "model"):
        if key not in t:
            raise ConfigError(msg("{name}.{key} is required.", name=name, key=key))
    protocol = choice_value(t["protocol"], f"{name}.protocol", PROTOCOLS)
    key_env = t.get("api_key_env")
    if key_env is not None:
        key_env = _str(key_env, f"{name}.api_key_env")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", key_env):
            raise ConfigError(msg("{name}.api_key_env must be the name of an environment variable (letters, "
                                  "digits and _), not the key itself; the value given is not shown.", name=name))
    url = _url(_str(t["url"], f"{name}.url"), f"{name}.url", allow_query=False)
    host = urlsplit(url).hostname or ""
    if urlsplit(url).scheme == "http" and not is_loopback_host(host):
        raise ConfigError(msg("{name} uses plain http:// to {host}, which is not loopback; remote services "
                              "must use https:// (plain http is allowed only for 127.0.0.0/8, ::1 and "
                              "localhost).", name=name, host=host))
    _check_operation(protocol, url, name)
    given: dict[str, Any] = {"protocol": protocol, "url": url, "api_key_env": key_env}
    for key in ("query_prefix", "document_prefix"):
        given[key] = _prefix(t.get(key, declared_default(RemoteService, key)), f"{name}.{key}")
    given["batch_size"] = _int(t.get("batch_size", declared_default(RemoteService, "batch_size")),
                               f"{name}.batch_size", 1, 100 if protocol == "gemini" else 2048)
    return parse_table(RemoteService, t, name, only=allowed | {"api_key"}, **given)


# Gemini operation URLs name their method after a colon; a wrong one would 404 at call time.
_GEMINI_METHODS = {
    "rag.embedding": (":embedContent", ":batchEmbedContents"),
    "rag.generation": (":generateContent",),
}


def _check_operation(protocol: str, url: str, name: str) -> None:
    methods = _GEMINI_METHODS.get(name)
    if protocol == "gemini" and methods and not urlsplit(url).path.endswith(methods):
        raise ConfigError(msg("{name}.url must be a Gemini operation URL ending in {names}.",
                              name=name, names=' or '.join(methods)))


def _prefix(value: Any, name: str) -> str:
    if not isinstance(value, str) or len(value) > 200:
        raise ConfigError(msg("{name} must be a string of at most 200 characters.", name=name))
    return value


def _url(url: str, name: str, allow_query: bool) -> str:
    """Shape check; the loopback/HTTPS rule is checked in `_service` and again by models.http at call time."""
    parts = _split(url, name)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(msg("{name} must be an http(s) URL with a host (value not shown).", name=name))
    if parts.username or parts.password:
        raise ConfigError(msg("{name} must not contain credentials; use api_key_env instead.", name=name))
    if not allow_query and (parts.query or parts.fragment):
        raise ConfigError(msg("{name} must not contain a query string or fragment.", name=name))
    return url


def _split(url: str, name: str) -> SplitResult:
    """urlsplit plus the checks that raise later (bad IPv6 brackets, a port out of range)."""
    try:
        parts = urlsplit(url)
        _ = parts.hostname, parts.port
    except ValueError as exc:
        raise ConfigError(msg("{name} is not a valid URL ({reason}); got {shown}.",
                              name=name, reason=exc, shown=_shown(url))) from None
    return parts
