"""assoc plugin entry point of assoc-clm: registers the ``clm`` scorer.

Imports only light modules: torch and transformers load when a model is scored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterScorer


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``clm`` scorer."""
    from .scorer import CLMScorer

    register(CLMScorer)
