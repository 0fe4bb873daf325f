"""Stand-in chat models for the benchmark scorers' tests and docs: replies of the local test server.

:func:`choice_responder` is a ``responder`` for :class:`assoc.testing.openai_server.ChatServer` (request
body -> reply text): it reads back the lettered options of a benchmark scorer's chat form
(:func:`assoc_bias_benchmarks.choice_scorer.chat_message`: lines ``<letter>. <option>``) and answers
with the option ``pick`` chooses among them, as a letter, or with the text ``pick`` returns (a reply
that names no option, say). The replies depend on the prompt alone, so a run is the same on every
machine::

    from assoc.testing.openai_server import ChatServer
    from assoc_bias_benchmarks.testing import choice_responder, first_named

    with ChatServer(responder=choice_responder(first_named("she", "the"))) as server:
        table = assoc.score("winogender", "winogender", ["chat:stand-in"], base_url=server.url)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: A line of a chat form that shows an option: ``<letter>. <option>``.
OPTION_LINE = re.compile(r"^([A-E])\. (.+)$", re.MULTILINE)

#: What a picker returns: the index of an option (as shown), or a reply text of its own.
Pick = Callable[[str, Sequence[str]], "int | str"]


def user_message(body: Mapping[str, Any]) -> str:
    """The last user message of a chat-completions request body."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def shown_options(message: str) -> tuple[list[str], list[str]]:
    """The letters and the options a chat form shows, in the order shown."""
    found = OPTION_LINE.findall(message)
    return [letter for letter, _ in found], [text for _, text in found]


def choice_responder(pick: Pick) -> Callable[[dict[str, Any]], str]:
    """A responder answering each chat form with the letter of ``pick(message, options)`` (or its text)."""

    def respond(body: dict[str, Any]) -> str:
        message = user_message(body)
        letters, options = shown_options(message)
        if not options:
            return "I cannot tell."
        chosen = pick(message, options)
        return chosen if isinstance(chosen, str) else letters[chosen]

    return respond


def hashed(message: str, options: Sequence[str], *, unparsed: float = 0.0) -> int | str:
    """A pick fixed by the message's SHA-256: an option, or (with share ``unparsed``) a reply naming none."""
    draw = int.from_bytes(hashlib.sha256(message.encode("utf-8")).digest()[:8], "big")
    if (draw % 1000) / 1000 < unparsed:
        return "I would rather not say."
    return (draw // 1000) % len(options)


def first_named(*words: str) -> Pick:
    """A pick of the first shown option that starts with one of ``words`` (in their order), else the first option."""

    def pick(message: str, options: Sequence[str]) -> int:
        for word in words:
            for number, option in enumerate(options):
                if option.lower().startswith(word.lower()):
                    return number
        return 0

    return pick
