"""The one error tree every front end understands.

Each error carries a human sentence (never vault plaintext), a stable snake_case code for
`--json` output and MCP, and the process exit status the CLI should use.
"""

from __future__ import annotations

import re
from typing import Final

from .i18n import Message, _, msg

# Credentials in URLs (`scheme://user:password@host`), secret-looking query parameters, and
# values shaped like common API keys or bearer tokens: none may reach a message or a log.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#'\"<>]*@")
_SECRET_PARAM = re.compile(r"(?i)\b((?:api[_-]?key|key|token|access[_-]?token|secret|password|passwd|pwd|auth)=)"
                           r"[^&\s'\"<>]+")
_KEY_SHAPED = re.compile(
    r"\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{6,}"
    r"|\bAIza[0-9A-Za-z_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{16,}|\bgithub_pat_[A-Za-z0-9_]{16,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bhf_[A-Za-z0-9]{16,}|\bglpat-[A-Za-z0-9_-]{16,}"
    r"|\bgsk_[A-Za-z0-9]{16,}|\b(?:xai|pplx|nvapi)-[A-Za-z0-9_-]{16,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def redact(text: str) -> str:
    """Hide credentials and key-shaped values before a message is shown or logged."""
    text = _URL_USERINFO.sub(r"\1[redacted]@", text)
    text = _SECRET_PARAM.sub(r"\1[redacted]", text)
    return _KEY_SHAPED.sub("[redacted]", text)


class ErrorCode:
    """Every error code, spelled once: the `code` of `--json` errors, MCP errors and the
    daemon's log. The values are a contract scripts rely on: never change one. Plain str
    constants, not an Enum, which would cost milliseconds at import on every served call."""

    ANCHOR_INVALID: Final = "anchor_invalid"
    ANSWER_REJECTED: Final = "answer_rejected"
    API_KEY_INVALID: Final = "api_key_invalid"
    API_KEY_MISSING: Final = "api_key_missing"
    BAD_EXPORT: Final = "bad_export"
    BAD_FILE_NAME: Final = "bad_file_name"
    BAD_KIND: Final = "bad_kind"
    BAD_NAME: Final = "bad_name"
    BAD_QUERIES_FILE: Final = "bad_queries_file"
    BAD_QUERY: Final = "bad_query"
    BAD_TITLE: Final = "bad_title"
    BUDGET_EXCEEDED: Final = "budget_exceeded"
    CANCELLED: Final = "cancelled"
    CONFIG_INVALID: Final = "config_invalid"
    DAEMON_BAD_REQUEST: Final = "daemon_bad_request"
    DAEMON_BUSY: Final = "daemon_busy"
    DAEMON_GONE: Final = "daemon_gone"
    DAEMON_HOLDS_VAULTS: Final = "daemon_holds_vaults"
    DAEMON_INCOMPATIBLE: Final = "daemon_incompatible"
    DAEMON_IS_TUI: Final = "daemon_is_tui"
    DAEMON_NOT_ANSWERING: Final = "daemon_not_answering"
    DAEMON_PEER_REFUSED: Final = "daemon_peer_refused"
    DAEMON_REQUEST_TOO_LARGE: Final = "daemon_request_too_large"
    DAEMON_RUNNING: Final = "daemon_running"
    DAEMON_SESSION_UNKNOWN: Final = "daemon_session_unknown"
    DAEMON_UNAVAILABLE: Final = "daemon_unavailable"
    DAEMON_UNKNOWN_METHOD: Final = "daemon_unknown_method"
    DAEMON_UNREACHABLE: Final = "daemon_unreachable"
    DAEMON_UNSUPPORTED: Final = "daemon_unsupported"
    DAEMON_VERSION: Final = "daemon_version"
    DAEMON_VERSION_MISMATCH: Final = "daemon_version_mismatch"
    DEVICE_ONLY: Final = "device_only"
    DIMENSION_MISMATCH: Final = "dimension_mismatch"
    DISK_FULL: Final = "disk_full"
    EGRESS_LOG_MISSING: Final = "egress_log_missing"
    EMPTY_PASSPHRASE: Final = "empty_passphrase"
    ERROR: Final = "error"
    EXPORT_NAME_COLLISION: Final = "export_name_collision"
    FILE_EXISTS: Final = "file_exists"
    FILE_NOT_FOUND: Final = "file_not_found"
    FILE_TOO_LARGE: Final = "file_too_large"
    FILE_UNREADABLE: Final = "file_unreadable"
    FOLDER_NOT_EMPTY: Final = "folder_not_empty"
    FOLDER_UNWRITABLE: Final = "folder_unwritable"
    GRANT_DENIED: Final = "grant_denied"
    GRANT_EXPIRED: Final = "grant_expired"
    GRANT_REVOKED: Final = "grant_revoked"
    HOME_INVALID: Final = "home_invalid"
    INPUT_REFUSED: Final = "input_refused"
    INTERNAL_ERROR: Final = "internal_error"
    INVALID_PASSPHRASE: Final = "invalid_passphrase"
    INVALID_TEXT: Final = "invalid_text"
    INVALID_UTF8: Final = "invalid_utf8"
    KDF_TOO_WEAK: Final = "kdf_too_weak"
    KEEP_BOTH_ASSET: Final = "keep_both_asset"
    LIMIT_EXCEEDED: Final = "limit_exceeded"
    MODEL_BAD_RESPONSE: Final = "model_bad_response"
    MODEL_ERROR: Final = "model_error"
    MODEL_INSTALL_FAILED: Final = "model_install_failed"
    MODEL_NOT_INSTALLED: Final = "model_not_installed"
    MODEL_REFUSED: Final = "model_refused"
    NETWORK_ERROR: Final = "network_error"
    NETWORK_TIMEOUT: Final = "network_timeout"
    NETWORK_UNAUTHORIZED: Final = "network_unauthorized"
    NETWORK_UNREACHABLE: Final = "network_unreachable"
    NO_CONFLICT: Final = "no_conflict"
    NOT_A_FOLDER: Final = "not_a_folder"
    NOT_FOUND: Final = "not_found"
    NOT_REGULAR_FILE: Final = "not_regular_file"
    OUTPUT_FAILED: Final = "output_failed"
    PASSPHRASE_MISMATCH: Final = "passphrase_mismatch"
    PASSPHRASE_SOURCE: Final = "passphrase_source"
    POLICY_DENIED: Final = "policy_denied"
    RECORD_CHANGED: Final = "record_changed"
    RESTORE_WOULD_REPLACE: Final = "restore_would_replace"
    SOURCE_EXISTS: Final = "source_exists"
    SOURCE_MISSING: Final = "source_missing"
    SYNC_ALREADY_JOINED: Final = "sync_already_joined"
    SYNC_BAD_TARGET: Final = "sync_bad_target"
    SYNC_BUSY: Final = "sync_busy"
    SYNC_DEVICE_BEHIND: Final = "sync_device_behind"
    SYNC_ERROR: Final = "sync_error"
    SYNC_FORGET_SELF: Final = "sync_forget_self"
    SYNC_JOIN_RECORD_STALE: Final = "sync_join_record_stale"
    SYNC_NO_TARGET: Final = "sync_no_target"
    SYNC_NOT_BEHIND: Final = "sync_not_behind"
    SYNC_NOTHING_TO_JOIN: Final = "sync_nothing_to_join"
    SYNC_PASSPHRASE_NEEDED: Final = "sync_passphrase_needed"
    SYNC_REGISTRY_INVALID: Final = "sync_registry_invalid"
    SYNC_S3_UNAVAILABLE: Final = "sync_s3_unavailable"
    SYNC_STATE_INCOMPLETE: Final = "sync_state_incomplete"
    SYNC_TARGET_CREDENTIALS: Final = "sync_target_credentials"
    SYNC_TARGET_EXISTS: Final = "sync_target_exists"
    SYNC_TARGET_FULL: Final = "sync_target_full"
    SYNC_TARGET_MISSING: Final = "sync_target_missing"
    SYNC_TARGET_OTHER_VAULT: Final = "sync_target_other_vault"
    SYNC_TARGET_READONLY: Final = "sync_target_readonly"
    SYNC_TARGET_ROLLED_BACK: Final = "sync_target_rolled_back"
    SYNC_TARGET_TAMPERED: Final = "sync_target_tampered"
    SYNC_TARGET_UNREACHABLE: Final = "sync_target_unreachable"
    SYNC_UNKNOWN_DEVICE: Final = "sync_unknown_device"
    UNSUPPORTED_FILE: Final = "unsupported_file"
    USAGE_ERROR: Final = "usage_error"
    VAULT_BUSY: Final = "vault_busy"
    VAULT_DAMAGED: Final = "vault_damaged"
    VAULT_EXISTS: Final = "vault_exists"
    VAULT_HELD_BY_DAEMON: Final = "vault_held_by_daemon"
    VAULT_INVALID: Final = "vault_invalid"
    VAULT_LOCKED: Final = "vault_locked"
    VAULT_MISMATCH: Final = "vault_mismatch"
    VAULT_ROLLED_BACK: Final = "vault_rolled_back"
    VAULT_TAMPERED: Final = "vault_tampered"
    VAULT_UNREADABLE: Final = "vault_unreadable"
    WRITE_FAILED: Final = "write_failed"
    WRONG_PASSPHRASE: Final = "wrong_passphrase"


class MemoriesError(Exception):
    """Base class: a failure we expected and can explain to the user. The message is
    redacted on the way in, so no front end can print a credential from it."""

    code: str = ErrorCode.ERROR
    exit_code: int = 1

    def __init__(self, message: str | Message, *, code: str | None = None) -> None:
        # A Message is kept to be shown in the reader's language; `message` is always English
        # (JSON, MCP and logs read it).
        self.localizable = message if isinstance(message, Message) else None
        english = _printable(redact(str(message)))
        super().__init__(english)
        self.message = english
        if code is not None:
            self.code = code

    def localized(self) -> str:
        """The message in the interface language (English when it was given as plain text)."""
        if self.localizable is None:
            return self.message
        return _printable(redact(self.localizable.localized()))

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message}}

    def to_wire(self) -> dict[str, dict[str, object]]:
        """`to_json` plus the class, so `error_from_json` rebuilds this very error (exit status
        included) on the other side of the resident engine's socket, and the sentence in a form
        that side shows in its own interface language."""
        body: dict[str, object] = {"code": self.code, "message": self.message, "type": type(self).__name__}
        if self.localizable is not None:
            body["localizable"] = self.localizable.to_wire()
        return {"error": body}


