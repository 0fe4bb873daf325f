"""``stereotype``: representativeness and direction of stereotype content by dictionary coding."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import column_list, groups, require_columns, table_source
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd

#: Columns that identify a term (its responses are coded together), in table order.
TERM_COLUMNS = ("scorer", "model", "design", "context", "target_group", "target")


def _dictionary_source(value: Any) -> Any:
    """``check``: a DataFrame, a mapping {dimension: {word: direction}}, a table file or an R data file."""
    from pathlib import Path

    from assoc.stats.dictionary import R_DATA_SUFFIXES

    if isinstance(value, (str, Path)) and Path(value).suffix.lower() in R_DATA_SUFFIXES:
        if not Path(value).is_file():
            raise ValueError(f"file not found: {value}")
        return str(value)
    return table_source(value, what="dictionary", mapping="a mapping {dimension: {word: direction}}")


def column_stem(dimension: str) -> str:
    """The prefix of a dimension's columns in wide output: lowercase, runs of other characters as '_'."""
    return re.sub(r"[^0-9a-z]+", "_", dimension.casefold()).strip("_") or "dimension"


def dictionary_dimensions(requested: list[str], known: list[str]) -> list[str]:
    """The dictionary's names of the ``requested`` dimensions, matched whatever their case.

    An unknown name is an error listing the dictionary's dimensions, with a did-you-mean hint.
    """
    from assoc.errors import DataError, did_you_mean

    by_key = {d.casefold(): d for d in known}
    chosen = []
    for name in requested:
        if name in known:
            chosen.append(name)
        elif name.casefold() in by_key:
            chosen.append(by_key[name.casefold()])
        else:
            raise DataError(
                f"stereotype: the dictionary has no dimension {name!r} "
                f"(it has {', '.join(map(repr, known))})" + did_you_mean(name, known)
            )
    return chosen


def _deduplicate_choice(value: Any) -> str:
    """``check`` of ``deduplicate``: none, response or normalized (true = normalized, false = none)."""
    if isinstance(value, bool):
        return "normalized" if value else "none"
    if isinstance(value, str) and value.lower() in ("none", "response", "normalized"):
        return value.lower()
    raise ValueError(f"must be one of 'none', 'response', 'normalized' (or true/false), got {value!r}")


