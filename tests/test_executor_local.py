"""Work units on the local executor: the driver's plan order, unit cache, resuming and errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import assoc
from assoc.errors import OptionError, PluginError
from assoc.executors.driver import run_study
from assoc.plugins import get_executor
from assoc.scoring.units import WorkUnit, check_plan
from assoc.stimuli.sets import Stimuli
from assoc.testing.docs import code_blocks, run_blocks

HERE = Path(__file__).parent
STIMULI = {
    "designs": [
        {"name": "d1", "target": {"X": ["aa", "bbbb", "c"]}, "attribute": {"A": ["dd", "eeeee"]}},
        {"name": "d2", "target": {"Y": ["ffffff"]}, "attribute": {"B": ["g", "hh", "iii"]}},
    ]
}
PAIRS = [
    ("d1", "aa", "dd"),
    ("d1", "aa", "eeeee"),
    ("d1", "bbbb", "dd"),
    ("d1", "bbbb", "eeeee"),
    ("d1", "c", "dd"),
    ("d1", "c", "eeeee"),
    ("d2", "ffffff", "g"),
    ("d2", "ffffff", "hh"),
    ("d2", "ffffff", "iii"),
]


@pytest.fixture
def units_plugin(fake_distribution, monkeypatch, tmp_path):
    """Register tests/unit_scorers.py's scorer and log its loads and units to a file."""
    monkeypatch.syspath_prepend(str(HERE))
    # An installed distribution (not assoc.plugins.register): the tests also run assoc in other processes.
    fake_distribution("units", "from unit_scorers import register_scorers  # noqa: F401\n")
    log = tmp_path / "calls.log"
    monkeypatch.setenv("ASSOC_TEST_UNIT_LOG", str(log))
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))

    def calls(kind: str) -> list[str]:
        if not log.exists():
            return []
        return [line.split()[1] for line in log.read_text().splitlines() if line.startswith(kind + " ")]

    return calls


def test_rows_in_plan_order_with_values_by_hand(units_plugin):
    table = assoc.score("length_units", STIMULI, ["m1", "m2"], scale=0.5, per_unit=2)
    expected = [(m, d, t, a, 0.5 * (len(t) - len(a))) for m in ("m1", "m2") for d, t, a in PAIRS]
    got = list(zip(table["model"], table["design"], table["target"], table["attribute"], table["value"]))
    assert got == expected
    # five units per model, each model loaded once by the worker
    assert units_plugin("unit") == [f"{m}#{i}" for m in ("m1", "m2") for i in range(5)]
    assert units_plugin("load") == ["m1", "m2"]
    executed = dict(table.attrs["assoc"]["executor"])
    threads = executed.pop("threads")  # torch's count is a fact of this process (tests/test_threads.py)
    assert executed == {"name": "local", "units": 10, "units_from_cache": 0}
    assert (threads["requested"], threads["source"]) == (None, None)


def test_finished_units_come_from_the_cache_without_loading_the_model(units_plugin):
    first = assoc.score("length_units", STIMULI, ["m1"], per_unit=4)
    assert len(units_plugin("unit")) == 3
    again = assoc.score("length_units", STIMULI, ["m1"], per_unit=4)
    assert len(units_plugin("unit")) == 3 and units_plugin("load") == ["m1"]  # nothing ran the second time
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 3
    assert again.drop(columns=[]).equals(first)
    # another option value is another namespace: computed afresh
    assoc.score("length_units", STIMULI, ["m1"], per_unit=4, scale=2.0)
    assert len(units_plugin("unit")) == 6
    # cache=False neither reads nor writes
    assoc.score("length_units", STIMULI, ["m1"], per_unit=4, cache=False)
    assert len(units_plugin("unit")) == 9


def test_units_report_what_they_did_and_units_from_the_cache_report_nothing(units_plugin):
    """Scorer.unit_report travels with each unit's rows; the driver adds the reports of the units it computed."""
    table = assoc.score("length_units", STIMULI, ["m1", "m2"], per_unit=4, report=True)
    # 9 pairs in units of 4: three units per model; numbers add up, dicts key by key, the rest: the last unit's
    assert table.attrs["assoc"]["run"] == {"units": 6, "pairs": 18, "by_model": {"m1": 9, "m2": 9}, "last": "m2#2"}
    more = assoc.score("length_units", STIMULI, ["m1", "m2", "m3"], per_unit=4, report=True)
    assert more.attrs["assoc"]["run"] == {"units": 3, "pairs": 9, "by_model": {"m3": 9}, "last": "m3#2"}
    again = assoc.score("length_units", STIMULI, ["m1", "m2", "m3"], per_unit=4, report=True)
    assert "run" not in again.attrs["assoc"]  # every unit came from the cache: this run did nothing to report
    assert again.drop(columns=[]).equals(more)


