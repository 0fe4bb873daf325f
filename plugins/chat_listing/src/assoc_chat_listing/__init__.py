"""assoc-chat-listing: chat LLMs list characteristics of, and rate, social groups (Nicolas & Caliskan, 2024).

The scorer is ``chat_listing`` (``assoc score --scorer chat_listing ...``); see ``docs/chat.md``.
:func:`responses` returns the stored raw responses behind a table's ``response_id`` column.
The chat engine (client, retries, response store) and the chat model kind are the core's
(:mod:`assoc.lm`); the OpenAI-compatible server for offline tests is ``assoc.testing.openai_server``
(``assoc chat test-server`` runs it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["responses"]


def responses(response_ids: Iterable[str] | None = None, *, cache_dir: str | None = None) -> pd.DataFrame:
    """Return the stored raw responses behind a table's ``response_id`` column, one row each.

    Columns: ``response_id``, ``model``, ``endpoint``, ``backend``, ``messages``, ``params``,
    ``sample``, ``received``, ``reply`` (the assistant's text) and ``response`` (the body as the
    server sent it).

    ``response_ids`` (e.g. ``table["response_id"].unique()``) selects some; ``None`` gives every stored
    chat response under ``cache_dir`` (default: the assoc cache root).
    """
    import pandas as pd

    from assoc.lm import ResponseStore, reply_text

    entries = ResponseStore(cache_dir).all_entries()
    wanted = None if response_ids is None else list(dict.fromkeys(response_ids))
    keys = list(entries) if wanted is None else [k for k in wanted if k in entries]
    rows: list[dict[str, Any]] = []
    for key in keys:
        entry = entries[key]
        request = entry.get("request", {})
        rows.append(
            {
                "response_id": key,
                "model": request.get("model"),
                "endpoint": request.get("endpoint"),
                "backend": request.get("backend"),
                "messages": request.get("messages"),
                "params": request.get("params"),
                "sample": request.get("sample"),
                "received": entry.get("received"),
                "reply": reply_text(entry.get("response", {})),
                "response": entry.get("response"),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "response_id",
            "model",
            "endpoint",
            "backend",
            "messages",
            "params",
            "sample",
            "received",
            "reply",
            "response",
        ],
    )
