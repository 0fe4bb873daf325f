"""Rows a language-model scorer keeps without a value: their ``status``, the run report's count, one warning line.

A text longer than the model accepts is never cut (that would score another text), and a causal
LM's option with nothing before it has no ``log P(option | text before it)``. A scorer that can go
on without such rows keeps each as a row with ``value`` NaN and a ``status`` saying why
(:data:`TOO_LONG`, :data:`NO_START_TOKEN`, ...; ``"ok"`` for a row with a value). Its ``merge``
then calls :func:`settle_statuses`, which counts them for the run report (``not_scored``:
``{status: rows}``, beside ``nan_values``) and says so in one :class:`~assoc.errors.NotScoredWarning`
line per status, naming the first such row and the reason. The fmat, pll and clm scorers do this;
a benchmark whose published number needs every item refuses a too-long item instead, naming it
(:class:`~assoc.errors.TooLongError` carries the text, its length and the model's limit).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from assoc.lm.requests import OK, shown_text

#: A text longer than the model accepts (special tokens included).
TOO_LONG = "too_long"
#: A causal LM's option with nothing before it: no start token, and it starts the text (:mod:`assoc.lm.causal.text`).
NO_START_TOKEN = "no_start_token"
#: The run report's key: rows kept without a value, by status.
REPORT_KEY = "not_scored"
#: The private key of a row that carries its reason until :func:`settle_statuses` reads it.
REASON_KEY = "_reason"
#: No token left to score (a one-token text after nothing, an option that merges into its context).
NO_TOKENS = "no_tokens"
#: How each status reads in the warning line ("N rows have no value: ...").
MEANINGS = {
    TOO_LONG: "their text is longer than the model accepts, and is never cut",
    NO_TOKENS: "no token of theirs is left to score",
    NO_START_TOKEN: "the option starts the sentence and the BOS policy puts nothing before it, so its first token "
    "cannot be scored; bos='auto' on a tokenizer with a BOS or EOS token scores it",
}
#: What the ``status`` column means, for a scorer's ``extra_columns``.
STATUS_COLUMN = (
    "ok, or why the row has no value (NaN): too_long (the text is longer than the model accepts), "
    "no_start_token (clm: nothing precedes the option), no_tokens (nothing left to score), oov (fmat: the "
    "option is not one token); counted in the run report (not_scored)"
)


def too_long_reason(text: str, n_tokens: int, model: str, max_length: int) -> str:
    """The reason of a too-long text, one phrase: the text (shortened), its length and the model's limit."""
    return (
        f"{shown_text(text)} has {n_tokens} tokens, more than model {model!r} accepts "
        f"({max_length}, special tokens included)"
    )


def without_value(row: dict[str, Any], status: str, reason: str = "") -> dict[str, Any]:
    """``row`` kept without a value: ``value`` NaN, its ``status``, and the ``reason`` :func:`settle_statuses` reads."""
    if status == OK:
        raise ValueError("a row kept without a value needs a status other than 'ok'")
    return {**row, "value": math.nan, "status": status, REASON_KEY: reason}


def settle_statuses(
    scorer: str, rows: Sequence[dict[str, Any]], *, quiet: Iterable[str] = ()
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(``rows`` without their private reasons, the run report's part: ``{"not_scored": {status: count}}`` or ``{}``).

    Warns once per status not in ``quiet`` (statuses another warning already explains, fmat's
    ``oov``), naming how many rows, the first row's model, design and reason. The caller's ``merge``
    attaches the report to its table (:func:`assoc.set_run_report`).
    """
    counts: dict[str, int] = {}
    first: dict[str, dict[str, Any]] = {}
    settled = []
    for row in rows:
        status = str(row.get("status", OK))
        if status != OK:
            counts[status] = counts.get(status, 0) + 1
            first.setdefault(status, row)
        settled.append({k: v for k, v in row.items() if k != REASON_KEY})
    silent = set(quiet)
    for status, count in counts.items():
        if status in silent:
            continue
        row = first[status]
        where = ", ".join(
            f"{name} {row[key]!r}" for key, name in (("model", "model"), ("design", "design")) if row.get(key)
        )
        reason = row.get(REASON_KEY) or status
        meaning = MEANINGS.get(status, "")
        warnings.warn(
            f"scorer {scorer!r}: {count} row(s) have no value, status {status!r}"
            + (f" ({meaning})" if meaning else "")
            + f"; first: {where + ': ' if where else ''}{reason}; they are kept as NaN and counted in the run "
            f"report ({REPORT_KEY})",
            _warning_category(),
            stacklevel=3,
        )
    return settled, ({REPORT_KEY: counts} if counts else {})


def _warning_category() -> type[Warning]:
    from assoc.errors import NotScoredWarning

    return NotScoredWarning
