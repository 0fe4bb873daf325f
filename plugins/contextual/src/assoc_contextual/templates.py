"""A seeded corpus of template sentences for CEAT: every word in many plain contexts, offline and reproducible.

Natural corpora lack many WEAT words (BOLD's Wikipedia sentences never hold *aster*, *clover*,
*cockroach*, *poison* or *Lakisha*), so the tests, the benchmarks and the docs use a corpus made
here: :func:`template_corpus` puts each word into ``per_word`` sentences drawn from
:data:`TEMPLATES` (short, plain frames with one slot, some of them longer than CEAT's 9-word
window) with filler words from :data:`FILLERS`, and adds ``shared`` sentences that hold two of the
words (so a context can serve two words) and ``noise`` sentences that hold none. The same words,
sizes and seed give the same corpus, line for line, on any machine (``random.Random(seed)``).

The sentences carry no meaning about the words: a CEAT on them measures what a model brings to a
word in neutral frames, not what a corpus says about it. The frames and fillers avoid the words of
Caliskan et al.'s WEAT lists (no *he*, *she*, *friend*, *home*, *office*), so a word's contexts are the
sentences made for it (and the shared ones that name it).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

#: One-slot frames (``{w}``: the word, ``{f}``: a filler), from 5 to 16 words.
TEMPLATES: tuple[str, ...] = (
    "This is about {w}.",
    "I read a short note on {w} today.",
    "The word {w} came up in the {f}.",
    "Someone mentioned {w} during the {f} this morning.",
    "We talked about {w} for a while.",
    "{w} was written on the old {f}.",
    "Here is one more line with {w} in it.",
    "The guide said {w} and then left the {f}.",
    "The clerk wrote {w} at the top of the page.",
    "They asked about {w} again.",
    "A story about {w} was on the {f} last night.",
    "Nobody expected {w} to appear in the {f}.",
    "The sign near the {f} said {w}.",
    "I keep thinking about {w} when I walk past the {f}.",
    "There was a long discussion about {w} after the {f} ended and everyone went out.",
    "Before the {f} started, the teacher wrote {w} on the board and asked us what it meant.",
    "It is hard to say what {w} means to people who have never seen the {f}.",
    "On the way to the {f} we passed a poster that said {w} in large letters.",
    "The list had {w} near the bottom.",
    "Write {w} in the box.",
    "My neighbour brought up {w} at the {f}.",
    "In the {f}, {w} was the last word on the card.",
    "The next item on the list is {w}.",
    "We heard {w} on the radio.",
)
#: Two-slot frames: one sentence is then a context of two words.
SHARED_TEMPLATES: tuple[str, ...] = (
    "The list had {w} and {v} on it.",
    "We talked about {w}, then about {v}.",
    "First {w} came up, and later {v} was mentioned near the {f}.",
    "The clerk wrote {w} on one card and {v} on the other.",
)
#: Sentences without a slot word: the corpus's noise.
NOISE: tuple[str, ...] = (
    "The weather was fine all day.",
    "We took the bus to the {f}.",
    "Nothing much happened at the {f}.",
    "It rained a little in the evening.",
)
#: Fillers of ``{f}``: neutral places and things.
FILLERS: tuple[str, ...] = (
    "meeting",
    "newspaper",
    "kitchen",
    "station",
    "market",
    "library",
    "garden",
    "class",
    "workshop",
    "park",
    "museum",
    "hallway",
)


def template_corpus(
    words: Sequence[str], *, per_word: int = 20, shared: int = 0, noise: int = 0, seed: int = 0
) -> list[str]:
    """``per_word`` template sentences for each word (in order), ``shared`` two-word sentences, ``noise`` others.

    Sentences are drawn with ``random.Random(seed)`` in a fixed order (each word's sentences, then the
    shared ones, then the noise) and then shuffled with the same generator, so a word's contexts are
    spread over the corpus as in a natural one. Words are inserted as written (names keep their
    capitals; a sentence that starts with a word keeps it as written).
    """
    if per_word < 0 or shared < 0 or noise < 0:
        raise ValueError("per_word, shared and noise must be non-negative")
    unique = list(dict.fromkeys(words))
    rng = random.Random(seed)
    lines: list[str] = []
    for word in unique:
        for _ in range(per_word):
            lines.append(rng.choice(TEMPLATES).format(w=word, f=rng.choice(FILLERS)))
    for _ in range(shared if len(unique) > 1 else 0):
        first, second = rng.sample(unique, 2)
        lines.append(rng.choice(SHARED_TEMPLATES).format(w=first, v=second, f=rng.choice(FILLERS)))
    for _ in range(noise):
        lines.append(rng.choice(NOISE).format(f=rng.choice(FILLERS)))
    rng.shuffle(lines)
    return lines


def write_template_corpus(path: str | Path, words: Sequence[str], **options: int) -> Path:
    """:func:`template_corpus` written to ``path``, one sentence a line (UTF-8); returns the path."""
    target = Path(path)
    target.write_text("\n".join(template_corpus(words, **options)) + "\n", encoding="utf-8")
    return target
