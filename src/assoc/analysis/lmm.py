"""``lmm``: linear mixed models on the association table (random intercepts for models by default; random slopes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    PREDICTOR_TABLE_OPTIONS,
    column_list,
    confidence_level,
    merge_criterion_rows,
    require_columns,
)
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


def _formula(value: str) -> str:
    if "~" not in value:
        raise ValueError(f"a formula needs '~' (e.g. 'value ~ attribute_group'), got {value!r}")
    return value.strip()


def _formulas(value: list) -> list[str]:
    return [_formula(str(v)) for v in value]


def _slopes(value: dict) -> dict[str, str]:
    out = {}
    for column, terms in value.items():
        if not isinstance(terms, str) or not terms.strip().lstrip("~").strip():
            raise ValueError(
                f"give the random slopes of {column!r} as a formula's right-hand side (e.g. 'age_c + C(race)'), "
                f"got {terms!r}"
            )
        out[str(column)] = terms.strip().lstrip("~").strip()
    return out


class LMMAnalysis(Analysis):
    """Linear mixed model(s) of the table's columns with random intercepts, and random slopes where declared.

    ``formula`` is a patsy/R-style formula over the table's columns (``value ~ attribute_group``;
    ``C(x)`` makes a column categorical, ``a * b`` adds an interaction). ``random`` names the
    grouping columns with random intercepts (default ``model``; several are crossed). ``slopes``
    declares random slopes for a grouping column: ``{"model": "attribute_group"}`` lets the effect
    of ``attribute_group`` vary by model (lme4's ``(1 + attribute_group | model)``; statsmodels'
    ``re_formula``), with an unstructured covariance of the model's random intercept and slopes
    (Laird & Ware, 1982); one grouping column only. Each formula in ``nested`` is fitted on the same
    rows, with the same random effects, and compared with the one before it by a likelihood-ratio
    test on maximum-likelihood refits, and by AIC/BIC.

    One row per estimate: ``kind`` is ``fixed`` (estimate, SE, z, p, Wald CI), ``variance``
    (random-intercept, random-slope and residual variances), ``covariance`` (of the random
    intercept and slopes, with ``slopes``), ``r2`` (Nakagawa & Schielzeth marginal and
    conditional; Johnson's extension with random slopes), ``fit`` (log-likelihood, AIC, BIC of
    the ML fit) or ``lrt``. Convergence problems appear in the ``warnings`` and ``converged``
    columns and as Python warnings. Formulas: :mod:`assoc.stats.mixed`.
    """

    name = "lmm"
    requires = Requirement(
        needs="at least 2 levels of each random-intercept column ('random', default model)",
        at_least={"random": 2},
        instead="score more models, or fit without random intercepts with regress",
    )
    description = (
        "Linear mixed models (random intercepts for models; random slopes where declared), R^2 (Nakagawa & "
        "Schielzeth), LRT and AIC."
    )
    citation = (
        "Nakagawa, S., & Schielzeth, H. (2013). Methods in Ecology and Evolution, 4(2), 133-142. "
        "doi:10.1111/j.2041-210x.2012.00261.x"
    )
    options = (
        Option(
            "formula",
            str,
            REQUIRED,
            "model formula over the table's columns, e.g. 'value ~ attribute_group'",
            check=_formula,
        ),
        Option(
            "nested", list, [], "further formulas, each compared with the previous one by LRT and AIC", check=_formulas
        ),
        Option("random", list, ["model"], "grouping columns with random intercepts", check=column_list),
        Option(
            "slopes",
            dict,
            {},
            "random slopes: {grouping column: right-hand side}, e.g. {model: attribute_group} (one grouping column)",
            check=_slopes,
        ),
        Option("reml", bool, True, "estimate by REML (true) or ML (false); comparisons always use ML"),
        Option("confidence", float, 0.95, "confidence level of the Wald intervals", check=confidence_level),
        *PREDICTOR_TABLE_OPTIONS,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Fit the linear mixed model and test the fixed effect."""
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.mixed import fit_mixed, likelihood_ratio_test, model_columns, random_slopes

        p = self.params
        data, unmatched = table, 0
        if p["criterion"] is not None:
            data, _, unmatched = merge_criterion_rows(
                table, criterion=p["criterion"], key=p["key"], criterion_key=p["criterion_key"]
            )
        random = p["random"]
        require_columns(data, random, what="lmm")
        slopes = random_slopes(p["slopes"], random)
        formulas = [p["formula"], *p["nested"]]
        if len(set(formulas)) != len(formulas):
            raise DataError("lmm: a formula is listed twice")
        written = [*formulas, *slopes.values()]
        used = sorted({c for f in written for c in model_columns(f, list(data.columns))} | set(random))
        complete = data.dropna(subset=used).reset_index(drop=True)
        n_dropped = len(data) - len(complete)
        if len(complete) == 0:
            raise DataError(f"lmm: no complete rows in columns {used}")
        for column in random:
            lost = sorted(set(data[column].dropna().astype(str)) - set(complete[column].astype(str)))
            if lost and complete[column].nunique() < 2:
                raise DataError(
                    f"lmm: random intercepts for {column!r} need at least 2 groups, but after dropping "
                    f"{n_dropped} row(s) with missing values only {complete[column].nunique()} is left "
                    f"(every row of {', '.join(map(repr, lost))} has a missing value, e.g. out of vocabulary)"
                )

        rows: list[dict[str, Any]] = []
        ml_fits = []
        for formula in formulas:
            fit = fit_mixed(complete, formula, random, reml=p["reml"], slopes=slopes)
            ml = fit if not p["reml"] else fit_mixed(complete, formula, random, reml=False, slopes=slopes)
            ml_fits.append(ml)
            common = {
                "formula": formula,
                "n_obs": fit.n_obs,
                "n_rows_dropped": n_dropped,
                "n_keys_without_criterion": unmatched,
                "n_groups": ",".join(f"{k}={v}" for k, v in fit.n_groups.items()),
            }
            est_info = {
                "method": "REML" if fit.reml else "ML",
                "converged": fit.converged,
                "warnings": "; ".join(fit.warnings),
            }
            for _, fe in fit.fixed_effects(p["confidence"]).iterrows():
                rows.append(
                    {
                        **common,
                        "kind": "fixed",
                        "term": fe["term"],
                        "estimate": fe["estimate"],
                        "se": fe["se"],
                        "statistic": fe["z"],
                        "p_value": fe["p_value"],
                        "ci_low": fe["ci_low"],
                        "ci_high": fe["ci_high"],
                        "confidence": p["confidence"],
                        **est_info,
                    }
                )
            for name, variance in fit.variance_components().items():
                rows.append({**common, "kind": "variance", "term": name, "estimate": variance, **est_info})
            for name, covariance in fit.random_covariances().items():
                rows.append({**common, "kind": "covariance", "term": name, "estimate": covariance, **est_info})
            marginal, conditional = fit.r_squared()
            rows.append({**common, "kind": "r2", "term": "marginal", "estimate": marginal, **est_info})
            rows.append({**common, "kind": "r2", "term": "conditional", "estimate": conditional, **est_info})
            ml_info = {"method": "ML", "converged": ml.converged, "warnings": "; ".join(ml.warnings)}
            for term, value in (("loglik", ml.loglik), ("AIC", ml.aic()), ("BIC", ml.bic())):
                rows.append({**common, "kind": "fit", "term": term, "estimate": value, "df": ml.n_params, **ml_info})
        for (prev_f, prev), (this_f, this) in zip(zip(formulas, ml_fits), zip(formulas[1:], ml_fits[1:])):
            lrt = likelihood_ratio_test(prev, this)
            rows.append(
                {
                    "formula": this_f,
                    "kind": "lrt",
                    "term": f"{prev_f} vs {this_f}",
                    "estimate": lrt.delta_aic,
                    "statistic": lrt.chi2,
                    "df": lrt.df,
                    "p_value": lrt.p_value,
                    "delta_aic": lrt.delta_aic,
                    "delta_bic": lrt.delta_bic,
                    "n_obs": this.n_obs,
                    "method": "ML",
                    "converged": prev.converged and this.converged,
                    "warnings": "; ".join([*prev.warnings, *this.warnings]),
                }
            )
        columns = [
            "formula",
            "kind",
            "term",
            "estimate",
            "se",
            "statistic",
            "df",
            "p_value",
            "ci_low",
            "ci_high",
            "confidence",
            "delta_aic",
            "delta_bic",
            "n_obs",
            "n_groups",
            "n_rows_dropped",
            "n_keys_without_criterion",
            "method",
            "converged",
            "warnings",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)
