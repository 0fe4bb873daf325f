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
        ["analyze", "correlate", "-t", str(table_file), "-o", f"criterion={tmp_path / 'crit.csv'}", "-o", "by=model",
         "--full"]
    )  # fmt: skip
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
            "--full",
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
        build_cli(), ["analyze", "standardize", "--table", str(path), "--where", "measure=rating"]
    )  # (listed words are codes, not values to standardise: the guard of every analysis refuses them)
    assert result.exit_code == 0, result.output
    assert validated == [2]  # once, the two rating rows the analysis reads


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


# -- several tables of one study, the short view, assoc show (issue 47 item 3, issue 46 case 8) -----------


def _run_of(frame, path, **options):
    """``frame`` written to ``path`` as a score table of fmat with ``options`` (its provenance as assoc writes it)."""
    from assoc.table.provenance import make_provenance, set_provenance

    table = set_provenance(
        frame.reset_index(drop=True).copy(),
        make_provenance(
            kind="score",
            scorer="fmat",
            models=sorted(frame["model"].unique()),
            options={"batch_size": 8, "device": "cpu", **options},
            run={"nan_values": 0, "refusals": [{"model": "m1"}], "unparsed": 2},
        ),
    )
    write_table(table, path)
    return path


@pytest.fixture
def two_runs(table_file, tmp_path):
    whole = read_table(table_file)
    a = _run_of(whole[whole["model"] != "m3"], tmp_path / "run_a.parquet")
    b = _run_of(whole[whole["model"] == "m3"], tmp_path / "run_b.parquet", batch_size=64, device="cuda")
    return whole, a, b


def test_table_repeated_analyses_every_table_not_only_the_last(two_runs, tmp_path):
    whole, a, b = two_runs
    out = tmp_path / "icc.csv"
    done = run(["analyze", "icc", "--table", str(a), "--table", str(b), "--out", str(out)])
    assert done.exit_code == 0, done.output
    combined = read_table(out)
    alone = assoc.analyze("icc", whole)
    # three raters, as in the whole table (the last --table alone has one: it would be refused)
    assert (combined["n_raters"] == 3).all()
    assert np.allclose(combined["icc"], alone["icc"]) and np.allclose(combined["ci_low"], alone["ci_low"])
    source = combined.attrs["assoc"]["input"]
    assert source["kind"] == "combined" and [f["path"] for f in source["files"]] == [str(a), str(b)]
    assert [f["rows"] for f in source["files"]] == [32, 16] and all(len(f["sha256"]) == 64 for f in source["files"])
    assert [r["models"] for r in source["runs"]] == [["m1", "m2"], ["m3"]]
    # a pattern names the same files, in sorted order
    globbed = run(["analyze", "icc", "--table", str(tmp_path / "run_*.parquet"), "--out", str(tmp_path / "g.csv")])
    assert globbed.exit_code == 0, globbed.output
    assert read_table(tmp_path / "g.csv")["icc"].tolist() == combined["icc"].tolist()


def test_tables_that_do_not_share_a_schema_are_refused_in_one_line(two_runs, tmp_path):
    whole, a, b = two_runs
    other_measure = _run_of(whole[whole["model"] == "m3"].assign(measure="log_prob"), tmp_path / "lp.parquet")
    mean = _run_of(whole[whole["model"] == "m3"], tmp_path / "mean.parquet", reduction="mean")
    sum_ = _run_of(whole[whole["model"] == "m1"], tmp_path / "sum.parquet", reduction="sum")
    shared = _run_of(whole[whole["model"] == "m1"], tmp_path / "shared.parquet", device="cuda", batch_size=2)
    extra = _run_of(whole[whole["model"] == "m3"].assign(note="x"), tmp_path / "extra.parquet")
    cases = [
        ([a, other_measure], "its measure is log_prob, not lpr"),
        ([sum_, mean], "scorer fmat ran with reduction='mean' there and reduction='sum' here"),
        ([a, shared], "ran with device='cuda' there and device='cpu' here (they share a model)"),
        ([a, extra], "it has column(s) note the other lacks"),
        ([a, a], "is given twice"),
        ([tmp_path / "nothing_*.csv"], "matches no file"),
    ]
    for tables, problem in cases:
        args = [part for t in tables for part in ("--table", str(t))]
        refused = run(["analyze", "icc", *args])
        assert refused.exit_code == 2, refused.output
        assert refused.output.count("\n") == 1 and problem in refused.output, refused.output
    # run options (batch_size) and, for other models, model options (device) may differ: b ran on cuda
    assert run(["analyze", "icc", "--table", str(a), "--table", str(b)]).exit_code == 0


