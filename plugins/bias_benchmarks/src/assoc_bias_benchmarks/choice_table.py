"""The table the StereoSet, Winogender and WinoBias scorers write and their analyses read.

One shape for every kind of model, so that a table of likelihoods and a table of chat replies go
through the same analysis. It is an association table (``docs/table.md``) with these columns:

``scorer``
    the benchmark's scorer (``stereoset``, ``winogender``, ``winobias``); an analysis reads the
    rows of its own scorer only.
``model``, ``model_kind``
    the model as given, and its kind (``masked``, ``causal``, ``chat``, ``server``, ...).
``method``
    how the scores were obtained, one name per configuration of the scorer (``pll``,
    ``log_prob``, ``authors``, ``choice``, ...): the rows of one ``model`` and ``method`` are one
    run, analysed on their own. The ``measure`` may differ inside a run (StereoSet's authors score
    intrasentence items by token probabilities and intersentence items by next-sentence
    prediction), but an item's option has one row per run (and ``sample``).
``measure``, ``value``
    **option rows** (likelihood models): ``value`` is the option's score, larger meaning more
    likely (a log-probability, a pseudo-log-likelihood, a probability); ``measure`` says which.
    **Choice rows** (chat models, or any model asked to choose): ``measure`` is ``choice``,
    ``value`` is 1 for the chosen option and NaN when no option was chosen.
``item_id``, ``group``
    the item's id and group (:class:`assoc.ChoiceItem`); ``target_group`` repeats the group and
    ``target`` holds the item's target where it has one (StereoSet's target term).
``option``, ``role``
    the option (0-based) and its role (:data:`ROLES` of the benchmark: ``stereotype``,
    ``occupation``, ``female``, ...); ``attribute_group`` and ``attribute`` repeat the role and the
    option's text. A choice row names the chosen option, or ``-1`` and ``""`` when there is none.
``answer``
    the item's correct option (``-1``: the item has none, as StereoSet's).
``status``
    ``ok``, or why the row has no value or no choice (``too_long``, ``refusal``, ``unparsed``,
    ``failed``, ...): analyses count such rows by status, never guess them.
``sample``
    the repetition of a chat request (0 for likelihood rows).
the item's columns
    every scalar the reader derived for the item (:attr:`assoc.ChoiceItem.derived`): StereoSet's
    ``split`` and ``bias_type``, Winogender's ``task``, ``occupation``, ``gender``, WinoBias'
    ``stereotype``, ``type``, ``split``, ... (:func:`item_columns`).

Scorers build the rows with :func:`option_rows` and :func:`choice_row`; analyses read them back
with :func:`read_runs`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assoc import ChoiceItem, DataError, TableError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from assoc.stats import BootstrapInterval

#: The ``measure`` of a choice row.
CHOICE = "choice"
OK = "ok"

#: The columns a scorer adds to the association table's, in this order (then the item's columns).
EXTRA_COLUMNS: dict[str, str] = {
    "item_id": "the item's id (the authors' where they give one)",
    "group": "the item's group (bias type, gender, condition)",
    "option": "the option of the row (0-based); a choice row: the chosen option, -1 for none",
    "role": "the option's role (stereotype, occupation, female, ...); a choice row: the chosen option's, '' for none",
    "answer": "the item's correct option (-1 when it has none)",
    "model_kind": "the model's kind (masked, causal, chat, server, ...)",
    "method": "how the scores were obtained; the rows of one model and method are one run",
    "status": "ok, or why the row has no value or no choice",
    "sample": "the repetition of a chat request (0 for likelihood rows)",
}
#: The columns every analysis of these benchmarks needs.
NEEDED = ("model", "measure", "value", *(c for c in EXTRA_COLUMNS if c != "sample"))
#: Names the item's own columns may not take (they are the table's).
RESERVED = frozenset(
    {"scorer", "model", "context", "target_group", "attribute_group", "attribute", "measure", "value", *EXTRA_COLUMNS}
)


def roles_of(item: ChoiceItem) -> tuple[str, ...]:
    """The roles of the item's options (its ``derived["roles"]``), one per option."""
    roles = tuple(item.derived.get("roles") or ())
    if len(roles) != len(item.options):
        raise ValueError(f"{item.where}: item {item.id!r} has {len(item.options)} options but {len(roles)} roles")
    return roles


