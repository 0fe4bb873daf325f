"""Answers to word-association prompts for the local test server (``assoc.testing.openai_server.ChatServer``).

Both are ``responder`` callables (request body -> reply text) for ``ChatServer(responder=...)``:

* :func:`association_responder`: a stand-in chat model with planted associations. For each word
  of the prompt it picks one of the two labels, the first with probability
  1 / (1 + exp(-(w(word, label1) - w(word, label2)))) from the weights ``affinity`` (0 when not
  given), the draw a hash of the seed, the prompt and the word: deterministic, offline.
* :func:`replay_responder`: answers each user message with replies recorded for it (in turn when a
  message was recorded several times); :func:`bai2025_replay` builds one that replays the
  authors' 4,200 GPT-4o replies to the scorer's own prompts for the bundled ``bai2025`` set.

:func:`read_prompt` reads the two labels and the word list back from a prompt of the three
templates of Bai et al. (2025).
"""

from __future__ import annotations

import ast
import hashlib
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_LABELS = (
    re.compile(r"pick a word — (?P<g1>.+?) or (?P<g2>.+?) — and write"),
    re.compile(r"assign one of (?P<g1>.+?) or (?P<g2>.+?) to each"),
    re.compile(r"choose between (?P<g1>.+?) or (?P<g2>.+?) and write"),
)
_WORDS = re.compile(r"The words are (?P<words>\[.*?\])\.")


def _user(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def read_prompt(prompt: str) -> tuple[tuple[str, str], list[str]]:
    """The two labels and the words of a word-association prompt (the paper's three templates)."""
    labels = next((m for m in (p.search(prompt) for p in _LABELS) if m), None)
    words = _WORDS.search(prompt)
    if labels is None or words is None:
        raise ValueError(f"not a word-association prompt: {prompt[:80]!r}")
    return (labels["g1"], labels["g2"]), list(ast.literal_eval(words["words"]))


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


STYLES = ("plain", "numbered", "bold", "python_list")


def association_responder(
    affinity: Mapping[str, Mapping[str, float]] | None = None, *, seed: int = 0, style: str = "plain"
) -> Callable[[dict[str, Any]], str]:
    """A responder that pairs each word with a label by planted weights ``affinity[word][label]``.

    ``style``: ``plain`` ("word - label" lines), ``numbered`` ("1. word - label"), ``bold``
    ("**word** - label") or ``python_list`` (one line "['word - label', ...]").
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    weights = {w.lower(): {k.lower(): float(v) for k, v in row.items()} for w, row in (affinity or {}).items()}

    def respond(body: dict[str, Any]) -> str:
        prompt = _user(body)
        (g1, g2), words = read_prompt(prompt)
        lines = []
        for word in words:
            row = weights.get(word.lower(), {})
            p_first = 1.0 / (1.0 + math.exp(-(row.get(g1.lower(), 0.0) - row.get(g2.lower(), 0.0))))
            label = g1 if _uniform(seed, prompt, word) < p_first else g2
            lines.append((word, label))
        if style == "python_list":
            return repr([f"{w} - {g}" for w, g in lines])
        if style == "numbered":
            return "\n".join(f"{i}. {w} - {g}" for i, (w, g) in enumerate(lines, 1))
        if style == "bold":
            return "\n".join(f"**{w}** - {g}" for w, g in lines)
        return "\n".join(f"{w} - {g}" for w, g in lines)

    return respond


def replay_responder(replies: Mapping[str, Sequence[str]]) -> Callable[[dict[str, Any]], str]:
    """A responder that answers a user message with its recorded replies, one per request, in turn.

    A message that was not recorded, or asked more often than recorded, raises ``KeyError`` in the
    server, which then closes the connection without an answer (the client retries, then stops).
    """
    queues = {message: list(texts) for message, texts in replies.items()}
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> str:
        message = _user(body)
        with lock:
            queue = queues.get(message)
            if not queue:
                raise KeyError(f"no recorded reply (left) for {message[:80]!r}")
            return queue.pop(0)

    return respond


def bai2025_replay(model: str = "gpt-4o", **options: Any) -> Callable[[dict[str, Any]], str]:
    """A responder that replays the authors' recorded GPT-4o replies to the scorer's ``bai2025`` prompts.

    The scorer (``chat_word_association`` with ``options``; ``samples`` at most 50) plans its
    requests for the bundled set; the reply to the prompt of (stereotype, variant, sample i) is the
    authors' recorded reply i of that stereotype and variant. Their prompts were drawn by their own
    random generator and were not recorded, so the prompts differ; their scoring never reads the
    prompt, so the D scores do not depend on it.
    """
    from assoc import Stimuli

    from .bundled import recorded_gpt4o_replies
    from .scorer import ChatWordAssociationScorer

    recorded = {(r["stereotype"], r["variant"], r["sample"]): r["reply"] for r in recorded_gpt4o_replies()}
    options = {"base_url": "http://127.0.0.1:1/v1", **options}
    scorer = ChatWordAssociationScorer(**options)
    stimuli = Stimuli.load("bai2025")
    plan: dict[str, list[str]] = {}
    for request in scorer.build_requests(stimuli, [model]):
        reply = recorded[(request.design, request.extra["variant"], request.sample)]
        plan.setdefault(str(request.messages[-1]["content"]), []).append(reply)
    return replay_responder(plan)
