"""Executors are plugins (issue 33): registered through ``register_executors``, named by the CLI from the registry.

The executor here is registered in-line (``assoc.plugins.register``): nothing runs in another
process, so no installed distribution is needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

import assoc
from assoc import Executor, Option, OptionError, Scorer, UnitOutcome, Worker, WorkUnit
from assoc.plugins import executor_names, get_executor

STIMULI = {"target": {"T": ["aa", "bbbb", "c"]}, "attribute": {"A": ["dd", "eeeee"]}}


class PairLengths(Scorer):
    """len(target) - len(attribute) for each pair, one unit per design and target word."""

    name = "pair_lengths_test"
    description = "test scorer with one unit per target"
    citation = "none"
    measure = "length_difference"
    requires_models = True
    default_models = ("len",)

    def plan(self, stimuli: Any, models: Any) -> list[WorkUnit]:
        units: dict[str, list[tuple[str, ...]]] = {}
        for design in stimuli:
            for pair in design.word_pairs():
                units.setdefault(f"{design.name}|{pair[1]}", []).append(tuple(pair))
        return [WorkUnit(f"{m}|{key}", m, block, size=len(block)) for m in models for key, block in units.items()]

    def load_worker(self, model: str) -> str:
        return model

    def run_unit(self, state: Any, unit: WorkUnit) -> list[dict[str, Any]]:
        return [
            {
                "model": state,
                "target_group": tg,
                "target": t,
                "attribute_group": ag,
                "attribute": a,
                "value": float(len(t) - len(a)),
            }
            for tg, t, ag, a in unit.payload
        ]


class ReversedExecutor(Executor):
    """Runs units in this process in reverse plan order (the driver still merges them in plan order)."""

    name = "reversed_test"
    description = "this process, last unit first (a test executor)"
    cli_options = (Option("label", str, None, help="a label recorded in provenance"),)
    runs: ClassVar[list[list[str]]] = []

    def __init__(self, label: str | None = None):
        self.label = label

    def run(self, scorer: Scorer, units: Iterable[WorkUnit], *, threads: int | None = None) -> Iterator[UnitOutcome]:
        worker = Worker(scorer, threads)
        taken = list(units)
        ReversedExecutor.runs.append([unit.key for unit in taken])
        try:
            for unit in reversed(taken):
                yield worker.run(unit)
        finally:
            worker.close()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label}


class Plugin:
    @assoc.hookimpl
    def register_scorers(self, register: Any) -> None:
        register(PairLengths)

    @assoc.hookimpl
    def register_executors(self, register: Any) -> None:
        register(ReversedExecutor)


@pytest.fixture
def plugin(fresh_plugins: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    ReversedExecutor.runs.clear()
    assoc.plugins.register(Plugin(), name="reversed-test")


def test_the_core_registers_local_and_ray_like_any_plugin(fresh_plugins: None) -> None:
    registry = assoc.plugins.registry()
    assert executor_names()[:1] == ["local"] and "ray" in executor_names()
    assert registry.executors["local"].plugin == "assoc" and registry.executors["ray"].plugin == "assoc"
    assert registry.infos["assoc"].executors == ["local", "ray"]


def test_an_executor_from_a_plugin_runs_a_study_and_gives_the_local_table(plugin: None) -> None:
    local = assoc.score("pair_lengths_test", STIMULI)
    table = assoc.score("pair_lengths_test", STIMULI, executor="reversed_test")
    # by hand: len(t) - len(a) for t in (aa, bbbb, c), a in (dd, eeeee)
    assert table["value"].tolist() == [0.0, -3.0, 2.0, -1.0, -1.0, -4.0]
    assert table["value"].tolist() == local["value"].tolist()  # merged in plan order, whatever the run order
    assert [len(keys) for keys in ReversedExecutor.runs] == [3]  # one unit per target word, run last first
    executed = table.attrs["assoc"]["executor"]
    assert executed["name"] == "reversed_test" and executed["label"] is None and executed["units"] == 3
    made = get_executor("reversed_test", label="x")
    assert isinstance(made, ReversedExecutor) and made.label == "x"


def test_the_cli_takes_the_executor_and_its_options_from_the_registry(plugin: None, tmp_path: Any) -> None:
    from assoc.cli import cli

    runner = CliRunner()
    shown = runner.invoke(cli, ["score", "--help"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())  # as one line: click wraps the help
    assert "reversed_test: this process, last unit first (a test executor)" in text
    assert "--reversed-test-label LABEL With --executor reversed_test: a label recorded in provenance" in text
    assert "--executor local|ray|reversed_test" in text
    out = tmp_path / "t.csv"
    stimuli = tmp_path / "s.json"
    stimuli.write_text(json.dumps(STIMULI))
    result = runner.invoke(
        cli,
        [
            "score",
            "-s",
            "pair_lengths_test",
            "-i",
            str(stimuli),
            "-x",
            "reversed_test",
            "--reversed-test-label",
            "run1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    table = assoc.read_table(out)
    assert table["value"].tolist() == [0.0, -3.0, 2.0, -1.0, -1.0, -4.0]
    assert table.attrs["assoc"]["executor"]["label"] == "run1"
    wrong = runner.invoke(cli, ["score", "-s", "pair_lengths_test", "-i", "x.json", "--reversed-test-label", "a"])
    assert wrong.exit_code == 2
    assert "--reversed-test-label is an option of --executor reversed_test" in wrong.output


def test_an_executor_name_two_plugins_register_is_an_error(plugin: None) -> None:
    class Other:
        @assoc.hookimpl
        def register_executors(self, register: Any) -> None:
            register(ReversedExecutor)

    assoc.plugins.register(Other(), name="other-test")
    with pytest.raises(assoc.PluginError, match="executor 'reversed_test' is registered by both"):
        get_executor("reversed_test")
    with pytest.raises(OptionError, match="unknown executor 'reversed'; did you mean 'reversed_test'"):
        get_executor("reversed")
