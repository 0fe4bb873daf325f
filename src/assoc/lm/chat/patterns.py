"""Refusals in chat replies: the documented patterns, compiled once.

A refusal is decided by case-insensitive regular expressions (:data:`REFUSAL_PATTERNS`: "As an
AI...", "I'm sorry", "I cannot provide...", "it is not appropriate...", and the "not commonly used or
understood" replies of Nicolas & Caliskan, 2024). Every chat reply reader uses the same list (the
listing and rating parser, the word-association reader, the choice parser of the chat model kind);
a scorer's ``refusal_patterns`` option replaces it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Replies (lines) that decline the task. Case-insensitive regular expressions.
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"\bas an ai\b",
    r"\bas a (?:large )?language model\b",
    r"\bi(?:'m| am) (?:sorry|unable|not able)\b",
    r"\bi can(?:not|'t| not) (?:provide|fulfil|fulfill|comply|assist|help|generate|create|list|answer|make|rate)\b",
    r"\bi (?:won't|will not|must decline|do not feel comfortable|don't feel comfortable)\b",
    r"\b(?:it is|it's|that is|that's|it would not be|it wouldn't be) (?:not )?(?:appropriate|inappropriate)\b",
    r"\bnot (?:commonly )?used or understood\b",
    r"\bnot a (?:commonly )?(?:recogni[sz]ed|known)\b",
)


def compile_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    """``patterns`` compiled case-insensitively; ``ValueError`` naming the first that is not a regular expression."""
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {pattern!r} ({exc})") from None
    return compiled


def refusal_matchers(patterns: Sequence[str] | None) -> list[re.Pattern[str]]:
    """The refusal patterns a scorer was given (``None``: :data:`REFUSAL_PATTERNS`), compiled case-insensitively."""
    return compile_patterns(REFUSAL_PATTERNS if patterns is None else patterns)


def check_patterns(value: Sequence[object]) -> list[str]:
    """``check`` of a patterns option: a list of regular expressions (``ValueError`` naming the first bad one)."""
    for pattern in value:
        try:
            re.compile(str(pattern))
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return [str(p) for p in value]
