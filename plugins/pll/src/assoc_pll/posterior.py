"""The Bayes-rule choice model of Watson, Beekhuizen & Stevenson (2023).

For a condition C (a sentence frame with its fillers, e.g. "Emily is a ___ from Utah.")
and the variants V of one set (firewoman / fireman / firefighter):

    P(V|C) = P(C|V) P(V) / sum_{V'} P(C|V') P(V')                 (Watson et al., 2023, Eq. 1)

with log P(C|V) the PLL of the context tokens of the sentence that contains V
(the ``pll`` scorer with ``tokens_scored="context"``) and P(V) a frequency prior
(:mod:`assoc_pll.prior`). The posterior is computed in log space
(log-sum-exp), so PLLs of -80 do not underflow. It may then be averaged over
the fillers of a role (Watson et al. average over the 50 U.S. states).

The fit to human choices is the average log-likelihood of the observed choices
under the model (Watson et al., Tables 1 and 5):

    LL = sum_k w_k log P(v_k | C_k) / sum_k w_k

over the observations k (variant v_k chosen in condition C_k), with weights w_k the
counts of choices (or the observed proportions). Natural logarithms throughout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# numpy and pandas are imported inside the functions: this module is imported when plugins load
from assoc import DataError, TableError

from .prior import DEFAULT_FLOOR, prior_probabilities, variant_frequencies

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

ROLES = ("target", "attribute")
# What P(V|C) can be averaged over: the fillers of a role, or the query frames of a design.
AVERAGEABLE = ROLES + ("context",)
FILLER_COLUMNS = ("target_group", "target", "attribute_group", "attribute")
CONDITION_COLUMNS = ("model", "design", "context") + FILLER_COLUMNS


def bayes_posterior(log_likelihoods: Sequence[float], priors: Sequence[float]) -> np.ndarray:
    """P(V|C) = exp(l_V) p_V / sum_{V'} exp(l_{V'}) p_{V'}, for log-likelihoods l and priors p.

    Computed as ``scipy.special.softmax(a)`` with a_V = l_V + log p_V (shifted by max(a)
    inside, so PLLs of -800 do not underflow); a variant with prior 0 gets probability 0.
    """
    import numpy as np
    from scipy.special import softmax

    loglik = np.asarray(log_likelihoods, dtype=float)
    prior = np.asarray(priors, dtype=float)
    if loglik.shape != prior.shape or loglik.ndim != 1 or loglik.size == 0:
        raise DataError("need one log-likelihood and one prior per variant")
    if not np.all(np.isfinite(loglik)):
        raise DataError("a log-likelihood is missing or infinite")
    if np.any(prior < 0) or not prior.sum() > 0:
        raise DataError("priors must be non-negative and not all zero")
    with np.errstate(divide="ignore"):
        joint = loglik + np.log(prior)
    return np.asarray(softmax(joint), dtype=float)


def _condition_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The table with the option-carrying role blanked, so rows of one condition share a key.

    Under the role rule of :meth:`assoc.stimuli.Filling.roles`, the [MASK] candidate
    may sit in the target or attribute columns; it is part of V, not of C.
    """
    missing = [c for c in ("design", "mask_group", "mask") if c not in table.columns]
    if missing:
        raise TableError(
            f"the table lacks column(s) {', '.join(missing)}: the posterior needs a table "
            "from a query-based scorer (pll)"
        )
    frame = table.copy()
    for role in ROLES:
        carries_option = (frame[f"{role}_group"] == frame["mask_group"]) & (frame[role] == frame["mask"])
        frame.loc[carries_option, [f"{role}_group", role]] = ""
    return frame


def posterior_table(
    table: pd.DataFrame,
    *,
    prior: str = "wordfreq",
    counts: str | Path | Mapping[str, Any] | None = None,
    lang: str = "en",
    floor: float = DEFAULT_FLOOR,
    average_over: Sequence[str] = (),
) -> pd.DataFrame:
    """P(V|C) for every variant and condition of a ``pll`` table (``tokens_scored="context"``).

    ``average_over``: roles (``"target"``, ``"attribute"``) whose fillers the posterior
    is averaged over, within each group (Watson et al.: ``["attribute"]``, the states),
    and/or ``"context"`` to average over the query frames of a design.
    Returns one row per model, design, context, remaining fillers and variant.
    """
    import pandas as pd

    for role in average_over:
        if role not in AVERAGEABLE:
            raise DataError(f"average_over takes 'target', 'attribute' and/or 'context', got {role!r}")
    rows = table[table["measure"] == "pll"] if "measure" in table.columns else table
    if rows.empty:
        raise DataError("the table has no rows with measure 'pll'")
    if "tokens_scored" in rows.columns:
        bad = sorted(set(rows["tokens_scored"]) - {"context"})
        if bad:
            raise DataError(
                f"the posterior P(V|C) needs PLLs of the context tokens only (pll option tokens_scored='context'); "
                f"this table scored {', '.join(map(repr, bad))} tokens, which would count the variant's own "
                "tokens as evidence"
            )
    if rows["value"].isna().any():
        first = rows[rows["value"].isna()].iloc[0]
        raise DataError(f"missing PLL for variant {first['mask']!r} in {first.get('sentence', first['context'])!r}")
    frame = _condition_frame(rows)

    freqs = variant_frequencies(frame["mask"], prior, counts=counts, lang=lang, floor=floor)

    keys = list(CONDITION_COLUMNS)
    out = []
    for (model, design), per_design in frame.groupby(["model", "design"], sort=False):
        variants = list(dict.fromkeys(zip(per_design["mask_group"], per_design["mask"])))
        if len(variants) < 2:
            raise DataError(
                f"design {design!r}, model {model!r} has only one variant "
                f"({', '.join(repr(v) for _, v in variants)}); P(V|C) compares the variants of a set, "
                "so a set needs at least two [MASK] candidates"
            )
        priors = prior_probabilities(freqs[v].frequency for _, v in variants)
        for key, condition in per_design.groupby(keys, sort=False):
            found = list(zip(condition["mask_group"], condition["mask"]))
            if len(found) != len(set(found)):
                raise DataError(
                    f"design {design!r}, model {model!r}: a variant occurs twice in condition "
                    f"{dict(zip(keys, key))}; combine tables of one scorer run (one metric) only"
                )
            lacking = [v for v in variants if v not in set(found)]
            if lacking:
                raise DataError(
                    f"design {design!r}, model {model!r}: condition {dict(zip(keys, key))} lacks "
                    f"variant(s) {', '.join(repr(v) for _, v in lacking)} that other conditions have"
                )
            by_variant = dict(zip(found, condition["value"].astype(float)))
            loglik = [by_variant[v] for v in variants]
            post = bayes_posterior(loglik, priors)
            for (group, variant), ll, p, q in zip(variants, loglik, priors, post):
                f = freqs[variant]
                out.append(
                    {
                        **dict(zip(keys, key)),
                        "mask_group": group,
                        "mask": variant,
                        "log_likelihood": ll,
                        "frequency": f.frequency,
                        "frequency_floored": f.floored,
                        "prior": p,
                        "posterior": float(q),
                    }
                )
    result = pd.DataFrame(out)
    result["n_averaged"] = 1
    if average_over:
        result[list(average_over)] = ""
        group_keys = keys + ["mask_group", "mask"]
        result = (
            result.groupby(group_keys, sort=False)
            .agg(
                log_likelihood=("log_likelihood", "mean"),
                frequency=("frequency", "first"),
                frequency_floored=("frequency_floored", "first"),
                prior=("prior", "first"),
                posterior_sd=("posterior", lambda s: float(s.std(ddof=1)) if len(s) > 1 else float("nan")),
                posterior=("posterior", "mean"),
                n_averaged=("posterior", "size"),
            )
            .reset_index()
        )
        result["averaged_over"] = ",".join(average_over)
    else:
        result["posterior_sd"] = float("nan")
        result["averaged_over"] = ""
    result["prior_source"] = prior
    columns = keys + [
        "mask_group",
        "mask",
        "log_likelihood",
        "frequency",
        "frequency_floored",
        "prior",
        "posterior",
        "posterior_sd",
        "n_averaged",
        "averaged_over",
        "prior_source",
    ]
    return result[columns]


def read_choices(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Read human choices from a table file or a data frame.

    Human choices from a table file (.csv, .tsv, .parquet, .jsonl: :func:`assoc.table.read_data_file`)
    or a data frame: columns ``design``, ``mask`` (the chosen
    variant), optional ``group`` (participant group), condition columns among
    target_group/target/attribute_group/attribute, and ``count`` or ``proportion``
    (neither: each row is one observation).
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame = source.copy()
    else:
        path = Path(source)
        if not path.is_file():
            raise DataError(f"choices file not found: {path}")
        from assoc import read_data_file

        frame = read_data_file(path, what="choices", all_text=True)
    for column in ("design", "mask"):
        if column not in frame.columns:
            raise DataError(f"the choices need a {column!r} column (has {', '.join(frame.columns)})")
    if "count" in frame.columns and "proportion" in frame.columns:
        raise DataError("give either a 'count' or a 'proportion' column of choices, not both")
    if "group" not in frame.columns:
        frame["group"] = "all"
    for column in ("count", "proportion"):
        if column in frame.columns:
            values = pd.to_numeric(frame[column], errors="coerce")
            if values.isna().any() or (values < 0).any():
                raise DataError(f"the choices' {column!r} column must hold non-negative numbers")
            frame["weight"] = values.astype(float)
    if "weight" not in frame.columns:
        frame["weight"] = 1.0
    text_columns = [c for c in frame.columns if c != "weight" and c not in ("count", "proportion")]
    frame[text_columns] = frame[text_columns].astype(str)
    return frame


def loglik_table(
    posterior: pd.DataFrame, choices: pd.DataFrame, *, by: Sequence[str] = (), baseline: bool = True
) -> pd.DataFrame:
    """Average log-likelihood of human choices under P(V|C), per model and participant group.

    ``posterior`` comes from :func:`posterior_table`; ``choices`` from :func:`read_choices`.
    The conditions are matched on ``design`` and the filler columns the choices have.
    ``by``: extra breakdowns (e.g. ``["target_group"]`` for women's vs men's names);
    a row over all observations is always included. ``baseline`` adds the same
    statistic for the frequency prior alone (Watson et al.'s Figures 1c and 3c).
    """
    import numpy as np
    import pandas as pd

    match = ["design"] + [c for c in FILLER_COLUMNS if c in choices.columns]
    for column in by:
        if column not in match and column != "group":
            raise DataError(f"cannot break down by {column!r}: the choices have no such condition column")
    weight_name = (
        "count" if "count" in choices.columns else ("proportion" if "proportion" in choices.columns else "rows")
    )
    out = []
    for model, per_model in posterior.groupby("model", sort=False):
        keys = match + ["mask"]
        dup = per_model.duplicated(keys, keep=False)
        if dup.any():
            # what varies within one condition of the choices (not across designs, whose queries differ)
            within = per_model.loc[dup].groupby(keys, sort=False, dropna=False)
            varying = [
                c
                for c in FILLER_COLUMNS + ("context",)
                if c not in match and bool((within[c].nunique(dropna=False) > 1).any())
            ]
            raise DataError(
                f"model {model!r}: the choices identify a condition by {', '.join(match)}, but the model's "
                f"posterior also varies by {', '.join(varying) or 'context'}; average over it "
                "(option average_over) or add those columns to the choices"
            )
        merged = choices.merge(per_model[keys + ["posterior", "prior"]], on=keys, how="left")
        unmatched = merged[merged["posterior"].isna()]
        if not unmatched.empty:
            absent = [d for d in dict.fromkeys(unmatched["design"]) if d not in set(per_model["design"])]
            if absent:
                raise DataError(
                    f"model {model!r}: the choices name design(s) {', '.join(map(repr, absent))} that are not in "
                    f"the table (it has {', '.join(map(repr, dict.fromkeys(per_model['design'])))}); keep only the "
                    "choices of the scored designs (e.g. split the choices of three-way and two-way sets)"
                )
            first = unmatched.iloc[0]
            raise DataError(
                f"model {model!r}: no model posterior for the choice of {first['mask']!r} in "
                f"{ {c: first[c] for c in match} }; check design names and variant spellings"
            )
        for predictor in (("model", "posterior"), ("prior", "prior")) if baseline else (("model", "posterior"),):
            label, column = predictor
            logp = np.log(merged[column].astype(float))
            merged_ll = merged.assign(_ll=logp * merged["weight"])
            breakdowns: list[tuple[str, Any]] = [("", None)] + [(c, c) for c in by]
            for name, column_by in breakdowns:
                groups = ["group"] + ([column_by] if column_by else [])
                for key, part in merged_ll.groupby(groups, sort=False):
                    key = key if isinstance(key, tuple) else (key,)
                    total = float(part["weight"].sum())
                    if not total > 0:
                        continue
                    out.append(
                        {
                            "model": model,
                            "predictor": label,
                            "group": key[0],
                            "by": name,
                            "level": key[1] if column_by else "all",
                            "mean_loglik": float(part["_ll"].sum()) / total,
                            "n_observations": total if weight_name != "proportion" else float("nan"),
                            "n_choice_rows": int(len(part)),
                            "weights": weight_name,
                        }
                    )
    return pd.DataFrame(out)
