"""What a benchmark is to ``assoc benchmark run``: a :class:`Benchmark`, registered by a plugin.

A plugin registers its benchmarks with the ``register_benchmarks`` hook
(:func:`assoc.plugins.hookspecs.register_benchmarks`): each names, by their registered names, the scorer
that scores a model on it, the stimuli it runs by default and the analysis that turns the scorer's table
into its numbers. The request kinds it needs are its scorer's (``LMScorer.requests``, or its alternatives
``request_sets``; :func:`assoc.benchmark.run.request_kinds`): one place says what a benchmark asks of a
model, so a model kind added later (a served model) runs every benchmark whose requests it serves, and the
declaration never disagrees with the scorer. This module imports nothing of assoc but its errors (the
hook specifications name the class).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assoc.errors import PluginError

#: A benchmark's name: what ``--benchmark`` takes and what names its files (no dots: ``NAME.option=value``).
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: a scorer run on default stimuli, and the analysis of its table.

    Attributes
    ----------
    name:
        What users type (``assoc benchmark run --benchmark NAME``) and what names the run's files.
    scorer:
        The registered scorer that scores a model on it (``assoc scorers``).
    stimuli:
        The stimuli it runs: a registered stimuli set (``assoc stimuli``), with a selection if any
        (``winobias:pro_type1_test,anti_type1_test``).
    analysis:
        The registered analysis whose headline numbers summarise it (``Analysis.headline``).
    description:
        One line for listings.
    scorer_options, analysis_options:
        Options the benchmark always gives its scorer and its analysis (a user's options win).
    """

    name: str
    scorer: str
    stimuli: str
    analysis: str
    description: str = ""
    scorer_options: Mapping[str, Any] = field(default_factory=dict)
    analysis_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not NAME.match(self.name):
            raise PluginError(
                f"benchmark name {self.name!r}: letters, digits, '_' and '-' only (it names files and options)"
            )
        for attribute in ("scorer", "stimuli", "analysis"):
            value = getattr(self, attribute)
            if not isinstance(value, str) or not value.strip():
                raise PluginError(f"benchmark {self.name!r}: {attribute} must name a registered {attribute}")
        for attribute in ("scorer_options", "analysis_options"):
            if not isinstance(getattr(self, attribute), Mapping):
                raise PluginError(f"benchmark {self.name!r}: {attribute} must be a mapping of option names to values")
        object.__setattr__(self, "scorer_options", dict(self.scorer_options))
        object.__setattr__(self, "analysis_options", dict(self.analysis_options))

    def describe(self) -> dict[str, Any]:
        """What provenance and listings record of the benchmark (its fields)."""
        return {
            "name": self.name,
            "scorer": self.scorer,
            "stimuli": self.stimuli,
            "analysis": self.analysis,
            "description": self.description,
            "scorer_options": dict(self.scorer_options),
            "analysis_options": dict(self.analysis_options),
        }
