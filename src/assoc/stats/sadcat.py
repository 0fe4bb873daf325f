"""Dictionary coding as SADCAT codes LLM responses (Nicolas, Bai & Fiske, 2021; SADCAT's ``R/`` code).

SADCAT (https://github.com/gandalfnicolas/SADCAT) is the R package whose stereotype content
dictionaries Nicolas & Caliskan (2024) use. Its pipeline for LLM responses
(``process_responses``, from February 2026) codes a response in these steps, each written
here from the rules (SADCAT has no licence: none of its code or data is copied):

1. ``preprocess_text``: lower case; an empty response is missing (NA), a whitespace-only one
   is kept; an optional spell-check (hunspell/WordNet, **not done here**); ``singularize2``
   (:func:`sadcat_singularize`).
2. ``match_dictionaries`` / ``delete_ending_Ss``: ``-`` becomes a space; in every piece
   between single spaces one final ``s`` is cut (:func:`cut_final_s`); the text is split into
   tokens as quanteda's ``tokens(remove_punct = TRUE, remove_symbols = TRUE)`` does
   (:func:`tokenize`; no stop words removed, no lemmatisation). The dictionary values (the
   ``tv`` column of ``All.steps_Dictionaries``) go through the same steps
   (``prepare_sadcat_dictionaries``).
3. ``tokens_lookup(nested_scope = "dictionary", exclusive = TRUE)``: every value is a token
   sequence; sequences are looked up longest first across the whole dictionary (all keys),
   and a match whose tokens all lie inside earlier matches is not counted (:func:`lookup`).
4. Per response and dimension ``D``: ``code_D = 1`` if a value of ``D``'s dictionary matched,
   else 0 (NA for a missing response); ``direction_D = hi_D - lo_D`` where ``hi_D`` (``lo_D``)
   is 1 if a value of the high (low) pole matched (columns ``D_dict_hi`` / ``D_dict_lo``),
   kept only where ``code_D = 1``. The ``_dir`` columns are not used; the negation flip SADCAT
   computes (``_dirx2``) never reaches its output.
5. ``aggregate_responses``: per term, representativeness = mean of ``code_D`` and direction =
   mean of ``direction_D``, missing values dropped; repeated responses are all counted.

References
----------
    Nicolas, G., Bai, X., & Fiske, S. T. (2021). Comprehensive stereotype content dictionaries
        using a semi-automated method. European Journal of Social Psychology, 51(1), 178-196.
        doi:10.1002/ejsp.2724
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
    Unicode Standard Annex #29, Unicode Text Segmentation, sec. 4.1 (word boundaries), as
        tailored by ICU's word break rules and quanteda's ``keep_hyphens`` rule.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from assoc.errors import DataError

# --- SADCAT's dimensions (prepare_sadcat_dictionaries.R and zzz.R) ---------------------------

#: Directional dimensions: name -> (membership column, high-pole column, low-pole column).
#: Health, Beauty and Deviance take their membership from their own lower-case columns.
DIRECTIONAL: dict[str, tuple[str, str, str]] = {
    "Sociability": ("Sociability_dict", "Sociability_dict_hi", "Sociability_dict_lo"),
    "Morality": ("Morality_dict", "Morality_dict_hi", "Morality_dict_lo"),
    "Ability": ("Ability_dict", "Ability_dict_hi", "Ability_dict_lo"),
    "Assertiveness": ("Assertiveness_dict", "Assertiveness_dict_hi", "Assertiveness_dict_lo"),
    "Status": ("Status_dict", "Status_dict_hi", "Status_dict_lo"),
    "Warmth": ("Warmth_dict", "Warmth_dict_hi", "Warmth_dict_lo"),
    "Competence": ("Competence_dict", "Competence_dict_hi", "Competence_dict_lo"),
    "Beliefs": ("Beliefs_dict", "Beliefs_dict_hi", "Beliefs_dict_lo"),
    "Health": ("health_dict", "Health_dict_hi", "Health_dict_lo"),
    "Beauty": ("beauty_dict", "Beauty_dict_hi", "Beauty_dict_lo"),
    "Deviance": ("deviance_dict", "Deviance_dict_hi", "Deviance_dict_lo"),
}
#: Dimensions without direction: name -> membership column(s) (a value is a member if any is 1).
NON_DIRECTIONAL: dict[str, tuple[str, ...]] = {
    "Occupation": ("occupation_dict",),
    "Emotion": ("emotions_dict",),
    "Family": ("relative_dict",),
    "Socialgroups": ("socialgroups_dict",),
    "Geography": ("Geography_dict",),
    "Appearance": ("Appearance_dict",),
    "Other": ("Other_dict",),
    "OtherwFam": ("Other_dict", "relative_dict"),
}
#: Membership columns both SADCAT files have; a table with all of them is read as a SADCAT file.
SADCAT_SIGNATURE = tuple(c for c, _, _ in DIRECTIONAL.values())

# --- reading SADCAT's files ---------------------------------------------------------------


def sadcat_kind(frame: pd.DataFrame) -> str | None:
    """Which SADCAT file a table is, from its columns.

    ``"all_steps"`` (``All.steps_Dictionaries``: unprocessed values in ``tv``, the file SADCAT's
    LLM pipeline matches), ``"dictionaries"`` (``Dictionaries``: SADCAT-preprocessed forms in
    ``word``, the file of its older ``Code_words`` path), or ``None`` for any other table.
    """
    columns = {str(c) for c in frame.columns}
    if not set(SADCAT_SIGNATURE) <= columns:
        return None
    if "tv" in columns:
        return "all_steps"
    if "word" in columns:
        return "dictionaries"
    return None


def _numeric_column(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    """A 0/1 (or direction) column as floats with NaN for NA, whatever its dtype (Int32, text, ...)."""
    values = frame[column]
    if pd.api.types.is_bool_dtype(values):
        return values.astype(float).to_numpy()
    if not pd.api.types.is_numeric_dtype(values):
        text = values.astype("string").str.strip()
        missing = values.isna() | text.str.upper().isin(["", "NA", "NAN"])
        numbers = pd.to_numeric(text.where(~missing), errors="coerce")
        bad = numbers.isna() & ~missing
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"dictionary {source}: column {column!r} must hold numbers, got {values.iloc[row]!r} in row {row + 1}"
            )
        values = numbers
    return pd.to_numeric(values, errors="coerce").astype("Float64").to_numpy(dtype=float, na_value=np.nan)


@dataclass(frozen=True)
class SadcatDictionary:
    """Dictionary keys (name -> raw values) and the dimensions they code, ready for SADCAT matching.

    ``keys`` holds, per dimension ``D``, the key ``D`` (membership) and, for a directional
    dimension, ``D_hi`` and ``D_lo``; all keys take part in the nested-match suppression.
    ``protected`` is the set of raw values ``singularize2`` leaves unchanged.
    """

    keys: dict[str, list[str]]
    dimensions: list[str]
    directional: frozenset[str]
    protected: frozenset[str]
    kind: str | None = None
    notes: tuple[str, ...] = field(default=())


def sadcat_dictionary(frame: pd.DataFrame, *, source: str = "table") -> SadcatDictionary:
    """Read one of SADCAT's files (either kind, :func:`sadcat_kind`) as it is.

    Nullable-integer columns with NA (NA = not a member), ``_dir`` values outside [-1, 1]
    (not used: direction is high minus low), values that repeat after lower-casing (all kept,
    each matched as SADCAT does) and columns SADCAT added later (ignored) are data, not
    errors; what was unusual is returned in ``notes`` for one warning line. A directional
    dimension without its ``_dict_hi``/``_dict_lo`` columns is coded without direction.
    """
    kind = sadcat_kind(frame)
    if kind is None:
        raise DataError(
            f"dictionary {source}: not a SADCAT file: it needs the columns {', '.join(SADCAT_SIGNATURE)} "
            "and tv (All.steps_Dictionaries) or word (Dictionaries)"
        )
    value_column = "tv" if kind == "all_steps" else "word"
    raw = frame[value_column]
    values = [None if pd.isna(v) else str(v) for v in raw]
    notes: list[str] = []
    n_missing = sum(v is None or not v.strip() for v in values)
    if n_missing:
        notes.append(f"{n_missing} row(s) without a {value_column!r} value (not matchable, kept as SADCAT does)")
    cache: dict[str, np.ndarray] = {}

    def column(name: str) -> np.ndarray | None:
        if name not in frame.columns:
            return None
        if name not in cache:
            cache[name] = _numeric_column(frame, name, source)
        return cache[name]

    na_cells = 0
    odd_cells: list[str] = []
    used: set[str] = set()

    def members(name: str) -> list[str]:
        nonlocal na_cells
        col = column(name)
        if col is None:
            return []
        used.add(name)
        na_cells += int(np.isnan(col).sum())
        odd = ~np.isnan(col) & (col != 0) & (col != 1)
        for i in np.flatnonzero(odd)[:3]:
            odd_cells.append(f"{values[i]!r}: {name} = {col[i]:g}")
        # SADCAT: `column == 1`, NA -> FALSE; a value that is not 0 or 1 is not a member
        return [v for v, m in zip(values, col == 1) if m and v is not None]

    keys: dict[str, list[str]] = {}
    dimensions: list[str] = []
    directional: set[str] = set()
    no_poles = []
    for dimension, (base, hi, lo) in DIRECTIONAL.items():
        keys[dimension] = members(base)
        dimensions.append(dimension)
        if hi in frame.columns and lo in frame.columns:
            keys[f"{dimension}_hi"] = members(hi)
            keys[f"{dimension}_lo"] = members(lo)
            directional.add(dimension)
        else:
            no_poles.append(dimension)
    for dimension, columns in NON_DIRECTIONAL.items():
        present = [c for c in columns if c in frame.columns]
        if not present:
            notes.append(f"no column {' or '.join(columns)}: {dimension} not coded")
            continue
        member_sets = [set(members(c)) for c in present]
        keys[dimension] = [v for v in values if v is not None and any(v in s for s in member_sets)]
        dimensions.append(dimension)
    if no_poles:
        notes.append(
            f"no _dict_hi/_dict_lo columns for {', '.join(no_poles)}: coded without direction "
            "(SADCAT's pipeline would give direction 0)"
        )
    if na_cells:
        notes.append(f"{na_cells} NA cell(s) in membership columns read as 0 (not a member), as SADCAT does")
    if odd_cells:
        notes.append(f"membership values other than 0/1 read as not a member ({'; '.join(odd_cells)})")
    dirs = [c for c in frame.columns if str(c).endswith("_dir")]
    out_of_range = []
    for c in dirs:
        col = column(str(c))
        if col is None:
            continue
        for i in np.flatnonzero(~np.isnan(col) & ((col < -1) | (col > 1)))[:3]:
            out_of_range.append(f"{values[i]!r}: {c} = {col[i]:g}")
    if out_of_range:
        notes.append(
            f"_dir values outside [-1, 1] ({'; '.join(out_of_range)}): not used, direction is "
            "high minus low membership as in SADCAT's pipeline"
        )
    lowered: dict[str, list[str]] = {}
    for v in values:
        if v is not None:
            lowered.setdefault(v.lower().replace("-", " "), []).append(v)
    repeats = [vs for vs in lowered.values() if len(vs) > 1]
    if repeats:
        examples = ", ".join(" / ".join(map(repr, vs[:2])) for vs in repeats[:3])
        notes.append(
            f"{len(repeats)} value(s) repeat after lower-casing and dashes to spaces ({examples}): all rows "
            "kept, each matched as SADCAT does"
        )
    return SadcatDictionary(
        keys,
        dimensions,
        frozenset(directional),
        frozenset(v for v in values if v is not None),
        kind,
        tuple(notes),
    )


def sadcat_dictionary_from_entries(entries: Mapping[str, Mapping[str, float]]) -> SadcatDictionary:
    """SADCAT keys for a user's dictionary ``{dimension: {word: direction}}``.

    A word with direction > 0 is on the high pole, < 0 on the low pole; a dimension with no
    direction at all is coded without direction.
    """
    keys: dict[str, list[str]] = {}
    directional = set()
    protected: set[str] = set()
    for dimension, words in entries.items():
        keys[dimension] = list(words)
        protected.update(words)
        if any(not math.isnan(d) for d in words.values()):
            directional.add(dimension)
            keys[f"{dimension}_hi"] = [w for w, d in words.items() if d > 0]
            keys[f"{dimension}_lo"] = [w for w, d in words.items() if d < 0]
    return SadcatDictionary(keys, list(entries), frozenset(directional), frozenset(protected), None, ())


# --- text steps -------------------------------------------------------------------------


def r_split_space(text: str) -> list[str]:
    """``strsplit(text, " ")[[1]]`` in R: split at every single space; one trailing empty piece is dropped."""
    parts = text.split(" ")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def cut_final_s(text: str) -> str:
    """SADCAT's ``delete_ending_Ss`` on every space-separated piece: one final ``s``/``S`` is cut."""
    return " ".join(p[:-1] if p.endswith(("s", "S")) else p for p in r_split_space(text))


