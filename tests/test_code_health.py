"""Conventions the linters cannot see: the public names, typed hooks and shipped type information."""

from __future__ import annotations

import importlib
import inspect
import typing
from importlib import resources
from pathlib import Path

import pytest

import assoc
from assoc.plugins import hookspecs as hookspecs

# -- package faces: each public name declared once (issue 41 item 6) ------------------------------------

ROOT = Path(__file__).resolve().parents[1]
#: Faces that do not follow the rule (none: the language-model layer's moved onto public_face when it landed).
FACES_NOT_YET_MOVED: set[str] = set()
_FACE_CALL = "__getattr__, __dir__ = _public_face(globals())"


def face_problems(path: Path, package: str) -> list[str]:
    """What breaks the rule in the face ``path`` of ``package``: each public name is declared once, by its import.

    A face declares a name by importing it as itself (``from m import x as x``, at its top level,
    or under ``if TYPE_CHECKING:`` for a name imported on first use), imports its own helpers under
    a private name (``as _x``), keeps no list of its names (``__all__``, ``_LAZY``: they are made
    from the imports) and ends with ``__getattr__, __dir__ = _public_face(globals())``. Checked
    from the source, then by importing the face: ``__all__`` is what the imports declare, and
    every name in it resolves.
    """
    import ast

    source = path.read_text(encoding="utf-8")
    found: list[str] = []
    declared: list[str] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                visit(node.body)
            elif isinstance(node, ast.ImportFrom) and node.module in ("__future__", "typing"):
                continue
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname is None:
                        found.append(
                            f"{package}: imports {alias.name} without declaring it: `{alias.name} as {alias.name}` "
                            f"makes it public, `as _{alias.name}` a helper of the face"
                        )
                    elif not alias.asname.startswith("_") or alias.asname.startswith("__"):
                        declared.append(alias.asname)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if getattr(target, "id", "") in ("__all__", "_LAZY"):
                        found.append(f"{package}: writes its names again in {target.id} (declare each by its import)")

    visit(ast.parse(source).body)
    if declared and _FACE_CALL not in source:
        found.append(f"{package}: declares names but does not end with `{_FACE_CALL}`")
    if found or not declared:
        return found
    face = importlib.import_module(package)
    if list(face.__all__) != declared:
        found.append(f"{package}: __all__ is {face.__all__}, its imports declare {declared}")
    for name in declared:
        try:
            getattr(face, name)
        except (AttributeError, ImportError) as error:
            found.append(f"{package}.{name} does not resolve: {error}")
    return found


def _faces() -> list[tuple[Path, str]]:
    src = ROOT / "src"
    found = []
    for path in sorted((src / "assoc").rglob("__init__.py")):
        package = ".".join(path.parent.relative_to(src).parts)
        if package not in FACES_NOT_YET_MOVED:
            found.append((path, package))
    return found


def test_every_package_face_declares_each_name_once():
    faces = dict((package, path) for path, package in _faces())
    assert {"assoc", "assoc.stats", "assoc.infra", "assoc.table", "assoc.testing"} <= set(faces)
    problems = [problem for package, path in faces.items() for problem in face_problems(path, package)]
    assert problems == [], "\n".join(problems)
    assert {"__version__", "hookimpl", "score", "Scorer", "OptionError"} <= set(assoc.__all__)


def test_the_face_check_finds_names_that_drift(tmp_path, monkeypatch):
    """The checker itself, on a planted face: a second list, an undeclared import, a lazy name that does not exist."""
    import sys

    package = tmp_path / "plantedface"
    package.mkdir()
    (package / "impl.py").write_text("A = 1\nB = 2\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from assoc.infra.importhooks import public_face as _public_face\n"
        "from plantedface.impl import A as A\n"
        "from plantedface.impl import B\n"
        "__all__ = ['A', 'B']\n"
        f"{_FACE_CALL}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = face_problems(package / "__init__.py", "plantedface")
    assert any("imports B without declaring it" in p for p in problems), problems
    assert any("writes its names again in __all__" in p for p in problems), problems
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from assoc.infra.importhooks import public_face as _public_face\n"
        "from plantedface.impl import A as A\n"
        "if TYPE_CHECKING:\n"
        "    from plantedface.impl import B as B\n"
        "    from plantedface.impl import C as C\n"
        f"{_FACE_CALL}\n"
    )
    monkeypatch.delitem(sys.modules, "plantedface", raising=False)
    assert face_problems(package / "__init__.py", "plantedface") == [
        "plantedface.C does not resolve: module 'plantedface.impl' has no attribute 'C'"
    ]
    (package / "__init__.py").write_text("from plantedface.impl import A as A\n")
    assert face_problems(package / "__init__.py", "plantedface") == [
        f"plantedface: declares names but does not end with `{_FACE_CALL}`"
    ]