def test_the_default_view_is_short_and_out_keeps_every_column(table_file, tmp_path):
    printed = run(["analyze", "effect_size", "-t", str(table_file), "-o", "by=target_group", "-o", "n_bootstrap=200"])
    assert printed.exit_code == 0, printed.output
    lines = [line for line in printed.output.splitlines() if line.strip() and not line.startswith("warning:")]
    header = lines[0].split()
    assert header[-4:] == ["estimate", "interval", "p", "n"] and "model" in header
    assert max(len(line) for line in lines[:-1]) < 100  # readable: no 300-character lines
    assert "a short view" in lines[-1] and "--out FILE" in lines[-1]
    full = run(["analyze", "effect_size", "-t", str(table_file), "-o", "by=target_group", "-o", "n_bootstrap=200",
                "--out", str(tmp_path / "d.csv")])  # fmt: skip
    assert full.exit_code == 0 and "wrote" in full.output and "a short view" not in full.output
    written = read_table(tmp_path / "d.csv")
    assert len(written.columns) > len(header) + 5 and {"d", "ci_low", "ci_high", "p_value"} <= set(written.columns)
    from assoc.table.views import COUNT_COLUMNS

    count = next(c for c in COUNT_COLUMNS if c in written.columns)  # effect_size: n_x, the first group's size
    model_rows = [line.split() for line in lines[1:-1]]
    for row, (_, expected) in zip(model_rows, written.iterrows()):
        assert row[header.index("estimate")] == f"{expected['estimate']:.4g}"
        assert row[-1] == f"{int(expected[count]):,}"


def test_show_prints_provenance_and_a_summary(two_runs, tmp_path):
    whole, a, b = two_runs
    shown = run(["show", str(a)])
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert f"{a}: 32 rows" in text and "made by: scorer fmat" in text and "models: m1, m2" in text
    assert "run report: nan_values 0, refusals 1, unparsed 2" in text
    assert "rows by measure: lpr (32)" in text and "rows by model: m1 (16), m2 (16)" in text
    combined = assoc.concat_tables([a, b])
    write_table(combined, tmp_path / "both.csv")
    both = run(["show", str(tmp_path / "both.csv")]).output
    assert "made by: concatenation of 2 tables" in both and f"- input 1 {a}:" in both and f"- input 2 {b}:" in both
    plain = tmp_path / "plain.csv"
    whole.to_csv(plain, index=False)
    assert "provenance: none" in run(["show", str(plain)]).output


def test_plot_takes_several_tables_too(two_runs, tmp_path):
    whole, a, b = two_runs
    figure = tmp_path / "scores.png"
    drawn = run(["plot", "scores", "--table", str(a), "--table", str(b), "-o", "by=target_group", "--out", str(figure)])
    assert drawn.exit_code == 0, drawn.output
    assert figure.stat().st_size > 0
    refused = run(["plot", "scores", "--table", str(a), "--table", str(a), "--out", str(figure)])
    assert refused.exit_code == 2 and "is given twice" in refused.output


def test_show_names_models_by_label_and_spec(tmp_path):
    from assoc.table.provenance import make_provenance, set_provenance

    table = assoc.from_records([{"model": "small", "target": "a", "value": 1.0}], scorer="clm")
    record = {"label": "small", "spec": "/models/gpt2", "path": "/models/gpt2", "kind": "causal", "device": "cpu",
              "fingerprint": "sha256:0123456789abcdef0123456789abcdef"}  # fmt: skip
    provenance = make_provenance(kind="score", scorer="clm", models=["small"], model_names=[record], options={})
    write_table(set_provenance(table, provenance), tmp_path / "t.parquet")
    shown = run(["show", str(tmp_path / "t.parquet")]).output
    assert "models: small=/models/gpt2 (causal, cpu) [sha256:0123456789abcdef0123…]" in shown
