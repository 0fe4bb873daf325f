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
``!`` or ``?``). A line in an item's place whose text before an explanation separator (a spaced
dash, a colon, a parenthesis, a comma) is a short trait (:data:`MAX_TRAIT_WORDS` words or fewer,
not a lead-in such as ``Note``, ``Remember``, ``These``, and matching no pattern itself) is an
item whatever its explanation says: ``- **Thrifty**: an old stereotype, mostly a joke`` gives
``thrifty``. Every line that gives no item is kept with the reason it was dropped
(:attr:`Listing.dropped`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from assoc.lm import REFUSAL_PATTERNS, compile_patterns, refusal_matchers

# REFUSAL_PATTERNS and refusal_matchers are the core's (every chat reply reader shares them), named here too
__all__ = [
    "REFUSAL_PATTERNS",
    "WARNING_PATTERNS",
    "Item",
    "Listing",
    "Rating",
    "ReplyParser",
    "clean_item",
    "refusal_matchers",
]
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
#: The text before an explanation separator is a trait (and the line an item, whatever the explanation
#: says) when it has at most this many words ("Stereotyped as good at math" has five and no separator).
MAX_TRAIT_WORDS = 4
#: First words of a lead-in, never of a trait: "Note: ...", "Remember - ...", "These, of course, ...".
_LEAD_IN_WORDS = frozenset(
    "note notes nb n.b ps p.s please remember reminder disclaimer caveat warning important importantly keep bear "
    "however but and or also again still overall summary conclusion finally lastly additionally that these "
    "this those they it its it's there here i we you some many of in as so while although though sure ok okay "
    "yes no well certainly absolutely hope hi hello thanks great sorry".split()
)

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


#: A number in a rating reply (a group: its text).
_NUMBER = r"(\d+(?:\.\d+)?)"
# "Rating: 4", "Score - 4", "I would say 4", "I'd rate them a 4", "my answer is 4", "I'd give it a 4"
_RATING_LABEL = re.compile(
    r"(?:\brating|\bscore|\banswer(?:\s+is)?|\brate(?:\s+(?:it|them|this group|people who are \w+))?"
    r"(?:\s+(?:as|at))?|\bwould\s+say|\bgive\s+(?:it|them)|\bchoose|\bpick)"
    r"\s*[:=\-–]?\s*(?:an?\s+)?\(?(\d+(?:\.\d+)?)(?![\d.]\d)",
    re.IGNORECASE,
)

# two numbers given as a range or as alternatives: "2 or 3", "3 to 4", "4-5", "4, maybe 5", "4 (perhaps 5)"
_JOINED_NUMBERS = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*[,(]?\s*(?:or|to|and|-|–|—|maybe|perhaps|possibly|if not|or maybe|or perhaps|or even)"
    r"\s*(?:an?\s+)?\(?(\d+(?:\.\d+)?)(?![\d.]\d)",
    re.IGNORECASE,
)
# any answer after a verb of answering, wherever it stands: "some would answer 3", "others might say 2"
_OTHER_ANSWER = re.compile(
    r"\b(?:say|says|said|answer|answers|rate|rates|rated|rating|score|give|gives|choose|chooses|pick|picks|put)"
    r"(?:\s+(?:it|them|this|that|this group|is|as|at|with))*\s*[:=\-–]?\s*(?:an?\s+)?\(?(\d+(?:\.\d+)?)(?![\d.]\d)",
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
    #: every line (or lead-in) that gave no item, with the reason, in reply order
    dropped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``ok``, ``refusal`` or ``empty``."""
        if self.refusal:
            return "refusal"
        return "ok" if self.items else "empty"


@dataclass(frozen=True)
class Rating:
    """A parsed rating reply: the value (NaN unless ``ok``), the status and how it was read or why not."""

    value: float
    status: str
    reason: str


def _add_items(out: Listing, segments: list[tuple[str, str]]) -> None:
    """Add each ``(raw, stripped)`` segment's cleaned item to ``out`` (ranked; a repeated item counted, not added)."""
    seen: set[str] = set()
    rank = 0
    for raw, word in segments:
        attribute = clean_item(word)
        if not attribute:
            continue
        rank += 1
        if attribute in seen:
            out.n_duplicates += 1
            continue
        seen.add(attribute)
        out.items.append(Item(rank=rank, raw_item=raw, attribute=attribute))


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
        self.refusal = compile_patterns(refusal_patterns)
        self.warning = compile_patterns(warning_patterns)
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
        marked = [line for line in lines if _MARKER.match(line)]
        inline = [line for line in lines if len(_INLINE_NUMBER.findall(line)) >= 3]
        rows = [line for line in lines if line.startswith("|") and line.count("|") >= 2]
        # the reply's shape decides how it is cut into segments (items to be) and other lines (with why)
        if len(rows) >= 3 and len(marked) < 2:
            out.shape, (segments, others) = "table", self._table_segments(lines, rows)
        elif len(marked) >= 2 or inline:
            out.shape, (segments, others) = "marked", self._marked_segments(lines, len(marked), _headings(raw_lines))
        elif any(_split_delimited(self._list_part(line)[1]) is not None for line in lines if not _MARKER.match(line)):
            out.shape, (segments, others) = "delimited", self._delimited_segments(lines)
        else:
            out.shape, (segments, others) = "lines", self._line_segments(lines)
        _add_items(out, [(segment.strip(), self._strip(segment.strip())) for segment in segments])
        refusal_lines = self._drop(out, others)
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
    def _table_segments(lines: list[str], rows: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
        """A markdown table: a header row, a separator, then one item per row (its first cell that is not a number)."""
        others = [(line, "outside the table") for line in lines if line not in rows]
        segments = []
        for row in (r for r in rows[1:] if not _TABLE_SEPARATOR.match(r)):
            cells = [c.strip() for c in row.strip("|").split("|")]
            text = next((c for c in cells if c and not re.fullmatch(r"\d+[.)]?", c)), "")
            if text:
                segments.append(text)
        return segments, others

    def _marked_segments(
        self, lines: list[str], n_marked: int, headings: set[str]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """Numbered or bulleted lines (and numbers run together on one line); other lines are not items."""
        segments: list[str] = []
        others: list[tuple[str, str]] = []  # lines (or lead-ins) that are not items, and where they stood
        for line in lines:
            if len(_INLINE_NUMBER.findall(line)) >= 3:
                head, *parts = _INLINE_NUMBER.split(line)
                if head.strip():
                    others.append((head.strip(), "lead-in before the list"))
                segments.extend(p for p in parts if p.strip())
            elif _MARKER.match(line) and n_marked >= 2:
                text = _MARKER.sub("", line, count=1)
                if line in headings:
                    others.append((line, "heading over its items"))
                elif self._item_sentence_kind(text):
                    others.append((line, "a sentence in an item's place"))
                else:
                    segments.append(text)
            else:
                others.append((line, "not a list line (preamble or closing remark)"))
        return segments, others

    def _delimited_segments(self, lines: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
        """Lines split on commas and semicolons; the sentences and lead-in around a list are not items."""
        segments: list[str] = []
        others: list[tuple[str, str]] = []
        for line in lines:
            around, tail = self._list_part(line)
            parts = _split_delimited(tail)
            if parts is None:
                if self._is_commentary(line) or self._item_sentence_kind(line):
                    others.append((line, "commentary (not a list line)"))
                else:
                    segments.append(line)
                continue
            others.extend((text, "a sentence around the list") for text in around)
            lead = _PROSE_LEAD.match(parts[0])
            if lead is not None and len(parts[0].split()) >= 3:
                others.append((lead.group(1), "lead-in before the list"))
                parts[0] = parts[0][lead.end() :]
            segments.extend(parts)
        return segments, others

    def _line_segments(self, lines: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
        """One item per line, but commentary."""
        segments: list[str] = []
        others: list[tuple[str, str]] = []
        for line in lines:
            if self._is_commentary(line) or self._item_sentence_kind(line):
                others.append((line, "commentary (not a list line)"))
            else:
                segments.append(line)
        return segments, others

    def _drop(self, out: Listing, others: list[tuple[str, str]]) -> list[str]:
        """Record every line that gave no item, with why; return the refusal sentences among them."""
        refusal_lines: list[str] = []
        for line, where in others:
            kind = self._sentence_kind(line)
            if kind == "refusal":
                refusal_lines.append(line)
                out.dropped.append((line, f"refusal sentence; {where}"))
            elif kind == "warning":
                out.warning_lines.append(line)
                out.dropped.append((line, f"bias warning; {where}"))
            else:
                out.dropped_lines.append(line)
                out.dropped.append((line, where))
        return refusal_lines

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
        """``refusal``/``warning`` for a line in an item's place that is such a sentence, else ``""``.

        A line that starts with a trait before an explanation separator is an item, not a sentence,
        whatever its explanation says (:meth:`_trait_head`).
        """
        plain = _MARKDOWN.sub("", text).strip()
        n = len(plain.split())
        if n >= LONG_ITEM_WORDS or (n >= MIN_ITEM_SENTENCE_WORDS and _SENTENCE_END.search(plain)):
            if self._trait_head(plain):
                return ""
            return self._sentence_kind(plain)
        return ""

    def _trait_head(self, text: str, comma: bool = True) -> str:
        """The trait before an explanation separator of ``text``, or ``""`` when there is none.

        The head before the first spaced dash, colon, parenthesis (or, with ``comma``, comma) is a trait when it has at
        most :data:`MAX_TRAIT_WORDS` words, at least one letter, does not start with a lead-in word
        (``Note``, ``Remember``, ``These``, ``However``, ...: :data:`_LEAD_IN_WORDS`) and matches no
        refusal or warning pattern itself (``Stereotypes aside: ...`` is no trait).
        """
        plain = _MARKDOWN.sub("", _MARKER.sub("", text, count=1)).strip()
        pieces = _EXPLANATION.split(plain, maxsplit=1)
        if (len(pieces) < 2 or not pieces[1].strip()) and comma:
            pieces = plain.split(",", 1)
            if len(pieces) < 2 or not pieces[1].strip():
                return ""
        head = _EDGE.sub("", pieces[0])
        words = head.split()
        if not 1 <= len(words) <= MAX_TRAIT_WORDS or not re.search(r"[^\W\d_]", head):
            return ""
        if words[0].casefold().strip(".,;:!?\"'") in _LEAD_IN_WORDS:
            return ""
        if any(p.search(head) for p in (*self.refusal, *self.warning)):
            return ""
        return head

    def _is_commentary(self, line: str) -> bool:
        text = _MARKDOWN.sub("", line).strip()
        if text.endswith(":"):
            return True
        # "Compassionate - they care for the sick." is an item; "Sure, here you go." stays commentary
        return len(text.split()) >= 4 and bool(_SENTENCE_END.search(text)) and not self._trait_head(text, comma=False)

    @staticmethod
    def _strip(raw: str) -> str:
        text = _MARKDOWN.sub("", raw).strip()
        text = _EXPLANATION.split(text, maxsplit=1)[0]
        text = _COMMA_EXPLANATION.sub(r"\1", text)
        return _EDGE.sub("", text)

    # -- rating ------------------------------------------------------------------------------------

    def parse_rating(self, reply: str | None) -> tuple[float, str]:
        """The rating in a reply and its status (:meth:`read_rating` without the reason)."""
        rating = self.read_rating(reply)
        return rating.value, rating.status

    def read_rating(self, reply: str | None) -> Rating:
        """The rating in a reply, a status (``ok``, ``refusal``, ``no_number``, ``ambiguous``) and why.

        In order: a reply that starts with a number on the scale (``4``, ``(4)``, ``**4**``, ``4/5``,
        ``4 - Somewhat positively``) gives it; else a number on the scale right after a label
        (``Rating: 4``, ``I would say 4``, ``I'd rate them a 4``, ``my answer is 4``); else the one
        distinct number on the scale that the reply holds. Before the last step a denominator
        (``4/5``, ``4 out of 5`` count as 4) and an echo of the scale (``on a scale of 1 to 5``,
        ``(1) Very negatively to (5) Very positively``) are set aside. Two different numbers on the
        scale give ``ambiguous``, none ``no_number`` (or ``refusal`` when a sentence declines or warns); NaN.

        A number found first or after a label is the answer only when the reply offers no other
        answer on the scale: a second number joined to it (``2 or 3``, ``3/5 to 4/5``, ``4-5``,
        ``4, maybe 5``, ``between 2 and 4``), another answer after a verb of answering (``I'd say 5,
        though some would answer 3``, ``others might give it a 2``) or another number written on
        the scale (``4/5 ... 3 out of 5``) make it ``ambiguous``. A number that counts something
        (``Rating: 2. Many people in 5 surveys...``) is not an answer.
        """
        text = _MARKDOWN.sub("", reply or "").strip()
        low, high = self.scale
        first = self._first_answer(text)
        written, rest = self._set_scale_aside(text)
        numbers = {float(m) for m in re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d]|\.\d)", rest)}
        scaled = sorted(v for v in numbers if self._on_scale(v))
        if first is not None:
            value, how = first
            others = self._other_answers(rest, written)
            rival = {v: why for v, why in others.items() if self._on_scale(v) and v != value}
            if not rival:
                return Rating(value, "ok", how)
            names = ", ".join(f"{v:g}" for v in sorted({value, *rival}))
            return Rating(
                math.nan,
                "ambiguous",
                f"two answers on the scale ({names}): {how} is {value:g}, {next(iter(rival.values()))}",
            )
        if len(scaled) == 1:  # a hedge before the number does not undo the answer, as with listings
            return Rating(scaled[0], "ok", "the one number on the scale")
        if not scaled and any(self._sentence_kind(line) for line in text.splitlines()):
            return Rating(math.nan, "refusal", "no number on the scale; a sentence declines or warns")
        if scaled:
            return Rating(
                math.nan, "ambiguous", "different numbers on the scale: " + ", ".join(f"{v:g}" for v in scaled)
            )
        return Rating(math.nan, "no_number", f"no number from {low} to {high}")

    def _on_scale(self, value: float) -> bool:
        low, high = self.scale
        return low <= value <= high

    def _first_answer(self, text: str) -> tuple[float, str] | None:
        """The number on the scale the reply starts with, else the one right after the first label; how it was read."""
        lead = re.match(r"^\(?\s*" + _NUMBER + r"\s*\)?(?![\d.]\d)", text)
        if lead is not None and self._on_scale(float(lead.group(1))):
            return float(lead.group(1)), "the number the reply starts with"
        for label in _RATING_LABEL.finditer(text):
            if self._on_scale(float(label.group(1))):
                return float(label.group(1)), f"the number after {label.group(0).split(label.group(1))[0].strip()!r}"
            break
        return None

    def _set_scale_aside(self, text: str) -> tuple[set[float], str]:
        """Numbers written on the scale (``4/5``, ``4 out of 5``); the text without denominators or scale echoes."""
        low, high = self.scale
        written = {float(v) for v in re.findall(_NUMBER + rf"\s*(?:/|out of)\s*{high}(?![\d.]\d)", text, re.IGNORECASE)}
        rest = re.sub(_NUMBER + r"\s*(?:/|out of)\s*\d+(?:\.\d+)?", r"\1", text, flags=re.IGNORECASE)
        rest = re.sub(rf"\(\s*{low}\s*\)[^()\d]{{0,60}}?\bto\s*\(\s*{high}\s*\)", " ", rest, flags=re.IGNORECASE)
        rest = re.sub(
            rf"\b(?:scale|range)\s+(?:of|from)\s+{low}\s*(?:-|–|to)\s*{high}\b|\b(?:from\s+)?{low}\s*(?:-|–|to)\s*{high}\s+scale\b",
            " ",
            rest,
            flags=re.IGNORECASE,
        )
        return written, rest

    def _other_answers(self, rest: str, written: set[float]) -> dict[float, str]:
        """Every answer the reply offers besides its first: joined numbers, a range, after a verb of answering, x/5."""
        high = self.scale[1]
        others: dict[float, str] = {}
        for a, b in _JOINED_NUMBERS.findall(rest):
            for v in (float(a), float(b)):
                others.setdefault(v, f"joined: {a} and {b}")
        for a, b in re.findall(r"\bbetween\s+" + _NUMBER + r"\s+and\s+" + _NUMBER, rest, re.IGNORECASE):
            for v in (float(a), float(b)):
                others.setdefault(v, f"between {a} and {b}")
        for match in _OTHER_ANSWER.finditer(rest):
            others.setdefault(float(match.group(1)), f"another answer: {match.group(0).strip()!r}")
        for v in written:
            others.setdefault(v, f"another number on the scale: {v:g}/{high}")
        return others
