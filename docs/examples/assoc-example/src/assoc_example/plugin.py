"""Registers the example scorer with assoc (named by the entry point in pyproject.toml)."""

from assoc import hookimpl


@hookimpl
def register_scorers(register):
    # Import inside the hook: `assoc --help` loads every plugin, so keep plugin import cheap.
    from .scorer import CharNgramScorer

    register(CharNgramScorer)
