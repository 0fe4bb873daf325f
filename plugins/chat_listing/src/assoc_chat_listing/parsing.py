"""Parsing chat replies into listed items and ratings, with the paper's cleaning and refusal detection.

A listing reply is read in one of three shapes, decided per reply:

* **marked list**: two or more lines start with a number (``1.``, ``1)``, ``1 -``) or a bullet
  (``-``, ``*``, ``•``, ``+``); the items are those lines, other lines (a preamble, a closing
  remark) are dropped and counted. Numbers run together on one line (``1. kind 2. smart``) are
  split too.
* **delimited**: otherwise, lines with two or more commas or semicolons are split on them (a
  lead-in such as ``Here are the characteristics:`` before the last colon is dropped). A final
  ``and``/``or`` between the last two items is a delimiter too (``kind, smart, brave and loyal``
  gives four items); ``and`` inside an earlier item, or in an item on a line of its own, is kept.
* **one per line**: otherwise every line is an item, except commentary lines (ending in ``:``, or
  sentences of four or more words ending in ``.``, ``!`` or ``?``).

Each item is then stripped of markdown (``**bold**``, ``_x_``, backticks), of an explanation after a
spaced dash, a colon or an opening parenthesis (``Hard-working - they work long hours`` gives
``Hard-working``), of quotes and of trailing punctuation; that is ``raw_item`` minus the
explanation. The cleaned ``attribute`` follows the paper: lower case, dashes replaced by spaces,
white space collapsed. Repeated items of one reply are removed (the first is kept) and counted.

Refusals are decided on the reply as a whole: a **refusal** is a reply with no list (no item
left) that holds a sentence matching a refusal pattern (:data:`REFUSAL_PATTERNS`) or a bias
warning pattern (:data:`WARNING_PATTERNS`) (the paper's "As an AI...", "It is not
appropriate..." and "not commonly used or understood in American society" replies); a reply with
no item and no such sentence is **empty**. Both give no rows and are counted and reported. A
reply with a list is a listing, whatever else it says: sentences around the list that match the
patterns (a **hedge**, "I cannot generalize about a group. However, here are some traits...")
are kept in :attr:`Listing.hedge` and reported, and never become items. A word inside an item
("Stereotyped as lazy", "Biased") never makes the item a warning: only sentences are read as
such (in an item's place, a line of eight or more words, or of five or more that ends in ``.``,
``!`` or ``?``).
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
#: Where an item could stand (a numbered or bulleted line, a line of a one-per-line reply), a line is a
#: sentence (and may be a disclaimer) only with this many words, or :data:`MIN_ITEM_SENTENCE_WORDS`
#: ending in . ! or ?; shorter lines are items even when they mention "stereotype".
LONG_ITEM_WORDS = 8
#: In a delimited list every item but the first (which may carry a lead-in) has at most this many
#: words, and at least half have three or fewer; otherwise the commas are a sentence's.
MAX_DELIMITED_ITEM_WORDS = 6
MIN_ITEM_SENTENCE_WORDS = 5

# a number (1. 1) (1) 1: 1 -) or a bullet followed by a space ("**bold**" is not a bullet)
_MARKER = re.compile(r"^\s*(?:\(?\d{1,3}\s*[.)\]:]\s*|\d{1,3}\s+-\s+|[-*•+·▪‣◦–—]\s+)")
_INLINE_NUMBER = re.compile(r"(?:(?<=\s)|^)\d{1,3}[.)]\s+")
_DELIMITER = re.compile(r"[,;]")
_FINAL_CONJUNCTION = re.compile(r"\s+(?:and|or|&)\s+(?=\S)", re.IGNORECASE)
_MARKDOWN = re.compile(r"\*\*|__|`|(?<!\w)[*_]|[*_](?!\w)")
_EXPLANATION = re.compile(r"\s+[-–—]+\s+|\s*:\s|\s*:$|\s+\(|\s*\(")
_DASHES = re.compile(r"[-‐‑‒–—―]+")
_SPACES = re.compile(r"\s+")
_EDGE = re.compile(r"^[\s\"'“”‘’.,;:!?\[\]]+|[\s\"'“”‘’.,;:!?\[\]]+$")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“*])")
# prose before a delimited list: "Most Americans would describe farmers as hardworking, ..."
_PROSE_LEAD = re.compile(
    r"^(.*\b(?:as|include|includes|including|are|is|like|be|being|being seen as))\s+(?=\S)", re.IGNORECASE
)
# "Hardworking, often working long hours": a short item, a comma, then an explanation of two or more words
_COMMA_EXPLANATION = re.compile(r"^((?:\S+\s+){0,2}\S+),\s+\S+\s+\S+.*$")
_TABLE_SEPARATOR = re.compile(r"^\|?[\s:|-]+\|?$")
_SENTENCE_END = re.compile(r"[.!?]\s*$")


def _compile(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {pattern!r} ({exc})") from None
    return compiled


# "Rating: 4", "Score - 4", "I would say 4", "I'd rate them a 4", "my answer is 4", "I'd give it a 4"
_RATING_LABEL = re.compile(
    r"(?:\brating|\bscore|\banswer(?:\s+is)?|\brate(?:\s+(?:it|them|this group|people who are \w+))?"
    r"(?:\s+(?:as|at))?|\bwould\s+say|\bgive\s+(?:it|them)|\bchoose|\bpick)"
    r"\s*[:=\-–]?\s*(?:an?\s+)?\(?(\d+(?:\.\d+)?)(?![\d.]\d)",
    re.IGNORECASE,
)


_BOLD_ONLY = re.compile(r"^(?:\*\*|__)[^*_]+(?:\*\*|__):?$|^[^:]+:$")


def _headings(raw_lines: list[str]) -> set[str]:
    """Marked lines that head a group: all bold (or ending in ``:``) over two or more more-indented marked lines."""
    out: set[str] = set()

    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    for i, line in enumerate(raw_lines):
        if not _MARKER.match(line) or not _BOLD_ONLY.match(_MARKER.sub("", line.strip(), count=1)):
            continue
        below = 0
        for after in raw_lines[i + 1 :]:
            if not _MARKER.match(after) or indent(after) <= indent(line):
                break
            below += 1
        if below >= 2:
            out.add(line.strip())
    return out


def _split_delimited(text: str) -> list[str] | None:
    """The items of a comma- or semicolon-delimited list, or ``None`` when ``text`` is not one.

    A list has two or more delimiters, or one and a final ``and``/``or`` between short items
    (``kind, smart and brave``); a leading ``and``/``or`` is dropped from an item, and the last
    item is split at a final ``and``/``or`` (no Oxford comma).
    """
    pieces = [p.strip() for p in _DELIMITER.split(text)]
    n_delimiters = len(pieces) - 1
    if n_delimiters < 1:
        return None
    parts = [re.sub(r"^(?:and|or|&)\s+", "", p, flags=re.IGNORECASE) for p in pieces if p]
    if not parts:
        return None
    parts[-1:] = [p.strip() for p in _FINAL_CONJUNCTION.split(parts[-1]) if p.strip()]
    sizes = [len(p.split()) for p in parts]
    # items are short: a sentence with commas ("As an AI, I don't..., and I cannot...") is no list
    if max(sizes[1:], default=0) > MAX_DELIMITED_ITEM_WORDS or sum(n <= 3 for n in sizes) * 2 < len(sizes):
        return None
    if n_delimiters >= 2:
        return parts
    if len(parts) >= 3 and all(n <= 3 for n in sizes):
        return parts
    return None


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
    hedge: list[str] = field(default_factory=list)
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
        raw_lines = [line.expandtabs(4) for line in (reply or "").splitlines() if line.strip()]
        lines = [line.strip() for line in raw_lines]
        headings = _headings(raw_lines)
        segments: list[str] = []
        others: list[str] = []  # lines (or lead-ins) that are not items
        marked = [line for line in lines if _MARKER.match(line)]
        inline = [line for line in lines if len(_INLINE_NUMBER.findall(line)) >= 3]
        rows = [line for line in lines if line.startswith("|") and line.count("|") >= 2]
        if len(rows) >= 3 and len(marked) < 2:
            # a markdown table: a header row, a separator, then one item per row (its first cell
            # that is not a number)
            out.shape = "table"
            body = [r for r in rows[1:] if not _TABLE_SEPARATOR.match(r)]
            for line in lines:
                if line not in rows:
                    others.append(line)
            for row in body:
                cells = [c.strip() for c in row.strip("|").split("|")]
                text = next((c for c in cells if c and not re.fullmatch(r"\d+[.)]?", c)), "")
                if text:
                    segments.append(text)
        elif len(marked) >= 2 or inline:
            out.shape = "marked"
            for line in lines:
                if len(_INLINE_NUMBER.findall(line)) >= 3:
                    head, *parts = _INLINE_NUMBER.split(line)
                    if head.strip():
                        others.append(head.strip())
                    segments.extend(p for p in parts if p.strip())
                elif _MARKER.match(line) and len(marked) >= 2:
                    text = _MARKER.sub("", line, count=1)
                    if line in headings or self._item_sentence_kind(text):
                        others.append(line)
                    else:
                        segments.append(text)
                else:
                    others.append(line)
        elif any(_split_delimited(self._list_part(line)[1]) is not None for line in lines if not _MARKER.match(line)):
            out.shape = "delimited"
            for line in lines:
                around, tail = self._list_part(line)
                split = _split_delimited(tail)
                if split is None:
                    if self._is_commentary(line) or self._item_sentence_kind(line):
                        others.append(line)
                    else:
                        segments.append(line)
                    continue
                others.extend(around)
                parts = split
                lead = _PROSE_LEAD.match(parts[0])
                if lead is not None and len(parts[0].split()) >= 3:
                    others.append(lead.group(1))
                    parts[0] = parts[0][lead.end() :]
                segments.extend(parts)
        else:
            out.shape = "lines"
            for line in lines:
                if self._is_commentary(line) or self._item_sentence_kind(line):
                    others.append(line)
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
        refusal_lines: list[str] = []
        for line in others:
            kind = self._sentence_kind(line)
            if kind == "refusal":
                refusal_lines.append(line)
            elif kind == "warning":
                out.warning_lines.append(line)
            else:
                out.dropped_lines.append(line)
        if not out.items:
            out.shape = "empty"
            if lines:  # words but no list: the reply declines (whether or not it says so in known words)
                out.refusal = True
                out.refusal_text = (refusal_lines or out.warning_lines or lines)[0]
        else:
            out.hedge = refusal_lines + out.warning_lines
            out.dropped_lines.extend(refusal_lines)
        return out

    @staticmethod
    def _list_part(line: str) -> tuple[list[str], str]:
        """A line split into the text around a delimited list and the part that may be the list.

        The list is the sentence of the line with the most delimiters; the other sentences and a
        lead-in before its last colon ("Sure, here they are:") are the text around it.
        """
        sentences = _SENTENCE_BREAK.split(line)
        best = max(range(len(sentences)), key=lambda i: len(_DELIMITER.findall(sentences[i])))
        around = sentences[:best] + sentences[best + 1 :]
        sentence = sentences[best]
        head, colon, tail = sentence.rpartition(":")
        if colon and len(head.split()) >= 2 and _split_delimited(tail) is not None:
            return [*sentences[:best], head + colon, *sentences[best + 1 :]], tail
        if _split_delimited(sentence) is not None:
            return around, sentence
        return [], line

    def _item_sentence_kind(self, text: str) -> str:
        """``refusal``/``warning`` for a line in an item's place that is such a sentence, else ``""``."""
        plain = _MARKDOWN.sub("", text).strip()
        n = len(plain.split())
        if n >= LONG_ITEM_WORDS or (n >= MIN_ITEM_SENTENCE_WORDS and _SENTENCE_END.search(plain)):
            return self._sentence_kind(plain)
        return ""

    @staticmethod
    def _is_commentary(line: str) -> bool:
        text = _MARKDOWN.sub("", line).strip()
        return text.endswith(":") or (len(text.split()) >= 4 and bool(_SENTENCE_END.search(text)))

    @staticmethod
    def _strip(raw: str) -> str:
        text = _MARKDOWN.sub("", raw).strip()
        text = _EXPLANATION.split(text, maxsplit=1)[0]
        text = _COMMA_EXPLANATION.sub(r"\1", text)
        return _EDGE.sub("", text)

    # -- rating ------------------------------------------------------------------------------------

    def parse_rating(self, reply: str | None) -> tuple[float, str]:
        """The rating in a reply and a status: ``ok``, ``refusal``, ``no_number`` or ``ambiguous``.

        In order: a reply that starts with a number on the scale (``4``, ``(4)``, ``**4**``, ``4/5``,
        ``4 - Somewhat positively``) gives it; else a number on the scale right after a label
        (``Rating: 4``, ``I would say 4``, ``I'd rate them a 4``, ``my answer is 4``); else the one
        distinct number on the scale that the reply holds. Before the last step a denominator
        (``4/5``, ``4 out of 5`` count as 4) and an echo of the scale (``on a scale of 1 to 5``,
        ``(1) Very negatively to (5) Very positively``) are set aside. Two different numbers on the
        scale give ``ambiguous``, none ``no_number`` (or ``refusal`` when a sentence declines or warns); NaN.
        """
        text = _MARKDOWN.sub("", reply or "").strip()
        low, high = self.scale
        number = r"(\d+(?:\.\d+)?)"
        lead = re.match(r"^\(?\s*" + number + r"\s*\)?(?![\d.]\d)", text)
        if lead is not None:
            value = float(lead.group(1))
            if low <= value <= high:
                return value, "ok"
        for label in _RATING_LABEL.finditer(text):
            value = float(label.group(1))
            if low <= value <= high:
                return value, "ok"
            break
        rest = re.sub(number + r"\s*(?:/|out of)\s*\d+(?:\.\d+)?", r"\1", text, flags=re.IGNORECASE)
        rest = re.sub(rf"\(\s*{low}\s*\)[^()\d]{{0,60}}?\bto\s*\(\s*{high}\s*\)", " ", rest, flags=re.IGNORECASE)
        rest = re.sub(
            rf"\b(?:scale|range)\s+(?:of|from)\s+{low}\s*(?:-|–|to)\s*{high}\b|\b(?:from\s+)?{low}\s*(?:-|–|to)\s*{high}\s+scale\b",
            " ",
            rest,
            flags=re.IGNORECASE,
        )
        numbers = {float(m) for m in re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d]|\.\d)", rest)}
        on_scale = sorted(v for v in numbers if low <= v <= high)
        if len(on_scale) == 1:  # a hedge before the number does not undo the answer, as with listings
            return on_scale[0], "ok"
        if not on_scale and any(self._sentence_kind(line) for line in text.splitlines()):
            return math.nan, "refusal"
        return math.nan, "ambiguous" if on_scale else "no_number"