#: ``singularize2``'s irregular plurals (the ones ending in "es" are listed in SADCAT too, but a
#: response ending in "es" is returned unchanged before this table is consulted).
IRREGULAR_PLURALS = {
    "children": "child",
    "geese": "goose",
    "men": "man",
    "women": "woman",
    "teeth": "tooth",
    "feet": "foot",
    "mice": "mouse",
    "people": "person",
    "lice": "louse",
    "valves": "valve",
    "trees": "tree",
    "scribbles": "scribble",
    "peduncles": "peduncle",
    "mallees": "mallee",
    "panicles": "panicle",
    "ridges": "ridge",
    "petioles": "petiole",
    "angles": "angle",
    "bristles": "bristle",
    "edges": "edge",
    "fissures": "fissure",
    "sutures": "suture",
    "occurrences": "occurrence",
    "bees": "bee",
}
_ES_END = re.compile(r"es$")


def sadcat_singularize(text: str, protected: Container[str], known_words: Container[str]) -> str:
    """SADCAT's ``singularize2`` on one lower-cased response.

    Unchanged: a response in the dictionary (``protected``) or ending in ``es``. Otherwise only
    the last space-separated word changes: an irregular plural from the table, else (never
    reached for words in "es") ves -> f/fe, ies -> y/ie, zes/ses -> cut, then a final ``s`` is
    cut, ``i`` becomes ``us``, ``a`` becomes ``on``; the result is kept only if it is in
    ``known_words`` (SADCAT uses ``SemNetDictionaries::general.dictionary``).
    """
    if text in protected or _ES_END.search(text):
        return text
    pieces = r_split_space(text)
    multiple = len(pieces) > 1
    word = pieces[-1] if multiple else text
    original = word
    changed = word in IRREGULAR_PLURALS
    if changed:
        word = IRREGULAR_PLURALS[word]
    else:
        last3 = word[-3:]
        if last3 == "ves":
            word = word[:-3] + "f"
            if word not in known_words:
                word += "e"
            changed = True
        elif last3 == "ies":
            word = word[:-3] + "y"
            if word not in known_words:
                word = word[:-1] + "ie"
            changed = True
        elif last3 in ("zes", "ses"):
            word, changed = word[:-3], True
            if word not in known_words:
                word, changed = original, False
    if not changed and word[-2:] == "es":
        word = word[:-2]
        if word not in known_words:
            word += "is"
        changed = True
    if not changed and word[-1:] in ("s", "i", "a"):
        word = {"s": word[:-1], "i": word[:-1] + "us", "a": word[:-1] + "on"}[word[-1]]
    if word not in known_words:
        return " ".join(pieces) if multiple else original
    if multiple:
        pieces[-1] = word
        return " ".join(pieces)
    return word


