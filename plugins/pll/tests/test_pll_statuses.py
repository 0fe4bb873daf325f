"""A sentence longer than the model accepts: a NaN row with its reason, not the end of the run (issue 46).

Before, one such sentence stopped the whole ``pll`` run. Now its row is kept with ``status``
``too_long``, counted in the run report and named in one warning line; every other row equals a
run of the study without it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import assoc
from assoc.errors import NotScoredWarning

LONG = "The {TARGET} said that " + "the day was very long and " * 50 + "[MASK] works hard."


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return str(build_bert_wordpiece(tmp_path_factory.mktemp("pll-statuses") / "bert"))


def _study(*queries: str) -> dict:
    return {
        "designs": [
            {
                "name": "jobs",
                "queries": list(queries),
                "mask": {"m": ["he"], "f": ["she"]},
                "target": {"job": ["nurse"]},
            }
        ]
    }


def test_too_long_sentences_are_kept_as_nan_rows_with_their_reason(bert, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("pll", _study("[MASK] works as a {TARGET}.", LONG), [bert], progress=False)
    short = assoc.score("pll", _study("[MASK] works as a {TARGET}."), [bert], progress=False, cache=False)
    long_rows = table[table["context"] == LONG]
    assert len(long_rows) == 2 and long_rows["value"].isna().all() and set(long_rows["status"]) == {"too_long"}
    kept = table[table["context"] != LONG].reset_index(drop=True)
    assert np.array_equal(kept["value"].to_numpy(), short["value"].to_numpy()) and set(kept["status"]) == {"ok"}
    assert table.assoc.provenance["run"]["not_scored"] == {"too_long": 2}
    said = [str(w.message) for w in caught if issubclass(w.category, NotScoredWarning)]
    assert len(said) == 1 and "2 row(s) have no value, status 'too_long'" in said[0] and "design 'jobs'" in said[0]
    assert "has 310 tokens, more than model" in said[0] and "accepts (128, special tokens included)" in said[0]
    # read back from the result cache: the same rows, counted again, said again
    with pytest.warns(NotScoredWarning):
        again = assoc.score("pll", _study("[MASK] works as a {TARGET}.", LONG), [bert], progress=False)
    assert again.assoc.provenance["run"]["not_scored"] == {"too_long": 2}
    assert np.array_equal(again["value"].to_numpy(), table["value"].to_numpy(), equal_nan=True)
