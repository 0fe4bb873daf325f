"""Registers the example scorer with assoc (named by the entry point in pyproject.toml)."""

from assoc import hookimpl


@hookimpl
def register_scorers(register):
    # Every assoc command (--help too) runs this hook, so scorer.py must be cheap to import:
    # it imports no numpy, pandas or torch at top level (check_plugin_imports tests that).
    from .scorer import CharNgramScorer

    register(CharNgramScorer)
