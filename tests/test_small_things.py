"""Small things: natural order of names, one name per local model directory."""

from __future__ import annotations

import pytest

import assoc
from assoc.errors import OptionError, UnknownNameError, natural_key

RECORDS_MODELS = """
return from_records([dict(model=m, target=t, target_group=tg, attribute=a, attribute_group=ag, value=1.0)
                     for m in models for d in stimuli for tg, t, ag, a in d.word_pairs()], scorer=self.name)
"""


def test_names_sort_naturally():
    assert sorted(["weat10", "weat2", "weat1", "Weat3"], key=natural_key) == ["weat1", "weat2", "Weat3", "weat10"]
    message = str(UnknownNameError("design", "weat99", ["weat1", "weat10", "weat2"]))
    assert "(available: weat1, weat2, weat10)" in message
    with pytest.raises(
        UnknownNameError,
        match=r"available: weat1, weat2, weat3, weat4, weat5, weat6, weat7, "
        r"weat8, weat9, weat10\)",
    ):
        assoc.Stimuli.load("caliskan:weat99")


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