def test_a_face_imports_its_lazy_names_on_first_use(tmp_path, monkeypatch):
    import sys

    package = tmp_path / "lazyface"
    package.mkdir()
    (package / "heavy.py").write_text("def work():\n    return 42\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from assoc.infra.importhooks import public_face as _public_face\n"
        "if TYPE_CHECKING:\n"
        "    from .heavy import work as work\n"
        f"{_FACE_CALL}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    face = importlib.import_module("lazyface")
    assert "lazyface.heavy" not in sys.modules and "work" in dir(face)
    namespace: dict[str, object] = {}
    exec("from lazyface import *", namespace)
    assert namespace["work"]() == 42 and face.__all__ == ["work"]
    with pytest.raises(AttributeError, match="no attribute 'other'"):
        face.other  # noqa: B018


def _plugin_modules() -> list[str]:
    from importlib import metadata

    return sorted({ep.value for ep in metadata.entry_points(group="assoc")})


def test_every_installed_plugin_ships_py_typed():
    packages = {"assoc", *(module.split(".")[0] for module in _plugin_modules())}
    assert {"assoc_fmat", "assoc_pll", "assoc_weat"} <= packages  # the example: tests/test_example_plugin.py
    for package in packages:
        assert resources.files(package).joinpath("py.typed").is_file(), package


def test_register_callables_are_protocols_used_by_the_hookspecs():
    for protocol in (hookspecs.RegisterScorer, hookspecs.RegisterAnalysis, hookspecs.RegisterStimuli):
        assert getattr(protocol, "_is_protocol", False)
    hints = {
        name: typing.get_type_hints(
            getattr(hookspecs, name),
            vars(hookspecs) | {"Scorer": object, "Analysis": object, "Stimuli": object, "click": object},
        )
        for name in ("register_scorers", "register_analyses", "register_stimuli")
    }
    assert hints["register_scorers"]["register"] is hookspecs.RegisterScorer
    assert hints["register_analyses"]["register"] is hookspecs.RegisterAnalysis
    assert hints["register_stimuli"]["register"] is hookspecs.RegisterStimuli


def test_hook_implementations_are_annotated():
    for module_name in ("assoc.plugins.builtin", *_plugin_modules()):
        module = importlib.import_module(module_name)
        for name in (n for n, spec in vars(hookspecs).items() if hasattr(spec, f"{hookspecs.PROJECT}_spec")):
            function = getattr(module, name, None)
            if function is None:
                continue
            signature = inspect.signature(function)
            assert signature.return_annotation == "None", (module_name, name)
            for parameter in signature.parameters.values():
                assert parameter.annotation is not inspect.Parameter.empty, (module_name, name, parameter.name)


def _run_pytest(directory, strict: bool | str, *args: str):
    """pytest on ``directory`` in a fresh process: ``strict`` True sets ASSOC_STRICT_SKIPS=1, "ci" sets CI=true."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("ASSOC_STRICT_SKIPS", "CI")}
    if strict == "ci":
        env["CI"] = "true"
    elif strict:
        env["ASSOC_STRICT_SKIPS"] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "assoc.devtools.strict_skips",
            "-p",
            "no:cacheprovider",
            *args,
            str(directory),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=directory if directory.is_dir() else directory.parent,
        timeout=120,
    )


@pytest.mark.slow
def test_missing_oracle_fails_in_ci_and_skips_elsewhere(tmp_path):
    (tmp_path / "test_oracle.py").write_text(
        "import pytest\n"
        "def test_needs_oracle():\n"
        "    pytest.importorskip('no_such_oracle_module')\n"
        "def test_skip_of_what_ci_cannot_have():\n"
        "    from assoc.devtools.strict_skips import skip_unavailable_to_ci\n"
        "    skip_unavailable_to_ci('no licence')\n"
    )
    (tmp_path / "test_module_oracle.py").write_text(
        "import pytest\npytest.importorskip('no_such_oracle_module')\ndef test_x():\n    pass\n"
    )
    relaxed = _run_pytest(tmp_path, strict=False)
    assert relaxed.returncode == 0, relaxed.stdout
    assert "3 skipped" in relaxed.stdout
    strict = _run_pytest(tmp_path, strict=True)
    assert strict.returncode != 0
    assert "no_such_oracle_module" in strict.stdout and "ASSOC_STRICT_SKIPS" in strict.stdout
    strict_inside = _run_pytest(tmp_path / "test_oracle.py", strict=True)
    assert "1 failed, 1 skipped" in strict_inside.stdout, strict_inside.stdout


@pytest.mark.slow
def test_a_missing_oracle_with_a_reason_of_its_own_fails_in_ci_too(tmp_path):
    """importorskip(..., reason=...) words the skip its own way: still a missing module, still a failure in CI."""
    (tmp_path / "test_module_reason.py").write_text(
        "import pytest\n"
        "pytest.importorskip('no_such_oracle_module', reason='the oracle extra (pip install x[oracle])')\n"
        "def test_x():\n    pass\n"
    )
    (tmp_path / "test_inside_reason.py").write_text(
        "import pytest\n"
        "def test_needs_oracle():\n"
        "    pytest.importorskip('no_such_oracle_module', reason='the oracle extra')\n"
        "def test_needs_plugin():\n"
        "    pytest.importorskip('assoc_not_installed_plugin', reason='the plugin is optional')\n"
        "def test_explicit_skip():\n"
        "    from assoc.devtools.strict_skips import skip_unavailable_to_ci\n"
        "    skip_unavailable_to_ci('could not import the weather today')\n"
    )
    relaxed = _run_pytest(tmp_path, strict=False)
    assert relaxed.returncode == 0 and "4 skipped" in relaxed.stdout, relaxed.stdout
    module = _run_pytest(tmp_path / "test_module_reason.py", strict=True)
    assert module.returncode != 0 and "1 error" in module.stdout, module.stdout
    assert "could not import 'no_such_oracle_module' (the oracle extra" in module.stdout
    inside = _run_pytest(tmp_path / "test_inside_reason.py", strict=True)
    assert "1 failed, 2 skipped" in inside.stdout, inside.stdout
    assert "could not import 'no_such_oracle_module' (the oracle extra)" in inside.stdout


@pytest.mark.slow
def test_a_missing_reference_ci_has_fails_under_ci_instead_of_skipping(tmp_path):
    """Planted: a skip of a reference CI has (explicit, skipif, module level) fails with CI=true.

    What CI cannot have (skip_unavailable_to_ci) and a missing plugin package still skip.
    """
    (tmp_path / "test_references.py").write_text(
        "import pytest\n"
        "from assoc.devtools.strict_skips import skip_unavailable_to_ci\n"
        "def test_frozen_output():\n"
        "    pytest.skip('../shared/benchmarks/x is not beside the repository')\n"
        "@pytest.mark.skipif(True, reason='the frozen output is missing')\n"
        "def test_marked():\n"
        "    pass\n"
        "def test_licensed_data():\n"
        '    skip_unavailable_to_ci("SADCAT\'s .rda files have no licence: set ASSOC_SADCAT_DICTIONARIES")\n'
        "def test_plugin():\n"
        "    pytest.importorskip('assoc_not_installed_plugin')\n"
    )
    (tmp_path / "test_module_reference.py").write_text(
        "import pytest\npytest.skip('the shared folder is missing', allow_module_level=True)\ndef test_x():\n    pass\n"
    )
    relaxed = _run_pytest(tmp_path, strict=False)
    assert relaxed.returncode == 0 and "5 skipped" in relaxed.stdout, relaxed.stdout
    ci = _run_pytest(tmp_path, "ci", "-rs", "--continue-on-collection-errors")
    assert ci.returncode != 0, ci.stdout
    assert "1 failed, 2 skipped, 2 errors" in ci.stdout, ci.stdout  # a skipif fails the test's setup
    assert "test_frozen_output _" in ci.stdout and "ERROR at setup of test_marked" in ci.stdout
    assert "ERROR collecting test_module_reference.py" in ci.stdout
    assert "test_references.py:9: unavailable to CI" in ci.stdout  # the skip's own line, not the helper's
    assert "unavailable to CI: SADCAT's .rda files have no licence" in ci.stdout
    assert "CI=true) is set: a missing reference" in ci.stdout
    strict = _run_pytest(tmp_path, True, "--continue-on-collection-errors")  # ASSOC_STRICT_SKIPS=1: the same
    assert "1 failed, 2 skipped, 2 errors" in strict.stdout, strict.stdout


def test_ci_makes_skips_strict_unless_assoc_strict_skips_says_otherwise(monkeypatch):
    from assoc.devtools.strict_skips import strict

    monkeypatch.delenv("ASSOC_STRICT_SKIPS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert not strict()
    monkeypatch.setenv("CI", "true")
    assert strict()
    monkeypatch.setenv("ASSOC_STRICT_SKIPS", "0")
    assert not strict()
    monkeypatch.setenv("ASSOC_STRICT_SKIPS", "1")
    monkeypatch.delenv("CI")
    assert strict()


def test_the_fast_budget_flags_only_unmarked_tests_over_three_times_the_budget():
    from types import SimpleNamespace

    from assoc.devtools.fast_budget import over_budget

    def report(nodeid, when, duration, *markers):
        return SimpleNamespace(
            nodeid=nodeid, when=when, duration=duration, keywords={nodeid: 1, **dict.fromkeys(markers, 1)}
        )

    reports = [
        report("t.py::fast", "call", 4.9),
        report("t.py::over_the_budget_within_the_margin", "call", 14.9),
        report("t.py::far_over", "call", 15.1),
        report("t.py::far_over_in_its_fixture", "setup", 30.0),
        report("t.py::marked", "call", 60.0, "slow"),
    ]
    assert over_budget(reports, budget=5) == [
        ("t.py::far_over", "call", 15.1),
        ("t.py::far_over_in_its_fixture", "setup", 30.0),
    ]


@pytest.mark.slow
def test_a_run_with_an_unmarked_test_over_the_budget_fails(tmp_path):
    """Planted: an unmarked test sleeping past 3 x a tiny budget fails the run; the same test marked slow does not."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    (tmp_path / "test_budget.py").write_text(
        "import time\n"
        "import pytest\n"
        "def test_quick():\n"
        "    pass\n"
        "def test_unmarked():\n"
        "    time.sleep(0.4)\n"  # at least 0.4 s, whatever the machine: over 3 x 0.1 s
        "@pytest.mark.slow\n"
        "def test_marked():\n"
        "    time.sleep(0.4)\n"
    )
    over = _run_pytest(tmp_path, False, "-p", "assoc.devtools.fast_budget", "--fast-budget=0.1")
    assert over.returncode == 1 and "3 passed" in over.stdout, over.stdout
    assert "took more than 3 x the 0.1 s budget" in over.stdout
    assert "test_budget.py::test_unmarked" in over.stdout and "test_budget.py::test_marked" not in over.stdout
    unchecked = _run_pytest(tmp_path, False, "-p", "assoc.devtools.fast_budget")
    assert unchecked.returncode == 0 and "3 passed" in unchecked.stdout, unchecked.stdout


