"""``regress``: ordinary and hierarchical (nested) linear regression of scores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    PREDICTOR_TABLE_OPTIONS,
    column_list,
    confidence_level,
    groups,
    merge_criterion_rows,
    require_columns,
    single_measure_check,
)
from assoc.analysis.lmm import _formula, _formulas
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


class RegressAnalysis(Analysis):
    """OLS regression(s), optionally on scores averaged per unit and joined with predictors.

    With ``aggregate`` (e.g. ``[model, target]``) ``value`` is first averaged within those
    columns; with ``criterion`` a table of predictors is joined on ``key``. ``formula`` and each
    formula in ``nested`` are fitted on the same complete rows, separately for each ``by`` group,
    and each is compared with the previous one (Delta R^2, F change, likelihood ratio, AIC/BIC).
    ``I(x**2)`` adds a quadratic term, ``a:b`` an interaction.

    One row per estimate: ``kind`` is ``coef`` (estimate, SE, t, p, CI), ``fit`` (r2, adj_r2, F,
    loglik, AIC, BIC) or ``comparison``. Formulas: :mod:`assoc.stats.regression`.
    """

    name = "regress"
    requires = Requirement(needs="a table with the columns of the formula (or a criterion table joined on 'key')")
    description = "OLS and nested regressions (quadratic terms, interactions): R^2, Delta R^2, F change, LRT, AIC."
    citation = (
        "Cohen, J., Cohen, P., West, S. G., & Aiken, L. S. (2003). Applied Multiple Regression/Correlation "
        "Analysis (3rd ed.); Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are "
        "differentiable components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493"
    )
    options = (
        Option(
            "formula", str, REQUIRED, "regression formula, e.g. 'value ~ pct_male + I(pct_male**2)'", check=_formula
        ),
        Option("nested", list, [], "further formulas, each compared with the previous one", check=_formulas),
        Option(
            "aggregate", list, None, "average value within these columns first (e.g. model,target)", check=column_list
        ),
        Option("by", list, ["measure"], "columns to fit separate regressions for", check=column_list),
        Option("confidence", float, 0.95, "confidence level of the coefficient intervals", check=confidence_level),
        *PREDICTOR_TABLE_OPTIONS,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Fit the nested OLS models and compare them."""
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.mixed import model_columns
        from assoc.stats.regression import compare_nested, fit_ols

        p = self.params
        by = p["by"]
        data = table
        if p["aggregate"] is not None:
            keep = list(dict.fromkeys([*by, *p["aggregate"]]))
            require_columns(table, keep, what="regress")
            single_measure_check(table, keep, what="regress")
            data = table.groupby(keep, sort=True, dropna=False)["value"].mean().reset_index()
        else:
            require_columns(table, by, what="regress")
            single_measure_check(table, by, what="regress")
        unmatched = 0
        if p["criterion"] is not None:
            data, _, unmatched = merge_criterion_rows(
                data, criterion=p["criterion"], key=p["key"], criterion_key=p["criterion_key"]
            )
        formulas = [p["formula"], *p["nested"]]
        if len(set(formulas)) != len(formulas):
            raise DataError("regress: a formula is listed twice")
        used = sorted({c for f in formulas for c in model_columns(f, list(data.columns))})
        rows: list[dict[str, Any]] = []
        for key, part in groups(data, by):
            complete = part.dropna(subset=used)
            common = {**key, "n_rows_dropped": len(part) - len(complete), "n_keys_without_criterion": unmatched}
            fits = [fit_ols(complete, f) for f in formulas]
            for fit in fits:
                base = {**common, "formula": fit.formula, "n_obs": fit.n_obs}
                for _, c in fit.coefficients(p["confidence"]).iterrows():
                    rows.append(
                        {
                            **base,
                            "kind": "coef",
                            "term": c["term"],
                            "estimate": c["estimate"],
                            "se": c["se"],
                            "statistic": c["t"],
                            "df": c["df"],
                            "p_value": c["p_value"],
                            "ci_low": c["ci_low"],
                            "ci_high": c["ci_high"],
                            "confidence": p["confidence"],
                        }
                    )
                res = fit.result
                rows += [
                    {**base, "kind": "fit", "term": "r2", "estimate": float(res.rsquared)},
                    {**base, "kind": "fit", "term": "adj_r2", "estimate": float(res.rsquared_adj)},
                    {
                        **base,
                        "kind": "fit",
                        "term": "F",
                        "statistic": float(res.fvalue),
                        "df": float(res.df_model),
                        "df2": float(res.df_resid),
                        "p_value": float(res.f_pvalue),
                    },
                    {**base, "kind": "fit", "term": "loglik", "estimate": fit.loglik, "df": fit.n_params},
                    {**base, "kind": "fit", "term": "AIC", "estimate": fit.aic(), "df": fit.n_params},
                    {**base, "kind": "fit", "term": "BIC", "estimate": fit.bic(), "df": fit.n_params},
                ]
            for prev, this in zip(fits, fits[1:]):
                cmp = compare_nested(prev, this)
                rows.append(
                    {
                        **common,
                        "formula": this.formula,
                        "n_obs": this.n_obs,
                        "kind": "comparison",
                        "term": f"{prev.formula} vs {this.formula}",
                        "estimate": cmp.delta_r2,
                        "statistic": cmp.f,
                        "df": cmp.df1,
                        "df2": cmp.df2,
                        "p_value": cmp.p_f,
                        "lrt_chi2": cmp.chi2,
                        "lrt_p_value": cmp.p_lrt,
                        "delta_aic": cmp.delta_aic,
                        "delta_bic": cmp.delta_bic,
                    }
                )
        columns = [
            *by,
            "formula",
            "kind",
            "term",
            "estimate",
            "se",
            "statistic",
            "df",
            "df2",
            "p_value",
            "ci_low",
            "ci_high",
            "confidence",
            "lrt_chi2",
            "lrt_p_value",
            "delta_aic",
            "delta_bic",
            "n_obs",
            "n_rows_dropped",
            "n_keys_without_criterion",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)