def item_columns(item: ChoiceItem) -> dict[str, Any]:
    """The columns that describe ``item`` in every row about it (see the module docstring).

    ``item_id``, ``group``, ``answer`` (-1 for none), ``target_group`` (the group), ``target``
    (``derived["target"]`` or ``""``), and every other scalar of ``item.derived`` (text, number,
    bool) under its own name.
    """
    columns: dict[str, Any] = {
        "item_id": item.id,
        "group": item.group,
        "answer": -1 if item.answer is None else int(item.answer),
        "target_group": item.group,
        "target": str(item.derived.get("target", "")),
    }
    for key, value in item.derived.items():
        if key in RESERVED or key == "target" or isinstance(value, (list, tuple, dict)) or value is None:
            continue
        columns[key] = value
    return columns


def option_rows(
    item: ChoiceItem,
    values: Sequence[float],
    *,
    model: str,
    model_kind: str,
    method: str,
    measure: str,
    statuses: Sequence[str] | None = None,
    context: str = "",
    sample: int = 0,
) -> list[dict[str, Any]]:
    """One row per option of ``item`` with its score (likelihood models).

    ``values`` are the options' scores in option order, larger meaning more likely (NaN where there
    is none); ``statuses`` say why a value is missing (default ``ok`` for every option).
    """
    if measure == CHOICE:
        raise ValueError(f"measure {CHOICE!r} is for choice rows (choice_row)")
    roles = roles_of(item)
    if len(values) != len(roles):
        raise ValueError(f"{item.where}: {len(values)} values for {len(roles)} options of item {item.id!r}")
    statuses = list(statuses) if statuses is not None else [OK] * len(roles)
    base = item_columns(item)
    return [
        {
            "model": model,
            "context": context,
            "attribute_group": role,
            "attribute": text,
            "measure": measure,
            "value": float(value),
            **base,
            "option": number,
            "role": role,
            "model_kind": model_kind,
            "method": method,
            "status": status,
            "sample": int(sample),
        }
        for number, (role, text, value, status) in enumerate(zip(roles, item.options, values, statuses))
    ]


def choice_row(
    item: ChoiceItem,
    chosen: int | None,
    *,
    model: str,
    model_kind: str,
    method: str = CHOICE,
    status: str = OK,
    context: str = "",
    sample: int = 0,
) -> dict[str, Any]:
    """The row of one choice among ``item``'s options (chat models): the chosen option, or none and why."""
    roles = roles_of(item)
    if chosen is None:
        if status == OK:
            raise ValueError(f"{item.where}: no option chosen for item {item.id!r}, but status {OK!r}")
        role, text, value, option = "", "", math.nan, -1
    else:
        if status != OK:
            raise ValueError(f"{item.where}: option {chosen} chosen for item {item.id!r}, but status {status!r}")
        if not 0 <= chosen < len(roles):
            raise ValueError(f"{item.where}: option {chosen} chosen, outside the {len(roles)} of item {item.id!r}")
        role, text, value, option = roles[chosen], item.options[chosen], 1.0, int(chosen)
    return {
        "model": model,
        "context": context,
        "attribute_group": role,
        "attribute": text,
        "measure": CHOICE,
        "value": value,
        **item_columns(item),
        "option": option,
        "role": role,
        "model_kind": model_kind,
        "method": method,
        "status": status,
        "sample": int(sample),
    }


# -- reading ----------------------------------------------------------------------------------------


@dataclass
class Run:
    """The rows of one model and method, read back as items.

    ``kind`` is ``scores`` (option rows) or ``choices`` (choice rows). For scores, ``items`` has one
    row per item, ``values`` its options' scores by option (NaN: no value) and ``problem`` why an item
    lacks a value (``""`` when it has all). For choices, ``items`` has one row per item and sample,
    ``chosen`` the chosen option (-1: none) and ``problem`` the status of a row without a choice.
    ``items`` holds ``item_id`` and the item columns asked for, in the table's order; ``measures``
    the run's measures.
    """

    model: str
    model_kind: str
    method: str
    kind: str
    items: pd.DataFrame
    values: np.ndarray
    chosen: np.ndarray
    problem: np.ndarray
    measures: tuple[str, ...]

    @property
    def key(self) -> dict[str, str]:
        """The run's identity, for result rows."""
        return {"model": self.model, "model_kind": self.model_kind, "method": self.method}


