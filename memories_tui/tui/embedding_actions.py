"""The app's background embedding, mixed into `MemoriesApp` (app.py stays small): the engine's
`BackgroundEmbedding` schedules one low-priority job (engine/jobs.py); this starts and stops it,
carries its events to the UI thread and shows them as the `embed_state` reactive, and tells the
vector/hybrid panes waiting for it when it ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..engine import EmbedEvent, EmbedFinished
from .messages import EmbedDone, EmbedProgressMessage
from .widgets.embed_status import EmbedState

if TYPE_CHECKING:
    from .app import MemoriesApp


class EmbeddingActions:
    def _memories(self) -> MemoriesApp:
        return cast("MemoriesApp", self)

    def request_embedding(self) -> None:
        """Embed every chunk of the unlocked vault that has no vector yet, in the background.

        Called after unlock, ingest, a record change and a model install. At most one job runs;
        a request while one runs makes it run once more when it ends (to pick up new chunks)."""
        app = self._memories()
        if app.vault is None or not app.engine.is_unlocked(app.vault.vault_id):
            return
        if app.embedding.request(app.vault.vault_id):
            app.embed_state = EmbedState("starting")

    def embedding_active(self, vault_id: str) -> bool:
        return self._memories().embedding.active(vault_id)

    def stop_embedding(self) -> None:
        """Cancel the background job (lock, switch vault); whatever it reports later is dropped."""
        app = self._memories()
        app.embedding.stop()
        app.embed_state = EmbedState()

    def _deliver_embedding(self, event: EmbedEvent) -> bool:
        """From the job's thread: hand its event to the UI thread (False once the app is gone)."""
        try:
            self._memories().post_message(EmbedDone(event) if isinstance(event, EmbedFinished) else EmbedProgressMessage(event))
        except RuntimeError:  # the app's loop is gone (quitting)
            return False
        return True

    def on_embed_progress_message(self, message: EmbedProgressMessage) -> None:
        app = self._memories()
        if not app.embedding.is_live(message.event):
            return
        p = message.event.progress
        app.embed_state = EmbedState("running", done=p.done, total=p.total, tokens_per_second=p.tokens_per_second,
                                      eta_seconds=p.eta_seconds)

    def on_embed_done(self, message: EmbedDone) -> None:
        app, event = self._memories(), message.event
        if not app.embedding.is_live(event):
            return
        again = app.embedding.finish(event)
        if event.not_installed or event.cancelled:
            app.embed_state = EmbedState()
        elif event.error is not None:
            app.embed_state = EmbedState("failed", message=event.error)
        else:
            app.embed_state = EmbedState("done", report=event.report, vectors=event.vectors)
        if again and not event.not_installed:
            self.request_embedding()
            return
        from .screens.search import SearchScreen

        for screen in app.screen_stack:
            if isinstance(screen, SearchScreen):
                screen.embedding_finished()
