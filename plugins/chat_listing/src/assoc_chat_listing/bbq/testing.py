"""Answers to BBQ prompts for the local test server (:class:`assoc_chat_listing.testing.ChatServer`).

:func:`bbq_responder` is a ``responder`` (request body -> reply text): it reads the options back
from a prompt of the ``assoc`` template (lines ``<letter>. <option>``), lets ``pick`` choose one
from the options' texts, and writes the reply in one of several styles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

STYLES = ("letter", "paren", "sentence", "text", "bold")
_OPTION = re.compile(r"^([A-Za-z0-9]+)\. (.+)$", re.MULTILINE)


def _user(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def read_options(prompt: str) -> tuple[list[str], list[str]]:
    """The letters and options of a prompt of the ``assoc`` template, in the order shown."""
    found = _OPTION.findall(prompt)[-3:]
    if len(found) != 3:
        raise ValueError(f"not a BBQ prompt with three lettered options: {prompt[:80]!r}")
    return [letter for letter, _ in found], [text for _, text in found]


def bbq_responder(pick: Callable[[Sequence[str]], int], *, style: str = "letter") -> Callable[[dict[str, Any]], str]:
    """A responder that answers with the option ``pick(options)`` chooses (options in the order shown).

    ``style``: ``letter`` (``B``), ``paren`` (``(B)``), ``sentence`` (``The answer is B. <option>``),
    ``text`` (the option's text) or ``bold`` (``**B. <option>**``).
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")

    def respond(body: dict[str, Any]) -> str:
        letters, options = read_options(_user(body))
        index = pick(options)
        letter, text = letters[index], options[index]
        return {
            "letter": letter,
            "paren": f"({letter})",
            "sentence": f"The answer is {letter}. {text}",
            "text": text,
            "bold": f"**{letter}. {text}**",
        }[style]

    return respond
