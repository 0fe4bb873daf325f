"""The vocabulary the top words are drawn from.

A vocabulary is given as (option ``vocabulary``):

* a named built-in list: ``wordfreq-en`` (the default), see :func:`wordfreq_words`;
* a text file (``.txt`` or any suffix other than the table ones), one word or phrase a line;
* a ``.csv``/``.tsv``/``.parquet``/``.jsonl`` table: the column ``vocabulary_column`` (default: the column
  named ``word``, else the only column);
* a Python list of words.

Words are stripped of surrounding spaces; empty lines are skipped; a word listed twice is kept once
(first occurrence; the count is reported in the scorer's provenance). Nothing else is changed: case is
kept, so a cased vocabulary stays cased.

The built-in ``wordfreq-en`` list (Nicolas & Caliskan's 27,075-word list is not published): the
English ``large`` wordlist of wordfreq 3.1.1 (Speer, 2022; doi:10.5281/zenodo.7199437), in its
frequency order, keeping tokens made only of the letters a-z (no digits, apostrophes, hyphens or
accented letters) with at least two letters; stop words are kept (the paper does not say it removed
any; a category term's nearest neighbours are content words anyway). The first ``size`` such tokens
(default 27,075, the paper's vocabulary size) form the list. wordfreq is pinned, and the list's
sha256 is checked against :data:`WORDFREQ_DIGESTS` for the default size, so the same input gives the
same list on every machine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assoc import DataError, OptionError

BUILTIN = "wordfreq-en"
DEFAULT_SIZE = 27_075
_ALPHA = re.compile(r"[a-z]{2,}")
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".jsonl")
#: sha256 of "\n".join(list) of the built-in list per size, with wordfreq 3.1.1 (checked by the tests)
WORDFREQ_DIGESTS: dict[int, str] = {27_075: "b676de3f2f1970c105079705614ed9a11a755f49d36bf52916da346d8070b68d"}


@dataclass(frozen=True)
class Vocabulary:
    """An ordered list of distinct words and where it came from.

    Attributes
    ----------
        words: the words, in order (their index is the tie-break of equal cosines).
        source: a short description (``wordfreq-en (27075 words, wordfreq 3.1.1)``, a path, ``list``).
        digest: sha256 of the words joined by newlines (part of the embedding cache key).
        n_duplicates: words given more than once and kept once.
    """

    words: tuple[str, ...]
    source: str
    digest: str
    n_duplicates: int = 0

    def __len__(self) -> int:
        return len(self.words)


def _digest(words: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(words).encode("utf-8")).hexdigest()


def wordfreq_words(size: int = DEFAULT_SIZE, language: str = "en") -> list[str]:
    """The first ``size`` tokens of wordfreq's ``large`` list that are only letters a-z (two or more).

    In wordfreq's frequency order; see the module docstring.
    """
    try:
        import wordfreq
    except ImportError:  # pragma: no cover - a dependency of this plugin
        raise DataError("the built-in vocabulary needs wordfreq: pip install wordfreq==3.1.1") from None
    words: list[str] = []
    for token in wordfreq.iter_wordlist(language, wordlist="large"):
        if _ALPHA.fullmatch(token):
            words.append(token)
            if len(words) == size:
                break
    if len(words) < size:
        raise OptionError(
            f"vocabulary_size={size} is more than the {len(words)} alphabetic words of wordfreq's "
            f"{language!r} large list"
        )
    return words


def _clean(raw: Sequence[Any], where: str) -> tuple[list[str], int]:
    seen: dict[str, None] = {}
    duplicates = 0
    for item in raw:
        if item is None or (isinstance(item, float) and item != item):
            continue
        if not isinstance(item, str):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            else:
                raise DataError(f"{where}: vocabulary entries must be text, got {item!r}")
        word = item.strip()
        if not word:
            continue
        if word in seen:
            duplicates += 1
        else:
            seen[word] = None
    if not seen:
        raise DataError(f"{where}: the vocabulary is empty (no non-blank word); give at least one word")
    return list(seen), duplicates


def load_vocabulary(source: Any = BUILTIN, *, size: int = DEFAULT_SIZE, column: str | None = None) -> Vocabulary:
    """Load a vocabulary (see the module docstring).

    Errors name the problem: a missing file, an empty list, a missing column.
    """
    if source is None or (isinstance(source, str) and source == BUILTIN):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise OptionError(f"vocabulary_size must be a positive integer, got {size!r}")
        from importlib.metadata import version

        words = wordfreq_words(size)
        installed = version("wordfreq")
        digest = _digest(words)
        expected = WORDFREQ_DIGESTS.get(size)
        if expected is not None and expected != digest:
            import warnings

            warnings.warn(
                f"the built-in vocabulary of {size} words differs from the list of wordfreq 3.1.1 "
                f"(installed: wordfreq {installed}); results will not match other machines'",
                stacklevel=2,
            )
        return Vocabulary(tuple(words), f"{BUILTIN} ({size} words, wordfreq {installed})", digest)
    if isinstance(source, (list, tuple)):
        words, duplicates = _clean(source, "vocabulary list")
        return Vocabulary(tuple(words), f"list ({len(words)} words)", _digest(words), duplicates)
    if not isinstance(source, (str, Path)):
        raise OptionError(
            f"vocabulary must be {BUILTIN!r}, a file path or a list of words, got {type(source).__name__}"
        )
    path = Path(source).expanduser()
    if not path.exists():
        hint = f" (the built-in list is named {BUILTIN!r})" if "/" not in str(source) and "." not in str(source) else ""
        raise DataError(f"vocabulary file {str(path)!r} does not exist{hint}")
    if not path.is_file():
        raise DataError(f"vocabulary {str(path)!r} is not a file")
    where = f"vocabulary file {str(path)!r}"
    if path.suffix.lower() in TABLE_SUFFIXES:
        from assoc import read_data_file

        frame = read_data_file(path, what="vocabulary", all_text=path.suffix.lower() in {".csv", ".tsv"})
        if column is None:
            if "word" in frame.columns:
                column = "word"
            elif len(frame.columns) == 1:
                column = str(frame.columns[0])
            else:
                raise DataError(
                    f"{where} has columns {list(map(str, frame.columns))}; name the one holding the words "
                    "with vocabulary_column"
                )
        if column not in frame.columns:
            raise DataError(f"{where} has no column {column!r} (it has {list(map(str, frame.columns))})")
        raw: list[Any] = frame[column].tolist()
    else:
        try:
            raw = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise DataError(f"{where} is not UTF-8 text ({exc})") from None
    words, duplicates = _clean(raw, where)
    return Vocabulary(tuple(words), str(path), _digest(words), duplicates)
