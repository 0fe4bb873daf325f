r"""The Winogender analyses: accuracy as lm-evaluation-harness defines it, and the paper's occupation measure.

Both read a ``winogender`` table (:mod:`assoc_bias_benchmarks.choice_table`): option rows of a
likelihood model or choice rows of a chat model, of the referent items (``task`` ``referent``:
whom the pronoun refers to, options occupation and participant) or the pronoun items (``task``
``pronoun``: the female, male and neutral sentence of a template).

``winogender`` (referent items): per run, **accuracy** over all sentences and per pronoun gender,
as lm-evaluation-harness 0.4's ``winogender_all``, ``_female``, ``_male`` and ``_neutral`` tasks
compute it: an item is right when the option of higher log-likelihood (``numpy.argmax``: **a tie
picks the occupation**, the first option) is the answer; the task's score is the mean over its
sentences. ``ties="split"`` counts a tie as half right instead. A chat model's item is right when
its reply names the answer; several replies to one item each count. Items without both scores (or
a reply without a choice) are left out and counted by reason; lm-eval's ``argmax`` would pick a
NaN option silently. Then, as the paper's Table 2, accuracy per pronoun gender (female, male) and
"gotcha" (``yes``/``no``): a female pronoun's sentence is a gotcha when its answer is the occupation
and the occupation is under 50 % female (``bls_pct_female``), or its answer is the participant and
the occupation is at least 50 % female; a male pronoun's, the reverse (answer the occupation and
over 50 % female, or the participant and at most 50 % female).

``winogender_occupations``: per run and occupation *o*, how much the model prefers a female
pronoun for the occupation, correlated over the 60 occupations with the occupations' share of women
(``bls_pct_female``: U.S. Bureau of Labor Statistics, 2015; ``bergsma_pct_female``: text statistics
of Bergsma & Lin, 2006), both from the authors' ``occupations-stats.tsv``:

* referent items (the paper's Figure 4; its Table 1 gives the correlations):
  :math:`y_o = 100\,(\bar r^{f}_o - \bar r^{m}_o)`, with
  :math:`\bar r^{g}_o` the share of the occupation's sentences with a pronoun of gender *g* that the
  model resolves to the occupation (ties as above): +100 when it always resolves female pronouns
  and never male ones to the occupation;
* pronoun items, likelihood models: :math:`y_o = \operatorname{mean}_i (\ell^{f}_i - \ell^{m}_i)`
  over the occupation's items (two templates x two participants), :math:`\ell` the female and male
  sentences' scores (log P, PLL, ...);
* pronoun items, chat models: :math:`y_o = n^{f}_o / (n^{f}_o + n^{m}_o)`, the share of female
  choices among the gendered ones (neutral choices are counted, ``n_neutral``, not in the share).

Each :math:`y` is correlated with each statistic by :func:`assoc.stats.correlation` (what the
``correlate`` analysis runs): Pearson's r (``method``) with Fisher's z interval
(:math:`\tanh(\operatorname{atanh} r \mp z_{1-\alpha/2}/\sqrt{n-3})`), t and p. Occupations
without a value or without statistics are left out and counted. ``output="occupations"`` returns
the per-occupation values instead, as an association table (``target`` the occupation, ``value``
*y*) that ``assoc analyze correlate --option criterion=<occupations-stats.tsv> key=target
criterion_key=occupation`` reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc import Analysis, DataError, Estimate, Headline, Option, Requirement, confidence_level, non_negative

from ..choice_table import (
    NEEDED,
    TIES,
    choice_shares,
    per_item,
    problem_counts,
    rate_interval,
    read_runs,
    rows_of,
)
from .items import CITATION, CRITERIA, GENDERS, REFERENT_ROLES, occupation_statistics

if TYPE_CHECKING:
    import pandas as pd

    from ..choice_table import Run

SCORER = "winogender"
ALL = "all"
REFERENT_COLUMNS = ("task", "occupation", "gender")
PRONOUN_COLUMNS = ("task", "occupation")
#: The name of each occupation measure (the ``measure`` of ``output="occupations"``).
MEASURES = {
    ("referent", "scores"): "female_minus_male_to_occupation_x100",
    ("referent", "choices"): "female_minus_male_to_occupation_x100",
    ("pronoun", "scores"): "mean_female_minus_male",
    ("pronoun", "choices"): "share_female",
}
BERGSMA_CITATION = (
    "Bergsma, S., & Lin, D. (2006). Bootstrapping path-based pronoun resolution. Proceedings of COLING/ACL 2006"
)


def _task_rows(table: pd.DataFrame, task: str, what: str) -> pd.DataFrame:
    rows = rows_of(table, SCORER, what)
    if "task" not in rows.columns:
        raise DataError(f"{what}: the table has no 'task' column (referent or pronoun): is it a winogender table?")
    return rows[rows["task"].astype(str) == task]


def _statistics(source: Any) -> pd.DataFrame:
    if isinstance(source, str):
        source = Path(source)
    return occupation_statistics(source)


def _statistics_check(value: Any) -> Any:
    import pandas as pd

    if value is None or isinstance(value, (str, Path, pd.DataFrame)):
        return value
    raise ValueError("give a Winogender folder, an occupations-stats.tsv file or a DataFrame")


class WinogenderAnalysis(Analysis):
    """Winogender accuracy overall and per pronoun gender, as lm-eval's tasks (see ``docs/winogender.md``)."""

    name = "winogender"
    requires = Requirement(
        needs="Winogender referent scores or choices (a winogender table of the winogender stimuli)",
        scorers=(SCORER,),
        among_others=True,
        columns=(*NEEDED, *REFERENT_COLUMNS),
        instead="score the referent items: assoc score --scorer winogender --stimuli winogender ...",
    )
    description = (
        "Winogender (Rudinger et al., 2018): accuracy of whom the pronoun refers to, overall and per pronoun gender, "
        "as lm-evaluation-harness's winogender tasks (a tie picks the occupation), with bootstrap intervals over items."
    )
    citation = CITATION
    estimate_column = "accuracy"
    #: Accuracy per pronoun gender (lm-eval's tasks) and gotcha bucket; the headline keeps lm-eval's four tasks.
    headline = Headline(
        estimates=(Estimate("accuracy", "accuracy", low="ci_low", high="ci_high", n=("n_scored",), reference=None),),
        rows={"gotcha": ("",)},
        labels=("model", "method", "gender", "gotcha"),
    )
    options = (
        Option(
            "ties",
            str,
            "first",
            "first: a likelihood tie picks the first option, the occupation (lm-eval's argmax); split: it counts half",
            choices=TIES,
        ),
        Option(
            "statistics",
            object,
            None,
            "the occupations' statistics, for the gotcha rows: a Winogender folder or occupations-stats.tsv (default: "
            "the bundled file)",
            check=_statistics_check,
        ),
        Option("n_bootstrap", int, 1000, "bootstrap resamples per row (0: no intervals)", check=non_negative),
        Option("confidence", float, 0.95, "level of the bootstrap intervals", check=confidence_level),
        Option("seed", int, 0, "seed of the bootstrap"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """One row per run and pronoun gender (``all`` first), then per gender and "gotcha" (the paper's Table 2)."""
        import numpy as np
        import pandas as pd

        p = self.params
        statistics = _statistics(p["statistics"]).set_index("occupation")
        rows = _task_rows(table, "referent", "winogender")
        if rows.empty:
            raise DataError(
                "winogender: the table has no referent rows (task 'referent'); accuracy needs the winogender stimuli, "
                "winogender_occupations reads pronoun rows"
            )
        out: list[dict[str, Any]] = []
        for run in read_runs(
            rows, n_options=2, roles=REFERENT_ROLES, columns=(*REFERENT_COLUMNS, "answer"), what="winogender"
        ):
            shares, used, tied = choice_shares(run, p["ties"])
            frame = run.items[["item_id", "gender"]].copy()
            answer = run.items["answer"].to_numpy(dtype=int)
            if ((answer < 0) | (answer >= len(REFERENT_ROLES))).any():
                raise DataError("winogender: a referent item's answer must be 0 (occupation) or 1 (participant)")
            frame["correct"] = np.where(used, shares[np.arange(len(shares)), answer], 0.0)
            frame["used"] = used.astype(float)
            frame["tied"] = tied.astype(int)
            frame["problem"] = run.problem
            share = statistics.reindex(run.items["occupation"].to_numpy())["bls_pct_female"].to_numpy()
            to_occupation = answer == 0
            # the paper's Table 2: a pronoun against the occupation's majority gender (BLS) is a "gotcha"
            female_gotcha = np.where(to_occupation == (share < 50), "yes", "no")
            male_gotcha = np.where(to_occupation == (share > 50), "yes", "no")
            frame["gotcha"] = np.select(
                [np.isnan(share), frame["gender"] == "female", frame["gender"] == "male"],
                ["", female_gotcha, male_gotcha],
                default="",
            )
            cells = [(g, "") for g in (ALL, *GENDERS)] + [(g, c) for g in ("female", "male") for c in ("no", "yes")]
            for gender, gotcha in cells:
                cell = frame if gender == ALL else frame[frame["gender"] == gender]
                if gotcha:
                    cell = cell[cell["gotcha"] == gotcha]
                if cell.empty:
                    continue
                out.append(self._row(run, gender, gotcha, cell, len(out)))
        return pd.DataFrame(out)

    def _row(self, run: Run, gender: str, gotcha: str, cell: pd.DataFrame, index: int) -> dict[str, Any]:
        import numpy as np

        p = self.params
        items = per_item(cell[cell["used"] > 0], ("correct", "used", "tied"))
        left_out = problem_counts(cell.loc[cell["used"] == 0, "problem"].to_numpy())
        accuracy, low, high = rate_interval(
            items["correct"].to_numpy(), items["used"].to_numpy(), confidence=p["confidence"],
            n_bootstrap=p["n_bootstrap"], seed=np.random.default_rng([p["seed"], index]),
        )  # fmt: skip
        return {
            **run.key,
            "measures": ",".join(run.measures),
            "gender": gender,
            "gotcha": gotcha,
            "lm_eval_task": "" if gotcha else f"winogender_{gender}",
            "n_items": int(cell["item_id"].nunique()),
            "n_scored": len(items),
            "n_left_out": sum(left_out.values()),
            "left_out": json.dumps(left_out),
            "n_ties": int(items["tied"].sum()),
            "accuracy": accuracy,
            "ci_low": low,
            "ci_high": high,
            "confidence": p["confidence"],
            "n_bootstrap": p["n_bootstrap"],
            "ties": p["ties"],
        }


class WinogenderOccupationsAnalysis(Analysis):
    """Per occupation, the preference for female pronouns, correlated with the share of women (docs/winogender.md)."""

    name = "winogender_occupations"
    requires = Requirement(
        needs="Winogender scores or choices (a winogender table, referent or pronoun items)",
        scorers=(SCORER,),
        among_others=True,
        columns=(*NEEDED, *PRONOUN_COLUMNS),
        instead="score Winogender first: assoc score --scorer winogender --stimuli winogender_pronouns ...",
    )
    description = (
        "Winogender (Rudinger et al., 2018): per occupation, the model's preference for female pronouns (the paper's "
        "female-minus-male resolution to the occupation, or the mean log P(female) - log P(male), or the share of "
        "female choices), correlated with the occupation's share of women (BLS 2015, Bergsma & Lin 2006): Pearson r "
        "with a Fisher-z interval."
    )
    citation = f"{CITATION}; {BERGSMA_CITATION}"
    estimate_column = "r"
    #: The paper's Table 1: r of the per-occupation preference with each statistic (output="occupations" is a table).
    headline = Headline(
        estimates=(
            Estimate("r", "correlation with the share of women (r)", low="ci_low", high="ci_high", p_value="p_value",
                     n=("n",), reference=0.0),
        ),
        labels=("model", "method", "task", "measure", "criterion"),
    )  # fmt: skip
    options = (
        Option(
            "output",
            str,
            "correlations",
            "correlations: r of each measure with each statistic; occupations: the per-occupation values (an "
            "association table for the correlate analysis)",
            choices=("correlations", "occupations"),
        ),
        Option(
            "statistics",
            object,
            None,
            "the occupations' statistics: a Winogender folder or occupations-stats.tsv (default: the bundled file)",
            check=_statistics_check,
        ),
        Option("criteria", list, list(CRITERIA), "the statistics to correlate with (columns of the statistics)"),
        Option("method", str, "pearson", "pearson or spearman", choices=("pearson", "spearman")),
        Option("confidence", float, 0.95, "confidence level of the Fisher-z interval", check=confidence_level),
        Option(
            "ties",
            str,
            "first",
            "referent items: a likelihood tie picks the occupation (first, as lm-eval) or counts half (split)",
            choices=TIES,
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Correlations (or per-occupation values): see the module docstring."""
        import pandas as pd

        from assoc.stats import correlation

        p = self.params
        statistics = _statistics(p["statistics"])
        missing = [c for c in p["criteria"] if c not in statistics.columns]
        if missing:
            raise DataError(f"winogender_occupations: the statistics have no column(s) {', '.join(missing)}")
        known = statistics.set_index("occupation")
        occupations = [self._referent(table, known), self._pronoun(table, known)]
        values = pd.concat([o for o in occupations if not o.empty], ignore_index=True) if any(
            not o.empty for o in occupations
        ) else pd.DataFrame()  # fmt: skip
        if values.empty:
            raise DataError("winogender_occupations: the table has no winogender rows of task referent or pronoun")
        if p["output"] == "occupations":  # the statistics stay out: correlate joins them by itself
            return values.drop(columns=list(p["criteria"]))
        out: list[dict[str, Any]] = []
        for (model, kind, method, task, measure), part in values.groupby(
            ["model", "model_kind", "method", "task", "measure"], sort=False
        ):
            has_value = part["value"].notna()
            for criterion in p["criteria"]:
                has_statistic = part[criterion].notna()
                complete = part[has_value & has_statistic]
                row: dict[str, Any] = {
                    "model": model, "model_kind": kind, "method": method, "task": task, "measure": measure,
                    "criterion": criterion, "n_occupations": len(part),
                    "n_without_value": int((~has_value).sum()), "n_without_statistic": int((~has_statistic).sum()),
                    "n_items": int(part["n_items"].sum()), "n_left_out": int(part["n_left_out"].sum()),
                }  # fmt: skip
                try:
                    result = correlation(
                        complete["value"].to_numpy(), complete[criterion].to_numpy(), method=p["method"],
                        confidence=p["confidence"],
                    ).as_dict()  # fmt: skip
                except DataError as exc:  # fewer than 4 occupations, or a constant measure: say why, keep the row
                    result = {"r": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": len(complete)}
                    row["problem"] = str(exc)
                out.append({**row, **result})
        return pd.DataFrame(out)

    def _occupation_rows(
        self, run: Run, task: str, frame: pd.DataFrame, y: pd.Series, known: pd.DataFrame, extra: list[str]
    ) -> list[dict[str, Any]]:
        """One association-table row per occupation: ``value`` its measure ``y``, with counts and statistics."""
        import numpy as np

        measure = MEASURES[(task, run.kind)]
        out = []
        for occupation, part in frame.groupby("occupation", sort=False):
            left_out = problem_counts(part.loc[~part["used"], "problem"].to_numpy())
            stats = known.loc[occupation] if occupation in known.index else None
            out.append(
                {
                    "scorer": SCORER,
                    "model": run.model,
                    "context": "",
                    "target_group": "occupation",
                    "target": occupation,
                    "attribute_group": "",
                    "attribute": "",
                    "measure": measure,
                    "value": float(y[occupation]) if np.isfinite(y[occupation]) else float("nan"),
                    "model_kind": run.model_kind,
                    "method": run.method,
                    "task": task,
                    "occupation": occupation,
                    "n_items": int(part.loc[part["used"], "item_id"].nunique()),
                    "n_left_out": sum(left_out.values()),
                    "left_out": json.dumps(left_out),
                    **{k: float(part[k].sum()) for k in extra},
                    **{c: (float(stats[c]) if stats is not None else float("nan")) for c in self.params["criteria"]},
                }
            )
        return out

    def _referent(self, table: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        rows = _task_rows(table, "referent", "winogender_occupations")
        out: list[dict[str, Any]] = []
        if rows.empty:
            return pd.DataFrame()
        for run in read_runs(
            rows, n_options=2, roles=REFERENT_ROLES, columns=REFERENT_COLUMNS, what="winogender_occupations"
        ):
            shares, used, _ = choice_shares(run, self.params["ties"])
            frame = run.items[["item_id", "occupation", "gender"]].copy()
            frame["used"] = used
            frame["problem"] = run.problem
            frame["to_occupation"] = shares[:, 0]
            female, male = (frame["used"] & (frame["gender"] == g) for g in ("female", "male"))
            frame["n_female"], frame["n_male"] = female.astype(float), male.astype(float)
            frame["female_to_occupation"] = np.where(female, frame["to_occupation"], 0.0)
            frame["male_to_occupation"] = np.where(male, frame["to_occupation"], 0.0)
            sums = frame.groupby("occupation", sort=False)[
                ["female_to_occupation", "male_to_occupation", "n_female", "n_male"]
            ].sum()
            with np.errstate(invalid="ignore", divide="ignore"):
                y = 100.0 * (
                    sums["female_to_occupation"] / sums["n_female"] - sums["male_to_occupation"] / sums["n_male"]
                )
            out += self._occupation_rows(
                run, "referent", frame, y, known, ["n_female", "female_to_occupation", "n_male", "male_to_occupation"]
            )
        return pd.DataFrame(out)

    def _pronoun(self, table: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        rows = _task_rows(table, "pronoun", "winogender_occupations")
        out: list[dict[str, Any]] = []
        if rows.empty:
            return pd.DataFrame()
        for run in read_runs(rows, n_options=3, roles=GENDERS, columns=PRONOUN_COLUMNS, what="winogender_occupations"):
            frame = run.items[["item_id", "occupation"]].copy()
            frame["problem"] = run.problem
            if run.kind == "scores":
                difference = run.values[:, 0] - run.values[:, 1]  # female minus male; the neutral sentence is not read
                frame["used"] = np.isfinite(difference)
                frame["difference"] = np.where(frame["used"], difference, 0.0)
                frame["n_used"] = frame["used"].astype(float)
                sums = frame.groupby("occupation", sort=False)[["difference", "n_used"]].sum()
                with np.errstate(invalid="ignore", divide="ignore"):
                    y = sums["difference"] / sums["n_used"]
                extra = ["n_used"]
            else:
                frame["used"] = run.chosen >= 0
                for k, gender in enumerate(GENDERS):
                    frame[f"n_{gender}"] = (run.chosen == k).astype(float)
                sums = frame.groupby("occupation", sort=False)[["n_female", "n_male"]].sum()
                with np.errstate(invalid="ignore", divide="ignore"):
                    y = sums["n_female"] / (sums["n_female"] + sums["n_male"])
                extra = [f"n_{g}" for g in GENDERS]
            out += self._occupation_rows(run, "pronoun", frame, y, known, extra)
        return pd.DataFrame(out)
