"""assoc report (issue 47 item 1) without a browser: headline numbers, figures, card, BibTeX, inputs, errors.

And item 4's last clause: `assoc plot estimates` takes its row labels, reference line and the scale of its
intervals from what the analysis declares (``Analysis.headline``). The numbers are checked against
computations written out here, on small hand-made tables.
"""

from __future__ import annotations

import math
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.analysis.headline import Estimate, Headline
from assoc.cli import build_cli
from assoc.errors import OptionError, TableError
from assoc.reporting import bibtex, svg
from assoc.reporting.headlines import headline_table
from assoc.reporting.inputs import load_inputs, study_groups
from assoc.table.provenance import set_provenance
from assoc.table.schema import from_records

#: A plugin analysis that declares its headline: a share of positive values per model and target group,
#: reported x100 with an interval of the share itself (so the interval needs the scale), reference 50 %.
PCT_PLUGIN = """
import pandas as pd
from assoc import Analysis, Estimate, Headline, hookimpl


class PctAnalysis(Analysis):
    name = "pct_demo"
    description = "share of positive values (a test analysis)"
    citation = "Doe, J., & Roe, R. (2001). A test of shares. Journal of Tests, 1(2), 3-4. doi:10.1234/test.5"
    estimate_column = "share"
    headline = Headline(
        estimates=(
            Estimate("share_x100", "share (%)", low="share_low", high="share_high", interval_scale=100.0,
                     p_value="p", n=("n_items",), reference=50.0),
            Estimate("share", "share", low="share_low", high="share_high", reference=0.5, headline=False),
        ),
        rows={"part": ("all",)},
        labels=("model", "part"),
    )

    def run(self, table):
        rows = []
        for model, by_model in table.groupby("model", sort=False):
            for part, group in [("all", by_model), *by_model.groupby("target_group", sort=False)]:
                share = float((group["value"] > 0).mean())
                rows.append({"model": model, "part": part, "share": share, "share_x100": 100 * share,
                             "share_low": share - 0.1, "share_high": min(share + 0.1, 1.0), "p": 0.25,
                             "n_items": len(group)})
        return pd.DataFrame(rows)


@hookimpl
def register_analyses(register):
    register(PctAnalysis)
"""


def _values_table(values_by_model: dict[str, list[float]]) -> pd.DataFrame:
    """Rows of two target groups (x: the first half of each list, y: the second) and one attribute."""
    rows = []
    for model, values in values_by_model.items():
        half = len(values) // 2
        for i, value in enumerate(values):
            rows.append(
                {
                    "model": model,
                    "context": "c",
                    "target_group": "x" if i < half else "y",
                    "target": f"t{i}",
                    "attribute_group": "A",
                    "attribute": "a",
                    "value": value,
                }
            )
    return from_records(rows, scorer="demo", measure="m")


@pytest.fixture
def pct(fake_plugin):
    fake_plugin("pct_demo", PCT_PLUGIN)
    # m1: 3 of 5 positive overall (x: 2 of 2, y: 1 of 3); m2: 1 of 4 (x: 0 of 2, y: 1 of 2)
    table = _values_table({"m1": [1.0, 2.0, -1.0, 0.5, -3.0], "m2": [-1.0, -2.0, 3.0, -0.5]})
    return table, assoc.analyze("pct_demo", table)


