"""Registers the example scorer with assoc (named by the entry point in pyproject.toml)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterScorer


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``char_ngram`` scorer."""
    # Every assoc command (--help too) runs this hook, so scorer.py must be cheap to import:
    # it imports no numpy, pandas or torch at top level (check_plugin_imports tests that).
    from .scorer import CharNgramScorer

    register(CharNgramScorer)
