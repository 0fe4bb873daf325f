"""The shared analyses from the command line: options typed as text, tables read and written."""

import itertools
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.table.files import read_table, write_table
from assoc.table.schema import normalise


@pytest.fixture
def table_file(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    truth = {cell: rng.normal() for cell in itertools.product(["q1", "q2"], [f"job{i}" for i in range(8)])}
    for model in ["m1", "m2", "m3"]:
        for (context, target), t in truth.items():
            rows.append(
                {
                    "scorer": "fmat",
                    "model": model,
                    "context": context,
                    "target": target,
                    "target_group": "A" if target < "job4" else "B",
                    "measure": "lpr",
                    "value": t + rng.normal(scale=0.5),
                }
            )
    path = tmp_path / "t.parquet"
    write_table(normalise(pd.DataFrame(rows)), path)
    crit = pd.DataFrame({"target": [f"job{i}" for i in range(8)], "pct_male": np.arange(8) * 10.0})
    crit.to_csv(tmp_path / "crit.csv", index=False)
    return path


def run(args):
    result = CliRunner().invoke(build_cli(), args, catch_exceptions=False)
    return result


def test_icc_prints_and_writes(table_file, tmp_path):
    printed = run(["analyze", "icc", "--table", str(table_file), "-o", "type=consistency", "-o", "unit=average"])
    assert printed.exit_code == 0, printed.output
    assert "ICC(C,k)" in printed.output and "ICC(A,1)" not in printed.output
    out = tmp_path / "icc.csv"
    written = run(["analyze", "icc", "--table", str(table_file), "--out", str(out)])
    assert written.exit_code == 0
    back = read_table(out)
    assert list(back["label"]) == ["ICC(A,1)", "ICC(C,1)", "ICC(A,k)", "ICC(C,k)"]
    assert back.attrs["assoc"]["analysis"] == "icc"


def test_text_options_of_other_analyses(table_file, tmp_path):
    corr = run(
        ["analyze", "correlate", "-t", str(table_file), "-o", f"criterion={tmp_path / 'crit.csv'}", "-o", "by=model"]
    )
    assert corr.exit_code == 0, corr.output
    assert corr.output.count("correlation") == 3
    eff = run(
        [
            "analyze",
            "effect_size",
            "-t",
            str(table_file),
            "-o",
            "sd=sqrt2",
            "-o",
            "groups=B,A",
            "-o",
            "unit=target",
            "-o",
            "n_bootstrap=0",
            "-o",
            "within=model",
        ]
    )
    assert eff.exit_code == 0, eff.output
    assert "fixed" in eff.output and "exact" in eff.output
    lmm = run(
        [
            "analyze",
            "lmm",
            "-t",
            str(table_file),
            "-o",
            "formula=value ~ target_group",
            "-o",
            "nested=[value ~ target_group + context]",
        ]
    )
    assert lmm.exit_code == 0, lmm.output
    assert "lrt" in lmm.output


def test_bad_option_is_a_clean_error(table_file):
    proc = subprocess.run(
        [sys.executable, "-m", "assoc.cli", "analyze", "alpha", "--table", str(table_file), "-o", "confidence=2"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "error: option 'confidence'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "name,options",
    [
        ("alpha", {}),
        ("correlate", {"compare": "groups", "by": ["model"]}),
        ("standardize", {}),
        ("effect_size", {"n_bootstrap": 50, "unit": ["target"]}),
        ("lmm", {"formula": "value ~ target_group"}),
        ("regress", {"formula": "value ~ target_group", "nested": ["value ~ target_group + context"]}),
    ],
)
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
@pytest.mark.slow
def test_every_result_serialises_like_a_score_table(table_file, tmp_path, name, options, suffix):

    if name == "correlate":
        options = {**options, "criterion": str(tmp_path / "crit.csv")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence notes of the tiny lmm example
        result = assoc.analyze(name, table_file, **options)
    back = read_table(write_table(result, tmp_path / f"out{suffix}"))
    assert back.shape == result.shape
    numeric = result.select_dtypes("number").columns
    np.testing.assert_allclose(back[numeric].to_numpy(float), result[numeric].to_numpy(float), rtol=1e-12)
    assert back.attrs["assoc"]["analysis"] == name


def both_tasks_table() -> pd.DataFrame:
    rows = []
    for term, words, rating in (("nurse", ["kind", "caring"], 6.0), ("pilot", ["brave", "cold"], 4.0)):
        rows += [
            {"scorer": "chat_listing", "model": "m", "target": term, "attribute": w, "measure": "listed", "value": 1.0}
            for w in words
        ]
        rows.append({"scorer": "chat_listing", "model": "m", "target": term, "measure": "rating", "value": rating})
    return normalise(pd.DataFrame(rows))


def test_analyze_where_validates_the_selected_rows_once(tmp_path, monkeypatch):
    from assoc.table import files, schema

    path = write_table(both_tasks_table(), tmp_path / "chat.csv")
    validated: list[int] = []
    check = schema.validate_table

    def counting(table, *, where="table"):
        validated.append(len(table))
        return check(table, where=where)

    monkeypatch.setattr(files, "validate_table", counting)
    result = CliRunner().invoke(
        build_cli(), ["analyze", "standardize", "--table", str(path), "--where", "measure=listed"]
    )
    assert result.exit_code == 0, result.output
    assert validated == [4]  # once, the four listed rows the analysis reads


def test_analyze_and_plot_where_on_the_command_line(tmp_path):
    path = write_table(both_tasks_table(), tmp_path / "chat.csv")
    dictionary = pd.DataFrame({"word": ["kind", "caring", "cold"], "dimension": "Warmth", "direction": [1, 1, -1]})
    dictionary.to_csv(tmp_path / "dict.csv", index=False)
    args = ["analyze", "stereotype", "--table", str(path), "-o", f"dictionary={tmp_path / 'dict.csv'}"]
    refused = CliRunner().invoke(build_cli(), args)
    assert refused.exit_code == 2  # listed words and ratings together
    out = tmp_path / "coded.csv"
    result = CliRunner().invoke(build_cli(), [*args, "--where", "measure=listed", "--out", str(out)])
    assert result.exit_code == 0, result.output
    coded = read_table(out)
    direction = coded[(coded["measure"] == "direction")].set_index("target")["value"]
    assert direction["nurse"] == pytest.approx(1.0) and direction["pilot"] == pytest.approx(-1.0)
    representativeness = coded[(coded["measure"] == "representativeness")].set_index("target")["value"]
    assert representativeness["nurse"] == pytest.approx(1.0) and representativeness["pilot"] == pytest.approx(0.5)
    assert coded.attrs["assoc"]["input"]["where"] == {"measure": ["listed"]}
    bad = CliRunner().invoke(build_cli(), [*args, "--where", "measure=listd"])
    assert bad.exit_code == 2 and "values present: listed, rating" in bad.output
    pytest.importorskip("matplotlib")
    figure = tmp_path / "scores.png"
    drawn = CliRunner().invoke(
        build_cli(),
        ["plot", "scores", "--table", str(path), "--where", "measure=rating", "--out", str(figure)],
    )
    assert drawn.exit_code == 0, drawn.output
    assert figure.stat().st_size > 0