class _Cells(HTMLParser):
    """The headline rows of a report page: each <tr data-column=...> with its cells' data attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self._row: dict | None = None
        self._cell: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-column" in attrs:
            self._row = {"attrs": attrs, "cells": []}
        elif tag == "td" and self._row is not None:
            self._cell = {"attrs": attrs, "text": ""}

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row["cells"].append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None


def headline_rows(html: str) -> list[dict]:
    parser = _Cells()
    parser.feed(html)
    return parser.rows


# -- the declarations and the headline table ---------------------------------------------------------


def test_headline_rows_are_the_declared_estimates_on_the_declared_rows(pct):
    _, result = pct
    frame = headline_table(result, source="r.csv", analysis="pct_demo")
    assert frame["row"].tolist() == ["all", "all"] and frame["model"].tolist() == ["m1", "m2"]
    assert frame["value"].tolist() == pytest.approx([60.0, 25.0])  # 3 of 5, 1 of 4
    assert frame["low"].tolist() == pytest.approx([50.0, 15.0])  # (share - 0.1) x 100
    assert frame["high"].tolist() == pytest.approx([70.0, 35.0])
    assert frame["n"].tolist() == ["5", "4"] and frame["reference"].tolist() == [50.0, 50.0]
    assert set(frame["estimate"]) == {"share (%)"}  # share is declared, but not for the headline


def test_a_result_whose_analysis_declares_nothing_is_read_generically():
    result = pd.DataFrame({"design": ["a", "b"], "estimate": [0.5, -0.25], "ci_low": [0.1, -0.5], "n": [10, 12]})
    result["ci_high"] = [0.9, 0.0]
    frame = headline_table(result)
    assert frame["row"].tolist() == ["a", "b"] and frame["value"].tolist() == [0.5, -0.25]
    assert frame["high"].tolist() == [0.9, 0.0] and frame["n"].tolist() == ["10", "12"]
    assert frame["reference"].tolist() == [0.0, 0.0] and frame["model"].tolist() == ["", ""]


def test_headline_select_and_estimate_lookup():
    headline = Headline(estimates=(Estimate("a"), Estimate("b", headline=False)), rows={"part": ("all",)})
    frame = pd.DataFrame({"part": ["all", "x", "all"], "a": [1, 2, 3]})
    assert headline.select(frame)["a"].tolist() == [1, 3]
    assert [e.column for e in headline.leading] == ["a"] and headline.estimate("b").headline is False
    assert headline.estimate("zzz") is None
    scaled = Estimate("a", low="lo", high="hi", interval_scale=100.0).interval(pd.DataFrame({"lo": [0.1], "hi": [0.2]}))
    assert scaled is not None and scaled[0].tolist() == [10.0] and scaled[1].tolist() == pytest.approx([20.0])


# -- item 4: plots take labels, reference lines and interval scales from the analysis ----------------


def _forest_parts(fig):
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    points = ax.lines[0].get_xdata().tolist()
    references = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == "--"]
    segments = [(float(s[0][0]), float(s[1][0])) for c in ax.collections for s in c.get_segments()]
    return labels, points, references, segments, ax.get_xlabel()


def test_forest_plot_of_a_declared_estimate_uses_its_labels_reference_and_scale(pct):
    pytest.importorskip("matplotlib")
    from assoc.plotting import plot_estimates

    _, result = pct
    one = result[result["model"] == "m1"]
    labels, points, references, segments, xlabel = _forest_parts(plot_estimates(one, estimate="share_x100"))
    assert labels == ["all", "x", "y"]  # the declared row labels that vary (the model does not here)
    assert points == pytest.approx([60.0, 100.0, 100 / 3])
    assert references == [50.0] and xlabel == "share (%)"
    assert np.allclose(segments, [(50.0, 70.0), (90.0, 100.0), (100 / 3 - 10, 100 / 3 + 10)])
    # the canonical estimate column is the declared share: its own reference and an unscaled interval
    labels, points, references, segments, _ = _forest_parts(plot_estimates(one))
    assert references == [0.5] and segments[0] == pytest.approx((0.5, 0.7))
    # a number or None still wins
    assert _forest_parts(plot_estimates(one, reference=None))[2] == []
    assert _forest_parts(plot_estimates(one, reference=1.0))[2] == [1.0]
    with pytest.raises(OptionError, match="reference must be"):
        plot_estimates(one, reference="middle")


def _installed(analysis: str) -> None:
    if analysis not in assoc.analyses():
        message = f"the {analysis} analysis is not installed (its plugin)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + ": CI installs every plugin (scripts/setup.sh)")
        pytest.skip(message)


def _plot_from_the_command_line(monkeypatch, tmp_path, result, *options):
    """Run `assoc plot estimates` on ``result`` written to a file; the figure it would save."""
    pytest.importorskip("matplotlib")
    from assoc import plotting

    path = tmp_path / "result.csv"
    assoc.write_table(result, path)
    saved = []
    monkeypatch.setattr(plotting, "save_figure", lambda fig, out: saved.append(fig) or Path(out))
    run = CliRunner().invoke(
        build_cli(),
        ["plot", "estimates", "--table", str(path), "--out", str(tmp_path / "f.png"), *options],
    )
    assert run.exit_code == 0, run.output
    return _forest_parts(saved[0])


def _crows_result() -> pd.DataFrame:
    result = pd.DataFrame(
        {
            "model": ["m"] * 3,
            "crows_metric": ["crows_pairs:nangia2020"] * 3,
            "bias_type": ["all", "gender", "religion"],
            "n_pairs": [30, 20, 10],
            "metric_score": [60.0, 55.0, 70.0],
            "ci_low": [40.6, 31.5, 34.8],
            "ci_high": [77.3, 76.9, 93.3],
            "p_value": [0.36, 0.82, 0.34],
        }
    )
    result.insert(4, "estimate", result["metric_score"])
    return set_provenance(result, {"kind": "analysis", "analysis": "crows_pairs"})


def test_plot_estimates_of_crows_pairs_names_bias_types_and_draws_the_line_at_50(monkeypatch, tmp_path):
    _installed("crows_pairs")
    labels, points, references, segments, xlabel = _plot_from_the_command_line(monkeypatch, tmp_path, _crows_result())
    assert labels == ["all", "gender", "religion"]  # not 1, 2, 3
    assert references == [50.0]  # no preference is 50 % of pairs, not 0
    assert points == [60.0, 55.0, 70.0] and segments[0] == pytest.approx((40.6, 77.3))
    # reference=null: no line
    assert _plot_from_the_command_line(monkeypatch, tmp_path, _crows_result(), "-o", "reference=null")[2] == []


def test_plot_estimates_of_bbq_scales_the_interval_of_the_bias_score_x100(monkeypatch, tmp_path):
    _installed("bbq")
    result = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "category": ["Age", "Age", "Religion", "Religion"],
            "context_condition": ["ambig", "disambig", "ambig", "disambig"],
            "bias_score": [0.1, -0.2, 0.05, 0.3],
            "ci_low": [0.0, -0.4, -0.05, 0.1],
            "ci_high": [0.2, 0.0, 0.15, 0.5],
            "n_scored": [40, 40, 30, 30],
        }
    )
    result["bias_score_x100"] = 100 * result["bias_score"]
    set_provenance(result, {"kind": "analysis", "analysis": "bbq"})
    labels, points, references, segments, xlabel = _plot_from_the_command_line(
        monkeypatch, tmp_path, result, "-o", "estimate=bias_score_x100"
    )
    assert labels == ["Age | ambig", "Age | disambig", "Religion | ambig", "Religion | disambig"]
    assert points == pytest.approx([10.0, -20.0, 5.0, 30.0]) and references == [0.0]
    assert np.allclose(segments, [(0.0, 20.0), (-40.0, 0.0), (-5.0, 15.0), (10.0, 50.0)])  # x 100, as the points
    assert "×100" in xlabel


# -- the page and the card ---------------------------------------------------------------------------


def test_report_shows_each_declared_number_and_the_card_tabulates_them(pct, tmp_path):
    table, result = pct
    made = assoc.report({"demo table": table, "demo result": result}, out=tmp_path / "s.html",
                        card=tmp_path / "card.md", title="Demo")  # fmt: skip
    html = (tmp_path / "s.html").read_text(encoding="utf-8")
    assert html == made.html and html.startswith("<!DOCTYPE html>") and "<title>Demo</title>" in html
    rows = [r for r in headline_rows(html) if r["attrs"]["data-column"] == "share_x100"]
    assert [(r["attrs"]["data-model"], r["attrs"]["data-row"]) for r in rows] == [("m1", "all"), ("m2", "all")]
    for row, (value, low, high) in zip(rows, [(60.0, 50.0, 70.0), (25.0, 15.0, 35.0)]):
        cells = {c["attrs"].get("class"): c for c in row["cells"]}
        assert float(cells["value"]["attrs"]["data-value"]) == pytest.approx(value)
        assert float(cells["value"]["text"]) == pytest.approx(value)
        assert float(cells["interval"]["attrs"]["data-low"]) == pytest.approx(low)
        assert [float(v) for v in re.findall(r"-?[\d.]+", cells["interval"]["text"])] == pytest.approx([low, high])
    # every figure is inline SVG: a forest plot per model, the heatmap; no external resource is named
    assert html.count('data-figure="forest"') == 2 and html.count('data-figure="heatmap"') == 1
    assert not re.search(r"""(src|href)=["'](?!#|data:)""", html)
    card = (tmp_path / "card.md").read_text(encoding="utf-8")
    assert card == made.card
    assert "| method or benchmark | estimate | rows | m1 | m2 |" in card
    assert "| pct_demo | share (%) | all | 60 [50, 70], n = 5 | 25 [15, 35], n = 4 |" in card
    assert "@misc{doe2001test," in card and "doi = {10.1234/test.5}," in card