@functools.lru_cache(maxsize=1)
def default_known_words() -> frozenset[str]:
    """The word list ``singularize2``'s results are checked against (by default).

    SADCAT checks ``SemNetDictionaries::general.dictionary`` (370,103 words of dwyl's
    english-words list). It is not on PyPI; this uses the ``english-words`` package's
    ``web2`` and ``gcide`` lists (lower case, letters only; 262,866 words, 245,827 of them in
    SADCAT's list). Pass SADCAT's own list as ``word_list`` for its exact behaviour.
    """
    try:
        from english_words import get_english_words_set
    except ImportError:  # pragma: no cover - a declared dependency
        raise DataError(
            "SADCAT singularisation needs the package english-words: pip install english-words "
            "(or pass word_list, or singularize=False)"
        ) from None
    return frozenset(get_english_words_set(["web2", "gcide"], lower=True, alpha=True))


def read_word_list(source: Any) -> frozenset[str]:
    """A word list: an iterable of words, a text file (one word a line) or an R data file's character vector."""
    from pathlib import Path

    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"word list {path}: file not found")
        if path.suffix.lower() in (".rda", ".rdata", ".rds"):
            import rdata

            objects = rdata.read_rds(path) if path.suffix.lower() == ".rds" else rdata.read_rda(path)
            if not isinstance(objects, dict):
                objects = {path.stem: objects}
            vectors = [v for v in objects.values() if not isinstance(v, pd.DataFrame)]
            if len(vectors) != 1:
                raise DataError(f"word list {path}: expected one character vector, it holds {', '.join(objects)}")
            words = [str(w) for w in np.asarray(vectors[0]).ravel() if not pd.isna(w)]
        else:
            words = path.read_text(encoding="utf-8").split("\n")
        out = frozenset(w.strip() for w in words if w.strip())
        if not out:
            raise DataError(f"word list {path}: it has no words")
        return out
    return frozenset(str(w) for w in source)