def test_one_out_of_vocabulary_warning_class():
    import assoc_weat.scorer

    import assoc.lm.masked.words

    assert assoc_weat.scorer.OutOfVocabularyWarning is assoc.OutOfVocabularyWarning
    assert assoc.lm.masked.words.OutOfVocabularyWarning is assoc.OutOfVocabularyWarning


def test_one_dtypes_list():
    from assoc.lm import identity, options

    assert options.DTYPES is identity.DTYPES


def test_plugin_data_files_go_through_read_data_file(tmp_path):
    """norms, prior counts and human choices read .tsv and .parquet like every other user table."""
    import pandas as pd
    from assoc_pll.posterior import read_choices
    from assoc_pll.prior import read_counts
    from assoc_weat.norms import load_norms_csv

    norms = pd.DataFrame({"word": ["love", "NA", "war"], "valence": ["8.0", "5.0", "2.0"]})
    norms.to_csv(tmp_path / "norms.tsv", sep="\t", index=False)
    loaded = load_norms_csv(tmp_path / "norms.tsv")
    assert loaded.values == {"love": 8.0, "NA": 5.0, "war": 2.0}
    pd.DataFrame({"variant": ["firefighter", "fireman"], "count": [3.0, 1.0]}).to_parquet(tmp_path / "c.parquet")
    assert read_counts(tmp_path / "c.parquet") == {"firefighter": 3.0, "fireman": 1.0}
    choices = pd.DataFrame({"design": ["fire", "fire"], "mask": ["firefighter", "fireman"], "count": [3, 1]})
    choices.to_csv(tmp_path / "choices.tsv", sep="\t", index=False)
    read = read_choices(tmp_path / "choices.tsv")
    assert list(read["mask"]) == ["firefighter", "fireman"]


