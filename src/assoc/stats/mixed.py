"""Linear mixed models with random intercepts (statsmodels ``MixedLM``), R^2 and likelihood-ratio tests.

Model: ``y = X beta + sum_g Z_g u_g + e`` with ``u_g ~ N(0, sigma_g^2 I)`` one random intercept per
level of each grouping column ``g`` and ``e ~ N(0, sigma_e^2 I)``. One grouping column is fitted as
statsmodels' ``groups``; several (crossed, e.g. model and sentence frame) as variance components
within a single all-encompassing group.

Fixed effects are reported with Wald z tests and normal intervals, ``beta_hat -/+ z_{1-a/2} SE``
(as statsmodels and ``lme4``'s Wald intervals do).

Variance explained (Nakagawa & Schielzeth, 2013, eqs. 26-27)::

    sigma_f^2 = var(X beta_hat)            (sample variance, n - 1, as MuMIn::r.squaredGLMM)
    R^2_marginal    = sigma_f^2 / (sigma_f^2 + sum_g sigma_g^2 + sigma_e^2)
    R^2_conditional = (sigma_f^2 + sum_g sigma_g^2) / (sigma_f^2 + sum_g sigma_g^2 + sigma_e^2)

Nested models are compared by the likelihood-ratio test ``chi^2 = 2 (l_1 - l_0)`` on
``k_1 - k_0`` df, both fitted by maximum likelihood (REML likelihoods are not comparable when
the fixed effects differ; Pinheiro & Bates, 2000, sec. 2.4.2), and by
``AIC = -2 l + 2 k`` and ``BIC = -2 l + k ln(n)``, where ``k`` counts fixed effects, variance
parameters and the residual variance (as statsmodels and lme4).

Convergence problems (statsmodels ``ConvergenceWarning``, a Hessian that is not positive
definite, variance estimates on the boundary) are collected and returned with the fit, and
re-issued as Python warnings, never silently dropped.

References
----------
    Nakagawa, S., & Schielzeth, H. (2013). A general and simple method for obtaining R^2 from
        generalized linear mixed-effects models. Methods in Ecology and Evolution, 4(2), 133-142.
        doi:10.1111/j.2041-210x.2012.00261.x
    Pinheiro, J. C., & Bates, D. M. (2000). Mixed-Effects Models in S and S-PLUS. Springer.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from assoc.errors import DataError
from assoc.stats.information import InformationCriteria


@dataclass
class MixedFit(InformationCriteria):
    """A fitted random-intercept model and what is needed to report it."""

    formula: str
    random: tuple[str, ...]
    reml: bool
    result: Any  # statsmodels MixedLMResults
    n_obs: int
    n_groups: dict[str, int]
    warnings: list[str] = field(default_factory=list)

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
        """Random-intercept variances by grouping column, and the residual variance."""
        res = self.result
        if len(self.random) == 1:
            out = {self.random[0]: float(np.asarray(res.cov_re)[0, 0])}
        else:
            out = {name: float(v) for name, v in zip(self.random, np.asarray(res.vcomp))}
        out["residual"] = float(res.scale)
        return out

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
        components = self.variance_components()
        var_e = components.pop("residual")
        var_r = float(sum(components.values()))
        total = var_f + var_r + var_e
        return var_f / total, (var_f + var_r) / total


def model_columns(formula: str, columns: Sequence[str]) -> list[str]:
    """The table columns a formula refers to (so that every model is fitted on the same rows)."""
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))
    return [c for c in columns if c in tokens]


def fit_mixed(data: pd.DataFrame, formula: str, random: Sequence[str], *, reml: bool = True) -> MixedFit:
    """Fit ``formula`` with random intercepts for each column in ``random`` (see module docstring)."""
    import statsmodels.formula.api as smf
    from patsy import PatsyError

    random = tuple(random)
    if not random:
        raise DataError("a mixed model needs at least one grouping column for random intercepts")
    missing = [c for c in random if c not in data.columns]
    if missing:
        raise DataError(f"no grouping column(s) {', '.join(map(repr, missing))} in the data")
    n_groups = {c: int(data[c].nunique()) for c in random}
    few = {c: n for c, n in n_groups.items() if n < 2}
    if few:
        raise DataError(f"random intercepts need at least 2 groups; {few}")
    try:
        if len(random) == 1:
            model = smf.mixedlm(formula, data, groups=data[random[0]])
        else:
            vc = {c: f"0 + C(Q('{c}'))" for c in random}
            model = smf.mixedlm(formula, data.assign(_all_=1), groups="_all_", re_formula="0", vc_formula=vc)
    except (PatsyError, ValueError, KeyError) as exc:
        raise DataError(f"cannot fit the mixed model {formula!r}: {exc}") from None

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
