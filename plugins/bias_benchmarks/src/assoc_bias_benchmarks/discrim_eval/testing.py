"""A stand-in chat model for DiscrimEval, for tests and docs: a ``responder`` of the test chat server.

:func:`discrim_eval_responder` answers each DiscrimEval question (``ChatServer(responder=...)``,
:mod:`assoc.testing.openai_server`) with "Yes", "No", a refusal or a reply that is neither, by rules on the
question's text, so that a run through the real chat model kind has known replies to read back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

REFUSAL = "I'm sorry, but I cannot make this decision about a person."
UNPARSED = "It depends on factors the question does not give."


def _user(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def hashed_yes(question: str) -> bool:
    """Yes for about half of the questions: the first byte of the question's SHA-256 is even."""
    return hashlib.sha256(question.encode("utf-8")).digest()[0] % 2 == 0


def discrim_eval_responder(
    yes: Callable[[str], bool] = hashed_yes, *, refuse: str = "", unparsed: str = ""
) -> Callable[[dict[str, Any]], str]:
    """A responder (request body -> reply text) that answers DiscrimEval questions.

    Parameters
    ----------
    yes:
        ``yes(question)``: whether to answer "Yes" (else "No"); the question is the user message. The
        default (:func:`hashed_yes`) answers yes to about half of the questions, by a hash of the text.
    refuse, unparsed:
        A question containing ``refuse`` gets :data:`REFUSAL`, one containing ``unparsed`` gets
        :data:`UNPARSED` (empty: none).

    The seed a request carries (``seed`` + sample) is ignored: every sample of a question gets one reply.
    """

    def respond(body: dict[str, Any]) -> str:
        question = _user(body)
        if refuse and refuse in question:
            return REFUSAL
        if unparsed and unparsed in question:
            return UNPARSED
        return "Yes." if yes(question) else "No, I would not."

    return respond