def rows_of(table: pd.DataFrame, scorer: str, what: str) -> pd.DataFrame:
    """The rows of ``scorer`` (all rows when the table has no ``scorer`` column); none is a :class:`DataError`."""
    missing = [c for c in NEEDED if c not in table.columns]
    if missing:
        raise TableError(
            f"{what}: the table lacks the column(s) {', '.join(missing)} of a {scorer} table "
            "(assoc_bias_benchmarks.choice_table)"
        )
    rows = table[table["scorer"].astype(str) == scorer] if "scorer" in table.columns else table
    if rows.empty:
        raise DataError(f"{what}: the table has no rows of scorer {scorer!r}")
    return rows


def read_runs(
    rows: pd.DataFrame, *, n_options: int, columns: Sequence[str], what: str, roles: Sequence[str] | None = None
) -> list[Run]:
    """The runs (model, model_kind, method) of ``rows``, each read back as items (see :class:`Run`).

    ``n_options`` is the number of options of the benchmark's items; ``roles`` (when the benchmark
    gives every item the same roles in the same order) the role each option must have; ``columns``
    the item columns the analysis reads (each must be the same in every row of an item). An option
    outside the items' (or a role other than the option's), two rows for one option (or one choice)
    of an item in a run, a run mixing choice and option rows, an item whose rows disagree on an item
    column, and a choice row whose status is ``ok`` without a chosen option are each a
    :class:`~assoc.TableError`.
    """
    missing = [c for c in columns if c not in rows.columns]
    if missing:
        raise TableError(f"{what}: the table lacks the item column(s) {', '.join(missing)}")
    data = rows.copy()
    if "sample" not in data.columns:
        data["sample"] = 0
    for column in ("status", "role", "item_id"):
        data[column] = data[column].astype(str)
    try:
        data["option"] = data["option"].astype(int)
        data["sample"] = data["sample"].astype(int)
    except (TypeError, ValueError):
        raise TableError(f"{what}: the columns 'option' and 'sample' must hold whole numbers") from None
    runs: list[Run] = []
    for (model, model_kind, method), part in data.groupby(["model", "model_kind", "method"], sort=False):
        label = f"{what}: model {model!r}, method {method!r}"
        key = (str(model), str(model_kind), str(method))
        is_choice = part["measure"].astype(str) == CHOICE
        if is_choice.any() and not is_choice.all():
            raise TableError(f"{label} mixes choice rows (measure {CHOICE!r}) with option rows; give each a method")
        _check_item_columns(part, columns, label)
        _check_options(part, n_options, roles, label, choices=bool(is_choice.all()))
        measures = tuple(sorted(set(part["measure"].astype(str))))
        reader = _choice_run if is_choice.all() else _score_run
        runs.append(reader(part, n_options, columns, label, key, measures))
    return runs


def _check_item_columns(part: pd.DataFrame, columns: Sequence[str], label: str) -> None:
    n_items = part["item_id"].nunique()
    for column in columns:
        distinct = part.drop_duplicates(["item_id", column])
        if len(distinct) != n_items:
            item = distinct.loc[distinct["item_id"].duplicated(), "item_id"].iloc[0]
            raise TableError(f"{label}: the rows of item {item!r} disagree on {column!r}")


def _check_options(
    part: pd.DataFrame, n_options: int, roles: Sequence[str] | None, label: str, *, choices: bool
) -> None:
    lowest = -1 if choices else 0
    outside = (part["option"] < lowest) | (part["option"] >= n_options)
    if outside.any():
        row = part[outside].iloc[0]
        raise TableError(
            f"{label}: item {row['item_id']!r} has a row of option {row['option']}, outside its {n_options} options"
        )
    if roles is None:
        return
    expected = part["option"].map(lambda k: roles[k] if k >= 0 else "")
    wrong = part["role"] != expected
    if wrong.any():
        row = part[wrong].iloc[0]
        raise TableError(
            f"{label}: item {row['item_id']!r}'s option {row['option']} has role {row['role']!r}; the benchmark's "
            f"option {row['option']} is {expected[wrong].iloc[0]!r} (roles: {', '.join(roles)})"
        )


