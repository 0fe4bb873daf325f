"""Differentiability of stereotype direction and representativeness (Nicolas & Caliskan, 2024).

Per content dimension ``D`` (Warmth, Competence, ...), with one row per term ``t`` of category
``c[t]`` (the term's ``target_group``), the representativeness of the term's stereotypes is
regressed on a quadratic function of their direction, with a random intercept per category::

    repr_t = b0 + b1 dir_t + b2 dir_t^2 + u_{c[t]} + e_t,   u ~ N(0, s_u^2),  e ~ N(0, s_e^2)

The quadratic term lets representativeness rise towards both extremes of direction (a term
can be strongly about Warmth by being very warm or very cold). The share of representativeness
variance the direction explains is the marginal R^2 of Nakagawa & Schielzeth (2013)::

    R^2_marginal = s_f^2 / (s_f^2 + s_u^2 + s_e^2),   s_f^2 = var(b0 + b1 dir_t + b2 dir_t^2)

(:meth:`assoc.stats.mixed.MixedFit.r_squared`). A small R^2 means the two components are
differentiable: knowing where a term's stereotypes fall on a dimension says little about how
much they are about it. The paper reports marginal R^2 of .033-.063 for category terms and
.045-.366 for surnames. Terms without a direction (no response in the dimension's dictionary)
have no ``dir_t`` and are left out (counted). Without a grouping column (``random`` empty) the
model is fitted by OLS and R^2 is the ordinary one.

References
----------
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
    Nakagawa, S., & Schielzeth, H. (2013). A general and simple method for obtaining R^2 from
        generalized linear mixed-effects models. Methods in Ecology and Evolution, 4(2), 133-142.
        doi:10.1111/j.2041-210x.2012.00261.x
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from assoc.errors import DataError

#: The model, over the columns ``representativeness`` and ``direction`` of one dimension.
FORMULA = "representativeness ~ direction + I(direction ** 2)"
LINEAR_FORMULA = "representativeness ~ direction"


@dataclass
class DifferentiabilityFit:
    """The fitted model of one dimension, its R^2 and the rows it used."""

    fit: Any  # MixedFit or OLSFit
    r2_marginal: float
    r2_conditional: float  # equals r2_marginal for OLS
    n_terms: int
    n_without_direction: int
    n_groups: int
    warnings: list[str] = field(default_factory=list)


def fit_differentiability(
    representativeness: Sequence[float],
    direction: Sequence[float],
    groups: Sequence[Any] | None,
    *,
    quadratic: bool = True,
    reml: bool = True,
) -> DifferentiabilityFit:
    """Fit ``repr ~ dir (+ dir^2)`` with random intercepts per group (module docstring).

    Parameters
    ----------
    representativeness, direction
        Per-term estimates of one dimension; terms with a missing direction are left out.
    groups
        The category of each term (random intercept), or ``None`` for an OLS fit.
    quadratic
        Include ``dir^2`` (the paper's model).
    reml
        Estimate the mixed model by REML (lme4's default) or ML.
    """
    from assoc.stats.mixed import fit_mixed
    from assoc.stats.regression import fit_ols

    frame = pd.DataFrame(
        {
            "representativeness": pd.to_numeric(pd.Series(list(representativeness)), errors="raise"),
            "direction": pd.to_numeric(pd.Series(list(direction)), errors="raise"),
        }
    )
    if groups is not None:
        frame["category"] = list(groups)
    missing = frame["direction"].isna() | frame["representativeness"].isna()
    data = frame[~missing].reset_index(drop=True)
    formula = FORMULA if quadratic else LINEAR_FORMULA
    n_coef = 3 if quadratic else 2
    if len(data) <= n_coef + 1:
        raise DataError(
            f"differentiability: {len(data)} term(s) with a direction; the model {formula!r} needs "
            f"more than {n_coef + 1}"
        )
    if data["direction"].nunique() < n_coef:
        raise DataError(
            f"differentiability: direction takes {data['direction'].nunique()} distinct value(s); "
            f"the model {formula!r} needs at least {n_coef}"
        )
    if groups is None:
        ols = fit_ols(data, formula)
        r2 = float(ols.result.rsquared)
        return DifferentiabilityFit(ols, r2, r2, len(data), int(missing.sum()), 0)
    mixed = fit_mixed(data, formula, ["category"], reml=reml)
    marginal, conditional = mixed.r_squared()
    return DifferentiabilityFit(
        mixed,
        marginal,
        conditional,
        len(data),
        int(missing.sum()),
        int(data["category"].nunique()),
        list(mixed.warnings),
    )
