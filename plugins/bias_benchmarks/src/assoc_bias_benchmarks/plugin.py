"""assoc plugin entry point of assoc-bias-benchmarks.

Each benchmark subpackage named in :data:`BENCHMARKS` has a module ``registry`` with three tuples:
``SCORERS`` and ``ANALYSES`` ("module:Class" texts, imported when assoc registers them) and ``STIMULI``
(``(name, "module:loader", description)``). The hooks here register them all; nothing heavy is imported
until a scorer runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli

#: The benchmark subpackages, in the order ``assoc scorers`` lists them.
BENCHMARKS: tuple[str, ...] = (
    "bbq",
    "crows_pairs",
    "matched_guise",
    "stereoset",
    "winogender",
    "winobias",
    "holistic_bias",
    "discrim_eval",
)


def _registry(benchmark: str) -> Any:
    return import_module(f"assoc_bias_benchmarks.{benchmark}.registry")


def _resolve(where: str) -> Any:
    module, _, name = where.partition(":")
    return getattr(import_module(f"assoc_bias_benchmarks.{module}"), name)


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register every benchmark's scorer(s)."""
    for benchmark in BENCHMARKS:
        for where in _registry(benchmark).SCORERS:
            register(_resolve(where))


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register every benchmark's analyses."""
    for benchmark in BENCHMARKS:
        for where in _registry(benchmark).ANALYSES:
            register(_resolve(where))


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register every benchmark's bundled stimuli."""
    for benchmark in BENCHMARKS:
        for name, where, description in _registry(benchmark).STIMULI:
            register(name, _resolve(where), description)
