"""``stereotype``: representativeness and direction of stereotype content by dictionary coding."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from assoc.analysis._common import column_list, groups, require_columns, table_source
from assoc.analysis.base import Analysis
from assoc.scoring.options import REQUIRED, Option

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
            "the dictionary: SADCAT's Dictionaries.rda (or any .rda/.rds data frame) or a .csv/.tsv/.parquet/"
            ".jsonl file (long: word, dimension, direction; or wide as SADCAT: word, <dimension>_dict, "
            "<dimension>_dict_hi/_lo, <dimension>_dir), a DataFrame, or a mapping {dimension: {word: direction}}",
            check=_dictionary_source,
        ),
        Option("dictionary_word", str, "word", "the word column of the dictionary table"),
        Option(
            "dictionary_object",
            str,
            None,
            "the data frame of an .rda file to read (default: Dictionaries, or the file's only data frame)",
        ),
        Option("word", str, "attribute", "column of the table holding the listed/associated word"),
        Option(
            "dimensions",
            list,
            None,
            "dimensions to code (default: every dimension of the dictionary)",
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
            "lowercase and replace dashes by spaces in responses and dictionary (the paper's preprocessing)",
        ),
        Option(
            "singularize",
            bool,
            True,
            "turn plural responses into singulars before matching (the paper's "
            "preprocessing; a response already in the dictionary is kept; see assoc.stats.singular)",
        ),
        Option("deduplicate", bool, True, "count a term's repeated responses once (the paper removes them)"),
        Option(
            "level",
            str,
            "term",
            "term: estimates per term; response: each input row with its codes",
            choices=("term", "response"),
        ),
        Option(
            "shape",
            str,
            "long",
            "term level: long (an association table, one row per estimate) or wide (one row per term)",
            choices=("long", "wide"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Code the words with the dictionary and compute direction and representativeness."""
        from assoc.errors import DataError
        from assoc.stats.dictionary import load_dictionary, normalize_word

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
            raise DataError(
                f"stereotype: the table holds several measures "
                f"({', '.join(sorted(table['measure'].astype(str).unique()))}); the same words would be "
                f"coded once per measure: filter the table to one measure first"
            )
        dictionary = load_dictionary(
            p["dictionary"], word_column=p["dictionary_word"], normalize=p["normalize"], r_object=p["dictionary_object"]
        )
        if dictionary.notes:
            import warnings

            warnings.warn(
                f"stereotype: {len(dictionary.notes)} dictionary entr(y/ies) repeated with the same direction "
                f"and counted once: {'; '.join(dictionary.notes[:5])}",
                stacklevel=2,
            )
        dimensions = (
            dictionary_dimensions(p["dimensions"], dictionary.dimensions)
            if p["dimensions"] is not None
            else dictionary.dimensions
        )
        stems = [column_stem(d) for d in dimensions]
        if len(set(stems)) != len(stems):
            raise DataError(f"stereotype: dimensions {dimensions} give the same column names {stems}; rename them")

        data = table.copy()
        words = data[word].astype(str)
        empty = data[word].isna() | (words.str.strip() == "")
        data["word_normalized"] = [
            normalize_word(w, normalize=p["normalize"]) if not e else "" for w, e in zip(words, empty)
        ]
        if p["singularize"]:
            from assoc.stats.singular import singularize

            known = {w for dimension in dimensions for w in dictionary.entries[dimension]}
            # as SADCAT's singulariser: a response already in the dictionary is kept ("glasses", "news")
            data["word_normalized"] = [w if not w or w in known else singularize(w) for w in data["word_normalized"]]
        empty |= data["word_normalized"] == ""
        data["is_empty"] = empty
        repeated = data[~empty].duplicated(subset=[*by, "word_normalized"], keep="first")
        data["is_duplicate"] = False
        if p["deduplicate"]:
            data.loc[repeated.index, "is_duplicate"] = repeated
        if p["level"] == "response":
            return self._responses(data, dictionary, dimensions, stems)
        return self._terms(data, dictionary, dimensions, stems, by)

    def _responses(self, data, dictionary, dimensions, stems) -> pd.DataFrame:
        import numpy as np

        from assoc.stats.dictionary import code_words

        coded = ~data["is_empty"]
        codes = code_words(data.loc[coded, "word_normalized"].tolist(), dictionary, dimensions)
        for dimension, stem in zip(dimensions, stems):
            rep = np.full(len(data), np.nan)
            direction = np.full(len(data), np.nan)
            rep[coded.to_numpy()] = codes[dimension][0]
            direction[coded.to_numpy()] = codes[dimension][1]
            data[f"{stem}_representativeness"] = rep
            data[f"{stem}_direction"] = direction
        return data.reset_index(drop=True)

    def _terms(self, data, dictionary, dimensions, stems, by) -> pd.DataFrame:
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.dictionary import aggregate, code_words
        from assoc.table.files import normalise

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
            if used.empty:
                raise DataError(f"stereotype: term {key} has no non-empty response in column {p['word']!r}")
            codes = code_words(used["word_normalized"].tolist(), dictionary, dimensions)
            wide = {**key, "n_responses": len(used), **counts}
            for dimension, stem in zip(dimensions, stems):
                res = aggregate(*codes[dimension])
                common = {
                    **key,
                    "attribute_group": dimension,
                    "attribute": "",
                    "dimension": dimension,
                    "n_responses": res.n_responses,
                    "n_in_dictionary": res.n_in_dictionary,
                    "n_with_direction": res.n_with_direction,
                    **counts,
                }
                long_rows.append({**common, "measure": "representativeness", "value": res.representativeness})
                long_rows.append({**common, "measure": "direction", "value": res.direction})
                wide.update(
                    {
                        f"{stem}_representativeness": res.representativeness,
                        f"{stem}_direction": res.direction,
                        f"{stem}_n_in_dictionary": res.n_in_dictionary,
                        f"{stem}_n_with_direction": res.n_with_direction,
                    }
                )
            wide_rows.append(wide)
        if p["shape"] == "wide":
            out = pd.DataFrame(wide_rows)
            out["word_column"] = p["word"]
            out["source_measure"] = source_measure
            return out
        out = pd.DataFrame(long_rows)
        out["word_column"] = p["word"]
        out["source_measure"] = source_measure
        extra = [c for c in by if c not in ("scorer", "model", "context", "target_group", "target")]
        return normalise(out, scorer="stereotype", extra_columns=[*extra, "dimension"])


