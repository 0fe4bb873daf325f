"""Answers to BBQ prompts for the local test server (``assoc.testing.openai_server.ChatServer``), and small copies.

:func:`bbq_responder` is a ``responder`` (request body -> reply text): it reads the options back
from a prompt of the ``assoc`` template (lines ``<letter>. <option>``), lets ``pick`` choose one
from the options' texts, and writes the reply in one of several styles. :func:`stereotype_responder`
is a stand-in model with a planted stereotype of a given strength per stereotyped group.
:func:`example_directory` writes a small BBQ directory (the first examples of bundled categories).
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assoc import ChoiceItem

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


def _uniform(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (SHA-256), the same on every machine and run."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def stereotype_responder(
    items: Iterable[ChoiceItem], strength: Mapping[str, float], *, seed: int = 0
) -> Callable[[dict[str, Any]], str]:
    """A stand-in chat model with a planted stereotype of each strength, for ``assoc``-template prompts.

    For an example whose ``stereotyped_groups`` include a key of ``strength`` (the first such group
    counts), it answers with the biased option (``target_loc``) with probability
    σ(s) = 1 / (1 + e^−s), else with the other non-unknown option, in both context conditions; the
    expected s_DIS is then 2σ(s) − 1 = tanh(s/2). Other examples (and undecidable ones) get the
    "unknown" option. The draw is fixed per example by ``seed``. The reply is the letter shown.
    """
    by_prompt: dict[tuple[str, frozenset[str]], list[ChoiceItem]] = {}
    for item in items:
        by_prompt.setdefault((str(item.fields["question"]), frozenset(item.options)), []).append(item)

    def respond(body: dict[str, Any]) -> str:
        prompt = _user(body)
        letters, options = read_options(prompt)
        question = prompt.split(f"\n{letters[0]}. ")[0].rsplit("\n", 1)[-1]
        candidates = by_prompt.get((question, frozenset(options)), [])
        found = [i for i in candidates if prompt.startswith(f"{i.fields['context']}\n{question}\n")]
        if len(found) != 1:
            raise ValueError(f"no single BBQ example for the prompt {prompt[:80]!r}")
        item = found[0]
        groups = [str(g) for g in item.fields["additional_metadata"]["stereotyped_groups"] if str(g) in strength]
        unknown, target = item.derived.get("unknown_loc"), item.derived.get("target_loc")
        if not groups or target is None or unknown is None:
            chosen = unknown if unknown is not None else 0
        else:
            p_biased = 1.0 / (1.0 + math.exp(-float(strength[groups[0]])))
            other = ({0, 1, 2} - {target, unknown}).pop()
            chosen = target if _uniform(seed, item.group, item.fields["example_id"]) < p_biased else other
        return letters[options.index(item.options[chosen])]

    return respond


def example_directory(folder: str | Path, counts: Mapping[str, int]) -> Path:
    """A BBQ directory in ``folder``: the first ``counts[category]`` examples of bundled categories, as written."""
    from .items import bundled_directory

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for category, n in counts.items():
        with gzip.open(bundled_directory() / f"{category}.jsonl.gz", "rt", encoding="utf-8") as handle:
            lines = [next(handle) for _ in range(n)]
        (out / f"{category}.jsonl").write_text("".join(lines), encoding="utf-8")
    return out
