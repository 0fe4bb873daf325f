"""The Python API: score, compare and analyze, with validation and provenance."""

from __future__ import annotations

import pandas as pd
import pytest

import assoc
from assoc.errors import OptionError, StimuliError, TableError
from assoc.table.provenance import get_provenance

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

STIMULI = {
    "name": "flowers",
    "target": {"Flowers": ["rose", "tulip"], "Insects": ["ant", "wasp"]},
    "attribute": {"Pleasant": ["love", "joy"], "Unpleasant": ["hate", "war"]},
}


class MeanByGroup(assoc.Analysis):
    name = "mean_by_group"
    description = "mean value per target group"
    citation = "none"
    options = (assoc.Option("column", str, "target_group", "grouping column"),)

    def run(self, table):
        out = table.groupby(self.params["column"], sort=True)["value"].agg(["mean", "size"]).reset_index()
        return out.rename(columns={"size": "n"})


def test_score_returns_valid_table_with_provenance():
    table = assoc.score("char_ngram", STIMULI)
    assoc.validate_table(table)
    assert len(table) == 16 and set(table["model"]) == {"char-3gram"}
    provenance = get_provenance(table)
    assert provenance["scorer"] == "char_ngram" and provenance["models"] == ["char-3gram"]
    assert provenance["stimuli"] == "flowers" and len(provenance["stimuli_sha256"]) == 64
    assert provenance["plugin"] == "example" and provenance["options"] == {"lowercase": True}


def test_score_value_matches_hand_computation():
    # "rose" vs "love" with padded trigrams: " ro","ros","ose","se " vs " lo","lov","ove","ve ": no overlap -> 0.
    # "ant" vs "antler": " an","ant","nt " vs " an","ant","ntl","tle","ler","er ": 2 shared / sqrt(3*6).
    table = assoc.score("char_ngram", {"target": {"T": ["ant"]}, "attribute": {"A": ["antler", "rose"]}})
    assert table["value"].tolist() == pytest.approx([2 / (3 * 6) ** 0.5, 0.0])


def test_score_validates_before_running():
    with pytest.raises(OptionError, match="unknown option 'lowercse'"):
        assoc.score("char_ngram", STIMULI, lowercse=True)
    with pytest.raises(StimuliError):
        assoc.score("char_ngram", {"target": {"T": []}})
    with pytest.raises(assoc.ModelError, match="char-<n>gram"):
        assoc.score("char_ngram", STIMULI, models=["bert-base-uncased"])
    with pytest.raises(OptionError, match="listed twice"):
        assoc.score("char_ngram", STIMULI, models=["char-3gram", "char-3gram"])


def test_several_models_in_one_call():
    table = assoc.score("char_ngram", STIMULI, models=["char-2gram", "char-3gram"])
    assert table.groupby("model").size().to_dict() == {"char-2gram": 16, "char-3gram": 16}


def test_compare_runs_every_scorer_on_the_same_stimuli(inline_plugin, length_scorer):
    inline_plugin("lengthy", length_scorer("lengthy"))
    both = assoc.compare(STIMULI, {"char_ngram": {}, "lengthy": {"scale": 0.5}})
    assert both.groupby("scorer").size().to_dict() == {"char_ngram": 16, "lengthy": 16}
    assoc.validate_table(both)
    rose_love = both[(both.scorer == "lengthy") & (both.target == "rose") & (both.attribute == "love")]
    assert rose_love["value"].item() == 0.0
    runs = get_provenance(both)["runs"]
    assert [run["scorer"] for run in runs] == ["char_ngram", "lengthy"]
    # extra columns of one scorer are empty for the other, never NaN text in text columns
    assert both.loc[both.scorer == "lengthy", "n"].isna().all()


def test_compare_validates_all_options_first(inline_plugin, length_scorer):
    inline_plugin("lengthy", length_scorer("lengthy"))
    with pytest.raises(OptionError, match="unknown option 'scal'"):
        assoc.compare(STIMULI, {"char_ngram": {}, "lengthy": {"scal": 1}})


