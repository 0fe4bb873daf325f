"""Replaying the authors' 4,200 GPT-4o replies gives the means of the authors' notebook (Bai et al., 2025).

Runs the code of ``docs/replication/bai2025.md`` (the whole bundled study through the local
OpenAI-compatible server, each prompt answered with the recorded reply) and compares with numbers
computed **outside this project** by the authors' own code: the cells 5 to 13 of
``analysis/clean.ipynb`` (github.com/baixuechunzi/llm-implicit-bias, HEAD 0d2772e, MIT) converted
verbatim into a script, run with pandas on the 84 files of ``data/result_gpt4o`` concatenated (the
reply column ``0`` renamed ``response``), then ``groupby("category")["iat_bias"].mean()``.

* ``AUTHORS_COMMITTED``: with the notebook's label file, the committed ``iat_stimuli_synonym.csv``;
  the notebook scores 71 of the 4,200 replies 0.
* ``AUTHORS_CLEAN``: the same script with a label file rebuilt so that each stereotype's block
  splits into its own default- and stigma-congruent halves (the synonym words by the word they
  replace; the four added occupations default-congruent, as in the authors' analysis file),
  from ``../shared/stimuli/bai2025_word_association.yaml``; again 71 zeros.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "replication" / "bai2025.md"

AUTHORS_COMMITTED = {
    "age": 0.27875238335246855,
    "arab": -0.030624618315962554,
    "asian": -0.026030056585354667,
    "black": -0.023461864194328587,
    "buddhism": -0.01483614761715392,
    "career": 0.8698482198237453,
    "disability": 0.7886855241264563,
    "eating": 0.15804252652951892,
    "english": -0.03500039194995745,
    "guilt": 0.9503907032776223,
    "hispanic": 0.033891029292764115,
    "islam": 0.4482452986012542,
    "judaism": 0.32224813573766126,
    "mentalill": 0.35512557003932144,
    "power": 0.5262846009161248,
    "racism": 0.8820536828963796,
    "science": 0.6362322720115372,
    "sexuality": -0.8053312158005947,
    "skintone": 0.9975031210986266,
    "weapon": 0.6943064473036632,
    "weight": -0.13736543741123472,
}
AUTHORS_CLEAN = {
    "age": 0.4289752302982177,
    "arab": -0.011078380725892909,
    "asian": 0.03416678074709167,
    "black": -0.01674097273153317,
    "buddhism": -0.01483614761715392,
    "career": 0.8698482198237453,
    "disability": 0.9966722129783695,
    "eating": 0.15804252652951892,
    "english": -0.03500039194995745,
    "guilt": 0.9503907032776223,
    "hispanic": 0.05546900714494825,
    "islam": 0.4482452986012542,
    "judaism": 0.32224813573766126,
    "mentalill": 0.35512557003932144,
    "power": 0.5262846009161248,
    "racism": 0.9725655430711609,
    "science": 0.6362322720115372,
    "sexuality": -0.884961150350223,
    "skintone": 0.9975031210986266,
    "weapon": 0.6943064473036632,
    "weight": -0.18038799655876056,
}
AUTHORS_ZEROS = 71


# the page's replication runs 4200 requests through the local server once for the module: all of it is slow
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page() -> dict:
    return run_blocks(code_blocks(PAGE), name="docs/replication/bai2025.md", namespace={"__name__": "docs_bai2025"})


@pytest.mark.docs("docs/replication/bai2025.md", "python")
def test_every_recorded_reply_went_through_the_server(page):
    run = page["run"]
    assert run["requests"] == run["sent"] == 4200
    assert sum(run["replies"].values()) == 4200


@pytest.mark.parametrize(("result", "reference"), [("authors", AUTHORS_COMMITTED), ("clean", AUTHORS_CLEAN)])
def test_bai2025_mode_gives_the_authors_means(page, result, reference):
    table = page[result].set_index("design")
    assert sorted(table.index) == sorted(reference)
    for stereotype, expected in reference.items():
        assert abs(table.loc[stereotype, "mean_d"] - expected) < 1e-12, stereotype
    assert table["n_zero"].sum() == AUTHORS_ZEROS
    assert (table["n_scored"] == 200).all()


def test_default_mode_leaves_replies_without_pairs_out(page):
    default = page["default"].set_index("design")
    assert (default["n_scored"] + default["n_missing"] == 200).all()
    assert 0 < default["n_missing"].sum() <= AUTHORS_ZEROS
    # stereotypes that the label defect, the hyphenated synonyms and lost replies leave alone agree
    for stereotype in ("career", "skintone", "eating"):
        assert abs(default.loc[stereotype, "mean_d"] - AUTHORS_COMMITTED[stereotype]) < 1e-12, stereotype
