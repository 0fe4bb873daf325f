"""Dictionary coding of listed or associated words: representativeness and direction.

Nicolas & Caliskan (2024) code every word a language model lists for (or associates with) a
social-category term with content dictionaries (Warmth and Competence, from SADCAT; Nicolas,
Bai & Fiske, 2021). For one response ``w`` and one dimension ``D`` with dictionary ``Dict_D``
(a set of words, each with a direction ``dir_D(w)`` in [-1, 1], -1 = low, 1 = high)::

    representativeness_D(w) = 1 if w in Dict_D else 0        (a word in two dictionaries gets 1 for both)
    direction_D(w)          = dir_D(w) if w in Dict_D else NA

and per term (the responses r_1..r_n listed for it, repeated responses removed)::

    representativeness_D = (1 / n) * sum_i representativeness_D(r_i)             in [0, 1]
    direction_D          = mean of direction_D(r_i) over the responses with a
                           direction (NA ignored); NA when there is none          in [-1, 1]

so representativeness is the share of responses about the dimension, whatever their direction,
and direction says where on the dimension those responses fall. A dictionary word without a
direction (NA) counts for representativeness but not for direction.

Before matching, words of both the responses and the dictionary can be normalised as the paper
prescribes (lowercase; dashes replaced by spaces), plus surrounding and repeated whitespace
removed. The paper also turns plurals into singulars but does not name the tool; that step is
left to the user (list both forms in the dictionary, or singularise the responses first).

References
----------
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
    Nicolas, G., Bai, X., & Fiske, S. T. (2021). Comprehensive stereotype content dictionaries
        using a semi-automated method. European Journal of Social Psychology, 51(1), 178-196.
        doi:10.1002/ejsp.2724
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from assoc.errors import DataError

#: Dash characters replaced by a space when normalising: hyphen-minus, hyphen, non-breaking
#: hyphen, figure dash, en dash, em dash, minus sign.
DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"
_DASH_RE = re.compile(f"[{re.escape(DASHES)}]")
_SPACE_RE = re.compile(r"\s+")


def normalize_word(word: str, *, normalize: bool = True) -> str:
    """Lowercase, dashes to spaces, whitespace collapsed and stripped (only strip when ``normalize`` is false)."""
    text = str(word)
    if not normalize:
        return text.strip()
    text = _DASH_RE.sub(" ", text.casefold())
    return _SPACE_RE.sub(" ", text).strip()


@dataclass(frozen=True)
class Dictionary:
    """Content dictionaries: for each dimension, the (normalised) words and their directions (NaN = none)."""

    entries: dict[str, dict[str, float]]
    normalize: bool = True
    #: entries listed more than once with the same direction (kept once), for the caller to report
    notes: tuple[str, ...] = field(default=())

    @property
    def dimensions(self) -> list[str]:
        """The dimensions the dictionary codes."""
        return list(self.entries)

    def code(self, word: str, dimension: str) -> tuple[float, float]:
        """(representativeness, direction) of one already-normalised word on ``dimension``."""
        words = self.entries[dimension]
        if word in words:
            return 1.0, words[word]
        return 0.0, math.nan


def _direction(value: Any, *, word: str, dimension: str) -> float:
    """A direction in [-1, 1], or NaN for a missing one; anything else is an error naming the word."""
    if value is None or value is pd.NA or (isinstance(value, str) and value.strip().upper() in {"", "NA", "NAN"}):
        return math.nan
    if isinstance(value, bool):
        raise DataError(
            f"dictionary: direction of {word!r} on {dimension!r} must be a number in [-1, 1], got {value!r}"
        )
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError(
            f"dictionary: direction of {word!r} on {dimension!r} must be a number in [-1, 1] or empty, got {value!r}"
        ) from None
    if math.isnan(number):
        return math.nan
    if not -1.0 <= number <= 1.0:
        raise DataError(f"dictionary: direction of {word!r} on {dimension!r} is {number}, outside [-1, 1]")
    return number


def _membership(value: Any, *, word: str, column: str) -> bool | None:
    """1/0 membership; ``None`` for a missing value (R's NA), which the caller counts as not a member."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if value is None or value is pd.NA or (isinstance(value, str) and value.strip().upper() in {"", "NA", "NAN"}):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number):
        return None
    if number in (0.0, 1.0):
        return number == 1.0
    raise DataError(f"dictionary: column {column!r} must hold 0 or 1, got {value!r} for {word!r}")


def _add(
    entries: dict[str, dict[str, float]],
    dimension: str,
    raw_word: Any,
    direction: float,
    *,
    normalize: bool,
    notes: list[str],
) -> None:
    if raw_word is None or (isinstance(raw_word, float) and math.isnan(raw_word)):
        raise DataError(f"dictionary: a word of dimension {dimension!r} is missing")
    word = normalize_word(raw_word, normalize=normalize)
    if not word:
        raise DataError(f"dictionary: a word of dimension {dimension!r} is empty")
    words = entries.setdefault(dimension, {})
    if word in words:
        old = words[word]
        same = (math.isnan(old) and math.isnan(direction)) or old == direction
        if not same:
            raise DataError(
                f"dictionary: {word!r} is listed twice on {dimension!r} with different directions "
                f"({old} and {direction})" + (" after normalisation" if normalize else "")
            )
        notes.append(f"{word!r} listed more than once on {dimension!r}")
        return
    words[word] = direction


def load_dictionary(
    source: Any, *, word_column: str = "word", normalize: bool = True, r_object: str | None = None
) -> Dictionary:
    """Read content dictionaries from a file, a DataFrame or a mapping.

    Accepted shapes (words are normalised with :func:`normalize_word` unless ``normalize`` is false):

    * **long**: columns ``word`` (``word_column``), ``dimension`` and optionally ``direction``;
      one row per word and dimension it belongs to; an empty direction is NA.
    * **wide**: column ``word`` and, per dimension ``D``, a column ``D_dict`` (1 = the word is
      in D's dictionary, 0 = not) and optionally ``D_dir`` (its direction; ignored where
      ``D_dict`` is 0, since direction is NA when representativeness is 0).
      This is the layout of the SADCAT R package's ``Dictionaries`` data (Nicolas, Bai & Fiske,
      2021): ``D_dict`` 0/1 membership, ``D_dict_hi`` / ``D_dict_lo`` 0/1 high/low and ``D_dir``
      1 high, 0 neutral, -1 low, NA outside the dictionary; without ``D_dir`` the direction is
      taken from ``D_dict_hi`` / ``D_dict_lo``. Other columns (sentiment scores, embeddings)
      are ignored; a missing (NA) membership counts as "not in the dictionary".
    * **mapping** ``{dimension: {word: direction or None}}``.

    A file is .csv, .tsv, .parquet, .jsonl (one JSON object per line) or an R data file
    (.rda/.RData/.rds, read with ``rdata``; ``r_object`` names the data frame, by default
    ``Dictionaries`` or the file's only data frame).
    """
    notes: list[str] = []
    entries: dict[str, dict[str, float]] = {}
    if isinstance(source, Mapping):
        if not source:
            raise DataError("dictionary: the mapping is empty")
        for dimension, words in source.items():
            if not isinstance(words, Mapping):
                raise DataError(
                    f"dictionary: dimension {dimension!r} must map words to directions, got {type(words).__name__}"
                )
            entries.setdefault(str(dimension), {})
            for raw, value in words.items():
                _add(
                    entries,
                    str(dimension),
                    raw,
                    _direction(value, word=str(raw), dimension=str(dimension)),
                    normalize=normalize,
                    notes=notes,
                )
        return Dictionary(entries, normalize, tuple(notes))
    frame = _read_frame(source, word_column, r_object)
    if word_column not in frame.columns:
        raise DataError(
            f"dictionary: no word column {word_column!r} "
            f"(its columns: {', '.join(map(str, frame.columns))}); "
            "name it with the 'dictionary_word' option"
        )
    if "dimension" in frame.columns:
        has_direction = "direction" in frame.columns
        directions = frame["direction"] if has_direction else [None] * len(frame)
        # zip over columns, not itertuples: a word column named e.g. "my word" is no valid attribute name
        for word, raw_dimension, raw_direction in zip(frame[word_column], frame["dimension"], directions):
            dimension = str(raw_dimension).strip()
            if not dimension or dimension.lower() in {"nan", "none"}:
                raise DataError(f"dictionary: the dimension of {word!r} is missing")
            direction = _direction(raw_direction, word=str(word), dimension=dimension) if has_direction else math.nan
            _add(entries, dimension, word, direction, normalize=normalize, notes=notes)
    else:
        dimensions = [str(c)[: -len("_dict")] for c in frame.columns if str(c).endswith("_dict")]
        if not dimensions:
            raise DataError(
                "dictionary: no dimension columns: expected a long table (columns word, dimension, "
                "direction) or a wide one (word, <dimension>_dict, <dimension>_dir, as SADCAT's "
                f"Dictionaries); got columns {', '.join(map(str, frame.columns))}"
            )
        orphans = [c for c in frame.columns if str(c).endswith("_dir") and str(c)[: -len("_dir")] not in dimensions]
        if orphans:
            raise DataError(f"dictionary: column(s) {', '.join(map(repr, orphans))} have no matching '_dict' column")
        for dimension in dimensions:
            entries.setdefault(dimension, {})
            directions = _wide_directions(frame, dimension, word_column)
            for word, member, direction in zip(frame[word_column], frame[f"{dimension}_dict"], directions):
                is_member = _membership(member, word=str(word), column=f"{dimension}_dict")
                if is_member:  # None (NA) is not a member
                    _add(
                        entries,
                        dimension,
                        word,
                        _direction(direction, word=str(word), dimension=dimension),
                        normalize=normalize,
                        notes=notes,
                    )
    if not entries:
        raise DataError("dictionary: it has no entries")
    return Dictionary(entries, normalize, tuple(notes))


def _wide_directions(frame: pd.DataFrame, dimension: str, word_column: str) -> list[Any]:
    """A wide dictionary's directions of ``dimension``.

    ``D_dir``; else from SADCAT's ``D_dict_hi`` / ``D_dict_lo`` (1 high, -1 low, 0 neither); else none.
    """
    if f"{dimension}_dir" in frame.columns:
        return list(frame[f"{dimension}_dir"])
    hi, lo = f"{dimension}_dict_hi", f"{dimension}_dict_lo"
    if hi in frame.columns and lo in frame.columns:
        out: list[Any] = []
        for word, h, low in zip(frame[word_column], frame[hi], frame[lo]):
            is_hi = _membership(h, word=str(word), column=hi)
            is_lo = _membership(low, word=str(word), column=lo)
            if is_hi and is_lo:
                raise DataError(f"dictionary: {word!r} is both high ({hi}) and low ({lo})")
            out.append(None if is_hi is None and is_lo is None else 1.0 if is_hi else -1.0 if is_lo else 0.0)
        return out
    return [None] * len(frame)


#: Suffixes of R data files, read with the ``rdata`` package.
R_DATA_SUFFIXES = (".rda", ".rdata", ".rds")


def read_r_data_frame(
    path: str | Path,
    *,
    name: str | None = None,
    prefer: str | Sequence[str] = ("All.steps_Dictionaries", "Dictionaries"),
    what: str = "dictionary",
) -> pd.DataFrame:
    """The data frame ``name`` of an R data file (.rda/.RData from ``save()``, .rds from ``saveRDS()``).

    Without ``name``, the first object of ``prefer`` the file has (by default SADCAT's
    ``All.steps_Dictionaries``, then ``Dictionaries``), else its only data frame. Read
    with ``rdata`` (pure Python; no R needed). A file without a data frame, or with several and
    no choice, is an error naming its objects.
    """
    try:
        import rdata
    except ImportError:  # pragma: no cover - a declared dependency
        raise DataError(f"reading the {what} {path} needs the package rdata: pip install rdata") from None
    path = Path(path)
    import warnings

    with warnings.catch_warnings(record=True) as caught:  # rdata warns before failing on a damaged file
        warnings.simplefilter("always")
        try:
            if path.suffix.lower() == ".rds":
                objects = {path.stem: rdata.read_rds(path)}
            else:
                objects = rdata.read_rda(path)
        except (
            ValueError,
            NotImplementedError,
            EOFError,
            OSError,
            KeyError,
            IndexError,
            TypeError,
            AssertionError,
            struct.error,
        ) as exc:  # what rdata's parser raises on a damaged file
            notes = "".join(f"; {w.message}" for w in caught)
            raise DataError(
                f"cannot read the {what} {path} as an R data file: {type(exc).__name__}: {exc}{notes}"
            ) from None
    for w in caught:
        warnings.warn(f"reading {path}: {w.message}", stacklevel=2)
    frames = {k: v for k, v in objects.items() if isinstance(v, pd.DataFrame)}
    described = ", ".join(f"{k} ({type(v).__name__})" for k, v in objects.items()) or "nothing"
    if name is not None:
        if name not in objects:
            from assoc.errors import did_you_mean

            raise DataError(
                f"the {what} {path} has no object {name!r} (it holds {described})" + did_you_mean(name, list(objects))
            )
        if name not in frames:
            raise DataError(f"the object {name!r} of {path} is a {type(objects[name]).__name__}, not a data frame")
        return frames[name]
    if not frames:
        raise DataError(f"the {what} {path} holds no data frame (it holds {described})")
    for preferred in [prefer] if isinstance(prefer, str) else prefer:
        if preferred in frames:
            return frames[preferred]
    if len(frames) > 1:
        raise DataError(
            f"the {what} {path} holds several data frames ({', '.join(frames)}); name one with the "
            f"'dictionary_object' option"
        )
    return next(iter(frames.values()))


def read_dictionary_frame(source: Any, word_column: str = "word", r_object: str | None = None) -> pd.DataFrame:
    """The table of a dictionary given as a DataFrame, a table file or an R data file (read as it is).

    An R data file holding several data frames gives SADCAT's (``All.steps_Dictionaries`` or
    ``Dictionaries``) unless ``r_object`` names another.
    """
    return _read_frame(source, word_column, r_object)


def _read_frame(source: Any, word_column: str, r_object: str | None = None) -> pd.DataFrame:
    from assoc.table.files import read_data_file

    if isinstance(source, pd.DataFrame):
        return source.copy()
    if not isinstance(source, (str, Path)):
        raise DataError(f"dictionary: expected a file path, a DataFrame or a mapping, got {type(source).__name__}")
    if Path(source).suffix.lower() in R_DATA_SUFFIXES:
        frame = read_r_data_frame(source, name=r_object)
        if frame.empty:
            raise DataError(f"dictionary: {source} has no rows")
        return frame
    # words such as 'NA' or 'null' are words, not missing values; directions are parsed by _direction
    frame = read_data_file(source, what="dictionary", text_columns=[word_column], all_text=True)
    if frame.empty:
        raise DataError(f"dictionary: {source} has no rows")
    return frame


@dataclass(frozen=True)
class TermCoding:
    """Representativeness and direction of one dimension for one term's responses."""

    representativeness: float
    direction: float
    n_responses: int  # responses coded (after removing empty and repeated ones)
    n_in_dictionary: int  # responses in the dimension's dictionary
    n_with_direction: int  # of those, responses with a direction (the direction's N)


def aggregate(representativeness: np.ndarray, direction: np.ndarray) -> TermCoding:
    """Mean representativeness over all responses; mean direction over those with one (module docstring)."""
    rep = np.asarray(representativeness, dtype=float)
    dirs = np.asarray(direction, dtype=float)
    n = int(rep.size)
    if n == 0:
        raise DataError("a term needs at least one response to be coded")
    has_direction = np.isfinite(dirs)
    k = int(has_direction.sum())
    return TermCoding(
        representativeness=float(rep.mean()),
        direction=float(dirs[has_direction].mean()) if k else math.nan,
        n_responses=n,
        n_in_dictionary=int(rep.sum()),
        n_with_direction=k,
    )
