"""The one error tree every front end understands.

Each error carries a human sentence (never vault plaintext), a stable snake_case code for
`--json` output and MCP, and the process exit status the CLI should use.
"""

from __future__ import annotations

import re

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


class MemoriesError(Exception):
    """Base class: a failure we expected and can explain to the user. The message is
    redacted on the way in, so no front end can print a credential from it."""

    code: str = "error"
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

    code = "usage_error"
    exit_code = 2


class ConfigError(MemoriesError):
    """The config file is missing a value, has a bad value or is not valid TOML."""

    code = "config_invalid"


class NotFoundError(MemoriesError):
    code = "not_found"


class HomeError(MemoriesError):
    """The home folder cannot be used (a file, not a folder; unreadable)."""

    code = "home_invalid"


class InternalError(MemoriesError):
    """An exception nobody expected: shown as one line, details only with --debug."""

    code = "internal_error"


class VaultError(MemoriesError):
    """A vault file cannot be used: not ours, a newer format, truncated."""

    code = "vault_invalid"


class WrongPassphraseError(VaultError):
    code = "wrong_passphrase"


class TamperError(VaultError):
    """Authenticated data failed to verify: the file was edited, swapped or rolled back."""

    code = "vault_tampered"


class RollbackError(TamperError):
    """The vault file is older than the newest state this home has seen of it."""

    code = "vault_rolled_back"


class LockedError(MemoriesError):
    code = "vault_locked"


class InputRefusedError(MemoriesError):
    """An input file or value we will not take (binary, invalid UTF-8, too large)."""

    code = "input_refused"


class LimitError(MemoriesError):
    """A request or an index is over a documented limit; the message names the limit."""

    code = "limit_exceeded"


class PolicyError(MemoriesError):
    """A vault policy or security rule forbids the operation (device-only, URL policy)."""

    code = "policy_denied"


class NetworkError(MemoriesError):
    code = "network_error"


class ModelError(MemoriesError):
    """A model is missing, mismatching, or returned something we refuse to use."""

    code = "model_error"


class ModelNotInstalledError(ModelError):
    """No usable embedding model is installed where the settings point (front ends offer the install)."""

    code = "model_not_installed"


class AnswerRejectedError(ModelError):
    """A generated answer broke the contract (bad JSON, an unknown source): it is not shown."""

    code = "answer_rejected"


class SyncError(MemoriesError):
    """A sync target cannot be used (missing, read-only, unreachable, another vault's)."""

    code = "sync_error"


class SyncTamperedError(SyncError):
    """An object in the sync target failed its checks: dropped, reordered, altered or another vault's."""

    code = "sync_target_tampered"


class SyncRolledBackError(SyncError):
    """The sync target shows an older state of a device's chain than this vault has already seen."""

    code = "sync_target_rolled_back"


class CancelledError(MemoriesError):
    code = "cancelled"
    exit_code = 130


class OutputError(MemoriesError):
    """Standard output is closed or cannot be written (a full disk): said on stderr, since
    stdout cannot carry it; the exit status is sysexits' EX_IOERR."""

    code = "output_failed"
    exit_code = 74


class BudgetExceededError(MemoriesError):
    code = "budget_exceeded"


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
