"""Every hook is documented and tested (issue 41 item 7), as datasette checks its own hooks.

``test_plugin_hooks_are_documented``: each hook of :mod:`assoc.plugins.hookspecs` has a typed
signature, a docstring line saying when it is called (``Called ...``), a row in the hook table of
docs/write-a-plugin.md written with its parameter names, and an entry in the reference page
docs/reference/plugins.md (which renders its signature and docstring).
``test_plugin_hooks_have_tests``: each hook has a test named ``test_hook_<hook>`` in ``tests/`` that
implements the hook (a function or method of that name inside the test), registers it and checks its
effect; those tests are the ``test_hook_*`` functions at the end of this file. Each check is shown
to find a planted violation.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import assoc
from assoc.plugins import hookspecs
from assoc.plugins import manager as plugins

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "write-a-plugin.md"
REFERENCE = ROOT / "docs" / "reference" / "plugins.md"


def hook_specs(module: Any) -> dict[str, Callable[..., Any]]:
    """The hook specifications a module declares (functions marked with its ``hookspec``)."""
    marker = f"{module.PROJECT}_spec"
    return {name: value for name, value in vars(module).items() if callable(value) and hasattr(value, marker)}


def undocumented_hooks(specs: dict[str, Callable[..., Any]], guide: str, reference: str) -> list[str]:
    """What each hook lacks of its documentation, one line per gap (empty when every hook is documented)."""
    gaps = []
    listed = re.search(r"::: assoc\.plugins\.hookspecs\n(.*?)(?:\n\n|\Z)", reference, flags=re.S)
    members = set(re.findall(r"^\s+- (\w+)$", listed.group(1), flags=re.M)) if listed else set()
    for name, function in specs.items():
        signature = inspect.signature(function)
        if signature.return_annotation not in ("None", None) or any(
            p.annotation is inspect.Parameter.empty for p in signature.parameters.values()
        ):
            gaps.append(f"{name}: its signature is not fully typed (every parameter, and -> None)")
        if not re.search(r"(^|\. )Called\b", inspect.getdoc(function) or "", flags=re.M):
            gaps.append(f"{name}: its docstring has no line saying when it is called ('Called ...')")
        row = f"| `{name}({', '.join(signature.parameters)})` |"
        if row not in guide:
            gaps.append(f"{name}: docs/write-a-plugin.md has no hook-table row {row}")
        if name not in members:
            gaps.append(f"{name}: docs/reference/plugins.md does not list it under ::: assoc.plugins.hookspecs")
    return gaps


def untested_hooks(names: Iterable[str], test_files: Iterable[Path]) -> list[str]:
    """The hooks without a ``test_hook_<hook>`` test that implements the hook (a def of its name inside)."""
    implemented: set[str] = set()
    for path in test_files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_hook_"):
                inner = {n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node}
                implemented |= {name for name in inner if node.name.startswith(f"test_hook_{name}")}
    return [
        f"{name}: no test_hook_{name} test implements and registers it (tests/test_plugin_hooks.py)"
        for name in names
        if name not in implemented
    ]


def test_plugin_hooks_are_documented() -> None:
    specs = hook_specs(hookspecs)
    assert {"register_scorers", "register_analyses", "register_stimuli", "register_commands"} <= set(specs)
    gaps = undocumented_hooks(specs, GUIDE.read_text(encoding="utf-8"), REFERENCE.read_text(encoding="utf-8"))
    assert gaps == [], "\n".join(gaps)


def test_plugin_hooks_have_tests() -> None:
    gaps = untested_hooks(hook_specs(hookspecs), sorted((ROOT / "tests").glob("test_*.py")))
    assert gaps == [], "\n".join(gaps)


def test_the_hook_checks_find_a_planted_hook(tmp_path: Path) -> None:
    """A new hook with no 'Called' line, no docs and only a test of the wrong shape is reported on every count."""
    module = tmp_path / "planted_specs.py"
    module.write_text(
        textwrap.dedent(
            '''
            import pluggy
            PROJECT = "assoc"
            hookspec = pluggy.HookspecMarker(PROJECT)

            @hookspec
            def register_widgets(register: object) -> None:
                """Register widgets."""

            @hookspec
            def register_scorers(register: object) -> None:
                """Register scorer classes. Called once when plugins load."""
            '''
        )
    )
    namespace: dict[str, Any] = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    planted = type("Module", (), namespace)
    specs = hook_specs(planted)
    assert set(specs) == {"register_widgets", "register_scorers"}
    guide = GUIDE.read_text(encoding="utf-8")
    reference = REFERENCE.read_text(encoding="utf-8")
    assert undocumented_hooks(specs, guide, reference) == [
        "register_widgets: its docstring has no line saying when it is called ('Called ...')",
        "register_widgets: docs/write-a-plugin.md has no hook-table row | `register_widgets(register)` |",
        "register_widgets: docs/reference/plugins.md does not list it under ::: assoc.plugins.hookspecs",
    ]
    tests = tmp_path / "test_planted.py"
    tests.write_text(
        "def test_hook_register_widgets():\n    assert True\n"  # named for the hook, implements nothing
        "def test_hook_register_scorers():\n    def register_scorers(register):\n        pass\n"
    )
    assert untested_hooks(specs, [tests]) == [
        "register_widgets: no test_hook_register_widgets test implements and registers it (tests/test_plugin_hooks.py)"
    ]


# -- one test per hook: implement it in a plugin registered in-process, check what it did ----------------

STIMULI = {"target": {"T": ["aa", "b"]}, "attribute": {"A": ["ccc"]}}


@pytest.fixture
def registered(fresh_plugins: None) -> Iterator[Callable[[object], None]]:
    """``registered(plugin)``: register a plugin object in this process; plugins reload after the test."""

    def install(plugin: object) -> None:
        info = plugins.register(plugin, name="hook-test")
        assert info.status == "loaded", info.error

    yield install


class Lengths(assoc.Scorer):
    """len(target) - len(attribute) for each pair."""

    name = "hook_lengths"
    description = "test scorer"
    citation = "none"
    measure = "length_difference"
    requires_models = False
    default_models = ("len",)

    def score(self, stimuli: Any, models: Any, *, progress: bool) -> Any:
        rows = [
            dict(model=m, target_group=tg, target=t, attribute_group=ag, attribute=a, value=len(t) - len(a))
            for m in models
            for design in stimuli
            for tg, t, ag, a in design.word_pairs()
        ]
        return assoc.from_records(rows, scorer=self.name, measure=self.measure)


def test_hook_register_scorers(registered: Callable[[object], None]) -> None:
    class Plugin:
        @assoc.hookimpl
        def register_scorers(self, register: hookspecs.RegisterScorer) -> None:
            register(Lengths)

    registered(Plugin())
    assert assoc.scorers()["hook_lengths"] == "test scorer"
    assert assoc.score("hook_lengths", STIMULI)["value"].tolist() == [-1.0, -2.0]  # 2 - 3, 1 - 3


def test_hook_register_analyses(registered: Callable[[object], None]) -> None:
    class Total(assoc.Analysis):
        name = "hook_total"
        description = "the sum of the values"
        citation = "none"

        def run(self, table: Any) -> Any:
            return table.groupby("model", as_index=False)["value"].sum()

    class Plugin:
        @assoc.hookimpl
        def register_scorers(self, register: hookspecs.RegisterScorer) -> None:
            register(Lengths)

        @assoc.hookimpl
        def register_analyses(self, register: hookspecs.RegisterAnalysis) -> None:
            register(Total)

    registered(Plugin())
    assert "hook_total" in assoc.analyses()
    result = assoc.analyze("hook_total", assoc.score("hook_lengths", STIMULI))
    assert result["value"].tolist() == [-3.0]


def test_hook_register_stimuli(registered: Callable[[object], None], tmp_path: Path) -> None:
    def load(path: str | None = None) -> assoc.Stimuli:
        words = Path(path).read_text().split() if path else ["a", "bb"]
        return assoc.Stimuli.from_dict({"target": {"T": words}, "attribute": {"A": ["c"]}}, name="hook_words")

    class Plugin:
        @assoc.hookimpl
        def register_stimuli(self, register: hookspecs.RegisterStimuli) -> None:
            register("hook_words", load, "two words, or the user's own")

    registered(Plugin())
    assert assoc.stimuli_sets()["hook_words"] == "two words, or the user's own"
    assert list(assoc.Stimuli.load("hook_words").designs[0].target["T"]) == ["a", "bb"]
    own = tmp_path / "words.txt"
    own.write_text("x yy zzz")
    assert list(assoc.Stimuli.load(f"hook_words:{own}").designs[0].target["T"]) == ["x", "yy", "zzz"]


def test_hook_register_executors(
    registered: Callable[[object], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path))  # every unit computed, none from an earlier run
    ran: list[str] = []

    class Recording(assoc.Executor):
        name = "hook_recording"
        description = "this process, recording each unit's key"

        def run(self, scorer: Any, units: Any, *, threads: int | None = None) -> Any:
            worker = assoc.Worker(scorer, threads)
            try:
                for unit in units:
                    ran.append(unit.key)
                    yield worker.run(unit)
            finally:
                worker.close()

    class Units(assoc.Scorer):
        name = "hook_units"
        description = "one unit per target word"
        citation = "none"
        measure = "length_difference"
        requires_models = False
        default_models = ("len",)

        def plan(self, stimuli: Any, models: Any) -> Any:
            pairs = [pair for design in stimuli for pair in design.word_pairs()]
            return [assoc.WorkUnit(f"{m}|{p[1]}", m, [p]) for m in models for p in pairs]

        def load_worker(self, model: str) -> str:
            return model

        def run_unit(self, state: Any, unit: Any) -> Any:
            return [
                {"model": state, "target_group": tg, "target": t, "attribute_group": ag, "attribute": a, "value": 1.0}
                for tg, t, ag, a in unit.payload
            ]

    class Plugin:
        @assoc.hookimpl
        def register_scorers(self, register: hookspecs.RegisterScorer) -> None:
            register(Units)

        @assoc.hookimpl
        def register_executors(self, register: hookspecs.RegisterExecutor) -> None:
            register(Recording)

    registered(Plugin())
    table = assoc.score("hook_units", STIMULI, executor="hook_recording")
    assert ran == ["len|aa", "len|b"] and len(table) == 2
    assert table.attrs["assoc"]["executor"]["name"] == "hook_recording"


def test_hook_register_model_kinds(registered: Callable[[object], None]) -> None:
    from assoc.lm import LanguageModel, LogProb, SentenceRequest, open_model

    class Lengths(LanguageModel):
        """A toy kind: log P(text) = -len(text), for specs written ``lengths:<anything>``."""

        kind, prefix, serves = "lengths", "lengths", frozenset({"sentence"})

        @classmethod
        def open(cls, spec: str, options: Any, cache: Any) -> Lengths:
            model = cls()
            model.name, model.fingerprint = spec, spec
            return model

        def sentence(self, requests: Any, *, checkpoints: Any = None, progress: bool = False) -> list[LogProb]:
            return [LogProb(-float(len(r.text)), len(r.text)) for r in requests]

    class Plugin:
        @assoc.hookimpl
        def register_model_kinds(self, register: hookspecs.RegisterModelKind) -> None:
            register(Lengths)

    registered(Plugin())
    assert assoc.plugins.model_kinds()["lengths"] is Lengths
    with open_model("lengths:toy") as model:  # the one loader finds the kind by its prefix
        assert [a.value for a in model.sentence([SentenceRequest("abc")])] == [-3.0]


def test_hook_register_benchmarks(registered: Callable[[object], None], tmp_path: Path) -> None:
    class Total(assoc.Analysis):
        name = "hook_bench_total"
        description = "the sum of the values"
        citation = "none"
        estimate_column = "value"

        def run(self, table: Any) -> Any:
            return table.groupby("model", as_index=False)["value"].sum()

    class Plugin:
        @assoc.hookimpl
        def register_scorers(self, register: hookspecs.RegisterScorer) -> None:
            register(Lengths)

        @assoc.hookimpl
        def register_analyses(self, register: hookspecs.RegisterAnalysis) -> None:
            register(Total)

        @assoc.hookimpl
        def register_stimuli(self, register: hookspecs.RegisterStimuli) -> None:
            register("hook_bench_words", lambda: assoc.Stimuli.from_dict(STIMULI, name="hook_bench_words"), "")

        @assoc.hookimpl
        def register_benchmarks(self, register: hookspecs.RegisterBenchmark) -> None:
            register(assoc.Benchmark("hook_bench", "hook_lengths", "hook_bench_words", "hook_bench_total", "lengths"))

    registered(Plugin())
    assert assoc.benchmarks()["hook_bench"] == "lengths"
    from assoc.benchmark.run import request_kinds

    assert request_kinds(assoc.plugins.get_benchmark("hook_bench")) == ()  # its scorer sends no request kind
    done = assoc.run_benchmarks(["len"], ["hook_bench"], out=tmp_path / "run", progress=False, report=False)
    summary = done.summary[["benchmark", "model", "value", "status"]]
    assert summary.values.tolist() == [["hook_bench", "len", -3.0, "ok"]]
    assert (tmp_path / "run" / "tables" / "hook_bench.parquet").is_file()


def test_hook_register_commands(registered: Callable[[object], None]) -> None:
    class Plugin:
        @assoc.hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.group("hooktest")
            def group() -> None:
                """The plugin's commands."""

            @group.command("hello")
            @click.argument("name")
            def hello(name: str) -> None:
                click.echo(f"hello {name}")

    registered(Plugin())
    top = click.Group("assoc")
    plugins.registry().register_commands(top)
    result = CliRunner().invoke(top, ["hooktest", "hello", "there"])
    assert result.exit_code == 0 and result.output == "hello there\n"
