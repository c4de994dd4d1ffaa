"""The four memory tools: their table and what each does, on the engine's public API and
under the server's grants.

The table is `TOOLS` (name, result) with `ToolsAPI`: each tool's method there declares its
request once, its parameters' names, types (modes from vocabulary.py), defaults, and in an
`Arg` the description and bounds a client reads, with the tool's description as docstring.
The MCP server publishes the input schemas from it (access/mcp_server.py) and
mcp/daemon_tools.py makes its forwarding methods from it, so a parameter added here reaches
both; `MemoryTools` (which mypy holds to `ToolsAPI`) does the work.

Plain synchronous code (the SDK runs it in a worker thread), separate from the protocol
wiring. `MemoryTools` runs the tools on an engine of this process (the MCP server alone, or
the resident engine for the servers that forward to it). Every call: check the grant, do the
work, check the grant again (a result that finishes after the grant ended is dropped), and
bound the output size.
Excluded kinds (private, credential, asset) never leave: search never indexes them and
`read` answers for them exactly as for a record that does not exist.
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

from ..engine import (
    DEFAULT_MATCH_MODE,
    DEFAULT_MODE,
    EXCLUDED_KINDS,
    Jsonable,
    MatchMode,
    Mode,
    ceil_char_boundary,
    floor_char_boundary,
)
from ..errors import CancelledError, NotFoundError, UsageError
from ..i18n import msg
from .grants import GrantError, Grants
from .results import AskResult, ReadResult, RetrieveResult, SearchResult

if TYPE_CHECKING:
    from ..engine import EngineAPI

T = TypeVar("T")
RETRIEVE_LIMIT = 8  # chunks memory_retrieve and memory_ask use unless told
SEARCH_LIMIT = 10  # records memory_search returns unless told
MAX_TOOL_LIMIT = 50  # the most chunks or records one call may ask for
MAX_ASK_LIMIT = 20  # the most chunks of evidence memory_ask may ask for
RETRIEVE_BUDGET = 24_000  # bytes of chunk text per memory_retrieve answer
SEARCH_BUDGET = 16_000  # bytes of snippets per memory_search answer
READ_BUDGET = 64_000  # bytes of body per memory_read answer
EMBED_BUDGET_SECONDS = 30.0  # on-demand embedding inside one call; the cache keeps what was done


@dataclass(frozen=True)
class Tool:
    """One row of the tool table: the MCP tool `name` is the method `method` returning `result`."""

    name: str
    method: str
    result: type[Jsonable]
    writes_elsewhere: bool = False  # may send the question to a configured answer service


TOOLS: tuple[Tool, ...] = (
    Tool("memory_retrieve", "retrieve", RetrieveResult),
    Tool("memory_search", "search", SearchResult),
    Tool("memory_read", "read", ReadResult),
    Tool("memory_ask", "ask", AskResult, writes_elsewhere=True),
)
TOOL_METHODS: tuple[str, ...] = tuple(tool.method for tool in TOOLS)


@dataclass(frozen=True)
class Arg:
    """What a client reads about one parameter of a tool (published in its input schema, and
    values outside the bounds refused before the tool runs)."""

    description: str
    ge: int | None = None
    le: int | None = None


VaultRef = Annotated[str, Arg("A granted vault's id or unique name (see the server instructions).")]
Matching = Annotated[MatchMode, Arg("any term (default), all terms, or the exact phrase.")]


class ToolsAPI(Protocol):
    """The tools as the MCP server calls them: in this process or through the resident engine.
    The docstrings are the tools' descriptions, for AI clients."""

    def retrieve(
        self,
        vault_id: VaultRef,
        query: Annotated[str, Arg("What to look for: keywords or a question, Chinese or English.")],
        mode: Annotated[Mode, Arg("bm25 = keywords (always available); vector = meaning (local model); hybrid = "
                                  "both, best when wording may differ.")] = DEFAULT_MODE,
        match_mode: Matching = DEFAULT_MATCH_MODE,
        limit: Annotated[int, Arg("How many chunks at most.", ge=1, le=MAX_TOOL_LIMIT)] = RETRIEVE_LIMIT,
        cards_only: Annotated[bool, Arg("Only knowledge cards (ingested documents).")] = False,
    ) -> RetrieveResult:
        """Find evidence in the user's notes: ranked chunks, each with an [S#] citation label, record id,
        revision, byte range, title and scores. Cite facts with their [S#]; use memory_read with id and
        revision for the full note. The answer is capped in size (truncated says so)."""

    def search(
        self,
        vault_id: VaultRef,
        query: Annotated[str, Arg("Keywords, Chinese or English.")],
        limit: Annotated[int, Arg("How many records at most.", ge=1, le=MAX_TOOL_LIMIT)] = SEARCH_LIMIT,
        match_mode: Matching = DEFAULT_MATCH_MODE,
    ) -> SearchResult:
        """Which notes mention something: one row per record (id, revision, title, score, a snippet and
        the matching chunks' byte ranges). Keyword search only. For evidence to quote, use memory_retrieve."""

    def read(
        self,
        vault_id: VaultRef,
        id: Annotated[str, Arg("Record id from a memory_retrieve or memory_search result.")],
        revision: Annotated[int | None, Arg("Revision to read; latest when left out.", ge=1)] = None,
        byte_start: Annotated[int | None, Arg("Start of a range in UTF-8 bytes.", ge=0)] = None,
        byte_end: Annotated[int | None, Arg("End (exclusive) of the range.", ge=0)] = None,
    ) -> ReadResult:
        """Read one note's text (a whole revision, or a byte range of it) with its title, tags, dates and
        the list of revisions. Long bodies come in pieces: when truncated, call again from byte_end."""

    def ask(
        self,
        vault_id: VaultRef,
        question: Annotated[str, Arg("The user's question, in the notes' language.")],
        mode: Annotated[Mode, Arg("Retrieval mode for the evidence, as in memory_retrieve.")] = DEFAULT_MODE,
        limit: Annotated[int, Arg("How many chunks of evidence at most.", ge=1, le=MAX_ASK_LIMIT)] = RETRIEVE_LIMIT,
    ) -> AskResult:
        """Answer a question from the user's notes in one step: retrieves evidence, then the user's
        configured answer service writes an answer whose [S#] citations are checked against the sources
        (or, with no service configured, an extractive answer of quoted sentences). status
        insufficient_evidence means the notes hold nothing on it. To write the answer yourself, use
        memory_retrieve instead."""