# --- quanteda-like tokens ------------------------------------------------------------------

_MID_LETTER = set("\u00b7\u0387\u055f\u05f4\u2027\ufe13")  # Word_Break=MidLetter less ICU's colons
_MID_NUM_LET = set(".\u2018\u2019\u2024\ufe52\uff07\uff0e")
_MID_NUM = set(",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b")
_NEWLINE = set("\n\r\x0b\x0c\x85\u2028\u2029")
# quanteda's protected patterns (tokenize_word4): e-mail, URL, @username, #hashtag
_PROTECTED = re.compile(
    r"[-+a-zA-Z0-9_.]+@[-a-zA-Z0-9]+(?:\.[-a-zA-Z0-9]+)*\.[a-z]+"
    r"|(?:[-a-zA-Z0-9+.]{2,20}://|www\.)[-+a-zA-Z0-9@#:.%~=_&/]+(?:\.[-a-zA-Z0-9]+)+(?:[/?#][-+a-zA-Z0-9@#:.%~=_&]+)*[/?#]?"
    r"|@[a-zA-Z0-9_]+"
    r"|#[^\W]+#?"
)


def _char_class(ch: str) -> str:
    if ch in _NEWLINE:
        return "nl"
    if ch == "'":
        return "sq"
    if ch in _MID_NUM_LET:
        return "mnl"
    if ch in _MID_LETTER:
        return "ml"
    if ch in _MID_NUM:
        return "mn"
    if ch == "@":
        return "letter"  # ICU's word rules add @ to ALetter
    cat = unicodedata.category(ch)
    if cat in ("Mn", "Me", "Mc") or ch == "\u200d" or (cat == "Cf" and ch not in "\u200b"):
        return "extend"
    if cat == "Nd":
        return "number"
    if cat.startswith("L"):
        return "letter"
    if cat == "Pc":
        return "enl"
    if cat == "Pd":
        return "hyphen"
    if cat == "Zs":
        return "space"
    return "other"


