"""``differentiability``: how much of representativeness a quadratic in direction explains (marginal R^2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import MODEL_BY_OPTION, by_columns, column_list, groups, require_columns
from assoc.components.options import Option

if TYPE_CHECKING:
    import pandas as pd


class DifferentiabilityAnalysis(Analysis):
    """Per dimension, representativeness ~ direction + direction^2 with category random intercepts.

    Reads the output of the ``stereotype`` analysis (long or wide), one row per term. For each
    ``by`` group (default: each scorer and model) and each dimension, fits the model of
    :mod:`assoc.stats.differentiability` with a random intercept per ``random`` column (default
    ``target_group``, the term's category; an empty list fits OLS) and reports the
    Nakagawa & Schielzeth marginal and conditional R^2 (Nicolas & Caliskan, 2024, "variance
    explained"). Terms with no direction on a dimension (none of their words in its dictionary)
    are left out of that dimension's model and counted.

    One row per estimate: ``kind`` is ``r2`` (term ``marginal`` / ``conditional``), ``fixed``
    (intercept, direction, direction^2: estimate, SE, z, p, CI) or ``variance``; ``dimension``,
    ``n_terms``, ``n_without_direction``, ``n_groups``, ``converged``, ``identified`` and ``warnings`` say what
    each rests on.
    """

    name = "differentiability"
    requires = Requirement(
        needs="the output of the stereotype analysis (long or wide: representativeness and direction per term)",
        measures=("representativeness", "direction"),
        instead="run stereotype on a listing table first (assoc analyze stereotype ... --out coded.csv)",
    )
    #: reads the stereotype output in either shape (wide is no association table) or any table
    requires_association_table = False
    description = (
        "Differentiability of stereotype direction and representativeness: marginal R^2 of "
        "representativeness ~ direction + direction^2 with category random intercepts."
    )
    citation = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable "
        "components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493; Nakagawa, S., & Schielzeth, H. (2013). Methods in Ecology and "
        "Evolution, 4(2), 133-142. doi:10.1111/j.2041-210x.2012.00261.x"
    )
    options = (
        Option(
            "dimensions", list, None, "dimensions to analyse, any case (default: all in the table)", check=column_list
        ),
        Option(
            "random",
            list,
            ["target_group"],
            "grouping column(s) with random intercepts (the category); an empty list fits OLS",
            check=column_list,
        ),
        MODEL_BY_OPTION,
        Option("quadratic", bool, True, "include direction^2 (the paper's model); false: linear only"),
        Option("reml", bool, True, "estimate the mixed model by REML (true, lme4's default) or ML"),
        Option("confidence", float, 0.95, "confidence level of the coefficient intervals"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Fit the differentiability model per ``by`` group and dimension."""
        import pandas as pd

        from assoc.analysis.stereotype import pick_dimensions, stereotype_wide
        from assoc.errors import DataError
        from assoc.stats.differentiability import fit_differentiability
        from assoc.stats.mixed import MixedFit

        p = self.params
        wide, stems = stereotype_wide(table, what="differentiability")
        dimensions = pick_dimensions(p["dimensions"], stems, what="differentiability")
        by = by_columns(p["by"], wide)
        random = p["random"]
        if len(random) > 1:
            raise DataError("differentiability: give at most one random-intercept column (the category)")
        require_columns(wide, [*by, *random], what="differentiability")
        rows: list[dict[str, Any]] = []
        failures: list[str] = []
        for key, part in groups(wide, by):
            for dim in dimensions:
                try:
                    res = fit_differentiability(
                        part[f"{dim}_representativeness"],
                        part[f"{dim}_direction"],
                        part[random[0]] if random else None,
                        quadratic=p["quadratic"],
                        reml=p["reml"],
                    )
                except DataError as exc:  # too few terms with a direction here: reported, the others go on
                    label = ", ".join(f"{k}={v}" for k, v in key.items())
                    failures.append(f"{label + ', ' if label else ''}{dim}: {exc}")
                    n_dir = int(part[f"{dim}_direction"].notna().sum())
                    for term in ("marginal", "conditional"):
                        rows.append(
                            {
                                **key,
                                "dimension": dim,
                                "kind": "r2",
                                "term": term,
                                "estimate": float("nan"),
                                "n_terms": n_dir,
                                "n_without_direction": len(part) - n_dir,
                                "converged": False,
                                "warnings": str(exc),
                            }
                        )
                    continue
                notes = list(res.warnings)
                # With one term per category the category intercepts and the residuals are the same
                # deviations: their variances cannot be told apart, so the fit (and its R^2) is arbitrary.
                identified = not (random and res.n_groups >= res.n_terms)
                if not identified:
                    import warnings

                    label = ", ".join(f"{k}={v}" for k, v in key.items())
                    note = (
                        f"every {random[0]} has one term ({res.n_groups} groups, {res.n_terms} terms): the "
                        f"{random[0]} and residual variances cannot be told apart, so the mixed model is not "
                        "identified and its R^2 means nothing; fit OLS with random=[] (--option random=[])"
                    )
                    notes.append(note)
                    warnings.warn(f"differentiability: {label + ', ' if label else ''}{dim}: {note}", stacklevel=2)
                common = {
                    **key,
                    "dimension": dim,
                    "n_terms": res.n_terms,
                    "n_without_direction": res.n_without_direction,
                    "n_groups": res.n_groups,
                    "method": ("REML" if p["reml"] else "ML") if random else "OLS",
                    "converged": bool(getattr(res.fit, "converged", True)),
                    "identified": identified,
                    "warnings": "; ".join(notes),
                }
                rows.append({**common, "kind": "r2", "term": "marginal", "estimate": res.r2_marginal})
                rows.append({**common, "kind": "r2", "term": "conditional", "estimate": res.r2_conditional})
                if isinstance(res.fit, MixedFit):
                    coefficients = res.fit.fixed_effects(p["confidence"]).rename(columns={"z": "statistic"})
                    for name, variance in res.fit.variance_components().items():
                        rows.append(
                            {
                                **common,
                                "kind": "variance",
                                "term": "category" if name != "residual" else name,
                                "estimate": variance,
                            }
                        )
                else:
                    coefficients = res.fit.coefficients(p["confidence"]).rename(columns={"t": "statistic"})
                for _, c in coefficients.iterrows():
                    rows.append(
                        {
                            **common,
                            "kind": "fixed",
                            "term": c["term"],
                            "estimate": c["estimate"],
                            "se": c["se"],
                            "statistic": c["statistic"],
                            "p_value": c["p_value"],
                            "ci_low": c["ci_low"],
                            "ci_high": c["ci_high"],
                        }
                    )
        if failures:
            if not any(r["kind"] == "fixed" for r in rows):  # no model at all
                raise DataError("; ".join(failures))
            import warnings

            warnings.warn(
                f"differentiability: no model for {len(failures)} group/dimension(s): " + "; ".join(failures),
                RuntimeWarning,
                stacklevel=2,
            )
        columns = [
            *by,
            "dimension",
            "kind",
            "term",
            "estimate",
            "se",
            "statistic",
            "p_value",
            "ci_low",
            "ci_high",
            "n_terms",
            "n_without_direction",
            "n_groups",
            "method",
            "converged",
            "identified",
            "warnings",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)
