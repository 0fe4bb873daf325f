"""The ``word_association`` analysis: D per reply of the LLM Word Association Test, and its means.

Per reply (Bai et al., 2025, ``analysis/clean.ipynb`` cell 13):

    D = a / (a + b + 0.01) + d / (c + d + 0.01) - 1

with a = pairs (Y label, B word), b = (Y, A), c = (X, B), d = (X, A): X and Y the first and second
target groups (the bundled ``bai2025`` set: default and stigma), A and B the first and second
attribute groups (default- and stigma-congruent). D is about +1 when every word goes to its
congruent group, -1 when every word goes to the other, about -0.5 when all go to one label.

Two modes (``mode``):

* ``default``: the pairs are the table's ``chosen`` rows (the scorer's parser, each stereotype's
  own word halves); a reply without any pair is **missing** (no D), counted in ``n_missing``.
* ``bai2025``: the authors' code, exactly: each reply's text (``raw_reply``) is read again with
  their cleaning rules, group labels and words are looked up in lists **pooled over all
  stereotypes** (``labels``: ``clean`` = each stereotype's own halves, pooled; ``committed`` = the
  committed ``iat_stimuli_synonym.csv`` with its defect, for exact replication), one unknown
  label or word drops the whole reply, and a reply with no pair left scores **D = 0**, counted
  in ``n_zero`` (of which ``n_dropped`` lost their pairs to an unknown label or word).

Requests that got no reply at all are left out in both modes and counted in ``n_failed``.

Aggregation per ``by`` group (default: model and design, i.e. per model and stereotype): the mean
of D, its SD (n - 1), the t interval mean ± t_{1-α/2, n-1} · SD/√n, and the one-sample t-test of
mean D against 0 (t = mean / (SD/√n), df = n - 1, two-sided p), as the authors' ``ttest_1samp``
(``analysis_implicit.ipynb`` cell 8). See ``docs/word-association.md``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from assoc import Analysis, DataError, Option, OptionError, Requirement, column_list, confidence_level

from .bundled import CITATION, PooledLabels, clean_labels, committed_labels, stereotype_names
from .parsing import d_score, score_bai2025

if TYPE_CHECKING:
    import pandas as pd

REPLY_KEYS = ("model", "design", "variant", "sample", "response_id")
CHOSEN = "chosen"
REPLY = "pairs_parsed"


class WordAssociationAnalysis(Analysis):
    """D scores of the LLM Word Association Test per reply and their means, t-tests and intervals."""

    name = "word_association"
    requires = Requirement(
        needs="the replies of the LLM Word Association Test (a chat_word_association table)",
        scorers=("chat_word_association",),
        among_others=True,  # reads its rows out of an assoc.compare table (docs/word-association.md)
        columns=(*REPLY_KEYS, "raw_reply", "status", "target_role", "attribute_role"),
        instead="score with chat_word_association (assoc score --scorer chat_word_association ...)",
        measures=(REPLY, CHOSEN),
    )
    description = (
        "LLM Word Association Test (Bai et al., 2025): D = a/(a+b+.01) + d/(c+d+.01) - 1 per reply, mean, "
        "t interval and one-sample t-test per model and design; mode default (unparsable = missing) or "
        "bai2025 (the authors' code: their cleaning, pooled labels, D = 0)."
    )
    citation = CITATION
    estimate_column = "mean_d"
    options = (
        Option(
            "mode",
            str,
            "default",
            "default: the scorer's pairs, a reply without pairs is missing; bai2025: the authors' code "
            "(their cleaning, pooled labels, whole-reply dropping, D = 0 for no pairs)",
            choices=("default", "bai2025"),
        ),
        Option(
            "labels",
            str,
            "clean",
            "bai2025 mode: pooled labels from each stereotype's own halves (clean) or from the authors' "
            "committed iat_stimuli_synonym.csv (committed, exact replication)",
            choices=("clean", "committed"),
        ),
        Option(
            "by",
            list,
            ["model", "design"],
            "columns to aggregate by (model, design, variant, ...); [] for one overall row",
            check=column_list,
        ),
        Option("confidence", float, 0.95, "level of the t interval of the mean", check=confidence_level),
        Option("smoothing", float, 0.01, "the constant added to both denominators of D (the authors': 0.01)"),
        Option(
            "output",
            str,
            "summary",
            "summary (one row per group) or replies (one row per reply: a, b, c, d, D, status)",
            choices=("summary", "replies"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """D per reply, then the summary per ``by`` group (see the module docstring)."""
        p = self.params
        if p["mode"] == "default" and p["labels"] != "clean":
            raise OptionError(
                "word_association: labels='committed' applies to mode='bai2025' (the default mode uses each "
                "design's own word groups, as the scorer recorded them)"
            )
        replies = self.replies(table)
        if p["output"] == "replies":
            return replies
        missing = [c for c in p["by"] if c not in replies.columns]
        if missing:
            raise DataError(
                f"word_association: cannot aggregate by {', '.join(map(repr, missing))} (reply columns: "
                f"{', '.join(replies.columns)})"
            )
        return summarise(replies, list(p["by"]), p["confidence"], mode=p["mode"], labels=p["labels"])

    # -- per reply ---------------------------------------------------------------------------------

    def replies(self, table: pd.DataFrame) -> pd.DataFrame:
        """One row per reply: keys, a, b, c, d, n_pairs, ``d_score`` (NaN when missing) and ``status``."""
        import pandas as pd

        needed = [*REPLY_KEYS, "raw_reply", "status", "target_role", "attribute_role"]
        absent = [c for c in needed if c not in table.columns]
        if absent or not (table["measure"] == REPLY).any():
            raise DataError(
                "word_association: the table has no chat_word_association replies (rows of measure "
                f"{REPLY!r} with columns {', '.join(needed)}); score with scorer chat_word_association"
                + (f" (missing columns: {', '.join(absent)})" if absent else "")
            )
        reply_rows = table[table["measure"] == REPLY]
        keys = list(REPLY_KEYS)
        out = reply_rows[keys + ["status", "raw_reply"]].reset_index(drop=True).copy()
        out["sample"] = pd.to_numeric(out["sample"]).astype(int)
        smoothing = self.params["smoothing"]
        failed = out["status"] == "failed"
        if self.params["mode"] == "bai2025":
            labels = self._pooled_labels(table)
            scored = [
                score_bai2025(text, labels, smoothing) if not bad else None
                for text, bad in zip(out["raw_reply"], failed)
            ]
            for column in ("a", "b", "c", "d"):
                out[column] = [getattr(s, column) if s else 0 for s in scored]
            out["n_pairs"] = out[["a", "b", "c", "d"]].sum(axis=1)
            out["d_score"] = [s.score if s else math.nan for s in scored]
            out["bai2025_status"] = [s.status if s else "failed" for s in scored]
        else:
            chosen = table[(table["measure"] == CHOSEN) & (pd.to_numeric(table["value"]) == 1)].copy()
            chosen["sample"] = pd.to_numeric(chosen["sample"]).astype(int)
            cell = chosen["target_role"].astype(str) + chosen["attribute_role"].astype(str)
            counts = (
                pd.crosstab([chosen[k] for k in keys], cell)
                .reindex(columns=["YB", "YA", "XB", "XA"], fill_value=0)
                .rename(columns={"YB": "a", "YA": "b", "XB": "c", "XA": "d"})
                .reset_index()
            )
            out = out.merge(counts, on=keys, how="left", validate="one_to_one")
            for column in ("a", "b", "c", "d"):
                out[column] = out[column].fillna(0).astype(int)
            out["n_pairs"] = out[["a", "b", "c", "d"]].sum(axis=1)
            out["d_score"] = [
                d_score(a, b, c, d, smoothing) if n and not bad else math.nan
                for a, b, c, d, n, bad in zip(out["a"], out["b"], out["c"], out["d"], out["n_pairs"], failed)
            ]
        out["mode"] = self.params["mode"]
        return out.drop(columns=["raw_reply"])

    def _pooled_labels(self, table: pd.DataFrame) -> PooledLabels:
        """The pooled lists of bai2025 mode (see the module docstring and ``docs/word-association.md``)."""
        if self.params["labels"] == "committed":
            return committed_labels()
        designs = set(table.loc[table["measure"] == REPLY, "design"].astype(str))
        if designs <= set(stereotype_names()):
            return clean_labels()
        # Another design (a user's IAT stimuli): pool the labels and words the scorer recorded, by role.
        chosen = table[table["measure"] == CHOSEN]
        role_t, role_a = chosen["target_role"].astype(str), chosen["attribute_role"].astype(str)
        targets, attributes = chosen["target"].astype(str).str.lower(), chosen["attribute"].astype(str).str.lower()
        return PooledLabels(
            frozenset(targets[role_t == "X"]),
            frozenset(targets[role_t == "Y"]),
            frozenset(attributes[role_a == "A"]),
            frozenset(attributes[role_a == "B"]),
            "table",
        )


def summarise(replies: pd.DataFrame, by: list[str], confidence: float, *, mode: str, labels: str) -> pd.DataFrame:
    """Mean D, SD, t interval and one-sample t-test against 0 per ``by`` group of per-reply scores.

    For n scored replies with mean m and SD s (n - 1 denominator): SE = s/√n, interval
    m ± t_{(1+confidence)/2, n-1} · SE, t = m / SE, df = n - 1, p = 2 P(T_{n-1} > |t|). With
    n < 2, or s = 0, the SD-based columns are NaN.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    rows: list[dict[str, Any]] = []
    grouped = replies.groupby(by, sort=True, dropna=False) if by else [((), replies)]
    for key, part in grouped:
        key = key if isinstance(key, tuple) else (key,)
        failed = part["status"] == "failed"
        values = part.loc[~failed, "d_score"].to_numpy(dtype=float)
        scored = values[~np.isnan(values)]
        n = len(scored)
        mean = float(scored.mean()) if n else math.nan
        sd = float(scored.std(ddof=1)) if n > 1 else math.nan
        se = sd / math.sqrt(n) if n > 1 else math.nan
        if n > 1 and sd > 0:
            crit = float(stats.t.ppf((1 + confidence) / 2, n - 1))
            t = mean / se
            low, high, p = mean - crit * se, mean + crit * se, float(2 * stats.t.sf(abs(t), n - 1))
        else:
            t = low = high = p = math.nan
        status = part["bai2025_status"] if "bai2025_status" in part else None
        zero = int(((status != "scored") & ~failed).sum()) if status is not None else 0
        dropped = int(status.isin(["dropped_label", "dropped_word"]).sum()) if status is not None else 0
        rows.append(
            {
                **dict(zip(by, key)),
                "mode": mode,
                "labels": labels if mode == "bai2025" else "design",
                "n_replies": int((~failed).sum()),
                "n_scored": n,
                "n_missing": int(len(values) - n),
                "n_zero": zero,
                "n_dropped": dropped,
                "n_failed": int(failed.sum()),
                "mean_d": mean,
                "sd": sd,
                "se": se,
                "ci_low": low,
                "ci_high": high,
                "t": t,
                "df": n - 1 if n > 1 else math.nan,
                "p_value": p,
                "confidence": confidence,
            }
        )
    return pd.DataFrame(rows)