def test_an_incomplete_unit_is_not_cached_and_runs_again(units_plugin):
    """Scorer.unit_complete: the rows of an incomplete unit enter the table, and the next run computes it again."""
    first = assoc.score("length_units", STIMULI, ["m1"], per_unit=4, incomplete="c")
    assert units_plugin("unit") == ["m1#0", "m1#1", "m1#2"]  # m1#1 holds the pairs of target "c"
    again = assoc.score("length_units", STIMULI, ["m1"], per_unit=4, incomplete="c")
    assert units_plugin("unit") == ["m1#0", "m1#1", "m1#2", "m1#1"]
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 2
    assert again.drop(columns=[]).equals(first)


def test_merge_units_gets_the_rows_and_the_reports_of_the_units_computed(units_plugin):
    """Scorer.merge_units: every unit's rows (computed or cached) and the reports of this run's units."""
    table = assoc.score("length_units", STIMULI, ["m1"], per_unit=4, report=True, count_in_merge=True)
    assert table.attrs["assoc"]["run"] == {"rows": 9, "reports": 3}
    more = assoc.score("length_units", STIMULI, ["m1", "m2"], per_unit=4, report=True, count_in_merge=True)
    assert more.attrs["assoc"]["run"] == {"rows": 18, "reports": 3}  # m1's three units came from the cache


def test_a_failing_model_keeps_the_finished_units(units_plugin, monkeypatch):
    monkeypatch.setenv("ASSOC_TEST_FAIL_MODEL", "m2")
    with pytest.raises(OSError, match="cannot open model m2") as caught:
        assoc.score("length_units", STIMULI, ["m1", "m2"])
    assert any("work unit 'm2#0' of model 'm2'" in note for note in caught.value.__notes__)
    assert len(units_plugin("unit")) == 5
    monkeypatch.delenv("ASSOC_TEST_FAIL_MODEL")
    table = assoc.score("length_units", STIMULI, ["m1", "m2"])
    assert len(units_plugin("unit")) == 10 and len(table) == 18  # m1's five units came from the cache


def test_a_scorer_without_units_runs_only_locally(inline_plugin, length_scorer):
    inline_plugin("plain", length_scorer("plain"))
    table = assoc.score("plain", STIMULI)
    executed = dict(table.attrs["assoc"]["executor"])
    assert executed.pop("threads")["requested"] is None
    assert executed == {"name": "local", "units": None}
    with pytest.raises(OptionError, match="runs only in this process"):
        assoc.score("plain", STIMULI, executor="ray")
    with pytest.raises(OptionError, match="runs only in this process"):
        assoc.compare(STIMULI, ["plain"], executor="ray")


def test_unknown_executor_is_a_clear_error(units_plugin):
    with pytest.raises(OptionError, match="unknown executor 'rya'; did you mean 'ray'"):
        assoc.score("length_units", STIMULI, ["m1"], executor="rya")
    with pytest.raises(OptionError, match="takes no options"):
        get_executor("local", address="x")


@pytest.mark.parametrize(
    "units, message",
    [
        ("not a list", "must return a list"),
        ([WorkUnit("k", "m1", []), WorkUnit("k", "m1", [])], "share the key 'k'"),
        ([WorkUnit("k", "other", [])], "names model 'other'"),
        ([WorkUnit("k", "m1", {1, 2})], "not JSON-compatible"),
        ([object()], "not a WorkUnit"),
    ],
)
def test_bad_plans_are_named(units, message):
    with pytest.raises(PluginError, match=message):
        check_plan(units, ["m1"], "s")


def test_work_unit_fields_are_checked():
    with pytest.raises(PluginError, match="non-empty text key"):
        WorkUnit("", "m", None)
    with pytest.raises(PluginError, match="size"):
        WorkUnit("k", "m", None, size=-1)
    with pytest.raises(PluginError, match="resources"):
        WorkUnit("k", "m", None, resources={"GPU": -1})
    assert WorkUnit("k", "m", [1]).fingerprint() != WorkUnit("k", "m", [2]).fingerprint()


