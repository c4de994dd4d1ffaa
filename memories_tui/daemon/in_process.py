"""A client of the resident engine inside the resident engine, for a command line it runs on a
caller's behalf (cli/served_run.py): the same methods, with the same arguments and answers in
their wire form, so the command's `RemoteEngine` reads back exactly what it would over the
socket, errors included; only the socket is missing. The caller's hang-up is the cancel of
every call it makes, as a hang-up cancels a call over the socket.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, TypeVar

from ..errors import ErrorCode
from ..i18n import msg
from .calls import Call, Dispatcher, answer_line
from .client import ProgressFn, understood
from .protocol import DaemonProtocolError, encode_json, read_error

log = logging.getLogger("memories.daemon")
T = TypeVar("T")


class InProcessClient:
    def __init__(self, dispatcher: Dispatcher, outer: Call) -> None:
        self.dispatcher = dispatcher
        self.outer = outer  # the caller's own request: who asks, and its hang-up

    def call(self, method: str, args: dict[str, Any] | None = None, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None) -> Any:
        found = self.dispatcher.method(method)
        if found is None:
            raise DaemonProtocolError(msg("The daemon has no method {name!r}; is it older than this client? Restart "
                                          "it with `memories daemon stop`.", name=method),
                                      code=ErrorCode.DAEMON_UNKNOWN_METHOD)
        either, done = self._cancel(cancel)
        call = Call(peer=self.outer.peer, cancel=either)
        if progress is not None:
            call.send_progress = lambda data: progress(json.loads(encode_json(data)))
        started = time.monotonic()
        try:
            line, outcome = answer_line(self.dispatcher, method, found, json.loads(encode_json(args or {})), call)
        finally:
            done.set()
        log.info("%s %s %.3fs", method, outcome, time.monotonic() - started)
        message = json.loads(line)
        if "error" in message:
            raise read_error(message)
        return message["result"]

    def call_as(self, method: str, args: dict[str, Any] | None, read: Any) -> Any:
        return understood(method, read, self.call(method, args))

    def _cancel(self, own: threading.Event | None) -> tuple[threading.Event, threading.Event]:
        """The call's cancel: the caller's hang-up, or also the command's own cancel when it has
        one; and the event that ends watching them (set when the call returns)."""
        done = threading.Event()
        if own is None:
            return self.outer.cancel, done
        either = threading.Event()

        def watch() -> None:
            while not done.is_set() and not either.is_set():
                if own.wait(0.1) or self.outer.cancel.is_set():
                    either.set()

        threading.Thread(target=watch, name="memories-daemon-cancel", daemon=True).start()
        return either, done
