"""What every benchmark reader shares: opening its files, and refusing bad lines all at once.

A reader checks every line of a file before it builds any item, collects what is wrong with each
(:class:`BadLines`), and refuses the file with one line naming the file, each bad line and its
problem, so that a user fixes a copy in one pass instead of one error per run.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from assoc import StimuliError

#: How many bad lines a message spells out (the rest are counted).
SHOWN = 10


class BadLines:
    """The problems of one file, line by line; :meth:`raise_any` refuses the file if there are any.

    >>> bad = BadLines("f.tsv")
    >>> bad.add(3, "two fields expected, got 1")
    >>> bad.raise_any()
    Traceback (most recent call last):
    ...
    assoc.errors.StimuliError: f.tsv, line 3: two fields expected, got 1
    """

    def __init__(self, source: str | Path, unit: str = "line"):
        self.source = str(source)
        self.unit = unit
        self.problems: list[tuple[int | str, str]] = []

    def add(self, where: int | str, problem: str) -> None:
        """Record ``problem`` at ``where`` (a 1-based line number, or a place such as ``item 4``)."""
        self.problems.append((where, problem))

    def __bool__(self) -> bool:
        return bool(self.problems)

    def _place(self, where: int | str) -> str:
        return f"{self.unit} {where}" if isinstance(where, int) else str(where)

    def raise_any(self) -> None:
        """Raise one :class:`~assoc.StimuliError` naming the file and every bad line (the first ten spelt out)."""
        if not self.problems:
            return
        if len(self.problems) == 1:
            where, problem = self.problems[0]
            raise StimuliError(f"{self.source}, {self._place(where)}: {problem}")
        shown = "; ".join(f"{self._place(w)}: {p}" for w, p in self.problems[:SHOWN])
        more = f"; ... ({len(self.problems)} bad {self.unit}s in all)" if len(self.problems) > SHOWN else ""
        raise StimuliError(f"{self.source}: {len(self.problems)} bad {self.unit}s: {shown}{more}")


def open_text(path: Path) -> TextIO:
    """``path`` as UTF-8 text, gunzipped when its name ends in ``.gz``."""
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8", newline="")


def read_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(line number, text)`` of every line of a text file, line ends removed; unreadable: one clear error."""
    path = Path(path)
    if not path.is_file():
        raise StimuliError(f"{path}: file not found")
    try:
        with open_text(path) as handle:
            return [(number, text.rstrip("\r\n")) for number, text in enumerate(handle, 1)]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StimuliError(f"{path}: cannot be read ({exc})") from None


def tsv_rows(path: str | Path, header: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """The rows of a tab-separated file whose first line is ``header``; a wrong header is refused.

    Yields ``(line number, fields)`` for every non-blank line after the header (no quoting: the
    benchmarks' files have none). Lines with the wrong number of fields are left to the caller,
    which names them with the rest of its problems.
    """
    lines = read_lines(path)
    if not lines or tuple(lines[0][1].split("\t")) != header:
        got = lines[0][1] if lines else "(an empty file)"
        raise StimuliError(f"{path}, line 1: the header must be {'<TAB>'.join(header)}, got {got!r}")
    for number, text in lines[1:]:
        if text.strip():
            yield number, text.split("\t")


def bundled(package: str, *parts: str) -> Path:
    """A path inside a benchmark subpackage's bundled data (``data/...``)."""
    from importlib.resources import files

    return Path(str(files(package).joinpath("data", *parts)))
