"""The weat scorer and analyses pass the core's plugin conformance checks."""

import numpy as np
import pandas as pd
import pytest

from assoc.testing.conformance import check_analysis, check_scorer

VOCAB = {
    "a1": (1.0, 0.2),
    "a2": (0.9, 0.1),
    "b1": (0.1, 1.0),
    "b2": (0.2, 0.8),
    "x1": (1.0, 0.0),
    "x2": (1.0, 1.0),
    "y1": (0.0, 1.0),
    "y2": (3.0, 4.0),
}
STIMULI = {
    "name": "toy",
    "target": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    "attribute": {"A": ["a1", "a2"], "B": ["b1", "b2"]},
}


@pytest.fixture()
def table(tmp_path):
    np.save(tmp_path / "toy.npy", np.array(list(VOCAB.values()), dtype=np.float32))
    (tmp_path / "toy.txt").write_text("\n".join(VOCAB), encoding="utf-8")
    return check_scorer("weat", STIMULI, [str(tmp_path / "toy.npy")], expect_rows=16)


def test_analyses_conform(table, tmp_path):
    check_analysis("weat", table, {"n_bootstrap": 50})
    check_analysis("wefat", table)
    pd.DataFrame({"word": ["x1", "x2", "y1", "y2"], "valence": [8.0, 6.0, 2.0, 3.0]}).to_csv(
        tmp_path / "norms.csv", index=False
    )
    result = check_analysis("valnorm", table, {"norms": str(tmp_path / "norms.csv")})
    assert result.iloc[0]["n"] == 4
