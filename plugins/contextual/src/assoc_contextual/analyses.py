r"""The analyses ``seat`` and ``ceat``: effect sizes and p-values as the authors' code computes them, from a table.

Both read an association table of cosines, target rows against attribute rows (the ``seat`` and
``ceat`` scorers', and equally the ``sbert_cosine`` and ``weat`` scorers'), one result per
combination of the ``by`` columns (default: ``scorer``, ``model``, ``measure``, ``design`` and the
embedding settings a table records: ``pooling``, ``layers``, ``special_tokens``, ``lowercase``,
``prefix_space``), with X, Y the two target groups and A, B the two attribute groups in the order of
the table (or as named). Rows of the same (target, attribute) are averaged, as the ``weat`` analysis does.

``seat`` (:func:`assoc.stats.seat_from_similarities`): with ``s(w) = mean_a cos(w, a) - mean_b cos(w, b)``,
the effect size ``d = [mean_X s - mean_Y s] / sd_{X ∪ Y} s`` (sample SD) and sent-bias's one-sided
permutation p of ``S = sum_X s - sum_Y s``: exact when there are at most ``n_samples`` partitions,
else ``n_samples - 1`` shuffles of sent-bias's stream (``np.random.seed(seed)`` then in-place
shuffles) plus one; beside them assoc's own WEAT p (exact up to ``exact_limit`` partitions, else
``n_resamples`` uniform random partitions with the +1) and an optional bootstrap interval. May et al. (2019).

``ceat`` (:func:`assoc.stats.random_effects`): per sample i (the ``sample`` column),
``ES_i = [mean_X s_i - mean_Y s_i] / sd_{X ∪ Y} s_i`` and ``v_i = sd_{X ∪ Y} s_i ** 2``; then the
DerSimonian-Laird combination of ``ceat.py``'s ``ceat_meta``: ``W_i = 1 / v_i``,
``Q = sum W_i ES_i^2 - (sum W_i ES_i)^2 / sum W_i``, ``tau^2 = (Q - df) / (sum W_i - sum W_i^2 / sum W_i)``
when ``Q > df = N - 1`` (else 0), ``CES = sum W*_i ES_i / sum W*_i`` with ``W*_i = 1 / (v_i + tau^2)``,
``V = 1 / sum W*_i``, ``SE = sqrt(V)``, ``p = 1 - Phi(CES / SE)`` (one-sided, ``ceat.py``;
``alternative="two-sided"``: the paper's ``2 [1 - Phi(|CES / SE|)]``), ``I^2 = (Q - df) / Q`` when
``Q > df``. Guo & Caliskan (2021); DerSimonian & Laird (1986); Higgins & Thompson (2002).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from assoc import (
    Analysis,
    DataError,
    Estimate,
    Headline,
    Option,
    Requirement,
    confidence_level,
    non_negative,
    positive,
)

from .ceat import GUO
from .embedding import SETTINGS_COLUMNS
from .seat import MAY

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: The default ``by``: one result per scorer, model, measure and test, and per embedding setting a table records.
DEFAULT_BY = ("scorer", "model", "measure", "design", *SETTINGS_COLUMNS)


def _by_option() -> Option:
    return Option(
        "by",
        list,
        None,
        "columns giving one result each (default: scorer, model, measure, design and the embedding settings "
        "present: pooling, layers, special_tokens, lowercase, prefix_space)",
    )


_GROUP_OPTIONS = (
    Option("x", str, None, "target group X (default: the first of exactly two target groups)"),
    Option("y", str, None, "target group Y (default: the second)"),
    Option("a", str, None, "attribute group A (default: the first of exactly two attribute groups)"),
    Option("b", str, None, "attribute group B (default: the second)"),
)


def units(
    table: pd.DataFrame, by: Sequence[str] | None, *, leave_out: Sequence[str] = ()
) -> Iterator[tuple[dict[str, str], pd.DataFrame]]:
    """The table's rows with target and attribute groups, one part per combination of the ``by`` columns."""
    columns = [c for c in DEFAULT_BY if c in table.columns and c not in leave_out] if by is None else list(by)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise DataError(f"'by' names column(s) the table does not have: {', '.join(missing)}")
    rows = table[(table["target_group"] != "") & (table["attribute_group"] != "")]
    if rows.empty:
        raise DataError("the table has no rows with both a target group and an attribute group")
    if not columns:
        yield {}, rows
        return
    for key, part in rows.groupby(columns, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        yield dict(zip(columns, map(str, values))), part


def pick(
    groups: list[str], first: str | None, second: str | None, kind: str, labels: tuple[str, str], where: str
) -> tuple[str, str]:
    """The two groups playing X/Y or A/B: named, or the only two there are (in table order)."""
    if first is None and second is None:
        if len(groups) != 2:
            raise DataError(
                f"{where}: {len(groups)} {kind} groups ({', '.join(map(repr, groups))}); name the two to compare with "
                f"{labels[0]}= and {labels[1]}="
            )
        return groups[0], groups[1]
    if first is None or second is None:
        raise DataError(f"give both {labels[0]}= and {labels[1]}= (or neither, with exactly two {kind} groups)")
    for group in (first, second):
        if group not in groups:
            raise DataError(f"{where}: no {kind} group {group!r} (available: {', '.join(map(repr, groups))})")
    if first == second:
        raise DataError(f"{where}: {labels[0]} and {labels[1]} are the same group {first!r}")
    return first, second


def _where(key: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items()) or "table"


def similarity_blocks(rows: pd.DataFrame, x: str, y: str, a: str, b: str, where: str) -> tuple[np.ndarray, ...]:
    """``cos(X, A)``, ``cos(X, B)``, ``cos(Y, A)``, ``cos(Y, B)`` as (targets × attributes) arrays, in table order.

    A target or attribute whose values are all missing (an example without an encoding) is left out;
    values missing in any other pattern are an error.
    """
    import numpy as np

    matrix = rows.pivot_table(
        index=["target_group", "target"],
        columns=["attribute_group", "attribute"],
        values="value",
        aggfunc="mean",
        dropna=False,
        sort=False,
    )
    matrix = matrix.dropna(axis=0, how="all").dropna(axis=1, how="all")
    if matrix.isna().to_numpy().any():
        raise DataError(f"{where}: some (target, attribute) values are missing although both have other values")
    values = matrix.to_numpy(dtype=float)
    target_groups = matrix.index.get_level_values(0)
    attribute_groups = matrix.columns.get_level_values(0)
    blocks = []
    for t in (x, y):
        for g in (a, b):
            block = values[np.ix_(np.asarray(target_groups == t), np.asarray(attribute_groups == g))]
            if 0 in block.shape:
                raise DataError(f"{where}: groups {t!r} and {g!r} have no values in common")
            blocks.append(block)
    return tuple(blocks)


def _groups(rows: pd.DataFrame, column: str) -> list[str]:
    return [str(g) for g in dict.fromkeys(rows[column])]


def roles(rows: pd.DataFrame, params: dict[str, Any], where: str) -> tuple[str, str, str, str]:
    """X, Y, A, B of a unit: the options ``x``, ``y``, ``a``, ``b``, or its two target and two attribute groups."""
    x, y = pick(_groups(rows, "target_group"), params["x"], params["y"], "target", ("x", "y"), where)
    a, b = pick(_groups(rows, "attribute_group"), params["a"], params["b"], "attribute", ("a", "b"), where)
    return x, y, a, b


class SEATAnalysis(Analysis):
    """SEAT: sent-bias's effect size and p-value, with assoc's WEAT p beside them (module docstring)."""

    name = "seat"
    requires = Requirement(
        needs="cosines of target examples with attribute examples in two target and two attribute groups (a seat, "
        "sbert_cosine or weat table)",
        roles=("target_group", "target", "attribute_group", "attribute"),
        at_least={"attribute_group": 2},
        instead="score a SEAT test first: assoc score --scorer seat --stimuli seat:<your copy of sent-bias's tests>",
    )
    estimate_column = "effect_size"
    #: d (sent-bias's), with assoc's bootstrap interval when asked, and sent-bias's p.
    headline = Headline(
        estimates=(
            Estimate("effect_size", "effect size d", low="ci_low", high="ci_high", p_value="p_value",
                     n=("n_x", "n_y"), reference=0.0),
        ),
        labels=("design", "model", "scorer", "pooling", "layers", "x", "y", "a", "b"),
    )  # fmt: skip
    description = (
        "SEAT (May et al. 2019): effect size and p-value as sent-bias's weat.py computes them (exact or sampled "
        "permutations, its random stream), with assoc's WEAT p beside them."
    )
    citation = MAY
    options = (
        *_GROUP_OPTIONS,
        _by_option(),
        Option(
            "n_samples",
            int,
            100_000,
            "sent-bias's n_samples: exact up to this many partitions, else this many minus one shuffles (+1)",
            check=positive,
        ),  # fmt: skip
        Option(
            "seed", int, 1111, "seed of sent-bias's shuffles (its scripts: 1111) and of assoc's p", check=non_negative
        ),
        Option("parametric", bool, False, "sent-bias's --parametric: a normal fitted to n_samples shuffles"),
        Option(
            "sampler",
            str,
            "legacy-shuffle",
            "stream of the sampled partitions: legacy-shuffle (sent-bias's), shuffle (fairlms's), uniform",
            choices=("legacy-shuffle", "shuffle", "uniform"),
        ),
        Option(
            "alternative",
            str,
            "greater",
            "assoc's WEAT p: greater (one-sided, as Caliskan et al. and sent-bias), less, two-sided",
            choices=("greater", "less", "two-sided"),
        ),
        Option("exact_limit", int, 100_000, "assoc's WEAT p: enumerate up to this many partitions", check=non_negative),
        Option("n_resamples", int, 100_000, "assoc's WEAT p: random partitions beyond it", check=positive),
        Option("n_bootstrap", int, 0, "bootstrap resamples for a CI of d (0 = none)", check=non_negative),
        Option("confidence", float, 0.95, "confidence level of the bootstrap CI", check=confidence_level),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """One SEAT per unit of the table."""
        import pandas as pd

        from assoc.stats import seat_from_similarities

        p = self.params
        out = []
        for key, rows in units(table, p["by"]):
            where = _where(key)
            x, y, a, b = roles(rows, p, where)
            x_a, x_b, y_a, y_b = similarity_blocks(rows, x, y, a, b, where)
            result = seat_from_similarities(
                x_a,
                x_b,
                y_a,
                y_b,
                n_samples=p["n_samples"],
                parametric=p["parametric"],
                seed=p["seed"],
                sampler=p["sampler"],
                alternative=p["alternative"],
                exact_limit=p["exact_limit"],
                n_resamples=p["n_resamples"],
                n_bootstrap=p["n_bootstrap"],
                confidence=p["confidence"],
            )
            weat = result.weat
            out.append(
                {
                    **key,
                    "x": x,
                    "y": y,
                    "a": a,
                    "b": b,
                    "n_x": x_a.shape[0],
                    "n_y": y_a.shape[0],
                    "n_a": x_a.shape[1],
                    "n_b": x_b.shape[1],
                    "effect_size": result.effect_size,
                    "p_value": result.p_value,
                    "p_method": result.p_method,
                    "n_permutations": result.n_permutations,
                    "statistic": result.statistic,
                    "n_samples": result.n_samples,
                    "seed": result.seed,
                    "sampler": result.sampler,
                    "weat_p_value": weat.p_value,
                    "weat_p_method": weat.p_method,
                    "weat_n_permutations": weat.n_permutations,
                    "alternative": weat.alternative,
                    "ci_low": weat.ci.low if weat.ci else float("nan"),
                    "ci_high": weat.ci.high if weat.ci else float("nan"),
                }
            )
        return pd.DataFrame(out)


def sample_effect_sizes(rows: pd.DataFrame, x: str, y: str, a: str, b: str, where: str) -> tuple[Any, Any, int, int]:
    """Per sample, ``ES_i`` and ``v_i`` (module docstring), from a CEAT table's rows; and |X|, |Y|.

    ``s_i(w)`` is the mean of w's values with group A in sample i minus the mean with group B (rows of
    ``rows="pairs"`` or ``rows="groups"`` alike).
    """
    import numpy as np

    if "sample" not in rows.columns:
        raise DataError(f"{where}: no 'sample' column; the ceat analysis reads a ceat table (one row per sample)")
    part = rows[rows["attribute_group"].isin([a, b]) & rows["target_group"].isin([x, y])]
    means = part.groupby(["sample", "target_group", "target", "attribute_group"], sort=False)["value"].mean()
    table = means.unstack("attribute_group")
    s = (table[a] - table[b]).unstack(["target_group", "target"])
    if s.isna().to_numpy().any():
        raise DataError(f"{where}: some samples lack a value of some target word with group {a!r} or {b!r}")
    order = [(g, t) for g, t in s.columns if g == x] + [(g, t) for g, t in s.columns if g == y]
    values = s[order].sort_index().to_numpy(dtype=float)
    n_x = sum(1 for g, _ in order if g == x)
    n_y = len(order) - n_x
    if n_x + n_y < 2:
        raise DataError(f"{where}: X and Y need at least two words in all for a standard deviation")
    difference = values[:, :n_x].mean(axis=1) - values[:, n_x:].mean(axis=1)
    sd = values.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return difference / sd, sd**2, n_x, n_y


class CEATAnalysis(Analysis):
    """CEAT: the random-effects combination of the per-sample WEAT effect sizes (module docstring)."""

    name = "ceat"
    requires = Requirement(
        needs="a ceat table: per sample, cosines of target words with attribute words in two target and two "
        "attribute groups",
        roles=("target_group", "target", "attribute_group"),
        at_least={"attribute_group": 2},
        instead="score a CEAT first: assoc score --scorer ceat --stimuli caliskan:weat6 -o corpus=<your corpus>",
    )
    estimate_column = "effect_size"
    #: the combined effect size with its normal interval (CES ± z SE) and p.
    headline = Headline(
        estimates=(
            Estimate("effect_size", "combined effect size CES", low="ci_low", high="ci_high", p_value="p_value",
                     n=("n_samples",), reference=0.0),
        ),
        labels=("design", "model", "scorer", "pooling", "layers", "x", "y", "a", "b"),
    )  # fmt: skip
    description = (
        "CEAT (Guo & Caliskan 2021): per-sample WEAT effect sizes combined by random effects as ceat.py computes "
        "them: CES, SE, one-sided p, Q, tau^2, I^2, V."
    )
    citation = GUO
    options = (
        *_GROUP_OPTIONS,
        _by_option(),
        Option(
            "alternative",
            str,
            "greater",
            "p of the combined effect size: greater (ceat.py's one-sided), less, two-sided (the paper's supplement)",
            choices=("greater", "less", "two-sided"),
        ),
        Option("confidence", float, 0.95, "level of the interval CES ± z SE", check=confidence_level),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """One CEAT per unit of the table."""
        import numpy as np
        import pandas as pd
        from scipy import stats

        from assoc.stats import random_effects

        p = self.params
        out = []
        for key, rows in units(table, p["by"], leave_out=("sample",)):
            where = _where(key)
            x, y, a, b = roles(rows, p, where)
            es, v, n_x, n_y = sample_effect_sizes(rows, x, y, a, b, where)
            bad = np.flatnonzero(~np.isfinite(es) | ~(v > 0))
            if bad.size:
                raise DataError(f"{where}: sample {int(bad[0]) + 1} has no effect size (all its s(w) are equal)")
            result = random_effects(es, v, alternative=p["alternative"])
            z = float(stats.norm.ppf(0.5 + p["confidence"] / 2))
            out.append(
                {
                    **key,
                    "x": x,
                    "y": y,
                    "a": a,
                    "b": b,
                    "n_x": n_x,
                    "n_y": n_y,
                    "n_a": int(rows.loc[rows["attribute_group"] == a, "attribute"].nunique()),
                    "n_b": int(rows.loc[rows["attribute_group"] == b, "attribute"].nunique()),
                    "effect_size": result.effect_size,
                    "standard_error": result.standard_error,
                    "variance": result.variance,
                    "ci_low": result.effect_size - z * result.standard_error,
                    "ci_high": result.effect_size + z * result.standard_error,
                    "confidence": p["confidence"],
                    "z": result.z,
                    "p_value": result.p_value,
                    "alternative": result.alternative,
                    "q": result.q,
                    "df": result.df,
                    "tau_squared": result.tau_squared,
                    "i_squared": result.i_squared,
                    "n_samples": result.n_samples,
                    "mean_sample_effect_size": float(np.mean(es)),
                    "sd_sample_effect_size": float(np.std(es, ddof=1)) if es.size > 1 else float("nan"),
                }
            )
        return pd.DataFrame(out)