def tool_parameters(tool: Tool) -> list[tuple[inspect.Parameter, object, Arg]]:
    """Each request parameter of `tool` (without `self`): as declared in `ToolsAPI`, its type
    (without the `Arg`) and its `Arg`."""
    declared = getattr(ToolsAPI, tool.method)
    hints = typing.get_type_hints(declared, include_extras=True)
    out = []
    for parameter in list(inspect.signature(declared).parameters.values())[1:]:
        base, *extras = typing.get_args(hints[parameter.name])
        out.append((parameter, base, next(e for e in extras if isinstance(e, Arg))))
    return out


def tool_description(tool: Tool) -> str:
    return getattr(ToolsAPI, tool.method).__doc__ or ""


class MemoryTools:
    def __init__(self, engine: EngineAPI, grants: Grants) -> None:
        self.engine = engine
        self.grants = grants

    # -- memory_retrieve ------------------------------------------------------------------
    def retrieve(self, vault_id: str, query: str, mode: Mode = DEFAULT_MODE, match_mode: MatchMode = DEFAULT_MATCH_MODE,
                 limit: int = RETRIEVE_LIMIT, cards_only: bool = False) -> RetrieveResult:
        def work(vid: str) -> RetrieveResult:
            cancel = threading.Event()
            response = self.engine.search(vid, query, mode=mode, match_mode=match_mode, limit=limit,
                                          cards_only=cards_only, budget_seconds=EMBED_BUDGET_SECONDS,
                                          progress=lambda _p: self._watch(vid, cancel), cancel=cancel)
            shareable = [hit for hit in response.results
                         if hit.kind not in EXCLUDED_KINDS]  # defence in depth: the index never holds them
            chunks, omitted = _within_budget(shareable, lambda hit: _size(hit.text, hit.title), RETRIEVE_BUDGET)
            return RetrieveResult(vault_id=vid, query=query, mode=response.mode, match_mode=response.match_mode,
                                  chunks=chunks, truncated=omitted > 0, omitted=omitted, fallback=response.fallback,
                                  notes=list(response.notes))

        return self._run(vault_id, work)

    # -- memory_search --------------------------------------------------------------------
    def search(self, vault_id: str, query: str, limit: int = SEARCH_LIMIT,
               match_mode: MatchMode = DEFAULT_MATCH_MODE) -> SearchResult:
        def work(vid: str) -> SearchResult:
            rows = self.engine.memory_search(vid, query, limit=limit, match_mode=match_mode)
            records, omitted = _within_budget(rows, lambda row: _size(row.snippet, row.title), SEARCH_BUDGET)
            return SearchResult(vault_id=vid, query=query, records=records, truncated=omitted > 0, omitted=omitted)

        return self._run(vault_id, work)

    # -- memory_read ----------------------------------------------------------------------
    def read(self, vault_id: str, id: str, revision: int | None = None, byte_start: int | None = None,
             byte_end: int | None = None) -> ReadResult:
        if revision is not None and revision < 1:
            raise UsageError(msg("revision counts from 1."))
        if byte_start is not None and byte_start < 0 or byte_end is not None and byte_end < 0:
            raise UsageError(msg("byte_start and byte_end cannot be negative."))

        def work(vid: str) -> ReadResult:
            try:
                record = self.engine.read_record(vid, id, revision)
            except NotFoundError:
                record = None
            if record is None or record.kind in EXCLUDED_KINDS:
                what = f"record {id!r}" + (f" revision {revision}" if revision is not None else "")
                raise NotFoundError(msg("No {what} in vault {vid} that this server may read. Use ids and "
                                        "revisions from memory_retrieve or memory_search results.",
                                        what=what, vid=vid))
            body = record.body.encode("utf-8")
            start = floor_char_boundary(body, min(byte_start or 0, len(body)))
            end = len(body) if byte_end is None else ceil_char_boundary(body, min(byte_end, len(body)))
            if end < start:
                raise UsageError(msg("byte_end {byte_end} is before byte_start {byte_start}.",
                                     byte_end=byte_end, byte_start=byte_start))
            truncated = end - start > READ_BUDGET
            if truncated:
                end = floor_char_boundary(body, start + READ_BUDGET)
            return ReadResult(vault_id=vid, id=record.id, revision=record.revision,
                              revisions=self.engine.revisions(vid, record.id), kind=record.kind, title=record.title,
                              tags=list(record.tags), created=record.created, updated=record.updated,
                              total_bytes=len(body), byte_start=start, byte_end=end,
                              text=body[start:end].decode("utf-8"), truncated=truncated,
                              conflict=self.engine.conflicted(vid, record.id))

        return self._run(vault_id, work)

    # -- memory_ask -----------------------------------------------------------------------
    def ask(self, vault_id: str, question: str, mode: Mode = DEFAULT_MODE, limit: int = RETRIEVE_LIMIT) -> AskResult:
        def work(vid: str) -> AskResult:
            cancel = threading.Event()
            stop = threading.Event()
            watcher = threading.Thread(target=self._watch_until, args=(vid, cancel, stop), daemon=True)
            watcher.start()
            try:
                answer = self.engine.ask(vid, question, mode=mode, limit=limit, cancel=cancel)
            finally:
                stop.set()
            return AskResult(vault_id=vid, question=question, answer=answer)

        return self._run(vault_id, work)

    # -- shared ---------------------------------------------------------------------------
    def _run(self, vault_id: str, work: Callable[[str], T]) -> T:
        try:
            return self.grants.run(vault_id, work)
        except CancelledError:
            self.grants.check(vault_id)  # a grant that ended mid-call says so
            raise

    def _watch(self, vault_id: str, cancel: threading.Event) -> None:
        """Progress callback of long work: stop it as soon as the grant ends."""
        try:
            self.grants.check(vault_id)
        except GrantError:
            cancel.set()


    def _watch_until(self, vault_id: str, cancel: threading.Event, stop: threading.Event) -> None:
        """While a call waits on a remote service, cancel it (no further request) once the grant ends."""
        while not stop.wait(0.25):
            self._watch(vault_id, cancel)
            if cancel.is_set():
                return


def _size(*texts: str) -> int:
    return sum(len(text.encode("utf-8")) for text in texts)


def _within_budget(items: Iterable[T], size: Callable[[T], int], budget: int) -> tuple[list[T], int]:
    """The items, in order, that fit in `budget` bytes (the first always does, so an answer is
    never empty for want of room), and how many were left out."""
    kept: list[T] = []
    omitted = used = 0
    for item in items:
        cost = size(item)
        if kept and used + cost > budget:
            omitted += 1
            continue
        used += cost
        kept.append(item)
    return kept, omitted


if TYPE_CHECKING:
    def _memory_tools_satisfy_the_api(tools: MemoryTools) -> ToolsAPI:
        return tools
