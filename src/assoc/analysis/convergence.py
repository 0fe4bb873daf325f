"""``convergence``: do several methods agree about which targets go with which attribute.

The input is one association table holding several methods' rows (``assoc.compare``).
Each method (by default one scorer x model) is reduced to one score per target for one
contrast of attribute groups, A - B, by the rule its rows allow
(:mod:`assoc.analysis.reductions`); the scores are z-standardised within method; then:

* every pair of methods is correlated over their shared targets (r, Fisher-z CI, t, p, N);
* an ICC treats the methods as raters of the targets that every method scored
  (McGraw & Wong, 1996; default: two-way consistency, single and average);
* optionally each method is correlated with external criteria (e.g. % women per
  occupation), joined on the target.

Formulas: :mod:`assoc.stats.correlations`, :mod:`assoc.stats.icc`, :mod:`assoc.stats.standardize`.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.headline import Estimate, Headline
from assoc.analysis.inputs import (
    column_list,
    confidence_level,
    criterion_source,
    require_columns,
    role_columns,
)
from assoc.components.options import Option

if TYPE_CHECKING:
    import pandas as pd

    from assoc.analysis.reductions import Contrast

#: attribute_group values of rows that are lists of words associated with a target.
LIST_GROUPS = ["listed", "top_words"]


def _optional_criterion(value: Any) -> Any:
    return None if value is None else criterion_source(value)


def _words(value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict) or not value:
        raise ValueError("must be a non-empty mapping group -> list of words")
    out = {}
    for group, words in value.items():
        if isinstance(words, str) or not all(isinstance(w, str) and w.strip() for w in words):
            raise ValueError(f"the words of group {group!r} must be a list of non-empty strings")
        out[str(group)] = [w for w in words]
    return out


class ConvergenceAnalysis(Analysis):
    """Agreement of methods: per-target scores on one contrast, pairwise correlations, ICC, criteria.

    See :mod:`assoc.analysis.convergence` and ``docs/compare.md``.
    """

    name = "convergence"
    requires = Requirement(
        needs="the scores of at least 2 methods (combinations of 'methods', default scorer and model) on the "
        "same targets",
        at_least={"methods": 2},
        instead="score the stimuli with several scorers: assoc compare -s weat -s fmat ...",
        # its reductions read listed words (their share in each group) and chat_word_association's choices
        not_measures=("dry_run",),
    )
    #: Each pair of methods' r, the ICC across methods and each method's r with a criterion, with their intervals.
    headline = Headline(
        estimates=(
            Estimate("estimate", "r (ICC across all methods)", low="ci_low", high="ci_high", p_value="p_value",
                     n=("n",), reference=0.0),
        ),
        rows={"kind": ("correlation", "icc", "criterion")},
        labels=("kind", "x", "y", "label"),
    )  # fmt: skip
    description = (
        "Method comparison: each method's rows reduced to one score per target for a contrast A - B, "
        "z within method; pairwise r (CI, p, N), ICC across methods, r with criteria."
    )
    citation = (
        "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation "
        "coefficients. Psychological Methods, 1(1), 30-46; Caliskan, A., Bryson, J. J., & Narayanan, A. "
        "(2017). Science, 356(6334), 183-186 (s(w, A, B)); Bao, H.-W.-S. (2024). The Fill-Mask "
        "Association Test. JPSP. doi:10.1037/pspa0000396 (LPR)"
    )
    options = (
        Option(
            "a",
            str,
            None,
            "attribute group A of the contrast A - B (default: the first of exactly two groups)",
        ),
        Option("b", str, None, "attribute group B (default: the second)"),
        Option(
            "methods",
            list,
            ["scorer", "model"],
            "columns whose combinations are the methods compared",
            check=column_list,
        ),
        Option(
            "direct",
            list,
            ["rating"],
            "measures read as a score of the target on the contrast itself (high = A), e.g. a chat rating",
            check=column_list,
        ),
        Option(
            "list_groups",
            list,
            LIST_GROUPS,
            "attribute_group values of rows that list words associated with a target (chat listing, top words)",
            check=column_list,
        ),
        Option(
            "words",
            dict,
            None,
            "words of groups A and B for the share rule (default: from the table's rows)",
            check=_words,
        ),
        Option(
            "flip",
            list,
            [],
            "methods (labels or scorer names) whose scores are negated (e.g. a rating where high means B)",
            check=column_list,
        ),
        Option(
            "standardize",
            str,
            "z",
            "z-score each method's scores (z) or keep them as they are (none)",
            choices=("z", "none"),
        ),
        Option(
            "targets",
            str,
            "common",
            "common: use only targets every method scored; pairwise: each pair "
            "uses the targets both scored (the ICC always uses the common ones)",
            choices=("common", "pairwise"),
        ),
        Option(
            "correlation",
            str,
            "pearson",
            "pearson or spearman",
            choices=("pearson", "spearman"),
        ),
        Option(
            "alternative",
            str,
            "two-sided",
            "two-sided, greater or less",
            choices=("two-sided", "greater", "less"),
        ),
        Option(
            "confidence",
            float,
            0.95,
            "confidence level of the intervals",
            check=confidence_level,
        ),
        Option(
            "type",
            str,
            "consistency",
            "ICC form: consistency, agreement or all",
            choices=("consistency", "agreement", "all"),
        ),
        Option(
            "unit",
            str,
            "all",
            "ICC unit: single, average or all",
            choices=("single", "average", "all"),
        ),
        Option(
            "criterion",
            object,
            None,
            "optional criterion table joined on the target (path, DataFrame or mapping target -> value)",
            check=_optional_criterion,
        ),
        Option("criterion_key", str, "target", "key column of the criterion table"),
        Option(
            "criterion_columns",
            list,
            None,
            "criterion columns to use (default: all numeric)",
            check=column_list,
        ),
        Option(
            "compare_methods",
            bool,
            False,
            "also test, per criterion, whether two methods correlate with it differently (Williams' t)",
        ),
        Option(
            "output",
            str,
            "summary",
            "summary (correlations, ICC, criteria) or scores (one row per method and target: an association table)",
            choices=("summary", "scores"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Reduce, standardise and compare the methods of ``table`` (see the class docstring)."""
        from assoc.errors import DataError

        p = self.params
        if p["compare_methods"] and p["criterion"] is None:
            raise DataError(
                "convergence: compare_methods=true compares the methods' correlations with a criterion; "
                "give criterion=..."
            )
        scores = convergence_scores(
            table,
            a=p["a"],
            b=p["b"],
            methods=p["methods"],
            direct=p["direct"],
            list_groups=p["list_groups"],
            words=p["words"],
            flip=p["flip"],
            standardize=p["standardize"],
            targets=p["targets"],
        )
        if p["output"] == "scores":
            return scores
        return self._summary(scores)

    def _summary(self, scores: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        p = self.params
        wide = scores.pivot(index="target", columns="method", values="value")[list(dict.fromkeys(scores["method"]))]
        contrast = str(scores["attribute_group"].iloc[0])
        rows = [{"kind": "correlation", "contrast": contrast, **row} for row in self._pairs(wide)]
        rows += [{"kind": "icc", "contrast": contrast, **row} for row in self._icc(wide)]
        if p["criterion"] is not None:
            rows += [{"kind": "criterion", "contrast": contrast, **row} for row in self._criterion(wide)]
        out = pd.DataFrame(rows)
        first = [
            "kind",
            "contrast",
            "x",
            "y",
            "estimate",
            "ci_low",
            "ci_high",
            "p_value",
            "n",
        ]
        return out[first + [c for c in out.columns if c not in first]]

    def _correlate(self, frame: pd.DataFrame, x: str, y: str, what: str) -> dict[str, Any]:
        """One output row: r of columns ``x`` and ``y`` of ``frame`` over their complete rows."""
        from assoc.errors import DataError
        from assoc.stats.correlations import correlation

        p = self.params
        both = frame[[x, y]].dropna()
        try:
            res = correlation(
                both[x].to_numpy(),
                both[y].to_numpy(),
                method=p["correlation"],
                confidence=p["confidence"],
                alternative=p["alternative"],
            )
        except DataError as exc:
            raise DataError(f"convergence: {what}: {exc}") from None
        row = res.as_dict()
        return {
            "x": x,
            "y": y,
            "estimate": row["r"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
            "p_value": row["p_value"],
            "n": row["n"],
            "r": row["r"],
            "t": row["t"],
            "df": row["df"],
            "confidence": row["confidence"],
            "correlation": row["method"],
            "alternative": row["alternative"],
        }

    def _pairs(self, wide: pd.DataFrame) -> list[dict[str, Any]]:
        from assoc.errors import DataError

        rows = []
        for first, second in combinations(wide.columns, 2):
            both = wide[[first, second]].dropna()
            if both.empty:
                raise DataError(
                    f"convergence: methods {first!r} and {second!r} have no target in common "
                    f"({first}: {_some(wide[first].dropna().index)}; "
                    f"{second}: {_some(wide[second].dropna().index)})"
                )
            rows.append(self._correlate(wide, first, second, f"methods {first!r} and {second!r}"))
        return rows

    def _icc(self, wide: pd.DataFrame) -> list[dict[str, Any]]:
        from assoc.errors import DataError
        from assoc.stats.icc import intraclass_correlations
        from assoc.stats.standardize import zscore

        p = self.params
        common = wide.dropna()
        if len(common) < 2:
            raise DataError(
                f"convergence: an ICC needs at least 2 targets scored by every method, found "
                f"{len(common)} ({', '.join(map(str, wide.columns))})"
            )
        matrix = common.to_numpy()
        if p["standardize"] == "z":  # z over the common targets, so every rater has mean 0 and SD 1 on them
            matrix = matrix.copy()
            for j in range(matrix.shape[1]):
                matrix[:, j] = zscore(matrix[:, j])
        rows = []
        for res in intraclass_correlations(matrix, confidence=p["confidence"]):
            if res.model != "twoway" or (p["type"] != "all" and res.type != p["type"]):
                continue
            if p["unit"] != "all" and res.unit != p["unit"]:
                continue
            row = res.as_dict()
            rows.append(
                {
                    "x": "all methods",
                    "y": "",
                    "estimate": row["icc"],
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                    "p_value": row["p_value"],
                    "n": row["n_items"],
                    "label": row["label"],
                    "icc": row["icc"],
                    "icc_type": row["type"],
                    "icc_unit": row["unit"],
                    "f": row["f"],
                    "df1": row["df1"],
                    "df2": row["df2"],
                    "confidence": row["confidence"],
                    "n_methods": row["n_raters"],
                    "methods": ",".join(map(str, common.columns)),
                }
            )
        return rows

    def _criterion(self, wide: pd.DataFrame) -> list[dict[str, Any]]:
        from assoc.analysis.inputs import load_criterion, numeric_columns
        from assoc.errors import DataError

        p = self.params
        key = p["criterion_key"]
        frame = load_criterion(p["criterion"], key=key)
        columns = numeric_columns(frame, p["criterion_columns"], exclude=[key])
        joined = wide.join(frame.set_index(key)[columns], how="inner")
        if joined.empty:
            raise DataError(
                f"convergence: no target matches the criterion key {key!r} "
                f"(e.g. table: {wide.index[0]!r}, criterion: {frame[key].iloc[0]!r})"
            )
        unmatched = len(set(wide.index) - set(joined.index))
        rows = []
        for method in wide.columns:
            for column in columns:
                row = self._correlate(joined, method, column, f"method {method!r} and criterion {column!r}")
                rows.append({**row, "n_targets_without_criterion": unmatched})
        if p["compare_methods"]:
            rows += self._williams(joined, list(wide.columns), columns)
        return rows

    def _williams(self, joined: pd.DataFrame, methods: list[str], criteria: list[str]) -> list[dict[str, Any]]:
        """Per criterion and pair of methods: Williams' t of r(criterion, x) vs r(criterion, y)."""
        from assoc.stats.correlations import williams_test

        p = self.params
        rows = []
        for column in criteria:
            for first, second in combinations(methods, 2):
                res = williams_test(
                    joined[column].to_numpy(),
                    joined[first].to_numpy(),
                    joined[second].to_numpy(),
                    method=p["correlation"],
                    alternative=p["alternative"],
                )
                rows.append(
                    {
                        "kind": "williams",
                        "x": first,
                        "y": second,
                        "shared": column,
                        "estimate": res.r_jk - res.r_jh,
                        "p_value": res.p_value,
                        "n": res.n,
                        "r_jk": res.r_jk,
                        "r_jh": res.r_jh,
                        "r_kh": res.r_kh,
                        "t": res.t,
                        "df": res.df,
                        "correlation": p["correlation"],
                        "alternative": res.alternative,
                    }
                )
        return rows


def _some(values: Any, limit: int = 5) -> str:
    values = [str(v) for v in values]
    shown = ", ".join(values[:limit])
    return (shown + f", ... ({len(values)} in all)") if len(values) > limit else (shown or "none")


def convergence_scores(
    table: pd.DataFrame,
    *,
    a: str | None = None,
    b: str | None = None,
    methods: list[str] | None = None,
    direct: list[str] | None = None,
    list_groups: list[str] | None = None,
    words: dict[str, list[str]] | None = None,
    flip: list[str] | None = None,
    standardize: str = "z",
    targets: str = "common",
) -> pd.DataFrame:
    """One score per method and target for the contrast A - B, as an association table.

    Rows: ``scorer``/``model`` of the method, ``target_group``/``target`` the unit,
    ``attribute_group`` = ``"A - B"``, ``measure`` = ``convergence_z`` (or ``convergence``
    when ``standardize="none"``), ``value`` the (z-)score; extra columns ``method`` (its
    label), ``rule``, ``source_measure``, ``raw_score`` (before standardising and after
    ``flip``), ``n_values``, ``n_contexts``, ``flipped``. See :class:`ConvergenceAnalysis`.
    """
    import pandas as pd

    from assoc.analysis.reductions import joined_text, reduce_method
    from assoc.errors import DataError
    from assoc.stats.standardize import zscore
    from assoc.table.schema import normalise

    methods = list(methods or ["scorer", "model"])
    direct = list(["rating"] if direct is None else direct)
    list_groups = list(LIST_GROUPS if list_groups is None else list_groups)
    require_columns(table, methods, what="convergence")
    table = _text_columns(table, [*methods, *role_columns(table)])
    keys = table[methods].astype(str).drop_duplicates()
    labels = _labels(keys, methods)
    if len(labels) < 2:
        raise DataError(
            f"convergence compares methods, but the table holds a single one ({labels[0]}; methods "
            f"are the distinct values of {', '.join(methods)}): score the same stimuli with several "
            "scorers, e.g. assoc.compare(stimuli, ['fmat', 'weat', ...])"
        )
    contrast = _contrast(table, a, b, words, list_groups)
    flip = list(flip or [])
    unknown = [f for f in flip if f not in labels and f not in set(keys.iloc[:, 0])]
    if unknown:
        raise DataError(f"convergence: flip names no method {unknown[0]!r} (methods: {', '.join(labels)})")
    frames = []
    method_of_row = joined_text(table, methods)
    for label, key in zip(labels, keys.itertuples(index=False, name=None)):
        rows = table[method_of_row == "\x1f".join(key)]
        scores = reduce_method(rows, contrast, method=label, direct=direct, list_groups=list_groups)
        flipped = label in flip or key[0] in flip
        scores["raw_score"] = -scores["score"] if flipped else scores["score"]
        scores["flipped"] = flipped
        scores["method"] = label
        for column, value in zip(methods, key):
            scores[column] = value
        frames.append(scores)
    scores = pd.concat(frames, ignore_index=True)
    duplicated = scores.duplicated(subset=["method", "target"], keep=False)
    if duplicated.any():
        example = scores.loc[duplicated].iloc[0]
        groups = sorted(set(scores.loc[duplicated & (scores["target"] == example["target"]), "target_group"]))
        raise DataError(
            f"convergence: method {example['method']!r} scores target {example['target']!r} in several "
            f"target groups ({', '.join(groups)}); targets are matched across methods by word, so rename "
            "one or score the groups separately"
        )
    if targets == "common":
        counts = scores.dropna(subset=["raw_score"]).groupby("target")["method"].nunique()
        common = set(counts.index[counts == len(labels)])
        if not common:
            raise DataError(_no_common_targets(scores, labels))
        left_out = sorted(set(scores["target"]) - common)
        if left_out:
            import warnings

            warnings.warn(
                f"convergence: {len(left_out)} target(s) not scored by every method are left out "
                f"(targets='common'): {_some(left_out, 10)}",
                stacklevel=2,
            )
        scores = scores[scores["target"].isin(common)]
    scores = scores.copy()
    spread = scores.groupby("method", sort=False)["raw_score"].agg(lambda v: v.dropna().nunique())
    for method, distinct in spread.items():
        if distinct < 2:
            part = scores.loc[scores["method"] == method]
            rules = ", ".join(sorted(set(part["rule"])))
            raise DataError(
                f"convergence: method {method!r} gives every target the same score "
                f"({part['raw_score'].dropna().iloc[0] if distinct else 'NaN'!r}; rule {rules}), so it cannot be "
                "correlated with the others"
                + (" (none of its listed words is in either group)" if rules == "share" else "")
            )
    if standardize == "z":
        scores["value"] = scores.groupby("method", sort=False)["raw_score"].transform(
            lambda v: pd.Series(zscore(v.to_numpy()), index=v.index)
        )
    else:
        scores["value"] = scores["raw_score"]
    scores["attribute_group"] = contrast.label
    scores["measure"] = "convergence_z" if standardize == "z" else "convergence"
    extra = [
        "method",
        "rule",
        "source_measure",
        "raw_score",
        "n_values",
        "n_contexts",
        "flipped",
    ]
    scores = scores.drop(columns=["score"])
    if "scorer" not in scores.columns:
        scores["scorer"] = "convergence"
    return normalise(scores.reset_index(drop=True), extra_columns=extra)


def _text_columns(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``table`` with ``columns`` as text and missing values as ``""``.

    Extra columns of one scorer are missing in another scorer's rows of a compared table.
    """
    from pandas.api import types as ptypes

    table = table.copy(deep=False)  # columns are replaced, never written in place
    for column in dict.fromkeys(columns):
        values = table[column]
        if values.isna().any():
            values = values.astype(object).where(values.notna(), "")
        if not ptypes.is_string_dtype(values) or ptypes.infer_dtype(values, skipna=False) != "string":
            values = values.astype(str)
        table[column] = values
    return table


def _labels(keys: pd.DataFrame, methods: list[str]) -> list[str]:
    """Method names: the first column's value (e.g. the scorer) when that is unique, else all non-empty parts."""
    first = keys.iloc[:, 0].tolist()
    labels = []
    for row in keys.itertuples(index=False, name=None):
        labels.append(row[0] if first.count(row[0]) == 1 else ":".join(str(v) for v in row if str(v)))
    return labels


def _contrast(
    table: pd.DataFrame,
    a: str | None,
    b: str | None,
    words: dict[str, list[str]] | None,
    list_groups: list[str],
) -> Contrast:
    """The groups A and B (given, or the only two attribute/mask groups) and their words."""
    from assoc.analysis.reductions import Contrast
    from assoc.errors import DataError

    present = {
        c: [g for g in table[c].unique() if g and g not in list_groups and " - " not in g]
        for c in ("attribute_group", "target_group", "mask_group")
        if c in table.columns
    }
    if (a is None) != (b is None):
        raise DataError("convergence: give both a and b (the two groups of the contrast), or neither")
    if a is None:
        for column in ("attribute_group", "mask_group"):
            if len(present.get(column, [])) == 2:
                a, b = present[column]
                break
        else:
            found = "; ".join(f"{c}: {', '.join(g) or 'none'}" for c, g in present.items())
            raise DataError(
                f"convergence: cannot tell which two groups to contrast ({found}); name them with "
                "a=... and b=... (A is the pole a positive score points to)"
            )
    assert a is not None and b is not None
    if a == b:
        raise DataError(f"convergence: a and b must differ, both are {a!r}")
    every = {g for groups in present.values() for g in groups}
    lpr_groups = {
        g
        for c in ("attribute_group", "target_group")
        if c in table.columns
        for g in table[c].unique()
        if g in (f"{a} - {b}", f"{b} - {a}")
    }
    # a table of listings alone has no groups: the share rule then needs words=
    for group in (a, b):
        if every and group not in every and not lpr_groups and not (words and group in words):
            raise DataError(
                f"convergence: no group {group!r} in the table{_did_you_mean(group, every)} "
                f"(groups: {', '.join(sorted(every))})"
            )
    known: dict[str, set[str]] = {group: set() for group in (a, b)}
    for group in (a, b):
        if words and group in words:
            known[group] = {w.strip().lower() for w in words[group]}
            continue
        for group_col, word_col in (
            ("attribute_group", "attribute"),
            ("target_group", "target"),
            ("mask_group", "mask"),
        ):
            if group_col in table.columns and word_col in table.columns:
                hit = table[group_col] == group
                known[group] |= {w.strip().lower() for w in table.loc[hit, word_col].unique() if w.strip()}
    return Contrast(a, b, frozenset(known[a]), frozenset(known[b]))


def _did_you_mean(name: str, options: Any) -> str:
    from assoc.errors import did_you_mean

    return did_you_mean(name, sorted(options))


def _no_common_targets(scores: pd.DataFrame, labels: list[str]) -> str:
    per_method = {m: set(scores.loc[(scores["method"] == m) & scores["raw_score"].notna(), "target"]) for m in labels}
    disjoint = [f"{x} and {y}" for x, y in combinations(labels, 2) if not per_method[x] & per_method[y]]
    shown = "; ".join(f"{m}: {_some(sorted(t))}" for m, t in per_method.items())
    return (
        "convergence: no target is scored by every method"
        + (f" (no target in common: {', '.join(disjoint)})" if disjoint else "")
        + f" ({shown}). Score the same targets with every method, or use targets='pairwise'"
    )
