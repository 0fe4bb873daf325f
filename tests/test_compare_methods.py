"""One call, three methods, the same stimuli: FMAT, WEAT and PLL side by side (the methods-paper use case)."""

from __future__ import annotations

import numpy as np
import pytest

import assoc
from assoc.table.provenance import get_provenance

pytest.importorskip("torch")
pytest.importorskip("assoc_fmat")
pytest.importorskip("assoc_weat")
pytest.importorskip("assoc_pll")

STIMULI = {
    "name": "occupations",
    "queries": ["The [MASK] works as a {TARGET}."],
    "mask": {"Male": ["man"], "Female": ["woman"]},
    "target": {"Occupation": ["nurse", "engineer", "teacher"]},
}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return str(build_bert_wordpiece(tmp_path_factory.mktemp("compare") / "bert"))


@pytest.mark.slow
def test_compare_fmat_weat_pll_on_one_stimuli_file(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    table = assoc.compare(
        STIMULI,
        {"fmat": {"models": [tiny_bert]}, "weat": {"models": ["glove-6b-50d"]}, "pll": {"models": [tiny_bert]}},
        progress=False,
    )
    assoc.validate_table(table)
    assert table.groupby("scorer").size().to_dict() == {"fmat": 6, "pll": 6, "weat": 6}
    assert dict(table.groupby("scorer")["measure"].first()) == {"fmat": "log_prob", "pll": "pll", "weat": "cosine"}
    # every method places the [MASK] candidates in the attribute role (the query fills {TARGET})
    for _, part in table.groupby("scorer"):
        assert set(zip(part.target, part.attribute)) == {
            (t, a) for t in ("nurse", "engineer", "teacher") for a in ("man", "woman")
        }
    # the fmat rows are exactly what the fmat scorer gives alone
    alone = assoc.score("fmat", STIMULI, [tiny_bert], progress=False)
    merged = table[table.scorer == "fmat"].merge(alone, on=["target", "attribute"], suffixes=("", "_alone"))
    np.testing.assert_array_equal(merged["value"], merged["value_alone"])
    # the weat rows are cosines of the GloVe vectors, computed here by hand
    from assoc_weat.embeddings import load_embeddings

    vectors = load_embeddings("glove-6b-50d")
    nurse, man = vectors.lookup("nurse")[0], vectors.lookup("man")[0]
    expected = float(nurse @ man / np.linalg.norm(nurse) / np.linalg.norm(man))
    got = table[(table.scorer == "weat") & (table.target == "nurse") & (table.attribute == "man")]["value"].item()
    assert got == pytest.approx(expected, abs=1e-6)
    # pll scores the filled sentences
    pll = table[table.scorer == "pll"]
    assert "The man works as a nurse." in set(pll["sentence"])
    assert [run["scorer"] for run in get_provenance(table)["runs"]] == ["fmat", "weat", "pll"]