_WORD = {"letter", "number", "enl"}


def _segments(text: str) -> list[str]:
    """Word-boundary segments (UAX #29 as ICU and quanteda tailor it), separators included."""
    classes = [_char_class(c) for c in text]
    n = len(text)
    out: list[str] = []
    i = 0

    def skip_extend(j: int) -> int:
        while j < n and classes[j] == "extend":
            j += 1
        return j

    while i < n:
        start = i
        c = classes[i]
        if c in _WORD:
            last = c
            i = skip_extend(i + 1)
            while i < n:
                nxt = classes[i]
                if nxt in _WORD and (
                    last != "enl" or nxt in _WORD
                ):  # letters, digits and connectors join (WB5, 8-10, 13a/b)
                    last = nxt
                    i = skip_extend(i + 1)
                    continue
                j = skip_extend(i + 1)
                after = classes[j] if j < n else None
                if (
                    (last == "letter" and nxt in ("ml", "mnl", "sq") and after == "letter")  # WB6/7
                    or (last == "number" and nxt in ("mn", "mnl", "sq") and after == "number")  # WB11/12
                    or (last in ("letter", "number") and nxt == "hyphen" and after in ("letter", "number"))
                ):  # quanteda's keep_hyphens
                    last = after
                    i = skip_extend(j + 1)
                    continue
                break
        elif c == "space":
            while i < n and classes[i] == "space":
                i += 1
        elif text[i] == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 2
        elif c in ("nl",):
            i += 1
        else:
            i = skip_extend(i + 1)
        out.append(text[start:i])
    return out