def _score_run(
    part: pd.DataFrame, n_options: int, columns: Sequence[str], label: str, key: tuple[str, str, str],
    measures: tuple[str, ...],
) -> Run:  # fmt: skip
    import numpy as np

    twice = part.duplicated(["item_id", "option", "sample"])
    if twice.any():
        row = part[twice].iloc[0]
        raise TableError(
            f"{label}: item {row['item_id']!r} has two rows for its option {row['option']} (measure "
            f"{row['measure']!r}); give each measure its own method"
        )
    if (part["sample"] != 0).any():
        raise TableError(f"{label}: option rows have one sample (0); repeated samples are for choice rows")
    items = part.drop_duplicates("item_id")[["item_id", *columns]].reset_index(drop=True)
    position = {item: k for k, item in enumerate(items["item_id"])}
    rows = part["item_id"].map(position).to_numpy()
    cols = part["option"].to_numpy()
    value = part["value"].to_numpy(dtype=float)
    status = part["status"].to_numpy()
    ok = status == OK
    values = np.full((len(items), n_options), np.nan)
    present = np.zeros(values.shape, dtype=bool)
    values[rows, cols] = np.where(ok, value, np.nan)
    present[rows, cols] = True
    problem = np.full(len(items), "", dtype=object)
    # why an item lacks a value: the first status that is not ok, else a NaN value, else a missing row
    for r, state, v in zip(rows[::-1], status[::-1], value[::-1]):
        if state != OK:
            problem[r] = state
        elif math.isnan(v) and problem[r] == "":
            problem[r] = "nan"
    problem[~present.all(axis=1) & (problem == "")] = "missing option row"
    return Run(*key, "scores", items, values, np.empty(0, dtype=int), problem, measures)


def _choice_run(
    part: pd.DataFrame, n_options: int, columns: Sequence[str], label: str, key: tuple[str, str, str],
    measures: tuple[str, ...],
) -> Run:  # fmt: skip
    import numpy as np

    twice = part.duplicated(["item_id", "sample"])
    if twice.any():
        row = part[twice].iloc[0]
        raise TableError(f"{label}: item {row['item_id']!r} has two choice rows of sample {row['sample']}")
    ok = (part["status"] == OK).to_numpy()
    none = (part["option"] < 0).to_numpy()
    if (ok & none).any():
        row = part[ok & none].iloc[0]
        raise TableError(f"{label}: item {row['item_id']!r} has status 'ok' but no chosen option")
    items = part[["item_id", *columns]].reset_index(drop=True)
    chosen = np.where(ok, part["option"].to_numpy(), -1).astype(int)
    problem = np.where(ok, "", part["status"].to_numpy()).astype(object)
    return Run(*key, "choices", items, np.empty((0, n_options)), chosen, problem, measures)


def problem_counts(problem: np.ndarray) -> dict[str, int]:
    """How many items lack a value (or a choice), by reason: ``{status: count}`` (empty when none lacks one)."""
    counts: dict[str, int] = {}
    for reason in problem:
        if reason:
            counts[str(reason)] = counts.get(str(reason), 0) + 1
    return dict(sorted(counts.items()))


def bootstrap_items(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_items: int,
    *,
    confidence: float,
    n_bootstrap: int,
    seed: np.random.Generator,
    strata: np.ndarray | None = None,
) -> BootstrapInterval:
    """Percentile bootstrap over items (:func:`assoc.stats.bootstrap_interval`), optionally within strata.

    ``statistic`` maps a ``(k, n_items)`` array of item positions (each row one resample, drawn with
    replacement) to ``k`` values; the interval is the percentile interval of those values, resamples
    with an undefined (NaN) value left out and counted (Efron & Tibshirani, 1993, ch. 13).
    """
    import numpy as np

    from assoc.stats import bootstrap_interval

    positions = np.arange(n_items, dtype=float)
    return bootstrap_interval(
        positions,
        None,
        lambda xs, _: statistic(xs.astype(np.intp)),
        confidence=confidence,
        n_resamples=n_bootstrap,
        seed=seed,
        option="n_bootstrap",
        strata=strata,
    )


#: How a likelihood model's tie between its best options counts (:func:`choice_shares`).
TIES = ("first", "split")


