"""Contracts between the core's layers that a review found broken (issue 21, item 4)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import assoc
from assoc.errors import PluginError
from assoc.stimuli import Stimuli

ROOT = Path(__file__).resolve().parents[1]
STIMULI = {
    "target": {"Flowers": ["rose", "tulip"], "Insects": ["ant", "wasp"]},
    "attribute": {"Pleasant": ["love", "peace"], "Unpleasant": ["hate", "war"]},
}


# -- Analysis.run is abstract, and the base class enforces it ------------------------------------------


class _NoRun(assoc.Analysis):
    name = "no_run"
    description = "forgets to implement run()"


class _WithRun(assoc.Analysis):
    name = "with_run"
    description = "implements run()"

    def run(self, table):  # type: ignore[no-untyped-def]
        return table


def test_an_analysis_without_run_cannot_be_created() -> None:
    with pytest.raises(TypeError, match="abstract.*run"):
        _NoRun()
    assert _WithRun().run("x") == "x"


def test_a_plugin_registering_an_analysis_without_run_is_reported_failed(fresh_plugins: None) -> None:
    class Plugin:
        @staticmethod
        @assoc.hookimpl
        def register_analyses(register):  # type: ignore[no-untyped-def]
            register(_NoRun)

    assoc.plugins.register(Plugin(), name="forgetful")
    info = assoc.plugins.registry().infos["forgetful"]
    assert info.status == "failed" and "no_run" in info.error and "run" in info.error
    with pytest.raises(assoc.UnknownNameError):
        assoc.get_analysis("no_run")


# -- the stimuli's citation reaches to_dict, provenance and cite() ---------------------------------------


@pytest.mark.usefixtures("example_plugin")
def test_stimuli_meta_survives_to_dict_and_reaches_cite() -> None:
    source = {"name": "mine", "citation": "Doe (2020). My words.", "meta": {"year": 2020}, "designs": [STIMULI]}
    stimuli = Stimuli.from_dict(source)
    data = stimuli.to_dict()
    assert data["meta"] == {"year": 2020, "citation": "Doe (2020). My words."}
    assert Stimuli.from_dict(data).meta == stimuli.meta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("char_ngram", stimuli, ["char-3gram"])
    assert table.assoc.provenance["stimuli_meta"] == {"year": 2020, "citation": "Doe (2020). My words."}
    scorer_citation = assoc.get_scorer("char_ngram").citation
    assert list(table.assoc.cite()) == [scorer_citation, "Doe (2020). My words."]
    result = assoc.analyze("effect_size", table, n_bootstrap=0)
    assert list(result.assoc.cite()) == [
        scorer_citation,
        "Doe (2020). My words.",
        assoc.get_analysis("effect_size").citation,
    ]


@pytest.mark.usefixtures("example_plugin")
def test_a_bundled_sets_citation_is_cited() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("char_ngram", "caliskan:weat1", ["char-3gram"])
    cited = list(table.assoc.cite())
    assert len(cited) == 2 and "Caliskan" in cited[1] and "Semantics derived automatically" in cited[1]


def test_bound_stimuli_keep_every_citation() -> None:
    one = Stimuli.from_dict({"citation": "A (2001).", "designs": [{"name": "d1", **STIMULI}]})
    two = Stimuli.from_dict({"citation": "B (2002).", "designs": [{"name": "d2", **STIMULI}]})
    assert one.bind(two).meta["citation"] == ["A (2001).", "B (2002)."]
    same_source = Stimuli.from_dict({"citation": "A (2001).", "designs": [{"name": "d3", **STIMULI}]})
    assert one.bind(same_source).meta["citation"] == "A (2001)."
    assert one.select(["d1"]).meta == one.meta


# -- one spelling of the run-report key ------------------------------------------------------------------


def test_the_run_report_key_has_one_spelling() -> None:
    from assoc.scoring.output import RUN_REPORT_KEY

    literal = re.compile(r"""["']""" + re.escape(RUN_REPORT_KEY) + r"""["']""")
    found = []
    for path in [*ROOT.joinpath("src").rglob("*.py"), *ROOT.joinpath("plugins").glob("*/src/**/*.py")]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if literal.search(line) and "RUN_REPORT_KEY =" not in line:
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert found == [], f"spell the run-report key as assoc.scoring.output.RUN_REPORT_KEY: {found}"


