"""``[LABEL=]SPEC`` names a model for every scorer: tables, provenance, plots (rater names), icc and compare.

Scorers never see labels: the core runs them on the SPECs, writes the labels into the ``model`` column,
and keys every cache by the SPEC, so renaming a label recomputes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assoc
from assoc.errors import OptionError

STIMULI = {
    "queries": ["[MASK] is a {TARGET}.", "The [MASK] works as a {TARGET}."],
    "mask": {"F": ["she"], "M": ["he"]},
    "target": {"Job": ["nurse", "engineer", "teacher"]},
}


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def berts(tmp_path_factory) -> list[str]:
    """Two tiny masked LMs (seeds 0 and 1): two raters."""
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("labelled")
    return [str(build_bert_wordpiece(root / f"bert-{seed}", seed=seed)) for seed in (0, 1)]


def test_labels_name_models_in_the_table_and_provenance_keeps_the_spec(berts):
    table = assoc.score("fmat", STIMULI, [f"small={berts[0]}", f"other={berts[1]}"], progress=False)
    assert list(dict.fromkeys(table["model"])) == ["small", "other"]
    provenance = table.assoc.provenance
    assert provenance["models"] == ["small", "other"]
    assert set(provenance["model_fingerprints"]) == {"small", "other"}
    first = provenance["model_names"][0]
    resolved = str(Path(berts[0]).resolve())
    assert first["label"] == "small" and first["spec"] == resolved and first["path"] == resolved
    assert first["kind"] == "masked" and first["fingerprint"].startswith("sha256:") and first["device"]
    assert provenance["model_fingerprints"]["small"] == first["fingerprint"]
    # without a label a model is shown as before: its resolved path
    plain = assoc.score("fmat", STIMULI, [berts[0]], progress=False)
    assert list(plain["model"].unique()) == [resolved]
    assert plain.assoc.provenance["model_names"][0]["label"] is None
    assert plain["value"].equals(table[table["model"] == "small"]["value"].reset_index(drop=True))


def test_renaming_a_label_recomputes_nothing(berts):
    assoc.score("fmat", STIMULI, [f"a={berts[0]}"], progress=False)
    renamed = assoc.score("fmat", STIMULI, [f"b={berts[0]}"], progress=False)
    assert renamed.assoc.provenance["executor"]["units_from_cache"] == 1
    assert list(renamed["model"].unique()) == ["b"]


def test_raters_in_icc_and_plots_are_the_labels(berts):
    pytest.importorskip("matplotlib")
    from assoc.plotting import model_agreement, plot_model_agreement

    table = assoc.score("fmat", STIMULI, [f"small={berts[0]}", f"other={berts[1]}"], progress=False)
    result = assoc.analyze("icc", table)
    assert result.assoc.provenance["input"]["models"] == ["small", "other"]
    assert "small, other" in " ".join(str(result.assoc.summary()).split())
    assert sorted(model_agreement(table).columns) == ["other", "small"]
    figure = plot_model_agreement(table)
    shown = {label.get_text() for axis in figure.axes for label in axis.get_xticklabels() + axis.get_yticklabels()}
    assert {"small", "other"} <= shown


def test_labels_work_for_a_scorer_outside_the_language_model_layer():
    table = assoc.score("weat", "caliskan:weat1", ["glove=glove-6b-50d"], progress=False)
    assert list(table["model"].unique()) == ["glove"]
    record = table.assoc.provenance["model_names"][0]
    assert record["label"] == "glove" and record["spec"] == "glove-6b-50d" and record["path"] is None


def test_one_label_for_two_models_or_two_labels_for_one_are_refused(berts):
    with pytest.raises(OptionError, match="label 'x' names two models"):
        assoc.score("fmat", STIMULI, [f"x={berts[0]}", f"x={berts[1]}"], progress=False)
    with pytest.raises(OptionError, match="is listed twice"):
        assoc.score("fmat", STIMULI, [f"x={berts[0]}", f"y={berts[0]}"], progress=False)


def test_compare_on_the_command_line_takes_scorer_label_spec(berts, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import build_cli
    from assoc.table.files import read_table

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(STIMULI))
    command = ["compare", "-s", "fmat", "-s", "pll", "-i", "s.json", "--no-progress", "--out", "t.csv"]
    command += ["-m", f"fmat=tiny={berts[0]}", "-m", f"pll=tiny={berts[0]}"]
    result = CliRunner().invoke(build_cli(), command, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    table = read_table(tmp_path / "t.csv")
    assert set(table["model"]) == {"tiny"} and set(table["scorer"]) == {"fmat", "pll"}
    runs = table.assoc.provenance["runs"]
    assert [run["model_names"][0]["label"] for run in runs] == ["tiny", "tiny"]
