"""assoc plugin entry point of assoc-bias-benchmarks.

Each benchmark subpackage named in :data:`BENCHMARKS` has a module ``registry`` with three tuples:
``SCORERS`` and ``ANALYSES`` ("module:Class" texts, imported when assoc registers them) and ``STIMULI``
(``(name, "module:loader", description)``), and may declare ``BENCHMARK``: the fields of the
:class:`assoc.Benchmark` that ``assoc benchmark run`` runs (its scorer, default stimuli and analysis, by their
registered names). A subpackage with a scorer and no ``BENCHMARK`` is the benchmark its names make
(:func:`declared`). The hooks here register them all; nothing heavy is imported until a scorer runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterBenchmark, RegisterScorer, RegisterStimuli

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


def declared(benchmark: str) -> dict[str, Any] | None:
    """The fields of subpackage ``benchmark``'s :class:`assoc.Benchmark`, or None when it has no scorer.

    Its registry's ``BENCHMARK`` when it declares one; otherwise the benchmark its registered names make: the
    scorer, analysis and stimuli named like the subpackage (or, where none is, the first of each). So a
    subpackage that adds its scorer is run by ``assoc benchmark run`` without further code.
    """
    registry = _registry(benchmark)
    given = getattr(registry, "BENCHMARK", None)
    if given is not None:
        return dict(given)
    if not registry.SCORERS:
        return None
    scorers = {_resolve(where).name: _resolve(where) for where in registry.SCORERS}
    analyses = [_resolve(where).name for where in registry.ANALYSES]
    stimuli = [name for name, _, _ in registry.STIMULI]
    if not analyses or not stimuli:
        return None

    def pick(names: list[str]) -> str:
        return benchmark if benchmark in names else names[0]

    scorer = pick(list(scorers))
    return {
        "name": benchmark,
        "scorer": scorer,
        "stimuli": pick(stimuli),
        "analysis": pick(analyses),
        "description": str(getattr(scorers[scorer], "description", "")),
    }


@hookimpl
def register_benchmarks(register: RegisterBenchmark) -> None:
    """Register every benchmark subpackage that has a scorer (:func:`declared`)."""
    from assoc import Benchmark

    for benchmark in BENCHMARKS:
        fields = declared(benchmark)
        if fields is not None:
            register(Benchmark(**fields))
