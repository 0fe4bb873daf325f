"""``threads=`` / ``--threads`` / ``$ASSOC_THREADS``: torch's intra-op threads during a run, restored after it.

The scorers of ``tests/unit_scorers.py`` write ``torch.get_num_threads()`` as read inside their
unit (or ``score()``) into the ``value`` column, so the tests see what the work itself saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import OptionError
from assoc.infra.threads import THREADS_VARIABLE, resolve_threads, torch_threads, used_threads

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import unit_scorers  # noqa: E402

STIMULI = {
    "designs": [
        {"name": "d1", "target": {"X": ["aa", "b"]}, "attribute": {"A": ["ccc"]}},
        {"name": "d2", "target": {"Y": ["dddd"]}, "attribute": {"B": ["e", "ff"]}},
    ]
}
N_PAIRS = 4
#: A count that is neither torch's default on this machine nor the counts the tests ask for, so a
#: restored value cannot pass by coincidence.
BEFORE = 3


@pytest.fixture
def threads_plugin(fresh_plugins, monkeypatch, tmp_path):
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    assoc.plugins.register(unit_scorers.ThreadsPlugin(), name="threads-test")
    previous = torch.get_num_threads()
    torch.set_num_threads(BEFORE)
    yield
    torch.set_num_threads(previous)


@pytest.mark.parametrize("scorer", ["threads_units", "threads_score"])
def test_the_work_sees_the_threads_asked_for_and_they_are_restored(threads_plugin, scorer):
    options = {"cache": False} if scorer == "threads_units" else {}
    for asked in (1, 2):
        table = assoc.score(scorer, STIMULI, threads=asked, **options)
        assert list(table["value"]) == [float(asked)] * N_PAIRS
        assert table.attrs["assoc"]["executor"]["threads"] == {"requested": asked, "source": "threads", "torch": asked}
        assert torch.get_num_threads() == BEFORE


def test_threads_are_restored_after_an_error_in_a_unit_and_in_score(threads_plugin):
    with pytest.raises(RuntimeError, match="fails on purpose"):
        assoc.score("threads_units", STIMULI, threads=1, fail_at="d2", cache=False)
    assert torch.get_num_threads() == BEFORE
    with pytest.raises(RuntimeError, match="fails on purpose"):
        assoc.score("threads_score", STIMULI, threads=1, fail=True)
    assert torch.get_num_threads() == BEFORE


def test_without_a_setting_torch_keeps_its_count_and_provenance_records_it(threads_plugin):
    table = assoc.score("threads_units", STIMULI, cache=False)
    assert list(table["value"]) == [float(BEFORE)] * N_PAIRS
    assert table.attrs["assoc"]["executor"]["threads"] == {"requested": None, "source": None, "torch": BEFORE}


def test_the_environment_variable_is_the_default_and_the_argument_wins(threads_plugin, monkeypatch):
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    table = assoc.score("threads_units", STIMULI, cache=False)
    assert set(table["value"]) == {2.0}
    assert table.attrs["assoc"]["executor"]["threads"] == {"requested": 2, "source": "ASSOC_THREADS", "torch": 2}
    table = assoc.score("threads_units", STIMULI, cache=False, threads=1)
    assert set(table["value"]) == {1.0}
    assert table.attrs["assoc"]["executor"]["threads"]["source"] == "threads"
    assert torch.get_num_threads() == BEFORE


def test_compare_applies_the_threads_to_every_scorer(threads_plugin):
    table = assoc.compare(STIMULI, {"threads_units": {"cache": False}, "threads_score": {}}, threads=1)
    assert set(table["value"]) == {1.0} and len(table) == 2 * N_PAIRS
    runs = table.attrs["assoc"]["runs"]
    assert [run["executor"]["threads"]["torch"] for run in runs] == [1, 1]
    assert torch.get_num_threads() == BEFORE


def test_units_from_the_cache_report_no_threads(threads_plugin, tmp_path):
    first = assoc.score("threads_units", STIMULI, threads=2, cache_dir=str(tmp_path))
    again = assoc.score("threads_units", STIMULI, threads=1, cache_dir=str(tmp_path))
    assert again["value"].equals(first["value"])  # the cached rows: threads do not change what is computed
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 2
    assert again.attrs["assoc"]["executor"]["threads"] == {"requested": 1, "source": "threads", "torch": None}


BAD = [0, -2, 1.5, True, "two", "0", ""]


@pytest.mark.parametrize("value", BAD)
def test_a_bad_value_is_one_line_before_any_work(threads_plugin, value, tmp_path):
    cache = tmp_path / "bad-cache"
    cache.mkdir()
    for run in (
        lambda: assoc.score("threads_units", STIMULI, threads=value, cache_dir=str(cache)),
        lambda: assoc.compare(STIMULI, ["threads_units"], threads=value),
    ):
        with pytest.raises(OptionError) as caught:
            run()
        message = str(caught.value)
        assert "\n" not in message and message.startswith("threads must be a positive integer")
        assert repr(value) in message
    assert not any(cache.iterdir())  # nothing was computed or cached


@pytest.mark.parametrize("text", ["0", "abc", "2.5", "-1"])
def test_a_bad_environment_variable_is_one_line_naming_it(threads_plugin, monkeypatch, text):
    monkeypatch.setenv(THREADS_VARIABLE, text)
    with pytest.raises(OptionError, match=r"^\$ASSOC_THREADS must be a positive integer"):
        assoc.score("threads_units", STIMULI)
    # an explicit value does not read the variable at all
    assert set(assoc.score("threads_units", STIMULI, threads=1, cache=False)["value"]) == {1.0}


def test_resolve_threads_reads_integers_and_their_text(monkeypatch):
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert resolve_threads(None).requested is None and resolve_threads(None).source is None
    assert resolve_threads(4).requested == 4 and resolve_threads(" 3 ").requested == 3
    monkeypatch.setenv(THREADS_VARIABLE, " ")  # empty: unset
    assert resolve_threads(None).requested is None
    assert used_threads([None, 2, 2]) == 2 and used_threads([1, None, 2]) == [1, 2] and used_threads([None]) is None


def test_the_block_restores_threads_it_set_and_only_those():
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(BEFORE)
        with torch_threads(1) as used:
            assert torch.get_num_threads() == 1
        assert used.value == 1 and torch.get_num_threads() == BEFORE
        with torch_threads(None) as used:
            pass
        assert used.value == BEFORE and torch.get_num_threads() == BEFORE
    finally:
        torch.set_num_threads(previous)


def run_cli(*args: str):
    return CliRunner().invoke(build_cli(), list(args))


def test_cli_threads_reach_the_work_and_provenance(threads_plugin, tmp_path):
    stimuli = tmp_path / "s.json"
    stimuli.write_text(json.dumps(STIMULI))
    out = tmp_path / "t.parquet"
    result = run_cli("score", "-s", "threads_units", "-i", str(stimuli), "--threads", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    table = assoc.read_table(out)
    assert set(table["value"]) == {1.0}
    assert table.attrs["assoc"]["executor"]["threads"] == {"requested": 1, "source": "threads", "torch": 1}
    assert torch.get_num_threads() == BEFORE
    out2 = tmp_path / "c.parquet"
    result = run_cli(
        "compare",
        *("-s", "threads_units", "-s", "threads_score", "-o", "threads_units.cache=false", "-i", str(stimuli)),
        *("--threads", "2", "--out", str(out2)),
    )
    assert result.exit_code == 0, result.output
    assert set(assoc.read_table(out2)["value"]) == {2.0}


@pytest.mark.parametrize("command", ["score", "compare"])
def test_cli_parses_the_setting_once_and_hands_it_on(threads_plugin, tmp_path, monkeypatch, command):
    """One parse where the setting enters (--threads, else $ASSOC_THREADS); the API and the driver take it as it is."""
    from assoc.infra import threads as threads_module

    parsed: list[tuple[object, str]] = []
    parse = threads_module._positive_integer

    def counting(value: object, what: str) -> int:
        parsed.append((value, what))
        return parse(value, what)

    monkeypatch.setattr(threads_module, "_positive_integer", counting)
    stimuli = tmp_path / "s.json"
    stimuli.write_text(json.dumps(STIMULI))
    args = [command, "-s", "threads_score", "-i", str(stimuli)]
    result = run_cli(*args, "--threads", "2", "--out", str(tmp_path / "flag.csv"))
    assert result.exit_code == 0, result.output
    assert parsed == [("2", "--threads")]
    assert set(assoc.read_table(tmp_path / "flag.csv")["value"]) == {2.0}  # what the work saw
    parsed.clear()
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    result = run_cli(*args, "--out", str(tmp_path / "env.csv"))
    assert result.exit_code == 0, result.output
    assert parsed == [("2", "$ASSOC_THREADS")]
    assert set(assoc.read_table(tmp_path / "env.csv")["value"]) == {2.0}


def test_cli_takes_the_environment_variable(threads_plugin, tmp_path, monkeypatch):
    stimuli = tmp_path / "s.json"
    stimuli.write_text(json.dumps(STIMULI))
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    out = tmp_path / "t.csv"
    assert run_cli("score", "-s", "threads_score", "-i", str(stimuli), "--out", str(out)).exit_code == 0
    table = assoc.read_table(out)
    assert set(table["value"]) == {2.0}
    assert table.attrs["assoc"]["executor"]["threads"]["source"] == "ASSOC_THREADS"


@pytest.mark.parametrize("command", ["score", "compare"])
@pytest.mark.parametrize("value", ["0", "x"])
def test_cli_refuses_a_bad_value_in_one_line(threads_plugin, tmp_path, command, value):
    out = tmp_path / "t.csv"
    result = run_cli(command, "-s", "threads_units", "-i", "missing.json", "--threads", value, "--out", str(out))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [
        f"error: --threads must be a positive integer (the number of threads torch computes with), got {value!r}"
    ]
    assert not out.exists()


@pytest.mark.parametrize("command", ["score", "compare"])
def test_help_lists_the_option(command):
    result = run_cli(command, "--help")
    assert result.exit_code == 0 and "--threads N" in result.output and "ASSOC_THREADS" in result.output


@pytest.mark.slow
def test_threads_never_import_torch_for_work_that_does_not_use_it(tmp_path):
    """In a fresh process: --help and a torch-free run with threads= leave torch unimported; a run that
    imports torch inside its unit gets the count from the moment it imports it."""
    code = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(HERE)!r})
        from assoc.cli import main
        try:
            main(["score", "--help"])
        except SystemExit:
            pass
        import assoc, unit_scorers
        assoc.plugins.register(unit_scorers.ThreadsPlugin(), name="threads-test")
        stimuli = {json.dumps(STIMULI)}
        free = assoc.score("torch_free_units", stimuli, threads=1)
        hooks_left = [sorted(f.names) for f in sys.meta_path if "torch" in getattr(f, "names", ())]
        report = {{"torch_after_free_run": "torch" in sys.modules, "hooks_left": hooks_left,
                   "free": free.attrs["assoc"]["executor"]["threads"]}}
        table = assoc.score("threads_units", stimuli, threads=1, cache=False)
        import torch
        report.update(values=sorted(set(table["value"])), restored=torch.get_num_threads(),
                      record=table.attrs["assoc"]["executor"]["threads"])
        print(json.dumps(report))
    """)
    env = {**__import__("os").environ, "ASSOC_CACHE_DIR": str(tmp_path)}
    env.pop(THREADS_VARIABLE, None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["torch_after_free_run"] is False and report["hooks_left"] == []
    assert report["free"] == {"requested": 1, "source": "threads", "torch": None}
    assert report["values"] == [1.0] and report["record"]["torch"] == 1
    # torch was imported inside the unit with threads=1: afterwards it is back at its own default
    assert report["restored"] == _fresh_default()


def _fresh_default() -> int:
    """torch's default intra-op thread count in a fresh process (what a restore must come back to)."""
    code = "import torch; print(torch.get_num_threads())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout)


def test_a_masked_lm_scores_the_same_with_one_and_two_threads(tmp_path, monkeypatch):
    """fmat end to end: the count reaches the real scorer (provenance) and changes no value beyond float noise."""
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    model = str(build_bert_wordpiece(tmp_path / "bert"))
    stimuli = {
        "designs": [
            {
                "name": "occ",
                "queries": ["The [MASK] works as a {TARGET}.", "[MASK] is a {TARGET}."],
                "mask": {"male": ["man", "he"], "female": ["woman", "she"]},
                "target": {"Occupation": ["nurse", "engineer", "teacher"]},
            }
        ]
    }
    previous = torch.get_num_threads()
    one = assoc.score("fmat", stimuli, [model], threads=1, cache=False)
    two = assoc.score("fmat", stimuli, [model], threads=2, cache=False)
    assert torch.get_num_threads() == previous
    assert [t.attrs["assoc"]["executor"]["threads"]["torch"] for t in (one, two)] == [1, 2]
    assert one.drop(columns="value").equals(two.drop(columns="value")) and len(one) == 24
    assert (one["value"] - two["value"]).abs().max() <= 1e-6
