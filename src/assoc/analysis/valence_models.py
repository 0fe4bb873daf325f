"""``valence_models``: nested mixed models of general valence on stereotype direction and representativeness."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    MODEL_BY_OPTION,
    PREDICTOR_TABLE_OPTIONS,
    by_columns,
    column_list,
    confidence_level,
    groups,
    require_columns,
)
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


class ValenceModelsAnalysis(Analysis):
    """Three nested models of valence (Nicolas & Caliskan, 2024, Tables 2 and 4).

    Reads the ``stereotype`` output (long or wide; one row per term) and a ``valence`` column,
    either in the table or joined from ``criterion`` on ``key`` (e.g. human ratings per term,
    or a chat model's valence ratings). Fits, for each ``by`` group (default: scorer and model),
    the models of :mod:`assoc.stats.valence_models` with a random intercept per ``random``
    column (default ``target_group``; none: OLS, t tests, R^2): (1) valence ~ directions, (2) + representativeness,
    (3) + direction x representativeness, on the same complete terms.

    One row per estimate: ``kind`` is ``fixed`` (``step`` 1-3, the model's number; estimate, SE, z, p, CI, from
    the REML fit unless ``reml`` is false), ``fit`` (marginal/conditional R^2, and loglik, AIC,
    BIC of the ML fit) or ``comparison`` (model ``step`` vs the one before: ``chi2``, ``df``, ``p_value``,
    ``delta_aic``, ``delta_bic`` and ``aic_decrease_ge_2``, the paper's rule, reported only).
    """

    name = "valence_models"
    requires = Requirement(
        needs="the output of the stereotype analysis (long or wide: representativeness and direction per term)",
        measures=("representativeness", "direction"),
        instead="run stereotype on a listing table first (assoc analyze stereotype ... --out coded.csv)",
    )
    #: reads the stereotype output in either shape (wide is no association table) or any table
    requires_association_table = False
    description = (
        "Nested mixed models of valence on stereotype direction, representativeness and their "
        "interaction: chi^2 and AIC/Delta AIC between successive models."
    )
    citation = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable "
        "components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493"
    )
    options = (
        Option("valence", str, REQUIRED, "the valence column (in the table, or in the criterion table)"),
        Option(
            "dimensions",
            list,
            None,
            "dimensions, any case (default: all in the table; the paper: Warmth, Competence)",
            check=column_list,
        ),
        Option(
            "random",
            list,
            ["target_group"],
            "grouping column(s) with random intercepts (the category); "
            "an empty list fits OLS (e.g. one term per category)",
            check=column_list,
        ),
        MODEL_BY_OPTION,
        Option("reml", bool, True, "coefficients from REML fits (lme4's default); comparisons always use ML"),
        Option("confidence", float, 0.95, "confidence level of the coefficient intervals", check=confidence_level),
        *PREDICTOR_TABLE_OPTIONS,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Fit the three nested models per ``by`` group and compare them."""
        import pandas as pd

        from assoc.analysis.inputs import merge_criterion_rows
        from assoc.analysis.stereotype import pick_dimensions, stereotype_wide
        from assoc.errors import DataError
        from assoc.stats.mixed import fit_mixed, likelihood_ratio_test
        from assoc.stats.regression import fit_ols
        from assoc.stats.valence_models import AIC_RULE_POINTS, nested_valence_formulas

        p = self.params
        wide, stems = stereotype_wide(table, what="valence_models")
        unmatched = 0
        if p["criterion"] is not None:
            wide, _, unmatched = merge_criterion_rows(
                wide, criterion=p["criterion"], key=p["key"], criterion_key=p["criterion_key"]
            )
        dims = pick_dimensions(p["dimensions"], stems, what="valence_models")
        valence = p["valence"]
        if not valence.isidentifier():
            raise DataError(
                f"valence_models: the valence column name {valence!r} must be a Python identifier "
                f"(letters, digits, '_'); rename it"
            )
        by = by_columns(p["by"], wide)
        require_columns(wide, [valence, *p["random"], *by], what="valence_models")
        formulas = nested_valence_formulas(valence, dims)
        used = [valence, *p["random"], *(f"{d}_{m}" for d in dims for m in ("direction", "representativeness"))]
        rows: list[dict[str, Any]] = []
        for key, part in groups(wide, by):
            complete = part.dropna(subset=used).reset_index(drop=True)
            common = {
                **key,
                "n_obs": len(complete),
                "n_terms_dropped": len(part) - len(complete),
                "n_keys_without_criterion": unmatched,
            }
            ml_fits: list[Any] = []
            for number, formula in enumerate(formulas, 1):
                fit: Any
                ml: Any
                if p["random"]:
                    fit = fit_mixed(complete, formula, p["random"], reml=p["reml"])
                    ml = fit if not p["reml"] else fit_mixed(complete, formula, p["random"], reml=False)
                    coefficients = fit.fixed_effects(p["confidence"]).rename(columns={"z": "statistic"})
                    marginal, conditional = fit.r_squared()
                    notes = [*fit.warnings, *ml.warnings]
                    converged = fit.converged and ml.converged
                else:  # no grouping column: OLS, whose ML fit is the OLS fit
                    fit = ml = fit_ols(complete, formula)
                    coefficients = fit.coefficients(p["confidence"]).rename(columns={"t": "statistic"})
                    marginal = conditional = float(fit.result.rsquared)
                    notes, converged = [], True
                ml_fits.append(ml)
                info = {
                    **common,
                    "step": number,
                    "formula": formula,
                    "converged": converged,
                    "warnings": "; ".join(dict.fromkeys(notes)),
                }
                for _, fe in coefficients.iterrows():
                    rows.append(
                        {
                            **info,
                            "kind": "fixed",
                            "term": fe["term"],
                            "estimate": fe["estimate"],
                            "se": fe["se"],
                            "statistic": fe["statistic"],
                            "p_value": fe["p_value"],
                            "ci_low": fe["ci_low"],
                            "ci_high": fe["ci_high"],
                        }
                    )
                for term, value in (
                    ("r2_marginal", marginal),
                    ("r2_conditional", conditional),
                    ("loglik", ml.loglik),
                    ("AIC", ml.aic()),
                    ("BIC", ml.bic()),
                ):
                    rows.append({**info, "kind": "fit", "term": term, "estimate": value})
                if number > 1:
                    lrt = likelihood_ratio_test(ml_fits[-2], ml)
                    rows.append(
                        {
                            **info,
                            "kind": "comparison",
                            "term": f"model {number - 1} vs {number}",
                            "estimate": lrt.chi2,
                            "chi2": lrt.chi2,
                            "df": lrt.df,
                            "p_value": lrt.p_value,
                            "delta_aic": lrt.delta_aic,
                            "delta_bic": lrt.delta_bic,
                            "aic_decrease_ge_2": bool(lrt.delta_aic <= -AIC_RULE_POINTS),
                        }
                    )
        columns = [
            *by,
            "step",
            "kind",
            "term",
            "estimate",
            "se",
            "statistic",
            "p_value",
            "ci_low",
            "ci_high",
            "chi2",
            "df",
            "delta_aic",
            "delta_bic",
            "aic_decrease_ge_2",
            "formula",
            "n_obs",
            "n_terms_dropped",
            "n_keys_without_criterion",
            "converged",
            "warnings",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)