def test_warnings_from_units_are_shown_once(units_plugin, monkeypatch):
    import warnings

    import unit_scorers

    def noisy(self, state, unit):
        warnings.warn("the same note from every unit", UserWarning, stacklevel=1)
        return real(self, state, unit)

    real = unit_scorers.LengthUnits.run_unit
    monkeypatch.setattr(unit_scorers.LengthUnits, "run_unit", noisy)
    with pytest.warns(UserWarning, match="the same note") as caught:
        assoc.score("length_units", STIMULI, ["m1"], cache=False)
    assert sum("the same note" in str(w.message) for w in caught) == 1


@pytest.mark.slow
def test_a_killed_driver_resumes_from_the_cache(units_plugin, tmp_path):
    """A driver killed with SIGKILL mid-study keeps the units that had arrived; a new run computes only the rest."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import assoc
        assoc.score("length_units", {STIMULI!r}, ["m1"], per_unit=1)
    """)
    env = {**os.environ, "ASSOC_TEST_UNIT_SLEEP": "0.3"}
    process = subprocess.Popen([sys.executable, "-c", script], env=env)
    log = Path(os.environ["ASSOC_TEST_UNIT_LOG"])
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and len(units_plugin("unit")) < 4 and process.poll() is None:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    started = units_plugin("unit")
    assert 4 <= len(started) < len(PAIRS), "the driver finished or never started"
    log.write_text("")
    table = assoc.score("length_units", STIMULI, ["m1"], per_unit=1)
    rerun = units_plugin("unit")
    cached = table.attrs["assoc"]["executor"]["units_from_cache"]
    assert cached >= len(started) - 1  # every unit but the one being computed at the kill had been stored
    assert len(rerun) == len(PAIRS) - cached and not set(rerun) & set(started[:-1])
    assert list(table["value"]) == [len(t) - len(a) for _, t, a in PAIRS]


def test_run_study_with_a_scorer_instance(units_plugin):
    from unit_scorers import LengthUnits

    table, record = run_study(
        LengthUnits(per_unit=3, cache=False), Stimuli.load(STIMULI), ["m1"], executor=get_executor()
    )
    assert record.pop("threads")["requested"] is None  # torch's count: a fact of this process (test_threads.py)
    assert record == {"name": "local", "units": 3, "units_from_cache": 0} and len(table) == len(PAIRS)


@pytest.mark.usefixtures("example_plugin")
@pytest.mark.docs("docs/write-a-plugin.md", "python", section="## 6. Scale out: work units")
def test_the_work_unit_example_of_write_a_plugin_runs():
    """docs/write-a-plugin.md section 6 runs as written (with the n-gram helpers of its section 3)."""

    blocks = code_blocks(HERE.parent / "docs" / "write-a-plugin.md", section="## 6. Scale out: work units")
    assert len(blocks) == 2
    from assoc_example.scorer import char_ngrams, cosine

    namespace = {"__name__": "docs_units", "char_ngrams": char_ngrams, "cosine": cosine}
    run_blocks(blocks, name="write-a-plugin.md section 6", namespace=namespace)
    table = namespace["table"]
    assert list(table["value"]) == [
        pytest.approx(cosine(char_ngrams(t, n), char_ngrams(a, n)))
        for n in (2, 3)
        for t in ("ant", "bee")
        for a in ("antler", "rose", "beet")
    ]


def test_without_ray_the_ray_executor_is_one_clear_error(units_plugin, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import cli

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(OptionError, match=r"needs Ray, which is not installed: pip install ray \(in a clone"):
        assoc.score("length_units", STIMULI, ["m1"], executor="ray")
    result = CliRunner().invoke(
        cli, ["score", "-s", "length_units", "-i", "caliskan:weat1", "-m", "m1", "--executor", "ray"]
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: the Ray executor needs Ray, which is not installed: pip install ray "
        "(in a clone of the assoc repository: pip install -e '.[ray]')"
    )
    result = CliRunner().invoke(cli, ["score", "-s", "length_units", "-i", "caliskan:weat1", "--ray-address", "x"])
    assert result.exit_code == 2 and "--ray-address is an option of --executor ray" in result.output