def _small_table():
    import numpy as np

    from assoc.table.schema import from_records

    rng = np.random.default_rng(0)
    rows = [
        {
            "model": model,
            "target_group": group,
            "target": f"{group}{i}",
            "attribute_group": attribute_group,
            "attribute": attribute_group.lower(),
            "value": float(rng.normal()),
        }
        for model in ("m1", "m2", "m3")
        for group in ("X", "Y")
        for i in range(4)
        for attribute_group in ("A", "B")
    ]
    return from_records(rows, scorer="fake", measure="cosine")


def test_every_analysis_result_has_the_canonical_estimate_column():
    table = _small_table()
    runs = {
        "icc": ("icc", {}),
        "alpha": ("alpha", {"item": "target", "by": ["model"]}),
        "effect_size": ("d", {"n_bootstrap": 0, "within": ["model"]}),
        "weat": ("effect_size", {}),
        "wefat": ("effect_size", {}),
    }
    # analyses that name their main number estimate themselves, or return association tables, are not listed;
    # every registered analysis either declares estimate_column or is one of those
    declared = {name for name in assoc.analyses() if assoc.get_analysis(name).estimate_column}
    assert {
        "icc",
        "alpha",
        "effect_size",
        "correlate",
        "correlation_table",
        "weat",
        "wefat",
        "valnorm",
        "posterior",
        "loglik",
    } <= declared
    for name, (column, options) in runs.items():
        result = assoc.analyze(name, table, **options)
        assert "estimate" in result.columns, name
        assert result["estimate"].equals(result[column]), name
        assert list(result.columns).index("estimate") == list(result.columns).index(column) - 1