class UsageError(MemoriesError):
    """Bad command line: wrong arguments, unknown verb, missing value."""

    code = ErrorCode.USAGE_ERROR
    exit_code = 2


class ConfigError(MemoriesError):
    """The config file is missing a value, has a bad value or is not valid TOML."""

    code = ErrorCode.CONFIG_INVALID


class NotFoundError(MemoriesError):
    code = ErrorCode.NOT_FOUND


class HomeError(MemoriesError):
    """The home folder cannot be used (a file, not a folder; unreadable)."""

    code = ErrorCode.HOME_INVALID


class InternalError(MemoriesError):
    """An exception nobody expected: shown as one line, details only with --debug."""

    code = ErrorCode.INTERNAL_ERROR


class VaultError(MemoriesError):
    """A vault file cannot be used: not ours, a newer format, truncated."""

    code = ErrorCode.VAULT_INVALID


class WrongPassphraseError(VaultError):
    code = ErrorCode.WRONG_PASSPHRASE


class TamperError(VaultError):
    """Authenticated data failed to verify: the file was edited, swapped or rolled back."""

    code = ErrorCode.VAULT_TAMPERED


class RollbackError(TamperError):
    """The vault file is older than the newest state this home has seen of it."""

    code = ErrorCode.VAULT_ROLLED_BACK


