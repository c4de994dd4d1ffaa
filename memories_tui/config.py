"""TOML config → frozen, validated settings.

Unknown keys and wrong types are errors, not silently ignored: a typo in a security
setting must not fall back to a default the user did not choose. API keys never live in
TOML; only the *name* of the environment variable that holds one does.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

from .config_background import BackupSettings, SourcesSettings, SyncSettings, parse_backup, parse_sources, parse_sync
from .config_values import int_value as _int
from .config_values import looks_like_key
from .config_values import number_value as _num
from .config_values import shown as _shown
from .config_values import table_value as _table
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

    chunks: int = 10_000
    source_mib: float = 16
    vector_mib: float = 32
    cached_vaults: int = 2


@dataclass(frozen=True)
class HttpSettings:
    use_env_proxy: bool = True
    proxy_url: str | None = None
    retries: int = 2
    backoff_ms: int = 500
    connect_timeout_seconds: float = 10
    timeout_seconds: float = 60  # per read: the longest silence between two bytes
    request_timeout_seconds: float = 300  # one model-service request in all, retries included
    download_timeout_seconds: float = 900


@dataclass(frozen=True)
class RemoteService:
    """One `[rag.embedding]`, `[rag.generation]` or `[rag.rerank]` table.

    Asymmetric embedding models tell queries from documents: ``query_input_type`` /
    ``document_input_type`` go on the wire (``input_type`` for compatible servers, ``taskType``
    for Gemini, which defaults to RETRIEVAL_QUERY / RETRIEVAL_DOCUMENT), and
    ``query_prefix`` / ``document_prefix`` are put in front of the text (e5's ``query: ``).
    """

    protocol: str
    url: str
    model: str
    api_key_env: str | None = None
    dimensions: int | None = None
    query_input_type: str | None = None
    document_input_type: str | None = None
    query_prefix: str = ""
    document_prefix: str = ""
    batch_size: int = 32
    json_mode: bool = True


@dataclass(frozen=True)
class RagSettings:
    local_model_dir: Path
    local_model_profile: str = "embeddinggemma"
    local_threads: int = field(default_factory=lambda: default_local_threads())
    max_tokens: int = 2048
    model_download_base_url: str | None = None
    fusion: str = "score"  # hybrid: "score" (min-max convex, the default) or "rrf" (k = 60)
    limits: Limits = field(default_factory=Limits)
    http: HttpSettings = field(default_factory=HttpSettings)
    embedding: RemoteService | None = None
    generation: RemoteService | None = None
    rerank: RemoteService | None = None


@dataclass(frozen=True)
class TuiSettings:
    idle_lock_minutes: float = 15
    keys: dict[str, str] = field(default_factory=dict)  # [tui.keys]: binding id -> key(s), as App.set_keymap


@dataclass(frozen=True)
class DaemonSettings:
    """The resident engine (`memories daemon`): a vault nobody used for this long is locked."""

    idle_lock_minutes: float = 30


@dataclass(frozen=True)
class UiSettings:
    language: str = "auto"  # "auto" (from LC_ALL / LC_MESSAGES / LANG), "en", "zh-Hant" or "zh-Hans"


@dataclass(frozen=True)
class Config:
    path: Path
    rag: RagSettings
    tui: TuiSettings = field(default_factory=TuiSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    backup: BackupSettings = field(default_factory=BackupSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    sources: SourcesSettings = field(default_factory=SourcesSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)


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
    top = _table(data, "", {"rag", "tui", "daemon", "backup", "ui", "sources", "sync"})
    rag = _table(top.get("rag", {}), "rag", {
        "local_model_dir", "local_model_profile", "local_threads", "max_tokens",
        "model_download_base_url", "fusion", "limits", "http", "embedding", "generation", "rerank",
    })
    model_dir_value = rag.get("local_model_dir")
    if model_dir_value is None:
        model_dir = default_model_dir(home)
    else:
        model_dir = Path(_str(model_dir_value, "rag.local_model_dir")).expanduser()
        if not model_dir.is_absolute():
            model_dir = (path.parent / model_dir).resolve()
    profile = _str(rag.get("local_model_profile", "embeddinggemma"), "rag.local_model_profile")
    if profile not in PROFILES:
        raise ConfigError(msg("rag.local_model_profile must be one of {names}; got {shown}.",
                              names=', '.join(PROFILES), shown=_shown(profile)))
    base_url = rag.get("model_download_base_url")
    if base_url is not None:
        base_url = _url(_str(base_url, "rag.model_download_base_url"), "rag.model_download_base_url",
                        allow_query=False)
    fusion = _str(rag.get("fusion", "score"), "rag.fusion")
    if fusion not in FUSION_POLICIES:
        raise ConfigError(msg("rag.fusion must be one of {names}; got {shown}.",
                              names=', '.join(FUSION_POLICIES), shown=_shown(fusion)))
    settings = RagSettings(
        local_model_dir=model_dir,
        local_model_profile=profile,
        local_threads=_int(rag.get("local_threads", default_local_threads()), "rag.local_threads", 1, 64),
        max_tokens=_int(rag.get("max_tokens", 2048), "rag.max_tokens", 16, 8192),
        model_download_base_url=base_url,
        fusion=fusion,
        limits=_limits(rag.get("limits", {})),
        http=_http(rag.get("http", {})),
        embedding=_service(rag.get("embedding"), "rag.embedding", EMBEDDING_KEYS),
        generation=_service(rag.get("generation"), "rag.generation", GENERATION_KEYS),
        rerank=_service(rag.get("rerank"), "rag.rerank"),
    )
    tui = _table(top.get("tui", {}), "tui", {"idle_lock_minutes", "keys"})
    keys = tui.get("keys", {})
    keys = _table(keys, "tui.keys", set(keys) if isinstance(keys, dict) else set())
    tui_settings = TuiSettings(
        idle_lock_minutes=_num(tui.get("idle_lock_minutes", 15), "tui.idle_lock_minutes", 0, 24 * 60),
        keys={str(k): _str(v, f"tui.keys.{k}") for k, v in keys.items()},
    )
    daemon = _table(top.get("daemon", {}), "daemon", {"idle_lock_minutes"})
    daemon_settings = DaemonSettings(
        idle_lock_minutes=_num(daemon.get("idle_lock_minutes", 30), "daemon.idle_lock_minutes", 0, 24 * 60)
    )
    ui = _table(top.get("ui", {}), "ui", {"language"})
    language = _str(ui.get("language", "auto"), "ui.language")
    try:
        language = normalize_setting(language)
    except ValueError:
        raise ConfigError(msg("ui.language must be one of {names}; got {shown}.",
                              names=', '.join(SETTINGS), shown=_shown(language))) from None
    return Config(path=path, rag=settings, tui=tui_settings, daemon=daemon_settings,
                  backup=parse_backup(top.get("backup", {}), path), ui=UiSettings(language=language),
                  sources=parse_sources(top.get("sources", {})), sync=parse_sync(top.get("sync", {})))


def _limits(value: Any) -> Limits:
    t = _table(value, "rag.limits", {"chunks", "source_mib", "vector_mib", "cached_vaults"})
    return Limits(
        chunks=_int(t.get("chunks", 10_000), "rag.limits.chunks", 1, 10_000_000),
        source_mib=_num(t.get("source_mib", 16), "rag.limits.source_mib", 0.001, 65_536),
        vector_mib=_num(t.get("vector_mib", 32), "rag.limits.vector_mib", 0.001, 65_536),
        cached_vaults=_int(t.get("cached_vaults", 2), "rag.limits.cached_vaults", 1, 64),
    )


def _http(value: Any) -> HttpSettings:
    t = _table(value, "rag.http", {
        "use_env_proxy", "proxy_url", "retries", "backoff_ms", "connect_timeout_seconds",
        "timeout_seconds", "request_timeout_seconds", "download_timeout_seconds",
    })
    use_env = t.get("use_env_proxy", True)
    if not isinstance(use_env, bool):
        raise ConfigError(msg("rag.http.use_env_proxy must be true or false."))
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
    return HttpSettings(
        use_env_proxy=use_env,
        proxy_url=proxy,
        retries=_int(t.get("retries", 2), "rag.http.retries", 0, 5),
        backoff_ms=_int(t.get("backoff_ms", 500), "rag.http.backoff_ms", 0, 60_000),
        connect_timeout_seconds=_num(t.get("connect_timeout_seconds", 10), "rag.http.connect_timeout_seconds", 0.01, 600),
        timeout_seconds=_num(t.get("timeout_seconds", 60), "rag.http.timeout_seconds", 0.01, 3600),
        request_timeout_seconds=_num(t.get("request_timeout_seconds", 300), "rag.http.request_timeout_seconds",
                                     0.01, 86_400),
        download_timeout_seconds=_num(t.get("download_timeout_seconds", 900), "rag.http.download_timeout_seconds", 0.01, 86_400),
    )


EMBEDDING_KEYS = {"dimensions", "query_input_type", "document_input_type", "query_prefix", "document_prefix",
                  "batch_size"}
GENERATION_KEYS = {"json_mode"}
def _service(value: Any, name: str, extra: set[str] | frozenset[str] = frozenset()) -> RemoteService | None:
    if value is None:
        return None
    allowed = {"protocol", "url", "model", "api_key_env"} | set(extra)
    t = _table(value, name, allowed | {"api_key"})
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
    protocol = _str(t["protocol"], f"{name}.protocol")
    if protocol not in PROTOCOLS:
        raise ConfigError(msg("{name}.protocol must be one of {names}; got {shown}.",
                              name=name, names=', '.join(PROTOCOLS), shown=_shown(protocol)))
    key_env = t.get("api_key_env")
    if key_env is not None:
        key_env = _str(key_env, f"{name}.api_key_env")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", key_env):
            raise ConfigError(msg("{name}.api_key_env must be the name of an environment variable (letters, "
                                  "digits and _), not the key itself; the value given is not shown.", name=name))
    dimensions = t.get("dimensions")
    if dimensions is not None:
        dimensions = _int(dimensions, f"{name}.dimensions", 1, 65_536)
    url = _url(_str(t["url"], f"{name}.url"), f"{name}.url", allow_query=False)
    host = urlsplit(url).hostname or ""
    if urlsplit(url).scheme == "http" and not is_loopback_host(host):
        raise ConfigError(msg("{name} uses plain http:// to {host}, which is not loopback; remote services "
                              "must use https:// (plain http is allowed only for 127.0.0.0/8, ::1 and "
                              "localhost).", name=name, host=host))
    _check_operation(protocol, url, name)
    json_mode = t.get("json_mode", True)
    if not isinstance(json_mode, bool):
        raise ConfigError(msg("{name}.json_mode must be true or false.", name=name))
    return RemoteService(
        protocol=protocol,
        url=url,
        model=_str(t["model"], f"{name}.model"),
        api_key_env=key_env,
        dimensions=dimensions,
        query_input_type=_opt_str(t.get("query_input_type"), f"{name}.query_input_type"),
        document_input_type=_opt_str(t.get("document_input_type"), f"{name}.document_input_type"),
        query_prefix=_prefix(t.get("query_prefix", ""), f"{name}.query_prefix"),
        document_prefix=_prefix(t.get("document_prefix", ""), f"{name}.document_prefix"),
        batch_size=_int(t.get("batch_size", 32), f"{name}.batch_size", 1, 100 if protocol == "gemini" else 2048),
        json_mode=json_mode,
    )


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


def _opt_str(value: Any, name: str) -> str | None:
    return None if value is None else _str(value, name)


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
