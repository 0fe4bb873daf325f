"""assoc report in a real browser (issue 47 item 1): a headless Chromium opens the page from disk.

The study is built here, offline: the three-method comparison of docs/clm.md (fmat on a tiny BERT, clm on a
tiny GPT-2, weat on GloVe, one stimuli file), CrowS-Pairs on the tiny BERT (12 pairs) and BBQ on the tiny
GPT-2 (12 examples of the bundled set). The page must render every figure with its marks, log no error,
request nothing but itself, and show the numbers the analyses computed (read back from the DOM), which are
in turn checked against computations written out here (CrowS-Pairs' metric and its Clopper-Pearson interval,
BBQ's accuracy, the convergence's r).

Chromium is Debian's package (``make setup`` installs it where apt is usable); without it these tests skip,
except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.testing.browser import BrowserError, HeadlessChromium, find_chromium

pytestmark = pytest.mark.slow

STIMULI = """
name: gender-occupations
queries:
  - "[MASK] works as a {TARGET}."
  - "[MASK] is a {TARGET}."
mask:
  male: [he]
  female: [she]
target:
  occupation: [nurse, engineer, doctor, artist, teacher, farmer, pilot, singer, writer, lawyer]
"""
NEEDED_SCORERS = ("fmat", "clm", "weat", "crows_pairs", "clm_bbq")


def _require(condition: bool, message: str) -> None:
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}: CI installs it (scripts/setup.sh), so this test must run there")
    pytest.skip(message)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    _require(found is not None, "no Chromium (apt-get install chromium, or set ASSOC_CHROMIUM)")
    pytest.importorskip("websockets")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def study(tmp_path_factory, chromium):
    missing = [s for s in NEEDED_SCORERS if s not in assoc.scorers()]
    _require(not missing, f"scorer(s) {', '.join(missing)} not installed")
    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    folder = tmp_path_factory.mktemp("study")
    (folder / "stimuli.yaml").write_text(STIMULI, encoding="utf-8")
    bert = str(build_bert_wordpiece(folder / "tiny-bert", seed=0))
    gpt2 = str(build_gpt2_bpe(folder / "tiny-gpt2", positions=256))  # long enough for BBQ's contexts
    compared = assoc.compare(
        folder / "stimuli.yaml",
        {"fmat": {"models": [bert]}, "clm": {"models": [gpt2], "measure": "sentence"},
         "weat": {"models": ["glove-6b-50d"]}},
        progress=False, out=folder / "compared.parquet",
    )  # fmt: skip
    pairs = assoc.Stimuli.load("crows_pairs")
    chosen = pairs.select([d.name for d in pairs.designs][::126])  # 12 pairs across the bias types
    crows = assoc.score("crows_pairs", chosen, [bert], progress=False, out=folder / "crows.parquet")
    crows_summary = assoc.analyze("crows_pairs", crows, out=folder / "crows-summary.csv")
    bbq_dir = folder / "bbq"
    bbq_dir.mkdir()
    by_category: dict[str, list] = {}
    for item in assoc.Stimuli.load("bbq:Age,Religion").items:  # every field of every example is kept as written
        by_category.setdefault(item.fields["category"], []).append(dict(item.fields))
    for category, examples in by_category.items():
        lines = [json.dumps(r) for r in examples[:6]]
        (bbq_dir / f"{category}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    bbq = assoc.score("clm_bbq", f"bbq:{bbq_dir}", [gpt2], progress=False, out=folder / "bbq.parquet")
    bbq_scores = assoc.analyze("bbq", bbq, n_bootstrap=200, out=folder / "bbq-scores.csv")
    inputs = ["compared.parquet", "crows.parquet", "crows-summary.csv", "bbq.parquet", "bbq-scores.csv"]
    run = CliRunner().invoke(
        build_cli(),
        ["report", *[str(folder / i) for i in inputs], "--out", str(folder / "study.html"),
         "--card", str(folder / "card.md"), "--title", "A tiny study"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    with HeadlessChromium(chromium) as browser:
        page = browser.open(folder / "study.html")
        dom = page.evaluate(DOM_QUERY)
        term = str(crows["attribute_group"].iloc[-1])  # a bias type of the pairs chosen
        searched = page.evaluate(SEARCH_AND_SORT.replace("TERM", json.dumps(term.upper())))
    for row in dom["rows"]:  # JSON has no NaN: the page's NaN comes back as None
        for key in ("value", "low", "high", "p", "reference"):
            row[key] = math.nan if row[key] is None else row[key]
    for figure in dom["figures"]:
        for mark in (*figure["cells"], *figure["points"]):
            mark["value"] = math.nan if mark["value"] is None else mark["value"]
    return {
        "folder": folder,
        "page": page,
        "dom": dom,
        "searched": searched,
        "term": term,
        "compared": compared,
        "crows": crows,
        "crows_summary": crows_summary,
        "bbq": bbq,
        "bbq_scores": bbq_scores,
        "convergence": assoc.analyze("convergence", compared),
    }


#: What the tests read from the page, in one go: the headline rows, every figure's marks, the item tables.
DOM_QUERY = r"""
(() => {
  const num = (v) => v === null || v === "nan" ? NaN : parseFloat(v);
  const rows = Array.from(document.querySelectorAll("tr[data-column]")).map((tr) => ({
    section: tr.closest("section").id, source: tr.dataset.source, column: tr.dataset.column,
    model: tr.dataset.model, row: tr.dataset.row,
    value: num(tr.querySelector("td.value").dataset.value), shown: tr.querySelector("td.value").textContent,
    low: num(tr.querySelector("td.interval").dataset.low), high: num(tr.querySelector("td.interval").dataset.high),
    interval: tr.querySelector("td.interval").textContent,
    p: num(tr.querySelector("td.p").dataset.value), n: tr.querySelector("td.n").textContent,
    reference: num(tr.querySelector("td.reference").dataset.value),
  }));
  const figures = Array.from(document.querySelectorAll("svg.figure")).map((svg) => {
    const box = svg.getBoundingClientRect();
    const fig = svg.closest("figure");
    return {
      kind: svg.dataset.figure, section: svg.closest("section").id, width: box.width, height: box.height,
      source: fig && fig.dataset.source, column: fig && fig.dataset.column, method: fig && fig.dataset.method,
      model: fig && fig.dataset.model, title: (svg.querySelector("text.title") || {}).textContent,
      points: Array.from(svg.querySelectorAll("circle.point")).map((c) => ({
        value: num(c.dataset.value), x: c.getBoundingClientRect().x,
        label: c.closest("g.row").dataset.label, r: c.getBoundingClientRect().width })),
      intervals: Array.from(svg.querySelectorAll("line.interval")).map(
        (l) => [num(l.dataset.low), num(l.dataset.high)]),
      references: Array.from(svg.querySelectorAll("line.reference")).map((l) => num(l.dataset.reference)),
      cells: Array.from(svg.querySelectorAll("g.cell")).map((g) => ({
        row: g.dataset.row, column: g.dataset.column, value: num(g.dataset.value),
        shown: g.querySelector("text").textContent, fill: g.querySelector("rect").getAttribute("fill") })),
    };
  });
  const tables = Array.from(document.querySelectorAll("div.datatable")).map((box) => ({
    name: box.dataset.name, info: box.querySelector(".info").textContent,
    columns: Array.from(box.querySelectorAll("thead th")).map((th) => th.textContent),
    shownRows: box.querySelectorAll("tbody tr").length,
  }));
  const models = Array.from(document.querySelectorAll("#provenance tr.model")).map((tr) =>
    Array.from(tr.cells).map((td) => td.textContent));
  return {rows, figures, tables, models, warnings: Array.from(document.querySelectorAll("#warnings li")).map(
    (li) => li.textContent), bibtex: (document.querySelector("pre.bibtex") || {}).textContent || "",
    title: document.title, sections: Array.from(document.querySelectorAll("section")).map((s) => s.id)};
})()
"""

#: Type into the search box of the CrowS-Pairs table, then sort its value column by a click on its header.
SEARCH_AND_SORT = r"""
(() => {
  const box = Array.from(document.querySelectorAll("div.datatable")).find((b) => b.dataset.name === "crows.parquet");
  const input = box.querySelector("input[type=search]");
  input.value = TERM;
  input.dispatchEvent(new Event("input"));
  const afterSearch = box.querySelector(".info").textContent;
  const matching = box.querySelectorAll("tbody tr").length;
  input.value = "";
  input.dispatchEvent(new Event("input"));
  const headers = Array.from(box.querySelectorAll("thead th"));
  const index = headers.findIndex((th) => th.textContent === "value");
  headers[index].click();
  const ascending = Array.from(box.querySelectorAll("tbody tr")).map((tr) => parseFloat(tr.cells[index].textContent));
  headers[index].click();
  const descending = Array.from(box.querySelectorAll("tbody tr")).map((tr) => parseFloat(tr.cells[index].textContent));
  const big = Array.from(document.querySelectorAll("div.datatable")).find((b) => b.dataset.name === "compared.parquet");
  const lastPageBefore = big.querySelector("button.next").disabled;
  big.querySelector("button.next").click();
  const secondPage = big.querySelector(".info").textContent;
  const previousEnabled = !big.querySelector("button.prev").disabled;
  return {afterSearch, matching, ascending, descending, secondPage, lastPageBefore, previousEnabled,
          sortState: headers[index].getAttribute("aria-sort")};
})()
"""


def _shown_matches(text: str, value: float) -> bool:
    """The text shows ``value`` to the 4 significant digits the report uses."""
    if not math.isfinite(value):
        return text.strip() == "–"
    shown = float(text)
    return abs(shown - value) <= 5e-4 * max(abs(value), 1e-12) + 1e-12


def test_the_page_logs_no_error_and_requests_nothing_but_itself(study):
    page = study["page"]
    assert page.errors == [], page.errors
    assert page.exceptions == []
    assert page.requests == [page.url]  # every style, script and figure is inline
    assert study["dom"]["title"] == "A tiny study"
    assert study["dom"]["sections"] == [
        "headlines", "forests", "heatmap", "convergence", "tables", "items", "provenance", "warnings", "citations"
    ]  # fmt: skip


def test_crows_pairs_numbers_shown_are_the_analysis_output_and_the_metric_by_hand(study):
    from scipy.stats import beta

    summary = study["crows_summary"]
    everything = summary[summary["bias_type"] == "all"].iloc[0]
    (row,) = [r for r in study["dom"]["rows"] if r["column"] == "metric_score"]
    assert row["row"] == "all" and row["reference"] == 50.0 and row["n"] == str(int(everything["n_pairs"]))
    for key, column in (("value", "metric_score"), ("low", "ci_low"), ("high", "ci_high"), ("p", "p_value")):
        assert row[key] == pytest.approx(float(everything[column]), rel=1e-12)
    assert _shown_matches(row["shown"], row["value"])
    low, high = (float(v) for v in re.findall(r"-?[\d.]+", row["interval"]))
    assert _shown_matches(str(low), row["low"]) and _shown_matches(str(high), row["high"])
    # by hand from the sentence scores: k pairs of N where sent_more scores higher; Clopper-Pearson on k of N
    wide = study["crows"].pivot(index="pair", columns="target_group", values="value")
    k, n = int((wide["sent_more"] > wide["sent_less"]).sum()), len(wide)
    assert row["value"] == pytest.approx(100 * k / n, abs=1e-9)
    exact_low = beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
    exact_high = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    assert row["low"] == pytest.approx(100 * exact_low, abs=1e-6)
    assert row["high"] == pytest.approx(100 * exact_high, abs=1e-6)


def test_bbq_numbers_shown_are_the_analysis_output_with_intervals_on_the_points_scale(study):
    scores = study["bbq_scores"]
    rows = {(r["column"], r["row"]): r for r in study["dom"]["rows"] if r["source"] == "bbq-scores.csv"}
    assert len(rows) == 2 * len(scores)
    for item in scores.itertuples(index=False):
        label = f"{item.category} | {item.context_condition}"
        bias = rows[("bias_score_x100", label)]
        assert bias["value"] == pytest.approx(item.bias_score_x100, rel=1e-12, abs=1e-12)
        assert bias["low"] == pytest.approx(100 * item.ci_low, abs=1e-9)  # x 100, as the points
        assert bias["high"] == pytest.approx(100 * item.ci_high, abs=1e-9)
        assert bias["reference"] == 0.0 and bias["n"] == str(item.n_scored)
        accuracy = rows[("accuracy", label)]
        assert accuracy["value"] == pytest.approx(item.accuracy, rel=1e-12)
        assert (accuracy["low"], accuracy["high"]) == pytest.approx((item.accuracy_low, item.accuracy_high))
        assert math.isnan(accuracy["reference"])
        for shown in (bias, accuracy):
            assert _shown_matches(shown["shown"], shown["value"])
    # accuracy by hand: the share of examples answered with the right option (value 1), per category and context
    table = study["bbq"]
    for (category, condition), group in table.groupby(["category", "context_condition"]):
        assert rows[("accuracy", f"{category} | {condition}")]["value"] == pytest.approx(group["value"].mean())


def test_the_convergence_run_by_the_report_is_the_analysis_and_r_by_hand(study):
    convergence = study["convergence"]
    rows = [r for r in study["dom"]["rows"] if r["section"] == "convergence"]
    assert len(rows) == len(convergence[convergence["kind"].isin(["correlation", "icc"])])
    wanted = {
        (r.kind, r.x, r.y if r.kind == "correlation" else r.label): r for r in convergence.itertuples(index=False)
    }
    for row in rows:
        expected = wanted[tuple(row["row"].split(" | "))]
        assert row["value"] == pytest.approx(float(expected.estimate), rel=1e-12)
        assert (row["low"], row["high"]) == pytest.approx((float(expected.ci_low), float(expected.ci_high)))
    # r of fmat and weat by hand: each method's mean (he - she) contrast per occupation, then Pearson's r
    compared = study["compared"]

    def contrast(scorer: str) -> pd.Series:
        part = compared[compared["scorer"] == scorer]
        by = part.groupby(["target", "context", "attribute_group"])["value"].mean().unstack()
        return (by["male"] - by["female"]).groupby(level="target").mean()

    fmat, weat = contrast("fmat"), contrast("weat")
    r = np.corrcoef(fmat.loc[weat.index], weat)[0, 1]
    (shown,) = [x for x in rows if x["row"] == "correlation | fmat | weat"]
    assert shown["value"] == pytest.approx(r, abs=1e-10)
    matrix = [f for f in study["dom"]["figures"] if f["section"] == "convergence" and f["kind"] == "heatmap"]
    assert len(matrix) == 1 and len(matrix[0]["cells"]) == 9
    cell = next(c for c in matrix[0]["cells"] if (c["row"], c["column"]) == ("fmat", "weat"))
    assert cell["value"] == pytest.approx(r, abs=1e-10) and cell["shown"].startswith(f"{r:.4g}")


def test_every_figure_renders_with_its_marks_where_its_numbers_put_them(study):
    figures = study["dom"]["figures"]
    assert all(f["width"] > 100 and f["height"] > 50 for f in figures)
    forests = [f for f in figures if f["section"] == "forests"]
    # CrowS-Pairs: the metric per bias type (one model); BBQ: bias score x100 and accuracy (one model)
    assert sorted((f["source"], f["column"]) for f in forests) == [
        ("bbq-scores.csv", "accuracy"), ("bbq-scores.csv", "bias_score_x100"), ("crows-summary.csv", "metric_score")
    ]  # fmt: skip
    summary = study["crows_summary"]
    crows = next(f for f in forests if f["column"] == "metric_score")
    assert [p["label"] for p in crows["points"]] == summary["bias_type"].tolist()  # named, not 1..n
    assert [p["value"] for p in crows["points"]] == pytest.approx(summary["metric_score"].tolist())
    assert crows["references"] == [50.0]
    assert np.allclose(crows["intervals"], summary[["ci_low", "ci_high"]].to_numpy())
    bias = next(f for f in forests if f["column"] == "bias_score_x100")
    assert bias["references"] == [0.0]
    assert np.allclose(bias["intervals"], 100 * study["bbq_scores"][["ci_low", "ci_high"]].to_numpy())
    for figure in figures:
        points = sorted(figure["points"], key=lambda p: p["value"])
        xs = [p["x"] for p in points]
        assert xs == sorted(xs), figure["title"]  # a larger number is drawn further right
        assert all(p["r"] > 0 for p in points)
    heatmap = next(f for f in figures if f["section"] == "heatmap")
    headline_rows = [r for r in study["dom"]["rows"] if r["section"] == "headlines"]
    assert len(heatmap["cells"]) == len({(r["source"], r["column"], r["row"]) for r in headline_rows}) * 2  # 2 models
    shown = [c for c in heatmap["cells"] if math.isfinite(c["value"])]
    assert sorted(c["value"] for c in shown) == pytest.approx(sorted(r["value"] for r in headline_rows))
    scores = [f for f in figures if f["section"] == "convergence" and f["kind"] == "forest"]
    assert sorted(f["method"] for f in scores) == ["clm", "fmat", "weat"]
    assert all(len(f["points"]) == 10 for f in scores)  # one point per occupation


def test_item_tables_are_searchable_sortable_and_paginated(study):
    tables = {t["name"]: t for t in study["dom"]["tables"]}
    assert set(tables) >= {"compared.parquet", "crows.parquet", "crows-summary.csv", "bbq.parquet", "bbq-scores.csv"}
    crows = study["crows"]
    assert tables["crows.parquet"]["info"] == f"rows 1–{min(25, len(crows))} of {len(crows)}"
    text = crows.select_dtypes(exclude="number").astype(str)
    term = study["term"].lower()
    matching = int(text.apply(lambda c: c.str.lower().str.contains(term, regex=False)).any(axis=1).sum())
    searched = study["searched"]
    assert 0 < matching < len(crows)
    assert searched["afterSearch"] == f"rows 1–{matching} of {matching} ({len(crows)} before the search)"
    values = sorted(crows["value"].tolist())
    assert searched["ascending"] == pytest.approx(values[:25], rel=1e-5)  # shown to 6 significant digits
    assert searched["descending"] == pytest.approx(values[::-1][:25], rel=1e-5)
    assert searched["sortState"] == "descending"
    compared = len(study["compared"])
    assert not searched["lastPageBefore"] and searched["previousEnabled"]
    assert searched["secondPage"] == f"rows 26–50 of {compared}"


def test_provenance_warnings_citations_and_card(study):
    dom = study["dom"]
    fingerprints = {}
    for run in study["compared"].assoc.provenance["runs"]:
        fingerprints.update(run["model_fingerprints"])
    shown = {row[0]: row[4] for row in dom["models"]}
    for model, fingerprint in fingerprints.items():
        assert shown[model] == fingerprint
    devices = {row[0]: row[5] for row in dom["models"] if row[0] != "glove-6b-50d"}
    assert set(devices.values()) == {"cpu"}, devices  # the device of each LM
    assert "doi = {10.18653/v1/2020.emnlp-main.154}," in dom["bibtex"]  # CrowS-Pairs
    assert "doi = {10.18653/v1/2022.findings-acl.165}," in dom["bibtex"]  # BBQ
    assert "@misc{mcgraw1996forming," in dom["bibtex"]  # the convergence analysis's ICC
    card = (study["folder"] / "card.md").read_text(encoding="utf-8")
    everything = study["crows_summary"].query("bias_type == 'all'").iloc[0]
    cell = f"{everything.metric_score:.4g} [{everything.ci_low:.4g}, {everything.ci_high:.4g}]"
    cell += f", n = {everything.n_pairs}"
    assert f"| crows_pairs | metric score (%) | all | {cell} |" in card


def test_the_harness_sees_a_request_an_error_and_an_exception_when_a_page_has_them(chromium, tmp_path):
    page_file = tmp_path / "bad.html"
    page_file.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="http://127.0.0.1:9/style.css"></head><body>'
        '<img src="https://example.invalid/x.png"><script>console.error("planted"); undefinedFunction();</script>'
        "</body></html>",
        encoding="utf-8",
    )
    with HeadlessChromium(chromium) as browser:
        page = browser.open(page_file)
        assert page.evaluate("1 + 1") == 2
        with pytest.raises(BrowserError, match="the page threw"):
            page.evaluate("nope.nope")
    assert "http://127.0.0.1:9/style.css" in page.requests and "https://example.invalid/x.png" in page.requests
    assert "planted" in page.errors and any("undefinedFunction" in e for e in page.exceptions)
