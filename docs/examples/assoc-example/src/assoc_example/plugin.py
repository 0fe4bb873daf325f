"""Registers the example scorer with assoc (named by the entry point in pyproject.toml)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc.hookspecs import RegisterScorer


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``char_ngram`` scorer."""
    # Import inside the hook: `assoc --help` loads every plugin, so keep plugin import cheap.
    from .scorer import CharNgramScorer

    register(CharNgramScorer)