def test_item_tables_are_capped_with_a_note_and_carried_as_json(pct):
    table, _ = pct
    table = table.copy()
    table.loc[0, "target"] = "</script><!-- a cell that would end the data block"
    made = assoc.report([table], max_rows=4)
    found = re.search(r'<script type="application/json" id="assoc-data-1">(.*?)</script>', made.html, re.S)
    assert found is not None
    import json

    data = json.loads(found.group(1))
    assert len(data["rows"]) == 4 and "value" in data["columns"]
    assert data["rows"][0][data["columns"].index("target")] == "</script><!-- a cell that would end the data block"
    assert "The first 4 of 9 rows are here" in made.html


def test_tables_of_two_scorers_on_one_stimuli_file_are_compared_by_convergence():
    rng = np.random.default_rng(3)
    targets = [f"t{i}" for i in range(8)]
    tables = []
    for scorer in ("alpha", "beta"):
        rows = [
            {"model": "m", "context": "c", "target_group": "T", "target": t, "attribute_group": group,
             "attribute": group.lower(), "value": float(rng.normal())}
            for t in targets for group in ("A", "B")
        ]  # fmt: skip
        table = from_records(rows, scorer=scorer, measure="v")
        tables.append(set_provenance(table, {"kind": "score", "scorer": scorer, "stimuli_sha256": "abc"}))
    groups = study_groups(load_inputs(tables))
    assert len(groups) == 1 and groups[0].scorers == ["alpha", "beta"]
    made = assoc.report(tables)
    (convergence,) = made.study.convergence
    assert convergence.ran
    # the contrast A - B per target, by hand, then Pearson's r of the two methods
    scores = [
        [t.loc[(t.target == x) & (t.attribute_group == "A"), "value"].item()
         - t.loc[(t.target == x) & (t.attribute_group == "B"), "value"].item() for x in targets]
        for t in tables
    ]  # fmt: skip
    r = np.corrcoef(scores[0], scores[1])[0, 1]
    pair = convergence.result.frame.query("kind == 'correlation'")
    assert pair["estimate"].item() == pytest.approx(r, abs=1e-12)
    assert f'data-value="{svg.number(pair["estimate"].item())}"' in made.html


