"""Parsing chat replies into listed items and ratings, with the paper's cleaning and refusal detection.

A listing reply is read in one of three shapes, decided per reply:

* **marked list**: two or more lines start with a number (``1.``, ``1)``, ``1 -``) or a bullet
  (``-``, ``*``, ``•``, ``+``); the items are those lines, other lines (a preamble, a closing
  remark) are dropped and counted. Numbers run together on one line (``1. kind 2. smart``) are
  split too.
* **delimited**: otherwise, lines with two or more commas or semicolons are split on them (a
  lead-in such as ``Here are the characteristics:`` before the first colon is dropped).
* **one per line**: otherwise every line is an item, except commentary lines (ending in ``:``, or
  sentences of four or more words ending in ``.``, ``!`` or ``?``).

Each item is then stripped of markdown (``**bold**``, ``_x_``, backticks), of an explanation after a
spaced dash, a colon or an opening parenthesis (``Hard-working - they work long hours`` gives
``Hard-working``), of quotes and of trailing punctuation; that is ``raw_item`` minus the
explanation. The cleaned ``attribute`` follows the paper: lower case, dashes replaced by spaces,
white space collapsed. Repeated items of one reply are removed (the first is kept) and counted.

Lines of three or more words that match a refusal pattern (:data:`REFUSAL_PATTERNS`) or a bias
warning pattern (:data:`WARNING_PATTERNS`) are removed before parsing and never become items. A
reply with such a line and no item left is a **refusal** (the paper's "As an AI...", "It is not
appropriate..." and "not commonly used or understood in American society" replies); a reply with
no item and no such line is **empty**. Both give no rows and are counted and reported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

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
#: Bias warnings and disclaimers: removed from replies (the paper removes them), never items.
WARNING_PATTERNS: tuple[str, ...] = (
    r"\bstereotyp",
    r"\bgenerali[sz]",
    r"\bnot (?:all|every)\b",
    r"\bindividuals? (?:vary|differ|may vary|can vary)\b",
    r"\bdo(?:es)? not (?:necessarily )?(?:reflect|represent|apply)\b",
    r"\bperceptions? (?:may|can|might) (?:vary|differ)\b",
    r"\bit(?:'s| is) important to\b",
    r"\bplease note\b",
    r"^\s*note\b",
    r"\bbias(?:es|ed)?\b",
)
#: A line must have at least this many words to be read as a refusal/warning sentence (so the item
#: "biased" is never taken for a warning).
MIN_SENTENCE_WORDS = 3

# a number (1. 1) (1) 1: 1 -) or a bullet followed by a space ("**bold**" is not a bullet)
_MARKER = re.compile(r"^\s*(?:\(?\d{1,3}\s*[.)\]:]\s*|\d{1,3}\s+-\s+|[-*•+·▪‣◦–—]\s+)")
_INLINE_NUMBER = re.compile(r"(?:(?<=\s)|^)\d{1,3}[.)]\s+")
_MARKDOWN = re.compile(r"\*\*|__|`|(?<!\w)[*_]|[*_](?!\w)")
_EXPLANATION = re.compile(r"\s+[-–—]+\s+|\s*:\s|\s*:$|\s+\(|\s*\(")
_DASHES = re.compile(r"[-‐‑‒–—―]+")
_SPACES = re.compile(r"\s+")
_EDGE = re.compile(r"^[\s\"'“”‘’.,;:!?]+|[\s\"'“”‘’.,;:!?]+$")
_SENTENCE_END = re.compile(r"[.!?]\s*$")


def _compile(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {pattern!r} ({exc})") from None
    return compiled


def clean_item(text: str) -> str:
    """The paper's cleaning of one listed item: lower case, dashes to spaces, white space collapsed."""
    return _SPACES.sub(" ", _DASHES.sub(" ", text.casefold())).strip()


@dataclass(frozen=True)
class Item:
    """One listed item: its position in the reply, the text as written and the cleaned word."""

    rank: int
    raw_item: str
    attribute: str


@dataclass
class Listing:
    """A parsed listing reply."""

    items: list[Item] = field(default_factory=list)
    shape: str = "empty"
    refusal: bool = False
    refusal_text: str = ""
    warning_lines: list[str] = field(default_factory=list)
    dropped_lines: list[str] = field(default_factory=list)
    n_duplicates: int = 0

    @property
    def status(self) -> str:
        """``ok``, ``refusal`` or ``empty``."""
        if self.refusal:
            return "refusal"
        return "ok" if self.items else "empty"


