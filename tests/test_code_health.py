"""Conventions the linters cannot see: the public names, typed hooks and shipped type information."""

from __future__ import annotations

import importlib
import inspect
import typing
from importlib import resources

import assoc
from assoc import hookspecs


def test_all_lists_exactly_the_lazy_names():
    assert set(assoc.__all__) == {"__version__", "hookimpl", *assoc._LAZY}
    for name in assoc.__all__:
        assert getattr(assoc, name) is not None


def test_every_installed_plugin_ships_py_typed():
    for package in ("assoc", "assoc_fmat", "assoc_pll", "assoc_weat", "assoc_example"):
        assert resources.files(package).joinpath("py.typed").is_file(), package


def test_register_callables_are_protocols_used_by_the_hookspecs():
    for protocol in (hookspecs.RegisterScorer, hookspecs.RegisterAnalysis, hookspecs.RegisterStimuli):
        assert getattr(protocol, "_is_protocol", False)
    hints = {name: typing.get_type_hints(getattr(hookspecs, name), vars(hookspecs) | {
        "Scorer": object, "Analysis": object, "Stimuli": object, "click": object})
        for name in ("register_scorers", "register_analyses", "register_stimuli")}
    assert hints["register_scorers"]["register"] is hookspecs.RegisterScorer
    assert hints["register_analyses"]["register"] is hookspecs.RegisterAnalysis
    assert hints["register_stimuli"]["register"] is hookspecs.RegisterStimuli


def test_hook_implementations_are_annotated():
    for module_name in ("assoc.builtin", "assoc_fmat.plugin", "assoc_pll.plugin", "assoc_weat.plugin"):
        module = importlib.import_module(module_name)
        for name in ("register_scorers", "register_analyses", "register_stimuli", "register_commands"):
            function = getattr(module, name, None)
            if function is None:
                continue
            signature = inspect.signature(function)
            assert signature.return_annotation == "None", (module_name, name)
            for parameter in signature.parameters.values():
                assert parameter.annotation is not inspect.Parameter.empty, (module_name, name, parameter.name)
