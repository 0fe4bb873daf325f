"""Entry point of the ``contextual`` plugin (assoc-contextual).

Registers the scorers ``seat`` and ``ceat``, the analyses ``seat`` and ``ceat`` and the stimuli
``seat`` (read from the user's copy: ``seat:<path>``) and ``guo2021``. Imports nothing heavy: torch and
transformers load when a model is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``seat`` and ``ceat`` scorers."""
    from .ceat import CEATScorer
    from .seat import SEATScorer

    register(SEATScorer)
    register(CEATScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``seat`` and ``ceat`` analyses."""
    from .analyses import CEATAnalysis, SEATAnalysis

    register(SEATAnalysis)
    register(CEATAnalysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register ``seat`` (May et al.'s tests, from your copy: ``seat:<path>``) and ``guo2021`` (CEAT I1-I4)."""
    from .stimuli import load_guo2021, load_seat

    register(
        "seat",
        load_seat,
        "May et al. (2019): the SEAT test files (CC BY-NC 4.0, not bundled): seat:<path of your copy>",
    )
    register("guo2021", load_guo2021, "Guo & Caliskan (2021): CEAT's intersectional tests I1-I4")
