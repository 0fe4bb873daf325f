"""Hints that save a new user a round trip (issue 37): each mistake gets a line that names the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import DataError, OptionError
from assoc.table.schema import normalise

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

HERE = Path(__file__).parent
STIMULI = {"target": {"T": ["ant", "bee"]}, "attribute": {"A": ["antler", "b"]}}


def _cli(*args: str):
    return CliRunner().invoke(build_cli(), list(args))


def test_model_instead_of_models_points_at_models():
    with pytest.raises(OptionError, match=r"unknown option 'model' for scorer 'fmat': .*give the models as models="):
        assoc.score("fmat", STIMULI, model="bert-base-uncased")
    # on the command line, the model as an option points at --model
    result = _cli("score", "-s", "char_ngram", "-i", "caliskan:weat1", "-o", "model=glove")
    assert result.exit_code == 2
    assert (
        "unknown option 'model' for scorer 'char_ngram': the models are not an option; "
        "give each model with --model glove" in result.stderr
    )
    # an analysis has no models: its unknown options keep the did-you-mean hint only
    with pytest.raises(OptionError) as caught:
        assoc.analyze("icc", pd.DataFrame(), model="x")
    assert "models" not in str(caught.value).split("(its options")[0]


def test_dash_o_with_a_file_name_suggests_out(tmp_path):
    result = _cli("score", "-s", "char_ngram", "-i", "caliskan:weat1", "-o", "out.csv")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --option (-o) expects key=value, got 'out.csv'; to write the table to a file: --out out.csv"
    )


def _listing_and_rating_table() -> pd.DataFrame:
    rows = [
        {
            "scorer": "chat_listing",
            "model": "gpt",
            "target_group": "occupation",
            "target": term,
            "attribute": word,
            "measure": "listed",
            "value": float(rank),
        }
        for term, words in {"nurse": ["caring", "cold"], "pilot": ["brave", "smart"]}.items()
        for rank, word in enumerate(words, 1)
    ]
    rows += [{**row, "measure": "rating", "value": 4.0} for row in rows]  # task=both: a rating of each listed word
    return normalise(pd.DataFrame(rows))


def test_stereotype_on_listing_and_ratings_names_the_where_that_fixes_it(tmp_path):
    dictionary = pd.DataFrame({"word": ["caring", "cold", "smart"], "dimension": "Warmth", "direction": [1, -1, 1]})
    table = _listing_and_rating_table()
    # the guard of every analysis: ratings are no listed words
    with pytest.raises(DataError, match=r"holds measure rating .keep the others' rows: --where measure=listed"):
        assoc.analyze("stereotype", table, dictionary=dictionary)
    # the hint, followed as printed, runs
    assoc.write_table(table, tmp_path / "chat.csv")
    dictionary.to_csv(tmp_path / "d.csv", index=False)
    refused = _cli(
        "analyze", "stereotype", "--table", str(tmp_path / "chat.csv"), "-o", f"dictionary={tmp_path / 'd.csv'}"
    )
    assert refused.exit_code == 2 and "--where measure=listed" in refused.stderr
    fixed = _cli(
        "analyze",
        "stereotype",
        "--table",
        str(tmp_path / "chat.csv"),
        "--where",
        "measure=listed",
        "-o",
        f"dictionary={tmp_path / 'd.csv'}",
        "--out",
        str(tmp_path / "s.csv"),
    )
    assert fixed.exit_code == 0, fixed.output
    result = assoc.read_table(tmp_path / "s.csv")
    # nurse: caring (+1) and cold (-1) are both in the Warmth dictionary: representativeness 1, direction 0
    nurse = result[(result.target == "nurse")].set_index("measure")["value"]
    assert nurse["representativeness"] == 1.0 and nurse["direction"] == 0.0


def test_cite_lists_one_paper_once_in_whatever_format_each_source_gives_it():
    from assoc.table.accessor import citation_key, citations

    scorer = "Nicolas, G., & Caliskan, A. (2024). Directionality ... PNAS Nexus, 3(11). doi:10.1093/pnasnexus/pgae493"
    stimuli = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality ... PNAS Nexus. https://doi.org/10.1093/PNASNEXUS/pgae493."
    )
    other = "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Science, 356(6334), 183-186."
    provenance = {"citation": scorer, "stimuli_meta": {"citation": [stimuli, other, " " + other.upper() + " "]}}
    assert citations(provenance) == [scorer, other]
    assert citation_key(stimuli) == citation_key(scorer) == "doi:10.1093/pnasnexus/pgae493"
    # two papers of one author in one year stay two entries
    assert (
        len(citations({"citation": "A. (2024). doi:10.1/x", "stimuli_meta": {"citation": "A. (2024). doi:10.1/y"}}))
        == 2
    )
    # the installed plugins' own pair: the chat_listing scorer and the nicolas2024 stimuli
    from assoc import plugins

    chat = plugins.get_scorer("chat_listing").citation
    bundled = assoc.Stimuli.load("nicolas2024").meta["citation"]
    assert chat != bundled and citation_key(chat) == citation_key(bundled)


@pytest.fixture
def length_units(fake_distribution, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(HERE))
    fake_distribution("units", "from unit_scorers import register_scorers  # noqa: F401\n")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


def test_summary_of_a_comparison_says_what_was_compared(length_units):
    table = assoc.compare(STIMULI, {"char_ngram": {}, "length_units": {"models": ["m1", "m2"]}}, progress=False)
    text = str(table.assoc.summary())
    assert "assoc comparison of scorers char_ngram, length_units" in text
    line = next(line for line in text.splitlines() if line.startswith("Compared:"))
    char_models = ", ".join(table.loc[table.scorer == "char_ngram", "model"].unique())
    assert line == f"Compared:    char_ngram on {char_models}; length_units on m1, m2"
    assert "?" not in text
    # an analysis of the comparison says what it read
    from assoc.table.accessor import _header

    lines = _header(pd.DataFrame(), {"kind": "analysis", "analysis": "convergence", "input": table.assoc.provenance})
    assert f"Input:       comparison of char_ngram on {char_models}; length_units on m1, m2" in lines


@pytest.mark.slow
def test_models_tiny_prints_no_library_bar_when_piped(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "assoc.cli", "models", "tiny", str(tmp_path / "tiny")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"tiny masked LM (seed 0) in {tmp_path / 'tiny'}: use --model {tmp_path / 'tiny'}"
    ]
    assert (tmp_path / "tiny" / "config.json").is_file()


def test_every_command_is_in_the_command_line_page():
    import click

    def paths(command, path):
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from paths(sub, [*path, name])
        else:
            yield " ".join(path)

    page = (HERE.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [p for p in paths(build_cli(), ["assoc"]) if p not in page]
    assert not missing, f"docs/cli.md lacks {missing}"
    assert "`assoc chat test-server [--port N] [--delay S]`" in page


def _demo_dictionary_block(page: str) -> str:
    from assoc.testing.docs import code_blocks

    found = [block for block in code_blocks(HERE.parent / "docs" / page, "bash") if "demo-dictionary.csv <<" in block]
    assert len(found) == 1, f"docs/{page} has no block that writes demo-dictionary.csv"
    return found[0]


@pytest.mark.parametrize("page", ["sbert.md", "analyses.md"])
def test_the_stereotype_example_builds_its_dictionary_offline(page, tmp_path, monkeypatch):
    """The docs' stereotype command lines need no dictionary from elsewhere: the block writes it."""
    block = _demo_dictionary_block(page)
    heredoc = block[: block.index("\nCSV\n") + len("\nCSV\n")]
    done = subprocess.run(["bash", "-c", heredoc], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(tmp_path / "demo-dictionary.csv")
    assert list(written.columns) == ["word", "dimension", "direction"] and set(written.dimension) == {
        "Warmth",
        "Competence",
    }
    # the block's own `assoc analyze stereotype` line, as printed, on a small table in place of the scored one
    line = next(line for line in block.splitlines() if line.startswith("assoc analyze stereotype"))
    argv = line.split()[1:]
    table_path = argv[argv.index("--table" if "--table" in argv else "-t") + 1]
    rows = [
        {
            "scorer": "sbert_topwords",
            "model": "m",
            "target_group": "jobs",
            "target": term,
            "attribute": word,
            "measure": "cosine",
            "value": 0.5,
        }
        for term, words in {
            "nurse": ["caring", "warm", "tired"],
            "pilot": ["smart", "lazy", "competent", "brave"],
        }.items()
        for word in words
    ]
    monkeypatch.chdir(tmp_path)
    assoc.write_table(normalise(pd.DataFrame(rows)), table_path)
    result = CliRunner().invoke(build_cli(), argv)
    assert result.exit_code == 0, result.output
    coded = assoc.read_table(argv[argv.index("--out") + 1]).set_index(["target", "attribute_group", "measure"])["value"]
    # by hand: nurse, 2 of 3 responses Warmth words (caring +1, warm +1); pilot, 3 of 4 Competence words (+1 -1 +1)
    assert coded["nurse", "Warmth", "representativeness"] == pytest.approx(2 / 3)
    assert coded["nurse", "Warmth", "direction"] == 1.0
    assert coded["pilot", "Competence", "representativeness"] == pytest.approx(3 / 4)
    assert coded["pilot", "Competence", "direction"] == pytest.approx(1 / 3)
