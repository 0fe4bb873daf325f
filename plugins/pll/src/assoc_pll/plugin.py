"""assoc plugin entry point of assoc-pll.

Registers the ``pll`` scorer, the ``posterior`` and ``loglik`` analyses, and the
bundled Watson et al. (2023) stimuli. Imports only light modules: torch and
transformers load when a model is scored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``pll`` scorer."""
    from .scorer import PLLScorer

    register(PLLScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``posterior`` and ``loglik`` analyses."""
    from .analyses import LoglikAnalysis, PosteriorAnalysis

    register(PosteriorAnalysis)
    register(LoglikAnalysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the bundled Watson et al. (2023) stimuli."""
    from .bundled import load_watson2023, load_watson2023_they

    register(
        "watson2023",
        load_watson2023,
        "Watson, Beekhuizen & Stevenson (2023): 20 role-noun sets x 24 names x 50 U.S. states",
    )
    register(
        "watson2023_they",
        load_watson2023_they,
        "Watson et al. (2023) singular-they frame with the paper's example antecedents (illustration)",
    )
