r"""CEAT's contexts: a user's corpus read, and each word's contexts found in it.

**Reading** (:func:`read_corpus`). A corpus is

* a text file (any suffix but those below): one context a line, blank lines skipped;
* JSON Lines (``.jsonl``): one context a line, a JSON object whose ``text_column`` (default
  ``text``) holds it, or a JSON string;
* a table (``.csv``, ``.tsv``, ``.parquet``): its ``text_column``.

A context is kept as written (surrounding spaces stripped). Bad input is one line naming the file,
the line (or row) and the problem, before any model loads.

**Matching** (:func:`find_contexts`). A context holds a word when the word occurs in it as a whole
word: the word's characters, not preceded and not followed by a letter, a digit or ``_``
(``(?<!\w)word(?!\w)``, Unicode-aware; ``match_case=False`` ignores case). So ``rose`` is found in
"a rose." and "Rose, the", not in "roses" or "prose"; a phrase (``African American``) is found as
written. The word's place in a context is its **first** match (``ceat.py`` takes the first position
of the word's token). A word's contexts are in corpus order, at most ``max_contexts`` of them (the
first ones; ``ceat.py``'s BERT keeps 1,000), and the CEAT draws index that order.

**Windows** (:func:`short_sen`, option ``short_sen``): ``ceat.py``'s ``short_sen`` cuts a context of
9 or more whitespace-separated words to 9 words around the word (the first 9 when the word is among
the first 4, the last 9 when it is among the last 4, else the 4 words before it, the word and the 3
words after it: 8 words, as its slice ``wds[i-4:i+4]`` gives), joined by single spaces; shorter
contexts are kept whole. ``ceat.py`` finds the word with ``list.index`` among the whitespace tokens
and fails when the word is glued to punctuation ("rose."); here the whitespace token that holds the
word's first match is used instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assoc import DataError, OptionError

#: Suffixes read as tables (a column of texts); ``.jsonl`` is JSON Lines; anything else one context a line.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class Context:
    """One context of a word: the text (windowed when asked) and the word's first match in it."""

    text: str
    start: int
    end: int
    line: int  # where the context is in the corpus (1-based line or row)

    @property
    def span(self) -> tuple[int, int]:
        """The word's characters in ``text``."""
        return (self.start, self.end)


def read_corpus(path: str | Path, *, text_column: str = "text") -> Iterator[tuple[int, str]]:
    """Each context of the corpus at ``path`` with its line (or row) number, in order (module docstring)."""
    location = Path(path).expanduser()
    if not location.exists():
        raise DataError(f"corpus file {str(location)!r} does not exist")
    if not location.is_file():
        raise DataError(f"corpus {str(location)!r} is not a file")
    suffix = location.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        yield from _table_texts(location, text_column)
    elif suffix in JSONL_SUFFIXES:
        yield from _jsonl_texts(location, text_column)
    else:
        from assoc.infra import read_text

        text = read_text(location, what="corpus file", error=DataError)
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield number, line.strip()


def _jsonl_texts(path: Path, column: str) -> Iterator[tuple[int, str]]:
    from assoc.infra import read_text

    text = read_text(path, what="corpus file", error=DataError)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise DataError(
                f"corpus file {path}, line {number}: not JSON ({exc.args[0] if exc.args else exc})"
            ) from None
        if isinstance(record, dict):
            if column not in record:
                raise DataError(
                    f"corpus file {path}, line {number}: no {column!r} field (it has {sorted(record)}); "
                    "name the field with text_column"
                )
            record = record[column]
        if not isinstance(record, str):
            raise DataError(f"corpus file {path}, line {number}: the context is {type(record).__name__}, not text")
        if record.strip():
            yield number, record.strip()


def _table_texts(path: Path, column: str) -> Iterator[tuple[int, str]]:
    from assoc import read_data_file

    frame = read_data_file(path, what="corpus", all_text=path.suffix.lower() in {".csv", ".tsv"})
    if column not in frame.columns:
        raise DataError(
            f"corpus file {path} has no column {column!r} (it has {list(map(str, frame.columns))}); "
            "name the column of the contexts with text_column"
        )
    for number, value in enumerate(frame[column].tolist(), 1):
        if value is None or (isinstance(value, float) and value != value):
            continue
        if not isinstance(value, str):
            raise DataError(f"corpus file {path}, row {number}: the context is {type(value).__name__}, not text")
        if value.strip():
            yield number, value.strip()


def word_pattern(words: Sequence[str], *, match_case: bool = True) -> re.Pattern[str]:
    """One pattern that finds any of ``words`` as a whole word (longest first, so ``her`` is not read as ``he``)."""
    ordered = sorted(dict.fromkeys(words), key=lambda w: (-len(w), w))
    body = "|".join(re.escape(w) for w in ordered)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", 0 if match_case else re.IGNORECASE)


def short_sen(text: str, start: int) -> tuple[str, int]:
    """``ceat.py``'s 9-word window around the word that starts at character ``start`` (module docstring).

    Returns the windowed text and the word's start in it.
    """
    tokens = [(m.start(), m.group(0)) for m in re.finditer(r"\S+", text)]
    index = max(i for i, (at, _) in enumerate(tokens) if at <= start)
    offset = start - tokens[index][0]  # the word may start inside its whitespace token ("(rose")
    n = len(tokens)
    if n < 9:
        return text, start
    if index < 4:
        kept = range(0, 9)
    elif n - index - 1 < 4:
        kept = range(n - 9, n)
    else:
        kept = range(index - 4, index + 4)
    words = [tokens[i][1] for i in kept]
    position = sum(len(w) + 1 for w in words[: list(kept).index(index)])
    return " ".join(words), position + offset


def find_contexts(
    corpus: Iterable[tuple[int, str]],
    words: Sequence[str],
    *,
    match_case: bool = True,
    max_contexts: int | None = None,
    window: bool = False,
) -> dict[str, list[Context]]:
    """Each word's contexts in the corpus (module docstring), in corpus order, at most ``max_contexts`` each.

    With ``window``, each context is cut by :func:`short_sen` around the word's first match.
    """
    if max_contexts is not None and max_contexts < 1:
        raise OptionError(f"max_contexts must be at least 1, got {max_contexts}")
    unique = list(dict.fromkeys(words))
    found: dict[str, list[Context]] = {word: [] for word in unique}
    if not unique:
        return found
    pattern = word_pattern(unique, match_case=match_case)
    canonical = {w if match_case else w.casefold(): w for w in unique}
    full = set()
    for line, text in corpus:
        seen: set[str] = set()
        for match in pattern.finditer(text):
            key = match.group(0) if match_case else match.group(0).casefold()
            word = canonical.get(key)
            if word is None or word in seen or word in full:
                continue
            seen.add(word)
            start, end = match.start(), match.end()
            shown = text
            if window:
                shown, start = short_sen(text, start)
                end = start + (match.end() - match.start())
            found[word].append(Context(shown, start, end, line))
            if max_contexts is not None and len(found[word]) >= max_contexts:
                full.add(word)
        if len(full) == len(unique):
            break
    return found
