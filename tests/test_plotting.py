"""Figures: the plotted numbers are the table's numbers."""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc import plotting
from assoc.cli import build_cli
from assoc.errors import OptionError, TableError
from assoc.table.files import write_table
from assoc.table.schema import from_records

pytest.importorskip("matplotlib")


def _scores() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for model in ("m1", "m2", "m3"):
        for i, target in enumerate(["nurse", "engineer", "teacher", "pilot", "baker"]):
            for attribute in ("he", "she"):
                rows.append(
                    {
                        "model": model,
                        "context": "q",
                        "target_group": "Occupation",
                        "target": target,
                        "attribute_group": attribute.upper(),
                        "attribute": attribute,
                        "value": i + (0.5 if attribute == "he" else 0) + rng.normal(scale=0.3),
                    }
                )
    return from_records(rows, scorer="fmat", measure="log_prob")


def test_model_agreement_is_pearson_over_items():
    table = _scores()
    corr = plotting.model_agreement(table)
    wide = {m: table[table.model == m].sort_values(["target", "attribute"])["value"].to_numpy() for m in ("m1", "m2")}
    assert corr.loc["m1", "m2"] == pytest.approx(np.corrcoef(wide["m1"], wide["m2"])[0, 1], abs=1e-12)
    with pytest.raises(TableError, match="at least two"):
        plotting.model_agreement(table[table.model == "m1"])


def test_forest_plot_shows_estimates_and_intervals():
    result = pd.DataFrame(
        {"design": ["weat1", "weat2"], "effect_size": [1.2, -0.4], "ci_low": [0.8, -0.9], "ci_high": [1.6, np.nan]}
    )
    fig = plotting.plot_estimates(result)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["weat1", "weat2"]
    points = ax.lines[0]
    assert list(points.get_xdata()) == [1.2, -0.4]
    segments = ax.collections[0].get_segments()
    assert len(segments) == 1 and list(segments[0][:, 0]) == [0.8, 1.6]  # the NaN interval is not drawn
    with pytest.raises(TableError, match="cannot find an estimate column"):
        plotting.plot_estimates(pd.DataFrame({"x": [1]}))


def test_forest_plot_prefers_a_label_column_and_knows_pll_estimates():
    icc = pd.DataFrame(
        {
            "type": ["agreement", "consistency", "agreement"],
            "unit": ["single", "single", "average"],
            "label": ["ICC(A,1)", "ICC(C,1)", "ICC(A,k)"],
            "icc": [0.5, 0.6, 0.8],
        }
    )
    fig = plotting.plot_estimates(icc)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["ICC(A,1)", "ICC(C,1)", "ICC(A,k)"]
    for column in ("posterior", "mean_loglik"):
        fig = plotting.plot_estimates(pd.DataFrame({"design": ["a", "b"], column: [0.25, 0.75]}))
        assert fig.axes[0].get_xlabel() == column
    with pytest.raises(TableError, match="101 estimates are too many for one forest plot"):
        plotting.plot_estimates(pd.DataFrame({"design": [str(i) for i in range(101)], "d": np.zeros(101)}))


def test_scores_plot_has_a_panel_per_model():
    fig = plotting.plot_scores(_scores())
    assert [ax.get_title() for ax in fig.axes] == ["m1", "m2", "m3"]


def test_cli_plot_writes_figures(tmp_path):
    table_path = tmp_path / "t.csv"
    write_table(_scores(), table_path)
    runner = CliRunner()
    for kind in ("scores", "agreement"):
        out = tmp_path / f"{kind}.png"
        result = runner.invoke(build_cli(), ["plot", kind, "--table", str(table_path), "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = runner.invoke(build_cli(), ["plot", "scores", "--table", str(table_path), "--out", str(tmp_path / "x.gif")])
    assert bad.exit_code == 2 and "use .png, .pdf or .svg" in bad.output
    typo = runner.invoke(
        build_cli(), ["plot", "scores", "--table", str(table_path), "-o", "hu=model", "--out", str(tmp_path / "y.png")]
    )
    assert typo.exit_code == 2 and "did you mean 'hue'" in typo.output


def test_save_figure_rejects_unknown_format(tmp_path):
    fig = plotting.plot_scores(_scores())
    with pytest.raises(OptionError):
        plotting.save_figure(fig, tmp_path / "f.bmp")


def test_forest_plot_draws_reference_columns_beside_the_estimates():
    result = pd.DataFrame({"test": ["weat1", "weat2"], "d": [1.08, 1.54], "published": [1.50, np.nan]})
    fig = plotting.plot_estimates(result, estimate="d", compare="published")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines if line.get_label() in ("d", "published")] == ["d", "published"]
    reference = [line for line in ax.lines if line.get_label() == "published"][0]
    assert list(reference.get_xdata()[:1]) == [1.50] and np.isnan(reference.get_xdata()[1])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["d", "published"]
    with pytest.raises(TableError, match="compare column"):
        plotting.plot_estimates(result, estimate="d", compare=["nope"])


@pytest.mark.slow
def test_plotting_leaves_the_users_backend_alone(tmp_path):
    import subprocess

    script = (
        "import matplotlib\n"
        "matplotlib.use('svg')\n"  # a non-interactive backend other than Agg, as a user might choose
        "import assoc\n"
        "from assoc.plotting import plot_scores, save_figure\n"
        "from assoc.table.schema import from_records\n"
        "t = from_records([{'model': 'm', 'target_group': 'X', 'target': 'x', 'attribute_group': 'A',\n"
        "                  'attribute': 'a', 'value': 1.0}], scorer='s', measure='m')\n"
        "fig = plot_scores(t)\n"
        "save_figure(fig, r'" + str(tmp_path / "f.png") + "')\n"
        "import matplotlib.pyplot as plt\n"
        "print(matplotlib.get_backend(), len(plt.get_fignums()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env={**os.environ, "MPLBACKEND": ""}
    )
    assert out.stdout.split() == ["svg", "0"]
    assert (tmp_path / "f.png").stat().st_size > 0


def test_one_row_forest_plot_has_a_label_and_a_title():
    from assoc.plotting import plot_estimates

    table = assoc.score("weat", "caliskan:weat1")
    result = assoc.analyze("weat", table)
    assert len(result) == 1
    fig = plot_estimates(result)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels != ["1"] and "weat1" in labels[0]
    assert ax.get_title() == "weat: effect_size" or ax.get_title().startswith("weat: ")
    # a result without provenance keeps a one-row title: the estimate's name
    bare = pd.DataFrame({"design": ["d1"], "d": [0.5]})
    fig = plot_estimates(bare)
    assert fig.axes[0].get_title() == "d" and fig.axes[0].get_yticklabels()[0].get_text() == "d1"