def test_bad_inputs_are_one_line_each_before_any_work(tmp_path):
    with pytest.raises(TableError, match=r"report input '.*nope.csv': no such file"):
        assoc.report([str(tmp_path / "nope.csv")])
    with pytest.raises(OptionError, match="at least one"):
        assoc.report([])
    with pytest.raises(OptionError, match="paths or DataFrames"):
        assoc.report(42)
    with pytest.raises(TableError, match="has no rows"):
        assoc.report([pd.DataFrame({"estimate": []})])
    frame = pd.DataFrame({"estimate": [1.0]})
    with pytest.raises(OptionError, match=r"report 's.txt': the file name must end in .html"):
        assoc.report([frame], out="s.txt")
    with pytest.raises(OptionError, match=r"bias card 'c.txt'"):
        assoc.report([frame], card="c.txt")
    with pytest.raises(OptionError, match="max_rows"):
        assoc.report([frame], max_rows=0)


def test_the_command_line_writes_page_and_card(pct, tmp_path):
    table, result = pct
    assoc.write_table(table, tmp_path / "t.parquet")
    assoc.write_table(result, tmp_path / "r.csv")
    out, card = tmp_path / "study.html", tmp_path / "card.md"
    run = CliRunner().invoke(
        build_cli(), ["report", str(tmp_path / "t.parquet"), str(tmp_path / "r.csv"), "--out", str(out),
                      "--card", str(card), "--title", "CLI study"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert "<title>CLI study</title>" in out.read_text(encoding="utf-8")
    assert "| pct_demo | share (%) | all | 60 [50, 70], n = 5 |" in card.read_text(encoding="utf-8")
    bad = CliRunner().invoke(build_cli(), ["report", str(tmp_path / "missing.csv"), "--out", str(out)])
    assert bad.exit_code == 2 and bad.output.strip().count("\n") == 0 and "no such file" in bad.output


# -- figures and BibTeX ------------------------------------------------------------------------------


def test_nice_ticks_and_number_formats():
    assert svg.nice_ticks(-0.07, 0.93) == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8])
    assert svg.nice_ticks(31.5, 93.3) == [40.0, 60.0, 80.0]  # a span of 61.8 in 5 steps: steps of 20
    assert svg.fmt(66.66666) == "66.67" and svg.fmt(float("nan")) == "–" and svg.fmt(0.0) == "0"
    assert svg.fmt_p(3e-7) == "< 0.0001" and svg.number(0.1) == "0.1" and svg.number(math.inf) == "nan"


