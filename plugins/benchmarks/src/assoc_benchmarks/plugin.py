"""assoc plugin entry point of assoc-benchmarks.

Registers the ``crows_pairs`` scorer, the ``crows_pairs``, ``matched_guise`` and
``matched_guise_agreement`` analyses and the bundled ``crows_pairs`` and ``hofmann2024`` stimuli.
Imports only light modules: torch and transformers load when a model is scored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``crows_pairs`` scorer."""
    from .crows_scorer import CrowsPairsScorer

    register(CrowsPairsScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``crows_pairs``, ``matched_guise`` and ``matched_guise_agreement`` analyses."""
    from .crows_analysis import CrowsPairsAnalysis
    from .guise_analysis import GuiseAgreementAnalysis, MatchedGuiseAnalysis

    register(CrowsPairsAnalysis)
    register(MatchedGuiseAnalysis)
    register(GuiseAgreementAnalysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the bundled CrowS-Pairs and Matched Guise Probing stimuli."""
    from .crows_data import load_crows_pairs
    from .hofmann import load_hofmann2024

    register(
        "crows_pairs",
        load_crows_pairs,
        "CrowS-Pairs (Nangia et al. 2020): 1,508 sentence pairs, 9 bias types (CC BY-SA 4.0); one design per pair",
    )
    register(
        "hofmann2024",
        load_hofmann2024,
        "Matched Guise Probing (Hofmann et al. 2024): 699 AAE/SAE pairs x trait, occupation, guilt, penalty "
        "prompts and attributes (MIT)",
    )
