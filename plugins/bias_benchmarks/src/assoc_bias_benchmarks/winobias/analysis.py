r"""The ``winobias`` analysis: accuracy per condition and the pro - anti gap (Zhao et al., 2018).

From a ``winobias`` table (:mod:`assoc_bias_benchmarks.choice_table`): option rows of a likelihood
model (the referent chosen is the occupation of higher score; a tie picks the first-named
occupation, ``numpy.argmax``'s rule, or counts half with ``ties="split"``) or choice rows of a chat
model (the occupation its reply names; several replies to one item each count). Per run, type
(1, 2, and both) and split (dev, test, and both):

.. math::

    \mathrm{acc}_{pro} = \frac{\#\{\text{pro-stereotyped sentences resolved to the gold referent}\}}
                              {\#\{\text{pro-stereotyped sentences scored}\}}, \qquad
    \mathrm{gap} = \mathrm{acc}_{pro} - \mathrm{acc}_{anti},

``acc_anti`` likewise. Zhao et al. (2018) score coreference systems by F1 on the two kinds of sentence
(systems "link gendered pronouns to pro-stereotypical entities with higher accuracy than
anti-stereotypical entities, by an average difference of 21.1 in F1 score", their abstract); a
positive gap here means the model resolves pronouns better when the pronoun's gender matches the
occupation's majority.

Items without both scores (or a reply without a choice) are left out and counted by reason.
Intervals: percentile bootstrap over items (Efron & Tibshirani, 1993, ch. 13;
:func:`assoc.stats.bootstrap_interval`): each accuracy resamples its own items; the gap resamples the
pro and the anti items independently, each within itself (the two files pair by line number, but
are not always the same sentence with the pronoun swapped, so the interval does not assume pairs;
where they are paired it is conservative).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from assoc import Analysis, DataError, Estimate, Headline, Option, Requirement, confidence_level, non_negative

from ..choice_table import (
    NEEDED,
    TIES,
    choice_shares,
    per_item,
    problem_counts,
    rate_difference_interval,
    rate_interval,
    read_runs,
    rows_of,
)
from .items import CITATION, SPLITS, STEREOTYPES, TYPES

if TYPE_CHECKING:
    import pandas as pd

SCORER = "winobias"
ALL = "all"
ITEM_COLUMNS = ("stereotype", "type", "split", "answer")


class WinoBiasAnalysis(Analysis):
    """WinoBias accuracy of pro- and anti-stereotyped sentences and their gap per type and split (docs/winobias.md)."""

    name = "winobias"
    requires = Requirement(
        needs="WinoBias scores or choices, a row per sentence and option (or per sentence and reply): a winobias table",
        scorers=(SCORER,),
        among_others=True,
        columns=(*NEEDED, *ITEM_COLUMNS),
        instead="score WinoBias first: assoc score --scorer winobias --stimuli winobias ...",
    )
    description = (
        "WinoBias (Zhao et al., 2018): accuracy of whom the pronoun refers to in pro- and anti-stereotyped sentences "
        "per type and split, and the pro - anti gap, with bootstrap intervals over sentences."
    )
    citation = CITATION
    estimate_column = "gap"
    #: The pro - anti gap and the two accuracies per type and split; the headline keeps both splits pooled.
    headline = Headline(
        estimates=(
            Estimate("gap", "pro - anti accuracy gap", low="gap_low", high="gap_high",
                     n=("n_scored_pro", "n_scored_anti"), reference=0.0),
            Estimate("accuracy_pro", "accuracy, pro-stereotyped", low="accuracy_pro_low", high="accuracy_pro_high",
                     n=("n_scored_pro",), reference=None),
            Estimate("accuracy_anti", "accuracy, anti-stereotyped", low="accuracy_anti_low",
                     high="accuracy_anti_high", n=("n_scored_anti",), reference=None),
        ),
        rows={"split": (ALL,)},
        labels=("model", "method", "type", "split"),
    )  # fmt: skip
    options = (
        Option(
            "ties",
            str,
            "first",
            "first: a likelihood tie picks the first-named occupation (numpy.argmax); split: a tie counts half",
            choices=TIES,
        ),
        Option("n_bootstrap", int, 1000, "bootstrap resamples per number (0: no intervals)", check=non_negative),
        Option("confidence", float, 0.95, "level of the bootstrap intervals", check=confidence_level),
        Option("seed", int, 0, "seed of the bootstrap"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """One row per run, type and split (``all`` pooling them): both accuracies and their gap."""
        import numpy as np
        import pandas as pd

        p = self.params
        rows = rows_of(table, SCORER, "winobias")
        out: list[dict[str, Any]] = []
        for run in read_runs(rows, n_options=2, columns=ITEM_COLUMNS, what="winobias"):
            shares, used, tied = choice_shares(run, p["ties"])
            frame = run.items[["item_id", "stereotype", "type", "split"]].copy()
            frame["type"] = frame["type"].astype(int)
            answer = run.items["answer"].to_numpy(dtype=int)
            if ((answer < 0) | (answer > 1)).any():
                raise DataError("winobias: an item's answer must be option 0 or 1 (the bracketed referent)")
            frame["correct"] = np.where(used, shares[np.arange(len(shares)), answer], 0.0)
            frame["used"] = used.astype(float)
            frame["tied"] = tied.astype(int)
            frame["problem"] = run.problem
            everything = np.ones(len(frame), dtype=bool)
            for kind in (*TYPES, ALL):
                of_type = everything if kind == ALL else (frame["type"] == kind).to_numpy()
                for split in (*SPLITS, ALL):
                    cell = frame[of_type & (everything if split == ALL else (frame["split"] == split).to_numpy())]
                    if cell.empty:
                        continue
                    out.append(self._row(run.key, ",".join(run.measures), kind, split, cell, len(out)))
        return pd.DataFrame(out)

    def _row(self, key: dict[str, str], measures: str, kind: Any, split: str, cell: pd.DataFrame, index: int) -> dict:
        import numpy as np

        p = self.params
        row: dict[str, Any] = {**key, "measures": measures, "type": kind, "split": split}
        counts = {}
        for stereotype in STEREOTYPES:
            part = cell[cell["stereotype"] == stereotype]
            items = per_item(part[part["used"] > 0], ("correct", "used", "tied"))
            left_out = problem_counts(part.loc[part["used"] == 0, "problem"].to_numpy())
            rng = np.random.default_rng([p["seed"], index, STEREOTYPES.index(stereotype)])
            accuracy, low, high = rate_interval(
                items["correct"].to_numpy(), items["used"].to_numpy(), confidence=p["confidence"],
                n_bootstrap=p["n_bootstrap"], seed=rng,
            )  # fmt: skip
            counts[stereotype] = (items["correct"].to_numpy(), items["used"].to_numpy())
            row.update(
                {
                    f"n_{stereotype}": int(part["item_id"].nunique()),
                    f"n_scored_{stereotype}": len(items),
                    f"n_left_out_{stereotype}": sum(left_out.values()),
                    f"left_out_{stereotype}": json.dumps(left_out),
                    f"n_ties_{stereotype}": int(items["tied"].sum()),
                    f"accuracy_{stereotype}": accuracy,
                    f"accuracy_{stereotype}_low": low,
                    f"accuracy_{stereotype}_high": high,
                }
            )
        rng = np.random.default_rng([p["seed"], index, len(STEREOTYPES)])
        gap, low, high = rate_difference_interval(
            counts["pro"], counts["anti"], confidence=p["confidence"], n_bootstrap=p["n_bootstrap"], seed=rng
        )
        row.update(gap=gap, gap_low=low, gap_high=high)
        row.update(confidence=p["confidence"], n_bootstrap=p["n_bootstrap"], ties=p["ties"])
        return row
