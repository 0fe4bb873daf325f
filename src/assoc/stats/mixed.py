"""Linear mixed models with random intercepts and slopes (statsmodels ``MixedLM``), R^2 and likelihood-ratio tests.

Model: ``y = X beta + sum_g Z_g u_g + e`` with ``u_g ~ N(0, sigma_g^2 I)`` one random intercept per
level of each grouping column ``g`` and ``e ~ N(0, sigma_e^2 I)``. One grouping column is fitted as
statsmodels' ``groups``; several (crossed, e.g. model and sentence frame) as variance components
within a single all-encompassing group.

Random slopes (one grouping column ``g``; Laird & Ware, 1982): for each level ``j`` of ``g``,

    y_j = X_j beta + Z_j b_j + e_j,    b_j ~ N(0, Sigma),    e_j ~ N(0, sigma_e^2 I),

where the columns of ``Z_j`` are the design of a right-hand side formula (``"age_c + C(race)"``: an
intercept, the age slope and one column per non-reference race, as patsy codes the fixed effects;
statsmodels' ``re_formula``; lme4's ``(1 + age_c + race | g)``) and ``Sigma`` is unstructured: a
variance per random term and a covariance per pair. ``0 + x`` drops the random intercept. Estimated by
REML (default) or ML (statsmodels' ``MixedLM.fit``: gradient optimisers, with the derivative-free
fallbacks below). Fixed effects are the generalised-least-squares estimates at the estimated
``Sigma`` and ``sigma_e^2``; their standard errors come from ``(X' V^-1 X)^-1``.

Fixed effects are reported with Wald z tests and normal intervals, ``beta_hat -/+ z_{1-a/2} SE``
(as statsmodels and ``lme4``'s Wald intervals do).

Variance explained (Nakagawa & Schielzeth, 2013, eqs. 26-27)::

    sigma_f^2 = var(X beta_hat)            (sample variance, n - 1, as MuMIn::r.squaredGLMM)
    R^2_marginal    = sigma_f^2 / (sigma_f^2 + sum_g sigma_g^2 + sigma_e^2)
    R^2_conditional = (sigma_f^2 + sum_g sigma_g^2) / (sigma_f^2 + sum_g sigma_g^2 + sigma_e^2)

With random slopes the random-effect variance is the mean over the rows of ``z_i' Sigma z_i``
(``z_i`` the row's random-effects design; Johnson, 2014, eq. 10, as MuMIn::r.squaredGLMM), which is
``sigma_g^2`` for a random intercept alone.

Nested models are compared by the likelihood-ratio test ``chi^2 = 2 (l_1 - l_0)`` on
``k_1 - k_0`` df, both fitted by maximum likelihood (REML likelihoods are not comparable when
the fixed effects differ; Pinheiro & Bates, 2000, sec. 2.4.2), and by
``AIC = -2 l + 2 k`` and ``BIC = -2 l + k ln(n)``, where ``k`` counts fixed effects, variance
(and, with random slopes, covariance) parameters and the residual variance (as statsmodels and lme4).

Convergence problems (statsmodels ``ConvergenceWarning``, a Hessian that is not positive
definite, variance estimates on the boundary) are collected and returned with the fit, and
re-issued as Python warnings, never silently dropped.

References
----------
    Johnson, P. C. D. (2014). Extension of Nakagawa & Schielzeth's R^2_GLMM to random slopes
        models. Methods in Ecology and Evolution, 5(9), 944-946. doi:10.1111/2041-210X.12225
    Laird, N. M., & Ware, J. H. (1982). Random-effects models for longitudinal data. Biometrics,
        38(4), 963-974. doi:10.2307/2529876
    Nakagawa, S., & Schielzeth, H. (2013). A general and simple method for obtaining R^2 from
        generalized linear mixed-effects models. Methods in Ecology and Evolution, 4(2), 133-142.
        doi:10.1111/j.2041-210x.2012.00261.x
    Pinheiro, J. C., & Bates, D. M. (2000). Mixed-Effects Models in S and S-PLUS. Springer.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from assoc.errors import DataError
from assoc.stats.information import InformationCriteria


@dataclass
class MixedFit(InformationCriteria):
    """A fitted mixed model (random intercepts, and random slopes where declared) and what is needed to report it.

    ``slopes`` maps the grouping column to the right-hand side of its random-effects formula (empty
    for random intercepts alone); ``random_terms`` names the columns of that design (``Intercept``
    for the random intercept), in the order of ``result.cov_re``.
    """

    formula: str
    random: tuple[str, ...]
    reml: bool
    result: Any  # statsmodels MixedLMResults
    n_obs: int
    n_groups: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    slopes: dict[str, str] = field(default_factory=dict)
    random_terms: tuple[str, ...] = ()

    @property
    def converged(self) -> bool:
        """Whether the optimiser reported convergence."""
        return bool(self.result.converged)

    @property
    def loglik(self) -> float:
        """The maximised log-likelihood."""
        return float(self.result.llf)

    @property
    def n_params(self) -> int:
        """Fixed effects + variance parameters + residual variance."""
        return int(self.result.params.size + 1)

    def variance_components(self) -> dict[str, float]:
        """Random-effect variances, and the residual variance (key ``residual``).

        Random intercepts alone: one variance per grouping column, keyed by the column. With random
        slopes for grouping column ``g``: the random intercept's variance under ``g`` and each slope's
        variance under ``"g: term"`` (the term as patsy names the design column, e.g. ``age_c`` or
        ``C(race)[T.black]``).
        """
        res = self.result
        if self.slopes:
            group = self.random[0]
            cov = np.asarray(res.cov_re)
            out = {_random_name(group, t): float(cov[i, i]) for i, t in enumerate(self.random_terms)}
            out["residual"] = float(res.scale)
            return out
        if len(self.random) == 1:
            out = {self.random[0]: float(np.asarray(res.cov_re)[0, 0])}
        else:
            out = {name: float(v) for name, v in zip(self.random, np.asarray(res.vcomp))}
        out["residual"] = float(res.scale)
        return out

    def random_covariances(self) -> dict[str, float]:
        """Covariances of the random effects of one grouping column (random slopes only; else empty).

        Keyed ``"g: cov(a, b)"`` for each pair of random terms ``a`` before ``b`` in the design.
        """
        if not self.slopes:
            return {}
        group = self.random[0]
        cov = np.asarray(self.result.cov_re)
        terms = self.random_terms
        return {
            f"{group}: cov({terms[i]}, {terms[j]})": float(cov[i, j])
            for i in range(len(terms))
            for j in range(i + 1, len(terms))
        }

    def random_variance(self) -> float:
        """The variance of the random effects summed over grouping columns, averaged over the rows.

        ``sum_g sigma_g^2`` for random intercepts; with random slopes ``mean_i z_i' Sigma z_i``
        (Johnson, 2014), ``z_i`` the row's random-effects design and ``Sigma`` their covariance.
        """
        components = self.variance_components()
        components.pop("residual")
        if not self.slopes:
            return float(sum(components.values()))
        design = np.asarray(self.result.model.exog_re)
        cov = np.asarray(self.result.cov_re)
        return float(np.mean(np.einsum("ij,jk,ik->i", design, cov, design)))

    def fixed_effects(self, confidence: float = 0.95) -> pd.DataFrame:
        """term, estimate, se, z, p_value, ci_low, ci_high."""
        res = self.result
        beta = res.fe_params
        se = pd.Series(np.asarray(res.bse_fe), index=beta.index)
        z = beta / se
        crit = stats.norm.ppf(1 - (1 - confidence) / 2)
        return pd.DataFrame(
            {
                "term": beta.index,
                "estimate": beta.to_numpy(),
                "se": se.to_numpy(),
                "z": z.to_numpy(),
                "p_value": 2 * stats.norm.sf(np.abs(z.to_numpy())),
                "ci_low": (beta - crit * se).to_numpy(),
                "ci_high": (beta + crit * se).to_numpy(),
            }
        )

    def r_squared(self) -> tuple[float, float]:
        """(marginal, conditional) R^2 of Nakagawa & Schielzeth (2013); see the module docstring."""
        res = self.result
        exog = np.asarray(res.model.exog)
        var_f = float(np.var(exog @ np.asarray(res.fe_params), ddof=1))
        var_e = self.variance_components()["residual"]
        var_r = self.random_variance()
        total = var_f + var_r + var_e
        return var_f / total, (var_f + var_r) / total


def _random_name(group: str, term: str) -> str:
    """How a random effect is named in the output: ``g`` for the random intercept, ``g: term`` for a slope."""
    return group if term == "Intercept" else f"{group}: {term}"


def random_slopes(slopes: Mapping[str, str] | None, random: Sequence[str]) -> dict[str, str]:
    """Check and normalise declared random slopes: ``{grouping column: right-hand side}``.

    The right-hand side is written as the right of a model formula (a leading ``~`` is dropped): the
    terms whose effects vary by the grouping column, with a random intercept unless it says ``0 +``.
    Every key must be one of ``random``; statsmodels fits random slopes for a single grouping column
    (crossed groupings are variance components, without slopes), so ``random`` must then hold one.
    """
    if not slopes:
        return {}
    out: dict[str, str] = {}
    for group, rhs in slopes.items():
        if not isinstance(rhs, str) or not rhs.strip().lstrip("~").strip():
            raise DataError(f"random slopes for {group!r}: give the terms as a formula's right-hand side, got {rhs!r}")
        if group not in random:
            raise DataError(
                f"random slopes for {group!r}: it is not a grouping column (random: {', '.join(map(repr, random))})"
            )
        out[str(group)] = rhs.strip().lstrip("~").strip()
    if len(random) != 1:
        raise DataError(
            f"random slopes need a single grouping column; random has {len(random)} "
            f"({', '.join(map(repr, random))}): statsmodels fits crossed groupings as variance components, "
            "without slopes"
        )
    return out


def model_columns(formula: str, columns: Sequence[str]) -> list[str]:
    """The table columns a formula refers to (so that every model is fitted on the same rows)."""
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    return [c for c in columns if c in tokens]


def fit_mixed(
    data: pd.DataFrame,
    formula: str,
    random: Sequence[str],
    *,
    reml: bool = True,
    slopes: Mapping[str, str] | None = None,
) -> MixedFit:
    """Fit a linear mixed model: ``formula``'s fixed effects, random effects by the columns in ``random``.

    Parameters
    ----------
    data:
        The rows to fit (complete in every column the model uses).
    formula:
        A patsy/R-style model formula, ``"value ~ x + C(group)"``.
    random:
        Grouping columns with a random intercept each (several are crossed variance components).
    reml:
        Estimate by restricted maximum likelihood (default) or by maximum likelihood.
    slopes:
        Random slopes: ``{grouping column: right-hand side}``, e.g. ``{"question": "age_c + C(race)"}``
        (statsmodels' ``re_formula``; lme4's ``(1 + age_c + race | question)``), with an unstructured
        covariance of the random intercept and slopes; see :func:`random_slopes` and the module docstring.

    Returns
    -------
    MixedFit
        The fit, with the optimiser's warnings (also re-issued as Python warnings).
    """
    import statsmodels.formula.api as smf
    from patsy import PatsyError

    random = tuple(random)
    slopes = random_slopes(slopes, random)
    if not random:
        raise DataError("a mixed model needs at least one grouping column for random intercepts")
    missing = [c for c in random if c not in data.columns]
    if missing:
        raise DataError(f"no grouping column(s) {', '.join(map(repr, missing))} in the data")
    n_groups = {c: int(data[c].nunique()) for c in random}
    few = {c: n for c, n in n_groups.items() if n < 2}
    if few:
        raise DataError(f"random intercepts need at least 2 groups; {few}")
    random_terms: tuple[str, ...] = ()
    try:
        if slopes:
            import patsy

            rhs = slopes[random[0]]
            # the design's column names as patsy gives them (statsmodels renames the intercept)
            random_terms = tuple(patsy.dmatrix(rhs, data, return_type="matrix").design_info.column_names)
            model = smf.mixedlm(formula, data, groups=data[random[0]], re_formula=rhs)
        elif len(random) == 1:
            model = smf.mixedlm(formula, data, groups=data[random[0]])
        else:
            vc = {c: f"0 + C(Q('{c}'))" for c in random}
            model = smf.mixedlm(formula, data.assign(_all_=1), groups="_all_", re_formula="0", vc_formula=vc)
    except (PatsyError, ValueError, KeyError, NameError) as exc:
        what = f"{formula!r} with random slopes {slopes}" if slopes else repr(formula)
        raise DataError(f"cannot fit the mixed model {what}: {exc}") from None

    # statsmodels' gradient optimisers (bfgs, then lbfgs and cg) can fail or hit a singular
    # matrix when a variance goes to zero (a boundary fit); derivative-free optimisers then
    # usually still find the maximum. A fallback is kept only if it converges at least as
    # high a likelihood, and the switch is reported.
    notes: list[str] = []
    chosen: tuple[Any, list[str]] | None = None
    for method in (None, "powell", "nm"):
        label = method or "default (bfgs/lbfgs/cg)"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = model.fit(reml=reml) if method is None else model.fit(reml=reml, method=method)
            except (np.linalg.LinAlgError, ValueError) as exc:
                notes.append(f"optimiser {label} failed ({exc})")
                continue
        found = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
        if chosen is None or (result.converged and result.llf >= chosen[0].llf - 1e-8):
            if chosen is not None:
                notes.append(f"optimiser {label} used: the previous one did not converge")
            chosen = (result, found)
        elif result.converged:
            notes.append(f"optimiser {label} converged at a lower likelihood; the first fit was kept")
        if result.converged:
            break
        notes.append(f"optimiser {label} did not converge")
    if chosen is None:
        raise DataError(f"cannot fit the mixed model {formula!r}: {'; '.join(notes)}")
    result, found = chosen
    messages = notes + found
    if not result.converged and not any("converge" in m.lower() for m in found):
        messages.append("ConvergenceWarning: the optimiser did not report convergence")
    if messages:
        warnings.warn(
            f"mixed model {formula!r} ({'REML' if reml else 'ML'}): " + "; ".join(messages),
            RuntimeWarning,
            stacklevel=2,
        )
    return MixedFit(
        formula=formula,
        random=random,
        reml=reml,
        result=result,
        n_obs=int(result.nobs),
        n_groups=n_groups,
        warnings=messages,
        slopes=slopes,
        random_terms=random_terms,
    )


@dataclass(frozen=True)
class LikelihoodRatio:
    """A likelihood-ratio test of nested models, with the differences in AIC and BIC."""

    chi2: float
    df: int
    p_value: float
    delta_aic: float
    delta_bic: float


def likelihood_ratio_test(reduced: MixedFit | Any, full: MixedFit | Any) -> LikelihoodRatio:
    """LRT of a reduced model against a fuller one, both ML fits on the same rows.

    ``chi^2 = 2 (l_full - l_reduced)`` on ``k_full - k_reduced`` df. Works for :class:`MixedFit`
    and for anything with ``loglik``, ``n_params``, ``aic()``, ``bic()`` and ``n_obs``.
    """
    if getattr(reduced, "reml", False) or getattr(full, "reml", False):
        raise DataError("likelihood-ratio tests need maximum-likelihood fits (reml=False)")
    if reduced.n_obs != full.n_obs:
        raise DataError(f"the models were fitted on different rows ({reduced.n_obs} vs {full.n_obs})")
    df = full.n_params - reduced.n_params
    if df <= 0:
        raise DataError(
            f"the second model must have more parameters than the first to be compared "
            f"(got {reduced.n_params} and {full.n_params}); list nested models from small to large"
        )
    if isinstance(reduced, MixedFit) and isinstance(full, MixedFit):
        from assoc.stats.regression import design_is_nested

        if not design_is_nested(np.asarray(reduced.result.model.exog), np.asarray(full.result.model.exog)):
            raise DataError(
                f"{reduced.formula!r} is not nested in {full.formula!r}: its fixed effects are not "
                f"combinations of the fuller model's, so the likelihood-ratio test does not apply"
            )
    chi2 = 2 * (full.loglik - reduced.loglik)
    return LikelihoodRatio(
        chi2=float(chi2),
        df=int(df),
        p_value=float(stats.chi2.sf(max(chi2, 0.0), df)),
        delta_aic=float(full.aic() - reduced.aic()),
        delta_bic=float(full.bic() - reduced.bic()),
    )