#: Suffixes of the wide ``stereotype`` output's per-dimension estimate columns.
ESTIMATE_SUFFIXES = ("_representativeness", "_direction")


def is_stereotype_long(table: pd.DataFrame) -> bool:
    """True for the long output of the ``stereotype`` analysis (estimates in ``measure``/``value`` rows)."""
    return {"measure", "attribute_group", "value"} <= set(table.columns) and bool(
        set(table["measure"].astype(str)) & {"representativeness", "direction"}
    )


def stereotype_wide(table: pd.DataFrame, *, what: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per term with ``<stem>_representativeness`` / ``<stem>_direction`` columns, and the stems.

    Accepts the ``stereotype`` analysis' output in either shape: wide (returned as it is) or
    long (``measure`` representativeness/direction, ``attribute_group`` the dimension), which is
    pivoted on the :data:`TERM_COLUMNS` it has. ``what`` names the caller in errors.
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
    if long.duplicated([*keys, "attribute_group", "measure"]).any():
        raise TableError(
            f"{what}: several rows per term, dimension and measure; the term columns "
            f"{keys} do not identify a term (was 'stereotype' run with other 'by' columns?)"
        )
    dims = list(dict.fromkeys(long["attribute_group"].astype(str)))
    wide = long.assign(_column=[f"{column_stem(d)}_{m}" for d, m in zip(long["attribute_group"], long["measure"])])
    wide = wide.pivot(index=keys, columns="_column", values="value").reset_index()
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