def _is_separator(token: str) -> bool:
    return all(unicodedata.category(ch)[0] in "ZCM" for ch in token)


def tokenize(text: str) -> list[str]:
    """Tokens as ``quanteda::tokens(text, remove_punct = TRUE, remove_symbols = TRUE)`` makes them.

    Word boundaries of UAX #29 as ICU tailors them (letters, digits and ``_`` join; ``'``,
    ``.`` and ``·`` join letters; ``,``, ``.`` and ``;`` join digits), quanteda's rule that a
    dash between letters or digits joins them, and quanteda's protected e-mails, URLs,
    @usernames and #hashtags. Separators are dropped, and so are tokens that are one
    punctuation or one symbol character. Scripts written without spaces (Chinese, Thai, ...)
    are not segmented by dictionary as ICU does.
    """
    text = unicodedata.normalize("NFC", text)
    tokens: list[str] = []
    position = 0
    for match in _PROTECTED.finditer(text):
        tokens.extend(_segments(text[position : match.start()]))
        tokens.append(match.group(0))
        position = match.end()
    tokens.extend(_segments(text[position:]))
    out = []
    for token in tokens:
        if not token or _is_separator(token):
            continue
        if len(token) == 1 and unicodedata.category(token)[0] in "PS":
            continue
        out.append(token)
    return out


def prepare_text(text: str) -> str:
    """SADCAT's matching form of a (singularised) response or a dictionary value.

    Lower case, ``-`` to a space, one final ``s`` cut from every space-separated piece.
    """
    return cut_final_s(text.lower().replace("-", " "))


# --- matching -------------------------------------------------------------------------------