def choice_shares(run: Run, ties: str = "first") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which option each row chose, as shares: ``(shares, used, tied)``.

    ``shares`` is ``(rows, options)``: a choice row puts 1 on its chosen option; an option row's item
    puts 1 on its highest-scoring option, and on a tie between several ``ties="first"`` puts 1 on
    the first of them (``numpy.argmax``, as lm-evaluation-harness and the ``choice`` request) and
    ``ties="split"`` shares it equally among them. ``used`` is whether the row has a choice (every
    option scored, or a reply read as an option); ``tied`` marks the items whose best score is shared.
    """
    import numpy as np

    if run.kind == "choices":
        used = run.chosen >= 0
        shares = np.zeros((len(run.chosen), run.values.shape[1]))
        shares[np.flatnonzero(used), run.chosen[used]] = 1.0
        return shares, used, np.zeros(len(used), dtype=bool)
    values = run.values
    used = np.isfinite(values).all(axis=1)
    best = np.where(used[:, None], values, 0.0)
    winners = best == best.max(axis=1, keepdims=True)
    tied = used & (winners.sum(axis=1) > 1)
    if ties == "split":
        shares = winners / winners.sum(axis=1, keepdims=True)
    else:
        shares = np.zeros(values.shape)
        shares[np.arange(len(values)), winners.argmax(axis=1)] = 1.0
    shares[~used] = 0.0
    return shares, used, tied


def per_item(frame: pd.DataFrame, sums: Sequence[str], firsts: Sequence[str] = ()) -> pd.DataFrame:
    """``frame``'s rows summed per ``item_id`` (several replies to one item are one item), in order of appearance."""
    summed = frame.groupby("item_id", sort=False)[list(sums)].sum()
    if firsts:
        summed = frame.drop_duplicates("item_id").set_index("item_id")[list(firsts)].join(summed)
    return summed.reset_index()


def rate_interval(
    numerator: np.ndarray, denominator: np.ndarray, *, confidence: float, n_bootstrap: int, seed: np.random.Generator
) -> tuple[float, float, float]:
    """``(rate, low, high)``: rate = Σ numerator / Σ denominator over items, with a percentile bootstrap over items.

    NaN for no item (and no interval for fewer than two items or ``n_bootstrap`` 0).
    """
    import numpy as np

    num, den = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if num.size == 0 or den.sum() == 0:
        return float("nan"), float("nan"), float("nan")
    rate = float(num.sum() / den.sum())
    if n_bootstrap == 0 or num.size < 2:
        return rate, float("nan"), float("nan")

    def statistic(positions: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return num[positions].sum(axis=1) / den[positions].sum(axis=1)

    interval = bootstrap_items(statistic, num.size, confidence=confidence, n_bootstrap=n_bootstrap, seed=seed)
    return rate, interval.low, interval.high


def rate_difference_interval(
    first: tuple[np.ndarray, np.ndarray],
    second: tuple[np.ndarray, np.ndarray],
    *,
    confidence: float,
    n_bootstrap: int,
    seed: np.random.Generator,
) -> tuple[float, float, float]:
    """``(difference, low, high)`` of two rates (each Σ numerator / Σ denominator over its own items).

    The interval resamples the two sets of items independently, each within itself
    (:func:`assoc.stats.bootstrap_interval` with two samples), and takes percentiles of the
    resampled differences.
    """
    import numpy as np

    from assoc.stats import bootstrap_interval

    (num_a, den_a), (num_b, den_b) = ((np.asarray(n, float), np.asarray(d, float)) for n, d in (first, second))
    if num_a.size == 0 or num_b.size == 0 or den_a.sum() == 0 or den_b.sum() == 0:
        return float("nan"), float("nan"), float("nan")
    difference = float(num_a.sum() / den_a.sum() - num_b.sum() / den_b.sum())
    if n_bootstrap == 0 or num_a.size < 2 or num_b.size < 2:
        return difference, float("nan"), float("nan")

    def statistic(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        a, b = xs.astype(np.intp), ys.astype(np.intp)
        with np.errstate(invalid="ignore", divide="ignore"):
            return num_a[a].sum(axis=1) / den_a[a].sum(axis=1) - num_b[b].sum(axis=1) / den_b[b].sum(axis=1)

    interval = bootstrap_interval(
        np.arange(num_a.size, dtype=float),
        np.arange(num_b.size, dtype=float),
        statistic,
        confidence=confidence,
        n_resamples=n_bootstrap,
        seed=seed,
        option="n_bootstrap",
    )
    return difference, interval.low, interval.high
