"""What the test server answers to each chat task: deterministic, parseable replies, and a registry to add more.

A **responder** is a function of a chat request's body (the JSON the client posts: ``model``,
``messages``, sampling parameters) that returns the reply text, or ``None`` when the prompt is not
of its task. :class:`~assoc.testing.openai_server.ChatServer` asks, in order: its ``responder`` (if
given, it answers everything), its ``replies`` (fixed replies by a substring of the prompt), its own
``responders``, the responders registered here (:func:`register_responder`, the latest first), the
built-in ones (:data:`BUILT_IN`, below), and finally the listing and rating answers it has always
given. Every built-in reply is a function of the prompt alone (a SHA-256 of it picks among the
options), so a study run twice gets the same replies, on any machine, and each reply is one that
assoc's readers parse (:func:`assoc.lm.match_reply` for choices, the chat scorers' own parsers):

``word_association``
    An LLM Word Association Test prompt (Bai et al., 2025: "For each word pick a word — X or Y — ...
    The words are [...]"): one ``word - label`` line per word, the label drawn per word.
``lettered_choice``
    A question whose options are lines ``A. text`` / ``(A) text`` / ``A) text`` / ``A: text``
    (letters in order from ``A``; BBQ's default prompt, a StereoSet or Winogender/WinoBias item written
    as a lettered question): the letter of one option, alone.
``listed_options``
    A question whose options are lines ``- text`` after an ``Options:`` line (BBQ's ``options_text``
    prompt): the text of one option, exactly.
``yes_no``
    A question to answer with "yes" or "no" (DiscrimEval's decision questions): ``yes`` or ``no``.
``either_or``
    A question that ends with two choices, ``... X or Y?`` (a referent choice written in prose: "Who
    does 'she' refer to, the nurse or the patient?"): one of the two, as written.
``open_question``
    lm-evaluation-harness's ``Q: ...`` / ``A:`` form, which shows no options (BBQ's ``lmeval``
    prompt): ``Unknown``, one of BBQ's phrasings of its "unknown" option.

A benchmark whose chat prompt has another shape adds its responder from its tests (the benchmarks
plugin's tests may import :mod:`assoc.testing`), for one block with :func:`responders_added` or for
the process with :func:`register_responder`::

    from assoc.testing.responders import choice_index, responders_added, user_message

    def stereoset(body):
        prompt = user_message(body)
        if "Which sentence is the most likely continuation" not in prompt:
            return None  # not this task's prompt: the next responder is asked
        sentences = [line[3:] for line in prompt.splitlines() if line[:3] in ("1) ", "2) ", "3) ")]
        return sentences[choice_index(prompt, len(sentences))]

    with responders_added(stereoset=stereoset), ChatServer() as server:
        ...

``python -m assoc.testing.openai_server --responder package.module:function`` serves a responder
of an installed module from the command line too.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

#: A responder: the request body -> the reply text, or ``None`` when the prompt is not of its task.
Responder = Callable[[Mapping[str, Any]], "str | None"]

_LOCK = threading.Lock()
_REGISTERED: dict[str, Responder] = {}


def user_message(body: Mapping[str, Any]) -> str:
    """The last user message of a chat request's body (``""`` when it has none)."""
    for message in reversed(list(body.get("messages") or [])):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def choice_index(prompt: str, n: int, salt: str = "") -> int:
    """Which of ``n`` options the server picks for ``prompt``: a SHA-256 of the prompt (and ``salt``), modulo ``n``."""
    digest = hashlib.sha256(f"{salt}|{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n


# -- the built-in responders ------------------------------------------------------------------------

_WA_LABELS = (
    re.compile(r"pick a word — (?P<g1>.+?) or (?P<g2>.+?) — and write"),
    re.compile(r"assign one of (?P<g1>.+?) or (?P<g2>.+?) to each"),
    re.compile(r"choose between (?P<g1>.+?) or (?P<g2>.+?) and write"),
)
_WA_WORDS = re.compile(r"The words are (?P<words>\[.*?\])\.")


def word_association(body: Mapping[str, Any]) -> str | None:
    """A ``word - label`` line per word of a word-association prompt (the paper's three templates)."""
    prompt = user_message(body)
    labels = next((m for m in (p.search(prompt) for p in _WA_LABELS) if m), None)
    words = _WA_WORDS.search(prompt)
    if labels is None or words is None:
        return None
    try:
        listed = ast.literal_eval(words["words"])
    except (ValueError, SyntaxError):
        return None
    pair = (labels["g1"], labels["g2"])
    return "\n".join(f"{word} - {pair[choice_index(prompt, 2, str(word))]}" for word in listed)


_LETTERED = re.compile(r"^\s*\(?([A-Z])(?:[.):]|\))\s+(\S.*)$")


def lettered_options(prompt: str) -> list[tuple[str, str]]:
    """The ``(letter, text)`` options of a prompt: consecutive lines ``A. text``, ``B. text``, ... from ``A``.

    The last such run of two or more lines counts (a context may have lettered lines of its own).
    """
    runs: list[list[tuple[str, str]]] = []
    for line in prompt.splitlines():
        found = _LETTERED.match(line)
        if found is None:
            continue
        letter, text = found.group(1), found.group(2).strip()
        if letter == "A":
            runs.append([(letter, text)])
        elif runs and ord(letter) == ord(runs[-1][-1][0]) + 1:
            runs[-1].append((letter, text))
    runs = [run for run in runs if len(run) >= 2]
    return runs[-1] if runs else []


def lettered_choice(body: Mapping[str, Any]) -> str | None:
    """The letter of one of a question's lettered options."""
    prompt = user_message(body)
    options = lettered_options(prompt)
    if not options:
        return None
    return options[choice_index(prompt, len(options))][0]


def listed_options(body: Mapping[str, Any]) -> str | None:
    """The text of one of the ``- text`` options listed after an ``Options:`` line."""
    prompt = user_message(body)
    _, found, rest = prompt.partition("Options:\n")
    if not found:
        return None
    options = []
    for line in rest.splitlines():
        if not line.startswith("- "):
            break
        options.append(line[2:].strip())
    if len(options) < 2:
        return None
    return options[choice_index(prompt, len(options))]


_YES_NO = re.compile(r"""\b["'“]?yes["'”]?\s*(?:or|/)\s*["'“]?no\b""", re.IGNORECASE)


def yes_no(body: Mapping[str, Any]) -> str | None:
    """``yes`` or ``no`` to a question that asks to be answered with either."""
    prompt = user_message(body)
    if _YES_NO.search(prompt) is None:
        return None
    return ("yes", "no")[choice_index(prompt, 2)]


_EITHER_OR = re.compile(r"(?:[:,]|\bto)\s+(?P<a>[^,:;?]{1,60}?)\s+or\s+(?P<b>[^,:;?]{1,60}?)\s*\?\s*$")


def either_or(body: Mapping[str, Any]) -> str | None:
    """One of two choices a question ends with (``..., the nurse or the patient?``), as written."""
    prompt = user_message(body).strip()
    last = prompt.splitlines()[-1] if prompt else ""
    found = _EITHER_OR.search(last)
    if found is None:
        return None
    return (found["a"], found["b"])[choice_index(prompt, 2)].strip()


def open_question(body: Mapping[str, Any]) -> str | None:
    """``Unknown`` to lm-eval's ``Q: ...`` / ``A:`` question, which shows no options (a BBQ "unknown" phrasing)."""
    prompt = user_message(body).rstrip()
    if not prompt.endswith("\nA:") or "\nQ: " not in prompt:
        return None
    return "Unknown"


#: The built-in responders, in the order they are asked (after those registered).
BUILT_IN: dict[str, Responder] = {
    "word_association": word_association,
    "lettered_choice": lettered_choice,
    "listed_options": listed_options,
    "yes_no": yes_no,
    "either_or": either_or,
    "open_question": open_question,
}


# -- the registry -----------------------------------------------------------------------------------


def register_responder(name: str, responder: Responder) -> None:
    """Add ``responder`` under ``name`` (replacing one of that name), asked before the built-in ones.

    Responders registered later are asked first. A responder returns ``None`` for prompts that are not
    of its task, so that the next one is asked.
    """
    if not callable(responder):
        raise TypeError(f"responder {name!r} must be a function of the request body, got {type(responder).__name__}")
    with _LOCK:
        _REGISTERED.pop(name, None)
        _REGISTERED[name] = responder


def unregister_responder(name: str) -> None:
    """Remove the responder registered under ``name`` (nothing when there is none)."""
    with _LOCK:
        _REGISTERED.pop(name, None)


@contextlib.contextmanager
def responders_added(**named: Responder) -> Iterator[None]:
    """Register the responders ``name=responder`` for the block only (what a test does)."""
    with _LOCK:
        before = dict(_REGISTERED)
    for name, responder in named.items():
        register_responder(name, responder)
    try:
        yield
    finally:
        with _LOCK:
            _REGISTERED.clear()
            _REGISTERED.update(before)


def responders() -> list[tuple[str, Responder]]:
    """Every responder the server asks after its own: those registered (the latest first), then :data:`BUILT_IN`."""
    with _LOCK:
        registered = list(reversed(_REGISTERED.items()))
    return [*registered, *BUILT_IN.items()]


def answer(body: Mapping[str, Any], extra: Mapping[str, Responder] | None = None) -> str | None:
    """The first reply of ``extra``'s responders, then :func:`responders`' (``None``: none answers)."""
    for _, responder in [*(extra or {}).items(), *responders()]:
        reply = responder(body)
        if reply is not None:
            return reply
    return None


def load_responder(spec: str) -> Responder:
    """The responder ``module:function`` names (``python -m assoc.testing.openai_server --responder``)."""
    import importlib

    module, sep, attribute = spec.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"--responder takes module:function, got {spec!r}")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    if not callable(found):
        raise ValueError(f"{spec!r} is not a function")
    return found
