"""The command line: commands, one-line errors, exit codes, and no heavy imports at start-up."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from click.testing import CliRunner

from assoc.cli import build_cli

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

STIMULI = (
    "target: {Flowers: [rose, tulip], Insects: [ant, wasp]}\n"
    "attribute: {Pleasant: [love, joy], Unpleasant: [hate, war]}\n"
)


@pytest.fixture
def stimuli_file(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(STIMULI)
    return path


def run(*args: str):
    return CliRunner().invoke(build_cli(), list(args))


def test_help_lists_core_commands():
    result = run("--help")
    assert result.exit_code == 0
    for command in ("score", "analyze", "scorers", "analyses", "plugins", "stimuli"):
        assert command in result.output


def test_score_writes_table_with_provenance(stimuli_file, tmp_path):
    out = tmp_path / "t.parquet"
    result = run(
        "score",
        "--scorer",
        "char_ngram",
        "--stimuli",
        str(stimuli_file),
        "--option",
        "lowercase=false",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    from assoc.table.files import read_table
    from assoc.table.provenance import get_provenance

    table = read_table(out)
    assert len(table) == 16
    assert get_provenance(table)["options"] == {"lowercase": False}


def test_score_csv_and_jsonl_by_extension(stimuli_file, tmp_path):
    for suffix in (".csv", ".jsonl"):
        out = tmp_path / f"t{suffix}"
        assert run("score", "-s", "char_ngram", "-i", str(stimuli_file), "--out", str(out)).exit_code == 0
        assert (tmp_path / f"t{suffix}.provenance.json").is_file()


@pytest.mark.parametrize(
    "args, message",
    [
        (["score", "-s", "char_ngrm", "-i", "x.yaml"], "error: unknown scorer 'char_ngrm'; did you mean 'char_ngram'?"),
        (["score", "-s", "char_ngram", "-i", "missing.yaml"], "error: stimuli file not found: missing.yaml"),
        (["analyze", "nosuch", "--table", "t.csv"], "error: unknown analysis 'nosuch'"),
    ],
)
def test_user_errors_are_one_line_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in result.output


def test_bad_option_is_one_line(stimuli_file):
    result = run("score", "-s", "char_ngram", "-i", str(stimuli_file), "-o", "lowercase=perhaps")
    assert result.exit_code == 2
    assert "option 'lowercase' of scorer 'char_ngram': must be true or false" in result.output


def test_typo_in_command_suggests():
    result = run("scroe")
    assert result.exit_code == 2 and "did you mean 'score'" in result.output


def test_listing_commands(stimuli_file):
    assert "char_ngram" in run("scorers").output
    verbose = run("scorers", "--verbose").output
    assert "lowercase (bool, default True)" in verbose and "citation:" in verbose
    plugins_output = run("plugins").output
    assert "example" in plugins_output and "[loaded]" in plugins_output
    assert "Flowers (2)" in run("stimuli", str(stimuli_file)).output


def test_help_imports_no_heavy_library():
    code = textwrap.dedent("""
        import sys, json
        from assoc.cli import main
        for argv in (["--help"], ["scorers"], ["plugins"], ["analyses"], ["score", "--help"]):
            try:
                main(argv)
            except SystemExit:
                pass
        from assoc.testing.imports import HEAVY_MODULES
        print(json.dumps([m for m in HEAVY_MODULES if m in sys.modules]))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


@pytest.mark.slow
def test_console_script_runs():
    result = subprocess.run(
        [sys.executable, "-m", "assoc.cli", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "0.1.0" in result.stdout


def test_warnings_are_one_line_without_source_code(fake_plugin_warning):
    result = run("score", "-s", "warner", "-i", str(fake_plugin_warning))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["warning: word 'gladiola' is missing"]


@pytest.fixture
def fake_plugin_warning(fake_plugin, model_free_scorer_source, tmp_path):
    fake_plugin(
        "warner",
        model_free_scorer_source(
            "warner",
            """
        warnings.warn("word 'gladiola' is missing", UserWarning)
        return from_records([dict(target=t, attribute=a, value=1.0)
                             for d in stimuli for _, t, _, a in d.word_pairs()], scorer=self.name)
    """,
        ),
    )
    path = tmp_path / "s.yaml"
    path.write_text("target: {T: [a]}\nattribute: {A: [b]}\n")
    return path


def test_plot_help_says_it_once():
    result = CliRunner().invoke(build_cli(), ["plot", "--help"])
    assert result.exit_code == 0
    assert result.output.count("Draw a figure") == 1
    assert "--where" in result.output


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