class ReplyParser:
    """Parses listing and rating replies; holds the compiled refusal and warning patterns.

    Parameters
    ----------
    refusal_patterns, warning_patterns:
        Case-insensitive regular expressions (defaults :data:`REFUSAL_PATTERNS`,
        :data:`WARNING_PATTERNS`); pass ``()`` to switch a kind off.
    scale:
        The rating scale's lowest and highest points (the paper: 1 to 5).
    """

    def __init__(
        self,
        refusal_patterns: Sequence[str] = REFUSAL_PATTERNS,
        warning_patterns: Sequence[str] = WARNING_PATTERNS,
        scale: tuple[int, int] = (1, 5),
    ):
        self.refusal = _compile(refusal_patterns)
        self.warning = _compile(warning_patterns)
        self.scale = scale

    # -- shared ------------------------------------------------------------------------------------

    def _sentence_kind(self, line: str) -> str:
        """``refusal``, ``warning`` or ``""`` for one line."""
        text = _MARKDOWN.sub("", _MARKER.sub("", line, count=1))
        if len(text.split()) < MIN_SENTENCE_WORDS:
            return ""
        if any(p.search(text) for p in self.refusal):
            return "refusal"
        if any(p.search(text) for p in self.warning):
            return "warning"
        return ""

    # -- listing -----------------------------------------------------------------------------------

    def parse_listing(self, reply: str | None) -> Listing:
        """Items of a listing reply (see the module docstring for the rules)."""
        out = Listing()
        lines = [line.strip() for line in (reply or "").splitlines() if line.strip()]
        kept: list[str] = []
        refusal_lines: list[str] = []
        for line in lines:
            kind = self._sentence_kind(line)
            if kind == "refusal":
                refusal_lines.append(line)
            elif kind == "warning":
                out.warning_lines.append(line)
            else:
                kept.append(line)
        segments: list[str] = []
        marked = [line for line in kept if _MARKER.match(line)]
        inline = [line for line in kept if len(_INLINE_NUMBER.findall(line)) >= 3]
        if len(marked) >= 2 or (len(marked) == 1 and inline):
            out.shape = "marked"
            for line in kept:
                if len(_INLINE_NUMBER.findall(line)) >= 3:
                    segments.extend(p for p in _INLINE_NUMBER.split(line) if p.strip())
                elif _MARKER.match(line):
                    segments.append(_MARKER.sub("", line, count=1))
                else:
                    out.dropped_lines.append(line)
        elif inline:
            out.shape = "marked"
            for line in kept:
                if line in inline:
                    segments.extend(p for p in _INLINE_NUMBER.split(line) if p.strip())
                else:
                    out.dropped_lines.append(line)
        elif any(len(re.findall(r"[,;]", line)) >= 2 for line in kept):
            out.shape = "delimited"
            for line in kept:
                if len(re.findall(r"[,;]", line)) < 2:
                    if self._is_commentary(line):
                        out.dropped_lines.append(line)
                    else:
                        segments.append(line)
                    continue
                head, colon, tail = line.partition(":")
                if colon and len(head.split()) >= 3 and "," not in head and ";" not in head:
                    out.dropped_lines.append(head + colon)
                    line = tail
                for part in re.split(r"[,;]", line):
                    part = re.sub(r"^\s*(?:and|or)\s+", "", part.strip(), flags=re.IGNORECASE)
                    if part.strip():
                        segments.append(part)
        else:
            out.shape = "lines"
            for line in kept:
                if self._is_commentary(line):
                    out.dropped_lines.append(line)
                else:
                    segments.append(line)
        seen: set[str] = set()
        rank = 0
        for segment in segments:
            raw = segment.strip()
            word = self._strip(raw)
            attribute = clean_item(word)
            if not attribute:
                continue
            rank += 1
            if attribute in seen:
                out.n_duplicates += 1
                continue
            seen.add(attribute)
            out.items.append(Item(rank=rank, raw_item=raw, attribute=attribute))
        if not out.items:
            out.shape = "empty"
            if refusal_lines or out.warning_lines:
                out.refusal = True
                out.refusal_text = (refusal_lines or out.warning_lines)[0]
        else:
            out.dropped_lines.extend(refusal_lines)
        return out

    @staticmethod
    def _is_commentary(line: str) -> bool:
        text = _MARKDOWN.sub("", line).strip()
        return text.endswith(":") or (len(text.split()) >= 4 and bool(_SENTENCE_END.search(text)))

    @staticmethod
    def _strip(raw: str) -> str:
        text = _MARKDOWN.sub("", raw).strip()
        text = _EXPLANATION.split(text, maxsplit=1)[0]
        return _EDGE.sub("", text)

    # -- rating ------------------------------------------------------------------------------------

    def parse_rating(self, reply: str | None) -> tuple[float, str]:
        """The rating in a reply and a status: ``ok``, ``refusal``, ``no_number`` or ``ambiguous``.

        A reply that starts with a number on the scale (``4``, ``(4)``, ``4 - Somewhat
        positively``) gives it; otherwise the one distinct number on the scale that the reply holds.
        Numbers off the scale, several different numbers on it, or none, give NaN.
        """
        text = _MARKDOWN.sub("", reply or "").strip()
        low, high = self.scale
        lead = re.match(r"^\(?\s*(\d+(?:\.\d+)?)\s*\)?(?![\d.]\d)", text)
        if lead is not None:
            value = float(lead.group(1))
            if low <= value <= high:
                return value, "ok"
        numbers = {float(m) for m in re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d]|\.\d)", text)}
        on_scale = sorted(v for v in numbers if low <= v <= high)
        if len(on_scale) == 1 and not any(self._sentence_kind(line) == "refusal" for line in text.splitlines()):
            return on_scale[0], "ok"
        if any(self._sentence_kind(line) for line in text.splitlines()):
            return math.nan, "refusal"
        return math.nan, "ambiguous" if on_scale else "no_number"