class LockedError(MemoriesError):
    code = ErrorCode.VAULT_LOCKED


class InputRefusedError(MemoriesError):
    """An input file or value we will not take (binary, invalid UTF-8, too large)."""

    code = ErrorCode.INPUT_REFUSED


class LimitError(MemoriesError):
    """A request or an index is over a documented limit; the message names the limit."""

    code = ErrorCode.LIMIT_EXCEEDED


class PolicyError(MemoriesError):
    """A vault policy or security rule forbids the operation (device-only, URL policy)."""

    code = ErrorCode.POLICY_DENIED


class NetworkError(MemoriesError):
    code = ErrorCode.NETWORK_ERROR


class ModelError(MemoriesError):
    """A model is missing, mismatching, or returned something we refuse to use."""

    code = ErrorCode.MODEL_ERROR


class ModelNotInstalledError(ModelError):
    """No usable embedding model is installed where the settings point (front ends offer the install)."""

    code = ErrorCode.MODEL_NOT_INSTALLED


class AnswerRejectedError(ModelError):
    """A generated answer broke the contract (bad JSON, an unknown source): it is not shown."""

    code = ErrorCode.ANSWER_REJECTED


class SyncError(MemoriesError):
    """A sync target cannot be used (missing, read-only, unreachable, another vault's)."""

    code = ErrorCode.SYNC_ERROR