def test_options_are_keyword_parameters_for_help_and_ides():
    import pydoc

    icc = assoc.get_analysis("icc")
    signature = inspect.signature(icc)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
    assert signature.parameters["confidence"].default == 0.95
    assert signature.parameters["confidence"].annotation is float
    text = pydoc.render_doc(icc, renderer=pydoc.plaintext)
    assert "confidence: float = 0.95" in text and "Parameters" in text
    valnorm = inspect.signature(assoc.get_analysis("valnorm"))
    assert valnorm.parameters["norms"].default is inspect.Parameter.empty  # required
    for name in assoc.scorers():
        scorer = assoc.get_scorer(name)
        assert list(inspect.signature(scorer).parameters) == [o.name for o in scorer.options]


def test_renamed_scorer_options_keep_their_old_spelling():
    import pytest

    fmat, pll = assoc.get_scorer("fmat"), assoc.get_scorer("pll")
    with pytest.warns(
        DeprecationWarning, match="'tokens' of scorer 'fmat' is deprecated: it is now called 'token_overrides'"
    ):
        scorer = fmat(tokens={"He": "He"})
    assert scorer.params["token_overrides"] == {"He": "He"}
    with pytest.warns(DeprecationWarning, match="now called 'tokens_scored'"):
        assert pll(tokens="context").params["tokens_scored"] == "context"
    with pytest.warns(DeprecationWarning, match="now called 'confidence'"):
        assert assoc.get_analysis("valnorm")(norms="warriner", level=0.9).params["confidence"] == 0.9


@pytest.mark.slow
def test_a_missing_plugin_package_still_skips_in_ci(tmp_path):
    (tmp_path / "test_plugin.py").write_text(
        "import pytest\ndef test_needs_plugin():\n    pytest.importorskip('assoc_not_installed_plugin')\n"
    )
    strict = _run_pytest(tmp_path, strict=True)
    assert strict.returncode == 0 and "1 skipped" in strict.stdout, strict.stdout