class StereotypeAnalysis(Analysis):
    """Dictionary coding of listed or associated words into representativeness and direction.

    Each row of the input is one response: a word a model listed for a term (a chat model's
    listing) or associated with it (an embedding's top words), in the column ``word``
    (default ``attribute``; the term is the ``target``). Every response is coded on each
    dictionary dimension (e.g. Warmth, Competence): representativeness 1 if the word is in
    that dimension's dictionary, else 0; direction the dictionary's value in [-1, 1] if it is,
    else NA. Per term (the ``by`` columns) the analysis reports the mean representativeness
    (the share of responses about the dimension) and the mean direction over the responses
    that have one (Nicolas & Caliskan, 2024). Repeated responses of a term are counted once
    and empty ones left out, both counted. The ``value`` column is not used.

    Output (``level="term"``, ``shape="long"``): again an association table, two rows per term
    and dimension: ``attribute_group`` is the dimension, ``measure`` is ``representativeness``
    or ``direction``, ``value`` the estimate; ``n_responses``, ``n_in_dictionary`` and
    ``n_with_direction`` give the counts behind each. ``shape="wide"`` gives one row per term
    with ``<dimension>_representativeness`` and ``<dimension>_direction`` columns (ready to
    join as predictors, e.g. ``regress``/``lmm``'s ``criterion``); ``level="response"`` returns
    the input rows with their codes. Formulas: :mod:`assoc.stats.dictionary`.
    """

    name = "stereotype"
    requires = Requirement(
        needs="words a model listed or associated with each term (a chat_listing or sbert_topwords table, "
        "or any table of responses in the 'word' column)",
        scorers=("chat_listing", "sbert_topwords"),
        at_least={"word": 1},
        instead="score with chat_listing or sbert_topwords; a WEAT or FMAT table is analysed with weat or lpr",
        # listed words are its input; ratings (a chat_listing table with task=both) hold no word
        not_measures=("rating", "dry_run", "pairs_parsed", "chosen"),
        # a response repeated is data (SADCAT counts every one; `deduplicate` removes them): its shares and
        # mean directions are the same however often every response repeats
        keys=(),
    )
    #: any table with one row per response; a missing response (NaN) is data, coded as missing
    requires_association_table = False
    description = (
        "Stereotype representativeness (0-1) and direction (-1..1) per term and dimension, "
        "by dictionary coding of listed/associated words."
    )
    citation = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable "
        "components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493"
    )
    options = (
        Option(
            "dictionary",
            object,
            REQUIRED,
            "the dictionary: SADCAT's All.steps_Dictionaries.rda or Dictionaries.rda (or their CSV exports, "
            "or any .rda/.rds data frame), a .csv/.tsv/.parquet/.jsonl file (long: word, dimension, direction; "
            "or wide as SADCAT: word, <dimension>_dict, <dimension>_dict_hi/_lo, <dimension>_dir), a DataFrame, "
            "or a mapping {dimension: {word: direction}}",
            check=_dictionary_source,
        ),
        Option("dictionary_word", str, "word", "the word column of the dictionary table (not SADCAT's files)"),
        Option(
            "dictionary_object",
            str,
            None,
            "the data frame of an .rda file to read (default: the file's SADCAT data frame, or its only one)",
        ),
        Option("word", str, "attribute", "column of the table holding the listed/associated word"),
        Option(
            "matching",
            str,
            None,
            "sadcat: SADCAT's LLM-pipeline rules (tokens and phrases inside a response, final s cut on both "
            "sides, punctuation dropped, direction = high - low); exact: the whole normalised response must "
            "be a dictionary entry. Default: sadcat for SADCAT's files, exact for other dictionaries",
            choices=("sadcat", "exact"),
        ),
        Option(
            "dimensions",
            list,
            None,
            "dimensions to code (default: every dimension of the dictionary; the paper codes Warmth and Competence)",
            check=column_list,
        ),
        Option(
            "by",
            list,
            None,
            "columns identifying a term, whose responses are coded together (default: "
            "scorer, model, design, context, target_group, target, those present)",
            check=column_list,
        ),
        Option(
            "normalize",
            bool,
            True,
            "exact matching: lowercase and replace dashes by spaces in responses and dictionary (the paper's "
            "preprocessing); sadcat matching always does SADCAT's steps",
        ),
        Option(
            "singularize",
            bool,
            True,
            "turn plural responses into singulars before matching (the paper's preprocessing): sadcat "
            "matching with SADCAT's singularize2, exact matching with assoc.stats.singular; a response "
            "already in the dictionary is kept",
        ),
        Option(
            "word_list",
            object,
            None,
            "sadcat matching: the English word list singularize2 checks its results against (a text file, "
            "one word a line, or an .rda character vector such as SemNetDictionaries' general.dictionary); "
            "default: the english-words package's web2 and gcide lists",
        ),
        Option(
            "deduplicate",
            object,
            "none",
            "repeated responses of a term: none (all counted, as SADCAT's aggregate_responses), response "
            "(identical responses after lowercasing and trimming counted once, before singularising: the "
            "paper's removal of repeated ChatGPT responses) or normalized (identical after singularising "
            "counted once); true = normalized, false = none",
            check=_deduplicate_choice,
        ),
        Option(
            "level",
            str,
            "term",
            "term: estimates per term; response: each input row with its codes (as shape='responses')",
            choices=("term", "response"),
        ),
        Option(
            "shape",
            str,
            "long",
            "long (an association table, one row per estimate), wide (one row per term) or responses (one "
            "row per response with its normalised text, the tokens that matched each dimension and the codes)",
            choices=("long", "wide", "responses"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Code the words with the dictionary and compute direction and representativeness."""
        import warnings

        from assoc.errors import DataError

        p = self.params
        word = p["word"]
        by = p["by"] if p["by"] is not None else [c for c in TERM_COLUMNS if c in table.columns and c != word]
        require_columns(table, [word, *by], what="stereotype")
        reserved = {word, "measure", "value", "attribute_group", "attribute"} & set(by)
        if reserved:
            raise DataError(
                f"stereotype: column(s) {sorted(reserved)} cannot identify a term ('by'): the output "
                f"sets them (attribute_group = dimension, measure = representativeness/direction)"
            )
        if "measure" in table.columns and table["measure"].nunique() > 1:
            measures = sorted(table["measure"].astype(str).unique())
            keep = "listed" if "listed" in measures else measures[0]  # the words a chat model listed, if there
            raise DataError(
                f"stereotype: the table holds several measures ({', '.join(measures)}); the same words would be "
                f"coded once per measure: keep one measure first (--where measure={keep} on the command line; "
                f"assoc.table.select_rows(table, {{'measure': {keep!r}}}) in Python)"
            )
        coder = _load_coder(p)
        if coder.notes:
            warnings.warn(f"stereotype: dictionary {coder.source}: {'; '.join(coder.notes)}", stacklevel=2)
        dimensions = (
            dictionary_dimensions(p["dimensions"], coder.dimensions)
            if p["dimensions"] is not None
            else coder.dimensions
        )
        stems = [column_stem(d) for d in dimensions]
        if len(set(stems)) != len(stems):
            raise DataError(f"stereotype: dimensions {dimensions} give the same column names {stems}; rename them")

        data = table.copy()
        coded = coder.code(data[word].tolist(), dimensions)
        for column, values in coded.text.items():
            data[column] = values
        data["is_empty"] = coded.missing
        data["is_duplicate"] = False
        if p["deduplicate"] != "none":
            column = "text_lower" if p["deduplicate"] == "response" else "word_normalized"
            present = data[~data["is_empty"]]
            keys = present[column].astype(str)
            if p["deduplicate"] == "response":
                keys = keys.str.strip()
            repeated = present.assign(_key=keys).duplicated(subset=[*by, "_key"], keep="first")
            data.loc[repeated.index, "is_duplicate"] = repeated
        for dimension, stem in zip(dimensions, stems):
            data[f"{stem}_representativeness"] = coded.codes[dimension]
            data[f"{stem}_direction"] = coded.directions[dimension]
            data[f"{stem}_matched"] = coded.matched[dimension]
        data.attrs["stereotype_matching"] = coder.matching
        if p["level"] == "response" or p["shape"] == "responses":
            data["matching"] = coder.matching
            return data.reset_index(drop=True)
        return self._terms(data, dimensions, stems, by, allow_empty=coder.matching == "sadcat")

    def _terms(self, data, dimensions, stems, by, *, allow_empty: bool) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.dictionary import aggregate
        from assoc.table.schema import normalise

        p = self.params
        source_measure = ",".join(sorted(data["measure"].astype(str).unique())) if "measure" in data else ""
        long_rows: list[dict[str, Any]] = []
        wide_rows: list[dict[str, Any]] = []
        for key, part in groups(data, by):
            used = part[~part["is_empty"] & ~part["is_duplicate"]]
            counts = {
                "n_rows": len(part),
                "n_empty": int(part["is_empty"].sum()),
                "n_duplicates_removed": int(part["is_duplicate"].sum()),
            }
            if used.empty and not allow_empty:
                raise DataError(f"stereotype: term {key} has no non-empty response in column {p['word']!r}")
            wide = {**key, "n_responses": len(used), **counts}
            for dimension, stem in zip(dimensions, stems):
                if used.empty:  # as SADCAT's mean(na.rm = TRUE) of no value: NA
                    rep, direction, n_in, n_dir = np.nan, np.nan, 0, 0
                else:
                    res = aggregate(
                        used[f"{stem}_representativeness"].to_numpy(float), used[f"{stem}_direction"].to_numpy(float)
                    )
                    rep, direction, n_in, n_dir = (
                        res.representativeness,
                        res.direction,
                        res.n_in_dictionary,
                        res.n_with_direction,
                    )
                common = {
                    **key,
                    "attribute_group": dimension,
                    "attribute": "",
                    "dimension": dimension,
                    "n_responses": len(used),
                    "n_in_dictionary": n_in,
                    "n_with_direction": n_dir,
                    **counts,
                }
                long_rows.append({**common, "measure": "representativeness", "value": rep})
                long_rows.append({**common, "measure": "direction", "value": direction})
                wide.update(
                    {
                        f"{stem}_representativeness": rep,
                        f"{stem}_direction": direction,
                        f"{stem}_n_in_dictionary": n_in,
                        f"{stem}_n_with_direction": n_dir,
                    }
                )
            wide_rows.append(wide)
        matching = data.attrs.get("stereotype_matching", "")
        if p["shape"] == "wide":
            out = pd.DataFrame(wide_rows)
            out["word_column"] = p["word"]
            out["source_measure"] = source_measure
            out["matching"] = matching
            return out
        out = pd.DataFrame(long_rows)
        out["word_column"] = p["word"]
        out["source_measure"] = source_measure
        out["matching"] = matching
        extra = [c for c in by if c not in ("scorer", "model", "context", "target_group", "target")]
        return normalise(out, scorer="stereotype", extra_columns=[*extra, "dimension"])


class _Coded:
    """Per-response codes of one table: text columns, missing flags, codes, directions, matches."""

    def __init__(self) -> None:
        self.text: dict[str, list[Any]] = {}
        self.missing: list[bool] = []
        self.codes: dict[str, list[float]] = {}
        self.directions: dict[str, list[float]] = {}
        self.matched: dict[str, list[str]] = {}


class _Coder:
    """One of the two matchings, with the dictionary loaded (see ``StereotypeAnalysis``)."""

    def __init__(self, matching: str, source: str, dimensions: list[str], notes: list[str]) -> None:
        self.matching = matching
        self.source = source
        self.dimensions = dimensions
        self.notes = notes
        self.sadcat: Any = None
        self.exact: Any = None
        self.singularize = True
        self.normalize = True

    def code(self, responses: list[Any], dimensions: list[str]) -> _Coded:
        out = _Coded()
        for d in dimensions:
            out.codes[d], out.directions[d], out.matched[d] = [], [], []
        if self.matching == "sadcat":
            lower, singular, matched_text, tokens = [], [], [], []
            for response in responses:
                c = self.sadcat.code(response, dimensions)
                lower.append(c.lower)
                singular.append(c.singular)
                matched_text.append(c.matched_text)
                tokens.append(" ".join(c.tokens) if c.lower is not None else None)
                out.missing.append(c.lower is None)
                for d in dimensions:
                    out.codes[d].append(c.codes[d])
                    out.directions[d].append(c.directions[d])
                    values = c.matches.get(d, [])
                    out.matched[d].append("; ".join(" ".join(v) for v in values))
            out.text = {
                "text_lower": lower,
                "word_normalized": singular,
                "text_matched": matched_text,
                "tokens": tokens,
            }
            return out
        from assoc.stats.dictionary import normalize_word
        from assoc.stats.sadcat import is_missing

        dictionary = self.exact
        known = {w for d in dimensions for w in dictionary.entries[d]} if self.singularize else set()
        lower, normalized = [], []
        for response in responses:
            missing = is_missing(response) or not str(response).strip()
            out.missing.append(missing)
            if missing:
                lower.append(None)
                normalized.append("")
                for d in dimensions:
                    out.codes[d].append(float("nan"))
                    out.directions[d].append(float("nan"))
                    out.matched[d].append("")
                continue
            text = normalize_word(str(response), normalize=self.normalize)
            lower.append(str(response).strip().lower())
            if self.singularize and text and text not in known:
                from assoc.stats.singular import singularize

                text = singularize(text)
            normalized.append(text)
            for d in dimensions:
                rep, direction = dictionary.code(text, d)
                out.codes[d].append(rep)
                out.directions[d].append(direction)
                out.matched[d].append(text if rep else "")
        out.text = {"text_lower": lower, "word_normalized": normalized}
        return out


def _load_coder(p: dict[str, Any]) -> _Coder:
    """Read the dictionary once and set up the requested (or default) matching."""
    from collections.abc import Mapping

    from assoc.stats import sadcat
    from assoc.stats.dictionary import Dictionary, load_dictionary, read_dictionary_frame

    source = p["dictionary"]
    name = str(source) if not hasattr(source, "columns") and not isinstance(source, Mapping) else "(given)"
    frame = (
        None
        if isinstance(source, Mapping)
        else read_dictionary_frame(source, p["dictionary_word"], p["dictionary_object"])
    )
    kind = sadcat.sadcat_kind(frame) if frame is not None else None
    matching = p["matching"] or ("sadcat" if kind else "exact")
    notes: list[str] = []
    sadcat_dict = None
    if kind:
        sadcat_dict = sadcat.sadcat_dictionary(frame, source=name)
        notes.extend(sadcat_dict.notes)
        if kind == "dictionaries" and matching == "sadcat":
            notes.append(
                "this is Dictionaries (SADCAT-preprocessed forms: spaces, dashes and punctuation removed, "
                "lemmatised by TreeTagger, final s cut); multi-word responses ('well educated') and forms "
                "TreeTagger changed cannot match it: use All.steps_Dictionaries for SADCAT's LLM pipeline"
            )
    if matching == "sadcat":
        if sadcat_dict is None:
            loaded = load_dictionary(
                frame if frame is not None else source, word_column=p["dictionary_word"], normalize=True
            )
            sadcat_dict = sadcat.sadcat_dictionary_from_entries(loaded.entries)
        known = sadcat.read_word_list(p["word_list"]) if p["word_list"] is not None else None
        coder = _Coder("sadcat", name, list(sadcat_dict.dimensions), notes)
        coder.sadcat = sadcat.SadcatCoder(sadcat_dict, singularize=p["singularize"], known_words=known)
        return coder
    if p["word_list"] is not None:
        from assoc.errors import DataError

        raise DataError("stereotype: word_list is used by matching='sadcat' only")
    if sadcat_dict is not None:
        exact = Dictionary(_exact_entries(sadcat_dict, normalize=p["normalize"]), p["normalize"])
    else:
        exact = load_dictionary(
            frame if frame is not None else source,
            word_column=p["dictionary_word"],
            normalize=p["normalize"],
            r_object=p["dictionary_object"],
        )
        if exact.notes:
            notes.append(
                f"{len(exact.notes)} entr(y/ies) repeated with the same direction and counted once: "
                + "; ".join(exact.notes[:5])
            )
    coder = _Coder("exact", name, exact.dimensions, notes)
    coder.exact = exact
    coder.singularize = p["singularize"]
    coder.normalize = p["normalize"]
    return coder


def _exact_entries(dictionary: Any, *, normalize: bool) -> dict[str, dict[str, float]]:
    """Whole-word entries of a SADCAT file: direction = high - low membership, merged over repeats."""
    import math

    from assoc.stats.dictionary import normalize_word

    entries: dict[str, dict[str, float]] = {}
    for dimension in dictionary.dimensions:
        hi = {normalize_word(w, normalize=normalize) for w in dictionary.keys.get(f"{dimension}_hi", [])}
        lo = {normalize_word(w, normalize=normalize) for w in dictionary.keys.get(f"{dimension}_lo", [])}
        words = entries.setdefault(dimension, {})
        for raw in dictionary.keys[dimension]:
            w = normalize_word(raw, normalize=normalize)
            if not w:
                continue
            words[w] = float((w in hi) - (w in lo)) if dimension in dictionary.directional else math.nan
    return entries


def is_stereotype_long(table: pd.DataFrame) -> bool:
    """True for the long output of the ``stereotype`` analysis (estimates in ``measure``/``value`` rows)."""
    return {"measure", "attribute_group", "value"} <= set(table.columns) and bool(
        set(table["measure"].astype(str)) & {"representativeness", "direction"}
    )


def stereotype_wide(table: pd.DataFrame, *, what: str, keep: Sequence[str] = ()) -> tuple[pd.DataFrame, list[str]]:
    """One row per term with ``<stem>_representativeness`` / ``<stem>_direction`` columns, and the stems.

    Accepts the ``stereotype`` analysis' output in either shape: wide (returned as it is) or
    long (``measure`` representativeness/direction, ``attribute_group`` the dimension), which is
    pivoted on the :data:`TERM_COLUMNS` it has plus the ``keep`` columns it has (a caller's
    factor or grouping columns, e.g. a category column added to the long table; each must
    have one value per term). ``what`` names the caller in errors.
    """
    import pandas as pd

    from assoc.errors import TableError

    stems = [
        c[: -len("_representativeness")]
        for c in table.columns
        if str(c).endswith("_representativeness") and f"{c[: -len('_representativeness')]}_direction" in table
    ]
    if stems:
        return table, stems
    if not is_stereotype_long(table):
        raise TableError(
            f"{what}: expected the output of the 'stereotype' analysis (long: measure "
            f"representativeness/direction per attribute_group, or wide: <dimension>_representativeness "
            f"and <dimension>_direction columns); got columns {', '.join(map(str, table.columns))}"
        )
    long = table[table["measure"].isin(["representativeness", "direction"])]
    keys = [c for c in TERM_COLUMNS if c in long.columns]
    pivot_by = keys + [
        c
        for c in dict.fromkeys(keep)
        if c in long.columns and c not in keys and c not in ("measure", "value", "attribute_group", "attribute")
    ]
    for extra in pivot_by[len(keys) :]:
        if (long.groupby(keys, dropna=False)[extra].nunique(dropna=False) > 1).any():
            raise TableError(f"{what}: column {extra!r} has several values within one term; it cannot be kept")
    if long.duplicated([*keys, "attribute_group", "measure"]).any():
        raise TableError(
            f"{what}: several rows per term, dimension and measure; the term columns "
            f"{keys} do not identify a term (was 'stereotype' run with other 'by' columns?)"
        )
    dims = list(dict.fromkeys(long["attribute_group"].astype(str)))
    wide = long.assign(_column=[f"{column_stem(d)}_{m}" for d, m in zip(long["attribute_group"], long["measure"])])
    wide = wide.pivot(index=pivot_by, columns="_column", values="value").reset_index()
    wide.columns.name = None
    out = pd.DataFrame(wide)
    return out, [column_stem(d) for d in dims]


def pick_dimensions(requested: list[str] | None, stems: list[str], *, what: str) -> list[str]:
    """The requested dimensions as column stems (any case, 'Warmth' -> 'warmth'), or all ``stems``.

    An unknown name is an error naming the known ones, with a did-you-mean suggestion.
    """
    from assoc.errors import DataError, did_you_mean

    if requested is None:
        return list(stems)
    chosen = []
    for name in requested:
        stem = column_stem(name)
        if stem not in stems:
            raise DataError(
                f"{what}: no dimension {name!r} in the table (it has {', '.join(map(repr, stems))})"
                + did_you_mean(stem, stems)
            )
        chosen.append(stem)
    return chosen
