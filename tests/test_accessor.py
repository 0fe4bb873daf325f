"""``table.assoc``: provenance, summary() and cite() on tables from scorers, analyses, compare and files."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import assoc
from assoc.table.files import read_table, write_table

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

STIMULI = {
    "target": {"Flowers": ["rose", "tulip", "daisy"], "Insects": ["ant", "wasp", "flea"]},
    "attribute": {"Pleasant": ["love", "peace"], "Unpleasant": ["hate", "war"]},
}


@pytest.fixture(scope="module")
def scored() -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assoc.score("char_ngram", STIMULI, ["char-3gram"])


def test_provenance_records_models_fingerprints_and_library_versions(scored):
    provenance = scored.assoc.provenance
    assert provenance["scorer"] == "char_ngram" and provenance["models"] == ["char-3gram"]
    assert provenance["model_fingerprints"] == {"char-3gram": "char-3gram"}  # the default: the name itself
    from importlib import metadata

    assert provenance["libraries"]["pandas"] == metadata.version("pandas")
    assert provenance["libraries"]["numpy"] == metadata.version("numpy")
    provenance["models"].append("changed")  # a copy: the table's record is untouched
    assert scored.assoc.provenance["models"] == ["char-3gram"]


def test_cite_lists_the_scorer_then_each_analysis(scored):
    assert list(scored.assoc.cite()) == [assoc.get_scorer("char_ngram").citation]
    result = assoc.analyze("effect_size", scored, n_bootstrap=0)
    cited = list(result.assoc.cite())
    assert cited == [assoc.get_scorer("char_ngram").citation, assoc.get_analysis("effect_size").citation]
    assert str(result.assoc.cite()).startswith("[1] ")


def test_summary_of_a_table_and_of_an_analysis_result(scored):
    text = str(scored.assoc.summary())
    assert "scorer 'char_ngram'" in text and "char-3gram" in text and "value by model and measure" in text
    n = len(scored)
    assert f"{n:,} rows" in text
    result = assoc.analyze("effect_size", scored, n_bootstrap=0)
    report = result.assoc.summary().as_text()
    assert "analysis result: 'effect_size'" in report and "estimate" in report and "p_value" in report
    assert f"{result['estimate'].iloc[0]:.4g}" in report
    assert "Input:" in report and "char_ngram" in report


def test_compare_and_files_keep_the_accessor(scored, tmp_path):
    both = assoc.compare(STIMULI, {"char_ngram": {"models": ["char-2gram"]}, "weat": {}})
    cited = list(both.assoc.cite())
    assert cited[0] == assoc.get_scorer("char_ngram").citation and "Caliskan" in cited[1]
    assert "comparison of scorers char_ngram, weat" in str(both.assoc.summary())
    path = write_table(scored, tmp_path / "t.csv")
    again = read_table(path)
    assert again.assoc.provenance["scorer"] == "char_ngram"
    assert list(again.assoc.cite()) == list(scored.assoc.cite())


def test_a_table_without_provenance():
    plain = pd.DataFrame({"x": [1.0, 2.0]})
    assert plain.assoc.provenance == {}
    assert len(plain.assoc.cite()) == 0 and "no citation" in str(plain.assoc.cite())
    assert "without assoc provenance" in str(plain.assoc.summary())