class SyncTamperedError(SyncError):
    """An object in the sync target failed its checks: dropped, reordered, altered or another vault's."""

    code = ErrorCode.SYNC_TARGET_TAMPERED


class SyncObjectGoneError(SyncTamperedError):
    """An object a head names is not in the target: dropped, not copied yet, or deleted by another
    device's compaction after this sync listed the target (a pull then starts over once or twice)."""


class SyncRolledBackError(SyncError):
    """The sync target shows an older state of a device's chain than this vault has already seen."""

    code = ErrorCode.SYNC_TARGET_ROLLED_BACK


class CancelledError(MemoriesError):
    code = ErrorCode.CANCELLED
    exit_code = 130


class OutputError(MemoriesError):
    """Standard output is closed or cannot be written (a full disk): said on stderr, since
    stdout cannot carry it; the exit status is sysexits' EX_IOERR."""

    code = ErrorCode.OUTPUT_FAILED
    exit_code = 74


class BudgetExceededError(MemoriesError):
    code = ErrorCode.BUDGET_EXCEEDED


def error_from_json(data: object) -> MemoriesError:
    """The error a `to_wire()` (or `to_json()`) object describes, as its own class when known."""
    body = data.get("error") if isinstance(data, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return InternalError(msg("An error arrived in an unreadable form."))
    code = body.get("code") if isinstance(body.get("code"), str) else None
    classes = {cls.__name__: cls for cls in _error_classes()}
    by_code = {cls.code: cls for cls in _error_classes()}
    cls = classes.get(str(body.get("type"))) or by_code.get(code or "") or MemoriesError
    error = cls.__new__(cls)
    MemoriesError.__init__(error, body["message"], code=code)
    error.localizable = Message.from_wire(body.get("localizable"))
    return error


def _error_classes() -> list[type[MemoriesError]]:
    found: list[type[MemoriesError]] = [MemoriesError]
    for cls in found:
        found.extend(c for c in cls.__subclasses__() if c not in found)
    return found


def quotable(text: str, limit: int) -> str:
    """Text another party chose (a server's header, SQLite's error) as a message may quote it: its
    first `limit` characters, each control code (a terminal escape, a line break) as `?`."""
    return "".join(ch if ch.isprintable() else "?" for ch in text[:limit])


def _printable(text: str) -> str:
    # Lone surrogates (a file name that is not UTF-8, say) would make printing the message fail.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe_error(exc: BaseException) -> str:
    """The sentence to show a person for a failure, in the interface language: engine errors
    carry a safe message; anything else is a bug, shown by type so a front end never hangs in a
    busy state."""
    if isinstance(exc, MemoriesError):
        return exc.localized()
    message = getattr(exc, "message", None)
    if isinstance(message, str):
        return message
    return _("Unexpected error ({kind}): {detail}").format(kind=type(exc).__name__, detail=exc)
