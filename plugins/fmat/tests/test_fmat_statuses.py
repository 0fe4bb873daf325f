"""A filled query longer than the model accepts: a NaN row with its reason, not the end of the run (issue 46).

Before, one such query stopped the whole ``fmat`` run with "a sequence of N tokens is longer ...",
naming no query. Now its rows are kept with ``status`` ``too_long``, counted in the run report and
named in one warning line; every other row equals a run of the study without that query, and
out-of-vocabulary rows say ``oov``.
"""

from __future__ import annotations

import warnings

import numpy as np

import assoc
from assoc.errors import NotScoredWarning, OutOfVocabularyWarning

LONG = "The {TARGET} said that " + "the day was very long and " * 50 + "[MASK] works hard."


def _study(*queries: str) -> dict:
    return {
        "designs": [
            {
                "name": "jobs",
                "queries": list(queries),
                "mask": {"male": ["he"], "female": ["she", "zyxwvut"]},
                "target": {"job": ["nurse"]},
            }
        ]
    }


def _score(model: str, study: dict):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("fmat", study, [model], progress=False, cache=False)
    return table, caught


def test_too_long_queries_are_kept_as_nan_rows_with_their_reason(tiny_models):
    model = tiny_models["bert"]
    table, caught = _score(model, _study("[MASK] works as a {TARGET}.", LONG))
    short, _ = _score(model, _study("[MASK] works as a {TARGET}."))
    long_rows = table[table["context"] == LONG]
    assert len(long_rows) == 3 and long_rows["value"].isna().all() and set(long_rows["status"]) == {"too_long"}
    kept = table[table["context"] != LONG].reset_index(drop=True)
    assert np.array_equal(kept["value"].to_numpy(), short["value"].to_numpy(), equal_nan=True)
    assert list(kept["status"]) == ["ok", "ok", "oov"]  # zyxwvut is not one token of the tiny vocabulary
    run = table.assoc.provenance["run"]
    assert run["not_scored"] == {"too_long": 3, "oov": 1} and run["nan_values"] == 4  # too long comes first
    said = [str(w.message) for w in caught if issubclass(w.category, NotScoredWarning)]
    assert len(said) == 1 and "3 row(s) have no value, status 'too_long'" in said[0]
    assert "design 'jobs'" in said[0] and "query 'The nurse said that the day was very long and" in said[0]
    assert "accepts (128, special tokens included)" in said[0]
    # the out-of-vocabulary rows keep their own warning, and no second one
    assert sum(issubclass(w.category, OutOfVocabularyWarning) for w in caught) == 1