def test_a_run_report_reaches_provenance(fresh_plugins: None) -> None:
    from assoc.scoring.output import set_run_report
    from assoc.table import from_records

    class Reporting(assoc.Scorer):
        name = "reporting"
        description = "reports its run"
        measure = "m"
        requires_models = False

        def score(self, stimuli, models, *, progress):  # type: ignore[no-untyped-def]
            rows = [dict(target_group=tg, target=t, attribute_group=ag, attribute=a, value=1.0)
                    for d in stimuli for tg, t, ag, a in d.word_pairs()]  # fmt: skip
            return set_run_report(from_records(rows, scorer=self.name, measure=self.measure), {"requests": 3})

    class Plugin:
        @staticmethod
        @assoc.hookimpl
        def register_scorers(register):  # type: ignore[no-untyped-def]
            register(Reporting)

    assoc.plugins.register(Plugin(), name="reporting-plugin")
    table = assoc.score("reporting", STIMULI)
    assert table.assoc.provenance["run"] == {"requests": 3}
    with pytest.raises(PluginError, match="JSON"):
        set_run_report(table, {"bad": object()})


# -- registering in-process, explicitly, once -------------------------------------------------------------


@pytest.mark.slow
def test_importing_assoc_has_no_hidden_registrations() -> None:
    """The bundle resolver and the accessor are registered by ``assoc/__init__`` and nowhere else."""
    code = (
        "import assoc.stimuli.sets as m, assoc\n"
        "assert m._bundle_resolver is not None\n"
        "import pandas as pd\n"
        "assert hasattr(pd.DataFrame, 'assoc'), 'accessor missing after pandas import'\n"
        "from assoc.table.provenance import set_provenance\n"
        "import inspect\n"
        "assert 'register' not in inspect.getsource(set_provenance)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    code_pandas_first = "import pandas as pd, assoc\nassert hasattr(pd.DataFrame, 'assoc')\n"
    result = subprocess.run([sys.executable, "-c", code_pandas_first], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.docs("docs/write-a-plugin.md", "python", section="## Register a plugin in-process")
def test_the_in_process_registration_example_of_the_plugin_guide_runs(fresh_plugins: None) -> None:
    from assoc.testing.docs import code_blocks, run_blocks

    blocks = code_blocks(ROOT / "docs" / "write-a-plugin.md", section="## Register a plugin in-process")
    assert len(blocks) == 1
    run_blocks(blocks, name="write-a-plugin.md, Register a plugin in-process")


def test_register_and_unregister_rejudge_clashes(fresh_plugins: None) -> None:
    class One(assoc.Analysis):
        name = "shared_name"

        def run(self, table):  # type: ignore[no-untyped-def]
            return table

    class Two(One):
        pass

    def plugin_of(cls):  # type: ignore[no-untyped-def]
        class Plugin:
            @assoc.hookimpl
            def register_analyses(self, register):  # type: ignore[no-untyped-def]
                register(cls)

        return Plugin()

    assoc.plugins.register(plugin_of(One), name="one")
    assert assoc.get_analysis("shared_name") is One
    assoc.plugins.register(plugin_of(Two), name="two")
    with pytest.raises(PluginError, match="registered by both plugin 'one' and plugin 'two'"):
        assoc.get_analysis("shared_name")
    with pytest.raises(PluginError, match="already registered"):
        assoc.plugins.register(plugin_of(One), name="one")
    assoc.plugins.unregister("one")
    assert assoc.get_analysis("shared_name") is Two
    assert "one" not in assoc.plugins.registry().infos
    assoc.plugins.reset()
    with pytest.raises(assoc.UnknownNameError):
        assoc.get_analysis("shared_name")


# -- one dispatcher -------------------------------------------------------------------------------------


def test_the_driver_is_the_one_place_that_runs_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit scorer's own ``score`` does not run its units (the scoring layer knows no executors)."""
    from assoc.executors.driver import run_scorer

    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    from unit_scorers import LengthUnits

    scorer = LengthUnits(cache=False)
    stimuli = Stimuli.load(STIMULI)
    with pytest.raises(NotImplementedError, match="describes its work as units.*run_scorer"):
        scorer.score(stimuli, ["len"], progress=False)
    table, record = run_scorer(scorer, stimuli, ["len"])
    assert record.pop("threads")["requested"] is None  # what torch used is tested in test_threads.py
    assert record == {"name": "local", "units": 8, "units_from_cache": 0}
    rose_love = table[(table.target == "rose") & (table.attribute == "love")]
    assert rose_love["value"].item() == len("rose") - len("love")
    assert len(table) == 16
