"""BBQ bias scores per stereotyped group as association-table rows, for ``convergence``.

``convergence`` (:mod:`assoc.analysis.convergence`) compares methods on one score per target for
a contrast "A - B". A BBQ run has no targets; its examples name the groups a stereotype is about
(``additional_metadata.stereotyped_groups``). :func:`association_rows` maps those groups to the
targets the other methods score (``targets``: BBQ group -> target, e.g. ``{"Jewish": "Jew"}``),
computes the ``bbq`` analysis's bias score over each target's examples, and writes one row per
method (scorer, model) and target with ``attribute_group`` = ``"A - B"``: convergence reads such
rows with its ``difference`` rule (the score of the target on the contrast itself).

Why a difference: in disambiguated contexts the bias score is

    s_DIS = 2 · n_biased / n_non_unknown − 1 = (n_biased − n_counter) / n_non_unknown,

the share of non-unknown answers that follow the stereotype minus the share that go against it
(Parrish et al., 2022, p. 6), so with A the stereotype-congruent pole of the other methods (e.g.
the ``stigma_congruent`` words of Bai et al., 2025) and B the other, a positive score means the
same thing in every method. In ambiguous contexts the score is s_AMB = (1 − accuracy) · s_DIS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from assoc import DataError, normalise

from .analysis import SCORERS, BBQAnalysis

if TYPE_CHECKING:
    import pandas as pd

MEASURE = "bbq_bias_score"
CONDITIONS = ("disambig", "ambig")
#: Extra columns of the rows, after the association table's own.
EXTRA_COLUMNS = (
    "context_condition",
    "stereotyped_groups",
    "n_examples",
    "n_scored",
    "accuracy",
    "s_dis",
    "convention",
)


def _groups(text: str, where: str) -> list[str]:
    try:
        groups = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        groups = None
    if not isinstance(groups, list):
        raise DataError(f"{where}: stereotyped_groups must be a JSON list of groups, got {text!r}")
    return [str(g) for g in groups]


def association_rows(
    table: pd.DataFrame,
    targets: Mapping[str, str],
    *,
    a: str = "biased",
    b: str = "counter_biased",
    context_condition: str = "disambig",
    convention: str = "authors",
    metadata: str | None = None,
) -> pd.DataFrame:
    """BBQ bias scores per target as association-table rows that ``convergence`` reads.

    Parameters
    ----------
    table
        A ``bbq`` table (rows of measure ``correct``; other rows are ignored; ``chat_bbq`` and ``clm_bbq``
        tables too).
    targets
        BBQ stereotyped group (as written in the files, e.g. ``"Muslim"``, ``"old"``) -> the target
        it is matched with in the other methods (e.g. ``"Muslim"``, ``"Old"``). An example belongs
        to a target when one of its ``stereotyped_groups`` is a key; several keys may name one target
        (their examples are pooled); an example whose groups name two different targets is an error,
        an example whose groups name none is left out.
    a, b
        The contrast "A - B" of the rows (``attribute_group``): A the stereotype-congruent pole, the
        names the other methods' groups have (e.g. ``stigma_congruent`` and ``default_congruent``).
    context_condition
        ``disambig`` (s_DIS, the default) or ``ambig`` (s_AMB).
    convention, metadata
        As the ``bbq`` analysis's options.

    Returns
    -------
    pandas.DataFrame
        One row per scorer, model and target: ``target`` the target, ``target_group`` the BBQ
        categories of its examples (joined by ``+``), ``attribute_group`` ``"A - B"``, ``measure``
        ``bbq_bias_score``, ``value`` the bias score (NaN when no answer was non-unknown); extra
        columns ``context_condition``, ``stereotyped_groups`` (the keys met, JSON), ``n_examples``,
        ``n_scored``, ``accuracy``, ``s_dis``, ``convention``.

    References
    ----------
    Parrish, A., Chen, A., Nangia, N., Padmakumar, V., Phang, J., Thompson, J., Htut, P. M., &
    Bowman, S. (2022). BBQ: A hand-built bias benchmark for question answering. Findings of ACL
    2022, 2086-2105.
    """
    import pandas as pd

    if context_condition not in CONDITIONS:
        raise DataError(f"bbq association rows: context_condition must be disambig or ambig, got {context_condition!r}")
    if not targets or not all(isinstance(k, str) and isinstance(v, str) and k and v for k, v in targets.items()):
        raise DataError("bbq association rows: targets must map BBQ stereotyped groups to non-empty target names")
    if a == b or not a or not b:
        raise DataError(f"bbq association rows: a and b must be two different group names, got {a!r} and {b!r}")
    rows = table[table["measure"] == "correct"] if "measure" in table else table
    if "scorer" in rows:
        rows = rows[rows["scorer"].isin(SCORERS)]
    for column in ("scorer", "model", "category", "example_id", "stereotyped_groups", "context_condition"):
        if column not in rows:
            raise DataError(f"bbq association rows: the table has no {column!r} column (a bbq table?)")
    if rows.empty:
        raise DataError("bbq association rows: the table has no BBQ answers (rows of measure 'correct')")
    rows = rows[rows["context_condition"] == context_condition]
    if rows.empty:
        raise DataError(f"bbq association rows: no example in context condition {context_condition!r}")
    target_of: list[str] = []
    keys_of: list[str] = []
    met: set[str] = set()
    for category, example, text in zip(rows["category"], rows["example_id"], rows["stereotyped_groups"]):
        where = f"{category} example {example}"
        keys = [g for g in _groups(text, where) if g in targets]
        named = sorted({targets[g] for g in keys})
        if len(named) > 1:
            raise DataError(
                f"bbq association rows: {where}: its stereotyped groups {text} name several targets "
                f"({', '.join(named)}); map them to one target or leave one out of targets"
            )
        met.update(keys)
        target_of.append(named[0] if named else "")
        keys_of.append(json.dumps(keys, ensure_ascii=False))
    unmet = [k for k in targets if k not in met]
    if unmet:
        present = sorted({g for t in set(rows["stereotyped_groups"]) for g in _groups(t, "table")})
        raise DataError(
            f"bbq association rows: no {context_condition} example has the stereotyped group "
            f"{', '.join(map(repr, unmet))} (groups in the table: {', '.join(present)})"
        )
    data = rows.assign(bbq_target=target_of, bbq_keys=keys_of)
    data = data[data["bbq_target"] != ""]
    scores = BBQAnalysis(
        convention=convention, metadata=metadata, n_bootstrap=0, by=["scorer", "model", "bbq_target"]
    ).run(data)
    out = []
    for row in scores.itertuples(index=False):
        mine = data[
            (data["scorer"] == row.scorer) & (data["model"] == row.model) & (data["bbq_target"] == row.bbq_target)
        ]
        out.append(
            {
                "scorer": row.scorer,
                "model": row.model,
                "target_group": "+".join(sorted(set(mine["category"]))),
                "target": row.bbq_target,
                "attribute_group": f"{a} - {b}",
                "measure": MEASURE,
                "value": row.bias_score,
                "context_condition": context_condition,
                "stereotyped_groups": json.dumps(
                    sorted({g for k in mine["bbq_keys"] for g in json.loads(k)}), ensure_ascii=False
                ),
                "n_examples": row.n_examples,
                "n_scored": row.n_scored,
                "accuracy": row.accuracy,
                "s_dis": row.s_dis,
                "convention": convention,
            }
        )
    return normalise(pd.DataFrame(out), extra_columns=EXTRA_COLUMNS, where="bbq association rows")