def test_forest_and_heatmap_carry_every_number_in_their_marks():
    import xml.etree.ElementTree as ET

    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.fromstring(svg.forest(["a", "b", "c"], [1.0, float("nan"), -2.0], [0.5, 0, -3], [1.5, 1, -1],
                                    reference=0.0, title="t"))  # fmt: skip
    points = [float(c.get("data-value")) for c in root.iterfind(".//s:circle", ns)]
    intervals = [
        (float(x.get("data-low")), float(x.get("data-high"))) for x in root.iterfind(".//s:line[@class='interval']", ns)
    ]  # noqa: E501
    assert points == [1.0, -2.0] and intervals == [(0.5, 1.5), (0.0, 1.0), (-3.0, -1.0)]
    assert [x.get("data-reference") for x in root.iterfind(".//s:line[@class='reference']", ns)] == ["0.0"]
    root = ET.fromstring(svg.heatmap(["r1", "r2"], ["m1", "m2"], [[1.0, 2.0], [float("nan"), 0.5]]))
    cells = [(g.get("data-row"), g.get("data-column"), g.get("data-value")) for g in root.iterfind(".//s:g", ns)]
    assert cells == [("r1", "m1", "1.0"), ("r1", "m2", "2.0"), ("r2", "m1", "nan"), ("r2", "m2", "0.5")]


def test_bibtex_entries_take_only_what_the_citation_texts_give():
    crows = (
        "Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs: A challenge dataset for "
        "measuring social biases in masked language models. Proceedings of EMNLP 2020, 1953-1967. "
        "doi:10.18653/v1/2020.emnlp-main.154"
    )
    several = (
        "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation coefficients. "
        "Psychological Methods, 1(1), 30-46; Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Science, "
        "356(6334), 183-186 (s(w, A, B)); Misra, K. (2022). minicons: Enabling flexible behavioral analyses. "
        "arXiv:2203.13112; Gao, L., et al. (2024). A framework, doi:10.5281/zenodo.12608602"
    )
    entries = bibtex.bibliography([crows, several, crows.replace("doi:", "https://doi.org/")])
    keys = ["nangia2020crowspairs", "mcgraw1996forming", "caliskan2017", "misra2022minicons", "gao2024"]
    assert [e.key for e in entries] == keys
    assert entries[0].fields == {
        "author": "Nangia, N. and Vania, C. and Bhalerao, R. and Bowman, S. R.",
        "year": "2020",
        "title": "CrowS-Pairs: A challenge dataset for measuring social biases in masked language models",
        "doi": "10.18653/v1/2020.emnlp-main.154",
        "note": "Proceedings of EMNLP 2020, 1953-1967",
    }
    assert "title" not in entries[2].fields  # "Science, 356(6334), ..." is a venue: no title is guessed
    assert entries[2].fields["note"] == "Science, 356(6334), 183-186 (s(w, A, B))"
    assert entries[3].fields["eprint"] == "2203.13112" and entries[3].fields["archiveprefix"] == "arXiv"
    assert entries[4].fields["author"] == "Gao, L. and others" and entries[4].fields["doi"] == "10.5281/zenodo.12608602"
    assert bibtex.parse_authors("The assoc developers") == "{The assoc developers}"
    text = entries[2].bibtex()
    assert text.startswith("@misc{caliskan2017,\n") and text.endswith("\n}")
    assert bibtex.entry_from_text("A & B 50% of_x").fields == {"note": "A & B 50% of_x"}
    assert "{A \\& B 50\\% of\\_x}" in bibtex.entry_from_text("A & B 50% of_x").bibtex()


def test_models_given_as_label_records_and_run_reports_reach_provenance_warnings_and_card():
    """The provenance of a labelled model (``{label, spec, path, kind, fingerprint, device}``, the layer's shape)."""
    result = pd.DataFrame(
        {
            "model": ["small", "small"],
            "category": ["Age", "Age"],
            "context_condition": ["ambig", "disambig"],
            "estimate": [0.1, -0.2],
            "n_refusal": [2, 1],
            "n_unparsed": [0, 3],
        }
    )
    model = {
        "label": "small",
        "spec": "chat:gpt-x",
        "path": "",
        "kind": "chat",
        "fingerprint": "fp-1",
        "device": "remote",
    }
    run = {"kind": "score", "scorer": "demo_chat", "models": [model], "run": {"status": {"ok": 17, "refusal": 3}}}
    set_provenance(result, {"kind": "analysis", "analysis": "not_installed_here", "warnings": ["w1"], "input": run})
    made = assoc.report({"answers": result})
    assert (
        '<tr class="model"><td>small</td><td>chat:gpt-x</td><td></td><td>chat</td><td>fp-1</td><td>remote</td></tr>'
        in made.html
    )
    from assoc.reporting.page import warning_lines

    lines = warning_lines(made.study)
    assert 'answers: run report of demo_chat on small: status = {"ok": 17, "refusal": 3}' in lines
    assert "answers: not_installed_here: w1" in lines
    assert "answers: model small: n_refusal = 3, n_unparsed = 3" in lines
    assert "* small (spec chat:gpt-x, kind chat, device remote) — `fp-1`" in made.card
