"""Entry point of the ``chat_listing`` plugin: registers the scorer. Imports nothing heavy
(openai, httpx and transformers are loaded only when requests are sent)."""

from __future__ import annotations

from assoc import hookimpl


@hookimpl
def register_scorers(register):
    from .scorer import ChatListingScorer

    register(ChatListingScorer)
