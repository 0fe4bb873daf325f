"""``emmeans``: estimated marginal means of a factor's levels, pairwise comparisons, Cohen's d and letters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import MODEL_BY_OPTION, by_columns, column_list, confidence_level, groups, require_columns
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


def _formula_or_none(value: Any) -> Any:
    if value is None:
        return None
    from assoc.analysis.lmm import _formula

    return _formula(str(value))


class EmmeansAnalysis(Analysis):
    """Estimated marginal means (EMMs) and all pairwise comparisons of one factor's levels.

    Fits ``outcome ~ C(factor)`` (or ``formula``, which must use the factor) by OLS, or as a
    mixed model with random intercepts for the ``random`` columns, separately for each ``by``
    group; then reports per level the EMM with SE and CI, per pair of levels the difference
    with SE, test statistic, p value (unadjusted and adjusted by ``adjust``: Tukey, Holm,
    Bonferroni or none), adjusted CI and Cohen's d, and the compact letter display (levels
    sharing a letter do not differ at ``alpha``), as in Nicolas & Caliskan's (2024) Table 1.

    The table may be any table with the outcome and factor columns, or the ``stereotype``
    analysis' output (long or wide), whose estimates are then columns such as
    ``warmth_direction`` or ``competence_representativeness``. ``levels`` restricts the data
    to some levels before fitting (e.g. one pair of categories).

    One row per estimate: ``kind`` is ``emmean`` (``level``, ``estimate``, ``se``, ``df``, CI,
    ``n``, ``letters``) or ``contrast`` (``level`` and ``level_2``, ``estimate``, ``se``, ``df``,
    ``statistic``, ``p_unadjusted``, ``p_value``, CI, ``cohens_d``). Formulas:
    :mod:`assoc.stats.emmeans`.
    """

    name = "emmeans"
    requires = Requirement(
        needs="an outcome column and at least 2 levels of the factor column (default target_group)",
        at_least={"factor": 2},
        instead="name the outcome and the factor (--option outcome=... --option factor=...)",
    )
    #: reads the stereotype output in either shape (wide is no association table) or any table
    requires_association_table = False
    description = (
        "Estimated marginal means and pairwise comparisons (Tukey/Holm/none) with Cohen's d and "
        "the compact letter display, from an OLS or mixed model."
    )
    citation = (
        "Searle, S. R., Speed, F. M., & Milliken, G. A. (1980). The American Statistician, 34(4), 216-221; "
        "Piepho, H.-P. (2004). Journal of Computational and Graphical Statistics, 13(2), 456-466; "
        "Nicolas, G., & Caliskan, A. (2024). PNAS Nexus, 3(11), pgae493. doi:10.1093/pnasnexus/pgae493"
    )
    options = (
        Option("outcome", str, REQUIRED, "the outcome column, e.g. warmth_direction (stereotype output) or value"),
        Option("factor", str, "target_group", "the categorical column whose levels are compared"),
        Option(
            "formula",
            str,
            None,
            "model formula (default: '<outcome> ~ C(<factor>)'); must use the factor",
            check=_formula_or_none,
        ),
        Option("random", list, [], "grouping columns with random intercepts (empty: OLS)", check=column_list),
        Option(
            "levels",
            list,
            None,
            "compare only these levels of the factor (the data is restricted first)",
            check=column_list,
        ),
        MODEL_BY_OPTION,
        Option(
            "adjust",
            str,
            "tukey",
            "p-value adjustment of the pairwise comparisons",
            choices=("tukey", "holm", "bonferroni", "none"),
        ),
        Option(
            "d_sigma",
            str,
            "total",
            "Cohen's d divides by the SD of all variance components (total, as the "
            "paper's authors' SADCAT code) or of the residual only",
            choices=("total", "residual"),
        ),
        Option("confidence", float, 0.95, "confidence level of the intervals", check=confidence_level),
        Option("alpha", float, 0.05, "significance level of the compact letter display", check=confidence_level),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Fit the model per ``by`` group and report EMMs, contrasts and letters."""
        import pandas as pd

        from assoc.analysis.stereotype import is_stereotype_long, stereotype_wide
        from assoc.errors import DataError, did_you_mean
        from assoc.stats.emmeans import marginal_means
        from assoc.stats.mixed import fit_mixed, model_columns
        from assoc.stats.regression import fit_ols

        p = self.params
        data = table
        if p["outcome"] not in table.columns and is_stereotype_long(table):
            # keep the factor, random and by columns a user added to the long table
            keep = [p["factor"], *p["random"], *(p["by"] or [])]
            data, _ = stereotype_wide(table, what="emmeans", keep=keep)
        if p["outcome"] not in data.columns:
            raise DataError(
                f"emmeans: no outcome column {p['outcome']!r} (columns: "
                f"{', '.join(map(str, data.columns))})" + did_you_mean(p["outcome"], map(str, data.columns))
            )
        factor = p["factor"]
        formula = p["formula"] or f"{p['outcome']} ~ C({factor})"
        by = by_columns(p["by"], data)
        require_columns(data, [factor, *p["random"], *by], what="emmeans")
        if p["levels"] is not None:
            unknown = [v for v in p["levels"] if v not in set(data[factor].astype(str))]
            if unknown:
                raise DataError(
                    f"emmeans: level(s) {unknown} not in column {factor!r}"
                    + did_you_mean(unknown[0], set(data[factor].astype(str)))
                )
            data = data[data[factor].astype(str).isin(p["levels"])]
        used = sorted(set(model_columns(formula, list(data.columns))) | set(p["random"]) | {factor})
        rows: list[dict[str, Any]] = []
        for key, part in groups(data, by):
            complete = part.dropna(subset=used).reset_index(drop=True)
            n_dropped = len(part) - len(complete)
            fit = fit_mixed(complete, formula, p["random"]) if p["random"] else fit_ols(complete, formula)
            predictors = [c for c in model_columns(formula.split("~", 1)[1], list(complete.columns))]
            result = marginal_means(
                fit,
                complete,
                factor,
                columns=predictors,
                adjust=p["adjust"],
                confidence=p["confidence"],
                alpha=p["alpha"],
                d_sigma=p["d_sigma"],
            )
            common = {
                **key,
                "outcome": p["outcome"],
                "factor": factor,
                "formula": formula,
                "model_type": "mixed" if p["random"] else "OLS",
                "adjust": p["adjust"],
                "confidence": p["confidence"],
                "sigma": result.sigma,
                "d_sigma": p["d_sigma"],
                "n_rows_dropped": n_dropped,
                "warnings": "; ".join(getattr(fit, "warnings", [])),
            }
            for _, m in result.means.iterrows():
                rows.append(
                    {
                        **common,
                        "kind": "emmean",
                        "level": m["level"],
                        "estimate": m["emmean"],
                        "se": m["se"],
                        "df": m["df"],
                        "ci_low": m["ci_low"],
                        "ci_high": m["ci_high"],
                        "n": m["n"],
                        "letters": m["letters"],
                    }
                )
            for _, c in result.contrasts.iterrows():
                rows.append(
                    {
                        **common,
                        "kind": "contrast",
                        "level": c["level_1"],
                        "level_2": c["level_2"],
                        "estimate": c["estimate"],
                        "se": c["se"],
                        "df": c["df"],
                        "statistic": c["statistic"],
                        "p_unadjusted": c["p_unadjusted"],
                        "p_value": c["p_value"],
                        "ci_low": c["ci_low"],
                        "ci_high": c["ci_high"],
                        "cohens_d": c["cohens_d"],
                    }
                )
        columns = [
            *by,
            "outcome",
            "factor",
            "kind",
            "level",
            "level_2",
            "estimate",
            "se",
            "df",
            "statistic",
            "p_unadjusted",
            "p_value",
            "ci_low",
            "ci_high",
            "cohens_d",
            "letters",
            "n",
            "adjust",
            "confidence",
            "sigma",
            "d_sigma",
            "formula",
            "model_type",
            "n_rows_dropped",
            "warnings",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)