class SadcatMatcher:
    """``tokens_lookup(nested_scope = "dictionary", exclusive = TRUE)`` over a SADCAT dictionary."""

    def __init__(self, dictionary: SadcatDictionary) -> None:
        self.dictionary = dictionary
        index: dict[tuple[str, ...], list[str]] = {}
        prepared: dict[str, tuple[str, ...]] = {}  # a value is in several keys: prepare it once
        for key, values in dictionary.keys.items():
            seen: set[tuple[str, ...]] = set()
            for value in values:
                tokens = prepared.get(value)
                if tokens is None:
                    tokens = prepared[value] = tuple(t.lower() for t in tokenize(prepare_text(value)))
                if not tokens:
                    continue  # a value with no token left (SADCAT drops "")
                patterns = [tokens]
                if len(tokens) > 1:  # quanteda also matches a multi-word value joined by "_"
                    patterns.append(("_".join(tokens),))
                for pattern in patterns:
                    if pattern not in seen:
                        seen.add(pattern)
                        index.setdefault(pattern, []).append(key)
        self.index = index
        self.spans = sorted({len(p) for p in index}, reverse=True)

    def lookup(self, tokens: Sequence[str]) -> dict[str, list[tuple[str, ...]]]:
        """The keys that match ``tokens`` and, per key, the token sequences counted for it.

        Longest sequences first; within one length, left to right. A sequence whose tokens
        were all matched before is skipped; a key is not counted twice on overlapping tokens.
        """
        tokens = [unicodedata.normalize("NFC", t).lower() for t in tokens]
        n = len(tokens)
        covered = [False] * n
        per_key: dict[str, list[bool]] = {}
        matches: dict[str, list[tuple[str, ...]]] = {}
        for span in self.spans:
            if span > n:
                continue
            for i in range(n - span + 1):
                keys = self.index.get(tuple(tokens[i : i + span]))
                if not keys or all(covered[i : i + span]):
                    continue
                matched = False
                for key in keys:
                    flags = per_key.setdefault(key, [False] * n)
                    if any(flags[i : i + span]):
                        continue
                    flags[i : i + span] = [True] * span
                    matches.setdefault(key, []).append(tuple(tokens[i : i + span]))
                    matched = True
                if matched:
                    covered[i : i + span] = [True] * span
        return matches


@dataclass(frozen=True)
class ResponseCoding:
    """One response as SADCAT codes it (NaN codes for a missing response)."""

    lower: str | None  # tv: lower case, "" -> NA
    singular: str | None  # tv3: after singularize2
    matched_text: str | None  # tv4: dashes to spaces, final s cut
    tokens: tuple[str, ...]
    matches: dict[str, list[tuple[str, ...]]]
    codes: dict[str, float]  # dimension -> 0/1 (NaN if missing)
    directions: dict[str, float]  # dimension -> hi - lo where coded, else NaN


def is_missing(value: Any) -> bool:
    """NA for SADCAT: None, NaN, pandas NA, or the empty string."""
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value == ""


class SadcatCoder:
    """Codes responses by SADCAT's LLM-pipeline rules (module docstring), with memoisation."""

    def __init__(
        self,
        dictionary: SadcatDictionary,
        *,
        singularize: bool = True,
        known_words: Container[str] | None = None,
    ) -> None:
        self.dictionary = dictionary
        self.matcher = SadcatMatcher(dictionary)
        self.singularize = singularize
        self.known_words = known_words if known_words is not None or not singularize else default_known_words()
        self._cache: dict[str, ResponseCoding] = {}

    def code(self, response: Any, dimensions: Iterable[str]) -> ResponseCoding:
        """Code one raw response on ``dimensions``."""
        dims = list(dimensions)
        if is_missing(response):
            nan = dict.fromkeys(dims, math.nan)
            return ResponseCoding(None, None, None, (), {}, nan, dict(nan))
        text = str(response)
        hit = self._cache.get(text)
        if hit is not None and set(dims) <= set(hit.codes):
            return hit
        lower = text.lower()
        if lower == "":
            nan = dict.fromkeys(dims, math.nan)
            return ResponseCoding(None, None, None, (), {}, nan, dict(nan))
        singular = (
            sadcat_singularize(lower, self.dictionary.protected, self.known_words or frozenset())
            if self.singularize
            else lower
        )
        matched_text = prepare_text(singular)
        tokens = tuple(tokenize(matched_text))
        matches = self.matcher.lookup(tokens)
        codes: dict[str, float] = {}
        directions: dict[str, float] = {}
        for d in dims:
            coded = 1.0 if d in matches else 0.0
            codes[d] = coded
            if d in self.dictionary.directional and coded:
                directions[d] = float((f"{d}_hi" in matches) - (f"{d}_lo" in matches))
            else:
                directions[d] = math.nan
        result = ResponseCoding(lower, singular, matched_text, tokens, matches, codes, directions)
        self._cache[text] = result
        return result
