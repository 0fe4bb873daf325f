"""The StereoSet, Winogender and WinoBias subpackages as registered: their stimuli and analyses pass the plugin-author
conformance checks, and a benchmark table survives a file and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from assoc_bias_benchmarks import plugin
from assoc_bias_benchmarks.choice_table import EXTRA_COLUMNS, choice_row, option_rows

import assoc
from assoc.testing import check_analysis

STIMULI = {
    "stereoset": 4229,
    "stereoset_intrasentence": 2106,
    "stereoset_intersentence": 2123,
    "winogender": 720,
    "winogender_pronouns": 240,
    "winobias": 3168,
}


def test_the_benchmarks_are_registered():
    assert {"stereoset", "winogender", "winobias"} <= set(plugin.BENCHMARKS)
    assert set(STIMULI) <= set(assoc.stimuli_sets())
    assert {"stereoset", "winogender", "winogender_occupations", "winobias"} <= set(assoc.analyses())


@pytest.mark.parametrize(("name", "count"), STIMULI.items())
def test_each_set_loads_by_name_as_items(name, count):
    stimuli = assoc.Stimuli.load(name)
    assert isinstance(stimuli, assoc.ItemStimuli) and stimuli.name == name and len(stimuli.items) == count
    assert stimuli.meta["citation"] and stimuli.meta["licence"]


def table_of(name: str, scorer: str, sample: int) -> assoc.ItemStimuli:
    rng = np.random.default_rng(1)
    items = assoc.Stimuli.load(name).subset(sample=sample, seed=0).items
    rows = []
    for item in items:
        values = np.round(rng.normal(-5.0, 1.0, size=len(item.options)), 2)
        rows += option_rows(item, values, model="m", model_kind="causal", method="lp", measure="log_prob")
    rows += [choice_row(item, k % len(item.options), model="c", model_kind="chat") for k, item in enumerate(items)]
    return assoc.from_records(rows, scorer=scorer, extra_columns=list(EXTRA_COLUMNS))


@pytest.mark.parametrize(
    ("analysis", "stimuli", "scorer", "sample", "options"),
    [
        ("stereoset", "stereoset", "stereoset", 5, {"n_bootstrap": 20}),
        ("winogender", "winogender", "winogender", 10, {"n_bootstrap": 20}),
        ("winogender_occupations", "winogender_pronouns", "winogender", 4, {}),
        ("winobias", "winobias", "winobias", 5, {"n_bootstrap": 20}),
    ],
)
def test_each_analysis_passes_the_conformance_checks(analysis, stimuli, scorer, sample, options):
    result = check_analysis(analysis, table_of(stimuli, scorer, sample), options)
    assert set(result["model"]) == {"m", "c"} and "estimate" in result.columns
    # what a report leads with: the declared estimates and intervals exist, one headline row per run (and split)
    headline = assoc.get_analysis(analysis).headline
    for estimate in headline.estimates:
        assert {estimate.column, estimate.low or estimate.column, estimate.high or estimate.column} <= set(result)
        assert set(estimate.n) <= set(result.columns)
    kept = headline.select(result)
    expected = {"stereoset": 2 * 3, "winogender": 2 * 4, "winogender_occupations": 2 * 2, "winobias": 2 * 3}
    assert len(kept) == expected[analysis] and set(headline.labels) & set(result.columns)


def test_a_table_survives_a_csv_file_and_the_command_line(tmp_path):
    from click.testing import CliRunner

    from assoc.cli import build_cli

    table = table_of("winobias", "winobias", 5)
    assoc.write_table(table, tmp_path / "winobias.csv")
    back = assoc.read_table(tmp_path / "winobias.csv")
    direct = assoc.analyze("winobias", table, n_bootstrap=0)
    assert assoc.analyze("winobias", back, n_bootstrap=0)[["gap", "accuracy_pro"]].equals(
        direct[["gap", "accuracy_pro"]]
    )
    out = tmp_path / "scores.json"
    argv = ["analyze", "winobias", "--table", str(tmp_path / "winobias.csv"), "--option", "n_bootstrap=0"]
    result = CliRunner().invoke(build_cli(), [*argv, "--out", str(out)], prog_name="assoc")
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["gap"] for r in rows] == pytest.approx(list(direct["gap"]))


@pytest.mark.parametrize("benchmark", ["stereoset", "winogender", "winobias"])
def test_every_item_column_is_documented_for_the_scorers(benchmark):
    """A scorer declares its extra columns: EXTRA_COLUMNS, then its benchmark's COLUMNS, which cover every item."""
    from importlib import import_module

    from assoc_bias_benchmarks.choice_table import item_columns

    documented = set(import_module(f"assoc_bias_benchmarks.{benchmark}.items").COLUMNS)
    core = set(assoc.table.schema.COLUMNS) | set(EXTRA_COLUMNS)
    for name in [n for n in STIMULI if n.startswith(benchmark)]:
        for item in assoc.Stimuli.load(name).items:
            assert set(item_columns(item)) - core <= documented, item.id