def test_analyze_any_valid_table(inline_plugin, tmp_path):
    inline_plugin("meaner", MeanByGroup)
    table = assoc.score("char_ngram", STIMULI)
    result = assoc.analyze("mean_by_group", table)
    expected = table.groupby("target_group")["value"].mean()
    assert result.set_index("target_group")["mean"].to_dict() == pytest.approx(expected.to_dict())
    assert get_provenance(result)["input"]["scorer"] == "char_ngram"
    path = tmp_path / "t.csv"
    assoc.write_table(table, path)
    from_file = assoc.analyze("mean_by_group", path, column="attribute_group")
    assert set(from_file["attribute_group"]) == {"Pleasant", "Unpleasant"}


def test_analyze_rejects_invalid_tables(inline_plugin):
    inline_plugin("meaner", MeanByGroup)
    with pytest.raises(TableError, match="lacks required column"):
        assoc.analyze("mean_by_group", pd.DataFrame({"value": [1.0]}))
    with pytest.raises(OptionError, match="did you mean 'column'"):
        assoc.analyze("mean_by_group", assoc.score("char_ngram", STIMULI), colum="x")


def test_listing_functions_survive_plugin_loading():
    """``assoc.analyses`` must stay the function even after the shared-analyses package is imported."""
    import importlib

    importlib.import_module("assoc.analysis.catalog")
    assert callable(assoc.analyses) and "icc" in assoc.analyses()
    assert callable(assoc.scorers) and "char_ngram" in assoc.scorers()


@pytest.mark.parametrize(
    "frame, message",
    [
        (
            "pd.DataFrame(columns=['target', 'attribute', 'value'])",
            r"output of scorer 'bad' has no rows for stimuli .*models \(none: a model-free scorer gets models=\[\]\)",
        ),
        (
            "pd.DataFrame({'target': ['a'], 'attribute': ['b']})",
            r"output of scorer 'bad' has no 'value' column \(columns: target, attribute\)",
        ),
        ("[{'value': 1.0}]", "output of scorer 'bad' must be a pandas DataFrame, got list"),
    ],
)
def test_scorer_output_problems_name_the_scorer_and_the_cause(fake_plugin, model_free_scorer_source, frame, message):
    fake_plugin("bad", model_free_scorer_source("bad", f"return {frame}"))
    with pytest.raises(TableError, match=message):
        assoc.score("bad", {"target": {"T": ["a"]}, "attribute": {"A": ["b"]}})


def test_conformance_check_catches_rows_that_cannot_be_told_apart(fake_plugin, model_free_scorer_source):
    from assoc.testing import check_scorer

    # forgets the target and attribute columns: the core fills them with "", every row looks alike
    fake_plugin("bad", model_free_scorer_source("bad", "return pd.DataFrame({'value': [1.0, 2.0]})"))
    with pytest.raises(AssertionError, match="2 rows agree on every column except 'value'.*role column"):
        check_scorer("bad", {"target": {"T": ["a", "b"]}, "attribute": {"A": ["c"]}})


RECORDS_MODELS = """
return from_records([dict(model=m, target=t, target_group=tg, attribute=a, attribute_group=ag, value=1.0)
                     for m in models for d in stimuli for tg, t, ag, a in d.word_pairs()], scorer=self.name)
"""


def test_local_model_paths_are_one_rater_however_written(fake_plugin, model_free_scorer_source, tmp_path, monkeypatch):
    fake_plugin("paths", model_free_scorer_source("paths", RECORDS_MODELS))
    (tmp_path / "m").mkdir()
    monkeypatch.chdir(tmp_path)
    stimuli = {"target": {"T": ["a"]}, "attribute": {"A": ["b"]}}
    absolute = str((tmp_path / "m").resolve())
    for written in ("m/", "./m", absolute, absolute + "/"):
        table = assoc.score("paths", stimuli, [written])
        assert table["model"].tolist() == [absolute], written
    with pytest.raises(OptionError, match="listed twice"):
        assoc.score("paths", stimuli, ["m/", absolute])
    hub_like = assoc.score("paths", stimuli, ["org/not-here"])  # not a local directory: kept as typed
    assert hub_like["model"].tolist() == ["org/not-here"]


def test_dir_lists_the_lazy_names():
    names = dir(assoc)
    for name in ("score", "compare", "analyze", "scorers", "analyses", "read_table", "Stimuli", "Analysis"):
        assert name in names
