"""Conventions the linters cannot see: the public names, typed hooks and shipped type information."""

from __future__ import annotations

import importlib
import inspect
import typing
from importlib import resources

import pytest

import assoc
from assoc.plugins import hookspecs as hookspecs


def test_all_lists_exactly_the_lazy_names():
    assert set(assoc.__all__) == {"__version__", "hookimpl", *assoc._LAZY}
    for name in assoc.__all__:
        assert getattr(assoc, name) is not None


def _plugin_modules() -> list[str]:
    from importlib import metadata

    return sorted({ep.value for ep in metadata.entry_points(group="assoc")})


def test_every_installed_plugin_ships_py_typed():
    packages = {"assoc", *(module.split(".")[0] for module in _plugin_modules())}
    assert {"assoc_fmat", "assoc_pll", "assoc_weat", "assoc_example"} <= packages
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
        for name in ("register_scorers", "register_analyses", "register_stimuli", "register_commands"):
            function = getattr(module, name, None)
            if function is None:
                continue
            signature = inspect.signature(function)
            assert signature.return_annotation == "None", (module_name, name)
            for parameter in signature.parameters.values():
                assert parameter.annotation is not inspect.Parameter.empty, (module_name, name, parameter.name)


def _run_pytest(directory, strict: bool):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ASSOC_STRICT_SKIPS"}
    if strict:
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
        "def test_explicit_skip():\n"
        "    pytest.skip('not applicable')\n"
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
        "    pytest.skip('could not import the weather today')\n"
    )
    relaxed = _run_pytest(tmp_path, strict=False)
    assert relaxed.returncode == 0 and "4 skipped" in relaxed.stdout, relaxed.stdout
    module = _run_pytest(tmp_path / "test_module_reason.py", strict=True)
    assert module.returncode != 0 and "1 error" in module.stdout, module.stdout
    assert "could not import 'no_such_oracle_module' (the oracle extra" in module.stdout
    inside = _run_pytest(tmp_path / "test_inside_reason.py", strict=True)
    assert "1 failed, 2 skipped" in inside.stdout, inside.stdout
    assert "could not import 'no_such_oracle_module' (the oracle extra)" in inside.stdout


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
