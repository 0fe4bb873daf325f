"""The first hour's papercuts (issue 24): each fixed, each checked."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import OptionError, TableError
from assoc.table import normalise, parse_where, read_table, select_rows, write_table
from assoc.testing.docs import code_blocks


def test_dir_lists_the_lazy_names():
    names = dir(assoc)
    for name in ("score", "compare", "analyze", "scorers", "analyses", "read_table", "Stimuli", "Analysis"):
        assert name in names


def test_fisher_interval_at_r_plus_minus_one_is_its_limit_without_a_warning():
    from assoc.stats.correlations import fisher_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero RuntimeWarning would raise here
        assert fisher_interval(1.0, 0.2) == (1.0, 1.0)
        assert fisher_interval(-1.0, 0.2) == (-1.0, -1.0)
        assert fisher_interval(1.0, 0.2, alternative="greater") == (1.0, 1.0)
        assert fisher_interval(-1.0, 0.2, alternative="less") == (-1.0, -1.0)
        assert fisher_interval(1.0, 0.2, alternative="less") == (-1.0, 1.0)
    # the limit: tanh(atanh(r) -/+ 1.96 se) as r -> 1 approaches 1 from below
    low, high = fisher_interval(1 - 1e-12, 0.2)
    assert low == pytest.approx(1.0, abs=1e-9) and high == pytest.approx(1.0, abs=1e-12)


def test_one_row_forest_plot_has_a_label_and_a_title():
    pytest.importorskip("matplotlib")
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


def test_plot_help_says_it_once():
    result = CliRunner().invoke(build_cli(), ["plot", "--help"])
    assert result.exit_code == 0
    assert result.output.count("Draw a figure") == 1
    assert "--where" in result.output


def test_refusal_warning_names_each_term_once_with_its_task():
    from assoc_chat_listing.scorer import ChatListingScorer

    scorer = ChatListingScorer()
    refusals = [
        {"model": "m", "target": "nurse", "task": "listing", "sample": 0},
        {"model": "m", "target": "nurse", "task": "rating", "sample": 0},
        {"model": "m", "target": "nurse", "task": "rating", "sample": 1},
        {"model": "m", "target": "pilot", "task": "listing", "sample": 0},
    ]
    with pytest.warns(UserWarning) as record:
        scorer._warn(refusals, [], [], [], [])
    message = str(record[0].message)
    assert "4 refusal(s)" in message
    assert "m/'nurse' (listing), m/'nurse' (rating x2), m/'pilot' (listing)" in message


def test_nullable_counts_stay_integers_in_every_format(tmp_path):
    table = normalise(
        pd.DataFrame(
            {
                "scorer": "chat_listing",
                "model": "m",
                "target": ["a", "a", "b"],
                "measure": ["listed", "rating", "listed"],
                "value": [1.0, 4.0, 1.0],
                "rank": pd.array([1, None, 2], dtype="Int64"),
            }
        )
    )
    for suffix in ("csv", "parquet"):
        path = write_table(table, tmp_path / f"t.{suffix}")
        if suffix == "csv":
            ranks = [line.rsplit(",", 1)[1] for line in path.read_text().splitlines()]
            assert ranks == ["rank", "1", "", "2"]  # not 1.0
        back = read_table(path)
        assert str(back["rank"].dtype) == "Int64"
        assert back["rank"].tolist()[0] == 1 and pd.isna(back["rank"].iloc[1]) and back["rank"].iloc[2] == 2


def test_example_plugin_is_listed_apart():
    result = CliRunner().invoke(build_cli(), ["scorers"])
    assert result.exit_code == 0
    real, _, examples = result.output.partition("examples (")
    assert "char_ngram" in examples and "char_ngram" not in real
    assert "fmat" in real


def test_printed_tables_shorten_long_cells(monkeypatch):
    from assoc import cli

    long_prompt = "List 50 words that you associate with the social group below. " * 3
    frame = pd.DataFrame({"model": ["m"], "context": [long_prompt], "value": [1.0]})
    result_lines = []
    monkeypatch.setattr(cli.click, "echo", lambda text="", err=False, **_: result_lines.append((text, err)))
    cli._echo_table(frame)
    printed = "\n".join(t for t, err in result_lines if not err)
    assert max(len(line) for line in printed.splitlines()) < 80
    assert any("--out FILE writes them in full" in t for t, err in result_lines if err)


def test_analyses_page_first_and_last_examples_define_their_names():
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "analyses.md"
    fragments = code_blocks(page, "py")
    first, last = fragments[0], fragments[-1]
    assert "table = " in first.split("assoc.analyze", 1)[0]
    assert "compared = " in last.split("assoc.analyze", 1)[0]


# -- --where ---------------------------------------------------------------------------------------


def both_tasks_table() -> pd.DataFrame:
    rows = []
    for term, words, rating in (("nurse", ["kind", "caring"], 6.0), ("pilot", ["brave", "cold"], 4.0)):
        rows += [
            {"scorer": "chat_listing", "model": "m", "target": term, "attribute": w, "measure": "listed", "value": 1.0}
            for w in words
        ]
        rows.append({"scorer": "chat_listing", "model": "m", "target": term, "measure": "rating", "value": rating})
    return normalise(pd.DataFrame(rows))


def test_select_rows_and_parse_where():
    table = both_tasks_table()
    listed = select_rows(table, {"measure": "listed"})
    assert len(listed) == 4 and set(listed["measure"]) == {"listed"}
    assert len(select_rows(table, {"target": ["nurse", "pilot"], "measure": "rating"})) == 2
    assert parse_where(["measure=listed", "model=a", "model=b=c"]) == {"measure": ["listed"], "model": ["a", "b=c"]}
    with pytest.raises(OptionError, match="COLUMN=VALUE"):
        parse_where(["measure"])
    with pytest.raises(TableError, match=r"no column 'task'"):
        select_rows(table, {"task": "listing"})
    with pytest.raises(TableError, match=r"no row has measure=cosine \(values present: listed, rating\)"):
        select_rows(table, {"measure": "cosine"})
    with pytest.raises(TableError, match="not together"):
        select_rows(table, {"measure": "rating", "attribute": "kind"})
    numbers = pd.DataFrame({"rank": [1.0, 2.0, np.nan]})
    assert len(select_rows(numbers, {"rank": "1"})) == 1


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
